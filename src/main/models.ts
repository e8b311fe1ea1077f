// The model-in-the-loop channels of the handler table: registry, tagging, suggestions, review
// queue, retraining, distillation, comparison. Electron-free (api.ts spreads these into the
// table). Heavy work goes to ctx.modelHost (a separate process); this side only reads documents
// from the workspace, chooses the checkpoint folders (<workspace folder>/models/<name>/), and
// writes results in its own transactions. The host never opens the database.
//
// Job rules: at most one training-like job (models:train, retrain:start, distill:start,
// compare:run) and one tag:run at a time — they share one host process and its memory. A model a
// job uses cannot be deleted meanwhile. Registry rows of a job are written 'training' first; an
// interrupted job (app quit, crash) leaves such rows, and they and their folders are removed the
// next time the workspace is used (the base of a retrain is only ever read, so it stays intact).
import { existsSync } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { basename, isAbsolute, join, relative, resolve } from 'node:path'
import type {
  ComparisonReport,
  ComparisonRow,
  ModelImportResult,
  ModelInfo,
  RetrainResult,
  Scores,
  TagResult,
} from '@shared/ipc'
import { MODEL_PRESETS } from '@shared/ipc'
import type { CorpusDocument } from '@shared/domain'
import type { HandlerContext, Handlers } from './api'
import { finishJob, startJob, throttle } from './jobs'
import { buildLabelMap } from '../core/nlp/bio'
import { isStoreError, StoreError, type ModelRecord, type Workspace } from '../core/store'
import { mulberry32, shuffleInPlace } from '../core/train/rng'
import type { ModelHost } from '../host/client'
import type { JobProgress, ScoresWithTypes } from '../host/protocol'

export type ModelChannel =
  | 'engine:info'
  | 'models:list'
  | 'dialog:openModelFolder'
  | 'models:import'
  | 'models:setActive'
  | 'models:delete'
  | 'models:train'
  | 'tag:run'
  | 'suggestions:accept'
  | 'suggestions:reject'
  | 'suggestions:acceptAbove'
  | 'review:queue'
  | 'retrain:start'
  | 'retrain:decide'
  | 'distill:start'
  | 'compare:run'

export interface ModelHandlerDeps {
  grant(paths: string[]): string[]
  requireGranted(path: string, purpose: string): string
}

/** Documents per tag request: small enough for fine progress and a quick cancel. */
export const TAG_CHUNK = 16
const DEFAULTS = { trainEpochs: 10, retrainEpochs: 3, distillEpochs: 3, heldOut: 0.2, devFraction: 0.1, seed: 42 } as const

/** Jobs of one slot run one at a time; 'none' runs alongside anything. */
type Slot = 'training' | 'tagging' | 'none'

interface RunningJob {
  slot: Slot
  what: string
  models: Set<number>
  runId: number | null
}

const toInfo = (r: ModelRecord): ModelInfo => {
  const { status: _status, ...info } = r
  return info
}

const pickScores = (s: { precision: number; recall: number; f1: number }): Scores => ({ precision: s.precision, recall: s.recall, f1: s.f1 })

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
  shuffleInPlace(order, mulberry32(seed >>> 0))
  const held = new Set(order.slice(0, heldOut))
  return { train: docs.filter((_, i) => !held.has(i)), heldOut: docs.filter((_, i) => held.has(i)) }
}

