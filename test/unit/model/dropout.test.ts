// Dropout masks: the onnxruntime trainer refills pooled arrays, the tfjs model allocates; both
// must give the same masks for the same step seed, or the engines stop agreeing.
import { describe, expect, it } from 'vitest'
import { dropoutMask } from '@core/model/dropout'
import { makeBertConfig } from '@core/model/bert'
import { Rng } from '@core/rng'
import { dropoutMasks, MaskPool } from '@core/train/ort'

describe('dropout masks', () => {
  it('keep about 1 − p of the units, scaled by 1/(1 − p), from the seeded stream', () => {
    const m = dropoutMask(200_000, 0.1, new Rng(3))
    const kept = m.filter((x) => x !== 0)
    expect(kept.length / m.length).toBeGreaterThan(0.89)
    expect(kept.length / m.length).toBeLessThan(0.91)
    expect(new Set(kept)).toEqual(new Set([Math.fround(1 / 0.9)]))
    expect(dropoutMask(1000, 0.1, new Rng(3))).toEqual(m.subarray(0, 1000))
    expect(dropoutMask(1000, 0.1, new Rng(4))).not.toEqual(m.subarray(0, 1000))
  })

  it('pooled masks equal freshly allocated ones, step after step, and reuse their arrays', () => {
    const c = makeBertConfig({ vocabSize: 50, hiddenSize: 8, numHiddenLayers: 2, numAttentionHeads: 2, intermediateSize: 16, hiddenDropoutProb: 0.1, attentionProbsDropoutProb: 0.2 })
    const pool = new MaskPool()
    const first = dropoutMasks(c, 3, 5, 11, true, pool)
    expect(first).toEqual(dropoutMasks(c, 3, 5, 11, true))
    const arrays = [...first]
    const second = dropoutMasks(c, 3, 5, 12, true, pool)
    expect(second).toEqual(dropoutMasks(c, 3, 5, 12, true))
    expect(second.every((a, i) => a === arrays[i])).toBe(true)
    // A longer batch needs bigger arrays: new ones, still the same values.
    expect(dropoutMasks(c, 3, 7, 13, true, pool)).toEqual(dropoutMasks(c, 3, 7, 13, true))
  })
})
