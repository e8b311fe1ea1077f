// distill:plan and distill:start: smaller students distilled from one or several teachers, one
// per requested depth (word-tagger teachers alone: one new word tagger), each followed by its int8
// version when asked. core/distill/plan decides the method (soft labels, or the teachers' tags on
// the unreviewed documents) and the student's kind.
import { DISTILL_RECIPE, SCRATCH_RECIPE, TRAIN_DEFAULTS } from '@shared/recipes'
import { MAX_TEACHERS, type DistillPlan, type ModelDistillation, type ModelInfo } from '@shared/ipc'
import { StoreError, type ModelRecord, type Workspace } from '../../core/store'
import { chooseMethod, incompatibility, teacherFacts, type PlanModel, type TeacherFacts } from '../../core/distill/plan'
import type { Handlers } from '../handlers'
import { mentionCount, type ModelRuntime, plural, savedFolderFields, splitDocuments, toInfo } from './runtime'

/**
 * The app's int8 job (host job 'quantize') scores its result as a BERT folder, so a word-tagger
 * student gets none here; the CLI's quantize does write a word tagger's int8 version.
 */
const WORD_TAGGER_STUDENT_INT8_UNAVAILABLE = "the app's int8 job reads BERT folders only; `fastbioner quantize --model DIR --out DIR2` makes a word tagger's int8 version"

const asPlanModel = (m: ModelRecord): PlanModel => ({ id: m.id, name: m.name, dir: m.path, layers: m.layers, entityTypes: m.entityTypes })

