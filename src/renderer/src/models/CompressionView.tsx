// Compression: distil a teacher into smaller students (FastBioNER's dynamic-weight KD or a
// baseline), and compare models side by side — accuracy, size, speed, and how the reductions
// measured here stand against FastBioNER's published ones.
import { useEffect, useId, useMemo, useState } from 'react'
import type { ChartConfiguration, Plugin } from 'chart.js'
import type { ComparisonReport, ComparisonRow, DistillMode } from '@shared/ipc'
import { PUBLISHED_FASTBIONER } from '@shared/published'
import { api } from '../api'
import { notify } from '../toasts'
import { ChartCanvas, REFERENCE, SERIES } from './Chart'
import { JobProgressBar, TrainingCurve } from './JobViews'
import { DeviceBadge } from './ModelsView'
import { formatBytes, formatCount, formatDate, jobOfKind, pct, refreshModels, runModelJob, useModelJob, useModels } from './store'

export const KD_MODES: Array<{ mode: DistillMode; label: string; hint: string }> = [
  {
    mode: 'dynamic',
    label: 'Dynamic (FastBioNER)',
    hint: 'Teacher soft labels and layer matching, weighted by a schedule that hands over to the gold labels as training goes on.',
  },
  { mode: 'fixed', label: 'Fixed weights', hint: 'TinyBERT-style: a constant 50/50 mix of teacher soft labels and gold labels, plus hidden-state and attention matching.' },
  { mode: 'hidden', label: 'Hidden states only', hint: 'PKD-style: like fixed weights, but matches hidden states only (no attention maps).' },
  { mode: 'none', label: 'No distillation', hint: 'Baseline: the student learns from the gold labels alone, without the teacher.' },
]

const LAYER_CHOICES = [6, 4, 3, 2, 1] as const
type LayerChoice = (typeof LAYER_CHOICES)[number]

export function CompressionView({ initialTab = 'distil' }: { initialTab?: 'distil' | 'compare' }) {
  const [tab, setTab] = useState<'distil' | 'compare'>(initialTab)
  const [compareIds, setCompareIds] = useState<number[] | null>(null)
  useEffect(() => {
    void refreshModels()
  }, [])
  return (
    <div className="view compression-view" data-testid="compression-view">
      <div className="view-inner wide">
        <header className="view-head">
          <div>
            <h2>Compression</h2>
            <p className="muted">Distil a large model into smaller, faster students, then measure what each one keeps and gains.</p>
          </div>
          <div className="segmented" role="tablist" aria-label="Compression">
            <button type="button" role="tab" aria-selected={tab === 'distil'} className={tab === 'distil' ? 'is-on' : ''} onClick={() => setTab('distil')} data-testid="tab-distil">
              Distil
            </button>
            <button type="button" role="tab" aria-selected={tab === 'compare'} className={tab === 'compare' ? 'is-on' : ''} onClick={() => setTab('compare')} data-testid="tab-compare">
              Compare models
            </button>
          </div>
        </header>
        {tab === 'distil' ? (
          <DistilPanel
            onCompare={(ids) => {
              setCompareIds(ids)
              setTab('compare')
            }}
          />
        ) : (
          <ComparePanel preset={compareIds} />
        )}
      </div>
    </div>
  )
}

// ------------------------------------------------------------------------------------------------

