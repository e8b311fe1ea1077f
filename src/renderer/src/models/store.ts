// Model state shared by every view: the registry, the engine, and the one model job that may run
// at a time (tagging, training, retraining, distillation, comparison). Module-level stores read
// with useSyncExternalStore, so a job keeps going — and its curve keeps growing — while the person
// switches views, and its result is still there when they come back.
import { useSyncExternalStore } from 'react'
import type { ComparisonReport, EngineInfo, EventPayloads, ModelAdaptResult, ModelDistillation, ModelInfo, RetrainResult, TagResult } from '@shared/ipc'
import { api, errorMessage, isApiError, newJobId, onEvent } from '../api'
import { notify } from '../toasts'

// ------------------------------------------------------------------------------------------------
// A tiny store

function store<T>(initial: T) {
  let value = initial
  const listeners = new Set<() => void>()
  return {
    get: () => value,
    set(next: T) {
      if (next === value) return
      value = next
      for (const l of [...listeners]) l()
    },
    subscribe(l: () => void) {
      listeners.add(l)
      return () => listeners.delete(l)
    },
  }
}

// ------------------------------------------------------------------------------------------------
// Registry and engine

export interface ModelsState {
  models: ModelInfo[]
  engine: EngineInfo | null
  loaded: boolean
  error: string | null
}

const models = store<ModelsState>({ models: [], engine: null, loaded: false, error: null })

export function useModels(): ModelsState {
  return useSyncExternalStore(models.subscribe, models.get)
}

let refreshing: Promise<void> | null = null
let queued: Promise<void> | null = null

/**
 * Reads the registry (and the engine once). A call while a read is in flight gets a new read
 * after it (the registry may have changed since that one started); calls meanwhile share it.
 */
export function refreshModels(): Promise<void> {
  if (queued) return queued
  if (refreshing) {
    queued = refreshing.then(() => {
      queued = null
      return refreshModels()
    })
    return queued
  }
  refreshing = (async () => {
    try {
      const [list, engine] = await Promise.all([api.listModels(), models.get().engine ?? api.engineInfo()])
      models.set({ models: list, engine, loaded: true, error: null })
    } catch (e) {
      models.set({ ...models.get(), loaded: true, error: errorMessage(e) })
    } finally {
      refreshing = null
    }
  })()
  return refreshing
}

export const activeModel = (list: ModelInfo[]): ModelInfo | null => list.find((m) => m.active) ?? null

/** The registry as last read (after `await refreshModels()`: as it is now), for code outside React. */
export const currentModels = (): ModelInfo[] => models.get().models

// ------------------------------------------------------------------------------------------------
// The model job

export type ModelJobKind = 'tag' | 'train' | 'retrain' | 'distill' | 'compare' | 'adapt'

export interface CurvePoint {
  step: number
  epoch: number
  /** A step's loss; for an end-of-epoch evaluation, the epoch's mean loss. */
  loss: number
  /** Set on end-of-epoch evaluations only: devel F1, or (adapt) held-out masked-word accuracy. */
  devF1?: number
  maskedAccuracy?: number
  /** Which model, when one job trains several (distillation into 6, 4 and 3 layers). */
  label?: string
}

export interface ModelJob {
  jobId: string
  kind: ModelJobKind
  /** "Tagging 12 documents", "Retraining cpu-small-2"… */
  label: string
  startedAt: number
  done: number
  total: number
  message: string
  etaSeconds: number | null
  cancelling: boolean
  /** Training steps seen so far (train, retrain, distill), in arrival order. */
  curve: CurvePoint[]
  /** End-of-epoch evaluations (devF1 or maskedAccuracy set). */
  evals: CurvePoint[]
  /** The model being trained now, for jobs that train several. */
  currentLabel: string | null
  totalSteps: number
  epoch: number
  tokensPerSecond: number | null
  /** Set when the job ended: the curve stays on screen with its outcome. */
  finished: null | 'done' | 'cancelled' | 'failed'
}

export interface JobResults {
  tag: TagResult | null
  retrain: RetrainResult | null
  compare: ComparisonReport | null
  distill: { cancelled: boolean; students: ModelInfo[] } | null
  train: { cancelled: boolean; model: ModelInfo | null } | null
  adapt: ModelAdaptResult | null
}

interface JobsState {
  /** The running job, or the last one (finished ≠ null) until another starts. */
  job: ModelJob | null
  results: JobResults
}

