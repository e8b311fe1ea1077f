// The comparison results as charts (Chart.js): F1 against latency and size, F1 kept against time
// saved beside FastBioNER's published students, and F1 per entity type.
import { useMemo } from 'react'
import type { ChartConfiguration, Plugin } from 'chart.js'
import type { ComparisonRow } from '@shared/ipc'
import { PUBLISHED_FASTBIONER } from '@shared/published'
import { ChartCanvas } from './Chart'
import { placeLabels, type LabelRequest } from './label-placement'
import { REFERENCE, SERIES } from './palette'
import { formatBytes, pct } from './store'

export function ComparisonCharts({ rows }: { rows: ComparisonRow[] }) {
  const types = [...new Set(rows.flatMap((r) => Object.keys(r.types)))].sort()
  return (
    <div className="chart-grid">
      <section className="card" aria-labelledby="chart-tradeoff">
        <div className="card-head">
          <h3 id="chart-tradeoff">F1 vs latency vs size</h3>
          <span className="muted">bubble area = model size</span>
        </div>
        <TradeoffChart rows={rows} />
      </section>
      <section className="card" aria-labelledby="chart-relative">
        <div className="card-head">
          <h3 id="chart-relative">Kept F1 vs time saved, against FastBioNER</h3>
        </div>
        <RelativeChart rows={rows} />
      </section>
      {types.length > 0 && (
        <section className="card span-2" aria-labelledby="chart-types">
          <div className="card-head">
            <h3 id="chart-types">F1 per entity type</h3>
          </div>
          <PerTypeChart rows={rows} types={types} />
        </section>
      )}
    </div>
  )
}

/**
 * Draws each point's name near it (Chart.js has no data labels without a plugin), every dataset's
 * names placed together so that none overlaps another or a marker (label-placement.ts).
 */
const pointNames: Plugin = {
  id: 'pointNames',
  afterDatasetsDraw(chart) {
    const { ctx } = chart
    ctx.save()
    ctx.font = `600 12px ${String(chart.options.font?.family ?? 'system-ui')}`
    const requests: LabelRequest[] = []
    chart.data.datasets.forEach((ds, i) => {
      const { names } = ds as unknown as { names?: string[] }
      if (!names || chart.getDatasetMeta(i).hidden) return
      chart.getDatasetMeta(i).data.forEach((el, j) => {
        const text = names[j]
        const r = (el as unknown as { options?: { radius?: number } }).options?.radius ?? 4
        if (text) requests.push({ text, x: el.x, y: el.y, r })
      })
    })
    // Right of the y axis's ticks and above the x axis's (the layout padding leaves room for names).
    const bounds = { left: chart.chartArea.left, top: 0, right: chart.width, bottom: chart.chartArea.bottom }
    const placed = placeLabels(requests, { measure: (t) => ctx.measureText(t).width, lineHeight: 14, bounds })
    // Where the names went, in canvas pixels: what the UI tests check for overlaps (a canvas has no DOM to look at).
    chart.canvas.dataset.labelBoxes = JSON.stringify(placed.map(({ text, box }) => ({ text, ...box })))
    ctx.textBaseline = 'middle'
    ctx.textAlign = 'left'
    placed.forEach(({ text, box, displaced }, k) => {
      const point = requests[k]!
      if (displaced) {
        // A thin leader from the marker's edge to the nearest point of the label's box.
        const tx = Math.min(Math.max(point.x, box.left), box.right)
        const ty = Math.min(Math.max(point.y, box.top), box.bottom)
        const len = Math.hypot(tx - point.x, ty - point.y)
        if (len > point.r + 2) {
          ctx.strokeStyle = '#8a939c'
          ctx.lineWidth = 1
          ctx.beginPath()
          ctx.moveTo(point.x + ((tx - point.x) * point.r) / len, point.y + ((ty - point.y) * point.r) / len)
          ctx.lineTo(tx, ty)
          ctx.stroke()
        }
      }
      ctx.fillStyle = '#2b3138'
      ctx.fillText(text, box.left, (box.top + box.bottom) / 2)
    })
    ctx.restore()
  },
}

function TradeoffChart({ rows }: { rows: ComparisonRow[] }) {
  const config = useMemo((): ChartConfiguration<'bubble'> => {
    const maxBytes = Math.max(...rows.map((r) => r.bytes), 1)
    const lowF1 = Math.min(...rows.map((r) => r.overall.f1 * 100))
    return {
      type: 'bubble',
      data: {
        datasets: rows.map((r, i) => ({
          label: r.name,
          names: [r.name],
          data: [{ x: r.medianMsPerDocument, y: r.overall.f1 * 100, r: 6 + 22 * Math.sqrt(r.bytes / maxBytes) }],
          backgroundColor: `${SERIES[i % SERIES.length]}55`,
          borderColor: SERIES[i % SERIES.length],
          borderWidth: 2,
          clip: false,
        })),
      },
      options: {
        // Room above the 100 % line for bubbles that sit on it, and their names.
        layout: { padding: { right: 40, top: 56, left: 10 } },
        scales: {
          x: { type: 'linear', beginAtZero: true, title: { display: true, text: 'Median time per document (ms) — lower is faster' }, grace: '20%' },
          // F1 cannot pass 100: the axis stops there, the bubbles may overhang it.
          y: { type: 'linear', title: { display: true, text: 'F1 (%)' }, max: 100, min: Math.max(0, Math.floor((lowF1 - 6) / 5) * 5) },
        },
        plugins: {
          legend: { position: 'bottom' },
          tooltip: {
            callbacks: {
              label: (ctx) => {
                const r = rows[ctx.datasetIndex]!
                return `${r.name}: F1 ${pct(r.overall.f1)}%, ${r.medianMsPerDocument.toFixed(1)} ms/doc, ${formatBytes(r.bytes)}`
              },
            },
          },
        },
      },
      plugins: [pointNames],
    } as ChartConfiguration<'bubble'>
  }, [rows])
  const label = `Bubble chart of F1 against time per document; bubble size is model size. ${rows
    .map((r) => `${r.name}: F1 ${pct(r.overall.f1)}%, ${r.medianMsPerDocument.toFixed(1)} ms, ${formatBytes(r.bytes)}`)
    .join('; ')}.`
  return (
    <div className="chart-box">
      <ChartCanvas config={config} label={label} testId="tradeoff-chart" />
    </div>
  )
}