function DistilPanel({ onCompare }: { onCompare: (ids: number[]) => void }) {
  const { models } = useModels()
  const { job, results } = useModelJob()
  const usable = models.filter((m) => !m.candidate)
  const [teacherId, setTeacherId] = useState<number | null>(null)
  const [layers, setLayers] = useState<LayerChoice[]>([6, 4, 3])
  const [mode, setMode] = useState<DistillMode>('dynamic')
  const [epochs, setEpochs] = useState(3)
  const teacherSel = useId()
  const epochsId = useId()
  const running = !!job && !job.finished
  const distillJob = jobOfKind(job, 'distill')

  useEffect(() => {
    if (teacherId !== null && usable.some((m) => m.id === teacherId)) return
    // The active model when it can have a student; else the deepest one.
    const active = usable.find((m) => m.active && m.layers > 1)
    const deepest = [...usable].sort((a, b) => b.layers - a.layers || b.parameters - a.parameters)[0]
    setTeacherId(active?.id ?? deepest?.id ?? null)
  }, [usable, teacherId])

  const teacher = usable.find((m) => m.id === teacherId) ?? null
  const allowed = (n: number) => !!teacher && n < teacher.layers
  const chosen = layers.filter(allowed)

  const start = async () => {
    if (!teacher || chosen.length === 0) return
    const r = await runModelJob('distill', `Distilling ${teacher.name}`, (jobId) =>
      api.distill({ jobId, teacherId: teacher.id, layers: chosen, mode, epochs }),
    )
    await refreshModels()
    if (r?.students.length) notify('success', `Distilled ${r.students.map((s) => s.name).join(', ')} from ${teacher.name}.`)
    else if (r?.cancelled) notify('warning', 'Distillation cancelled.')
  }

  const lastStudents = results.distill?.students ?? []

  return (
    <div className="distil-grid">
      <form
        className="card"
        onSubmit={(e) => {
          e.preventDefault()
          void start()
        }}
        data-testid="distil-form"
      >
        <div className="card-head">
          <h3>Distil a teacher</h3>
        </div>
        {usable.length === 0 ? (
          <p className="muted">No model yet: train or import a teacher in Models first.</p>
        ) : (
          <>
            <div className="form-row">
              <label htmlFor={teacherSel}>Teacher</label>
              <select id={teacherSel} value={teacherId ?? ''} onChange={(e) => setTeacherId(Number(e.target.value))} data-testid="distil-teacher">
                {usable.map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.name} · {m.layers}×{m.hidden}
                    {m.devScores ? ` · F1 ${pct(m.devScores.f1)}` : ''}
                  </option>
                ))}
              </select>
            </div>
            <fieldset className="form-row checks">
              <legend>Student depth (layers)</legend>
              <div className="check-row">
                {LAYER_CHOICES.map((n) => (
                  <label key={n} className={`check${allowed(n) ? '' : ' is-disabled'}`} title={allowed(n) ? '' : `Needs a teacher with more than ${n} layers`}>
                    <input
                      type="checkbox"
                      checked={layers.includes(n) && allowed(n)}
                      disabled={!allowed(n)}
                      onChange={(e) => setLayers((l) => (e.target.checked ? [...l, n] : l.filter((x) => x !== n)))}
                      data-layers={n}
                    />
                    {n} layer{n === 1 ? '' : 's'}
                  </label>
                ))}
              </div>
              <p className="muted small-print">
                FastBioNER distils a 12-layer BioBERT into 6, 4 and 3 layers. A student must be shallower than its teacher
                {teacher ? ` (${teacher.name} has ${teacher.layers})` : ''}.
              </p>
            </fieldset>
            <fieldset className="form-row kd-modes">
              <legend>Knowledge distillation</legend>
              {KD_MODES.map((k) => (
                <label key={k.mode} className={`kd-mode${mode === k.mode ? ' is-on' : ''}`}>
                  <input type="radio" name="kd-mode" value={k.mode} checked={mode === k.mode} onChange={() => setMode(k.mode)} />
                  <span className="kd-label">{k.label}</span>
                  <span className="kd-hint">{k.hint}</span>
                </label>
              ))}
            </fieldset>
            <div className="form-row narrow">
              <label htmlFor={epochsId}>Epochs</label>
              <input id={epochsId} type="number" min={1} max={50} value={epochs} onChange={(e) => setEpochs(Math.max(1, Math.min(50, Number(e.target.value) || 1)))} />
            </div>
            <div className="form-actions">
              <button type="submit" className="btn primary" disabled={!teacher || chosen.length === 0 || running} data-testid="start-distil">
                Distil into {chosen.length ? chosen.join(', ') : '…'} layer{chosen.length === 1 && chosen[0] === 1 ? '' : 's'}
              </button>
            </div>
          </>
        )}
      </form>
      <section className="card" aria-labelledby="distil-live">
        <div className="card-head">
          <h3 id="distil-live">Progress</h3>
        </div>
        {distillJob ? (
          <>
            <JobProgressBar job={distillJob} testId="distil-progress" />
            <TrainingCurve job={distillJob} />
          </>
        ) : (
          <p className="muted card-empty">Each student's loss curve and devel F1 appear here while it trains.</p>
        )}
        {lastStudents.length > 0 && teacher && (
          <div className="students" data-testid="distil-result">
            <p>
              New: {lastStudents.map((s) => `${s.name} (${s.layers} × ${s.hidden}${s.devScores ? `, dev F1 ${pct(s.devScores.f1)}%` : ''})`).join('; ')}
            </p>
            <button type="button" className="btn primary" onClick={() => onCompare([teacher.id, ...lastStudents.map((s) => s.id)])}>
              Compare with {teacher.name}
            </button>
          </div>
        )}
      </section>
    </div>
  )
}

