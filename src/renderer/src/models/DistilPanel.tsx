// The Distil tab: choose a teacher, student depths, a KD mode and whether to add int8 versions;
// live curves; compare the result.
import { useEffect, useId, useState } from 'react'
import type { DistillMode } from '@shared/ipc'
import { FORM_DEFAULTS } from '@shared/recipes'
import { api } from '../api'
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
  const [teacherId, setTeacherId] = useState<number | null>(null)
  const [layers, setLayers] = useState<LayerChoice[]>([6, 4, 3])
  const [mode, setMode] = useState<DistillMode>('dynamic')
  const [epochs, setEpochs] = useState<number>(FORM_DEFAULTS.distillEpochs)
  const [int8, setInt8] = useState(true)
  const teacherSel = useId()
  const epochsId = useId()
  const int8Hint = useId()
  const running = !!job && !job.finished
  const distillJob = jobOfKind(job, 'distill')

  useEffect(() => {
    if (teacherId !== null && usable.some((m) => m.id === teacherId)) return
    // The active model when it can have a student; else the deepest one.
    const active = usable.find((m) => m.active && m.layers > 1)
    const deepest = [...usable].sort((a, b) => b.layers - a.layers || b.parameters - a.parameters)[0]
    setTeacherId(active?.id ?? deepest?.id ?? null)
  }, [usable, teacherId])

  const teacher = usable.find((m) => m.id === teacherId) ?? null
  const allowed = (n: number) => !!teacher && n < teacher.layers
  const chosen = layers.filter(allowed)

  const start = async () => {
    if (!teacher || chosen.length === 0) return
    const r = await runModelJob('distill', `Distilling ${teacher.name}`, (jobId) =>
      api.distill({ jobId, teacherId: teacher.id, layers: chosen, mode, epochs, int8 }),
    )
    await refreshModels()
    if (r?.students.length) notify('success', `Distilled ${r.students.map((s) => s.name).join(', ')} from ${teacher.name}.`)
    else if (r?.cancelled) notify('warning', 'Distillation cancelled.')
  }

  const lastStudents = results.distill?.students ?? []

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
          <h3>Distil a teacher</h3>
        </div>
        {usable.length === 0 ? (
          <p className="muted">No model yet: train or import a teacher in Models first.</p>
        ) : (
          <>
            <div className="form-row">
              <label htmlFor={teacherSel}>Teacher</label>
              <select id={teacherSel} value={teacherId ?? ''} onChange={(e) => setTeacherId(Number(e.target.value))} data-testid="distil-teacher">
                {usable.map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.name} · {m.layers}×{m.hidden}
                    {m.devScores ? ` · F1 ${pct(m.devScores.f1)}` : ''}
                  </option>
                ))}
              </select>
            </div>
            <fieldset className="form-row checks">
              <legend>Student depth (layers)</legend>
              <div className="check-row">
                {LAYER_CHOICES.map((n) => (
                  <label key={n} className={`check${allowed(n) ? '' : ' is-disabled'}`} title={allowed(n) ? '' : `Needs a teacher with more than ${n} layers`}>
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
                FastBioNER distils a 12-layer BioBERT into 6, 4 and 3 layers. A student must be shallower than its teacher
                {teacher ? ` (${teacher.name} has ${teacher.layers})` : ''}.
              </p>
            </fieldset>
            <fieldset className="form-row kd-modes">
              <legend>Knowledge distillation</legend>
              {KD_MODES.map((k) => (
                <label key={k.mode} className={`kd-mode${mode === k.mode ? ' is-on' : ''}`}>
                  <input type="radio" name="kd-mode" value={k.mode} checked={mode === k.mode} onChange={() => setMode(k.mode)} />
                  <span className="kd-label">{k.label}</span>
                  <span className="kd-hint">{k.hint}</span>
                </label>
              ))}
            </fieldset>
            <div className="form-row narrow">
              <label htmlFor={epochsId}>Epochs</label>
              <input id={epochsId} type="number" min={1} max={50} value={epochs} onChange={(e) => setEpochs(Math.max(1, Math.min(50, Number(e.target.value) || 1)))} />
            </div>
            <div className="form-row">
              <label className="check">
                <input type="checkbox" checked={int8} onChange={(e) => setInt8(e.target.checked)} aria-describedby={int8Hint} data-testid="distil-int8" />
                Also make an int8 version of each student
              </label>
              <p id={int8Hint} className="muted small-print">
                About 4× smaller weights and faster on a CPU, usually for a fraction of an F1 point. Both versions are kept so you can compare them.
              </p>
            </div>
            <div className="form-actions">
              <button type="submit" className="btn primary" disabled={!teacher || chosen.length === 0 || running} data-testid="start-distil">
                Distil into {chosen.length ? chosen.join(', ') : '…'} layer{chosen.length === 1 && chosen[0] === 1 ? '' : 's'}
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
        {lastStudents.length > 0 && teacher && (
          <div className="students" data-testid="distil-result">
            <p>
              New: {lastStudents.map((s) => `${s.name} (${s.layers} × ${s.hidden}${s.devScores ? `, dev F1 ${pct(s.devScores.f1)}%` : ''})`).join('; ')}
            </p>
            <button type="button" className="btn primary" onClick={() => onCompare([teacher.id, ...lastStudents.map((s) => s.id)])}>
              Compare with {teacher.name}
            </button>
          </div>
        )}
      </section>
    </div>
  )
}
