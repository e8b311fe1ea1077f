// The Compare tab: choose a reference and the models to measure against it, run the comparison,
// show the results table and charts.
import { useEffect, useId, useMemo, useState } from 'react'
import { api } from '../api'
import { notify } from '../toasts'
import { ComparisonCharts } from './ComparisonCharts'
import { ComparisonTable } from './ComparisonTable'
import { JobProgressBar } from './JobViews'
import { jobOfKind, runModelJob, useModelJob, useModels } from './store'

export function ComparePanel({ preset }: { preset: number[] | null }) {
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
                    {m.name} — {m.layers} layers{m.weights === 'int8' ? ' · int8' : ''}
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
                      {m.name} <span className="muted">({m.layers} × {m.hidden}{m.weights === 'int8' ? ' · int8' : ''})</span>
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
      {report && (
        <>
          <ComparisonTable report={report} />
          <ComparisonCharts rows={report.rows} />
        </>
      )}
    </div>
  )
}