// ------------------------------------------------------------------------------------------------

function ComparePanel({ preset }: { preset: number[] | null }) {
  const { models } = useModels()
  const { job, results } = useModelJob()
  const usable = useMemo(() => models.filter((m) => !m.candidate), [models])
  const [referenceId, setReferenceId] = useState<number | null>(null)
  const [chosen, setChosen] = useState<Set<number>>(() => new Set(preset ?? []))
  const refSel = useId()
  const running = !!job && !job.finished
  const compareJob = jobOfKind(job, 'compare')
  const report = results.compare

  useEffect(() => {
    if (preset && preset.length) {
      setReferenceId(preset[0]!)
      setChosen(new Set(preset))
    }
  }, [preset])
  useEffect(() => {
    if (referenceId !== null && usable.some((m) => m.id === referenceId)) return
    // The deepest model (the active one among equals) is the natural reference.
    const biggest = [...usable].sort((a, b) => b.layers - a.layers || Number(b.active) - Number(a.active) || b.parameters - a.parameters)[0]
    if (biggest) {
      setReferenceId(biggest.id)
      setChosen((c) => (c.size ? c : new Set(usable.slice(0, 20).map((m) => m.id))))
    }
  }, [usable, referenceId])

  const ids = referenceId !== null ? [referenceId, ...[...chosen].filter((id) => id !== referenceId && usable.some((m) => m.id === id))] : []

  const run = async () => {
    if (ids.length === 0) return
    const r = await runModelJob('compare', `Comparing ${ids.length} model${ids.length === 1 ? '' : 's'}`, (jobId) => api.compare({ jobId, modelIds: ids }))
    if (r) notify('success', `Measured ${r.rows.length} models on ${r.documents} documents.`)
  }

  return (
    <div className="compare">
      <section className="card" aria-labelledby="compare-setup">
        <div className="card-head">
          <h3 id="compare-setup">Models to compare</h3>
          <span className="muted">Measured on the workspace's documents that are done or carry gold annotations</span>
        </div>
        {usable.length === 0 ? (
          <p className="muted">No model yet.</p>
        ) : (
          <div className="compare-setup">
            <div className="form-row narrow">
              <label htmlFor={refSel}>Reference (the teacher)</label>
              <select id={refSel} value={referenceId ?? ''} onChange={(e) => setReferenceId(Number(e.target.value))} data-testid="compare-reference">
                {usable.map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.name} — {m.layers} layers
                  </option>
                ))}
              </select>
            </div>
            <fieldset className="form-row checks">
              <legend>Compare with</legend>
              <div className="check-row wrap">
                {usable
                  .filter((m) => m.id !== referenceId)
                  .map((m) => (
                    <label key={m.id} className="check">
                      <input
                        type="checkbox"
                        checked={chosen.has(m.id)}
                        onChange={(e) =>
                          setChosen((c) => {
                            const n = new Set(c)
                            if (e.target.checked) n.add(m.id)
                            else n.delete(m.id)
                            return n
                          })
                        }
                        data-model-id={m.id}
                      />
                      {m.name} <span className="muted">({m.layers} × {m.hidden})</span>
                    </label>
                  ))}
              </div>
            </fieldset>
            <div className="form-actions">
              <button type="button" className="btn primary" onClick={() => void run()} disabled={running || ids.length === 0} data-testid="run-compare">
                Measure {ids.length} model{ids.length === 1 ? '' : 's'}
              </button>
            </div>
          </div>
        )}
        {compareJob && !compareJob.finished && <JobProgressBar job={compareJob} testId="compare-progress" />}
      </section>
      {report && <ComparisonResults report={report} />}
    </div>
  )
}

const publishedFor = (layers: number) => PUBLISHED_FASTBIONER.rows.find((r) => r.layers === layers)

