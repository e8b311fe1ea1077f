// Padding never enters a loss: the same examples padded to a longer length give the same
// soft, hard, hidden and attention losses (and the same gradients).
import * as tf from '@tensorflow/tfjs-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { useBackend } from '@core/model/backend'
import { labelMapFromLabels } from '@core/nlp/bio'
import { documentsToExamples } from '@core/nlp/examples'
import { collate, IGNORE_INDEX, type HostBatch } from '@core/train/batching'
import { maskedCrossEntropy } from '@core/train/loss'
import { attentionMse, hiddenMse, labeledMask, maskedKl, realMask, softCrossEntropy, softTargets } from '@core/distill/losses'
import { labels, syntheticDocs, tinyModel, tokenizer } from './helpers'

beforeAll(async () => {
  await useBackend('wasm')
})

function padTo(h: HostBatch, S: number): HostBatch {
  const B = h.batchSize
  const grow = (a: Int32Array, fill: number) => {
    const out = new Int32Array(B * S).fill(fill)
    for (let r = 0; r < B; r++) out.set(a.subarray(r * h.seqLen, (r + 1) * h.seqLen), r * S)
    return out
  }
  return { ...h, seqLen: S, inputIds: grow(h.inputIds, 0), attentionMask: grow(h.attentionMask, 0), tokenTypeIds: grow(h.tokenTypeIds, 0), labels: grow(h.labels, IGNORE_INDEX) }
}