const jobs = store<JobsState>({
  job: null,
  results: { tag: null, retrain: null, compare: null, distill: null, train: null, adapt: null },
})

export function useModelJob(): JobsState {
  return useSyncExternalStore(jobs.subscribe, jobs.get)
}

/**
 * The running job's label, or null: for components that only need to know whether one runs
 * (re-rendered when that changes, not on every progress event).
 */
export function useRunningJobLabel(): string | null {
  return useSyncExternalStore(jobs.subscribe, () => {
    const j = jobs.get().job
    return j && !j.finished ? j.label : null
  })
}

/** Hides a finished job's panel (its result stays). */
export function dismissFinishedJob(): void {
  const s = jobs.get()
  if (s.job?.finished) jobs.set({ ...s, job: null })
}

export const runningJob = (): ModelJob | null => {
  const j = jobs.get().job
  return j && !j.finished ? j : null
}

/** The last job of a kind (running or finished), e.g. to keep a loss curve on screen. */
export function jobOfKind(job: ModelJob | null, ...kinds: ModelJobKind[]): ModelJob | null {
  return job && kinds.includes(job.kind) ? job : null
}

export function clearResult(kind: keyof JobResults): void {
  const s = jobs.get()
  jobs.set({ ...s, results: { ...s.results, [kind]: null } })
}

// Progress events arrive per step; the screen is redrawn at most every 150 ms.
let pending: Partial<ModelJob> | null = null
let pendingPoints: CurvePoint[] = []
let timer: ReturnType<typeof setTimeout> | null = null

function flushProgress(): void {
  timer = null
  const s = jobs.get()
  const j = s.job
  if (!j || j.finished || (!pending && pendingPoints.length === 0)) {
    pending = null
    pendingPoints = []
    return
  }
  const steps = pendingPoints.filter((p) => !isEval(p))
  const evals = pendingPoints.filter(isEval)
  jobs.set({
    ...s,
    job: {
      ...j,
      ...pending,
      curve: steps.length ? [...j.curve, ...steps] : j.curve,
      evals: evals.length ? [...j.evals, ...evals] : j.evals,
    },
  })
  pending = null
  pendingPoints = []
}

/** An end-of-epoch evaluation rather than a training step. */
const isEval = (p: CurvePoint): boolean => p.devF1 !== undefined || p.maskedAccuracy !== undefined

function queueProgress(patch: Partial<ModelJob>, point?: CurvePoint): void {
  pending = { ...pending, ...patch }
  if (point) pendingPoints.push(point)
  if (!timer) timer = setTimeout(flushProgress, 150)
}

let subscribed = false

function subscribeEvents(): void {
  if (subscribed) return
  subscribed = true
  onEvent('job:progress', (p: EventPayloads['job:progress']) => {
    const j = jobs.get().job
    if (!j || j.jobId !== p.jobId || j.finished) return
    queueProgress({ done: p.done, total: p.total, message: p.message, etaSeconds: p.etaSeconds ?? null })
  })
  onEvent('train:progress', (p: EventPayloads['train:progress']) => {
    const j = jobs.get().job
    if (!j || j.jobId !== p.jobId || j.finished) return
    const point: CurvePoint = {
      step: p.step,
      epoch: p.epoch,
      loss: p.loss,
      ...(p.devF1 !== undefined ? { devF1: p.devF1 } : {}),
      ...(p.maskedAccuracy !== undefined ? { maskedAccuracy: p.maskedAccuracy } : {}),
      ...(p.label ? { label: p.label } : {}),
    }
    queueProgress(
      {
        done: p.step,
        total: p.totalSteps,
        totalSteps: p.totalSteps,
        epoch: p.epoch,
        etaSeconds: p.etaSeconds,
        tokensPerSecond: p.tokensPerSecond,
        currentLabel: p.label ?? null,
        message: `${p.label ? `${p.label}: ` : ''}epoch ${p.epoch} · step ${p.step} of ${p.totalSteps}`,
      },
      point,
    )
  })
}

type Finished = (kind: ModelJobKind) => void
const finishedListeners = new Set<Finished>()

/** Called after any model job ends (refresh lists, reload the open document…). */
export function onJobFinished(listener: Finished): () => void {
  finishedListeners.add(listener)
  return () => finishedListeners.delete(listener)
}

/**
 * Runs one model job. Refuses (with a message) while another runs. Resolves with the result, or
 * null when the job failed (the error has been shown).
 */
