// "Get a model from Hugging Face…": a repo id (and revision) → the files and sizes from the Hub's
// model info and the free space → download into the Hugging Face cache with progress and cancel
// (an interrupted download is resumed by the next one) → the snapshot imported as "Import HF
// folder…" does. The only place the app touches the network, and only on the person's click.
// The download's state lives in this module, so it goes on when the dialog is closed.
import { useId, useState, useSyncExternalStore } from 'react'
import type { HubDownloadResult, HubPlanInfo } from '@shared/ipc'
import { api, call, errorMessage, isApiError, newJobId, onEvent } from '../api'
import { notify } from '../toasts'
import { Modal } from '../components/Modal'
import { DataTable, type ColumnHead } from '../components/DataTable'
import { formatBytes, refreshModels } from './store'

export interface HubDownload {
  jobId: string
  repoId: string
  done: number
  total: number
  message: string
  state: 'running' | 'done' | 'cancelled' | 'failed'
  cancelling: boolean
  error: string | null
  result: HubDownloadResult | null
}

let current: HubDownload | null = null
const listeners = new Set<() => void>()
function set(next: HubDownload | null): void {
  current = next
  for (const l of [...listeners]) l()
}
const subscribe = (l: () => void) => {
  listeners.add(l)
  return () => listeners.delete(l)
}

/** The running (or last) download, for the dialog and the registry card. */
export function useHubDownload(): HubDownload | null {
  return useSyncExternalStore(subscribe, () => current)
}

let subscribed = false
function followProgress(): void {
  if (subscribed) return
  subscribed = true
  onEvent('job:progress', (p) => {
    if (!current || current.jobId !== p.jobId || current.state !== 'running') return
    set({ ...current, done: p.done, total: p.total, message: p.message })
  })
}

async function startDownload(repoId: string, revision: string | undefined): Promise<void> {
  if (current?.state === 'running') return
  followProgress()
  const jobId = newJobId()
  set({ jobId, repoId, done: 0, total: 0, message: 'Asking the Hub…', state: 'running', cancelling: false, error: null, result: null })
  try {
    const result = await call('models:hubDownload', { jobId, repoId, ...(revision ? { revision } : {}) })
    set({ ...current!, state: result.cancelled ? 'cancelled' : 'done', result, cancelling: false })
    if (result.model) {
      await refreshModels()
      const notes = result.model.notes ?? []
      notify('success', `Downloaded and imported ${result.model.name} (${result.model.layers} layers × ${result.model.hidden}).${notes.length ? ` ${notes.join(' ')}` : ''}`)
    }
  } catch (e) {
    const cancelled = isApiError(e) && e.code === 'cancelled'
    set({ ...current!, state: cancelled ? 'cancelled' : 'failed', error: errorMessage(e), cancelling: false })
  }
}

async function cancelDownload(): Promise<void> {
  if (!current || current.state !== 'running') return
  set({ ...current, cancelling: true, message: 'Cancelling…' })
  try {
    await api.cancelJob(current.jobId)
  } catch (e) {
    notify('error', `Cannot cancel: ${errorMessage(e)}`)
  }
}

const FILE_COLUMNS: ColumnHead[] = [['File'], ['Size', 'num'], ['On this computer']]

function fileState(f: HubPlanInfo['files'][number]): string {
  if (f.state === 'cached') return 'already in the cache'
  if (f.state === 'partial') return `${formatBytes(f.partialBytes)} here from an interrupted download: resumed`
  return 'to download'
}

function PlanView({ plan }: { plan: HubPlanInfo }) {
  const enough = plan.downloadBytes <= plan.freeBytes
  return (
    <div className="hub-plan" data-testid="hub-plan">
      <p className="card-text">
        <strong>{plan.repoId}</strong> at <code>{plan.revision}</code> (commit <code>{plan.commit.slice(0, 10)}</code>) on {plan.endpoint}: only the files a
        tagger needs.
      </p>
      <DataTable name="hub-files" testId="hub-files" columns={FILE_COLUMNS}>
        {plan.files.map((f) => (
          <tr key={f.name} data-file={f.name} data-state={f.state}>
            <td>
              <code>{f.name}</code>
            </td>
            <td className="num">{formatBytes(f.size)}</td>
            <td>{fileState(f)}</td>
          </tr>
        ))}
      </DataTable>
      <p className="card-text" data-testid="hub-sizes">
        Total <strong>{formatBytes(plan.totalBytes)}</strong>; to download <strong data-testid="hub-download-bytes">{formatBytes(plan.downloadBytes)}</strong>.{' '}
        {formatBytes(plan.freeBytes)} free in the Hugging Face cache (<code>{plan.cacheDir}</code>), which <em>transformers</em> shares.
      </p>
      {!enough && (
        <p className="form-error" role="alert">
          Not enough free space: {formatBytes(plan.downloadBytes)} needed, {formatBytes(plan.freeBytes)} free. Free some space first.
        </p>
      )}
    </div>
  )
}

