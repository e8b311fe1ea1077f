// distill:start: smaller students distilled from a teacher, one per requested depth.
import { DISTILL_RECIPE, TRAIN_DEFAULTS } from '@shared/recipes'
import type { ModelInfo } from '@shared/ipc'
import { isStoreError, StoreError } from '../../core/store'
import type { Handlers } from '../api'
import { configOf, mentionCount, type ModelRuntime, plural, splitDocuments, toInfo } from './runtime'

export function distillHandlers(rt: ModelRuntime): Pick<Handlers, 'distill:start'> {
  const { host, workspace, begin, progressEmitter, reserve, discard, finishRun, trainingDocuments, devSize, withTypes } = rt
  return {
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
      const seed = req.seed ?? TRAIN_DEFAULTS.seed
      const epochs = req.epochs ?? DISTILL_RECIPE.epochs
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
              config: configOf(r.summary),
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
  }
}
