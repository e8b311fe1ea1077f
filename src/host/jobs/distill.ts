// The distill job: a smaller student distilled from one or several workspace models, a copy of
// the base teacher (a BERT). Soft labels through core/distill, or — for teachers that cannot give
// the student soft labels (a word tagger, another vocabulary) — their tags on unlabelled
// documents, the mentions most of them agree on (sequence-level KD from an ensemble, as
// `fastbioner train --teacher … --transfer …` does). Word taggers alone teach that way a new word
// tagger, trained by the app's word-tagger job.
import { isWordTaggerFolder } from '../../core/model/word-tagger'
import { continuedTrainingLr, TRAIN_DEFAULTS, WORD_LSTM } from '@shared/recipes'
import type { CorpusDocument } from '@shared/domain'
import { distillCheckpoints, taskLabels } from '../../core/distill/run'
import { createStudent } from '../../core/distill/student'
import { DEFAULT_HEAD } from '../../core/model/bert'
import { loadCheckpoint } from '../../core/model/checkpoint'
import { headLabelsOf, readCheckpointInfo } from '../../core/model/checkpoint-files'
import { WordPieceTokenizer } from '../../core/nlp/tokenizer'
import { openTagger, windowSettingsOf } from '../../core/tag/open'
import { train } from '../../core/train/loop'
import { majorityMentions } from '../../core/train/transfer'
import type { HostParams, HostResult, TrainedCheckpoint } from '../protocol'
import type { JobContext } from '../job'
import { ensureBackend, HostInputError, inferenceThreads, log, phase, stepReporter, trainedCheckpoint, type Job } from './common'
import { trainWordTaggerJob, WORD_TAGGER_ENGINE } from './word-tagger'

export const distill: Job<'distill'> = async (p, ctx) => {
  if (p.studentKind === 'word-tagger') return wordTaggerStudent(p, ctx)
  const baseDir = p.teacherDirs[p.base]
  if (baseDir === undefined) throw new HostInputError(`base teacher ${p.base} is not one of the ${p.teacherDirs.length} teachers`)
  if (isWordTaggerFolder(baseDir)) throw new HostInputError(`${baseDir} is a word tagger: the student is a copy of a BERT teacher; choose one as the base`)
  const words = p.teacherDirs.filter((d) => isWordTaggerFolder(d))
  if (p.method === 'soft-labels' && words.length) throw new HostInputError(`${words.join(', ')}: a word tagger gives no soft labels to a BERT student; distil with its tags (teacher-tags)`)
  const depths = p.teacherDirs.filter((d) => p.method === 'soft-labels' || d === baseDir).map((d) => readCheckpointInfo(d).config.numHiddenLayers)
  const most = Math.min(...depths)
  if (!(p.layers >= 1 && p.layers <= most)) {
    throw new HostInputError(`a ${p.layers}-layer student cannot be distilled from ${p.teacherDirs.length > 1 ? 'these teachers' : `a ${most}-layer teacher`} (1..${most} layers)`)
  }
  return p.method === 'soft-labels' ? softLabels(p, ctx) : teacherTags(p, ctx)
}

/** The base teacher's windows and the student's learning rate (half the base's when known). */
function baseSettings(p: HostParams<'distill'>) {
  const info = readCheckpointInfo(p.teacherDirs[p.base])
  return { info, windows: windowSettingsOf(info), lr: p.lr ?? continuedTrainingLr(info.training.lr, info.config.hiddenSize) }
}

