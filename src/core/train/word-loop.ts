// Training of the word-level recurrent tagger (core/model/word-tagger) on the one training runner
// (./runner): documents → examples by the one examples path (a special-tokens-only piece
// vocabulary makes every word one piece, so windows and labels are per word) → batches of
// sentences → OrtWordTaggerTrainer steps; devel F1 after each epoch through the one tagging path;
// the best epoch saved to outDir, with the optimizer's state and the time spent so far, from which
// `resume` continues an interrupted run (a --minutes budget counts the time before the stop).
// The budget leaves out the time the process was stopped (SIGSTOP … SIGCONT: ./run-clock).

import type { CorpusDocument } from '../../shared/domain'
import { evaluateTagger } from '../eval/evaluate'
import { buildLabelMap, IGNORE_INDEX, type LabelMap } from '../nlp/bio'
import { documentsToExamples, type Example } from '../nlp/examples'
import { WordPieceTokenizer } from '../nlp/tokenizer'
import { exampleWords, UNK_ID, WordFeaturizer, type WordVocabOptions } from '../nlp/word-features'
import { embeddingFromVectors, readWordVectors } from '../nlp/word-vectors'
import { initWordTaggerParams, loadWordTagger, saveWordTagger, WORD_TAGGER_EMBEDDINGS, WORD_TAGGER_PIECE_VOCAB, wordBatch, wordBucket, wordTaggerConfig, charLmStateDim, type WordTaggerConfig, type WordTaggerFolder } from '../model/word-tagger'
import type { TrainingMetadata } from '../model/checkpoint-files'
import { wordTaggerFor } from '../tag/open'
import { headRouters } from '../tag/router'
import { deriveSeed, Rng } from '../rng'
import { sampleCrfPath, type CrfScores } from '../model/crf'
import type { TrainerEngine } from './engine'
import { averageLastEpochs, averagingEpochs, type AveragedOutcome, type RunSettings } from './loop'
import { loadOptimizerState, OPTIMIZER_FILE, plannedStepsOf, runTraining, saveOptimizerState, type DevScores, type ResumePoint, type RunProgress, type RunResult, type SavePoint } from './runner'
import { OrtWordTaggerTrainer } from './word-trainer'
import { linearScheduleWithWarmup } from './optimizer'
import { batchCharLmStates, charLmStatesOf } from '../onnx/char-lm'
import { CHAR_LM_PREFIX, type CharLmFolder } from '../model/char-lm'
import { RunClock } from './run-clock'

export const WORD_TAGGER_RECIPE = {
  epochs: 25,
  batchSize: 16,
  lr: 2e-3,
  maxGradNorm: 5,
  /**
   * Words per window including the two special positions. Each length bucket (multiples of 8
   * words) is its own unrolled training graph, and onnxruntime's session creation grows about
   * with the square of its length (measured under load: 3 s at 32 words, 25–30 s at 96, so ~3 min
   * at 256): 128 keeps a run's one-off graph building to minutes where 256 cost about 40 on the
   * unlabelled text, whose 139 sentences above 126 words (of 118 568; none in NCBI-disease
   * train, 5 in BC5CDR's, 16 in BC2GM's) are windowed instead.
   */
  maxLength: 128,
  /**
   * Most words kept (by frequency): bounds the model's size on large training sets (100 floats a
   * word); rarer words are read through their characters only.
   */
  maxWords: 50_000,
} as const

/**
 * One corpus and the head it trains. A head may be trained on several corpora (a task each, e.g.
 * two corpora that annotate Disease under their own guidelines): every corpus's devel set is then
 * scored on its own, and model selection takes the mean over every corpus's devel F1.
 */
export interface WordTrainTask {
  head: string
  /** The corpus's name in devel scores (default: the head); each corpus of a shared head needs its own. */
  name?: string
  train: readonly CorpusDocument[]
  dev?: readonly CorpusDocument[]
}

const taskName = (t: Pick<WordTrainTask, 'head' | 'name'>): string => t.name ?? t.head

