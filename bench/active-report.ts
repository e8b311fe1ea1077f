// The pure half of bench:active (issue 30): stored runs → tables and SVG charts for
// docs/ACTIVE.md. Unit-tested in test/unit/bench/active-report.test.ts.

import type { RoundRecord, SimulationOptions } from '../src/core/active/simulate'
import type { Strategy } from '../src/core/active/strategies'
import { correctionsOf, type EditCounts } from '../src/core/eval/edits'

/** A run's protocol as stored: the simulation's settings, the corpus and the pool/devel sizes. */
export type ActiveSettings = Pick<SimulationOptions, 'strategy' | 'seed' | 'seedDocs' | 'batch' | 'maxDocs' | 'seedEpochs' | 'retrainEpochs'> & {
  corpus: string
  /** Teaching a new type: the type and the base model's folder (runs of this kind are a corpus key of their own). */
  newType?: { type: string; base: string } | null
  retrainSteps: number | null
  threads: number | null
  poolSize: number
  devSize: number
}

export interface StoredActiveRun {
  settings: ActiveSettings
  rounds: RoundRecord[]
  complete: boolean
  /** A short first look, not the issue's protocol: the report says so. */
  pilot: boolean
  command: string
  started: string
  finished: string | null
  /** os.loadavg() when the run started and at its end (other jobs on the machine slow it down). */
  loadAverage: { start: number[]; end: number[] | null }
  cpus: number
}

/** The file a run is stored in (one per corpus × strategy × seed). */
export function runKey(s: Pick<ActiveSettings, 'corpus' | 'strategy' | 'seed'>): string {
  return `${s.corpus}-${s.strategy}-s${s.seed}`
}

/** Settings that must match for a stored run to stand for a requested one. */
export function sameProtocol(a: ActiveSettings, b: ActiveSettings): boolean {
  const keys: Array<keyof ActiveSettings> = ['corpus', 'strategy', 'seed', 'seedDocs', 'batch', 'maxDocs', 'seedEpochs', 'retrainEpochs', 'retrainSteps', 'poolSize', 'devSize']
  return keys.every((k) => a[k] === b[k]) && JSON.stringify(a.newType ?? null) === JSON.stringify(b.newType ?? null)
}

export interface StrategyCurve {
  strategy: Strategy
  seeds: number[]
  /** Mean over seeds at each round: documents reviewed, corrections so far, devel F1, the model's wall minutes so far (choosing, retraining, scoring). */
  points: Array<{ reviewed: number; corrections: number; f1: number; f1Sd: number; minutes: number }>
  /** Mean over seeds of the edits at the end. */
  edits: EditCounts
  seconds: { select: number; retrain: number; eval: number }
  steps: number
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
const sd = (xs: readonly number[]) => (xs.length < 2 ? 0 : Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1)))

/** One curve per strategy of a corpus: complete runs only, rounds aligned by index (same protocol). */
export function curves(runs: readonly StoredActiveRun[], corpus: string, order: readonly Strategy[]): StrategyCurve[] {
  const out: StrategyCurve[] = []
  for (const strategy of order) {
    const mine = runs.filter((r) => r.complete && r.settings.corpus === corpus && r.settings.strategy === strategy)
    if (mine.length === 0) continue
    const n = Math.min(...mine.map((r) => r.rounds.length))
    const points = Array.from({ length: n }, (_, i) => ({
      reviewed: mean(mine.map((r) => r.rounds[i].reviewed)),
      corrections: mean(mine.map((r) => correctionsOf(r.rounds[i].totalEdits))),
      f1: mean(mine.map((r) => r.rounds[i].dev.f1)),
      f1Sd: sd(mine.map((r) => r.rounds[i].dev.f1)),
      minutes: mean(mine.map((r) => r.rounds.slice(0, i + 1).reduce((a, x) => a + x.seconds.select + x.seconds.retrain + x.seconds.eval, 0) / 60)),
    }))
    const last = mine.map((r) => r.rounds[n - 1].totalEdits)
    const edits = { accepted: mean(last.map((e) => e.accepted)), rejected: mean(last.map((e) => e.rejected)), added: mean(last.map((e) => e.added)), retyped: mean(last.map((e) => e.retyped)), rebounded: mean(last.map((e) => e.rebounded)) }
    // Rounds after the seed: what a person waits for after each batch.
    const later = mine.flatMap((r) => r.rounds.slice(1))
    out.push({
      strategy,
      seeds: mine.map((r) => r.settings.seed).sort((a, b) => a - b),
      points,
      edits,
      seconds: { select: mean(later.map((r) => r.seconds.select)), retrain: mean(later.map((r) => r.seconds.retrain)), eval: mean(later.map((r) => r.seconds.eval)) },
      steps: mean(later.map((r) => r.steps)),
    })
  }
  return out
}

/** Documents reviewed when the curve first reaches `f1` (null: never). */
export function docsToReach(c: StrategyCurve, f1: number): number | null {
  return c.points.find((p) => p.f1 >= f1 - 1e-12)?.reviewed ?? null
}