export function distillHandlers(rt: ModelRuntime): Pick<Handlers, 'distill:start' | 'distill:plan'> {
  const { host, workspace, begin, progressEmitter, reserve, discard, finishRun, abandonJob, trainingDocuments, devSize, withTypes } = rt

  /** Unreviewed documents that are not training or devel documents (no gold annotations): what teachers may tag. */
  const unreviewedIds = (ws: Workspace): number[] => {
    const used = new Set(trainingDocuments(ws).map((d) => d.id))
    return ws.documentIdsWithStatus('unreviewed').filter((id) => !used.has(String(id)))
  }

  const plan = (ws: Workspace, teacherIds: readonly number[]) => {
    if (new Set(teacherIds).size !== teacherIds.length) throw new StoreError('invalid_request', 'A teacher is listed twice')
    const chosen = teacherIds.map((id) => ws.getModel(id))
    const notReady = chosen.find((m) => m.status !== 'ready')
    if (notReady) throw new StoreError('conflict', `Model "${notReady.name}" is not ready (${notReady.status})`)
    const facts = new Map<number, TeacherFacts | Error>()
    const factsOf = (m: ModelRecord) => {
      if (!facts.has(m.id)) {
        try {
          facts.set(m.id, teacherFacts(m.path))
        } catch (e) {
          facts.set(m.id, e as Error)
        }
      }
      return facts.get(m.id)!
    }
    const broken = chosen.find((m) => factsOf(m) instanceof Error)
    if (broken) throw new StoreError('invalid_request', `"${broken.name}" cannot teach: ${(factsOf(broken) as Error).message}`)
    const unreviewed = unreviewedIds(ws)
    const choice = chooseMethod(chosen.map(asPlanModel), chosen.map((m) => factsOf(m) as TeacherFacts), unreviewed.length)
    const candidates = ws.listModels().filter((m) => m.status === 'ready').map((m) => {
      const f = factsOf(m)
      const isChosen = chosen.some((c) => c.id === m.id)
      const reason =
        f instanceof Error
          ? `its folder cannot be read (${f.message})`
          : (incompatibility(asPlanModel(m), chosen.map(asPlanModel)) ?? (!isChosen && chosen.length >= MAX_TEACHERS ? `at most ${MAX_TEACHERS} teachers` : null))
      return { modelId: m.id, wordTagger: !(f instanceof Error) && f.wordTagger, compatible: reason === null, reason }
    })
    const result: DistillPlan = {
      method: choice.problem ? null : choice.method,
      studentKind: choice.problem ? null : choice.student,
      int8Unavailable: choice.student === 'word-tagger' ? WORD_TAGGER_STUDENT_INT8_UNAVAILABLE : null,
      summary: choice.summary,
      problem: choice.problem,
      baseId: choice.base === null ? null : chosen[choice.base].id,
      maxLayers: choice.maxLayers,
      unreviewedDocuments: choice.method === 'teacher-tags' ? unreviewed.length : 0,
      candidates,
    }
    return { result, chosen, base: choice.base === null ? null : chosen[choice.base], unreviewed }
  }

  return {
    async 'distill:plan'(req) {
      return plan(workspace(), req.teacherIds).result
    },

    async 'distill:start'(req) {
      const ws = workspace()
      const { result: p, chosen, base, unreviewed } = plan(ws, req.teacherIds)
      const studentKind = p.studentKind
      if (p.problem || !p.method || !studentKind) throw new StoreError('invalid_request', p.problem ?? 'Nothing to distil with these teachers')
      const method = p.method
      // The student's parent: the BERT it is a copy of; a word-tagger student's first teacher.
      const teacher = base ?? chosen[0]
      const requested = [...new Set(req.layers ?? [])]
      if (studentKind === 'word-tagger' && requested.length) {
        throw new StoreError('invalid_request', `These teachers are all word taggers: the student is one new word tagger (BiLSTM-CRF), which has no BERT layers to choose; leave out layers (asked for ${requested.join(', ')})`)
      }
      if (req.int8 && p.int8Unavailable) throw new StoreError('invalid_request', `No int8 version of this student: ${p.int8Unavailable}`)
      if (studentKind === 'bert' && !requested.length) throw new StoreError('invalid_request', `Choose the student's layers (at most ${p.maxLayers})`)
      if (method === 'soft-labels' && req.mode === 'none' && chosen.length > 1) {
        throw new StoreError('invalid_request', `KD mode 'none' learns from the gold labels alone, without a teacher: choose one teacher (its copy is the student) or another mode`)
      }
      const tooDeep = requested.filter((n) => n > p.maxLayers)
      if (tooDeep.length) {
        const who = chosen.length > 1 && method === 'soft-labels' ? 'The shallowest teacher' : `"${teacher.name}"`
        throw new StoreError('invalid_request', `${who} has ${p.maxLayers} layers: a student can have at most that many (asked for ${tooDeep.join(', ')})`)
      }
      const docs = trainingDocuments(ws)
      if (mentionCount(docs) === 0) throw new StoreError('invalid_request', 'Nothing to distil on yet: annotate some documents first')
      const seed = req.seed ?? TRAIN_DEFAULTS.seed
      // A word-tagger student trains from scratch, as models:train's word tagger does.
      const epochs = req.epochs ?? (studentKind === 'word-tagger' ? SCRATCH_RECIPE.epochs : DISTILL_RECIPE.epochs)
      const namePrefix = chosen.length > 1 ? `${teacher.name} + ${chosen.length - 1} more` : teacher.name
      const studentsToMake =
        studentKind === 'word-tagger'
          ? [{ layers: null, label: 'word-tagger student', name: `${namePrefix} → word tagger` }]
          : requested.map((layers) => ({ layers, label: `${layers}-layer student`, name: `${namePrefix} → ${plural(layers, 'layer')}` }))
      const { train, heldOut: dev } = splitDocuments(docs, devSize(docs.length), seed)
      const teacherNames = chosen.map((t) => t.name).join(', ')
      // teacher tags: a seeded sample of the unreviewed documents, so a large workspace keeps the wait bounded.
      const unlabelled =
        method === 'teacher-tags' ? ws.documentsForTagging(splitDocuments(unreviewed, Math.min(unreviewed.length, DISTILL_RECIPE.taggedDocuments), seed).heldOut) : undefined
      const distillation: ModelDistillation = { teachers: chosen.map((t) => ({ id: t.id, name: t.name })), method, mode: method === 'soft-labels' ? req.mode : null }
      const { signal, job, end } = begin(req.jobId, 'training', `Distilling ${teacherNames}`)
      for (const t of chosen) job.models.add(t.id)
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
        for (const { layers, label, name } of studentsToMake) {
          if (signal.aborted) {
            cancelled = true
            break
          }
          let student: ModelInfo
          const emit = progressEmitter(req.jobId, label)
          const rec = await reserve(ws, { name: ws.uniqueModelName(name), kind: 'student', parentId: teacher.id, distillation })
          job.models.add(rec.id)
          const runId = (job.runId = ws.startRun('distill', rec.id, { teacherIds: chosen.map((t) => t.id), method, studentKind, layers, mode: distillation.mode, epochs, seed }))
          try {
            const r = await host().request(
              'distill',
              {
                teacherDirs: chosen.map((t) => t.path),
                studentKind,
                base: chosen.indexOf(teacher),
                method,
                outDir: rec.path,
                layers: layers ?? 0,
                mode: req.mode,
                train,
                dev,
                unlabelled,
                epochs,
                seed,
              },
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
                (method === 'soft-labels'
                  ? `Distilled from ${teacherNames} (${req.mode} KD${chosen.length > 1 ? ', soft labels averaged, temperature ramp, a feature loss per teacher' : ''}, layers of ${teacher.name}: ${r.layerMap.join(', ')}) on ${plural(train.length, 'document')}`
                  : `Learnt the tags of ${teacherNames} on ${plural(unlabelled!.length, 'unreviewed document')} (${(r.taggedMentions ?? []).map((n, k) => `${chosen[k].name}: ${plural(n, 'mention')}`).join(', ')}${chosen.length > 1 ? `; ${plural(r.agreedMentions ?? 0, 'mention')} more than half of them agree on, which the student learnt` : ''}) beside ${plural(train.length, 'reviewed document')}; ${studentKind === 'word-tagger' ? 'a new word tagger (BiLSTM-CRF)' : `a copy of ${teacher.name}'s layers ${r.layerMap.join(', ')}`}`) +
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
