// Progress of the model job (bar, ETA, Cancel) and the live training curve.
import { useMemo } from 'react'
import { ChartCanvas } from './Chart'
import { curveEvalValue, trainingCurveConfig } from './chart-lines'
import { cancelModelJob, dismissFinishedJob, formatEta, type ModelJob } from './store'

const KIND_VERB: Record<ModelJob['kind'], string> = {
  tag: 'Tagging',
  train: 'Training',
  retrain: 'Retraining',
  distill: 'Distilling',
  compare: 'Measuring',
  adapt: 'Adapting',
}

export function jobPercent(job: ModelJob): number | null {
  return job.total > 0 ? Math.min(100, Math.round((job.done / job.total) * 100)) : null
}

/** The bar with its text, ETA and Cancel. `compact` is the header's version. */
export function JobProgressBar({ job, compact = false, testId }: { job: ModelJob; compact?: boolean; testId?: string }) {
  const pct = jobPercent(job)
  const eta = formatEta(job.etaSeconds)
  const state =
    job.finished === 'done' ? 'Finished' : job.finished === 'cancelled' ? 'Cancelled' : job.finished === 'failed' ? 'Failed' : null
  return (
    <div
      className={`job model-job${compact ? ' compact' : ''}${job.finished ? ` is-${job.finished}` : ''}`}
      data-testid={testId ?? 'model-job'}
      data-kind={job.kind}
      data-state={job.finished ?? 'running'}
    >
      <div className="job-text">
        <span className="job-label" title={job.message}>
          <strong>{job.label}</strong>
          {!compact && job.message && !state ? <span className="muted"> · {job.message}</span> : null}
          {state ? <span className="muted"> · {state}</span> : null}
        </span>
        <span className="job-pct">
          {pct !== null && !state ? `${pct}%` : ''}
          {eta && !state ? <span className="job-eta"> · {compact ? eta.replace(/^about /, '') : eta}</span> : null}
        </span>
      </div>
      <progress
        max={job.total || 1}
        value={state ? job.total || 1 : job.total ? job.done : undefined}
        aria-label={`${KIND_VERB[job.kind]} progress`}
        aria-valuetext={pct !== null ? `${pct}%${eta ? `, ${eta}` : ''}` : 'starting'}
      />
      {!job.finished ? (
        <button type="button" className="btn small" onClick={() => void cancelModelJob()} disabled={job.cancelling}>
          {job.cancelling ? 'Cancelling…' : 'Cancel'}
        </button>
      ) : (
        !compact && (
          <button type="button" className="btn small" onClick={dismissFinishedJob} title="Hide this progress and its curve" data-action="dismiss-job">
            Hide
          </button>
        )
      )}
    </div>
  )
}

/**
 * Loss per step (left axis) and devel F1 per epoch (right axis, %). One line per model when the
 * job trains several (distillation into several depths). Adapting a model (masked-LM
 * pretraining) has no entity scores: its epochs show the held-out masked-word accuracy instead.
 */
export function TrainingCurve({ job, height = 260 }: { job: ModelJob; height?: number }) {
  const mlm = job.kind === 'adapt'
  const evalName = mlm ? 'Held-out masked-word accuracy' : 'Devel F1'
  const evalValue = (p: ModelJob['evals'][number]) => curveEvalValue(p, mlm)
  const config = useMemo(
    () => trainingCurveConfig({ curve: job.curve, evals: job.evals, totalSteps: job.totalSteps, mlm }),
    [job.curve, job.evals, job.totalSteps, mlm],
  )

  const last = job.curve[job.curve.length - 1]
  const lastEval = job.evals[job.evals.length - 1]
  const summary = last
    ? `Training curve: ${job.curve.length} steps, latest loss ${last.loss.toFixed(3)}${lastEval ? `, ${evalName.toLowerCase()} ${evalValue(lastEval).toFixed(1)}% after epoch ${lastEval.epoch}` : ''}.`
    : 'Training curve: waiting for the first step.'

  return (
    <figure className="curve" data-testid="training-curve" data-steps={job.curve.length} data-evals={job.evals.length}>
      <div className="curve-stats" aria-live="off">
        <Stat label="Step" value={last ? `${last.step}${job.totalSteps ? ` / ${job.totalSteps}` : ''}` : '–'} />
        <Stat label="Epoch" value={job.epoch ? String(job.epoch) : '–'} />
        <Stat label="Loss" value={last ? last.loss.toFixed(3) : '–'} />
        {mlm ? (
          <Stat label="Masked-word acc." value={lastEval?.maskedAccuracy !== undefined ? `${(lastEval.maskedAccuracy * 100).toFixed(1)}%` : '–'} testId="curve-masked-accuracy" />
        ) : (
          <Stat label="Devel F1" value={lastEval?.devF1 !== undefined ? `${(lastEval.devF1 * 100).toFixed(1)}%` : '–'} testId="curve-dev-f1" />
        )}
        <Stat label="Tokens/s" value={job.tokensPerSecond ? Math.round(job.tokensPerSecond).toLocaleString('en-US') : '–'} />
      </div>
      <div className="curve-chart" style={{ height }}>
        <ChartCanvas config={config} label={summary} testId="loss-chart" />
      </div>
      <figcaption className="visually-hidden">{summary}</figcaption>
    </figure>
  )
}

function Stat({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <div className="stat">
      <span className="stat-label">{label}</span>
      <span className="stat-value" data-testid={testId}>
        {value}
      </span>
    </div>
  )
}

/** A running (or just finished) job under its form: the bar and the live curve. */
export function JobPanel({ job, testId }: { job: ModelJob; testId: string }) {
  return (
    <div className="job-panel" data-testid={testId}>
      <JobProgressBar job={job} />
      <TrainingCurve job={job} height={220} />
    </div>
  )
}
