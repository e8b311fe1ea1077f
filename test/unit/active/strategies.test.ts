// Active-learning strategies on hand-made label distributions and uncertainties.
import { describe, expect, it } from 'vitest'
import { diverseBatch, kMeans, parseStrategy, rankByUncertainty, selectBatch, tfidfVectors, type Candidate } from '@core/active/strategies'
import { UncertaintyAccumulator, type DocumentUncertainty } from '@core/tag/uncertainty'

/** A document's uncertainties from its words' label distributions (3 labels: O, B, I). */
function doc(words: number[][]): DocumentUncertainty {
  const acc = new UncertaintyAccumulator()
  for (const w of words) acc.add(w, 0, w.length)
  return acc.result()!
}

describe('UncertaintyAccumulator', () => {
  it('averages least confidence, margin and normalised entropy over words', () => {
    const u = doc([
      [1, 0, 0],
      [0.5, 0.3, 0.2],
    ])
    expect(u.leastConfidence).toBeCloseTo(1 - (1 + 0.5) / 2, 10)
    expect(u.margin).toBeCloseTo(1 - (1 + 0.2) / 2, 10)
    const h = -(0.5 * Math.log(0.5) + 0.3 * Math.log(0.3) + 0.2 * Math.log(0.2)) / Math.log(3)
    expect(u.entropy).toBeCloseTo(h / 2, 10)
    expect(new UncertaintyAccumulator().result()).toBeNull()
  })

  it('reads the word at its offset in a flat [words, labels] array', () => {
    const acc = new UncertaintyAccumulator()
    const flat = new Float32Array([0.9, 0.05, 0.05, 0.4, 0.4, 0.2])
    acc.add(flat, 3, 3)
    expect(acc.result()!.margin).toBeCloseTo(1, 6)
  })
})

// Three documents where the three scores disagree:
//  A: one confident word and one split evenly between two labels (a tie: smallest margin)
//  B: every word moderately unsure, the doubt spread over all three labels (highest entropy)
//  C: one word with a low top probability whose runner-up is far behind
const A = doc([
  [1, 0, 0],
  [0.5, 0.5, 0],
])
const B = doc([
  [0.6, 0.2, 0.2],
  [0.6, 0.2, 0.2],
])
const C = doc([
  [0.95, 0.05, 0],
  [0.45, 0.3, 0.25],
])
const cands: Candidate[] = [
  { position: 0, uncertainty: A },
  { position: 1, uncertainty: B },
  { position: 2, uncertainty: C },
  { position: 3, uncertainty: null },
]

describe('selectBatch', () => {
  it('order: pool order, whatever the scores', () => {
    expect(selectBatch('order', [...cands].reverse(), 3, { seed: 1 })).toEqual([0, 1, 2])
  })

  it('least confidence, margin and entropy each rank by their own score, unscored documents last', () => {
    // LC: A 0.25, B 0.4, C 0.3. Margin: A 1-(1+0)/2=0.5, B 1-0.4=0.6, C 1-(0.9+0.15)/2=0.475.
    expect(selectBatch('least-confidence', cands, 4, { seed: 1 })).toEqual([1, 2, 0, 3])
    expect(selectBatch('margin', cands, 4, { seed: 1 })).toEqual([1, 0, 2, 3])
    expect(B.entropy).toBeGreaterThan(C.entropy)
    expect(C.entropy).toBeGreaterThan(A.entropy)
    expect(selectBatch('entropy', cands, 2, { seed: 1 })).toEqual([1, 2])
  })

  it('breaks ties in document order', () => {
    const same = [3, 1, 2].map((position) => ({ position, uncertainty: A }))
    expect(rankByUncertainty(same, 'margin').map((c) => c.position)).toEqual([1, 2, 3])
  })

  it('random: a permutation fixed by the seed, different for another seed', () => {
    const many = Array.from({ length: 30 }, (_, position) => ({ position, uncertainty: null }))
    const a = selectBatch('random', many, 10, { seed: 7 })
    expect(selectBatch('random', [...many].reverse(), 10, { seed: 7 })).toEqual(a)
    expect(selectBatch('random', many, 10, { seed: 8 })).not.toEqual(a)
    expect(new Set(a).size).toBe(10)
    expect(a).not.toEqual(a.slice().sort((x, y) => x - y))
  })

  it('never returns more than the pool holds, nor a position twice', () => {
    for (const s of ['order', 'random', 'least-confidence', 'margin', 'entropy'] as const) {
      const got = selectBatch(s, cands, 10, { seed: 3 })
      expect(got.sort()).toEqual([0, 1, 2, 3])
    }
    expect(() => parseStrategy('smallest')).toThrow(/unknown strategy 'smallest'/)
  })
})

describe('diverse', () => {
  // Two topics; topic "x" holds the three most uncertain documents.
  const unc = (lc: number): DocumentUncertainty => ({ leastConfidence: lc, margin: lc, entropy: lc })
  const texts = ['zorvitis kalemia zorvitis treatment', 'zorvitis kalemia syndrome zorvitis', 'kalemia zorvitis relapse', 'insulin glucose receptor binding', 'glucose insulin receptor signalling']
  const vectors = tfidfVectors(texts)
  const pool: Candidate[] = [0.9, 0.8, 0.7, 0.2, 0.1].map((lc, position) => ({ position, uncertainty: unc(lc), vector: vectors[position] }))

  it('makes unit vectors that are closer within a topic than across', () => {
    const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i], 0)
    expect(dot(vectors[0], vectors[0])).toBeCloseTo(1, 5)
    expect(dot(vectors[0], vectors[1])).toBeGreaterThan(dot(vectors[0], vectors[3]))
    for (const seed of [1, 2, 3, 4]) {
      const a = kMeans(vectors, 2, seed)
      expect([a[1], a[2], a[3], a[4]]).toEqual([a[0], a[0], 1 - a[0], 1 - a[0]])
    }
  })

  it('takes the most uncertain document of each cluster, where least confidence alone takes one topic', () => {
    expect(selectBatch('least-confidence', pool, 2, { seed: 1 })).toEqual([0, 1])
    expect(diverseBatch(pool, 2, 1)).toEqual([0, 3])
  })

  it('fills from the overall ranking when there are fewer clusters than picks, without repeats', () => {
    const got = selectBatch('diverse', pool, 5, { seed: 2 })
    expect([...got].sort()).toEqual([0, 1, 2, 3, 4])
    expect(got[0]).toBe(0)
  })

  it('refuses candidates without vectors', () => {
    expect(() => diverseBatch([{ position: 0, uncertainty: null }], 1, 1)).toThrow(/document vector/)
  })
})