/**
 * Each head's label map, from the entity types of its training corpora. The corpora of one head
 * must annotate the same types: a sentence teaches its head O for every type its corpus does not
 * annotate, so a union of types would teach one corpus's mentions as O from the other corpus's
 * sentences — the conflict that one head per corpus exists to avoid. Names must be unique.
 */
export function wordTaskLabelMaps(tasks: ReadonlyArray<Pick<WordTrainTask, 'head' | 'name' | 'train'>>): Record<string, LabelMap> {
  const seen = new Set<string>()
  const first = new Map<string, { name: string; types: string[] }>()
  const maps: Record<string, LabelMap> = {}
  for (const t of tasks) {
    const name = taskName(t)
    if (seen.has(name)) throw new Error(`two corpora are named '${name}': each corpus of head '${t.head}' needs its own name`)
    seen.add(name)
    const types = [...new Set(t.train.flatMap((d) => d.mentions.map((m) => m.type)))].sort()
    const prev = first.get(t.head)
    if (!prev) {
      first.set(t.head, { name, types })
      maps[t.head] = buildLabelMap(types)
    } else if (prev.types.join() !== types.join()) {
      const what = (x: string[]) => (x.length ? x.join(', ') : 'no type')
      throw new Error(
        `head '${t.head}': corpus '${prev.name}' annotates ${what(prev.types)} but '${name}' annotates ${what(types)}; ` +
          'the corpora of one head must annotate the same types (a sentence teaches its head O for every type its corpus does not annotate): rename types as the corpora are read, or give the corpus its own head',
      )
    }
  }
  return maps
}

/**
 * The windows the base was trained on (train --doc-level --max-length: the default model reads
 * windows of 64 words over the document), so that its retrained copy reads text the same way;
 * train's (sentences, 128 words) for a base that does not record them.
 */
export function baseWindows(base: Pick<WordTaggerFolder, 'metadata'>): { sentenceLevel: boolean; maxLength: number } {
  const training = (base.metadata?.training ?? {}) as { sentenceLevel?: unknown; maxLength?: unknown }
  return {
    sentenceLevel: typeof training.sentenceLevel === 'boolean' ? training.sentenceLevel : true,
    maxLength: typeof training.maxLength === 'number' ? training.maxLength : WORD_TAGGER_RECIPE.maxLength,
  }
}

/**
 * The runner settings every task takes (loop.ts RunSettings; maxLength counts words here, which
 * are the word tagger's pieces); outDir gets the best epoch by the mean devel F1 over heads.
 */
export interface WordTrainOptions extends Pick<RunSettings, 'outDir' | 'epochs' | 'batchSize' | 'lr' | 'maxGradNorm' | 'seed' | 'maxLength' | 'sentenceLevel' | 'patience' | 'maxSteps' | 'averageLast' | 'threads' | 'signal'> {
  tasks: readonly WordTrainTask[]
  /** Stop after the first epoch that ends past this many minutes (the best epoch is kept; time stopped by SIGSTOP not counted). */
  maxMinutes?: number
  /**
   * 'constant' (default): the learning rate stays `lr`. 'linear': it falls from `lr` to 0 at the
   * planned last step (epochs × steps per epoch, or maxSteps), so the last epochs average out the
   * noise of a constant rate instead of the best epoch being picked from it.
   */
  lrSchedule?: 'constant' | 'linear'
  /** Sizes and dropout other than the defaults (WORD_TAGGER_DEFAULTS); with init only its dropout applies. */
  config?: Partial<WordTaggerConfig>
  vocab?: WordVocabOptions
  onProgress?: (p: RunProgress) => void
  onTaskScores?: (epoch: number, scores: Record<string, DevScores>) => void
  /**
   * Text labelled by teacher models (sequence-level knowledge distillation, or draws from their
   * posteriors when it has them): trained with the gold examples, every head it has labels for at once.
   */
  transfer?: WordTransferSet
  /** Extra fastbioner.json content (the caller's source record). */
  metadata?: Record<string, unknown>
  /**
   * Continue from this model (retraining from corrections): its vocabularies, sizes and weights;
   * a head whose labels differ from the task's starts anew. Words it never saw stay <unk> unless
   * growVocabulary.
   */
  init?: Pick<WordTaggerFolder, 'config' | 'featurizer' | 'heads' | 'params'>
  /**
   * With init: the words and characters of the training text that init's vocabularies lack join
   * them (up to `vocab.maxSize` words in all, default the recipe's maxWords), each with a new
   * embedding row initialised as a fresh model's; known ids and rows are kept. Without it a
   * model retrained on reviewed documents could never learn a word its first training lacked.
   */
  growVocabulary?: boolean
  /**
   * Continue the run saved in outDir (its model, optimizer state and the time it had spent) with
   * the same inputs and settings: the examples, and so each epoch's batches, are the ones it had.
   */
  resume?: boolean
  /**
   * From scratch: a word-vector file in the word2vec / fastText / GloVe text format
   * (nlp/word-vectors). The word size becomes the vectors'; the training text's words found in it
   * start from their vectors, and the file's most frequent other words join the vocabulary (up to
   * vocab.maxSize words in all) with theirs, so words the training text lacks are not all <unk>.
   */
  wordVectors?: string
  /** From scratch: a character language model whose per-word states join the inputs (frozen; part of the model). */
  charLm?: CharLmFolder
}