const mentionCount = (docs: readonly CorpusDocument[]) => docs.reduce((n, d) => n + d.mentions.length, 0)
const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`

export function createModelHandlers(ctx: HandlerContext, deps: ModelHandlerDeps): Pick<Handlers, ModelChannel> {
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
    if (!recovered.has(ws) && !ws.importing) {
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
    while (ws.importing && !signal.aborted) await new Promise((r) => setTimeout(r, 100))
  }

  /** Removes a model folder, but only one inside the workspace's models folder. */
  async function removeFolder(ws: Workspace, path: string): Promise<void> {
    const rel = relative(ws.modelsDir, resolve(path))
    if (!rel || rel.startsWith('..') || isAbsolute(rel)) return
    await rm(path, { recursive: true, force: true }).catch((e) => console.error(`[models] cannot remove ${path}: ${(e as Error).message}`))
  }

  async function releaseHostFiles(path: string): Promise<void> {
    // Only a running host can hold the files open; never start one just to release nothing.
    if (ctx.modelHost?.pid !== undefined) await ctx.modelHost.request('release', { dir: path }).catch(() => undefined)
  }

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
    input: { name: string; kind: ModelInfo['kind']; parentId?: number | null; distillation?: ModelInfo['distillation'] },
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

  /** Labelled documents for training: reviewed (done, in progress) and gold-annotated ones. */
  const trainingDocuments = (ws: Workspace) => ws.labelledDocuments({ statuses: ['done', 'in_progress'], includeGold: true })

  const devSize = (n: number) => (n >= 5 ? Math.max(1, Math.round(n * DEFAULTS.devFraction)) : 0)

  const withTypes = (s: ScoresWithTypes | null): ModelInfo['devScores'] =>
    s ? { ...pickScores(s), types: Object.fromEntries(Object.entries(s.types).map(([t, v]) => [t, pickScores(v)])) } : null

  return {
    async 'engine:info'() {
      const ws = workspace()
      return host().request('engineInfo', { modelDir: ws.activeModel()?.path ?? null })
    },

    async 'models:list'() {
      return workspace().listModels().map(toInfo)
    },

    async 'dialog:openModelFolder'() {
      if (!ctx.dialogs.openModelFolder) throw new Error('This shell has no model folder dialog')
      const path = await ctx.dialogs.openModelFolder()
      if (path) deps.grant([path])
      return { path }
    },

    async 'models:import'(req): Promise<ModelImportResult> {
      const source = deps.requireGranted(req.path, 'Importing a model')
      const ws = workspace()
      const name = req.name ?? ws.uniqueModelName(basename(source) || 'imported model')
      const types = ws.entityTypes()
      const rec = await reserve(ws, { name, kind: 'imported' })
      const { job, end } = begin(null, 'none', `Importing ${name}`)
      job.models.add(rec.id)
      const runId = (job.runId = ws.startRun('import', rec.id, { source }))
      try {
        const r = await host().request('importModel', {
          source,
          dest: rec.path,
          headLabels: types.length ? buildLabelMap(types).labels : null,
          seed: DEFAULTS.seed,
        })
        const model = ws.updateModel(rec.id, {
          status: 'ready',
          kind: r.freshHead ? 'teacher' : 'imported',
          config: { layers: r.summary.layers, hidden: r.summary.hidden, heads: r.summary.heads, parameters: r.summary.parameters, bytes: r.summary.bytes },
          entityTypes: r.summary.entityTypes,
          trainedOn: null,
          trainingSummary: r.freshHead
            ? `Imported from ${source}: pre-trained encoder with a new, untrained head for ${r.summary.entityTypes.join(', ')}`
            : `Imported from ${source}`,
        })
        finishRun(ws, runId, 'done', { notes: r.notes })
        return { ...toInfo(model), notes: r.notes }
      } catch (e) {
        finishRun(ws, runId, 'failed', { error: (e as Error).message })
        await discard(ws, rec)
        throw e
      } finally {
        end()
      }
    },

    async 'models:setActive'(req) {
      return toInfo(workspace().setActiveModel(req.id))
    },

    async 'models:delete'(req) {
      const ws = workspace()
      const rec = ws.getModel(req.id)
      if (isInUse(rec.id)) {
        throw new StoreError('conflict', `Model "${rec.name}" is in use by a running job; wait for it to finish or cancel it first`)
      }
      if (rec.status === 'training') throw new StoreError('conflict', `Model "${rec.name}" is still being written`)
      await releaseHostFiles(rec.path)
      ws.deleteModel(rec.id)
      await removeFolder(ws, rec.path)
      return { id: rec.id }
    },

    async 'models:train'(req) {
      if (!MODEL_PRESETS.some((p) => p.name === req.preset)) {
        throw new StoreError('invalid_request', `Unknown preset "${req.preset}"; choose ${MODEL_PRESETS.map((p) => p.name).join(', ')}`)
      }
      const ws = workspace()
      const docs = trainingDocuments(ws)
      if (mentionCount(docs) === 0) {
        throw new StoreError('invalid_request', 'Nothing to learn yet: annotate some documents (or import annotated ones) first')
      }
      const seed = req.seed ?? DEFAULTS.seed
      const epochs = req.epochs ?? DEFAULTS.trainEpochs
      const { train, heldOut: dev } = splitDocuments(docs, devSize(docs.length), seed)
      const { signal, job, end } = begin(req.jobId, 'training', `Training ${req.name}`)
      let rec: ModelRecord | null = null
      let runId: number | null = null
      const emit = progressEmitter(req.jobId, req.name)
      try {
        rec = await reserve(ws, { name: req.name, kind: 'teacher' })
        job.models.add(rec.id)
        runId = job.runId = ws.startRun('train', rec.id, { preset: req.preset, epochs, seed, documents: docs.length })
        const r = await host().request(
          'trainModel',
          {
            dir: rec.path,
            preset: req.preset,
            train,
            dev,
            epochs,
            seed,
            metadata: { workspace: ws.path, documents: docs.length },
          },
          { signal, onProgress: emit },
        )
        emit.flush()
        if (!r.saved || !r.summary) {
          await discard(ws, rec)
          finishRun(ws, runId, r.cancelled ? 'cancelled' : 'failed', { steps: r.steps })
          return { cancelled: r.cancelled, model: null }
        }
        const summary =
          `${plural(train.length, 'document')} (${plural(mentionCount(train), 'mention')})` +
          (dev.length ? `, ${dev.length} held out for devel` : ', none held out') +
          `; ${req.preset} from scratch, ${r.epochs} of ${epochs} epochs` +
          (r.bestEpoch !== null && dev.length ? `, best epoch ${r.bestEpoch}` : '') +
          (r.cancelled ? '; stopped by the user (best checkpoint so far kept)' : '')
        const model = ws.updateModel(rec.id, {
          status: 'ready',
          config: { layers: r.summary.layers, hidden: r.summary.hidden, heads: r.summary.heads, parameters: r.summary.parameters, bytes: r.summary.bytes },
          entityTypes: r.summary.entityTypes,
          trainedOn: r.backend,
          devScores: withTypes(r.devScores),
          trainingSummary: summary,
        })
        finishRun(ws, runId, r.cancelled ? 'cancelled' : 'done', { devScores: r.devScores, steps: r.steps, seconds: r.seconds })
        return { cancelled: r.cancelled, model: toInfo(model) }
      } catch (e) {
        if (runId !== null) finishRun(ws, runId, isStoreError(e) && e.code === 'cancelled' ? 'cancelled' : 'failed', { error: (e as Error).message })
        if (rec) await discard(ws, rec)
        if (isStoreError(e) && e.code === 'cancelled') return { cancelled: true, model: null }
        throw e
      } finally {
        end()
      }
    },

    async 'tag:run'(req): Promise<TagResult> {
      const ws = workspace()
      const model = req.modelId !== undefined ? ws.getModel(req.modelId) : ws.activeModel()
      if (!model) throw new StoreError('invalid_request', 'No active model: train or import one first')
      if (model.status !== 'ready') {
        throw new StoreError('conflict', `Model "${model.name}" cannot tag yet: ${model.status === 'candidate' ? 'keep it first (retrain:decide)' : 'it is still being trained'}`)
      }
      const ids = ws.documentIdsForTagging(req.documentIds)
      const { signal, job, end } = begin(req.jobId, 'tagging', `Tagging with ${model.name}`)
      job.models.add(model.id)
      const runId = (job.runId = ws.startRun('tag', model.id, { documents: ids.length }))
      const progress = throttle((p: { done: number; message: string; etaSeconds?: number }) =>
        ctx.emit('job:progress', { jobId: req.jobId, total: ids.length, ...p }),
      )
      const result: TagResult = {
        cancelled: false,
        documents: 0,
        suggestions: 0,
        dropped: 0,
        engine: '',
        engineReason: '',
        msPerDocument: 0,
        modelId: model.id,
      }
      const t0 = performance.now()
      const by = `model:${model.name}`
      try {
        progress({ done: 0, message: `Tagging ${plural(ids.length, 'document')} with ${model.name}` })
        for (let i = 0; i < ids.length; i += TAG_CHUNK) {
          if (signal.aborted) {
            result.cancelled = true
            break
          }
          const chunk = ids.slice(i, i + TAG_CHUNK)
          let tagged
          try {
            tagged = await host().request('tag', { modelDir: model.path, docs: ws.documentsForTagging(chunk) }, { signal, cancelGraceMs: 30_000 })
          } catch (e) {
            if (isStoreError(e) && e.code === 'cancelled') {
              result.cancelled = true
              break
            }
            throw e
          }
          result.engine = tagged.engine
          result.engineReason = tagged.engineReason
          // One transaction per batch: a crash or cancel leaves whole documents, never half of one.
          await writable(ws, signal)
          const w = ws.replaceSuggestions(
            tagged.docs.map((d) => ({ documentId: Number(d.id), suggestions: d.mentions, uncertainty: d.uncertainty })),
            { modelId: model.id, by },
          )
          result.documents += chunk.length
          result.suggestions += w.stored
          result.dropped += w.dropped
          const elapsed = (performance.now() - t0) / 1000
          const rate = result.documents / Math.max(elapsed, 1e-3)
          progress({
            done: result.documents,
            message: `Tagged ${result.documents} of ${ids.length} documents with ${model.name}`,
            etaSeconds: (ids.length - result.documents) / rate,
          })
        }
        progress.flush()
        result.msPerDocument = result.documents ? (performance.now() - t0) / result.documents : 0
        ctx.emit('job:progress', {
          jobId: req.jobId,
          done: result.documents,
          total: ids.length,
          message: result.cancelled ? `Tagging cancelled after ${result.documents} documents` : 'Tagging finished',
          etaSeconds: 0,
        })
        finishRun(ws, runId, result.cancelled ? 'cancelled' : 'done', { ...result })
        return result
      } catch (e) {
        finishRun(ws, runId, 'failed', { error: (e as Error).message, documents: result.documents })
        throw e
      } finally {
        end()
      }
    },

    async 'suggestions:accept'(req) {
      return { accepted: workspace().acceptSuggestions(req.ids) }
    },
    async 'suggestions:reject'(req) {
      return { rejected: workspace().rejectSuggestions(req.ids) }
    },
    async 'suggestions:acceptAbove'(req) {
      return { accepted: workspace().acceptSuggestionsAbove(req.threshold, req.documentId) }
    },
    async 'review:queue'(req) {
      return workspace().reviewQueue(req.limit ?? 50)
    },

    async 'retrain:start'(req): Promise<RetrainResult> {
      const ws = workspace()
      const base = ws.getModel(req.baseModelId)
      if (base.status !== 'ready') throw new StoreError('conflict', `Model "${base.name}" is not ready to be retrained (${base.status})`)
      const extra = (req.extraCorpusPaths ?? []).map((p) => deps.requireGranted(p, 'Training on a corpus file'))
      const docs = ws.labelledDocuments({ statuses: ['done', 'in_progress'], includeGold: false })
      if (docs.length < 2) {
        throw new StoreError('invalid_request', 'Review at least 2 documents first: one part trains the model, the other measures it')
      }
      const seed = req.seed ?? DEFAULTS.seed
      const fraction = req.heldOutFraction ?? DEFAULTS.heldOut
      const nHeld = Math.min(docs.length - 1, Math.max(1, Math.round(docs.length * fraction)))
      const { train, heldOut } = splitDocuments(docs, nHeld, seed)
      const epochs = req.epochs ?? DEFAULTS.retrainEpochs
      const { signal, job, end } = begin(req.jobId, 'training', `Retraining ${base.name}`)
      job.models.add(base.id)
      let rec: ModelRecord | null = null
      let runId: number | null = null
      const label = `${base.name} (retraining)`
      const emit = progressEmitter(req.jobId, label)
      try {
        rec = await reserve(ws, {
          name: ws.uniqueModelName(`${base.name} (retrained)`),
          kind: base.kind,
          parentId: base.id,
          distillation: base.distillation,
        })
        job.models.add(rec.id)
        runId = job.runId = ws.startRun('retrain', rec.id, { baseModelId: base.id, epochs, seed, heldOut: heldOut.length, train: train.length })
        const r = await host().request(
          'retrain',
          { baseDir: base.path, candidateDir: rec.path, train, heldOut, extraCorpusPaths: extra, epochs, seed },
          { signal, onProgress: emit },
        )
        emit.flush()
        const out: RetrainResult = {
          cancelled: r.cancelled,
          notes: r.notes,
          candidate: null,
          baseModelId: base.id,
          before: withTypes(r.before)!,
          after: withTypes(r.after),
          trainDocuments: train.length + r.extraDocuments,
          heldOutDocuments: heldOut.length,
          curve: r.curve,
        }
        if (r.cancelled || !r.saved || !r.summary) {
          await discard(ws, rec)
          finishRun(ws, runId, r.cancelled ? 'cancelled' : 'failed', { before: r.before })
          return out
        }
        const model = ws.updateModel(rec.id, {
          status: 'candidate',
          config: { layers: r.summary.layers, hidden: r.summary.hidden, heads: r.summary.heads, parameters: r.summary.parameters, bytes: r.summary.bytes },
          entityTypes: r.summary.entityTypes,
          trainedOn: r.backend,
          devScores: withTypes(r.after),
          trainingSummary:
            `Retrained from ${base.name} on ${plural(train.length, 'reviewed document')}` +
            (r.extraDocuments ? ` + ${plural(r.extraDocuments, 'corpus document')}` : '') +
            `, ${heldOut.length} held out; held-out F1 ${(100 * r.before.f1).toFixed(1)} → ${(100 * (r.after?.f1 ?? 0)).toFixed(1)}`,
        })
        finishRun(ws, runId, 'done', { before: r.before, after: r.after }, model.id)
        return { ...out, candidate: toInfo(model) }
      } catch (e) {
        const cancelled = isStoreError(e) && e.code === 'cancelled'
        if (runId !== null) finishRun(ws, runId, cancelled ? 'cancelled' : 'failed', { error: (e as Error).message })
        if (rec) await discard(ws, rec)
        throw e
      } finally {
        end()
      }
    },

    async 'retrain:decide'(req) {
      const ws = workspace()
      const rec = ws.getModel(req.candidateId)
      if (rec.status !== 'candidate') throw new StoreError('conflict', `Model "${rec.name}" is not a retrain candidate`)
      if (req.keep) {
        ws.updateModel(rec.id, { status: 'ready' })
        return { kept: true, model: toInfo(ws.setActiveModel(rec.id)) }
      }
      await releaseHostFiles(rec.path)
      ws.deleteModel(rec.id)
      await removeFolder(ws, rec.path)
      return { kept: false, model: null }
    },

    async 'distill:start'(req) {
      const ws = workspace()
      const teacher = ws.getModel(req.teacherId)
      if (teacher.status !== 'ready') throw new StoreError('conflict', `Model "${teacher.name}" is not ready (${teacher.status})`)
      const layersList = [...new Set(req.layers)]
      const tooDeep = layersList.filter((n) => n > teacher.layers)
      if (tooDeep.length) {
        throw new StoreError('invalid_request', `"${teacher.name}" has ${teacher.layers} layers: a student can have at most that many (asked for ${tooDeep.join(', ')})`)
      }
      const docs = trainingDocuments(ws)
      if (mentionCount(docs) === 0) throw new StoreError('invalid_request', 'Nothing to distil on yet: annotate some documents first')
      const seed = req.seed ?? DEFAULTS.seed
      const epochs = req.epochs ?? DEFAULTS.distillEpochs
      const { train, heldOut: dev } = splitDocuments(docs, devSize(docs.length), seed)
      const { signal, job, end } = begin(req.jobId, 'training', `Distilling ${teacher.name}`)
      job.models.add(teacher.id)
      const students: ModelInfo[] = []
      let cancelled = false
      try {
        for (const layers of layersList) {
          if (signal.aborted) {
            cancelled = true
            break
          }
          const label = `${layers}-layer student`
          const emit = progressEmitter(req.jobId, label)
          const rec = await reserve(ws, {
            name: ws.uniqueModelName(`${teacher.name} → ${layers} layers`),
            kind: 'student',
            parentId: teacher.id,
            distillation: { teacherId: teacher.id, mode: req.mode },
          })
          job.models.add(rec.id)
          const runId = (job.runId = ws.startRun('distill', rec.id, { teacherId: teacher.id, layers, mode: req.mode, epochs, seed }))
          try {
            const r = await host().request(
              'distill',
              { teacherDir: teacher.path, outDir: rec.path, layers, mode: req.mode, train, dev, epochs, seed },
              { signal, onProgress: emit },
            )
            emit.flush()
            if (r.cancelled || !r.saved || !r.summary) {
              cancelled ||= r.cancelled
              await discard(ws, rec)
              finishRun(ws, runId, r.cancelled ? 'cancelled' : 'failed', { steps: r.steps })
              if (r.cancelled) break
              continue
            }
            const model = ws.updateModel(rec.id, {
              status: 'ready',
              config: { layers: r.summary.layers, hidden: r.summary.hidden, heads: r.summary.heads, parameters: r.summary.parameters, bytes: r.summary.bytes },
              entityTypes: r.summary.entityTypes,
              trainedOn: r.backend,
              devScores: withTypes(r.devScores),
              trainingSummary:
                `Distilled from ${teacher.name} (${req.mode} KD, teacher layers ${r.layerMap.join(', ')}) on ${plural(train.length, 'document')}` +
                (dev.length ? `, ${dev.length} held out for devel` : '') +
                `; ${r.epochs} epochs`,
            })
            finishRun(ws, runId, 'done', { devScores: r.devScores, steps: r.steps, seconds: r.seconds })
            students.push(toInfo(model))
          } catch (e) {
            const wasCancel = isStoreError(e) && e.code === 'cancelled'
            finishRun(ws, runId, wasCancel ? 'cancelled' : 'failed', { error: (e as Error).message })
            await discard(ws, rec)
            if (wasCancel) {
              cancelled = true
              break
            }
            throw e
          } finally {
            job.models.delete(rec.id)
          }
        }
        return { cancelled, students }
      } finally {
        end()
      }
    },

    async 'compare:run'(req): Promise<ComparisonReport> {
      const ws = workspace()
      const models = req.modelIds.map((id) => ws.getModel(id))
      const notReady = models.filter((m) => m.status === 'training')
      if (notReady.length) throw new StoreError('conflict', `Still being trained: ${notReady.map((m) => m.name).join(', ')}`)
      let gold = req.documentIds ? ws.labelledDocumentsById(req.documentIds) : ws.labelledDocuments({ statuses: ['done'], includeGold: false })
      if (!req.documentIds && gold.length === 0) gold = ws.labelledDocuments({ statuses: [], includeGold: true })
      if (gold.length === 0) throw new StoreError('invalid_request', 'No gold documents: mark reviewed documents done (or import annotated ones) first')
      const { signal, job, end } = begin(req.jobId, 'training', 'A model comparison')
      for (const m of models) job.models.add(m.id)
      const runId = (job.runId = ws.startRun('compare', models[0].id, { modelIds: req.modelIds, documents: gold.length }))
      const emit = progressEmitter(req.jobId, 'Comparison')
      try {
        // compareModels has no cancel hook: a cancel stops the host process after 2 s.
        const r = await host().request(
          'compare',
          { dirs: models.map((m) => m.path), names: models.map((m) => m.name), gold },
          { signal, onProgress: emit, cancelGraceMs: 2000 },
        )
        emit.flush()
        const rows: ComparisonRow[] = r.models.map((m, i) => ({
          modelId: models[i].id,
          name: models[i].name,
          layers: m.layers,
          parameters: m.parameters,
          bytes: m.bytes,
          overall: { precision: m.precision, recall: m.recall, f1: m.f1 },
          types: Object.fromEntries(Object.entries(m.types).map(([t, s]) => [t, pickScores(s)])),
          medianMsPerDocument: m.latency.medianMs,
          tokensPerSecond: m.tokensPerSecond,
          engine: m.engine,
          engineReason: m.engineReason,
          f1Retention: m.relative ? m.relative.f1Retention : 1,
          sizeReduction: m.relative ? m.relative.sizeReduction : 0,
          timeReduction: m.relative ? m.relative.timeReduction : 0,
        }))
        const report: ComparisonReport = {
          rows,
          documents: r.goldDocuments,
          measuredAt: r.createdAt,
          machine: `${r.host.cpus} CPU${r.host.cpus === 1 ? '' : 's'}, ${r.host.platform}/${r.host.arch}, Node ${r.host.node}`,
        }
        ctx.emit('job:progress', { jobId: req.jobId, done: 1, total: 1, message: 'Comparison finished' })
        finishRun(ws, runId, 'done', { rows: rows.map((x) => ({ modelId: x.modelId, f1: x.overall.f1, ms: x.medianMsPerDocument, engine: x.engine })) })
        return report
      } catch (e) {
        finishRun(ws, runId, isStoreError(e) && e.code === 'cancelled' ? 'cancelled' : 'failed', { error: (e as Error).message })
        throw e
      } finally {
        end()
      }
    },
  }
}
