// "Train new model": from scratch (a preset) or from a model of the workspace (its encoder, e.g.
// one adapted to the workspace's documents), a name and epochs for models:train, and the running
// job's curve.
import { useId, useState } from 'react'
import type { ModelInfo } from '@shared/ipc'
import { FORM_DEFAULTS, MODEL_PRESETS, WORD_LSTM_CHOICE } from '@shared/recipes'
import { api, errorMessage } from '../api'
import { basename } from '../basename'
import { notify } from '../toasts'
import { EpochsField, FormActions } from './FormParts'
import { pct, refreshModels, runModelJob } from './store'

const sentence = (d: string) => d.charAt(0).toUpperCase() + d.slice(1) + '.'
// The word tagger first: the recommended choice from scratch; then the BERT presets.
const PRESETS = [
  { name: WORD_LSTM_CHOICE.name, shape: WORD_LSTM_CHOICE.shape, description: sentence(WORD_LSTM_CHOICE.description) },
  ...MODEL_PRESETS.map((p) => ({ name: p.name, shape: `${p.layers} × ${p.hidden} (layers × width)`, description: sentence(p.description) })),
]
export function TrainForm({ models, disabled, onDone }: { models: ModelInfo[]; disabled: boolean; onDone: () => void }) {
  const bases = models.filter((m) => !m.candidate)
  // A model adapted to the workspace's documents is made to be trained from: start there when there is one.
  const adapted = [...bases].reverse().find((m) => m.adaptation)
  const [baseId, setBaseId] = useState<number | null>(adapted?.id ?? null)
  const [lastBaseId, setLastBaseId] = useState<number>(adapted?.id ?? bases[bases.length - 1]?.id ?? 0)
  const base = bases.find((m) => m.id === baseId) ?? null
  const [preset, setPreset] = useState<string>(FORM_DEFAULTS.preset)
  const epochsFor = (choice: string) => (choice === WORD_LSTM_CHOICE.name ? FORM_DEFAULTS.wordTaggerEpochs : FORM_DEFAULTS.trainEpochs)
  const [epochs, setEpochs] = useState<number>(epochsFor(FORM_DEFAULTS.preset))
  const [epochsTouched, setEpochsTouched] = useState(false)
  const names = new Set(models.map((m) => m.name))
  const suggestName = (p: string) => {
    for (let i = 1; ; i++) if (!names.has(`${p}-${i}`)) return `${p}-${i}`
  }
  const nameFor = (b: ModelInfo | null) => suggestName(b ? `${b.name} fine-tuned` : preset)
  const [name, setName] = useState(() => nameFor(base))
  const [nameTouched, setNameTouched] = useState(false)
  const nameId = useId()
  const baseSel = useId()
  // A word-vector file for a new word tagger (a dialog's answer, read by one training).
  const [vectors, setVectors] = useState<string | null>(null)
  const takesVectors = !base && preset === WORD_LSTM_CHOICE.name

  const chooseVectors = async () => {
    try {
      const { path } = await api.chooseWordVectors()
      if (path) setVectors(path)
    } catch (e) {
      notify('error', `Cannot open the file chooser: ${errorMessage(e)}`)
    }
  }

  const chooseBase = (id: number | null) => {
    setBaseId(id)
    if (id !== null) setLastBaseId(id)
    if (!nameTouched) setName(nameFor(bases.find((m) => m.id === id) ?? null))
  }

  const start = async () => {
    const trimmed = name.trim()
    if (!trimmed) return
    onDone()
    const from = base ? { baseModelId: base.id } : { preset, ...(takesVectors && vectors ? { wordVectorsPath: vectors } : {}) }
    // The chosen file is spent by this request (a dialog's answer is good for one use).
    setVectors(null)
    const r = await runModelJob('train', `Training ${trimmed}`, (jobId) => api.trainModel({ jobId, name: trimmed, ...from, epochs }))
    await refreshModels()
    const f1 = r?.model?.devScores ? ` Devel F1 ${pct(r.model.devScores.f1)}%.` : ''
    const use = r?.model?.active ? ' It is the active model.' : ' Make it active to tag with it.'
    if (r?.cancelled && r.model) {
      // Stopped after an epoch: its best checkpoint so far is a model the person may not want.
      notify('warning', `Training cancelled; the best checkpoint so far was kept as ${r.model.name}.${f1}${use} Delete it in the table if you do not want it.`)
    } else if (r?.cancelled) notify('warning', 'Training cancelled; no model was added.')
    else if (r?.model) notify('success', `Trained ${r.model.name}.${f1}${use}`)
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
      {bases.length > 0 && (
        <fieldset className="checks start-from">
          <legend>Start from</legend>
          <div className="check-row">
            <label className="check">
              <input type="radio" name="start-from" checked={base === null} onChange={() => chooseBase(null)} data-testid="start-from-scratch" />
              Scratch: a new vocabulary and random weights
            </label>
            <label className="check">
              <input type="radio" name="start-from" checked={base !== null} onChange={() => chooseBase(lastBaseId)} data-testid="start-from-model" />
              A model of this workspace (its encoder and vocabulary)
            </label>
            {base && (
              <select id={baseSel} aria-label="Model to start from" value={base.id} onChange={(e) => chooseBase(Number(e.target.value))} data-testid="train-base">
                {bases.map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.name}
                    {m.adaptation ? ' (adapted)' : ''} · {m.layers}×{m.hidden}
                  </option>
                ))}
              </select>
            )}
          </div>
        </fieldset>
      )}
      {!base && (
        <fieldset className="presets">
          <legend>Model</legend>
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
                  if (!epochsTouched) setEpochs(epochsFor(p.name))
                }}
              />
              <span className="preset-name">{p.name}</span>
              <span className="preset-shape">{p.shape}</span>
              <span className="preset-desc">{p.description}</span>
            </label>
          ))}
        </fieldset>
      )}
      {takesVectors && (
        <div className="form-row word-vectors" data-testid="word-vectors">
          <span className="label-like">Word vectors (optional)</span>
          <div>
            {vectors ? (
              <span className="file-chip">
                <span title={vectors}>{basename(vectors)}</span>
                <button type="button" className="icon-close small" aria-label={`Remove ${basename(vectors)}`} onClick={() => setVectors(null)}>
                  ×
                </button>
              </span>
            ) : (
              <button type="button" className="btn small" onClick={() => void chooseVectors()}>
                Choose file…
              </button>
            )}{' '}
            <span className="muted">word2vec, fastText or GloVe text (.vec, .txt, .gz), e.g. from <code>fastbioner wordvec --vec</code>; starts the word table from them</span>
          </div>
        </div>
      )}
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
        <EpochsField
          max={100}
          value={epochs}
          onChange={(n) => {
            setEpochs(n)
            setEpochsTouched(true)
          }}
        />
        <FormActions onCancel={onDone} disabled={disabled || !name.trim()} testId="start-training">
          Start training
        </FormActions>
      </div>
      <p className="muted small-print">
        {base
          ? `Fine-tunes ${base.name}'s encoder (${base.layers} × ${base.hidden}, its vocabulary) with a head for this workspace's entity types; ${base.name} itself stays as it is. `
          : 'Trains from scratch. '}
        Learns from the accepted annotations of documents that are done or in progress, and from gold annotations; 10 % of those documents are
        held out to measure devel F1 after each epoch, and the best epoch is kept.
      </p>
    </form>
  )
}
