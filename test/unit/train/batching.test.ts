import * as tf from '@tensorflow/tfjs-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { IGNORE_INDEX, collate, countBatches, disposeBatch, iterateBatches, planBatches, type BatchableExample } from '@core/train/batching'
import { Rng } from '@core/rng'
import { useCpuBackend } from './tfSetup'

function makeExamples(lengths: number[]): BatchableExample[] {
  return lengths.map((n, i) => ({
    inputIds: Int32Array.from({ length: n }, (_, t) => 100 + i * 10 + t),
    labels: Int32Array.from({ length: n }, (_, t) => (t === 0 || t === n - 1 ? IGNORE_INDEX : t % 3)),
    tokenTypeIds: new Int32Array(n),
  }))
}

describe('batching', () => {
  beforeAll(useCpuBackend)

  it('pads each batch to its own longest sequence, not a global maximum', () => {
    const lengths = [3, 40, 5, 4, 38, 6, 39, 7]
    const ex = makeExamples(lengths)
    const seen: number[] = []
    for (const b of iterateBatches(ex, { batchSize: 2, seed: 1, bucketChunkBatches: 50 })) {
      const own = Math.max(...b.indices.map((i) => lengths[i]))
      expect(b.seqLen).toBe(own)
      expect(b.inputIds.shape).toEqual([b.batchSize, own])
      expect(b.labels.shape).toEqual([b.batchSize, own])
      expect(b.inputIds.dtype).toBe('int32')
      expect(b.labels.dtype).toBe('int32')
      seen.push(...b.indices)
      disposeBatch(b)
    }
    expect(seen.sort((a, c) => a - c)).toEqual(lengths.map((_, i) => i))
  })

  it('buckets by length: batches hold examples of similar length', () => {
    const rng = new Rng(7)
    const lengths = Array.from({ length: 400 }, () => 2 + rng.int(126))
    const batches = planBatches(lengths, { batchSize: 8, seed: 3 })
    const bucketedPad = batches.reduce((s, b) => s + b.length * Math.max(...b.map((i) => lengths[i])) - b.reduce((x, i) => x + lengths[i], 0), 0)
    const unbucketed = planBatches(lengths, { batchSize: 8, seed: 3, bucketChunkBatches: 0 })
    const plainPad = unbucketed.reduce((s, b) => s + b.length * Math.max(...b.map((i) => lengths[i])) - b.reduce((x, i) => x + lengths[i], 0), 0)
    expect(bucketedPad).toBeLessThan(plainPad / 5)
    expect(batches.flat().sort((a, b) => a - b)).toEqual(lengths.map((_, i) => i))
  })

  it('masks and labels: 1 on real tokens, -100 on padding and on ignored pieces', () => {
    const ex = makeExamples([2, 5])
    const h = collate(ex, [0, 1])
    expect(h.seqLen).toBe(5)
    expect(Array.from(h.attentionMask)).toEqual([1, 1, 0, 0, 0, 1, 1, 1, 1, 1])
    expect(Array.from(h.inputIds.slice(0, 5))).toEqual([100, 101, 0, 0, 0])
    expect(Array.from(h.labels.slice(0, 5))).toEqual([-100, -100, -100, -100, -100])
    expect(Array.from(h.labels.slice(5))).toEqual([-100, 1, 2, 0, -100])
    expect(h.numTokens).toBe(7)
    expect(h.numLabeled).toBe(3)
    const withPad = collate(ex, [0, 1], { padTokenId: 7 })
    expect(withPad.inputIds[3]).toBe(7)
  })

  it('respects an attention mask the example already carries', () => {
    const ex: BatchableExample[] = [{ inputIds: [5, 6, 0, 0], attentionMask: [1, 1, 0, 0], labels: [1, 2, 3, 3] }]
    const h = collate(ex, [0])
    expect(h.seqLen).toBe(2)
    expect(Array.from(h.labels)).toEqual([1, 2])
  })

  it('is deterministic per seed and differs across seeds and epochs', () => {
    const lengths = Array.from({ length: 100 }, (_, i) => 3 + ((i * 37) % 50))
    const a = planBatches(lengths, { batchSize: 4, seed: 42, epoch: 0 })
    const b = planBatches(lengths, { batchSize: 4, seed: 42, epoch: 0 })
    const c = planBatches(lengths, { batchSize: 4, seed: 43, epoch: 0 })
    const d = planBatches(lengths, { batchSize: 4, seed: 42, epoch: 1 })
    expect(a).toEqual(b)
    expect(a).not.toEqual(c)
    expect(a).not.toEqual(d)
  })

  it('keeps input order without shuffling and counts batches', () => {
    const lengths = [5, 3, 9, 1, 2]
    expect(planBatches(lengths, { batchSize: 2, shuffle: false, bucketChunkBatches: 0 })).toEqual([[0, 1], [2, 3], [4]])
    expect(planBatches(lengths, { batchSize: 2, shuffle: false })).toEqual([[2, 0], [1, 4], [3]])
    expect(countBatches(5, 2)).toBe(3)
    expect(countBatches(5, 2, true)).toBe(2)
    expect(planBatches(lengths, { batchSize: 2, seed: 1, dropLast: true }).length).toBe(2)
  })

  it('does not leak tensors', () => {
    const before = tf.memory().numTensors
    for (const b of iterateBatches(makeExamples([3, 4, 5]), { batchSize: 2 })) disposeBatch(b)
    expect(tf.memory().numTensors).toBe(before)
  })
})