export async function runModelJob<K extends keyof JobResults>(
  kind: K,
  label: string,
  start: (jobId: string) => Promise<NonNullable<JobResults[K]>>,
): Promise<NonNullable<JobResults[K]> | null> {
  const running = runningJob()
  if (running) {
    notify('warning', `${running.label} is still running. Wait for it to finish or cancel it first.`)
    return null
  }
  subscribeEvents()
  const jobId = newJobId()
  const job: ModelJob = {
    jobId,
    kind,
    label,
    startedAt: Date.now(),
    done: 0,
    total: 0,
    message: 'Starting…',
    etaSeconds: null,
    cancelling: false,
    curve: [],
    evals: [],
    currentLabel: null,
    totalSteps: 0,
    epoch: 0,
    tokensPerSecond: null,
    finished: null,
  }
  pending = null
  pendingPoints = []
  jobs.set({ ...jobs.get(), job })
  let outcome: ModelJob['finished'] = 'failed'
  try {
    const result = await start(jobId)
    outcome = (result as { cancelled?: boolean }).cancelled ? 'cancelled' : 'done'
    const s = jobs.get()
    jobs.set({ ...s, results: { ...s.results, [kind]: result } })
    return result
  } catch (e) {
    if (isApiError(e) && e.code === 'cancelled') {
      outcome = 'cancelled'
      notify('warning', `${label}: cancelled.`)
    } else notify('error', `${label} failed: ${errorMessage(e)}`)
    return null
  } finally {
    if (timer) {
      clearTimeout(timer)
      flushProgress()
    }
    const s = jobs.get()
    if (s.job?.jobId === jobId) jobs.set({ ...s, job: { ...s.job, finished: outcome, cancelling: false, etaSeconds: null } })
    for (const l of [...finishedListeners]) l(kind)
  }
}

export async function cancelModelJob(): Promise<void> {
  const j = runningJob()
  if (!j) return
  const s = jobs.get()
  jobs.set({ ...s, job: { ...j, cancelling: true, message: 'Cancelling…' } })
  try {
    const { cancelled } = await api.cancelJob(j.jobId)
    if (!cancelled) notify('info', `${j.label} had already finished; nothing to cancel.`)
  } catch (e) {
    notify('error', `Cannot cancel: ${errorMessage(e)}`)
  }
}

// ------------------------------------------------------------------------------------------------
// Helpers shared by the views

export function formatEta(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return ''
  if (seconds < 1) return 'under a second left'
  if (seconds < 60) return `about ${Math.round(seconds)} s left`
  const m = Math.floor(seconds / 60)
  if (m < 60) return `about ${m} min ${Math.round(seconds % 60)} s left`
  return `about ${Math.floor(m / 60)} h ${m % 60} min left`
}

export function formatCount(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} B`
  if (n >= 1e6) return `${(n / 1e6).toFixed(n >= 1e8 ? 0 : 1)} M`
  if (n >= 1e4) return `${Math.round(n / 1e3)} k`
  return n.toLocaleString('en-US')
}

export function formatBytes(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(2)} GB`
  if (n >= 1024 ** 2) return `${(n / 1024 ** 2).toFixed(n >= 100 * 1024 ** 2 ? 0 : 1)} MB`
  if (n >= 1024) return `${Math.round(n / 1024)} KB`
  return `${n} B`
}

/** Scores in [0, 1] shown as percentages with one decimal, e.g. 87.3. */
export const pct = (x: number | null | undefined): string => (x === null || x === undefined || !Number.isFinite(x) ? '–' : (x * 100).toFixed(1))

/** "soft labels, dynamic KD" / "teacher tags": how a student learnt from its teachers. */
export const distillationMethodText = (d: ModelDistillation): string => (d.method === 'soft-labels' ? `soft labels, ${d.mode} KD` : 'teacher tags')

/** Its teachers by name (a deleted one marked so), e.g. "bert-4, words (deleted)". */
export const teacherNames = (d: ModelDistillation): string => d.teachers.map((t) => `${t.name}${t.id === null ? ' (deleted)' : ''}`).join(', ')

export function formatDate(iso: string): string {
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return iso
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
}

/** GPU / CPU / WASM, from a backend or engine name such as "tensorflow-gpu" or "onnxruntime-cpu". */
export function deviceClass(name: string): 'gpu' | 'cpu' | 'wasm' {
  const n = name.toLowerCase()
  if (/gpu|cuda|webgl|webgpu|directml|dml|tensorrt|coreml/.test(n)) return 'gpu'
  if (/wasm/.test(n)) return 'wasm'
  return 'cpu'
}
