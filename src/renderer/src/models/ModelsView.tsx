// The "Models" view: which engine runs where, the model registry (set active, import, delete,
// train a new one), tagging documents with the active model, and accepting suggestions across
// the workspace.
import { Fragment, useEffect, useId, useState } from 'react'
import type { EngineInfo, ModelInfo } from '@shared/ipc'
import { api, errorMessage } from '../api'
import { notify } from '../toasts'
import { Modal } from '../components/Modal'
import { JobProgressBar, TrainingCurve } from './JobViews'
import {
  activeModel,
  deviceClass,
  formatBytes,
  formatCount,
  formatDate,
  jobOfKind,
  pct,
  refreshModels,
  runModelJob,
  useModelJob,
  useModels,
} from './store'

/**
 * The presets models:train accepts. A copy of MODEL_PRESETS in @shared/ipc: importing a value from
 * that module would bundle zod (and its eval-probing JIT) into the renderer. test/e2e/presets.test.ts
 * keeps the two equal.
 */
export const RENDERER_PRESETS: ReadonlyArray<{ name: string; layers: number; hidden: number; description: string }> = [
  { name: 'cpu-tiny', layers: 2, hidden: 128, description: 'quick experiments: trains in seconds per epoch' },
  { name: 'cpu-small', layers: 4, hidden: 256, description: 'default: trains in minutes per epoch on a laptop' },
  { name: 'cpu-medium', layers: 6, hidden: 384, description: 'best accuracy that still trains overnight on a laptop' },
  { name: 'bert-base', layers: 12, hidden: 768, description: 'BERT-base shape: needs a GPU (tensorflow-gpu backend)' },
]

const PRESETS = RENDERER_PRESETS.map((p) => ({
  name: p.name,
  shape: `${p.layers} × ${p.hidden}`,
  description: p.description.charAt(0).toUpperCase() + p.description.slice(1) + '.',
}))

export type TagScope = 'document' | 'selected' | 'filtered' | 'workspace'

interface Props {
  /** Documents selected in the list, and how many the list's filters match. */
  selectedCount: number
  filteredCount: number
  currentDocument: string | null
  onTag: (scope: TagScope) => void
  /** After suggestions were accepted outside the editor. */
  onWorkspaceChanged: () => void
  onOpenRetrain: () => void
}

