// The "Models" view: which engine runs where, the model registry (set active, import, delete,
// train a new one, adapt one to the workspace's documents), tagging documents with the active
// model, and accepting suggestions across the workspace.
import { useEffect, useState } from 'react'
import type { ModelInfo } from '@shared/ipc'
import { api, errorMessage } from '../api'
import { notify } from '../toasts'
import { ConfirmDialog } from '../components/ConfirmDialog'
import { ThresholdSlider, useStoredThreshold } from '../components/ThresholdSlider'
import { EngineCard } from './EngineCard'
import { JobPanel, JobProgressBar } from './JobViews'
import { ViewFrame } from './ViewFrame'
import { ModelTable } from './ModelTable'
import { TrainForm } from './TrainForm'
import { AdaptForm } from './AdaptForm'
import { GetModelDialog, useHubDownload } from './GetModelDialog'
import { CachedModels } from './CachedModels'
import { activeModel, currentModels, jobOfKind, refreshModels, useModelJob, useModels } from './store'

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
  const [adapting, setAdapting] = useState<ModelInfo | null>(null)
  const [confirmDelete, setConfirmDelete] = useState<ModelInfo | null>(null)
  const [getting, setGetting] = useState(false)
  const hubDownload = useHubDownload()
  const active = activeModel(models)
  const running = !!job && !job.finished
  const trainJob = jobOfKind(job, 'train')
  const adaptJob = jobOfKind(job, 'adapt')
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
      // The dialog gave the focus back to the row's Delete button, which is gone with the row:
      // keep the keyboard in the view, on its first action, rather than on the page's body.
      if (!document.activeElement || document.activeElement === document.body) {
        document.querySelector<HTMLElement>('[data-testid="train-new"]')?.focus()
      }
      // Deleting the active model makes the newest other ready one active: say which.
      const now = m.active ? activeModel(currentModels()) : null
      notify('success', m.active ? `Deleted ${m.name}. ${now ? `${now.name} is now the active model.` : 'No model is active: tagging needs one.'}` : `Deleted ${m.name}.`)
    } catch (e) {
      notify('error', `Could not delete ${m.name}: ${errorMessage(e)}`)
    }
  }

  const deleteDialog = confirmDelete && (
    <ConfirmDialog
      title={`Delete ${confirmDelete.name}?`}
      confirmLabel={`Delete ${confirmDelete.name}`}
      cancelLabel="Keep it"
      tone="danger"
      onConfirm={() => void remove(confirmDelete)}
      onCancel={() => setConfirmDelete(null)}
      testId="confirm-delete"
      confirmTestId="confirm-delete-button"
    >
      <p>
        The model's files are removed from this workspace. Suggestions it made stay in the documents.
        {confirmDelete.active ? ' It is the active model: the newest other model becomes active in its place, if there is one.' : ''}
        {confirmDelete.shipped ? ' The default model is not installed in this workspace again.' : ''}
      </p>
    </ConfirmDialog>
  )

  return (
    <ViewFrame
      name="models-view"
      title="Models"
      intro="Everything runs on this computer, offline: the app reaches the network only when you ask it to get a model from Hugging Face. The active model tags documents; its suggestions appear dashed in the text until you accept or reject them."
      dialogs={
        <>
          {deleteDialog}
          {getting && <GetModelDialog onClose={() => setGetting(false)} />}
        </>
      }
    >
      <EngineCard engine={engine} />

      <section className="card" aria-labelledby="registry-title">
        <div className="card-head">
          <h3 id="registry-title">Model registry</h3>
          <div className="row">
            <button type="button" className="btn" onClick={() => void importFolder()} data-testid="import-model">
              Import HF folder…
            </button>
            <button type="button" className="btn" onClick={() => setGetting(true)} data-testid="get-model">
              {hubDownload?.state === 'running' ? 'Downloading…' : 'Get from Hugging Face…'}
            </button>
            <button
              type="button"
              className={`btn ${models.length === 0 ? 'primary' : ''}`}
              onClick={() => {
                setAdapting(null)
                setTraining((v) => !v)
              }}
              aria-expanded={training}
              data-testid="train-new"
            >
              Train new model…
            </button>
          </div>
        </div>
        {error && <p className="form-error">Cannot read the models: {error}</p>}
        {training && <TrainForm models={models} disabled={running} onDone={() => setTraining(false)} />}
        {trainJob && <JobPanel job={trainJob} testId="train-job" />}
        {adapting && <AdaptForm key={adapting.id} base={adapting} disabled={running} onDone={() => setAdapting(null)} />}
        {adaptJob && <JobPanel job={adaptJob} testId="adapt-job" />}
        {loaded && models.length === 0 ? (
          <div className="card-empty">
            <p>
              <strong>No model yet.</strong> Train one on this workspace's reviewed and gold annotations (start with <em>cpu-tiny</em> or{' '}
              <em>cpu-small</em>), or import a Hugging Face checkpoint folder (BioBERT, PubMedBERT, a fine-tuned NER model).
            </p>
          </div>
        ) : (
          <ModelTable
            models={models}
            onSetActive={setActive}
            onDelete={setConfirmDelete}
            onOpenRetrain={props.onOpenRetrain}
            onAdapt={(m) => {
              setTraining(false)
              setAdapting(m)
            }}
            busy={running}
          />
        )}
      </section>

      <CachedModels busy={running} />

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
    </ViewFrame>
  )
}

// ------------------------------------------------------------------------------------------------
function AcceptAcrossWorkspace({ onChanged, disabled }: { onChanged: () => void; disabled: boolean }) {
  const [threshold, setThreshold] = useStoredThreshold()
  const [confirm, setConfirm] = useState(false)
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
        <ThresholdSlider label="Confidence at least" value={threshold} onChange={setThreshold} />
        <button type="button" className="btn" disabled={disabled} onClick={() => setConfirm(true)}>
          Accept all ≥ {threshold.toFixed(2)} in the workspace…
        </button>
      </div>
      <p className="muted small-print">Each document's own “Accept all” (in the document view) can be undone with Ctrl+Z; this workspace-wide one cannot.</p>
      {confirm && (
        <ConfirmDialog
          title="Accept suggestions in every document?"
          confirmLabel={`Accept all ≥ ${threshold.toFixed(2)}`}
          onConfirm={() => void run()}
          onCancel={() => setConfirm(false)}
        >
          <p>
            Every model suggestion with confidence ≥ <strong>{threshold.toFixed(2)}</strong>, in every document, becomes an accepted annotation
            recorded under your name. This cannot be undone with Ctrl+Z.
          </p>
        </ConfirmDialog>
      )}
    </section>
  )
}
