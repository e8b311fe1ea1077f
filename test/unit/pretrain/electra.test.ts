// ELECTRA's pieces that are not graphs: the generator's size, sampling, and the replaced-token batch.
import { describe, expect, it } from 'vitest'
import { makeBertConfig } from '@core/model/bert'
import { generatorConfig, replacedTokenBatch, sampleReplacements } from '@core/pretrain/electra'
import { Rng } from '@core/rng'
import { collate } from '@core/train/batching'

describe('ELECTRA', () => {
  it('the generator is a quarter as wide with heads that divide its width', () => {
    const g = generatorConfig(makeBertConfig({ hiddenSize: 256, numAttentionHeads: 4, intermediateSize: 1024, numHiddenLayers: 4 }))
    expect([g.hiddenSize, g.numAttentionHeads, g.intermediateSize, g.numHiddenLayers]).toEqual([64, 1, 256, 4])
    const b = generatorConfig(makeBertConfig({ hiddenSize: 768, numAttentionHeads: 12, intermediateSize: 3072 }))
    expect([b.hiddenSize, b.numAttentionHeads]).toEqual([192, 3])
    expect(b.hiddenSize % b.numAttentionHeads).toBe(0)
  })

  it('samples by the softmax of the logits and never draws an excluded piece', () => {
    const V = 4
    // Row 0 strongly prefers piece 2; row 1 prefers excluded piece 0, then 3.
    const logits = Float32Array.from([0, 0, 8, 0, 9, 0, 0, 5])
    const counts = [new Array(V).fill(0), new Array(V).fill(0)]
    const rng = new Rng(1)
    for (let i = 0; i < 2000; i++) sampleReplacements(logits, 2, V, rng, new Set([0])).forEach((v, m) => counts[m][v]++)
    expect(counts[0][2] / 2000).toBeGreaterThan(0.99)
    expect(counts[1][0]).toBe(0)
    expect(counts[1][3] / 2000).toBeGreaterThan(0.95)
  })

  it('puts the samples into the masked positions and labels exactly the changed pieces', () => {
    // [CLS]=2 a b c [SEP]=3, and a shorter padded row.
    const b = collate([{ inputIds: [2, 10, 4, 12, 3], labels: [0, 0, 0, 0, 0] }, { inputIds: [2, 4, 3], labels: [0, 0, 0] }], [0, 1])
    const mlm = Int32Array.from([-100, -100, 11, -100, -100, -100, 14, -100, -100, -100]) // masked: row 0 pos 2 (was 11), row 1 pos 1 (was 14)
    const { batch, labels } = replacedTokenBatch(b, mlm, Int32Array.from([11, 20]), new Set([0, 2, 3, 4]))
    expect([...batch.inputIds]).toEqual([2, 10, 11, 12, 3, 2, 20, 3, 0, 0])
    // the right guess (11) counts as original; 20 ≠ 14 is replaced; specials and padding unlabelled
    expect([...labels]).toEqual([-100, 0, 0, 0, -100, -100, 1, -100, -100, -100])
    expect(() => replacedTokenBatch(b, mlm, Int32Array.from([11]), new Set())).toThrow(/more masked positions/)
  })
})