export function ModelsView(props: Props) {
  const { models, engine, loaded, error } = useModels()
  const { job, results } = useModelJob()
  const [training, setTraining] = useState(false)
  const [confirmDelete, setConfirmDelete] = useState<ModelInfo | null>(null)
  const active = activeModel(models)
  const running = !!job && !job.finished
  const trainJob = jobOfKind(job, 'train')
  const tagJob = jobOfKind(job, 'tag')

  useEffect(() => {
    void refreshModels()
  }, [])

  const setActive = async (m: ModelInfo) => {
    try {
      await api.setActiveModel(m.id)
      await refreshModels()
      notify('success', `${m.name} is now the active model: tagging uses it.`)
    } catch (e) {
      notify('error', `Could not make ${m.name} active: ${errorMessage(e)}`)
    }
  }

  const importFolder = async () => {
    try {
      const { path } = await api.chooseModelFolder()
      if (!path) return
      notify('info', `Importing the model in ${path}…`, 'model-import')
      const m = await api.importModel({ path })
      await refreshModels()
      const notes = m.notes ?? []
      notify('success', `Imported ${m.name} (${m.layers} layers × ${m.hidden}).${notes.length ? ` ${notes.join(' ')}` : ''}`, 'model-import')
    } catch (e) {
      notify('error', `Could not import the model: ${errorMessage(e)}`, 'model-import')
    }
  }

  const remove = async (m: ModelInfo) => {
    setConfirmDelete(null)
    try {
      await api.deleteModel(m.id)
      await refreshModels()
      notify('success', `Deleted ${m.name}.`)
    } catch (e) {
      notify('error', `Could not delete ${m.name}: ${errorMessage(e)}`)
    }
  }

  return (
    <div className="view models-view" data-testid="models-view">
      <div className="view-inner">
        <header className="view-head">
          <div>
            <h2>Models</h2>
            <p className="muted">
              Everything runs on this computer. The active model tags documents; its suggestions appear dashed in the text until you accept or
              reject them.
            </p>
          </div>
        </header>

        <EngineCard engine={engine} />

        <section className="card" aria-labelledby="registry-title">
          <div className="card-head">
            <h3 id="registry-title">Model registry</h3>
            <div className="row">
              <button type="button" className="btn" onClick={() => void importFolder()} data-testid="import-model">
                Import HF folder…
              </button>
              <button
                type="button"
                className={`btn ${models.length === 0 ? 'primary' : ''}`}
                onClick={() => setTraining((v) => !v)}
                aria-expanded={training}
                data-testid="train-new"
              >
                Train new model…
              </button>
            </div>
          </div>
          {error && <p className="form-error">Cannot read the models: {error}</p>}
          {training && <TrainForm models={models} disabled={running} onDone={() => setTraining(false)} />}
          {trainJob && <TrainJobPanel />}
          {loaded && models.length === 0 ? (
            <div className="card-empty">
              <p>
                <strong>No model yet.</strong> Train one on this workspace's reviewed and gold annotations (start with <em>cpu-tiny</em> or{' '}
                <em>cpu-small</em>), or import a Hugging Face checkpoint folder (BioBERT, PubMedBERT, a fine-tuned NER model).
              </p>
            </div>
          ) : (
            <ModelTable models={models} onSetActive={setActive} onDelete={setConfirmDelete} onOpenRetrain={props.onOpenRetrain} busy={running} />
          )}
        </section>

        <section className="card" aria-labelledby="tag-title" data-testid="tag-card">
          <div className="card-head">
            <h3 id="tag-title">Tag documents</h3>
            <span className="muted">{active ? <>with <strong>{active.name}</strong> (the active model)</> : 'no active model'}</span>
          </div>
          <p className="card-text">
            The model's mentions become suggestions; a document's earlier suggestions are replaced, and mentions that overlap an accepted annotation are
            left out.
          </p>
          <div className="row">
            <button
              type="button"
              className="btn"
              disabled={!active || running || !props.currentDocument}
              onClick={() => props.onTag('document')}
            >
              Tag the open document{props.currentDocument ? ` (${props.currentDocument})` : ''}
            </button>
            <button type="button" className="btn" disabled={!active || running || props.selectedCount === 0} onClick={() => props.onTag('selected')}>
              Tag {props.selectedCount} selected
            </button>
            <button type="button" className="btn" disabled={!active || running || props.filteredCount === 0} onClick={() => props.onTag('filtered')}>
              Tag all {props.filteredCount} in the list
            </button>
            <button
              type="button"
              className="btn primary"
              disabled={!active || running}
              onClick={() => props.onTag('workspace')}
              data-testid="tag-workspace"
            >
              Tag the whole workspace
            </button>
          </div>
          <p className="muted small-print">“Whole workspace” tags every document not marked done. Select documents in the list with their check boxes (or x).</p>
          {tagJob && <JobProgressBar job={tagJob} testId="tag-progress" />}
          {tagJob?.finished && results.tag && (
            <p className="job-result" data-testid="tag-result">
              {results.tag.documents} document{results.tag.documents === 1 ? '' : 's'} tagged: {results.tag.suggestions} suggestion
              {results.tag.suggestions === 1 ? '' : 's'}
              {results.tag.dropped ? `, ${results.tag.dropped} left out (they overlap accepted annotations)` : ''} ·{' '}
              {results.tag.msPerDocument.toFixed(0)} ms per document on <code>{results.tag.engine}</code>
            </p>
          )}
        </section>

        <AcceptAcrossWorkspace onChanged={props.onWorkspaceChanged} disabled={running} />
      </div>
      {confirmDelete && (
        <Modal title={`Delete ${confirmDelete.name}?`} onClose={() => setConfirmDelete(null)} testId="confirm-delete">
          <div className="form">
            <p>
              The model's files are removed from this workspace. Suggestions it made stay in the documents.
              {confirmDelete.active ? ' It is the active model: tagging needs another model made active afterwards.' : ''}
            </p>
            <div className="form-actions">
              <button type="button" className="btn" onClick={() => setConfirmDelete(null)}>
                Keep it
              </button>
              <button type="button" className="btn danger" onClick={() => void remove(confirmDelete)} data-testid="confirm-delete-button">
                Delete {confirmDelete.name}
              </button>
            </div>
          </div>
        </Modal>
      )}
    </div>
  )
}

