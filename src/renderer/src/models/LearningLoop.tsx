// The correction loop on the Retrain view: the "Auto-improve" switch (retrain in the background
// every N reviewed documents) and the learning curve (held-out F1 after each retrain against the
// documents reviewed). State from the learning store (main's learning:get / learning:changed).
import { useEffect, useId, useMemo, useState } from 'react'
import type { LearningLoopState } from '@shared/ipc'
import { LEARNING_LOOP } from '@shared/recipes'
import { plural } from '@shared/plural'
import { api, errorMessage, onEvent } from '../api'
import { notify } from '../toasts'
import { ChartCanvas } from './Chart'
import { learningCurveConfig } from './chart-lines'
import { DataTable, type ColumnHead } from '../components/DataTable'
import { updateLearning } from './learning-store'
import { pct } from './store'

export function AutoImproveCard({ loop }: { loop: LearningLoopState }) {
  const a = loop.autoImprove
  const everyId = useId()
  const hintId = useId()
  const [every, setEvery] = useState(String(a.every))
  const [saving, setSaving] = useState(false)
  const [progress, setProgress] = useState<string | null>(null)
  useEffect(() => setEvery(String(a.every)), [a.every])
  // The background job's own progress (its retrain, then its re-tagging), while it runs.
  useEffect(() => {
    setProgress(null)
    if (!a.jobId) return
    const jobId = a.jobId
    return onEvent('job:progress', (p) => {
      if (p.jobId.startsWith(jobId)) setProgress(p.message)
    })
  }, [a.jobId])

  const save = async (patch: { enabled?: boolean; every?: number }) => {
    setSaving(true)
    try {
      await updateLearning({ autoImprove: patch })
    } catch (e) {
      notify('error', `Cannot change Auto-improve: ${errorMessage(e)}`)
    } finally {
      setSaving(false)
    }
  }
  const commitEvery = () => {
    const n = Number(every)
    if (!Number.isInteger(n) || n < 1 || n > LEARNING_LOOP.autoImproveMaxEvery) {
      notify('warning', `Retrain every 1 to ${LEARNING_LOOP.autoImproveMaxEvery} reviewed documents.`)
      setEvery(String(a.every))
      return
    }
    if (n !== a.every) void save({ every: n })
  }

  const status = a.running
    ? `Retraining in the background now${a.queued ? `; ${a.every} more documents were reviewed meanwhile, so one more retrain follows it` : ''}. You can keep reviewing.`
    : a.queued
      ? 'Waiting for another model job to finish; then one retrain starts with everything reviewed by then.'
      : a.enabled
        ? `${plural(a.reviewedSince, 'document')} reviewed since the last automatic retrain; the next starts at ${a.every}.`
        : 'Off: retrain yourself with the form above.'

  return (
    <section className="card auto-improve" aria-labelledby="auto-improve-title" data-testid="auto-improve" data-enabled={a.enabled} data-running={a.running} data-queued={a.queued}>
      <div className="card-head">
        <h3 id="auto-improve-title">Auto-improve</h3>
        <label className="switch">
          <input
            type="checkbox"
            role="switch"
            checked={a.enabled}
            disabled={saving}
            aria-describedby={hintId}
            onChange={(e) => void save({ enabled: e.target.checked })}
            data-testid="auto-improve-switch"
          />
          <span>{a.enabled ? 'On' : 'Off'}</span>
        </label>
      </div>
      <p className="card-text" id={hintId}>
        Retrains the active model in the background after every N documents you review, starting from the current model, and measures it on
        the held-out documents: the new model replaces it only when it scores at least as well there, then the unreviewed documents are tagged
        again. One automatic retrain at a time: documents reviewed while one runs are coalesced into one more retrain after it, never several.
      </p>
      <div className="form-row narrow">
        <label htmlFor={everyId}>Retrain every N reviewed documents</label>
        <input
          id={everyId}
          type="number"
          min={1}
          max={LEARNING_LOOP.autoImproveMaxEvery}
          step={1}
          value={every}
          disabled={saving}
          onChange={(e) => setEvery(e.target.value)}
          onBlur={commitEvery}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault()
              commitEvery()
            }
          }}
          data-testid="auto-improve-every"
        />
      </div>
      <p className="auto-improve-status" role="status" data-testid="auto-improve-status">
        {status}
      </p>
      {a.running && progress && (
        <p className="muted" data-testid="auto-improve-progress">
          {progress}
        </p>
      )}
      {a.running && a.jobId && (
        <button type="button" className="btn small" onClick={() => void api.cancelJob(a.jobId!).catch(() => undefined)} data-testid="auto-improve-cancel">
          Cancel the automatic retrain
        </button>
      )}
      {a.lastOutcome && (
        <p className="muted" data-testid="auto-improve-outcome">
          Last: {a.lastOutcome}
        </p>
      )}
    </section>
  )
}

const CURVE_COLUMNS: ColumnHead[] = [['#'], ['Reviewed', 'num'], ['Held out', 'num'], ['F1 before', 'num'], ['F1 after', 'num'], ['By']]

export function LearningCurveCard({ loop }: { loop: LearningLoopState }) {
  const points = loop.curve
  const config = useMemo(() => learningCurveConfig(points), [points])
  const { documents: held, reviewed } = loop.heldOut
  const last = points[points.length - 1]
  const summary = last
    ? `Learning curve: ${plural(points.length, 'retrain')}; latest held-out F1 ${pct(last.f1After)} % after ${last.reviewed} reviewed documents.`
    : 'Learning curve: no retrain has finished yet.'
  return (
    <section className="card learning-curve" aria-labelledby="learning-curve-title" data-testid="learning-curve" data-points={points.length}>
      <div className="card-head">
        <h3 id="learning-curve-title">Learning curve</h3>
        <span className="muted">F1 on held-out reviewed documents after each retrain</span>
      </div>
      <p className="card-text" data-testid="held-out-note">
        {reviewed < 2
          ? `Held out: none yet. Once you have reviewed a few documents, about one in ${LEARNING_LOOP.heldOutEvery} (at least ${LEARNING_LOOP.minHeldOut}) is held out: never trained on, it measures every retrain.`
          : `${plural(held, 'reviewed document')} of ${reviewed} ${held === 1 ? 'is' : 'are'} held out (about one in ${LEARNING_LOOP.heldOutEvery}, at least ${LEARNING_LOOP.minHeldOut}, always the same ones): retraining never trains on them, and every point below is measured on them.`}
      </p>
      {points.length === 0 ? (
        <p className="muted card-empty">A point appears here after each retrain finishes (yours or Auto-improve&apos;s).</p>
      ) : (
        <figure className="curve">
          <div className="curve-chart learning-chart">
            <ChartCanvas config={config} label={summary} testId="learning-chart" />
          </div>
          <figcaption className="muted small-print">
            <span className="visually-hidden">{summary} </span>● a retrain you started, ▲ one Auto-improve started. F1 in %.
          </figcaption>
          <DataTable name="learning-table" testId="learning-table" columns={CURVE_COLUMNS}>
            {points.map((p, i) => (
              <tr key={p.id} data-reviewed={p.reviewed} data-f1={p.f1After.toFixed(4)}>
                <th scope="row">{i + 1}</th>
                <td className="num">{p.reviewed}</td>
                <td className="num">{p.heldOut}</td>
                <td className="num">{pct(p.f1Before)}</td>
                <td className="num">{pct(p.f1After)}</td>
                <td>{p.trigger === 'auto' ? 'Auto' : 'you'}</td>
              </tr>
            ))}
          </DataTable>
        </figure>
      )}
    </section>
  )
}
