// "Retrain with my corrections": fine-tunes a base model on the reviewed documents, shows the
// loss curve live, then a before → after comparison on held-out documents. The base model stays
// active until the person keeps the new one.
import { useEffect, useId, useState } from 'react'
import type { ModelInfo, RetrainResult, Scores } from '@shared/ipc'
import { FORM_DEFAULTS, RETRAIN_RECIPE } from '@shared/recipes'
import { api, errorMessage } from '../api'
import { notify } from '../toasts'
import { colourClass } from '../palette'
import { DataTable, type ColumnHead } from '../components/DataTable'
import { JobProgressBar, TrainingCurve } from './JobViews'
import { EpochsField, FormActions } from './FormParts'
import { ViewFrame } from './ViewFrame'
import { AutoImproveCard, LearningCurveCard } from './LearningLoop'
import { refreshLearning, useLearning } from './learning-store'
import { activeModel, clearResult, jobOfKind, pct, refreshModels, runModelJob, useModelJob, useModels } from './store'
import { basename } from '../basename'

export function RetrainView() {
  const { models } = useModels()
  const { job, results } = useModelJob()
  const usable = models.filter((m) => !m.candidate)
  const active = activeModel(models)
  const [baseId, setBaseId] = useState<number | null>(null)
  const [epochs, setEpochs] = useState<number>(FORM_DEFAULTS.retrainEpochs)
  const [extra, setExtra] = useState<string[]>([])
  const [deciding, setDeciding] = useState(false)
  const [reviewed, setReviewed] = useState<number | null>(null)
  const baseSel = useId()
  const { state: loop } = useLearning()
  const running = !!job && !job.finished
  const retrainJob = jobOfKind(job, 'retrain')
  const result = results.retrain

  useEffect(() => {
    void refreshModels()
  }, [])
  // Retraining learns from reviewed documents only (done or in progress).
  useEffect(() => {
    let alive = true
    api
      .listDocuments({ limit: 1 })
      .then((r) => alive && setReviewed(r.counts.byStatus.done + r.counts.byStatus.in_progress))
      .catch(() => undefined)
    void refreshLearning()
    return () => {
      alive = false
    }
  }, [result])
  useEffect(() => {
    if (baseId === null || !usable.some((m) => m.id === baseId)) setBaseId(active?.id ?? usable[0]?.id ?? null)
  }, [usable, active, baseId])

  const base = usable.find((m) => m.id === baseId) ?? null

  const addFiles = async () => {
    try {
      const { paths } = await api.chooseCorpusFiles()
      if (paths.length) setExtra((x) => [...new Set([...x, ...paths])].slice(0, 20))
    } catch (e) {
      notify('error', `Cannot open the file chooser: ${errorMessage(e)}`)
    }
  }

  const start = async () => {
    if (!base) return
    clearResult('retrain')
    const r = await runModelJob('retrain', `Retraining ${base.name}`, (jobId) =>
      api.retrain({
        jobId,
        baseModelId: base.id,
        epochs,
        ...(extra.length ? { extraCorpusPaths: extra } : {}),
      }),
    )
    await refreshModels()
    // The files chosen were read by this run (a file dialog's answer is good for one use).
    if (r) setExtra([])
    if (r?.cancelled) notify('warning', 'Retraining cancelled. The current model stays active.')
    else if (r?.candidate) notify('success', 'Retraining finished. Compare before and after, then keep or discard the new model.')
  }

  const decide = async (keep: boolean, other?: ModelInfo) => {
    const candidate = other ?? result?.candidate
    if (!candidate) return
    setDeciding(true)
    try {
      const r = await api.decideRetrain(candidate.id, keep)
      await refreshModels()
      if (!other || other.id === result?.candidate?.id) clearResult('retrain')
      // The next retrain starts from the model now active, not from the one it superseded.
      if (keep) setBaseId(r.model?.id ?? candidate.id)
      notify(
        'success',
        keep ? `Kept ${r.model?.name ?? candidate.name}: it is now the active model.` : `Discarded ${candidate.name}. ${active ? `${active.name} stays active.` : 'No model is active.'}`,
      )
    } catch (e) {
      notify('error', `Could not ${keep ? 'keep' : 'discard'} the new model: ${errorMessage(e)}`)
    } finally {
      setDeciding(false)
    }
  }

  const baseOf = (id: number): ModelInfo | undefined => models.find((m) => m.id === id)

  return (
    <ViewFrame
      name="retrain-view"
      title="Retrain with my corrections"
      intro="Fine-tunes a model on the documents you have reviewed (marked done, or in progress), with your corrections and accepted suggestions. A fixed part of them is held out to measure the model before and after, and is never trained on. The current model stays active until you choose."
    >
      <div className="retrain-grid">
        <form
          className="card retrain-form"
          onSubmit={(e) => {
            e.preventDefault()
            void start()
          }}
          data-testid="retrain-form"
        >
          <div className="card-head">
            <h3>Settings</h3>
          </div>
          {usable.length === 0 ? (
            <p className="muted">No model to start from. Train or import one in Models first.</p>
          ) : (
            <>
              <div className="form-row">
                <label htmlFor={baseSel}>Base model</label>
                <select id={baseSel} value={baseId ?? ''} onChange={(e) => setBaseId(Number(e.target.value))} data-testid="retrain-base">
                  {usable.map((m) => (
                    <option key={m.id} value={m.id}>
                      {m.name}
                      {m.active ? ' (active)' : ''} · {m.layers}×{m.hidden}
                      {m.devScores ? ` · F1 ${pct(m.devScores.f1)}` : ''}
                    </option>
                  ))}
                </select>
              </div>
              <EpochsField max={50} value={epochs} onChange={setEpochs} testId="retrain-epochs" />
              <p className="muted small-print">At most {RETRAIN_RECIPE.maxSteps} training steps however many documents are reviewed, so that a retrain takes about a minute.</p>
              <div className="form-row">
                <span className="label-like">Extra training corpora (optional)</span>
                {extra.length > 0 && (
                  <ul className="file-list">
                    {extra.map((p) => (
                      <li key={p}>
                        <span title={p}>{basename(p)}</span>
                        <button type="button" className="icon-close small" aria-label={`Remove ${basename(p)}`} onClick={() => setExtra((x) => x.filter((y) => y !== p))}>
                          ×
                        </button>
                      </li>
                    ))}
                  </ul>
                )}
                <div>
                  <button type="button" className="btn small" onClick={() => void addFiles()}>
                    Add corpus files…
                  </button>{' '}
                  <span className="muted">read by one retrain; add them again for the next</span>
                </div>
              </div>
              <p className={`reviewed-count${reviewed !== null && reviewed < 2 ? ' is-short' : ''}`} data-testid="reviewed-count">
                {reviewed === null
                  ? ' '
                  : reviewed < 2
                    ? `You have reviewed ${reviewed} document${reviewed === 1 ? '' : 's'}; at least 2 are needed (one part trains, the other measures).`
                    : `${reviewed} reviewed documents: ${loop && loop.heldOut.reviewed === reviewed ? loop.heldOut.documents : 'some'} held out for measuring (never trained on), the rest for training.`}
              </p>
              <FormActions disabled={!base || running || (reviewed !== null && reviewed < 2)} testId="start-retrain">
                Retrain {base ? base.name : ''}
              </FormActions>
            </>
          )}
        </form>

        <section className="card retrain-live" aria-labelledby="retrain-live-title">
          <div className="card-head">
            <h3 id="retrain-live-title">Training</h3>
          </div>
          {retrainJob ? (
            <>
              <JobProgressBar job={retrainJob} testId="retrain-progress" />
              <TrainingCurve job={retrainJob} />
            </>
          ) : (
            <p className="muted card-empty">The loss curve and the devel F1 of every epoch appear here while the model trains.</p>
          )}
        </section>
      </div>

      {result && !result.cancelled && result.after && (
        <BeforeAfter
          result={result}
          baseName={baseOf(result.baseModelId)?.name ?? 'the base model'}
          activeName={active?.name ?? null}
          onDecide={decide}
          deciding={deciding}
        />
      )}
      {/* Candidates from an earlier session (the window was closed before deciding). */}
      {models
        .filter((m) => m.candidate && m.id !== result?.candidate?.id)
        .map((m) => (
          <section key={m.id} className="card before-after" data-testid="pending-candidate">
            <div className="card-head">
              <h3>{m.name} is waiting for your decision</h3>
              <span className="muted">{m.parentId !== null ? `retrained from ${baseOf(m.parentId)?.name ?? 'a model'}` : ''}</span>
            </div>
            <p className="card-text">{m.trainingSummary ?? 'A retrained model.'}</p>
            <div className="decide">
              <p>
                Until you choose, <strong>{active?.name ?? 'the current model'}</strong> stays active.
              </p>
              <div className="row">
                <button type="button" className="btn" onClick={() => void decide(false, m)} disabled={deciding}>
                  Discard
                </button>
                <button type="button" className="btn primary" onClick={() => void decide(true, m)} disabled={deciding}>
                  Keep new model
                </button>
              </div>
            </div>
          </section>
        ))}

      {/* After the run's own result: the loop over every retrain, and the switch that runs it by itself. */}
      {loop && (
        <div className="learning-grid">
          <LearningCurveCard loop={loop} />
          <AutoImproveCard loop={loop} />
        </div>
      )}
    </ViewFrame>
  )
}