// ------------------------------------------------------------------------------------------------

const DEVICE_LABEL = { gpu: 'GPU', cpu: 'CPU', wasm: 'WASM' } as const

export function DeviceBadge({ name }: { name: string }) {
  const d = deviceClass(name)
  return (
    <span className={`device device-${d}`} title={name}>
      {DEVICE_LABEL[d]}
    </span>
  )
}

function EngineCard({ engine }: { engine: EngineInfo | null }) {
  return (
    <section className="card engine" aria-labelledby="engine-title" data-testid="engine-card">
      <div className="card-head">
        <h3 id="engine-title">Engine on this computer</h3>
      </div>
      {engine ? (
        <div className="engine-grid">
          <div className="engine-item">
            <span className="section-label">Training</span>
            <div className="engine-name">
              <DeviceBadge name={engine.trainingBackend} />
              <code data-testid="training-backend">{engine.trainingBackend}</code>
            </div>
            <p className="engine-reason">{engine.trainingBackendReason}</p>
          </div>
          <div className="engine-item">
            <span className="section-label">Tagging (inference)</span>
            <div className="engine-name">
              <DeviceBadge name={engine.inferenceEngine} />
              <code data-testid="inference-engine">{engine.inferenceEngine}</code>
            </div>
            <p className="engine-reason">{engine.inferenceEngineReason}</p>
          </div>
        </div>
      ) : (
        <p className="muted">Asking the model host…</p>
      )}
    </section>
  )
}

function ModelTable(props: {
  models: ModelInfo[]
  busy: boolean
  onSetActive: (m: ModelInfo) => void
  onDelete: (m: ModelInfo) => void
  onOpenRetrain: () => void
}) {
  const [open, setOpen] = useState<number | null>(null)
  const byId = new Map(props.models.map((m) => [m.id, m]))
  return (
    <div className="table-wrap">
      <table className="data-table models-table" data-testid="models-table">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Kind</th>
            <th scope="col" className="num">
              Layers × width
            </th>
            <th scope="col" className="num">
              Parameters
            </th>
            <th scope="col" className="num">
              Size
            </th>
            <th scope="col" className="num">
              Dev F1
            </th>
            <th scope="col">Created</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.models.map((m) => {
            const candidate = m.candidate
            const parent = m.parentId !== null ? byId.get(m.parentId) : undefined
            return (
              <Fragment key={m.id}>
                <tr className={`${m.active ? 'is-active' : ''}${candidate ? ' is-candidate' : ''}`} data-model-id={m.id} data-model-name={m.name}>
                  <th scope="row">
                    <button
                      type="button"
                      className="disclosure"
                      aria-expanded={open === m.id}
                      onClick={() => setOpen(open === m.id ? null : m.id)}
                      title="Details"
                    >
                      <span aria-hidden="true">{open === m.id ? '▾' : '▸'}</span>
                      <span className="model-name">{m.name}</span>
                    </button>
                    {m.active && (
                      <span className="badge badge-active" data-testid="active-badge">
                        Active
                      </span>
                    )}
                    {candidate && <span className="badge badge-candidate">Candidate</span>}
                  </th>
                  <td>
                    <span className={`kind kind-${m.kind}`}>{m.kind}</span>
                  </td>
                  <td className="num">
                    {m.layers} × {m.hidden}
                  </td>
                  <td className="num">{formatCount(m.parameters)}</td>
                  <td className="num">{formatBytes(m.bytes)}</td>
                  <td className="num">{m.devScores ? `${pct(m.devScores.f1)}%` : <span className="muted">–</span>}</td>
                  <td className="nowrap">{formatDate(m.createdAt)}</td>
                  <td className="actions">
                    {candidate ? (
                      <button type="button" className="btn small" onClick={props.onOpenRetrain}>
                        Decide…
                      </button>
                    ) : !m.active ? (
                      <button type="button" className="btn small" onClick={() => props.onSetActive(m)} disabled={props.busy} data-action="set-active">
                        Set active
                      </button>
                    ) : null}
                    <button
                      type="button"
                      className="btn small danger"
                      onClick={() => props.onDelete(m)}
                      disabled={props.busy || candidate}
                      aria-label={`Delete ${m.name}`}
                      data-action="delete"
                    >
                      Delete
                    </button>
                  </td>
                </tr>
                {open === m.id && (
                  <tr className="details-row">
                    <td colSpan={8}>
                      <dl className="details">
                        <dt>Entity types</dt>
                        <dd>{m.entityTypes.join(', ') || '–'}</dd>
                        <dt>Heads</dt>
                        <dd>{m.heads}</dd>
                        <dt>Trained on</dt>
                        <dd>{m.trainedOn ?? '–'}</dd>
                        <dt>Training data</dt>
                        <dd>{m.trainingSummary ?? '–'}</dd>
                        {parent && (
                          <>
                            <dt>{m.distillation ? 'Distilled from' : 'Retrained from'}</dt>
                            <dd>
                              {parent.name}
                              {m.distillation ? ` (${m.distillation.mode} KD)` : ''}
                            </dd>
                          </>
                        )}
                        {m.devScores && (
                          <>
                            <dt>Dev P / R / F1</dt>
                            <dd>
                              {pct(m.devScores.precision)} / {pct(m.devScores.recall)} / {pct(m.devScores.f1)}
                              {Object.keys(m.devScores.types).length > 1 &&
                                ` — ${Object.entries(m.devScores.types)
                                  .map(([t, s]) => `${t} ${pct(s.f1)}`)
                                  .join(', ')}`}
                            </dd>
                          </>
                        )}
                        <dt>Folder</dt>
                        <dd>
                          <code className="path">{m.path}</code>
                        </dd>
                      </dl>
                    </td>
                  </tr>
                )}
              </Fragment>
            )
          })}
        </tbody>
      </table>
    </div>
  )
}

