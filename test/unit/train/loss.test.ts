import * as tf from '@tensorflow/tfjs-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { maskedCrossEntropy } from '@core/train/loss'
import { useCpuBackend } from './tfSetup'

describe('maskedCrossEntropy', () => {
  beforeAll(useCpuBackend)

  it('equals the float64 mean of -log softmax over labelled positions', () => {
    const logits = [
      [[2, 0, -1], [0.5, 0.5, 3], [1, 2, 3]],
      [[0, 0, 0], [9, -9, 0], [4, 1, 1]],
    ]
    const labels = [
      [0, 2, -100],
      [1, -100, 0],
    ]
    let sum = 0
    let n = 0
    for (let b = 0; b < 2; b++)
      for (let t = 0; t < 3; t++) {
        const y = labels[b][t]
        if (y === -100) continue
        const row = logits[b][t]
        const mx = Math.max(...row)
        const lse = mx + Math.log(row.reduce((s, x) => s + Math.exp(x - mx), 0))
        sum += lse - row[y]
        n++
      }
    const got = tf.tidy(() => maskedCrossEntropy(tf.tensor3d(logits), tf.tensor2d(labels, undefined, 'int32')).dataSync()[0])
    expect(got).toBeCloseTo(sum / n, 5)
  })

  it('padding changes neither the loss nor the gradients', () => {
    const base = tf.tensor3d([[[1, -2, 0.5], [3, 0, -1]]]) // [1, 2, 3]
    const padded = tf.concat([base, tf.tensor3d([[[50, -80, 7], [1e4, 0, -1e4]]])], 1) // [1, 4, 3]
    const y = tf.tensor2d([[2, 0]], undefined, 'int32')
    const yPad = tf.tensor2d([[2, 0, -100, -100]], undefined, 'int32')
    const g1 = tf.grad((x: tf.Tensor) => maskedCrossEntropy(x, y))(base)
    const g2 = tf.grad((x: tf.Tensor) => maskedCrossEntropy(x, yPad))(padded)
    expect(maskedCrossEntropy(padded, yPad).dataSync()[0]).toBeCloseTo(maskedCrossEntropy(base, y).dataSync()[0], 6)
    const a = g1.arraySync() as number[][][]
    const b = g2.arraySync() as number[][][]
    for (let t = 0; t < 2; t++) for (let c = 0; c < 3; c++) expect(b[0][t][c]).toBeCloseTo(a[0][t][c], 6)
    for (let t = 2; t < 4; t++) for (let c = 0; c < 3; c++) expect(Math.abs(b[0][t][c])).toBe(0)
    tf.dispose([base, padded, y, yPad, g1, g2])
  })

  it('is finite for extreme logits and 0 when nothing is labelled', () => {
    const big = tf.tensor3d([[[1e4, -1e4], [-1e4, 1e4]]])
    const v = maskedCrossEntropy(big, tf.tensor2d([[1, 0]], undefined, 'int32')).dataSync()[0]
    expect(Number.isFinite(v)).toBe(true)
    expect(v).toBeCloseTo(2e4, 0)
    expect(Math.abs(maskedCrossEntropy(big, tf.tensor2d([[-100, -100]], undefined, 'int32')).dataSync()[0])).toBe(0)
    big.dispose()
  })
})