function Delta({ before, after, testId }: { before: number; after: number; testId?: string }) {
  const d = (after - before) * 100
  const dir = Math.abs(d) < 0.05 ? 'same' : d > 0 ? 'up' : 'down'
  return (
    <span className={`delta delta-${dir}`} data-testid={testId} data-delta={d.toFixed(1)}>
      <span aria-hidden="true">{dir === 'up' ? '▲' : dir === 'down' ? '▼' : '●'}</span>
      {dir === 'same' ? ' no change' : ` ${d > 0 ? '+' : '−'}${Math.abs(d).toFixed(1)}`}
      <span className="visually-hidden">{dir === 'up' ? ' better' : dir === 'down' ? ' worse' : ''} percentage points</span>
    </span>
  )
}

const METRICS: Array<[keyof Scores, string]> = [
  ['precision', 'Precision'],
  ['recall', 'Recall'],
  ['f1', 'F1'],
]
const PER_TYPE_COLUMNS: ColumnHead[] = [['Entity type'], ...METRICS.map(([, label]): ColumnHead => [`${label} before → after`, 'num'])]

function BeforeAfter({
  result,
  baseName,
  activeName,
  onDecide,
  deciding,
}: {
  result: RetrainResult
  baseName: string
  /** The model active now (the base may be another one). */
  activeName: string | null
  onDecide: (keep: boolean) => void
  deciding: boolean
}) {
  const after = result.after!
  const before = result.before
  const types = [...new Set([...Object.keys(before.types), ...Object.keys(after.types)])].sort()
  const change = Math.abs(after.f1 - before.f1) < 0.0005 ? 'same' : after.f1 > before.f1 ? 'better' : 'worse'
  return (
    <section className="card before-after" aria-labelledby="ba-title" data-testid="before-after">
      <div className="card-head">
        <h3 id="ba-title">
          Before → after, on {result.heldOutDocuments} held-out document{result.heldOutDocuments === 1 ? '' : 's'}
        </h3>
        <span className="muted">
          Trained on {result.trainDocuments} document{result.trainDocuments === 1 ? '' : 's'}
        </span>
      </div>
      {result.notes.length > 0 && (
        <ul className="notes">
          {result.notes.map((n) => (
            <li key={n}>{n}</li>
          ))}
        </ul>
      )}
      <div className="score-cards">
        {METRICS.map(([k, label]) => (
          <div key={k} className={`score-card${k === 'f1' ? ' is-main' : ''}`} data-metric={k}>
            <span className="score-label">{label}</span>
            <span className="score-values">
              <span className="score-before">{pct(before[k])}</span>
              <span className="arrow" aria-label="to">
                →
              </span>
              <span className="score-after">{pct(after[k])}</span>
            </span>
            <Delta before={before[k]} after={after[k]} testId={`delta-${k}`} />
          </div>
        ))}
      </div>
      {types.length > 0 && (
        <DataTable name="per-type" testId="per-type-table" columns={PER_TYPE_COLUMNS}>
          {types.map((t) => {
            const b = before.types[t]
            const a = after.types[t]
            return (
              <tr key={t}>
                <th scope="row">
                  <span className={`swatch ${colourClass(t)}`} aria-hidden="true" /> {t}
                </th>
                {METRICS.map(([k]) => (
                  <td key={k} className="num">
                    {pct(b?.[k])} → {pct(a?.[k])} {b && a ? <Delta before={b[k]} after={a[k]} /> : <span className="muted">new</span>}
                  </td>
                ))}
              </tr>
            )
          })}
        </DataTable>
      )}
      <div className="decide">
        <p>
          {change === 'better' ? (
            <>
              The new model scores <strong>better</strong> on the held-out documents.
            </>
          ) : change === 'same' ? (
            <>The new model scores the same F1 on the held-out documents.</>
          ) : (
            <>
              The new model scores <strong>worse</strong> on the held-out documents; discarding it keeps {baseName}.
            </>
          )}{' '}
          {activeName ? (
            <>
              Until you choose, <strong>{activeName}</strong> stays active.
            </>
          ) : (
            <>No model is active until you choose.</>
          )}
        </p>
        <div className="row">
          <button type="button" className="btn" onClick={() => onDecide(false)} disabled={deciding} data-testid="discard-model">
            Discard
          </button>
          <button type="button" className="btn primary" onClick={() => onDecide(true)} disabled={deciding} data-testid="keep-model">
            Keep new model
          </button>
        </div>
      </div>
    </section>
  )
}