/** What a model's word table started from (fastbioner.json `word_vectors`, the training summary). */
export interface WordVectorRecord {
  file: string
  dim: number
  /** Vocabulary rows that started from a vector, of `vocabulary` (without <pad> and <unk>). */
  initialised: number
  /** Words the vectors added beside the training text's. */
  added: number
  vocabulary: number
}

/** optimizer.safetensors metadata: wall seconds the run had spent when it saved. */
const ELAPSED = 'elapsed_seconds'

export interface WordTrainResult extends RunResult {
  model: WordTaggerFolder
  labels: Record<string, string[]>
  /** Each corpus's devel scores (by task name) at the best epoch; null without devel. */
  devByTask: Record<string, DevScores> | null
  trainExamples: number
  trainer: string
  wallSeconds: number
  wordVectors: WordVectorRecord | null
  /** Checkpoint averaging's outcome (averageLast); a kept average is saved under its last epoch. */
  averaged: AveragedOutcome | null
}

/**
 * Text a teacher tagged for each head (Kim & Rush 2016, sequence-level knowledge distillation: the
 * student learns the teachers' best label sequences, so the CRF loss stays as it is). A corpus
 * annotates one head; a transfer sentence teaches every head that has a teacher.
 */
export interface WordTransferSet {
  documents: readonly CorpusDocument[]
  /** Head → the mentions its teacher found in each document, in the order of documents. */
  mentions: Record<string, ReadonlyArray<CorpusDocument['mentions']>>
  /**
   * Posterior targets (train --transfer-targets posterior; structure-level distillation, Wang et
   * al. 2020): head → each of its teachers' word posteriors. Every step then draws, for each
   * transfer sentence and head, a teacher uniformly and a label path from its posterior
   * (sampleCrfPath), so the student's CRF learns the mixture of the teachers' distributions
   * rather than their vote. `mentions` stays the vote: the labels of the words a teacher did not
   * score. Absent: the vote is the target.
   */
  posteriors?: Record<string, readonly TeacherPosteriors[]>
}

/** One teacher head's word posteriors on the transfer text (WordTransferSet.posteriors). */
export interface TeacherPosteriors {
  /** The teacher head's label names: column j of logProbs is labels[j]; matched to the student's by name. */
  labels: readonly string[]
  /** Its CRF, whose chain paths are sampled from; without one each word is drawn on its own. */
  crf?: CrfScores
  /** One entry per document, in the order of the set's documents. */
  documents: ReadonlyArray<WordPosteriors>
}

/** A teacher's scores on one document's words: only the words some window of it covered. */
export interface WordPosteriors {
  /** [words × 2]: [start, end) character offsets, sorted; the student's words are matched by them. */
  offsets: Int32Array
  /** [words × labels]: each word's label log-probabilities. */
  logProbs: Float32Array
}

