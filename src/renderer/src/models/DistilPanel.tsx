// The Distil tab: choose one or several teachers (models with other entity types are shown
// disabled, with the reason), student depths (none for word-tagger teachers alone: their student
// is one new word tagger), a KD mode and whether to add int8 versions; what kind of distillation
// will run (distill:plan); live curves; compare the result.
import { useEffect, useId, useState } from 'react'
import type { DistillMode, DistillPlan, ModelInfo } from '@shared/ipc'
import { DISTILL_RECIPE, FORM_DEFAULTS } from '@shared/recipes'
import { api, errorMessage } from '../api'
import { notify } from '../toasts'
import { JobProgressBar, TrainingCurve } from './JobViews'
import { jobOfKind, pct, refreshModels, runModelJob, useModelJob, useModels } from './store'

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

export function DistilPanel({ onCompare }: { onCompare: (ids: number[]) => void }) {
  const { models } = useModels()
  const { job, results } = useModelJob()
  const usable = models.filter((m) => !m.candidate)
  const [teacherIds, setTeacherIds] = useState<number[] | null>(null)
  const [plan, setPlan] = useState<DistillPlan | null>(null)
  const [layers, setLayers] = useState<LayerChoice[]>([6, 4, 3])
  const [mode, setMode] = useState<DistillMode>('dynamic')
  // null: the form's default for the student's kind, until the user sets it.
  const [chosenEpochs, setEpochs] = useState<number | null>(null)
  const [int8, setInt8] = useState(true)
  const epochsId = useId()
  const int8Hint = useId()
  const methodId = useId()
  const running = !!job && !job.finished
  const distillJob = jobOfKind(job, 'distill')
  const modelKey = usable.map((m) => m.id).join(',')

  // The plan for the current choice; before any choice, the candidates alone (to pick a default).
  useEffect(() => {
    let live = true
    const ids = (teacherIds ?? []).filter((id) => usable.some((m) => m.id === id))
    api
      .distillPlan(ids)
      .then((value) => {
        if (!live) return
        if (teacherIds === null || ids.length !== teacherIds.length) {
          // The active model when it can have a student (a BERT with more than one layer); else the deepest BERT.
          const berts = usable.filter((m) => value.candidates.some((c) => c.modelId === m.id && !c.wordTagger))
          const active = berts.find((m) => m.active && m.layers > 1)
          const deepest = [...berts].sort((a, b) => b.layers - a.layers || b.parameters - a.parameters)[0]
          const first = active ?? deepest
          if (teacherIds === null || ids.length === 0) {
            // Models not listed yet: choose once they are.
            if (usable.length > 0) setTeacherIds(first ? [first.id] : [])
            if (first) return
          } else setTeacherIds(ids)
        }
        setPlan(value)
      })
      .catch((e: unknown) => {
        if (!live) return
        setPlan(null)
        notify('error', errorMessage(e))
      })
    return () => {
      live = false
    }
    // modelKey: a model added or removed changes the candidates.
  }, [teacherIds, modelKey])

  const chosen = (teacherIds ?? []).map((id) => usable.find((m) => m.id === id)).filter((m): m is ModelInfo => !!m)
  const base = usable.find((m) => m.id === plan?.baseId) ?? null
  const ready = !!plan?.method && !plan.problem
  const allowed = (n: number) => ready && n < plan!.maxLayers
  const chosenLayers = layers.filter(allowed)
  const tags = plan?.method === 'teacher-tags'
  const wordTaggerStudent = plan?.studentKind === 'word-tagger'
  const canStart = ready && (wordTaggerStudent || chosenLayers.length > 0)
  const int8Unavailable = plan?.int8Unavailable ?? null
  // A word-tagger student trains from scratch: a distilled BERT's 3 epochs would stop it early.
  const epochs = chosenEpochs ?? (wordTaggerStudent ? FORM_DEFAULTS.wordTaggerEpochs : FORM_DEFAULTS.distillEpochs)
  const several = chosen.length > 1
  const modeDisabled = (m: DistillMode) => tags || (several && m === 'none')
  const effectiveMode: DistillMode = several && mode === 'none' ? 'dynamic' : mode

  const toggle = (id: number, on: boolean) => setTeacherIds((ids) => (on ? [...(ids ?? []), id] : (ids ?? []).filter((x) => x !== id)))

  const start = async () => {
    if (!canStart) return
    const names = chosen.map((m) => m.name).join(', ')
    const r = await runModelJob('distill', `Distilling ${names}`, (jobId) =>
      api.distill({ jobId, teacherIds: chosen.map((m) => m.id), ...(wordTaggerStudent ? {} : { layers: chosenLayers }), mode: effectiveMode, epochs, int8: int8 && !int8Unavailable }),
    )
    await refreshModels()
    if (r?.students.length) notify('success', `Distilled ${r.students.map((s) => s.name).join(', ')} from ${names}.`)
    else if (r?.cancelled) notify('warning', 'Distillation cancelled.')
  }

  const lastStudents = results.distill?.students ?? []
  // The teachers of the last run, base first: the comparison's reference and its other teachers.
  const lastTeachers = lastStudents[0]?.distillation?.teachers.map((t) => t.id).filter((id): id is number => id !== null) ?? []
  const lastBase = lastStudents[0]?.parentId ?? null
  const compareIds = [...new Set([...(lastBase !== null ? [lastBase] : []), ...lastTeachers, ...lastStudents.map((s) => s.id)])]
  const lastBaseName = usable.find((m) => m.id === lastBase)?.name ?? 'the teachers'

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
          <h3>Distil teachers</h3>
        </div>
        {usable.length === 0 ? (
          <p className="muted">No model yet: train or import a teacher in Models first.</p>
        ) : (
          <>
            <fieldset className="form-row kd-modes" data-testid="distil-teachers">
              <legend>Teachers</legend>
              {usable.map((m) => {
                const c = plan?.candidates.find((x) => x.modelId === m.id)
                const on = chosen.some((x) => x.id === m.id)
                const disabled = running || (!!c && !c.compatible && !on)
                const reasonId = `teacher-reason-${m.id}`
                return (
                  <label key={m.id} className={`kd-mode teacher-option${on ? ' is-on' : ''}${disabled ? ' is-disabled' : ''}`} data-teacher-id={m.id}>
                    <input type="checkbox" checked={on} disabled={disabled} onChange={(e) => toggle(m.id, e.target.checked)} aria-describedby={c?.reason ? reasonId : undefined} />
                    <span className="kd-label">
                      {m.name}
                      {m.id === plan?.baseId && several && <span className="badge">student's base</span>}
                    </span>
                    <span className="kd-hint">
                      {c?.wordTagger ? 'word tagger' : `BERT ${m.layers}×${m.hidden}`} · {m.entityTypes.join(', ') || 'no entity types'}
                      {m.devScores ? ` · F1 ${pct(m.devScores.f1)}` : ''}
                    </span>
                    {c?.reason && !on && (
                      <span className="kd-hint teacher-reason" id={reasonId}>
                        Not with these teachers: {c.reason}
                      </span>
                    )}
                  </label>
                )
              })}
            </fieldset>
            <div className="form-row distil-method" id={methodId} data-testid="distil-method" data-method={plan?.method ?? ''} aria-live="polite">
              {plan?.problem ? (
                <p className="form-error" role="alert">
                  {plan.problem}
                </p>
              ) : plan?.method ? (
                <>
                  <p className="label-like">{plan.method === 'soft-labels' ? 'Soft-label distillation' : 'Label-level distillation (teacher tags)'}</p>
                  <p className="muted small-print">
                    {plan.summary}
                    {tags
                      ? plan.unreviewedDocuments > DISTILL_RECIPE.taggedDocuments
                        ? ` They tag a sample of ${DISTILL_RECIPE.taggedDocuments} of the ${plan.unreviewedDocuments.toLocaleString('en-US')} unreviewed documents.`
                        : ` They tag all ${plan.unreviewedDocuments.toLocaleString('en-US')} unreviewed documents.`
                      : ''}
                  </p>
                </>
              ) : null}
            </div>
            {wordTaggerStudent ? (
              <p className="form-row" data-testid="distil-student">
                Student: a word tagger (BiLSTM-CRF), trained on the reviewed documents and the teachers' agreed tags.
              </p>
            ) : (
              <fieldset className="form-row checks">
                <legend>Student depth (layers)</legend>
                <div className="check-row">
                  {LAYER_CHOICES.map((n) => (
                    <label key={n} className={`check${allowed(n) ? '' : ' is-disabled'}`} title={allowed(n) ? '' : `Needs teachers with more than ${n} layers`}>
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
                  FastBioNER distils a 12-layer BioBERT into 6, 4 and 3 layers. A student must be shallower than its teachers
                  {base && plan ? ` (${several && !tags ? 'the shallowest has' : `${base.name} has`} ${plan.maxLayers})` : ''}.
                </p>
              </fieldset>
            )}
            <fieldset className="form-row kd-modes" disabled={tags}>
              <legend data-testid="kd-legend">Knowledge distillation</legend>
              {tags && <p className="muted small-print">Not used: the student learns the teachers' tags, not their soft labels.</p>}
              {KD_MODES.map((k) => (
                <label key={k.mode} className={`kd-mode${effectiveMode === k.mode && !tags ? ' is-on' : ''}${modeDisabled(k.mode) ? ' is-disabled' : ''}`}>
                  <input type="radio" name="kd-mode" value={k.mode} checked={effectiveMode === k.mode} disabled={modeDisabled(k.mode)} onChange={() => setMode(k.mode)} />
                  <span className="kd-label">{k.label}</span>
                  <span className="kd-hint">{several && k.mode === 'none' ? 'Uses no teacher: choose a single teacher for this baseline.' : k.hint}</span>
                </label>
              ))}
            </fieldset>
            <div className="form-row narrow">
              <label htmlFor={epochsId}>Epochs</label>
              <input id={epochsId} type="number" min={1} max={50} value={epochs} onChange={(e) => setEpochs(Math.max(1, Math.min(50, Number(e.target.value) || 1)))} />
            </div>
            <div className="form-row">
              <label className="check">
                <input
                  type="checkbox"
                  checked={int8 && !int8Unavailable}
                  disabled={!!int8Unavailable}
                  onChange={(e) => setInt8(e.target.checked)}
                  aria-describedby={int8Hint}
                  data-testid="distil-int8"
                />
                Also make an int8 version of each student
              </label>
              <p id={int8Hint} className="muted small-print">
                {int8Unavailable
                  ? `Not for this student: ${int8Unavailable}.`
                  : 'About 4× smaller weights and faster on a CPU, usually for a fraction of an F1 point. Both versions are kept so you can compare them.'}
              </p>
            </div>
            <div className="form-actions">
              <button type="submit" className="btn primary" disabled={!canStart || running} aria-describedby={methodId} data-testid="start-distil">
                {wordTaggerStudent
                  ? 'Distil into a word tagger'
                  : `Distil into ${chosenLayers.length ? chosenLayers.join(', ') : '…'} layer${chosenLayers.length === 1 && chosenLayers[0] === 1 ? '' : 's'}`}
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
        {lastStudents.length > 0 && (
          <div className="students" data-testid="distil-result">
            <p>
              New: {lastStudents.map((s) => `${s.name} (${s.layers} × ${s.hidden}${s.devScores ? `, dev F1 ${pct(s.devScores.f1)}%` : ''})`).join('; ')}
            </p>
            <button type="button" className="btn primary" onClick={() => onCompare(compareIds)}>
              Compare with {lastTeachers.length > 1 ? 'their teachers' : lastBaseName}
            </button>
          </div>
        )}
      </section>
    </div>
  )
}
