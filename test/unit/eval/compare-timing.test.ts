// compare's speed verdict (issue 27: one model against itself was reported 23 % faster). Timing
// is judged over rounds of enough work, with the models' order alternating per round, and a
// difference within the rounds' spread is not called faster or slower. Fixed timings only.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compareModels, formatCompareTable, MIN_VERDICT_ROUNDS, roundSpread, timeVerdict, timingOrder } from '@core/eval/compare'
import { syntheticDocs } from '../distill/helpers'
import { saveTinyModel } from '../cli/tiny-model'

describe('round spread and verdict', () => {
  it('median and interquartile range of the rounds', () => {
    const s = roundSpread([12, 10, 11, 30, 13])
    expect(s).toEqual({ medianMs: 12, q1Ms: 11, q3Ms: 13, rounds: 5 })
  })

  it('calls a model faster or slower only when the spreads do not overlap', () => {
    const base = roundSpread([100, 104, 98, 101, 103, 99, 102])
    expect(timeVerdict(base, roundSpread([60, 62, 61, 59, 63, 60, 61]))).toBe('faster')
    expect(timeVerdict(base, roundSpread([150, 149, 152, 151, 148, 150, 153]))).toBe('slower')
    // A median 6 % lower, but with rounds as slow as the reference's: not a difference.
    expect(timeVerdict(base, roundSpread([92, 99, 85, 101, 90, 104, 95]))).toBe('within spread')
    // The same rounds in another order.
    expect(timeVerdict(base, roundSpread([104, 98, 100, 103, 101, 99, 102]))).toBe('within spread')
  })

  it('gives no verdict on too few rounds, however large the difference', () => {
    const few = Array.from({ length: MIN_VERDICT_ROUNDS - 1 }, (_, i) => 100 + i)
    expect(timeVerdict(roundSpread(few), roundSpread(few.map((x) => x / 3)))).toBe('too few rounds')
    expect(MIN_VERDICT_ROUNDS).toBeGreaterThanOrEqual(3)
  })

  it('alternates which model goes first, per round and per document', () => {
    for (const n of [2, 3]) {
      const first = new Array(n).fill(0)
      // One timing document: only the rounds can alternate the order.
      for (let r = 0; r < 2 * n; r++) {
        const order = timingOrder(n, r, 0)
        expect([...order].sort()).toEqual([...Array(n).keys()])
        first[order[0]]++
      }
      expect(first).toEqual(new Array(n).fill(2))
    }
  })
})

describe('compareModels timing', () => {
  let tmp: string
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'fastbioner-compare-timing-'))
  })
  afterAll(() => rmSync(tmp, { recursive: true, force: true }))

  it('one model against itself is within the spread when whichever runs first on a document is slower', async () => {
    const dir = await saveTinyModel(tmp)
    // A clock on which the first model to see a document takes 13 ms and the next 10 ms (a cold
    // cache), as a shared machine makes it: the order, not the model, decides.
    let calls = 0
    let t = 0
    const models = 2
    const now = () => {
      const c = calls++
      if (c % 2 === 1) t += Math.floor(c / 2) % models === 0 ? 13 : 10
      return t
    }
    const gold = syntheticDocs(1, 3, 4, 'g')
    const report = await compareModels([dir, dir], gold, { names: ['a', 'b'], warmupDocs: 0, rounds: 8, minRoundPieces: 0, now, logger: () => {} })
    const [a, b] = report.models
    expect(report.rounds).toBe(8)
    expect(a.timing.rounds).toBe(8)
    expect(a.timing.medianMs).toBeGreaterThan(0)
    expect(b.relative!.time).toBe('within spread')
    expect(formatCompareTable(report)).toMatch(/within spread/)
  })

  it('repeats the timing documents until a round has enough work', async () => {
    const dir = await saveTinyModel(tmp, 'm2')
    let t = 0
    let timed = 0
    const now = () => {
      timed++
      return (t += 1)
    }
    const gold = syntheticDocs(2, 4, 4, 'g')
    const report = await compareModels([dir], gold, { warmupDocs: 0, rounds: 3, minRoundPieces: 200, now, logger: () => {} })
    const perRound = report.timingPieces
    expect(perRound).toBeGreaterThanOrEqual(200)
    // Two clock readings per tagging call: whole passes over the 2 documents, 3 rounds.
    const calls = timed / 2
    expect(calls % (2 * 3)).toBe(0)
    expect(calls / 3).toBe(2 * report.passesPerRound)
    expect(report.passesPerRound).toBeGreaterThan(1)
  })
})
