// What every model-in-the-loop handler shares: the host, the workspace (after start-up recovery),
// the job slots, progress events, and the reserve/discard life cycle of a model folder.
//
// Job rules: at most one training-like job (models:train, models:adapt, retrain:start,
// distill:start, compare:run) and one tag:run at a time — they share one host process and its memory. A model a
// job uses cannot be deleted meanwhile. Registry rows of a job are written 'training' first; an
// interrupted job (app quit, crash) leaves such rows, and they and their folders are removed the
// next time the workspace is used (the base of a retrain is only ever read, so it stays intact).
import { DEV_FRACTION } from '@shared/recipes'
import { existsSync } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { isAbsolute, join, relative, resolve } from 'node:path'
import type { ModelInfo, Scores } from '@shared/ipc'
import type { CorpusDocument } from '@shared/domain'
import type { HandlerContext } from '../handlers'
import { finishJob, startJob, throttle } from '../jobs'
import { isStoreError, StoreError, type ModelConfigSummary, type ModelRecord, type Workspace } from '../../core/store'
import { Rng } from '../../core/rng'
import type { ModelHost } from '../../host/client'
import type { JobProgress, ModelSummary, ScoresWithTypes } from '../../host/protocol'

export interface ModelHandlerDeps {
  grant(paths: string[]): string[]
  /** Checks that each path came from an open dialog and spends its grant (one use each). */
  takeReadGrants(paths: readonly string[], purpose: string): string[]
}

/** Documents per tag request: small enough for fine progress and a quick cancel. */
export const TAG_CHUNK = 16

/** Jobs of one slot run one at a time; 'none' runs alongside anything. */
type Slot = 'training' | 'tagging' | 'none'

export interface RunningJob {
  slot: Slot
  what: string
  models: Set<number>
  runId: number | null
}

export const toInfo = (r: ModelRecord): ModelInfo => {
  const { status: _status, ...info } = r
  return info
}

/** What the registry stores about a folder the host summarised (its weights' format included). */
export const configOf = (s: ModelSummary): ModelConfigSummary => ({
  layers: s.layers,
  hidden: s.hidden,
  heads: s.heads,
  parameters: s.parameters,
  bytes: s.bytes,
  weights: s.weights,
})

/** What the registry records of a saved folder from the host's summary: its config and its entity types. */
export const savedFolderFields = (s: ModelSummary) => ({ config: configOf(s), entityTypes: s.entityTypes })

export const pickScores = (s: { precision: number; recall: number; f1: number }): Scores => ({ precision: s.precision, recall: s.recall, f1: s.f1 })

/** A folder name for a model: letters, digits, '.', '_', '-'; unique inside `dir`. */
function folderFor(dir: string, name: string): string {
  const slug =
    name
      .normalize('NFKD')
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^[-.]+|[-.]+$/g, '')
      .slice(0, 60) || 'model'
  let candidate = join(dir, slug)
  for (let k = 2; existsSync(candidate); k++) candidate = join(dir, `${slug}-${k}`)
  return candidate
}

/** Seeded split by document: `n` held out, the rest for training. */
export function splitDocuments<T>(docs: readonly T[], heldOut: number, seed: number): { train: T[]; heldOut: T[] } {
  const order = docs.map((_, i) => i)
  new Rng(seed >>> 0).shuffle(order)
  const held = new Set(order.slice(0, heldOut))
  return { train: docs.filter((_, i) => !held.has(i)), heldOut: docs.filter((_, i) => held.has(i)) }
}

export const mentionCount = (docs: readonly CorpusDocument[]) => docs.reduce((n, d) => n + d.mentions.length, 0)
export { plural } from '@shared/plural'

export type ModelRuntime = ReturnType<typeof createModelRuntime>