/**
 * Documents reviewed and the model's minutes until devel F1 first reaches each threshold (the
 * new-type scenario): minutes are what the simulation computed (seed model included), not the
 * person's reading time.
 */
export function renderThresholds(cs: readonly StrategyCurve[], thresholds: readonly number[]): string {
  const lines = [`| strategy | seeds | ${thresholds.map((t) => `documents to F1 ≥ ${t} | model minutes to F1 ≥ ${t}`).join(' | ')} | F1 at the end |`, `|---|---|${thresholds.map(() => '---:|---:').join('|')}|---:|`]
  for (const c of cs) {
    const cells = thresholds.flatMap((t) => {
      const p = c.points.find((q) => q.f1 >= t - 1e-12)
      return p ? [f0(p.reviewed), p.minutes.toFixed(1)] : ['not reached', '—']
    })
    lines.push(`| ${c.strategy} | ${c.seeds.join(', ')} | ${cells.join(' | ')} | ${f3(c.points[c.points.length - 1].f1)} |`)
  }
  return lines.join('\n') + '\n'
}

const f3 = (x: number) => x.toFixed(3)
const f0 = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1))

export function renderTables(cs: readonly StrategyCurve[]): string {
  if (cs.length === 0) return '_No complete runs._\n'
  const reviewed = cs[0].points.map((p) => p.reviewed)
  const order = cs.find((c) => c.strategy === 'order')
  const target = order ? order.points[order.points.length - 1] : null
  const lines: string[] = []
  lines.push(`| strategy | seeds | ${reviewed.map((r) => `F1 @ ${f0(r)}`).join(' | ')} | documents to reach document order's final F1 |`)
  lines.push(`|---|---|${reviewed.map(() => '---:').join('|')}|---:|`)
  for (const c of cs) {
    const reach = target ? docsToReach(c, target.f1) : null
    const reachCell = !target ? '—' : reach === null ? 'not reached' : `${f0(reach)} (${Math.round((100 * reach) / target.reviewed)} %)`
    const cells = c.points.map((p) => (c.seeds.length > 1 ? `${f3(p.f1)} ± ${f3(p.f1Sd)}` : f3(p.f1)))
    lines.push(`| ${c.strategy} | ${c.seeds.join(', ')} | ${cells.join(' | ')} | ${reachCell} |`)
  }
  lines.push('')
  lines.push('Edits the simulated annotator made, seed documents included (their mentions all typed in), mean over seeds:')
  lines.push('')
  lines.push('| strategy | accepted | rejected | added | retyped | re-bounded | corrections | corrections per reviewed document after the seed |')
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|')
  for (const c of cs) {
    const e = c.edits
    const first = c.points[0]
    const lastP = c.points[c.points.length - 1]
    const perDoc = lastP.reviewed > first.reviewed ? (lastP.corrections - first.corrections) / (lastP.reviewed - first.reviewed) : 0
    lines.push(`| ${c.strategy} | ${f0(e.accepted)} | ${f0(e.rejected)} | ${f0(e.added)} | ${f0(e.retyped)} | ${f0(e.rebounded)} | ${f0(correctionsOf(e))} | ${perDoc.toFixed(2)} |`)
  }
  lines.push('')
  lines.push('Time per round after the seed (wall seconds, mean): choosing (tagging the pool for the uncertainty strategies, only the picked documents otherwise), retraining, scoring devel:')
  lines.push('')
  lines.push('| strategy | choose | retrain | devel | retrain steps |')
  lines.push('|---|---:|---:|---:|---:|')
  for (const c of cs) lines.push(`| ${c.strategy} | ${c.seconds.select.toFixed(1)} | ${c.seconds.retrain.toFixed(1)} | ${c.seconds.eval.toFixed(1)} | ${Math.round(c.steps)} |`)
  return lines.join('\n') + '\n'
}

export interface ChartSeries {
  name: string
  points: Array<[number, number]>
}

const COLOURS = ['#1b6ca8', '#d1495b', '#2e933c', '#8a4fbe', '#e08e0b', '#5c5c5c']

/** 1, 2 or 5 × 10^k, giving about `count` ticks over the range. */
export function tickStep(range: number, count = 5): number {
  if (!(range > 0)) return 1
  const raw = range / count
  const p = 10 ** Math.floor(Math.log10(raw))
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw)!
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/**
 * A line chart as plain SVG: straight segments between the measured points and a marker on each
 * (issue 30, item 5: few noisy points must not read as a smooth trend); no library, so the file
 * is small, diffable and renders the same everywhere.
 */
