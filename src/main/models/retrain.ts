// retrain:start / retrain:decide: a candidate fine-tuned on reviewed documents, measured on the
// fixed held-out part before and after (a learning-curve point), kept or discarded by the user —
// or by Auto-improve (./learning.ts), which starts the same job.
import { LEARNING_LOOP, RETRAIN_RECIPE, TRAIN_DEFAULTS } from '@shared/recipes'
import type { RetrainResult } from '@shared/ipc'
import { splitHeldOut } from '../../core/active/held-out'
import { StoreError, type ModelRecord } from '../../core/store'
import type { Handlers, RequestPayload } from '../handlers'
import { type ModelRuntime, plural, savedFolderFields, toInfo } from './runtime'

/** Who started a retrain: the person (retrain:start) or Auto-improve (./learning.ts). */
export type RetrainTrigger = 'manual' | 'auto'

/** The reviewed documents a retrain learns from and is measured on: the fixed held-out rule (LEARNING_LOOP). */
export function reviewedSplit<T extends { id: string }>(docs: readonly T[]): { train: T[]; heldOut: T[] } {
  return splitHeldOut(docs, (d) => Number(d.id), { every: LEARNING_LOOP.heldOutEvery, seed: LEARNING_LOOP.heldOutSeed, min: LEARNING_LOOP.minHeldOut })
}

export interface RetrainJobs {
  handlers: Pick<Handlers, 'retrain:start' | 'retrain:decide'>
  /** retrain:start for a caller in main; `trigger` is recorded on the learning-curve point. */
  start(req: RequestPayload<'retrain:start'>, trigger: RetrainTrigger): Promise<RetrainResult>
}

/**
 * `onPoint`: a finished retrain added a learning-curve point (the learning loop tells the window).
 */
export function retrainJobs(rt: ModelRuntime, onPoint: () => void = () => undefined): RetrainJobs {
  const { deps, host, workspace, removeFolder, releaseHostFiles, begin, progressEmitter, reserve, discard, finishRun, abandonJob, withTypes } = rt
  async function start(req: RequestPayload<'retrain:start'>, trigger: RetrainTrigger): Promise<RetrainResult> {
    const ws = workspace()
    const base = ws.getModel(req.baseModelId)
    if (base.status !== 'ready') throw new StoreError('conflict', `Model "${base.name}" is not ready to be retrained (${base.status})`)
    const docs = ws.labelledDocuments({ statuses: ['done', 'in_progress'], includeGold: false })
    if (docs.length < 2) {
      throw new StoreError('invalid_request', 'Review at least 2 documents first: one part trains the model, the other measures it')
    }
    // Spent only once the request is sound: a refused retrain leaves the user's choice usable.
    const extra = deps.takeReadGrants(req.extraCorpusPaths ?? [], 'Training on a corpus file')
    const seed = req.seed ?? TRAIN_DEFAULTS.seed
    const { train, heldOut } = reviewedSplit(docs)
    const epochs = req.epochs ?? RETRAIN_RECIPE.epochs
    const { signal, job, end } = begin(req.jobId, 'training', `${trigger === 'auto' ? 'Auto-improve: r' : 'R'}etraining ${base.name}`)
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
        { baseDir: base.path, candidateDir: rec.path, train, heldOut, extraCorpusPaths: extra, epochs, maxSteps: RETRAIN_RECIPE.maxSteps, seed },
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
        ...savedFolderFields(r.summary),
        trainedOn: r.backend,
        devScores: withTypes(r.after),
        trainingSummary:
          `Retrained from ${base.name} on ${plural(train.length, 'reviewed document')}` +
          (r.extraDocuments ? ` + ${plural(r.extraDocuments, 'corpus document')}` : '') +
          `, ${heldOut.length} held out; held-out F1 ${(100 * r.before.f1).toFixed(1)} → ${(100 * (r.after?.f1 ?? 0)).toFixed(1)}`,
      })
      finishRun(ws, runId, 'done', { before: r.before, after: r.after }, model.id)
      ws.addLearningPoint({
        modelId: model.id,
        baseModelId: base.id,
        trigger,
        reviewed: docs.length,
        heldOut: heldOut.length,
        f1Before: r.before.f1,
        f1After: r.after?.f1 ?? 0,
      })
      onPoint()
      return { ...out, candidate: toInfo(model) }
    } catch (e) {
      await abandonJob(ws, runId, rec, e)
      throw e
    } finally {
      end()
    }
  }

  const handlers: RetrainJobs['handlers'] = {
    async 'retrain:start'(req): Promise<RetrainResult> {
      return start(req, 'manual')
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
  }
  return { handlers, start }
}