function RelativeChart({ rows }: { rows: ComparisonRow[] }) {
  const students = rows.slice(1)
  const config = useMemo((): ChartConfiguration<'scatter'> => {
    return {
      type: 'scatter',
      data: {
        datasets: [
          {
            label: 'Measured here',
            names: students.map((r) => r.name),
            data: students.map((r) => ({ x: r.timeReduction * 100, y: r.f1Retention * 100 })),
            backgroundColor: SERIES[0],
            borderColor: SERIES[0],
            pointRadius: 7,
            pointHoverRadius: 9,
            clip: false,
          },
          {
            label: 'FastBioNER, published',
            names: PUBLISHED_FASTBIONER.rows.map((p) => `${p.layers} layers`),
            data: PUBLISHED_FASTBIONER.rows.map((p) => ({ x: p.timeReduction * 100, y: p.f1Retention * 100 })),
            backgroundColor: '#ffffff',
            borderColor: REFERENCE,
            borderWidth: 2,
            pointStyle: 'rectRot',
            pointRadius: 7,
            pointHoverRadius: 9,
            clip: false,
          },
        ],
      } as unknown as ChartConfiguration<'scatter'>['data'],
      options: {
        layout: { padding: { right: 70, top: 30 } },
        scales: {
          x: { type: 'linear', min: 0, max: 100, title: { display: true, text: 'Time saved vs the reference (%)' } },
          y: {
            type: 'linear',
            min: Math.min(80, ...students.map((r) => Math.floor(r.f1Retention * 20) * 5 - 5)),
            suggestedMax: 100,
            title: { display: true, text: 'F1 kept (% of the reference)' },
          },
        },
        plugins: {
          legend: { position: 'bottom' },
          tooltip: {
            callbacks: {
              label: (ctx) => {
                const names = (ctx.dataset as unknown as { names: string[] }).names
                return `${names[ctx.dataIndex]}: ${ctx.parsed.y?.toFixed(1)}% F1 kept, ${ctx.parsed.x?.toFixed(1)}% faster`
              },
            },
          },
        },
      },
      plugins: [pointNames],
    }
  }, [students])
  const label = `Scatter chart of F1 kept against time saved. Measured: ${students
    .map((r) => `${r.name} ${pct(r.f1Retention)}% kept, ${pct(r.timeReduction)}% faster`)
    .join('; ')}. Published FastBioNER: ${PUBLISHED_FASTBIONER.rows.map((p) => `${p.layers} layers ${pct(p.f1Retention)}% kept, ${pct(p.timeReduction)}% faster`).join('; ')}.`
  return (
    <div className="chart-box">
      <ChartCanvas config={config} label={label} testId="relative-chart" />
    </div>
  )
}

function PerTypeChart({ rows, types }: { rows: ComparisonRow[]; types: string[] }) {
  const config = useMemo(
    (): ChartConfiguration<'bar'> => ({
      type: 'bar',
      data: {
        labels: types,
        datasets: rows.map((r, i) => ({
          label: `${r.name} (${r.layers} layers${r.weights === 'int8' ? ' · int8' : ''})`,
          data: types.map((t) => (r.types[t] ? r.types[t]!.f1 * 100 : 0)),
          backgroundColor: SERIES[i % SERIES.length],
          borderRadius: 3,
          // A fixed thickness keeps a type's bars side by side (about 1 100 px for all of them).
          barThickness: Math.max(8, Math.min(36, Math.floor((0.8 * 1100) / Math.max(1, types.length * rows.length)))),
        })),
      },
      options: {
        scales: {
          x: { grid: { display: false } },
          y: { min: 0, max: 100, title: { display: true, text: 'F1 (%)' } },
        },
        plugins: {
          legend: { position: 'bottom' },
          tooltip: { callbacks: { label: (ctx) => `${ctx.dataset.label}: ${(ctx.parsed.y ?? 0).toFixed(1)}%` } },
        },
      },
    }),
    [rows, types],
  )
  const label = `Grouped bar chart of F1 per entity type. ${types
    .map((t) => `${t}: ${rows.map((r) => `${r.name} ${pct(r.types[t]?.f1)}%`).join(', ')}`)
    .join('; ')}.`
  return (
    <div className="chart-box tall">
      <ChartCanvas config={config} label={label} testId="per-type-chart" />
    </div>
  )
}