function DownloadView({ d }: { d: HubDownload }) {
  const pct = d.total > 0 ? Math.min(100, Math.floor((100 * d.done) / d.total)) : null
  const state = d.state === 'done' ? 'Finished' : d.state === 'cancelled' ? 'Cancelled' : d.state === 'failed' ? 'Failed' : null
  return (
    <div className={`job model-job is-${d.state}`} data-testid="hub-download" data-state={d.state}>
      <div className="job-text">
        <span className="job-label">
          <strong>Getting {d.repoId}</strong>
          {d.message && !state ? <span className="muted"> · {d.message}</span> : null}
          {state ? <span className="muted"> · {state}</span> : null}
        </span>
        <span className="job-pct">{pct !== null && !state ? `${pct}%` : ''}</span>
      </div>
      <progress
        max={d.total || 1}
        value={state ? d.total || 1 : d.total ? d.done : undefined}
        aria-label="Download progress"
        aria-valuetext={pct !== null ? `${pct}%` : 'starting'}
      />
      {d.state === 'running' && (
        <button type="button" className="btn small" onClick={() => void cancelDownload()} disabled={d.cancelling} data-testid="hub-cancel">
          Cancel download
        </button>
      )}
      {d.state === 'done' && d.result?.model && (
        <p className="job-result" data-testid="hub-result">
          Imported as <strong>{d.result.model.name}</strong>
          {d.result.downloadedBytes ? ` (${formatBytes(d.result.downloadedBytes)} downloaded)` : ' (already in the cache: nothing downloaded)'}.
        </p>
      )}
      {d.state === 'cancelled' && (
        <p className="card-text" data-testid="hub-cancelled">
          Cancelled: no model was added. What has arrived is kept in the Hugging Face cache; downloading {d.repoId} again resumes it.
        </p>
      )}
      {d.state === 'failed' && d.error && (
        <p className="form-error" role="alert" data-testid="hub-error">
          {d.error}
        </p>
      )}
    </div>
  )
}

export function GetModelDialog({ onClose }: { onClose: () => void }) {
  const download = useHubDownload()
  const [repoId, setRepoId] = useState(download?.repoId ?? '')
  const [revision, setRevision] = useState('')
  const [plan, setPlan] = useState<HubPlanInfo | null>(null)
  const [asking, setAsking] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const repoField = useId()
  const revisionField = useId()
  const running = download?.state === 'running'
  const id = repoId.trim()
  const rev = revision.trim() || undefined

  const check = async () => {
    if (!id) return
    setAsking(true)
    setError(null)
    setPlan(null)
    try {
      setPlan(await call('models:hubPlan', { repoId: id, ...(rev ? { revision: rev } : {}) }))
    } catch (e) {
      setError(errorMessage(e))
    } finally {
      setAsking(false)
    }
  }
  const planFits = plan !== null && plan.repoId === id && plan.downloadBytes <= plan.freeBytes

  return (
    <Modal title="Get a model from Hugging Face" onClose={onClose} testId="get-model-dialog" className="get-model-dialog">
      <form
        className="form"
        onSubmit={(e) => {
          e.preventDefault()
          void check()
        }}
      >
        <p className="card-text" data-testid="offline-note">
          FastBioNER works offline. It connects to the Hugging Face Hub only when you press <em>Check size</em> or <em>Download and import</em> here,
          and then only to fetch this model's files.
        </p>
        <div className="form-grid">
          <div className="form-row">
          <label htmlFor={repoField}>Repository id</label>
          <input
            id={repoField}
            type="text"
            value={repoId}
            placeholder="dmis-lab/biobert-base-cased-v1.2"
            spellCheck={false}
            autoComplete="off"
            onChange={(e) => {
              setRepoId(e.target.value)
              setPlan(null)
              setError(null)
            }}
            disabled={running}
            data-testid="hub-repo-id"
          />
          </div>
          <div className="form-row">
          <label htmlFor={revisionField}>Revision (optional)</label>
          <input
            id={revisionField}
            type="text"
            value={revision}
            placeholder="main"
            spellCheck={false}
            autoComplete="off"
            onChange={(e) => {
              setRevision(e.target.value)
              setPlan(null)
            }}
            disabled={running}
            data-testid="hub-revision"
          />
          </div>
        </div>
        <p className="muted small-print">
          Only config.json, the tokenizer files and the weights (model.safetensors or pytorch_model.bin) are fetched, into the Hugging Face cache, and
          each file is checked against the checksum the Hub lists. A gated model needs its conditions accepted on the Hub and FastBioNER started with
          HF_TOKEN set.
        </p>
        {error && (
          <p className="form-error" role="alert" data-testid="hub-plan-error">
            {error}
          </p>
        )}
        {plan && <PlanView plan={plan} />}
        {download && download.repoId === id && <DownloadView d={download} />}
        <div className="form-actions">
          <button type="button" className="btn" onClick={onClose}>
            Close
          </button>
          <button type="submit" className={`btn ${plan ? '' : 'primary'}`} disabled={!id || asking || running} data-testid="hub-check">
            {asking ? 'Asking the Hub…' : 'Check size'}
          </button>
          <button
            type="button"
            className={`btn ${plan ? 'primary' : ''}`}
            disabled={!planFits || running}
            onClick={() => void startDownload(id, rev)}
            data-testid="hub-download-start"
          >
            Download and import
          </button>
        </div>
      </form>
    </Modal>
  )
}