interface WordExample extends Example {
  words: string[]
  /** The heads this example trains: the label id of each word for each. */
  targets: Array<{ head: string; labels: Int32Array }>
  /** A transfer example: its document's index in the set and its words' [start, end) offsets ([words × 2]). */
  transfer?: { doc: number; offsets: Int32Array }
}

/** Every word becomes one [UNK] piece: the examples path then windows and labels by word. */
export function wordTaggerTokenizer(): WordPieceTokenizer {
  return new WordPieceTokenizer(WORD_TAGGER_PIECE_VOCAB, { lowercase: false })
}

function wordExamples(docs: ReadonlyArray<CorpusDocument & { protect?: ReadonlyArray<{ start: number; end: number }> }>, head: string, labelMap: LabelMap, tokenizer: WordPieceTokenizer, maxLength: number, sentenceLevel: boolean): WordExample[] {
  const byId = new Map(docs.map((d) => [d.id, d]))
  return documentsToExamples(docs, tokenizer, labelMap, { maxLength, sentenceLevel }).map((ex) => {
    const { positions, texts } = exampleWords(ex, byId.get(ex.docId)!.text)
    return { ...ex, words: texts, targets: [{ head, labels: Int32Array.from(positions, (p) => ex.labels[p]) }] }
  })
}

/**
 * One example per window of the transfer text with a target for each teacher's head. Sentence
 * splitting never cuts a mention, so every head's examples are cut around the mentions of all
 * heads (a sentence boundary inside one teacher's mention is none for any head): the heads'
 * example lists then line up one to one.
 */
export function transferExamples(t: WordTransferSet, labelMaps: Record<string, LabelMap>, tokenizer: WordPieceTokenizer, maxLength: number, sentenceLevel: boolean): WordExample[] {
  const heads = Object.entries(t.mentions)
  for (const [head, mentions] of heads) {
    if (!labelMaps[head]) throw new Error(`transfer set: no task trains head '${head}' (heads: ${Object.keys(labelMaps).join(', ')})`)
    if (mentions.length !== t.documents.length) throw new Error(`transfer set: head '${head}' has mentions for ${mentions.length} of ${t.documents.length} documents`)
  }
  const protect = t.documents.map((_, i) => heads.flatMap(([, mentions]) => mentions[i]))
  // A teacher's type the task does not train is dropped by the label alignment (nlp/bio).
  const perHead = heads.map(([head, mentions]) => wordExamples(t.documents.map((d, i) => ({ ...d, mentions: mentions[i], protect: protect[i] })), head, labelMaps[head], tokenizer, maxLength, sentenceLevel))
  for (const ex of perHead.slice(1)) perHead[0].forEach((e, i) => e.targets.push(ex[i].targets[0]))
  const out = perHead[0] ?? null
  if (!t.posteriors || !out) return out ?? []
  for (const [head, teachers] of Object.entries(t.posteriors)) {
    if (!t.mentions[head]) throw new Error(`transfer set: head '${head}' has posteriors but no mentions (its vote, the labels of words no teacher scored)`)
    if (!teachers.length) throw new Error(`transfer set: head '${head}' has an empty list of teacher posteriors`)
    for (const p of teachers) {
      if (p.documents.length !== t.documents.length) throw new Error(`transfer set: a teacher of head '${head}' has posteriors for ${p.documents.length} of ${t.documents.length} documents`)
    }
  }
  // The examples know their document and words: a step matches them with a teacher's words.
  const docIndex = new Map(t.documents.map((d, i) => [d.id, i]))
  for (const e of out) {
    const offsets = new Int32Array(2 * e.words.length)
    let w = 0
    for (let p = 0; p < e.wordStarts.length; p++) {
      if (!e.wordStarts[p]) continue
      offsets[2 * w] = e.offsets[2 * p]
      offsets[2 * w + 1] = e.offsets[2 * p] + e.words[w].length // exampleWords' text: its first piece's start to its last piece's end
      w++
    }
    e.transfer = { doc: docIndex.get(e.docId)!, offsets }
  }
  return out
}

