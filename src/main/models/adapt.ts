// models:adapt ("Adapt to my documents"): a workspace model's encoder continues masked-LM
// pretraining on the text of the workspace's own documents, registered as a new model to train
// or retrain from. The base model stays as it is (its folder is only read).
import { basename, extname } from 'node:path'
import { ADAPT_RECIPE, TRAIN_DEFAULTS } from '@shared/recipes'
import type { ModelAdaptResult } from '@shared/ipc'
import { documentLines, wordCount } from '../../core/pretrain/text'
import { StoreError, type ModelRecord } from '../../core/store'
import type { Handlers } from '../handlers'
import { type ModelRuntime, plural, savedFolderFields, toInfo } from './runtime'

/** "<base> adapted to <workspace>", within the registry's 100 characters. */
export function adaptedModelName(base: string, workspacePath: string): string {
  const ws = basename(workspacePath, extname(workspacePath)) || 'this workspace'
  const suffix = ` adapted to ${ws.slice(0, 40)}`
  return `${base.slice(0, 100 - suffix.length - 8)}${suffix}`
}

export function adaptHandlers(rt: ModelRuntime): Pick<Handlers, 'models:adapt'> {
  const { host, workspace, begin, progressEmitter, reserve, discard, finishRun, abandonJob } = rt
  return {
    async 'models:adapt'(req): Promise<ModelAdaptResult> {
      const ws = workspace()
      const base = ws.getModel(req.baseModelId)
      if (base.status !== 'ready') throw new StoreError('conflict', `Model "${base.name}" is not ready to be adapted (${base.status === 'candidate' ? 'a retrain candidate: keep it first' : 'still being written'})`)
      const documents = ws.documentTexts().map((d) => ({ id: d.id, lines: documentLines(d) }))
      const words = wordCount(documents.flatMap((d) => d.lines))
      if (words < ADAPT_RECIPE.minWords) {
        throw new StoreError(
          'invalid_request',
          `Too little text to adapt a model to: the workspace's ${plural(documents.length, 'document')} hold ${plural(words, 'word')}, ` +
            `and adapting needs at least ${ADAPT_RECIPE.minWords.toLocaleString('en-US')} (about ten abstracts). Import more documents first.`,
        )
      }
      const seed = req.seed ?? TRAIN_DEFAULTS.seed
      const epochs = req.epochs ?? ADAPT_RECIPE.epochs
      const name = req.name ?? ws.uniqueModelName(adaptedModelName(base.name, ws.path))
      const { signal, job, end } = begin(req.jobId, 'training', `Adapting ${base.name}`)
      job.models.add(base.id)
      let rec: ModelRecord | null = null
      let runId: number | null = null
      const emit = progressEmitter(req.jobId, name)
      try {
        rec = await reserve(ws, { name, kind: 'teacher', parentId: base.id })
        job.models.add(rec.id)
        runId = job.runId = ws.startRun('adapt', rec.id, { baseModelId: base.id, epochs, seed, documents: documents.length, words })
        const r = await host().request(
          'adaptModel',
          {
            baseDir: base.path,
            outDir: rec.path,
            documents,
            minWords: ADAPT_RECIPE.minWords,
            epochs,
            maxSteps: ADAPT_RECIPE.maxSteps,
            batchSize: ADAPT_RECIPE.batchSize,
            maxLength: ADAPT_RECIPE.maxLength,
            heldOutEvery: ADAPT_RECIPE.heldOutEvery,
            seed,
            provenance: { workspace: ws.path, baseModel: base.name },
          },
          { signal, onProgress: emit },
        )
        emit.flush()
        const heldOut = r.heldOut.map((h) => ({ epoch: h.epoch, loss: h.loss, accuracy: h.accuracy }))
        if (r.cancelled || !r.saved || !r.summary) {
          await discard(ws, rec)
          finishRun(ws, runId, r.cancelled ? 'cancelled' : 'failed', { steps: r.steps, heldOut })
          return { cancelled: r.cancelled, model: null, heldOut, notes: r.notes }
        }
        const last = heldOut[heldOut.length - 1]
        const accuracy = last ? `; held-out masked-word accuracy ${(100 * last.accuracy).toFixed(1)}%` : ''
        const model = ws.updateModel(rec.id, {
          status: 'ready',
          ...savedFolderFields(r.summary),
          trainedOn: r.backend,
          devScores: null,
          trainingSummary:
            `${base.name} adapted to this workspace's text: continued masked-language-model pretraining on ${plural(r.documents, 'document')} ` +
            `(${plural(r.words, 'word')}), ${r.epochs} of ${epochs} epochs, ${plural(r.steps, 'step')}${accuracy}. ` +
            `Its entity heads are ${base.name}'s, not yet tuned to the adapted encoder: retrain it on reviewed documents (or train a new model from it) before tagging with it.`,
          adaptation: { documents: r.documents, words: r.words, epochs: r.epochs, steps: r.steps, heldOutAccuracy: last?.accuracy ?? null },
        })
        finishRun(ws, runId, 'done', { heldOut, steps: r.steps, seconds: r.seconds, firstLoss: r.firstLoss, lastLoss: r.lastLoss, tokensPerSecond: r.tokensPerSecond, lr: r.lr })
        return { cancelled: false, model: toInfo(model), heldOut, notes: r.notes }
      } catch (e) {
        if (await abandonJob(ws, runId, rec, e)) return { cancelled: true, model: null, heldOut: [], notes: [] }
        throw e
      } finally {
        end()
      }
    },
  }
}
