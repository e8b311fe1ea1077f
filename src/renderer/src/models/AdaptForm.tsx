// "Adapt to my documents": models:adapt for one model of the registry (continued masked-LM
// pretraining on the workspace's own titles and abstracts), and the running job's curve.
import { useEffect, useId, useState } from 'react'
import type { ModelInfo } from '@shared/ipc'
import { ADAPT_RECIPE, FORM_DEFAULTS } from '@shared/recipes'
import { api } from '../api'
import { notify } from '../toasts'
import { EpochsField, FormActions } from './FormParts'
import { pct, refreshModels, runModelJob } from './store'

export function AdaptForm({ base, disabled, onDone }: { base: ModelInfo; disabled: boolean; onDone: () => void }) {
  const [epochs, setEpochs] = useState<number>(FORM_DEFAULTS.adaptEpochs)
  const [documents, setDocuments] = useState<number | null>(null)
  const titleId = useId()

  useEffect(() => {
    let alive = true
    api
      .listDocuments({ limit: 1 })
      .then((r) => alive && setDocuments(r.total))
      .catch(() => undefined)
    return () => {
      alive = false
    }
  }, [])

  const start = async () => {
    onDone()
    const r = await runModelJob('adapt', `Adapting ${base.name}`, (jobId) => api.adaptModel({ jobId, baseModelId: base.id, epochs }))
    await refreshModels()
    if (r?.model) {
      const last = r.heldOut[r.heldOut.length - 1]
      const accuracy = last ? ` Held-out masked-word accuracy ${pct(last.accuracy)}%.` : ''
      notify(
        'success',
        `Adapted ${base.name} to this workspace: ${r.model.name}.${accuracy} It keeps ${base.name}'s entity heads, which are not yet tuned to the ` +
          'adapted encoder: retrain it on your reviewed documents, or train a new model from it, before tagging with it.',
      )
    } else if (r?.cancelled) notify('warning', `Adapting cancelled: no model was added, and ${base.name} is unchanged.`)
  }

  return (
    <form
      className="train-form adapt-form"
      data-testid="adapt-form"
      aria-labelledby={titleId}
      onSubmit={(e) => {
        e.preventDefault()
        void start()
      }}
    >
      <h4 id={titleId} className="form-title">
        Adapt <em>{base.name}</em> to my documents
      </h4>
      <p className="card-text">
        Continues the model's language-model pretraining (guessing masked words) on the titles and abstracts of{' '}
        {documents !== null ? `all ${documents.toLocaleString('en-US')} documents` : 'every document'} in this workspace, annotated or not, so that it
        learns your field's words and phrasing.{' '}
        {base.name} stays as it is; the result is a new model.
      </p>
      <p className="card-text">
        The new model keeps {base.name}'s entity heads{base.entityTypes.length ? ` (${base.entityTypes.join(', ')})` : ''}, but they are not tuned to
        the adapted encoder: <strong>retrain it</strong> on your reviewed documents, or <strong>train a new model from it</strong>, before tagging with
        it.
      </p>
      <div className="form-grid">
        <EpochsField label="Passes over the text (epochs)" max={10} value={epochs} onChange={setEpochs} />
        <div />
        <FormActions onCancel={onDone} disabled={disabled} testId="start-adapt">
          Start adapting
        </FormActions>
      </div>
      <p className="muted small-print">
        Needs at least {ADAPT_RECIPE.minWords.toLocaleString('en-US')} words of text (about ten abstracts); at most{' '}
        {ADAPT_RECIPE.maxSteps.toLocaleString('en-US')} training steps, however large the workspace. Every {ADAPT_RECIPE.heldOutEvery}th stretch of
        text is held out to measure, after each pass, how many masked words the model guesses right.
      </p>
    </form>
  )
}
