// bench:active's report: curves averaged over seeds, the "documents to reach document order's
// final F1" column, and charts that draw every measured point as a marker on straight segments.
import { describe, expect, it } from 'vitest'
import { chartsOf, curves, docsToReach, lineChartSvg, renderTables, renderThresholds, tickStep, type StoredActiveRun } from '../../../bench/active-report'
import type { RoundRecord } from '@core/active/simulate'
import { NO_EDITS } from '@core/eval/edits'

function run(strategy: 'order' | 'least-confidence', seed: number, f1s: number[], complete = true): StoredActiveRun {
  const rounds: RoundRecord[] = f1s.map((f1, i) => ({
    round: i,
    picked: [],
    reviewed: 20 + 50 * i,
    edits: { ...NO_EDITS, added: 10 },
    suggested: 0,
    totalEdits: { ...NO_EDITS, added: 10 * (i + 1), rejected: i },
    dev: { precision: f1, recall: f1, f1 },
    seconds: { select: 1, retrain: 10 * i, eval: 1 },
    steps: 5 * i,
  }))
  return {
    settings: { corpus: 'ncbi', strategy, seed, seedDocs: 20, batch: 50, maxDocs: 20 + 50 * (f1s.length - 1), seedEpochs: 10, retrainEpochs: 3, retrainSteps: null, threads: 1, poolSize: 592, devSize: 100 },
    rounds,
    complete,
    pilot: false,
    command: 'x',
    started: '2026-01-01T00:00:00Z',
    finished: null,
    loadAverage: { start: [1, 1, 1], end: null },
    cpus: 2,
  }
}

describe('active report', () => {
  const runs = [run('order', 1, [0.2, 0.4, 0.6]), run('order', 2, [0.2, 0.5, 0.7]), run('least-confidence', 1, [0.2, 0.66, 0.8]), run('least-confidence', 2, [0.1, 0.1, 0.1], false)]

  it('averages complete runs per strategy, leaving incomplete ones out', () => {
    const cs = curves(runs, 'ncbi', ['order', 'least-confidence'])
    expect(cs.map((c) => [c.strategy, c.seeds])).toEqual([
      ['order', [1, 2]],
      ['least-confidence', [1]],
    ])
    expect(cs[0].points.map((p) => p.f1)).toEqual([0.2, 0.45, 0.65].map((x) => expect.closeTo(x, 10)))
    expect(cs[0].points[1].f1Sd).toBeCloseTo(Math.SQRT1_2 * 0.1, 10)
    expect(cs[0].points.map((p) => p.corrections)).toEqual([10, 21, 32])
    // Mean of rounds 1 and 2 only: the seed's training is not a round's wait.
    expect(cs[0].seconds.retrain).toBe(15)
  })

  it("finds the documents a strategy needs to reach document order's final F1", () => {
    const [order, lc] = curves(runs, 'ncbi', ['order', 'least-confidence'])
    expect(docsToReach(lc, 0.65)).toBe(70)
    expect(docsToReach(order, 0.9)).toBeNull()
    expect(renderTables([order, lc])).toContain('| least-confidence | 1 | 0.200 | 0.660 | 0.800 | 70 (58 %) |')
  })

  it('draws one marker per measured point and straight segments only', () => {
    const svg = lineChartSvg({ title: 'T', xLabel: 'x', yLabel: 'y', series: [{ name: 'a', points: [[20, 0.3], [70, 0.5], [120, 0.55]] }, { name: 'b', points: [[20, 0.3], [70, 0.6]] }] })
    expect(svg.match(/class="marker"/g)).toHaveLength(5)
    expect(svg.match(/<polyline class="series"/g)).toHaveLength(2)
    expect(svg).not.toMatch(/<path/)
    const { byEdits } = chartsOf(curves(runs, 'ncbi', ['order']), 'NCBI')
    expect(byEdits).toContain('corrections')
  })

  it('picks round tick steps', () => {
    expect(tickStep(300)).toBe(100)
    expect(tickStep(0.37)).toBe(0.1)
    expect(tickStep(0.05)).toBe(0.01)
  })

  it('gives documents and cumulative model minutes to each F1 threshold (the new-type table)', () => {
    const cs = curves(runs, 'ncbi', ['order', 'least-confidence'])
    // Each round: select 1 s + retrain 10·i s + eval 1 s; cumulative 2, 14, 36 s.
    expect(cs[0].points.map((p) => p.minutes * 60)).toEqual([2, 14, 36].map((x) => expect.closeTo(x, 9)))
    const table = renderThresholds(cs, [0.6, 0.7])
    // order (mean of seeds 0.2, 0.45, 0.65): 0.6 at 120 documents, 0.7 never; least-confidence 0.66 at 70, 0.8 at 120.
    expect(table).toContain('| order | 1, 2 | 120 | 0.6 | not reached | — | 0.650 |')
    expect(table).toContain('| least-confidence | 1 | 70 | 0.2 | 120 | 0.6 | 0.800 |')
  })
})
