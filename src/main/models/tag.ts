// tag:run (suggestions from a model, stored batch by batch) and the channels that accept, reject
// and queue those suggestions for review.
import type { TagResult } from '@shared/ipc'
import { throttle } from '../jobs'
import { isStoreError, StoreError } from '../../core/store'
import type { Handlers } from '../handlers'
import { reviewQueue } from './review-queue'
import { plural, TAG_CHUNK, type ModelRuntime } from './runtime'

export function tagHandlers(rt: ModelRuntime): Pick<Handlers, 'tag:run' | 'suggestions:accept' | 'suggestions:reject' | 'suggestions:acceptAbove' | 'review:queue'> {
  const { ctx, host, workspace, writable, begin, finishRun } = rt
  return {
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
            tagged.docs.map((d) => ({ documentId: Number(d.id), suggestions: d.mentions, uncertainty: d.uncertainty, margin: d.margin, entropy: d.entropy })),
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
      return reviewQueue(workspace(), req.limit ?? 50)
    },
  }
}
