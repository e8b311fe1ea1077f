// The training curve draws straight segments through exactly the measured points, with markers
// when they are few: Chart.js renders the real configuration onto a canvas context that records
// every path command (Chart.js's BasicPlatform, no DOM).
import { Chart, LinearScale, LineController, LineElement, PointElement, type ChartConfiguration } from 'chart.js'
import { FEW_POINTS, learningCurveConfig, lineStyle, trainingCurveConfig } from '../../../src/renderer/src/models/chart-lines'
import type { CurvePoint } from '../../../src/renderer/src/models/store'

Chart.register(LineController, LineElement, PointElement, LinearScale)

interface Call {
  op: string
  args: number[]
}

/** A 2D context that records path commands and accepts everything else. */
function recordingCanvas(width: number, height: number) {
  const calls: Call[] = []
  const state: Record<string | symbol, unknown> = {}
  const canvas = { width, height, style: {}, getContext: () => ctx }
  const ctx: CanvasRenderingContext2D = new Proxy(state, {
    get(target, prop) {
      if (prop === 'canvas') return canvas
      if (prop in target) return target[prop]
      if (prop === 'measureText') return (text: string) => ({ width: text.length * 6 })
      if (prop === 'getLineDash') return () => []
      return (...args: number[]) => void calls.push({ op: String(prop), args })
    },
    set(target, prop, value) {
      target[prop] = value
      return true
    },
  }) as unknown as CanvasRenderingContext2D
  return { canvas, calls }
}

/** A noisy loss curve like the retrain of issue 30's screenshot 17: 24 steps, up and down. */
function noisyCurve(n: number): CurvePoint[] {
  return Array.from({ length: n }, (_, i) => ({ step: i + 1, epoch: 1 + Math.floor(i / 3), loss: 0.1 + ((i * 7919) % 13) / 10 }))
}

function render(config: ChartConfiguration<'line'>) {
  const { canvas, calls } = recordingCanvas(800, 300)
  config.options = { ...config.options, animation: false, responsive: false, plugins: { ...config.options?.plugins, legend: { display: false } } }
  const chart = new Chart(canvas as unknown as HTMLCanvasElement, config)
  return { chart, calls }
}

describe('training curve', () => {
  it('draws the loss as straight segments through exactly the measured points', () => {
    const curve = noisyCurve(24)
    const { chart, calls } = render(trainingCurveConfig({ curve, evals: [], totalSteps: 24, mlm: false }))
    const points = chart.getDatasetMeta(0).data.map((p) => [p.x, p.y] as const)
    expect(points).toHaveLength(24)
    // No curve anywhere: a spline would draw bezierCurveTo between the points.
    expect(calls.filter((c) => c.op === 'bezierCurveTo' || c.op === 'quadraticCurveTo')).toEqual([])
    // The line's path: moveTo the first point, then lineTo each next one in order, and nothing
    // between them (Chart.js's straight path repeats the first point as a zero-length lineTo).
    const start = calls.findIndex((c) => c.op === 'moveTo' && c.args[0] === points[0]![0] && c.args[1] === points[0]![1])
    expect(start).toBeGreaterThanOrEqual(0)
    const vertices: (readonly [number, number])[] = [points[0]!]
    for (const c of calls.slice(start + 1)) {
      if (c.op !== 'lineTo') break
      const last = vertices[vertices.length - 1]!
      if (c.args[0] !== last[0] || c.args[1] !== last[1]) vertices.push([c.args[0]!, c.args[1]!])
    }
    expect(vertices).toEqual(points)
    chart.destroy()
  })

  it('marks each of few points and hides the markers of a long curve', () => {
    const few = render(trainingCurveConfig({ curve: noisyCurve(24), evals: [], totalSteps: 24, mlm: false }))
    const radii = few.chart.getDatasetMeta(0).data.map((p) => (p as unknown as { options: { radius: number } }).options.radius)
    expect(radii.every((r) => r >= 2)).toBe(true)
    // Each marker is drawn: one arc per point.
    expect(few.calls.filter((c) => c.op === 'arc')).toHaveLength(24)
    few.chart.destroy()

    const many = render(trainingCurveConfig({ curve: noisyCurve(FEW_POINTS + 1), evals: [], totalSteps: 0, mlm: false }))
    expect(many.calls.filter((c) => c.op === 'arc')).toHaveLength(0)
    many.chart.destroy()
  })

  it('keeps the devel F1 per epoch straight and marked, beside the loss', () => {
    const curve = noisyCurve(12)
    const evals: CurvePoint[] = [
      { step: 4, epoch: 1, loss: 0.5, devF1: 0.4 },
      { step: 8, epoch: 2, loss: 0.4, devF1: 0.9 },
      { step: 12, epoch: 3, loss: 0.3, devF1: 0.6 },
    ]
    const config = trainingCurveConfig({ curve, evals, totalSteps: 12, mlm: false })
    const f1 = config.data.datasets[1]!
    expect(f1.data).toEqual([
      { x: 4, y: 40 },
      { x: 8, y: 90 },
      { x: 12, y: 60 },
    ])
    expect(f1.tension).toBe(0)
    expect(f1.pointRadius).toBeGreaterThan(0)
    // The line's global defaults cannot bring a spline back: every line dataset says so itself.
    Chart.defaults.datasets.line.tension = 0.4
    try {
      const { calls } = render(config)
      expect(calls.filter((c) => c.op === 'bezierCurveTo')).toEqual([])
    } finally {
      Chart.defaults.datasets.line.tension = 0
    }
  })

  it('gives every line the same straight, marked style', () => {
    expect(lineStyle(1)).toMatchObject({ tension: 0, cubicInterpolationMode: 'default', stepped: false, spanGaps: false })
    expect(lineStyle(FEW_POINTS).pointRadius).toBeGreaterThan(0)
    expect(lineStyle(FEW_POINTS + 1).pointRadius).toBe(0)
  })
})

describe('learning curve', () => {
  const points = [
    { reviewed: 6, f1After: 0.42, trigger: 'manual' as const },
    { reviewed: 12, f1After: 0.55, trigger: 'auto' as const },
    { reviewed: 20, f1After: 0.61, trigger: 'manual' as const },
  ]

  it('plots held-out F1 (%) against documents reviewed, straight from point to point', () => {
    const config = learningCurveConfig(points)
    const data = config.data.datasets[0]!.data as Array<{ x: number; y: number }>
    expect(data.map((p) => p.x)).toEqual([6, 12, 20])
    data.forEach((p, i) => expect(p.y).toBeCloseTo([42, 55, 61][i]!, 10))
    const { chart, calls } = render(config)
    expect(calls.filter((c) => c.op === 'bezierCurveTo' || c.op === 'quadraticCurveTo')).toEqual([])
    expect(chart.getDatasetMeta(0).data).toHaveLength(3)
    chart.destroy()
  })

  it("marks every retrain: the person's as circles, Auto-improve's as triangles", () => {
    const config = learningCurveConfig(points)
    expect(config.data.datasets[0]!.pointStyle).toEqual(['circle', 'triangle', 'circle'])
    const { chart, calls } = render(config)
    // A circle is an arc; the triangle is drawn with lines.
    expect(calls.filter((c) => c.op === 'arc')).toHaveLength(2)
    chart.destroy()
  })
})
