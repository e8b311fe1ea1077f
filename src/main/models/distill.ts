// distill:start: smaller students distilled from a teacher, one per requested depth, each
// followed by its int8 version when asked.
import { DISTILL_RECIPE, TRAIN_DEFAULTS } from '@shared/recipes'
import type { ModelInfo } from '@shared/ipc'
import { StoreError } from '../../core/store'
import { isWordTaggerFolder } from '../../core/model/word-tagger'
import type { Handlers } from '../handlers'
import { mentionCount, type ModelRuntime, plural, savedFolderFields, splitDocuments, toInfo } from './runtime'

export function distillHandlers(rt: ModelRuntime): Pick<Handlers, 'distill:start'> {
  const { host, workspace, begin, progressEmitter, reserve, discard, finishRun, abandonJob, trainingDocuments, devSize, withTypes } = rt
  return {
    async 'distill:start'(req) {
      const ws = workspace()
      const teacher = ws.getModel(req.teacherId)
      if (teacher.status !== 'ready') throw new StoreError('conflict', `Model "${teacher.name}" is not ready (${teacher.status})`)
      if (isWordTaggerFolder(teacher.path)) {
        throw new StoreError('invalid_request', `"${teacher.name}" is a word tagger: distilling it into a BERT student is not available yet; choose a BERT teacher`)
      }
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

      /**
       * The int8 version of a ready student (host job 'quantize'), scored on the same held-out
       * documents and registered as its child; null when cancelled. A failure discards the int8
       * record and throws, as a failed student does; the float student stays either way.
       */
      const int8Version = async (student: ModelInfo, label: string): Promise<ModelInfo | null> => {
        const emit = progressEmitter(req.jobId, label)
        const rec = await reserve(ws, {
          name: ws.uniqueModelName(`${student.name} · int8`),
          kind: 'student',
          parentId: student.id,
          distillation: student.distillation,
        })
        job.models.add(student.id)
        job.models.add(rec.id)
        const runId = (job.runId = ws.startRun('quantize', rec.id, { parentId: student.id }))
        try {
          const r = await host().request('quantize', { modelDir: student.path, outDir: rec.path, dev }, { signal, onProgress: emit })
          emit.flush()
          const f1 = (s: { f1: number }) => (s.f1 * 100).toFixed(1)
          const model = ws.updateModel(rec.id, {
            status: 'ready',
            ...savedFolderFields(r.summary),
            trainedOn: student.trainedOn,
            devScores: withTypes(r.devScores),
            trainingSummary:
              `int8 version of ${student.name} (per-row int8 weights, dynamic int8 activations)` +
              (r.devScores && student.devScores ? `; devel F1 ${f1(student.devScores)} → ${f1(r.devScores)}` : ''),
          })
          finishRun(ws, runId, 'done', { devScores: r.devScores, seconds: r.seconds })
          return toInfo(model)
        } catch (e) {
          if (await abandonJob(ws, runId, rec, e)) return null
          throw e
        } finally {
          job.models.delete(rec.id)
          job.models.delete(student.id)
        }
      }

      try {
        for (const layers of layersList) {
          if (signal.aborted) {
            cancelled = true
            break
          }
          const label = `${layers}-layer student`
          let student: ModelInfo
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
              ...savedFolderFields(r.summary),
              trainedOn: r.backend,
              devScores: withTypes(r.devScores),
              trainingSummary:
                `Distilled from ${teacher.name} (${req.mode} KD, teacher layers ${r.layerMap.join(', ')}) on ${plural(train.length, 'document')}` +
                (dev.length ? `, ${dev.length} held out for devel` : '') +
                `; ${r.epochs} epochs`,
            })
            finishRun(ws, runId, 'done', { devScores: r.devScores, steps: r.steps, seconds: r.seconds })
            student = toInfo(model)
            students.push(student)
          } catch (e) {
            if (await abandonJob(ws, runId, rec, e)) {
              cancelled = true
              break
            }
            throw e
          } finally {
            job.models.delete(rec.id)
          }
          if (req.int8) {
            if (signal.aborted) {
              cancelled = true
              break
            }
            const int8 = await int8Version(student, `${label} · int8`)
            if (!int8) {
              cancelled = true
              break
            }
            students.push(int8)
          }
        }
        return { cancelled, students }
      } finally {
        end()
      }
    },
  }
}