export function lineChartSvg(o: { title: string; xLabel: string; yLabel: string; series: readonly ChartSeries[] }): string {
  // The legend's column is as wide as its longest name (about 7 px a character at 12 px, after
  // the 46 px swatch), so that "least-confidence (3 seeds)" is not cut at the edge.
  const legend = Math.max(170, 46 + 7 * Math.max(0, ...o.series.map((s) => s.name.length)) + 8)
  const H = 380
  const m = { left: 64, right: legend, top: 40, bottom: 56 }
  const W = m.left + 406 + m.right
  const pts = o.series.flatMap((s) => s.points)
  const xs = pts.map((p) => p[0])
  const ys = pts.map((p) => p[1])
  const xStep = tickStep(Math.max(...xs, 1) - Math.min(0, ...xs))
  const x0 = 0
  const x1 = Math.ceil(Math.max(...xs, 1) / xStep) * xStep
  const yStep = tickStep(Math.max(...ys, 0.1) - Math.min(...ys, 0), 5)
  const y0 = Math.max(0, Math.floor(Math.min(...ys, 1) / yStep) * yStep)
  const y1 = Math.min(1, Math.ceil(Math.max(...ys, 0) / yStep) * yStep) || 1
  const px = (x: number) => m.left + ((x - x0) / (x1 - x0)) * (W - m.left - m.right)
  const py = (y: number) => H - m.bottom - ((y - y0) / (y1 - y0 || 1)) * (H - m.top - m.bottom)
  const out: string[] = []
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="t">`)
  out.push(`<title id="t">${esc(o.title)}</title>`)
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`)
  out.push(`<text x="${m.left}" y="24" font-family="sans-serif" font-size="15" fill="#222">${esc(o.title)}</text>`)
  const decimals = yStep < 0.01 ? 3 : 2
  for (let y = y0; y <= y1 + 1e-9; y += yStep) {
    out.push(`<line x1="${m.left}" x2="${W - m.right}" y1="${py(y).toFixed(1)}" y2="${py(y).toFixed(1)}" stroke="#e3e3e3"/>`)
    out.push(`<text x="${m.left - 6}" y="${(py(y) + 4).toFixed(1)}" text-anchor="end" font-family="sans-serif" font-size="11" fill="#444">${y.toFixed(decimals)}</text>`)
  }
  for (let x = x0; x <= x1 + 1e-9; x += xStep) {
    out.push(`<line x1="${px(x).toFixed(1)}" x2="${px(x).toFixed(1)}" y1="${H - m.bottom}" y2="${H - m.bottom + 4}" stroke="#444"/>`)
    out.push(`<text x="${px(x).toFixed(1)}" y="${H - m.bottom + 17}" text-anchor="middle" font-family="sans-serif" font-size="11" fill="#444">${f0(x)}</text>`)
  }
  out.push(`<line x1="${m.left}" x2="${W - m.right}" y1="${H - m.bottom}" y2="${H - m.bottom}" stroke="#444"/>`)
  out.push(`<line x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${H - m.bottom}" stroke="#444"/>`)
  out.push(`<text x="${(m.left + W - m.right) / 2}" y="${H - 14}" text-anchor="middle" font-family="sans-serif" font-size="12" fill="#222">${esc(o.xLabel)}</text>`)
  out.push(`<text transform="translate(16 ${(m.top + H - m.bottom) / 2}) rotate(-90)" text-anchor="middle" font-family="sans-serif" font-size="12" fill="#222">${esc(o.yLabel)}</text>`)
  o.series.forEach((s, i) => {
    const c = COLOURS[i % COLOURS.length]
    const path = s.points.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ')
    out.push(`<polyline class="series" fill="none" stroke="${c}" stroke-width="2" points="${path}"/>`)
    for (const [x, y] of s.points) out.push(`<circle class="marker" cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3.5" fill="${c}"><title>${esc(s.name)}: ${f0(x)}, ${y.toFixed(3)}</title></circle>`)
    const ly = m.top + 10 + i * 20
    out.push(`<line x1="${W - m.right + 16}" x2="${W - m.right + 40}" y1="${ly}" y2="${ly}" stroke="${c}" stroke-width="2"/><circle cx="${W - m.right + 28}" cy="${ly}" r="3.5" fill="${c}"/>`)
    out.push(`<text x="${W - m.right + 46}" y="${ly + 4}" font-family="sans-serif" font-size="12" fill="#222">${esc(s.name)}</text>`)
  })
  out.push('</svg>')
  return out.join('\n') + '\n'
}

/** The two charts of a corpus: devel F1 against documents reviewed and against corrections made. */
export function chartsOf(cs: readonly StrategyCurve[], title: string): { byDocs: string; byEdits: string } {
  const name = (c: StrategyCurve) => `${c.strategy}${c.seeds.length > 1 ? ` (${c.seeds.length} seeds)` : ''}`
  return {
    byDocs: lineChartSvg({ title: `${title}: devel F1 vs documents reviewed`, xLabel: 'documents reviewed (seed documents included)', yLabel: 'devel F1', series: cs.map((c) => ({ name: name(c), points: c.points.map((p) => [p.reviewed, p.f1]) })) }),
    byEdits: lineChartSvg({ title: `${title}: devel F1 vs corrections made`, xLabel: 'corrections (rejected + added + retyped + re-bounded)', yLabel: 'devel F1', series: cs.map((c) => ({ name: name(c), points: c.points.map((p) => [p.corrections, p.f1]) })) }),
  }
}