describe('masked distillation losses', () => {
  it('appending padding changes no loss value and no gradient', () => {
    const lm = labelMapFromLabels(labels)
    const exs = documentsToExamples(syntheticDocs(4, 5, 2, 'm'), tokenizer, lm, { maxLength: 40, sentenceLevel: true })
    const base = collate(exs, [0, 1, 2, 3])
    // Rows of different lengths: the batch already contains padding, and more is added.
    expect(new Set(exs.slice(0, 4).map((e) => e.inputIds.length)).size).toBeGreaterThan(1)
    const teacher = tinyModel(2, 11)
    const student = tinyModel(1, 12, 16)
    const W = tf.variable(tf.randomNormal([16, 32], 0, 0.3, 'float32', 1))
    const losses = (h: HostBatch) => {
      const shape: [number, number] = [h.batchSize, h.seqLen]
      const ids = tf.tensor2d(h.inputIds, shape, 'int32')
      const am = tf.tensor2d(h.attentionMask, shape, 'int32')
      const lab = tf.tensor2d(h.labels, shape, 'int32')
      const t = teacher.forward({ inputIds: ids, attentionMask: am }, { outputHiddenStates: true, outputAttentions: true })
      const f = () => {
        const s = student.forward({ inputIds: ids, attentionMask: am }, { outputHiddenStates: true, outputAttentions: true })
        const real = realMask(am)
        const soft = softCrossEntropy(s.logits.default, softTargets([t.logits.default], 2), labeledMask(lab), 2)
        const softReal = softCrossEntropy(s.logits.default, softTargets([t.logits.default], 2), real, 2)
        const hard = maskedCrossEntropy(s.logits.default, lab)
        const hid = hiddenMse(s.hiddenStates![1], t.hiddenStates![2], real, W)
        const emb = hiddenMse(s.hiddenStates![0], t.hiddenStates![0], real, W)
        const att = attentionMse(s.attentions![0], t.attentions![1], real)
        const kl = maskedKl(s.logits.default, t.logits.default, real)
        return [soft, softReal, hard, hid, emb, att, kl].map((x) => x.dataSync()[0])
      }
      const vals = f()
      const g = tf.variableGrads(() => {
        const s = student.forward({ inputIds: ids, attentionMask: am }, { outputHiddenStates: true, outputAttentions: true })
        const real = realMask(am)
        return tf.addN([
          softCrossEntropy(s.logits.default, softTargets([t.logits.default], 2), real, 2),
          hiddenMse(s.hiddenStates![1], t.hiddenStates![2], real, W),
          attentionMse(s.attentions![0], t.attentions![1], real),
        ]) as tf.Scalar
      })
      const grads = Object.fromEntries(Object.entries(g.grads).map(([k, v]) => [k, Array.from(v.dataSync())]))
      return { vals, grads }
    }
    const a = losses(base)
    const b = losses(padTo(base, base.seqLen + 7))
    expect(a.vals.every((v) => Number.isFinite(v) && v > 0)).toBe(true)
    for (let i = 0; i < a.vals.length; i++) expect(b.vals[i]).toBeCloseTo(a.vals[i], 5)
    for (const k of Object.keys(a.grads)) {
      const x = a.grads[k]
      const y = b.grads[k]
      // Position embeddings of the appended positions get no gradient; compare the shared part.
      for (let i = 0; i < x.length; i++) expect(Math.abs(x[i] - y[i])).toBeLessThan(1e-5 + 1e-3 * Math.abs(x[i]))
    }
    teacher.dispose()
    student.dispose()
    W.dispose()
  })

  it('soft targets average the softened teacher distributions with the given weights', () => {
    const z1 = tf.tensor3d([[[2, 0, -1]]])
    const z2 = tf.tensor3d([[[-1, 1, 3]]])
    const T = 2
    const p = (z: number[]) => {
      const e = z.map((v) => Math.exp(v / T))
      const s = e.reduce((a, b) => a + b)
      return e.map((v) => v / s)
    }
    const p1 = p([2, 0, -1])
    const p2 = p([-1, 1, 3])
    const avg = Array.from(softTargets([z1, z2], T).dataSync())
    avg.forEach((v, i) => expect(v).toBeCloseTo((p1[i] + p2[i]) / 2, 6))
    const weighted = Array.from(softTargets([z1, z2], T, [3, 1]).dataSync())
    weighted.forEach((v, i) => expect(v).toBeCloseTo(0.75 * p1[i] + 0.25 * p2[i], 6))
    expect(() => softTargets([z1, z2], T, [1])).toThrow(/weights/)
  })

  it('scales the soft loss by T² and equals CE at T = 1', () => {
    const zs = tf.tensor3d([[[0.5, -0.2, 1.0], [0, 0, 0]]])
    const zt = tf.tensor3d([[[1.5, 0.2, -1.0], [9, 9, 9]]])
    const mask = tf.tensor2d([[1, 0]])
    const plain = softCrossEntropy(zs, softTargets([zt], 3), mask, 3, false).dataSync()[0]
    const scaled = softCrossEntropy(zs, softTargets([zt], 3), mask, 3, true).dataSync()[0]
    expect(scaled).toBeCloseTo(9 * plain, 5)
    const pt = softTargets([zt], 1).dataSync()
    const ls = tf.logSoftmax(zs).dataSync()
    const ce = -(pt[0] * ls[0] + pt[1] * ls[1] + pt[2] * ls[2])
    expect(softCrossEntropy(zs, softTargets([zt], 1), mask, 1).dataSync()[0]).toBeCloseTo(ce, 6)
  })

  it('attention MSE averages over heads and over real (query, key) pairs only', () => {
    // One example of length 2 padded to 3; two heads.
    const a = tf.tensor4d([0.6, 0.4, 0.0, 0.5, 0.5, 0.0, 9, 9, 9, 1, 0, 0, 0, 1, 0, 9, 9, 9], [1, 2, 3, 3])
    const b = tf.tensor4d([0.5, 0.5, 0.0, 0.5, 0.5, 0.0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0], [1, 2, 3, 3])
    const mask = tf.tensor2d([[1, 1, 0]])
    // head 0: (0.01 + 0.01 + 0 + 0) / 4; head 1: (0 + 0 + 1 + 1) / 4; mean = (0.005 + 0.5) / 2
    expect(attentionMse(a, b, mask).dataSync()[0]).toBeCloseTo((0.005 + 0.5) / 2, 6)
  })
})
