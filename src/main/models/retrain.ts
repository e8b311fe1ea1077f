// retrain:start / retrain:decide: a candidate fine-tuned on reviewed documents, measured on a
// held-out part before and after, kept or discarded by the user.
import { RETRAIN_RECIPE, TRAIN_DEFAULTS } from '@shared/recipes'
import type { RetrainResult } from '@shared/ipc'
import { StoreError, type ModelRecord } from '../../core/store'
import type { Handlers } from '../handlers'
import { type ModelRuntime, plural, savedFolderFields, splitDocuments, toInfo } from './runtime'

export function retrainHandlers(rt: ModelRuntime): Pick<Handlers, 'retrain:start' | 'retrain:decide'> {
  const { deps, host, workspace, removeFolder, releaseHostFiles, begin, progressEmitter, reserve, discard, finishRun, abandonJob, withTypes } = rt
  return {
    async 'retrain:start'(req): Promise<RetrainResult> {
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
      const fraction = req.heldOutFraction ?? RETRAIN_RECIPE.heldOutFraction
      const nHeld = Math.min(docs.length - 1, Math.max(1, Math.round(docs.length * fraction)))
      const { train, heldOut } = splitDocuments(docs, nHeld, seed)
      const epochs = req.epochs ?? RETRAIN_RECIPE.epochs
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
          ...savedFolderFields(r.summary),
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
        await abandonJob(ws, runId, rec, e)
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
  }
}
