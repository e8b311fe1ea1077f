// Teacher targets: the cache (float16 features, computed once in length-sorted batches) gives
// what an online forward on the training batch gives; onnxruntime agrees with tfjs.
import * as tf from '@tensorflow/tfjs-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { useBackend } from '@core/model/backend'
import { labelMapFromLabels } from '@core/nlp/bio'
import { documentsToExamples } from '@core/nlp/examples'
import { collate } from '@core/train/batching'
import { decodeHalfInto, encodeHalf, fromHalf, toHalf } from '@core/model/f16'
import { cachedProvider, estimateCacheBytes, onlineProvider, ortRunner, tfjsRunner, type TeacherNeeds } from '@core/distill/teacher'
import { labels, syntheticDocs, tinyModel, tokenizer } from './helpers'

beforeAll(async () => {
  await useBackend('wasm')
})

const maxAbsDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  expect(a.length).toBe(b.length)
  let m = 0
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]))
  return m
}

describe('float16 storage', () => {
  it('round-trips within half precision and keeps specials', () => {
    for (const v of [0, 1, -2.5, 0.1, 3.14159, 65504, 1e-5, -7.3e-3]) expect(Math.abs(fromHalf(toHalf(v)) - v)).toBeLessThanOrEqual(Math.abs(v) * 2 ** -11 + 6e-8)
    expect(fromHalf(toHalf(1e6))).toBe(Infinity)
    expect(Number.isNaN(fromHalf(toHalf(NaN)))).toBe(true)
    const src = Float32Array.from({ length: 100 }, (_, i) => Math.sin(i) * 4)
    const out = new Float32Array(100)
    decodeHalfInto(encodeHalf(src), out, 0, 100, 0)
    expect(maxAbsDiff(src, out)).toBeLessThan(4 * 2 ** -11)
  })
})

describe('teacher targets', () => {
  const lm = labelMapFromLabels(labels)
  const exs = documentsToExamples(syntheticDocs(6, 9, 3, 't'), tokenizer, lm, { maxLength: 40, sentenceLevel: true })
  const texs = exs.map((e) => ({ inputIds: e.inputIds, attentionMask: e.attentionMask, tokenTypeIds: e.tokenTypeIds, head: 'default' }))
  const needs: TeacherNeeds = { logits: true, hidden: [0, 2, 4], attentions: [2, 4] }

  it('cached targets equal online ones for any batch composition and padding', async () => {
    const teacher = tinyModel(4, 21)
    const cache = await cachedProvider(teacher, tfjsRunner(teacher), texs, needs, { batchSize: 5 })
    expect(cache.cached).toBe(true)
    expect(cache.cacheBytes).toBe(estimateCacheBytes(texs.map((e) => e.inputIds.length), texs.map((e) => e.head), teacher, needs))
    const online = onlineProvider(teacher, tfjsRunner(teacher))
    const ids = [7, 0, 3, 12]
    const host = collate(exs, ids)
    const a = await cache.targets(host, ids, 'default', needs)
    const b = await online.targets(host, ids, 'default', needs)
    const mask = Array.from(host.attentionMask)
    const real = (t: tf.Tensor, per: number) => Array.from(t.dataSync()).filter((_, i) => mask[Math.floor(i / per)] === 1)
    expect(maxAbsDiff(real(a.logits!, 3), real(b.logits!, 3))).toBeLessThan(1e-5)
    for (const i of needs.hidden) expect(maxAbsDiff(real(a.hidden.get(i)!, 32), real(b.hidden.get(i)!, 32))).toBeLessThan(5e-3)
    const S = host.seqLen
    const pairMask = (t: tf.Tensor) => {
      const d = t.dataSync()
      const out: number[] = []
      for (let r = 0; r < ids.length; r++) for (let h = 0; h < 2; h++) for (let q = 0; q < S; q++) for (let k = 0; k < S; k++) if (mask[r * S + q] && mask[r * S + k]) out.push(d[((r * 2 + h) * S + q) * S + k])
      return out
    }
    for (const l of needs.attentions) expect(maxAbsDiff(pairMask(a.attentions.get(l)!), pairMask(b.attentions.get(l)!))).toBeLessThan(1e-3)
    // A subset of what was cached can be asked for; what was not cached is an error.
    const sub = await cache.targets(host, ids, 'default', { logits: false, hidden: [4], attentions: [] })
    expect(sub.logits).toBeNull()
    expect([...sub.hidden.keys()]).toEqual([4])
    await expect(cache.targets(host, ids, 'default', { logits: false, hidden: [1], attentions: [] })).rejects.toThrow(/no hidden state 1/)
    teacher.dispose()
  })

  it('onnxruntime logits, hidden states and recomputed attentions match tfjs', async () => {
    const teacher = tinyModel(4, 22)
    let ort
    try {
      ort = await ortRunner(teacher, { threads: 1 })
    } catch (e) {
      console.warn(`skipped: onnxruntime-node does not load here (${(e as Error).message})`)
      teacher.dispose()
      return
    }
    const ids = [1, 4, 5, 8, 2]
    const host = collate(exs, ids)
    const a = await ort.run(host, ['default'], needs)
    const b = await tfjsRunner(teacher).run(host, ['default'], needs)
    expect(ort.engine).toBe('onnxruntime-cpu')
    expect(maxAbsDiff(a.logits.default, b.logits.default)).toBeLessThan(1e-4)
    for (const i of needs.hidden) expect(maxAbsDiff(a.hidden.get(i)!, b.hidden.get(i)!)).toBeLessThan(1e-4)
    for (const l of needs.attentions) expect(maxAbsDiff(a.attentions.get(l)!, b.attentions.get(l)!)).toBeLessThan(1e-4)
    await ort.dispose()
    teacher.dispose()
  })
})