/**
 * What a transfer example trains in a step when the set has posteriors: for each head with
 * posteriors, a teacher drawn uniformly and a label path drawn from its posterior over the
 * example's words (each stretch of words the teacher scored is one chain, as the student's CRF
 * sees it), the teacher's labels mapped to the head's by name (a label the head lacks, another
 * type's, is O). Words the teacher did not score keep the vote's label. The draws come from the
 * step's seed and the example's index, so a resumed run replays the same targets. Null without
 * posteriors: the examples' own (vote) targets are trained.
 */
export function transferTargetSampler(t: WordTransferSet, labelMaps: Record<string, LabelMap>): ((e: WordExample, stepSeed: number, index: number) => WordExample['targets']) | null {
  if (!t.posteriors) return null
  const byHead = new Map(
    Object.entries(t.posteriors).map(([head, teachers]) => {
      const map = labelMaps[head]
      if (!map) throw new Error(`transfer set: no task trains head '${head}' (heads: ${Object.keys(labelMaps).join(', ')})`)
      return [head, teachers.map((p) => ({ p, ids: Int32Array.from(p.labels, (l) => map.label2id[l] ?? map.label2id.O) }))] as const
    }),
  )
  return (e, stepSeed, index) => {
    if (!e.transfer) return e.targets
    const { doc, offsets } = e.transfer
    const rng = new Rng(deriveSeed(stepSeed, 0x706f7374, index))
    const n = e.words.length
    const match = new Int32Array(n)
    return e.targets.map((target) => {
      const teachers = byHead.get(target.head)
      if (!teachers) return target
      const { p, ids } = teachers[rng.int(teachers.length)]
      const { offsets: to, logProbs } = p.documents[doc]
      const C = p.labels.length
      const m = to.length / 2
      // Both word lists are sorted by offset: one merge pass finds each student word's teacher word.
      for (let i = 0, k = 0; i < n; i++) {
        while (k < m && to[2 * k] < offsets[2 * i]) k++
        match[i] = k < m && to[2 * k] === offsets[2 * i] && to[2 * k + 1] === offsets[2 * i + 1] ? k : -1
      }
      const labels = Int32Array.from(target.labels)
      for (let i = 0; i < n; ) {
        if (match[i] < 0) {
          i++
          continue
        }
        let j = i + 1
        while (j < n && match[j] === match[j - 1] + 1) j++
        const a = match[i]
        const path = sampleCrfPath(logProbs.subarray(a * C, (a + j - i) * C), j - i, C, p.crf, rng)
        for (let q = 0; q < j - i; q++) labels[i + q] = ids[path[q]]
        i = j
      }
      return { head: target.head, labels }
    })
  }
}