function TrainForm({ models, disabled, onDone }: { models: ModelInfo[]; disabled: boolean; onDone: () => void }) {
  const [preset, setPreset] = useState('cpu-small')
  const [epochs, setEpochs] = useState(3)
  const names = new Set(models.map((m) => m.name))
  const suggestName = (p: string) => {
    for (let i = 1; ; i++) if (!names.has(`${p}-${i}`)) return `${p}-${i}`
  }
  const [name, setName] = useState(() => suggestName('cpu-small'))
  const [nameTouched, setNameTouched] = useState(false)
  const nameId = useId()
  const epochsId = useId()

  const start = async () => {
    const trimmed = name.trim()
    if (!trimmed) return
    onDone()
    const r = await runModelJob('train', `Training ${trimmed}`, (jobId) => api.trainModel({ jobId, name: trimmed, preset, epochs }))
    await refreshModels()
    if (r?.model) {
      const f1 = r.model.devScores ? ` Devel F1 ${pct(r.model.devScores.f1)}%.` : ''
      notify('success', `Trained ${r.model.name}.${f1}${r.model.active ? ' It is the active model.' : ' Make it active to tag with it.'}`)
    } else if (r?.cancelled) notify('warning', 'Training cancelled; no model was added.')
  }

  return (
    <form
      className="train-form"
      data-testid="train-form"
      onSubmit={(e) => {
        e.preventDefault()
        void start()
      }}
    >
      <fieldset className="presets">
        <legend>Size (preset)</legend>
        {PRESETS.map((p) => (
          <label key={p.name} className={`preset${preset === p.name ? ' is-on' : ''}`}>
            <input
              type="radio"
              name="preset"
              value={p.name}
              checked={preset === p.name}
              onChange={() => {
                setPreset(p.name)
                if (!nameTouched) setName(suggestName(p.name))
              }}
            />
            <span className="preset-name">{p.name}</span>
            <span className="preset-shape">{p.shape} (layers × width)</span>
            <span className="preset-desc">{p.description}</span>
          </label>
        ))}
      </fieldset>
      <div className="form-grid">
        <div className="form-row">
          <label htmlFor={nameId}>Name</label>
          <input
            id={nameId}
            value={name}
            maxLength={100}
            onChange={(e) => {
              setName(e.target.value)
              setNameTouched(true)
            }}
            required
          />
        </div>
        <div className="form-row">
          <label htmlFor={epochsId}>Epochs</label>
          <input id={epochsId} type="number" min={1} max={100} value={epochs} onChange={(e) => setEpochs(Math.max(1, Math.min(100, Number(e.target.value) || 1)))} />
        </div>
        <div className="form-actions">
          <button type="button" className="btn" onClick={onDone}>
            Cancel
          </button>
          <button type="submit" className="btn primary" disabled={disabled || !name.trim()} data-testid="start-training">
            Start training
          </button>
        </div>
      </div>
      <p className="muted small-print">
        Trains from scratch on the accepted annotations of documents that are done or in progress, and on gold annotations; 10 % of those documents are
        held out to measure devel F1 after each epoch, and the best epoch is kept.
      </p>
    </form>
  )
}

