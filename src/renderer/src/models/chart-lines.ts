// Line charts that draw only what was measured. A spline through a few noisy points invents hills
// and dips between them (issue 30, item 5: a 24-step retrain read as a rise, a plateau and a dip),
// so every line is straight segments from point to point, and where the points are few enough to
// tell apart each one carries its marker, so the reader sees where the measurements are.
import type { ChartConfiguration, ChartDataset } from 'chart.js'
import type { CurvePoint } from './store'
import { SERIES } from './palette'

/** Up to this many points a line shows a marker on each; beyond, markers would merge into a band. */
export const FEW_POINTS = 40

type LineStyle = Pick<
  ChartDataset<'line'>,
  'tension' | 'cubicInterpolationMode' | 'stepped' | 'spanGaps' | 'pointRadius' | 'pointHoverRadius' | 'pointHitRadius' | 'clip'
>

/**
 * The style of every line series (loss curves, learning curves): set explicitly rather than left
 * to Chart.js's defaults, which a global option or a later dataset option could turn into a spline.
 */
export function lineStyle(pointCount: number, radius = 3): LineStyle {
  const few = pointCount <= FEW_POINTS
  return {
    tension: 0,
    cubicInterpolationMode: 'default',
    stepped: false,
    // A gap in the data stays a gap: no segment across points that were never measured.
    spanGaps: false,
    pointRadius: few ? radius : 0,
    pointHoverRadius: radius + 2,
    pointHitRadius: 6,
    // A marker on the plot's edge (the last step, an F1 of 100 %) is drawn whole, not halved.
    clip: radius + 3,
  }
}

export interface TrainingCurveInput {
  curve: CurvePoint[]
  evals: CurvePoint[]
  totalSteps: number
  /** Masked-LM adaptation: the epochs carry held-out masked-word accuracy instead of devel F1. */
  mlm: boolean
}

export const curveEvalValue = (p: CurvePoint, mlm: boolean): number => ((mlm ? p.maskedAccuracy : p.devF1) ?? 0) * 100

/**
 * Loss per step (left axis) and the end-of-epoch evaluation (right axis, %), one pair of lines per
 * model when a job trains several (distillation into several depths).
 */
export function trainingCurveConfig({ curve, evals, totalSteps, mlm }: TrainingCurveInput): ChartConfiguration<'line'> {
  const labels = [...new Set([...curve, ...evals].map((p) => p.label ?? ''))]
  const datasets: ChartConfiguration<'line'>['data']['datasets'] = []
  labels.forEach((label, i) => {
    const colour = SERIES[i % SERIES.length]!
    const name = label ? `${label} · ` : ''
    const steps = curve.filter((p) => (p.label ?? '') === label)
    datasets.push({
      label: `${name}loss`,
      data: steps.map((p) => ({ x: p.step, y: p.loss })),
      borderColor: colour,
      backgroundColor: colour,
      borderWidth: 2,
      ...lineStyle(steps.length),
      yAxisID: 'loss',
    })
    const own = evals.filter((p) => (p.label ?? '') === label)
    if (own.length) {
      datasets.push({
        label: `${name}${mlm ? 'held-out masked-word accuracy' : 'devel F1'} (%)`,
        data: own.map((p) => ({ x: p.step, y: curveEvalValue(p, mlm) })),
        borderColor: colour,
        backgroundColor: '#ffffff',
        borderWidth: 2,
        borderDash: [5, 4],
        ...lineStyle(own.length, 5),
        // One evaluation per epoch: always few, always marked, as diamonds apart from the loss's dots.
        pointRadius: 5,
        pointBorderWidth: 2,
        pointStyle: 'rectRot',
        yAxisID: 'f1',
      })
    }
  })
  return {
    type: 'line',
    data: { datasets },
    options: {
      parsing: false,
      normalized: true,
      interaction: { mode: 'nearest', intersect: false },
      scales: {
        x: {
          type: 'linear',
          title: { display: true, text: 'Training step' },
          min: 0,
          ...(totalSteps > 0 && labels.length <= 1 ? { max: totalSteps } : {}),
          ticks: { precision: 0 },
        },
        loss: { type: 'linear', position: 'left', title: { display: true, text: 'Loss' }, beginAtZero: true },
        f1: {
          type: 'linear',
          position: 'right',
          min: 0,
          max: 100,
          // The legend names the series in full; the axis title must fit a short chart.
          title: { display: true, text: mlm ? 'Accuracy (%)' : 'Devel F1 (%)' },
          grid: { drawOnChartArea: false },
        },
      },
      plugins: {
        legend: { position: 'bottom' },
        tooltip: {
          callbacks: {
            label: (ctx) => `${ctx.dataset.label}: ${(ctx.parsed.y ?? 0).toFixed(ctx.dataset.yAxisID === 'f1' ? 1 : 3)}`,
          },
        },
      },
    },
  }
}

/** A learning-curve point as the chart needs it: documents reviewed, held-out F1 (0..1) after the retrain. */
export interface LearningPoint {
  reviewed: number
  f1After: number
  trigger: 'manual' | 'auto'
}

/**
 * Held-out F1 after each retrain against the documents reviewed then (the Retrain view): straight
 * segments, every point marked (retrains are few), automatic ones drawn as triangles apart from
 * the person's circles so the reader sees which retrains Auto-improve started.
 */
export function learningCurveConfig(points: readonly LearningPoint[]): ChartConfiguration<'line'> {
  const colour = SERIES[0]!
  return {
    type: 'line',
    data: {
      datasets: [
        {
          label: 'Held-out F1 after the retrain (%)',
          data: points.map((p) => ({ x: p.reviewed, y: p.f1After * 100 })),
          borderColor: colour,
          backgroundColor: colour,
          borderWidth: 2,
          ...lineStyle(points.length, 5),
          pointStyle: points.map((p) => (p.trigger === 'auto' ? 'triangle' : 'circle')),
        },
      ],
    },
    options: {
      parsing: false,
      normalized: true,
      interaction: { mode: 'nearest', intersect: false },
      scales: {
        x: { type: 'linear', title: { display: true, text: 'Documents reviewed' }, ticks: { precision: 0 }, ...(points.length < 2 ? { min: 0 } : {}) },
        y: { type: 'linear', min: 0, max: 100, title: { display: true, text: 'Held-out F1 (%)' } },
      },
      plugins: {
        legend: { position: 'bottom' },
        tooltip: {
          callbacks: {
            label: (ctx) => `F1 ${(ctx.parsed.y ?? 0).toFixed(1)} % after ${ctx.parsed.x} reviewed (${points[ctx.dataIndex]?.trigger === 'auto' ? 'Auto-improve' : 'retrained by you'})`,
          },
        },
      },
    },
  }
}