export async function trainWordTagger(o: WordTrainOptions): Promise<WordTrainResult> {
  let resume: ResumePoint | undefined
  /** A resumed run had its vectors when it started: its saved table holds them, its record says which. */
  let wordVectors: WordVectorRecord | null = null
  let spentBefore = 0
  if (o.resume) {
    if (!o.outDir) throw new Error('resume needs the checkpoint directory (outDir) of the run to continue')
    const saved = loadOptimizerState(o.outDir)
    if (!saved) throw new Error(`${o.outDir}: no ${OPTIMIZER_FILE}, so there is no run to resume (train without resume)`)
    resume = { ...saved.point, bestEpoch: saved.point.epoch, bestDevF1: saved.point.dev?.f1 ?? null, optimizer: saved.state }
    spentBefore = Number(saved.metadata[ELAPSED] ?? 0)
    // The saved model is where it continues: its vocabularies, sizes, heads and weights.
    const savedModel = loadWordTagger(o.outDir)
    wordVectors = (savedModel.metadata?.word_vectors as WordVectorRecord | undefined) ?? null
    o = { ...o, init: savedModel, growVocabulary: false }
  }
  const clock = new RunClock(spentBefore)
  // A resumed run averages the epochs it ran since resuming (the snapshots live in memory only).
  const averageLast = averagingEpochs(o.averageLast, o.tasks.some((t) => t.dev?.length))
  const seed = o.seed ?? 42
  const epochs = o.epochs ?? WORD_TAGGER_RECIPE.epochs
  const batchSize = o.batchSize ?? WORD_TAGGER_RECIPE.batchSize
  const lr = o.lr ?? WORD_TAGGER_RECIPE.lr
  const maxLength = o.maxLength ?? WORD_TAGGER_RECIPE.maxLength
  const sentenceLevel = o.sentenceLevel ?? true
  const tokenizer = wordTaggerTokenizer()
  const labelMaps = wordTaskLabelMaps(o.tasks)
  const labels: Record<string, string[]> = Object.fromEntries(Object.entries(labelMaps).map(([h, m]) => [h, m.labels]))
  // Heads that tag one type from different corpora: tagging keeps, per document, the mentions of
  // the head whose corpus it resembles (core/tag/router).
  const routers = headRouters(o.tasks, labels)
  const examples: WordExample[] = []
  for (const t of o.tasks) {
    for (const e of wordExamples(t.train, t.head, labelMaps[t.head], tokenizer, maxLength, sentenceLevel)) examples.push(e)
  }
  // One push per example: push(...list) passes every element as an argument and overflows the
  // stack past ~100 k (a transfer set of the unlabelled text has 118 k).
  if (o.transfer) for (const e of transferExamples(o.transfer, labelMaps, tokenizer, maxLength, sentenceLevel)) examples.push(e)
  const sampleTargets = o.transfer ? transferTargetSampler(o.transfer, labelMaps) : null
  if (examples.length === 0) throw new Error('word tagger: the training documents hold no words')
  const vocab = { maxSize: WORD_TAGGER_RECIPE.maxWords, ...o.vocab }
  const trainingWords = () => examples.flatMap((e) => e.words)
  let featurizer = !o.init ? WordFeaturizer.learn(trainingWords(), vocab) : o.growVocabulary ? o.init.featurizer.extend(trainingWords(), vocab) : o.init.featurizer
  const vectors = o.wordVectors && !o.init ? await readWordVectors(o.wordVectors, new Set(featurizer.words.slice(UNK_ID + 1)), Math.max(0, (vocab.maxSize ?? WORD_TAGGER_RECIPE.maxWords) - featurizer.words.length), { signal: o.signal }) : null
  if (vectors) featurizer = new WordFeaturizer([...featurizer.words, ...vectors.extraWords], featurizer.chars, featurizer.singletons)
  // A model trained further keeps its sizes; its dropout, a training setting only, may be replaced.
  const config = o.init
    ? { ...o.init.config, wordVocabSize: featurizer.words.length, charVocabSize: featurizer.chars.length, ...(o.config?.dropout !== undefined ? { dropout: o.config.dropout } : {}) }
    : wordTaggerConfig(featurizer, { ...o.config, ...(vectors ? { wordDim: vectors.dim } : {}), ...(o.charLm ? { charLm: { ...o.charLm.dims, chars: o.charLm.chars } } : {}) })
  const heads = Object.entries(labels).map(([name, l]) => ({ name, numLabels: l.length }))
  const params = initWordTaggerParams(config, heads, seed)
  if (vectors) {
    const table = params.get(WORD_TAGGER_EMBEDDINGS)! // [words, wordDim]
    // The table's initialiser draws N(0, 1): the vectors take its scale.
    const emb = embeddingFromVectors(featurizer.words.map((w, i) => (i > UNK_ID ? (vectors.vectors.get(w) ?? null) : null)), table, config.wordDim, 1)
    table.set(emb.matrix)
    wordVectors = { file: o.wordVectors!, dim: vectors.dim, initialised: emb.assigned, added: vectors.extraWords.length, vocabulary: featurizer.words.length - (UNK_ID + 1) }
  }
  if (o.init) {
    const keptHeads = new Set(Object.keys(labels).filter((h) => o.init!.heads[h]?.join() === labels[h].join()))
    const headOf = (name: string) => /^(?:classifiers|crfs)\.([^.]+)\./.exec(name)?.[1] ?? (/^(?:classifier|crf)\./.test(name) ? 'default' : null)
    for (const [name, value] of params) {
      const head = headOf(name)
      const from = o.init.params.get(name)
      if (!from || (head !== null && !keptHeads.has(head))) continue
      // A grown vocabulary's table [V', D] starts with init's rows [V, D]; the rest stay fresh.
      const grownTable = name.endsWith('embeddings.weight') && from.length < value.length
      if (from.length === value.length || grownTable) value.set(from)
    }
  }
  if (o.charLm && !o.init) for (const [name, value] of o.charLm.params) params.get(name)!.set(value)
  const model: WordTaggerFolder = { config, featurizer, heads: labels, params }
  // The LM is frozen: its states of each sentence are computed once, and it is not among the trained parameters.
  const lmStates = config.charLm ? await charLmStatesOf(config.charLm, params, examples.map((e) => e.words), { threads: o.threads }) : null
  const trained = new Map([...params].filter(([name]) => !name.startsWith(CHAR_LM_PREFIX)))
  const { plannedSteps } = plannedStepsOf(examples.length, batchSize, epochs, o.maxSteps)
  const lrOrSchedule = o.lrSchedule === 'linear' ? linearScheduleWithWarmup(lr, 0, plannedSteps) : lr
  const trainer = new OrtWordTaggerTrainer({ config, heads, params: trained, optimizer: { lr: lrOrSchedule, weightDecay: 0, maxGradNorm: o.maxGradNorm === undefined ? WORD_TAGGER_RECIPE.maxGradNorm : o.maxGradNorm }, threads: o.threads })
  // The trainer moved the trained parameters into its memory: the model reads them there.
  for (const [name, value] of trained) params.set(name, value)
  const devTasks = o.tasks.filter((t) => t.dev?.length)
  const tagger = devTasks.length ? wordTaggerFor(model, { maxLength, sentenceLevel }, { threads: o.threads, cacheCharLmStates: true }) : null
  const overBudget = () => o.maxMinutes !== undefined && clock.seconds() > o.maxMinutes * 60
  const timeUp = new AbortController()
  const signal = o.signal ? AbortSignal.any([o.signal, timeUp.signal]) : timeUp.signal

  const engine: TrainerEngine = {
    trainer: 'onnxruntime-cpu',
    reason: 'word tagger: onnxruntime training graphs (BiLSTM unrolled per length bucket)',
    async step(b, _labels, stepSeed) {
      const rows = b.indices.map((i) => examples[i])
      const T = wordBucket(Math.max(...rows.map((e) => e.words.length)))
      // Singleton words → <unk> drawn from the step's seed (as dropout is), so a resumed run replays them.
      const batch = wordBatch(featurizer, config, rows.map((e) => e.words), T, new Rng(deriveSeed(stepSeed, 0x756e6b)))
      if (lmStates) batch.charLmStates = batchCharLmStates(b.indices.map((i) => lmStates[i]), T, charLmStateDim(config))
      const y: Record<string, Int32Array> = Object.fromEntries(heads.map((h) => [h.name, new Int32Array(rows.length * T).fill(IGNORE_INDEX)]))
      rows.forEach((e, r) => (sampleTargets ? sampleTargets(e, stepSeed, b.indices[r]) : e.targets).forEach((t) => y[t.head].set(t.labels, r * T)))
      return trainer.step(batch, y, stepSeed)
    },
    currentLr: () => trainer.optimizer.currentLr(),
    syncModel: () => {},
    optimizerState: () => trainer.optimizerState(),
    loadOptimizerState: (s) => trainer.optimizer.loadState(s),
    dispose: () => trainer.dispose(),
  }

  const devByEpoch = new Map<number, Record<string, DevScores>>()
  // The mean over corpora, not heads: a head trained on two corpora counts twice, once for each guideline.
  const scoreDevel = async (): Promise<{ byTask: Record<string, DevScores>; mean: DevScores }> => {
    const byTask: Record<string, DevScores> = {}
    for (const t of devTasks) {
      const r = await evaluateTagger(tagger!, t.dev!, { head: t.head })
      byTask[taskName(t)] = { precision: r.overall.precision, recall: r.overall.recall, f1: r.overall.f1 }
    }
    const all = Object.values(byTask)
    const mean = (k: keyof DevScores) => all.reduce((a, s) => a + s[k], 0) / all.length
    return { byTask, mean: { precision: mean('precision'), recall: mean('recall'), f1: mean('f1') } }
  }
  /** Trained weights at the end of the last `averageLast` epochs, oldest first (checkpoint averaging). */
  const snapshots: Array<{ epoch: number; weights: Map<string, Float32Array> }> = []
  const evaluate = async (epoch: number): Promise<DevScores> => {
    if (averageLast) {
      snapshots.push({ epoch, weights: new Map([...trained].map(([n, v]) => [n, Float32Array.from(v)])) })
      if (snapshots.length > averageLast) snapshots.shift()
    }
    const { byTask, mean } = await scoreDevel()
    devByEpoch.set(epoch, byTask)
    if (devTasks.length > 1) o.onTaskScores?.(epoch, byTask)
    if (overBudget()) timeUp.abort()
    return mean
  }

  let lastRecord: Partial<TrainingMetadata> = {}
  /** The epochs a save's weights average (checkpoint averaging), for its metadata. */
  let averagedInSave: number[] | null = null
  const saveEpoch = async (p: SavePoint): Promise<string | null> => {
    // Without a devel set nothing else marks an epoch's end: the time budget is checked here too.
    if (overBudget()) timeUp.abort()
    lastRecord = {
      head: heads[0].name,
      labels: labels[heads[0].name],
      maxLength,
      stride: null,
      sentenceLevel,
      epoch: p.epoch,
      step: p.step,
      seed,
      batchSize,
      lr,
      ...(o.lrSchedule === 'linear' ? { lrSchedule: 'linear' } : {}),
      dev: p.dev,
      ...(averagedInSave ? { averagedEpochs: averagedInSave } : {}),
      tasks: o.tasks.length > 1 ? heads.map((h) => h.name) : undefined,
      trainer: engine.trainer,
      trainerReason: engine.reason,
    }
    if (!o.outDir) return null
    saveWordTagger(o.outDir, { ...model, metadata: { ...o.metadata, ...(wordVectors ? { word_vectors: wordVectors } : {}), ...(routers.length ? { routers } : {}), training: lastRecord } })
    saveOptimizerState(o.outDir, trainer.optimizerState(), p, { trainer: engine.trainer, [ELAPSED]: String(clock.seconds()) })
    return o.outDir
  }
  const result = await clock.pausable(() => runTraining({
    examples,
    engine,
    labels: () => ({}),
    padTokenId: tokenizer.padId,
    epochs,
    batchSize,
    seed,
    plannedSteps,
    patience: o.patience,
    evaluate: devTasks.length ? evaluate : undefined,
    save: saveEpoch,
    onProgress: o.onProgress,
    signal,
    peakLr: lr,
    resume,
  }))
  // A run stopped by its time budget is complete, not cancelled.
  if (timeUp.signal.aborted && !o.signal?.aborted) result.cancelled = false
  let averaged: AveragedOutcome | null = null
  if (snapshots.length >= 2 && !result.cancelled) {
    const { outcome, byTask } = await averageLastEpochs(trained, snapshots, result.bestDevF1, scoreDevel)
    averaged = outcome
    if (outcome.kept) {
      const last = outcome.epochs[outcome.epochs.length - 1]
      devByEpoch.set(last, byTask)
      averagedInSave = outcome.epochs
      const dir = await saveEpoch({ epoch: last, step: result.steps, dev: outcome.dev })
      if (dir) result.checkpointDir = dir
      result.bestDevF1 = outcome.dev.f1
      result.bestEpoch = last
    }
  }
  await engine.dispose()
  await tagger?.dispose()
  const devByTask = result.bestEpoch !== null ? (devByEpoch.get(result.bestEpoch) ?? null) : null
  return { ...result, model, labels, devByTask, trainExamples: examples.length, trainer: engine.trainer, wallSeconds: clock.seconds() + clock.pausedSeconds(), wordVectors, averaged }
}

