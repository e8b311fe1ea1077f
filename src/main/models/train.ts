// models:train: a new teacher on the labelled documents, from scratch or from a model's encoder.
import { basename } from 'node:path'
import { FINETUNE_RECIPE, isScratchChoice, PRESET_NAMES, SCRATCH_RECIPE, TRAIN_DEFAULTS, WORD_LSTM } from '@shared/recipes'
import { StoreError, type ModelRecord } from '../../core/store'
import type { Handlers } from '../handlers'
import { mentionCount, type ModelRuntime, plural, savedFolderFields, splitDocuments, toInfo } from './runtime'

export function trainHandlers(rt: ModelRuntime): Pick<Handlers, 'models:train' | 'dialog:openWordVectors'> {
  const { ctx, deps, host, workspace, begin, progressEmitter, reserve, discard, finishRun, abandonJob, trainingDocuments, devSize, withTypes } = rt
  return {
    async 'dialog:openWordVectors'() {
      if (!ctx.dialogs.openWordVectors) throw new Error('This shell has no word-vector file dialog')
      const path = await ctx.dialogs.openWordVectors()
      if (path) deps.grant([path])
      return { path }
    },

    async 'models:train'(req) {
      if (req.preset !== undefined && !isScratchChoice(req.preset)) {
        throw new StoreError('invalid_request', `Unknown preset "${req.preset}"; choose ${[WORD_LSTM, ...PRESET_NAMES].join(', ')}`)
      }
      const ws = workspace()
      const base = req.baseModelId !== undefined ? ws.getModel(req.baseModelId) : null
      if (base && base.status !== 'ready') throw new StoreError('conflict', `Model "${base.name}" is not ready to train from (${base.status})`)
      // The file's grant is spent by this request, refused or not, as for every path a dialog gave.
      const [wordVectors] = req.wordVectorsPath !== undefined ? deps.takeReadGrants([req.wordVectorsPath], 'Training with word vectors') : []
      const docs = trainingDocuments(ws)
      if (mentionCount(docs) === 0) {
        throw new StoreError('invalid_request', 'Nothing to learn yet: annotate some documents (or import annotated ones) first')
      }
      const seed = req.seed ?? TRAIN_DEFAULTS.seed
      const epochs = req.epochs ?? (base ? FINETUNE_RECIPE.epochs : SCRATCH_RECIPE.epochs)
      const { train, heldOut: dev } = splitDocuments(docs, devSize(docs.length), seed)
      const { signal, job, end } = begin(req.jobId, 'training', `Training ${req.name}`)
      let rec: ModelRecord | null = null
      let runId: number | null = null
      const emit = progressEmitter(req.jobId, req.name)
      try {
        rec = await reserve(ws, { name: req.name, kind: 'teacher', parentId: base?.id ?? null })
        job.models.add(rec.id)
        if (base) job.models.add(base.id)
        runId = job.runId = ws.startRun('train', rec.id, { preset: req.preset ?? null, baseModelId: base?.id ?? null, epochs, seed, documents: docs.length, ...(wordVectors ? { wordVectors } : {}) })
        const r = await host().request(
          'trainModel',
          {
            dir: rec.path,
            ...(base ? { initDir: base.path } : { preset: req.preset }),
            ...(wordVectors ? { wordVectors } : {}),
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
          (base ? `; fine-tuned from ${base.name}` : `; ${req.preset} from scratch`) +
          (wordVectors ? `, word table from ${basename(wordVectors)}` : '') +
          `, ${r.epochs} of ${epochs} epochs` +
          (r.bestEpoch !== null && dev.length ? `, best epoch ${r.bestEpoch}` : '') +
          (r.cancelled ? '; stopped by the user (best checkpoint so far kept)' : '')
        const model = ws.updateModel(rec.id, {
          status: 'ready',
          ...savedFolderFields(r.summary),
          trainedOn: r.backend,
          devScores: withTypes(r.devScores),
          trainingSummary: summary,
        })
        finishRun(ws, runId, r.cancelled ? 'cancelled' : 'done', { devScores: r.devScores, steps: r.steps, seconds: r.seconds })
        return { cancelled: r.cancelled, model: toInfo(model) }
      } catch (e) {
        if (await abandonJob(ws, runId, rec, e)) return { cancelled: true, model: null }
        throw e
      } finally {
        end()
      }
    },
  }
}
