// The CRF against brute force over every label path: log-partition, Viterbi path, gradients
// (finite differences), the batch form's handling of ignored positions, and path sampling's
// frequencies against the exact posterior of every path.

import { describe, expect, it } from 'vitest'
import { crfBatchLoss, crfNegLogLikelihood, pathScore, sampleCrfPath, viterbi, type CrfScores } from '@core/model/crf'
import { Rng } from '@core/rng'

function randomCrf(C: number, rng: Rng): CrfScores {
  return { transitions: rng.normalArray(C * C, 1), start: rng.normalArray(C, 1), end: rng.normalArray(C, 1) }
}

/** Every path of length L over C labels. */
function allPaths(L: number, C: number): number[][] {
  let paths: number[][] = [[]]
  for (let t = 0; t < L; t++) paths = paths.flatMap((p) => Array.from({ length: C }, (_, j) => [...p, j]))
  return paths
}

function bruteLogZ(em: ArrayLike<number>, L: number, C: number, crf: CrfScores): number {
  const scores = allPaths(L, C).map((p) => pathScore(em, p, C, crf))
  const max = Math.max(...scores)
  return max + Math.log(scores.reduce((s, x) => s + Math.exp(x - max), 0))
}

describe('linear-chain CRF', () => {
  it('−log p(path) equals brute-force log-partition minus the path score', () => {
    const rng = new Rng(3)
    for (const [L, C] of [[1, 3], [2, 3], [4, 3], [5, 4]]) {
      const crf = randomCrf(C, rng)
      const em = rng.normalArray(L * C, 2)
      const path = Array.from({ length: L }, () => rng.nextU32() % C)
      const nll = crfNegLogLikelihood(em, path, C, crf)
      expect(nll).toBeCloseTo(bruteLogZ(em, L, C, crf) - pathScore(em, path, C, crf), 9)
      expect(nll).toBeGreaterThan(0)
    }
  })

  it('Viterbi returns the highest-scoring path (brute force)', () => {
    const rng = new Rng(5)
    for (let trial = 0; trial < 20; trial++) {
      const C = 3 + (trial % 3)
      const L = 1 + (trial % 5)
      const crf = randomCrf(C, rng)
      const em = rng.normalArray(L * C, 2)
      let best: number[] = []
      let bestScore = -Infinity
      for (const p of allPaths(L, C)) {
        const s = pathScore(em, p, C, crf)
        if (s > bestScore) [best, bestScore] = [p, s]
      }
      expect([...viterbi(em, L, C, crf)]).toEqual(best)
    }
  })

  it('Viterbi with zero transitions is the per-position argmax; a forbidding transition changes it', () => {
    const C = 3 // O, B, I
    const em = [2, 0, 0, 0, 0, 1] // t0 → O, t1 → I on its own
    const zero: CrfScores = { transitions: new Float64Array(9), start: new Float64Array(3), end: new Float64Array(3) }
    expect([...viterbi(em, 2, C, zero)]).toEqual([0, 2])
    const noOtoI = new Float64Array(9)
    noOtoI[0 * C + 2] = -100 // O → I
    expect([...viterbi(em, 2, C, { ...zero, transitions: noOtoI })]).toEqual([0, 0])
  })

  it('gradients equal finite differences of the batch loss', () => {
    const rng = new Rng(11)
    const B = 2
    const S = 5
    const C = 3
    const crf = randomCrf(C, rng)
    const logits = Float64Array.from(rng.normalArray(B * S * C, 1.5))
    // row 0: positions 1, 2, 4 labelled (3 is a continuation piece); row 1: positions 1, 2
    const labels = Int32Array.from([-100, 1, 2, -100, 0, -100, 0, 1, -100, -100])
    const r = crfBatchLoss(logits, labels, B, S, C, crf)
    expect(r.count).toBe(5)
    const loss = (lg: ArrayLike<number>, c: CrfScores) => crfBatchLoss(lg, labels, B, S, C, c).loss
    const h = 1e-5
    for (let i = 0; i < logits.length; i++) {
      const up = Float64Array.from(logits)
      const down = Float64Array.from(logits)
      up[i] += h
      down[i] -= h
      expect(r.dLogits[i]).toBeCloseTo((loss(up, crf) - loss(down, crf)) / (2 * h), 5)
    }
    for (const key of ['transitions', 'start', 'end'] as const) {
      for (let i = 0; i < crf[key].length; i++) {
        const up = Float64Array.from(crf[key])
        const down = Float64Array.from(crf[key])
        up[i] += h
        down[i] -= h
        const fd = (loss(logits, { ...crf, [key]: up }) - loss(logits, { ...crf, [key]: down })) / (2 * h)
        expect(r.grads[key][i]).toBeCloseTo(fd, 5)
      }
    }
    // unlabelled positions get no gradient
    for (const p of [0, 3, 5, 8, 9]) for (let j = 0; j < C; j++) expect(r.dLogits[p * C + j]).toBe(0)
  })

  it('the batch loss is the mean over labelled positions of the per-sentence losses, and 0 without labels', () => {
    const rng = new Rng(2)
    const C = 3
    const crf = randomCrf(C, rng)
    const logits = rng.normalArray(2 * 3 * C, 1)
    const labels = Int32Array.from([0, 1, 2, 2, -100, 0])
    const one = (row: number, pos: number[]) =>
      crfNegLogLikelihood(pos.flatMap((p) => Array.from({ length: C }, (_, j) => logits[(row * 3 + p) * C + j])), pos.map((p) => labels[row * 3 + p]), C, crf)
    expect(crfBatchLoss(logits, labels, 2, 3, C, crf).loss).toBeCloseTo((one(0, [0, 1, 2]) + one(1, [0, 2])) / 5, 9)
    expect(crfBatchLoss(logits, new Int32Array(6).fill(-100), 2, 3, C, crf).loss).toBe(0)
    expect(() => crfBatchLoss(logits, Int32Array.from([0, 3, 0, 0, 0, 0]), 2, 3, C, crf)).toThrow(/label 3 at batch row 0, position 1/)
  })

  it('samples each path as often as its posterior exp(score − logZ); without a CRF each word from its softmax', () => {
    const rng = new Rng(11)
    const n = 20_000
    // The frequency of a path of probability p has standard deviation √(p(1−p)/n) ≤ 0.0036.
    const near = (freq: number, p: number) => expect(Math.abs(freq - p)).toBeLessThan(4 * Math.sqrt((p * (1 - p)) / n) + 1e-3)
    for (const [L, C] of [[3, 2], [3, 3]]) {
      const crf = randomCrf(C, rng)
      const em = rng.normalArray(L * C, 1)
      const paths = allPaths(L, C)
      const logZ = bruteLogZ(em, L, C, crf)
      const counts = new Map<string, number>()
      const draw = new Rng(L * 10 + C)
      for (let k = 0; k < n; k++) {
        const key = sampleCrfPath(em, L, C, crf, draw).join()
        counts.set(key, (counts.get(key) ?? 0) + 1)
      }
      for (const p of paths) near((counts.get(p.join()) ?? 0) / n, Math.exp(pathScore(em, p, C, crf) - logZ))
      // Log-probabilities (each word's row shifted by a constant) are the same posterior: same draws.
      const shifted = Float32Array.from(em, (x, i) => x - 3 * Math.floor(i / C) - 1)
      const a = new Rng(99)
      const b = new Rng(99)
      for (let k = 0; k < 200; k++) expect(sampleCrfPath(shifted, L, C, crf, a)).toEqual(sampleCrfPath(em, L, C, crf, b))
    }
    // No CRF: words independent, each label as often as its softmax probability.
    const L = 3
    const C = 3
    const em = rng.normalArray(L * C, 1.5)
    const counts = new Float64Array(L * C)
    const draw = new Rng(7)
    for (let k = 0; k < n; k++) sampleCrfPath(em, L, C, undefined, draw).forEach((j, t) => counts[t * C + j]++)
    for (let t = 0; t < L; t++) {
      const z = [0, 1, 2].reduce((s, j) => s + Math.exp(em[t * C + j]), 0)
      for (let j = 0; j < C; j++) near(counts[t * C + j] / n, Math.exp(em[t * C + j]) / z)
    }
    expect(sampleCrfPath(em, 0, C, randomCrf(C, rng), draw)).toEqual(new Int32Array(0))
  })
})