async function softLabels(p: HostParams<'distill'>, ctx: JobContext): Promise<HostResult<'distill'>> {
  const b = await ensureBackend()
  const t0 = performance.now()
  const { info: base, windows, lr } = baseSettings(p)
  const curve: TrainedCheckpoint['curve'] = []
  const report = stepReporter(ctx, curve)
  const headNames = Object.keys(headLabelsOf(base))
  const task = headNames.includes(DEFAULT_HEAD) ? DEFAULT_HEAD : headNames[0]
  const several = p.teacherDirs.length > 1
  phase(ctx, `Distilling a ${p.layers}-layer student${several ? ` from ${p.teacherDirs.length} teachers` : ''}`)
  // Several teachers: soft labels averaged, the temperature ramp and one feature loss per teacher
  // are distillCheckpoints' defaults, as for `fastbioner distill --teachers`.
  const run = await distillCheckpoints({
    teacherDirs: p.teacherDirs,
    initTeacher: p.base,
    layers: p.layers,
    tasks: [{ name: task, train: p.train, dev: p.dev.length ? p.dev : undefined }],
    kd: p.mode,
    outDir: p.outDir,
    epochs: p.epochs,
    seed: p.seed,
    lr,
    maxLength: windows.maxLength,
    sentenceLevel: windows.sentenceLevel,
    signal: ctx.signal,
    log,
    onProgress: (e) => {
      if (e.kind === 'cache') phase(ctx, `Computing the teachers' outputs: ${e.done} of ${e.total} examples`, e.done, e.total)
      else report({ ...e, kind: e.kind === 'eval' ? 'eval' : 'step' })
    },
    checkpoint: { metadata: { source: { teachers: p.teacherDirs, method: p.method } } },
  })
  return {
    ...(await trainedCheckpoint(run.result, {
      dir: p.outDir,
      dev: p.dev,
      t0,
      backend: b.name,
      curve,
      notes: [
        run.inherited
          ? `initialised from the base teacher's embeddings and layers ${run.layerMap.join(', ')}`
          : 'randomly initialised (the width differs from the teacher)',
        ...(several ? [`${p.teacherDirs.length} teachers: soft labels averaged, temperature ramp, a feature loss per teacher`] : []),
        `trainer: ${run.result.trainer} (${run.result.trainerReason})`,
      ],
    })),
    layerMap: run.layerMap,
  }
}

/** Each teacher's tags on the unlabelled documents: per teacher, the mentions it found in each document. */
async function tagWithTeachers(p: HostParams<'distill'>, docs: readonly CorpusDocument[], ctx: JobContext): Promise<Array<Array<CorpusDocument['mentions']>>> {
  const found: Array<Array<CorpusDocument['mentions']>> = []
  for (const [k, dir] of p.teacherDirs.entries()) {
    if (ctx.signal.aborted) break
    const label = `Teacher ${k + 1} of ${p.teacherDirs.length} tags ${docs.length} unreviewed documents`
    phase(ctx, label, 0, docs.length)
    const tagger = await openTagger(dir, { threads: inferenceThreads(), spin: false, logger: log })
    try {
      // Every head merged: the teachers were chosen for having the student's entity types.
      const results = await tagger.tag(docs, { signal: ctx.signal, onProgress: (done, total) => phase(ctx, label, done, total) })
      found.push(results.map((r) => r.mentions.map(({ start, end, type, text }) => ({ start, end, type, text }))))
    } finally {
      await tagger.dispose()
    }
  }
  return found
}

/** The teachers' tags on `p.unlabelled`: what each found, and one copy of the documents with the mentions more than half of them agree on. */
interface AgreedTags {
  unlabelled: CorpusDocument[]
  /** Per teacher, the mentions it found in each document. */
  found: Array<Array<CorpusDocument['mentions']>>
  /** The unlabelled documents (ids marked as the teachers') with the agreed mentions. */
  agreed: CorpusDocument[]
}

/** Every teacher tags `p.unlabelled` once; null when cancelled meanwhile. */
async function agreedTags(p: HostParams<'distill'>, ctx: JobContext): Promise<AgreedTags | null> {
  const unlabelled = p.unlabelled ?? []
  if (unlabelled.length === 0) throw new HostInputError('no unlabelled documents for the teachers to tag')
  let found: Array<Array<CorpusDocument['mentions']>>
  try {
    found = await tagWithTeachers(p, unlabelled, ctx)
  } catch (e) {
    if (ctx.signal.aborted) return null
    throw e
  }
  if (ctx.signal.aborted) return null
  // One copy of the documents with the mentions most teachers agree on (as train --teacher given
  // several times for a head): better labels than any one teacher's (docs/ACCURACY.md).
  const agreed = unlabelled.map((d, i) => ({ ...d, id: `${d.id}~teachers`, mentions: majorityMentions(found.map((f) => f[i])) }))
  return { unlabelled, found, agreed }
}

/** A run cancelled before its student trained. */
const cancelledBeforeTraining = (t0: number, backend: string): HostResult<'distill'> => ({
  cancelled: true, saved: false, summary: null, devScores: null, bestEpoch: null, steps: 0, epochs: 0,
  seconds: (performance.now() - t0) / 1000, backend, notes: [], curve: [], layerMap: [],
})

/** What the result reports of the teachers' tags: each teacher's mentions and the agreed ones. */
const tagCounts = ({ found, agreed }: Pick<AgreedTags, 'found' | 'agreed'>) => ({
  taggedMentions: found.map((f) => f.reduce((n, ms) => n + ms.length, 0)),
  agreedMentions: agreed.reduce((n, d) => n + d.mentions.length, 0),
})