export function createModelRuntime(ctx: HandlerContext, deps: ModelHandlerDeps) {
  const jobs = new Map<string, RunningJob>()
  const recovered = new WeakSet<Workspace>()

  const host = (): ModelHost => {
    if (!ctx.modelHost) {
      throw new Error('No model host is configured: the shell (or the test harness) must pass ctx.modelHost, e.g. createNodeModelHost()')
    }
    return ctx.modelHost
  }

  /** The workspace, after removing what interrupted jobs left behind (once per opened workspace). */
  const workspace = (): Workspace => {
    const ws = ctx.workspace()
    // While an import holds the write lock the clean-up waits for a later call.
    // Only the lock holder may judge rows as interrupted: another instance's running job looks the same.
    if (!recovered.has(ws) && !ws.importing && ws.ownsLock) {
      recovered.add(ws)
      const keepModels = new Set<number>()
      const keepRuns = new Set<number>()
      for (const j of jobs.values()) {
        for (const m of j.models) keepModels.add(m)
        if (j.runId !== null) keepRuns.add(j.runId)
      }
      for (const m of ws.abandonInterruptedModels({ models: keepModels, runs: keepRuns })) void removeFolder(ws, m.path)
    }
    return ws
  }

  /** Waits while an import holds the workspace's write lock (a tag run writes between batches). */
  async function writable(ws: Workspace, signal: AbortSignal): Promise<void> {
    while (ws.importing && ws.isOpen && !signal.aborted) await new Promise((r) => setTimeout(r, 100))
  }

  /** Removes a model folder, but only one inside the workspace's models folder. */
  async function removeFolder(ws: Workspace, path: string): Promise<void> {
    const rel = relative(ws.modelsDir, resolve(path))
    if (!rel || rel.startsWith('..') || isAbsolute(rel)) return
    await rm(path, { recursive: true, force: true }).catch((e) => console.error(`[models] cannot remove ${path}: ${(e as Error).message}`))
  }

  async function releaseHostFiles(path: string): Promise<void> {
    // Only a running host can hold the files open; never start one just to release nothing.
    if (ctx.modelHost?.pid !== undefined) await ctx.modelHost.request('release', { dir: path }, { timeoutMs: 30_000 }).catch(() => undefined)
  }

  const jobEndListeners = new Set<() => void>()
  /** Calls `listener` after every model job ends (Auto-improve starts a queued retrain then). */
  const onJobEnd = (listener: () => void): (() => void) => {
    jobEndListeners.add(listener)
    return () => jobEndListeners.delete(listener)
  }
  const slotBusy = (slot: Slot): boolean => slot !== 'none' && [...jobs.values()].some((j) => j.slot === slot)

  function begin(jobId: string | null, slot: Slot, what: string): { signal: AbortSignal; job: RunningJob; end(): void } {
    for (const j of jobs.values()) {
      if (slot !== 'none' && j.slot === slot) {
        throw new StoreError('conflict', `${j.what} is still running; wait for it to finish or cancel it first`)
      }
    }
    const controller = jobId ? startJob(jobId) : new AbortController()
    const key = jobId ?? `internal-${Math.random()}`
    const job: RunningJob = { slot, what, models: new Set(), runId: null }
    jobs.set(key, job)
    return {
      signal: controller.signal,
      job,
      end() {
        jobs.delete(key)
        if (jobId) finishJob(jobId)
        // After the caller's own clean-up (this runs in its finally): the slot is free by then.
        for (const l of [...jobEndListeners]) queueMicrotask(l)
      },
    }
  }

  const isInUse = (modelId: number) => [...jobs.values()].some((j) => j.models.has(modelId))

  /** Maps host progress to train:progress / job:progress events. */
  function progressEmitter(jobId: string, label: string) {
    const jobProgress = throttle((p: { done: number; total: number; message: string; etaSeconds?: number }) =>
      ctx.emit('job:progress', { jobId, ...p }),
    )
    const fn = (p: JobProgress) => {
      if (p.kind === 'phase') {
        jobProgress({ done: p.done ?? 0, total: p.total ?? 0, message: `${label}: ${p.message}` })
        return
      }
      ctx.emit('train:progress', {
        jobId,
        label,
        step: p.step,
        totalSteps: p.totalSteps,
        epoch: p.epoch,
        loss: p.loss,
        ...(p.devF1 !== undefined ? { devF1: p.devF1 } : {}),
        ...(p.maskedAccuracy !== undefined ? { maskedAccuracy: p.maskedAccuracy } : {}),
        tokensPerSecond: p.tokensPerSecond,
        etaSeconds: p.etaSeconds,
      })
      jobProgress({
        done: p.step,
        total: p.totalSteps,
        message: `${label}: epoch ${p.epoch} of ${p.epochs}, step ${p.step} of ${p.totalSteps}`,
        etaSeconds: p.etaSeconds,
      })
    }
    fn.flush = () => jobProgress.flush()
    return fn
  }

  /** A new registry row in 'training' state and its (empty) folder. */
  async function reserve(
    ws: Workspace,
    input: { name: string; kind: ModelInfo['kind']; parentId?: number | null; distillation?: ModelInfo['distillation']; shipped?: boolean },
  ): Promise<ModelRecord> {
    const path = folderFor(ws.modelsDir, input.name)
    const rec = ws.createModel({ ...input, status: 'training', path })
    await mkdir(path, { recursive: true })
    return rec
  }

  async function discard(ws: Workspace, rec: ModelRecord): Promise<void> {
    try {
      if (ws.isOpen) ws.deleteModel(rec.id)
    } catch (e) {
      if (!(isStoreError(e) && e.code === 'not_found')) throw e
    }
    await releaseHostFiles(rec.path)
    await removeFolder(ws, rec.path)
  }

  const finishRun = (ws: Workspace, runId: number, status: 'done' | 'failed' | 'cancelled', metrics: Record<string, unknown> | null, modelId?: number) => {
    if (ws.isOpen) ws.finishRun(runId, status, metrics, modelId)
  }

  /**
   * A job that threw: its run (once started) is recorded as cancelled or failed and the model it was
   * writing (if any) is removed. True when the error was the user's cancel.
   */
  async function abandonJob(ws: Workspace, runId: number | null, rec: ModelRecord | null, error: unknown): Promise<boolean> {
    const cancelled = isStoreError(error) && error.code === 'cancelled'
    if (runId !== null) finishRun(ws, runId, cancelled ? 'cancelled' : 'failed', { error: (error as Error).message })
    if (rec) await discard(ws, rec)
    return cancelled
  }

  /** Labelled documents for training: reviewed (done, in progress) and gold-annotated ones. */
  const trainingDocuments = (ws: Workspace) => ws.labelledDocuments({ statuses: ['done', 'in_progress'], includeGold: true })

  const devSize = (n: number) => (n >= 5 ? Math.max(1, Math.round(n * DEV_FRACTION)) : 0)

  const withTypes = (s: ScoresWithTypes | null): ModelInfo['devScores'] =>
    s ? { ...pickScores(s), types: Object.fromEntries(Object.entries(s.types).map(([t, v]) => [t, pickScores(v)])) } : null

  return {
    ctx,
    deps,
    host,
    workspace,
    writable,
    removeFolder,
    releaseHostFiles,
    begin,
    onJobEnd,
    slotBusy,
    isInUse,
    progressEmitter,
    reserve,
    discard,
    finishRun,
    abandonJob,
    trainingDocuments,
    devSize,
    withTypes,
  }
}
