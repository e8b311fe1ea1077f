// Dropout masks: the onnxruntime trainer refills pooled arrays, the tfjs model allocates; both
// must give the same masks for the same step seed, or the engines stop agreeing.
import { describe, expect, it } from 'vitest'
import { dropoutMask } from '@core/model/dropout'
import { makeBertConfig } from '@core/model/bert'
import { DropoutArena, Rng } from '@core/rng'
import { dropoutMasks } from '@core/train/ort'

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

  it('masks drawn in an arena equal freshly allocated ones, step after step, in the arena\'s memory', () => {
    const c = makeBertConfig({ vocabSize: 50, hiddenSize: 8, numHiddenLayers: 2, numAttentionHeads: 2, intermediateSize: 16, hiddenDropoutProb: 0.1, attentionProbsDropoutProb: 0.2 })
    const arena = new DropoutArena()
    const first = dropoutMasks(c, 3, 5, 11, true, arena)
    expect(first.every((m) => DropoutArena.of(m) === arena)).toBe(true)
    expect(first).toEqual(dropoutMasks(c, 3, 5, 11, true))
    expect(dropoutMasks(c, 3, 5, 12, true, arena)).toEqual(dropoutMasks(c, 3, 5, 12, true))
    // A longer batch needs more room: the arena grows, the values are still the same.
    const longer = dropoutMasks(c, 30, 70, 13, true, arena)
    expect(longer).toEqual(dropoutMasks(c, 30, 70, 13, true))
    expect(longer.every((m) => DropoutArena.of(m) === arena)).toBe(true)
    // Side by side, none overlapping (the kernel writes 8 values at a time past a mask's end).
    for (let i = 1; i < longer.length; i++) expect(longer[i].byteOffset).toBeGreaterThanOrEqual(longer[i - 1].byteOffset + 4 * longer[i - 1].length)
  })

  it('fills an array outside any arena through the scratch arena, and one inside where it is', () => {
    const arena = new DropoutArena()
    const [inside] = arena.views([1001])
    expect(new Rng(5).fillDropoutMask(inside, 0.3)).toBe(inside)
    expect(inside).toEqual(dropoutMask(1001, 0.3, new Rng(5)))
  })
})