const teachersTagsOf = (teachers: number, documents: number) => `${teachers > 1 ? `${teachers} teachers' agreed tags` : "the teacher's tags"} of ${documents}`

/**
 * Word-tagger teachers alone: a new word tagger trained on the reviewed documents and the
 * mentions more than half of the teachers agree on (their span majority beat each of them, and
 * so did the student it taught: core/distill/plan), through the app's word-tagger training job.
 */
async function wordTaggerStudent(p: HostParams<'distill'>, ctx: JobContext): Promise<HostResult<'distill'>> {
  if (p.method !== 'teacher-tags') throw new HostInputError('a word-tagger student learns its teachers\' tags (teacher-tags), not soft labels')
  const bert = p.teacherDirs.find((d) => !isWordTaggerFolder(d))
  if (bert !== undefined) throw new HostInputError(`${bert} is not a word tagger: with a BERT teacher the student is a copy of it`)
  const t0 = performance.now()
  const tags = await agreedTags(p, ctx)
  if (!tags) return cancelledBeforeTraining(t0, WORD_TAGGER_ENGINE)
  const result = await trainWordTaggerJob(
    {
      dir: p.outDir,
      preset: WORD_LSTM,
      train: p.train,
      dev: p.dev,
      epochs: p.epochs,
      seed: p.seed,
      lr: p.lr,
      metadata: { source: { teachers: p.teacherDirs, method: p.method, unlabelledDocuments: tags.unlabelled.length } },
    },
    ctx,
    { transfer: { documents: tags.agreed, mentions: { [DEFAULT_HEAD]: tags.agreed.map((d) => d.mentions) } }, description: teachersTagsOf(p.teacherDirs.length, tags.unlabelled.length) },
  )
  return { ...result, layerMap: [], ...tagCounts(tags) }
}

async function teacherTags(p: HostParams<'distill'>, ctx: JobContext): Promise<HostResult<'distill'>> {
  const b = await ensureBackend()
  const t0 = performance.now()
  const tags = await agreedTags(p, ctx)
  if (!tags) return cancelledBeforeTraining(t0, b.name)
  const curve: TrainedCheckpoint['curve'] = []
  const { unlabelled, found, agreed: transfer } = tags
  const baseDir = p.teacherDirs[p.base]
  phase(ctx, `Loading ${baseDir}`)
  const ck = await loadCheckpoint(baseDir, { trainable: false })
  const task = { name: DEFAULT_HEAD, train: [...p.train, ...transfer] }
  let student
  try {
    // The student's head: the base's labels when they cover every type taught (they should: the
    // teachers share the entity types), so its classifier is copied too.
    student = createStudent(ck.model, { layers: p.layers, heads: { [DEFAULT_HEAD]: taskLabels(ck.model, task) }, seed: p.seed })
  } finally {
    ck.model.dispose()
  }
  const { windows, lr } = baseSettings(p)
  const tokenizer = new WordPieceTokenizer(ck.vocab, { lowercase: ck.lowercase, source: `${baseDir}/vocab.txt` })
  let result
  try {
    phase(ctx, `Training a ${p.layers}-layer student on ${p.train.length} reviewed documents and ${teachersTagsOf(found.length, unlabelled.length)}`)
    result = await train({
      model: student.model,
      tokenizer,
      train: task.train,
      dev: p.dev.length ? p.dev : undefined,
      outDir: p.outDir,
      epochs: p.epochs,
      batchSize: TRAIN_DEFAULTS.batchSize,
      lr,
      seed: p.seed,
      maxLength: windows.maxLength,
      sentenceLevel: windows.sentenceLevel,
      onProgress: stepReporter(ctx, curve),
      signal: ctx.signal,
      checkpoint: {
        metadata: {
          student: { layerMap: student.layerMap, initTeacher: baseDir, inherited: student.inherited },
          source: { teachers: p.teacherDirs, method: p.method, unlabelledDocuments: unlabelled.length },
          backend: b.name,
        },
      },
    })
  } finally {
    student.model.dispose()
  }
  return {
    ...(await trainedCheckpoint(result, {
      dir: p.outDir,
      dev: p.dev,
      t0,
      backend: b.name,
      curve,
      notes: [`initialised from the base teacher's embeddings and layers ${student.layerMap.join(', ')}`, `trainer: ${result.trainer} (${result.trainerReason})`],
    })),
    layerMap: student.layerMap,
    ...tagCounts(tags),
  }
}