function TrainJobPanel() {
  const { job } = useModelJob()
  if (!job || job.kind !== 'train') return null
  return (
    <div className="job-panel" data-testid="train-job">
      <JobProgressBar job={job} />
      <TrainingCurve job={job} height={220} />
    </div>
  )
}

const THRESHOLD_KEY = 'fastbioner:acceptThreshold'

export function storedThreshold(): number {
  const v = Number(localStorage.getItem(THRESHOLD_KEY))
  return Number.isFinite(v) && v >= 0.5 && v <= 1 ? v : 0.9
}

export function storeThreshold(v: number): void {
  localStorage.setItem(THRESHOLD_KEY, String(v))
}

function AcceptAcrossWorkspace({ onChanged, disabled }: { onChanged: () => void; disabled: boolean }) {
  const [threshold, setThreshold] = useState(storedThreshold)
  const [confirm, setConfirm] = useState(false)
  const sliderId = useId()
  const run = async () => {
    setConfirm(false)
    try {
      const { accepted } = await api.acceptAbove(threshold)
      notify('success', `Accepted ${accepted} suggestion${accepted === 1 ? '' : 's'} with confidence ≥ ${threshold.toFixed(2)} across the workspace.`)
      onChanged()
    } catch (e) {
      notify('error', `Could not accept the suggestions: ${errorMessage(e)}`)
    }
  }
  return (
    <section className="card" aria-labelledby="accept-all-title" data-testid="accept-workspace">
      <div className="card-head">
        <h3 id="accept-all-title">Accept confident suggestions everywhere</h3>
      </div>
      <div className="threshold-row">
        <label htmlFor={sliderId}>Confidence at least</label>
        <input
          id={sliderId}
          type="range"
          min={0.5}
          max={1}
          step={0.01}
          value={threshold}
          onChange={(e) => {
            setThreshold(Number(e.target.value))
            storeThreshold(Number(e.target.value))
          }}
        />
        <output htmlFor={sliderId} className="threshold-value">
          {threshold.toFixed(2)}
        </output>
        <button type="button" className="btn" disabled={disabled} onClick={() => setConfirm(true)}>
          Accept all ≥ {threshold.toFixed(2)} in the workspace…
        </button>
      </div>
      <p className="muted small-print">Each document's own “Accept all” (in the document view) can be undone with Ctrl+Z; this workspace-wide one cannot.</p>
      {confirm && (
        <Modal title="Accept suggestions in every document?" onClose={() => setConfirm(false)}>
          <div className="form">
            <p>
              Every model suggestion with confidence ≥ <strong>{threshold.toFixed(2)}</strong>, in every document, becomes an accepted annotation
              recorded under your name. This cannot be undone with Ctrl+Z.
            </p>
            <div className="form-actions">
              <button type="button" className="btn" onClick={() => setConfirm(false)}>
                Cancel
              </button>
              <button type="button" className="btn primary" onClick={() => void run()}>
                Accept all ≥ {threshold.toFixed(2)}
              </button>
            </div>
          </div>
        </Modal>
      )}
    </section>
  )
}