function ComparisonResults({ report }: { report: ComparisonReport }) {
  const rows = report.rows
  const teacher = rows[0]
  const types = [...new Set(rows.flatMap((r) => Object.keys(r.types)))].sort()
  const engines = [...new Set(rows.map((r) => r.engine))]
  return (
    <>
      <section className="card" aria-labelledby="cmp-table-title" data-testid="comparison">
        <div className="card-head">
          <h3 id="cmp-table-title">Results</h3>
          <span className="muted" data-testid="comparison-meta">
            {report.documents} documents · {report.machine} · {formatDate(report.measuredAt)}
          </span>
        </div>
        <div className="table-wrap">
          <table className="data-table compare-table" data-testid="comparison-table">
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col" className="num">
                  Layers
                </th>
                <th scope="col" className="num">
                  Params
                </th>
                <th scope="col" className="num">
                  Size
                </th>
                <th scope="col" className="num">
                  P
                </th>
                <th scope="col" className="num">
                  R
                </th>
                <th scope="col" className="num">
                  F1
                </th>
                <th scope="col" className="num">
                  ms / doc
                </th>
                <th scope="col" className="num">
                  Tokens / s
                </th>
                <th scope="col">Engine</th>
                <th scope="col" className="num group-start">
                  F1 kept
                </th>
                <th scope="col" className="num">
                  Size −
                </th>
                <th scope="col" className="num">
                  Time −
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r, i) => (
                <CompareRow key={r.modelId} row={r} isTeacher={i === 0} />
              ))}
            </tbody>
          </table>
        </div>
        <p className="muted small-print">
          P, R, F1 in %, entity level. “F1 kept”, “Size −” and “Time −” are relative to {teacher?.name ?? 'the first model'} (the reference); under each,{' '}
          <span className="published-inline">grey</span>: FastBioNER's published figure for a student of that depth ({PUBLISHED_FASTBIONER.teacherLayers}-layer
          BioBERT teacher). Measured with {engines.join(', ')}.
        </p>
      </section>
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
    </>
  )
}

function CompareRow({ row: r, isTeacher }: { row: ComparisonRow; isTeacher: boolean }) {
  const pub = isTeacher ? undefined : publishedFor(r.layers)
  const rel = (ours: number, published: number | undefined, sign: '' | '−') => (
    <>
      <span className="ours">{isTeacher ? '—' : `${sign}${pct(ours)} %`}</span>
      {pub && published !== undefined && (
        <span className="published" title={`FastBioNER, ${r.layers} layers, as published`}>
          pub. {sign}
          {pct(published)} %
        </span>
      )}
    </>
  )
  return (
    <tr data-model-id={r.modelId} className={isTeacher ? 'is-reference' : ''}>
      <th scope="row">
        {r.name}
        {isTeacher && <span className="badge">reference</span>}
      </th>
      <td className="num">{r.layers}</td>
      <td className="num">{formatCount(r.parameters)}</td>
      <td className="num">{formatBytes(r.bytes)}</td>
      <td className="num">{pct(r.overall.precision)}</td>
      <td className="num">{pct(r.overall.recall)}</td>
      <td className="num strong">{pct(r.overall.f1)}</td>
      <td className="num">{r.medianMsPerDocument.toFixed(1)}</td>
      <td className="num">{Math.round(r.tokensPerSecond).toLocaleString('en-US')}</td>
      <td title={r.engineReason}>
        <span className="engine-cell">
          <DeviceBadge name={r.engine} />
          <code>{r.engine}</code>
        </span>
      </td>
      <td className="num group-start rel">{rel(r.f1Retention, pub?.f1Retention, '')}</td>
      <td className="num rel">{rel(r.sizeReduction, pub?.sizeReduction, '−')}</td>
      <td className="num rel">{rel(r.timeReduction, pub?.timeReduction, '−')}</td>
    </tr>
  )
}

/** Draws each point's name beside it (Chart.js has no data labels without a plugin). */
const pointNames: Plugin = {
  id: 'pointNames',
  afterDatasetsDraw(chart) {
    const { ctx } = chart
    ctx.save()
    ctx.font = `600 12px ${String(chart.options.font?.family ?? 'system-ui')}`
    ctx.textBaseline = 'middle'
    chart.data.datasets.forEach((ds, i) => {
      const { names, placement = 'right' } = ds as unknown as { names?: string[]; placement?: 'right' | 'above' | 'below' }
      if (!names || chart.getDatasetMeta(i).hidden) return
      chart.getDatasetMeta(i).data.forEach((el, j) => {
        const name = names[j]
        if (!name) return
        const r = ((el as unknown as { options?: { radius?: number } }).options?.radius ?? 4) + 4
        ctx.fillStyle = '#2b3138'
        if (placement === 'right') {
          ctx.textAlign = 'left'
          ctx.fillText(name, el.x + r, el.y)
        } else {
          ctx.textAlign = 'center'
          ctx.fillText(name, el.x, placement === 'above' ? el.y - r - 4 : el.y + r + 6)
        }
      })
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
          // Alternate so neighbouring names do not run into each other.
          placement: i % 2 === 0 ? 'below' : 'above',
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
            placement: 'above',
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
            placement: 'right',
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
          label: `${r.name} (${r.layers} layers)`,
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

