// train-default.ts's parts that run nothing: the stage records and the check that a recorded stage
// is this recipe's, the word-lstm recipe's plan (its corpora by entity type, every stage's
// command, the evaluation), the ship floor and the model card. Tested without training
// (test/unit/scripts/train-default-plan.test.ts).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { basename, join } from 'node:path'
import { WORD_TAGGER_DEFAULTS } from '../src/core/model/word-tagger'
import { readMetadata } from '../src/core/model/checkpoint-files'
import { WORD_TAGGER_RECIPE } from '../src/core/train/word-loop'
import type { ModelBenchmark } from '../src/shared/ipc'

export const TYPE_MAP = 'GENE=Gene'
/** Largest F1 loss (points, on NCBI-disease devel, with the head that tags it) accepted for int8. */
export const MAX_INT8_DROP = 2
export const LATENCY_THREADS = 2
/** How long the latency measure waits for other processes to fall under 0.25 cores. */
export const LATENCY_QUIET_S = 120
export const SHIPPED_FILES = ['config.json', 'vocab.txt', 'tokenizer_config.json', 'special_tokens_map.json', 'model.safetensors', 'words.txt', 'chars.txt', 'fastbioner.json', 'MODEL_CARD.md']

export interface StageRecord {
  stage: string
  command: string[]
  wallSeconds: number
  finishedAt: string
  summary: unknown
  /** How the stage came to be recorded when not by this script (said in the card). */
  note?: string
}

export interface Stage {
  name: string
  dir: string
  /** Arguments for a fresh run and, when the command can, for continuing an interrupted one. */
  args: string[]
  resumeArgs?: string[]
  /** The file an interrupted run leaves when it can be resumed. */
  resumeMarker?: string
}

export function stageFile(dir: string): string {
  return join(dir, 'stage.json')
}

export function readStage(dir: string): StageRecord | null {
  const f = stageFile(dir)
  return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as StageRecord) : null
}

/** The command a stage records (and what its record is checked against). */
export function stageCommand(stage: Pick<Stage, 'args'>): string[] {
  return ['fastbioner', ...stage.args]
}

/**
 * Why a stage's record does not stand for the stage this recipe would run, or null when it does:
 * its command must be the stage's, apart from the --out folder (a stage run by hand elsewhere and
 * put in its place keeps its own, and says so in its note). A record of another recipe (e.g. the
 * per-corpus heads before heads per entity type) must not be taken as "done before".
 */
export function staleRecord(stage: Pick<Stage, 'name' | 'dir' | 'args'>, record: StageRecord): string | null {
  const outless = (cmd: readonly string[]) => cmd.map((a, i) => (i > 0 && cmd[i - 1] === '--out' ? '<out>' : a))
  const recorded = outless(record.command)
  const wanted = outless(stageCommand(stage))
  if (recorded.join('\0') === wanted.join('\0')) return null
  const i = recorded.findIndex((a, j) => a !== wanted[j])
  const at = i < 0 ? wanted.length - 1 : i
  return (
    `${stageFile(stage.dir)} records another command than this recipe's stage ${stage.name} ` +
    `(argument ${at + 1}: recorded '${recorded[at] ?? '(end)'}', this recipe '${wanted[at] ?? '(end)'}')`
  )
}

/**
 * Everything in a run folder that this recipe must not resume from: stage folders it does not make
 * (an older recipe's, e.g. 1-teacher-ncbi of the per-corpus heads) and records of its own stages
 * that another command wrote. Empty when the folder is new or this recipe's.
 */
export function foreignStages(out: string, stages: ReadonlyArray<Pick<Stage, 'name' | 'dir' | 'args'>>): string[] {
  if (!existsSync(out)) return []
  const ours = new Set(stages.map((s) => s.dir))
  const stray = readdirSync(out)
    .filter((f) => /^\d+-/.test(f) && statSync(join(out, f)).isDirectory() && !ours.has(join(out, f)))
    .map((f) => `${join(out, f)}: a stage folder this recipe does not make`)
  const stale = stages.flatMap((s) => {
    const r = readStage(s.dir)
    const why = r && staleRecord(s, r)
    return why ? [why] : []
  })
  return [...stray, ...stale]
}

/**
 * run(item) for every item, at most `parallel` at a time, in order of start; the results in the
 * items' order. When one fails, no further item starts, the ones under way finish (a stage keeps
 * its record), and the first failure is thrown.
 */
export async function inParallel<T, R>(items: readonly T[], parallel: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  let failed = false
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++
      try {
        results[i] = await run(items[i])
      } catch (e) {
        failed = true
        throw e
      }
    }
  }
  const outcomes = await Promise.allSettled(Array.from({ length: Math.max(1, Math.min(parallel, items.length)) }, worker))
  const rejected = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected')
  if (rejected) throw rejected.reason
  return results
}

/**
 * Runs the word vectors, the character LM (when a teacher reads it) and the teachers `parallel` at
 * a time: the LM first and the vectors beside it (the LM does not read them), then the teachers
 * that do not read the LM (they fill the other slots while it trains), then those that do. Every
 * teacher waits for the vectors, and one that reads the LM for it too. Each stage run with its
 * result, the vectors' and LM's included.
 */
export async function vectorsLmAndTeachers<S extends Stage & { charLm: boolean }, R>(vectors: Stage, charLm: Stage, teachers: readonly S[], parallel: number, run: (stage: Stage) => Promise<R>): Promise<Array<readonly [Stage, R]>> {
  let lmDone: Promise<R> | null = null
  let vectorsDone: Promise<R> | null = null
  const order: Stage[] = [...(teachers.some((t) => t.charLm) ? [charLm] : []), vectors, ...teachers.filter((t) => !t.charLm), ...teachers.filter((t) => t.charLm)]
  return inParallel(order, parallel, async (stage) => {
    if (stage === charLm) return [stage, await (lmDone = run(stage))] as const
    if (stage === vectors) return [stage, await (vectorsDone = run(stage))] as const
    await vectorsDone
    if ((stage as S).charLm) await lmDone
    return [stage, await run(stage)] as const
  })
}

export function pct(x: number): string {
  return (100 * x).toFixed(1)
}

export function minutes(s: number): string {
  return `${(s / 60).toFixed(1)} min`
}

/** How busy the machine was when the latency was timed, as the card says it. */
export function latencyLoad(l: Latency): string {
  if (l.otherCores != null) return `other processes used ${l.otherCores.toFixed(2)} CPU cores while it was timed (1-minute load average ${l.loadAverage.toFixed(2)}, which lags)`
  return `1-minute load average ${l.loadAverage.toFixed(2)} when timed (before the evaluations; the stages before them count in that figure)`
}

export interface EvalSummary {
  overall: { precision: number; recall: number; f1: number; tp: number; fp: number; fn: number }
  types: Record<string, { precision: number; recall: number; f1: number }>
}

export interface Latency {
  pieces: number
  medianMs: number
  p90Ms: number
  runs: number
  loadAverage: number
  /** CPU cores other processes used while timed (records before 2026-12-07 lack it). */
  otherCores?: number | null
}

/**
 * The word-lstm recipe's corpora, one entity type each, and the head that learns it: one head per
 * type (a head per corpus made `tag`'s merged output pick between two Disease heads that follow
 * different guidelines; docs/ACCURACY.md, "Heads per entity type"). BC5CDR comes as its one-type
 * files, the same sentences and mentions as BC5CDR-IOB split by type. The card's rows, in order.
 */
export interface TypeCorpus {
  head: string
  /**
   * Another head whose teachers train on this corpus too: the type's head shared by every corpus
   * of the type (`disease`), whose teachers learn from both disease corpora, while this corpus's
   * own head (`disease-ncbi`) has teachers of its own corpus alone.
   */
  alsoTeaches?: string
  /**
   * Another head of the student that learns this corpus's gold too (train --task HEAD=TRAIN, no
   * devel, so the epoch is still chosen on each corpus's own head): the type's shared head beside
   * this corpus's own (train:default --shared-disease-gold).
   */
  alsoLearns?: string
  /**
   * The corpus's devel split is training data too (train-default --with-devel): every stage learns
   * `train.tsv` and `devel.tsv` and none chooses an epoch on them (train keeps its last epoch), as
   * FastBioNER trained its final models (train and devel merged; ../shared/PAPERS.md §1). The
   * settings stay those this recipe chose on devel; devel scores of such a run are of its own
   * training data, so the card gives none.
   */
  develInTraining?: boolean
  /** The corpus's name in the card and the ship floor. */
  corpus: string
  type: string
  dir: string
}

export function typeCorpora(data: string, opts: { sharedDiseaseGold?: boolean; withDevel?: boolean } = {}): TypeCorpus[] {
  const m = join(data, 'mtl-bioner')
  const sets: TypeCorpus[] = [
    // NCBI-disease's Disease has a head and teachers of its own (docs/ACCURACY.md, "NCBI-disease
    // teachers of their own"): teachers on NCBI-disease alone vote 86.08 on its devel against 84.72
    // for teachers of both disease corpora. Tagging keeps per document the Disease mentions of the
    // head whose corpus the document reads like (core/tag/router, trained by train).
    // With sharedDiseaseGold the student's `disease` head learns NCBI-disease's gold too, as its
    // teachers do: teachers on BC5CDR-disease alone score 0.7 under those on both corpora
    // (docs/ACCURACY.md, "BC5CDR-disease teachers of their own"). Off: with the same teachers it
    // cost the head 0.6 on BC5CDR Disease devel and left the mean level ("The same teachers without
    // `--shared-disease-gold`").
    { head: 'disease-ncbi', alsoTeaches: 'disease', ...(opts.sharedDiseaseGold ? { alsoLearns: 'disease' } : {}), corpus: 'NCBI-disease', type: 'Disease', dir: join(m, 'NCBI-disease-IOB') },
    { head: 'chemical', corpus: 'BC5CDR', type: 'Chemical', dir: join(m, 'BC5CDR-chem-IOB') },
    { head: 'disease', corpus: 'BC5CDR', type: 'Disease', dir: join(m, 'BC5CDR-disease-IOB') },
    { head: 'gene', corpus: 'BC2GM', type: 'Gene', dir: join(m, 'BC2GM-IOB') },
  ]
  return opts.withDevel ? sets.map((s) => ({ ...s, develInTraining: true })) : sets
}

/** The heads, in order of first appearance, each with the corpora whose gold it learns (its own, and those it also learns: TypeCorpus.alsoLearns). */
export function typeHeads(sets: readonly TypeCorpus[]): Array<{ head: string; type: string; corpora: TypeCorpus[] }> {
  const heads = [...new Set(sets.map((s) => s.head))]
  return heads.map((head) => {
    const corpora = sets.filter((s) => s.head === head || s.alsoLearns === head)
    return { head, type: corpora[0].type, corpora }
  })
}

/** The corpora a head's teachers train on: the head's own, and those that also teach it (TypeCorpus.alsoTeaches), in the sets' order. */
export function teacherCorpora(sets: readonly TypeCorpus[], head: string): TypeCorpus[] {
  return sets.filter((s) => s.head === head || s.alsoTeaches === head)
}

/**
 * `--task HEAD=TRAIN:DEV` for each corpus (HEAD its own head, or `head` for all): a head given
 * several corpora trains on all of them. Without `devel`, `--task HEAD=TRAIN`: the corpus takes no
 * part in choosing the epoch. A corpus whose devel is training data (develInTraining) gives
 * `--task HEAD=TRAIN --task HEAD=DEV`: both learnt, neither scored.
 */
function taskArgs(sets: readonly TypeCorpus[], head?: string, { devel = true }: { devel?: boolean } = {}): string[] {
  return sets.flatMap((c) => {
    const h = head ?? c.head
    if (c.develInTraining) return ['--task', `${h}=${join(c.dir, 'train.tsv')}`, '--task', `${h}=${join(c.dir, 'devel.tsv')}`]
    return ['--task', `${h}=${join(c.dir, 'train.tsv')}${devel ? `:${join(c.dir, 'devel.tsv')}` : ''}`]
  })
}

/**
 * The teachers: an ensemble of word taggers per head (the disease teachers on both disease
 * corpora), one per seed, trained with train's defaults (the settings the character-aware issue
 * measured) and a time cap. The student learns, for each head, the mentions most of the head's
 * teachers agree on (train's span majority vote), which are better labels than any one teacher's
 * (bench:ensemble; docs/ACCURACY.md, "Teacher ensembles"). Two teachers train at a time, one
 * thread each.
 *
 * Each reads windows of up to 128 words over the 10-sentence documents (train --doc-level) instead
 * of single sentences, and tags the student's transfer passages with their neighbours in view.
 * Measured at 2 × 300, 26 minutes, three seeds each (2026-12-05, bench/accuracy-notes.md), devel
 * means sentences → windows: NCBI-disease 84.26 → 85.04, BC5CDR Disease 79.14 → 78.74, Chemical
 * 90.60 → 90.83, BC2GM 79.97 → 80.28; windows also take fewer steps an epoch.
 *
 * train's default width (2 × 200) and 15 minutes, so that the recipe runs within 3 hours: 2 × 300
 * gained about 0.15 on disease and gene and nothing on chemicals over three seeds (2026-12-04), and
 * 2 × 200 on windows converges within 15 minutes (the disease and chemical teachers finish their 25
 * epochs in 12–13 minutes, the gene ones reach 24). Devel means of the three seeds in the session-27
 * run, against 2 × 300 for 26 minutes on windows: NCBI-disease 84.11 (85.04), BC5CDR Disease 79.21
 * (78.74), Chemical 90.63 (90.83, with a 75-minute LM), BC2GM 80.30 (80.28).
 */
export const WORD_TEACHER = { minutes: 15, seeds: [42, 43, 44], threads: 1, lstmHidden: 200, docLevel: true }

/** The teachers' width and time cap for one run (train-default's --teacher-hidden, --teacher-minutes). */
export interface TeacherSettings {
  lstmHidden: number
  minutes: number
}

/**
 * Word vectors: fastText skip-gram vectors (100 dimensions, the word size; `wordvec --vec`) of the
 * unlabelled sentences' words, which start the word table of every teacher and of the student
 * (train --word-vectors): words the corpora lack then mean something from the start, and the
 * file's frequent words join the teachers' vocabularies (up to train's 50 000 words). 12 minutes
 * on one core beside two teachers (3.4 M words, 21 794 vectors). Measured on the recipe's disease
 * teacher, seed 42, the same command with and without them (2026-12-03): devel NCBI-disease 82.6 →
 * 85.2, BC5CDR Disease 77.2 → 78.4 (mean 79.9 → 81.8), and ahead from the first epoch (0.613 →
 * 0.699); docs/ACCURACY.md.
 */
export const WORD_VECTORS = { seed: 42, file: 'words.vec' }

/**
 * A character language model of the unlabelled sentences (`charlm`: a forward and a backward LSTM
 * LM, Akbik et al. 2018's contextual string embeddings, small), whose states per word the teachers
 * of `heads` read (train --char-lm). The recipe's chemical teacher, devel F1 (bench/accuracy-notes.md,
 * 2026-12-04): seed 42 89.81 → 90.39, seed 43 89.8 → 90.85; the gene teacher alike per epoch and
 * 1.3 under at the 26 minutes (a step with the states costs about twice as much); the PyTorch
 * prototype moved the disease corpora within noise. So the chemical teachers only. LSTM 256 per direction: on one
 * thread 512 trains at about 7 000 characters a second (both directions), 256 at 23 000, so 256
 * reads the 18 M characters about three times in an hour and 512 less than once. 40 minutes, so
 * that the recipe runs within 3 hours: held out 2.180 bits per character at 40 minutes (session 27,
 * beside a teacher), against 2.264 after the first pass and 2.169 at 75 (the recipe's LM until
 * then); five epochs (116 minutes, 2.100) gave the chemical teachers no more than noise. It trains
 * beside the word vectors and the teachers that do not read it; those that do wait for it. The
 * student does not read it (the latency budget): what it adds reaches the student through its
 * teachers' labels.
 */
export const WORD_CHAR_LM = { hidden: 256, minutes: 40, seed: 42, threads: 1, heads: ['chemical'] as readonly string[] }

/**
 * The student: one multi-task word tagger (a head per entity type) trained on the gold corpora and
 * on unlabelled sentences each head's teacher tagged (train --teacher/--transfer). train's
 * word-lstm defaults otherwise, and the word vocabulary is capped so the model stays small.
 * 60 000 sentences (a seeded sample; minutes 120 only bounds a slower machine): two seeds of the
 * recipe's student on session 27's teachers (sessions 31–32, 2 threads) scored int8 devel with the
 * document rules 85.21 / 90.87 / 79.52 / 81.08 (mean 84.17, seed 42) and 85.39 / 90.86 / 79.37 /
 * 80.69 (84.08, seed 43), against three runs at 30 000 sentences of 84.03, 83.88 and 84.01; a
 * third seed afterwards 85.28 / 91.11 / 80.34 / 80.99 (84.43, seed 44). Over three runs each, 84.23
 * against 83.97 on the mean and 85.29 against 84.62 on NCBI-disease, level elsewhere. The student
 * stage takes 62–67 minutes instead of about 37 (the teachers tag twice the passages: 13.5 minutes
 * instead of 6). All 118 568 sentences in 5 epochs (about as many steps) scored 83.85, and 60 000
 * in 12 epochs 84.02 for 63 minutes of training instead of 53 (session 33, seed 42, the same
 * teachers; bench/accuracy-notes.md): neither more text at fewer passes nor more passes helps.
 * Dropout 0.25 instead of train's 0.5, which was chosen on the gold corpora alone: with the
 * teachers' sentences besides, the student fitted them better on the disease-only student
 * (NCBI-disease + BC5CDR-disease, the recipe's three disease teachers, 30 000 sentences, 25
 * minutes, seed 42): devel 82.9 / 75.6 (mean 79.3) against 81.4 / 75.9 (78.6).
 * A BiLSTM of 2 × 300, whose weights int8 then runs as onnxruntime's DynamicQuantizeLSTM (int8's
 * --int8-lstm): it tags as fast as a float 2 × 200 (bench:lstm-int8) and scored higher on
 * NCBI-disease devel (bench/accuracy-notes.md, "A 2 × 300 student with the int8 BiLSTM").
 * The learning rate falls linearly to 0 over 14 epochs (train --lr-schedule linear) instead of
 * staying at 2e-3 for a time budget: same seed, teachers and tags, 2 threads, devel mean as train
 * reports it 83.89 at the last epoch against the constant rate's best 83.32 (epoch 11 of 15, its
 * devel moving by up to a point from one epoch to the next); int8 with the int8 BiLSTM, devel with
 * the document rules: 84.47 / 90.83 / 79.70 / 80.59 (NCBI-disease, BC5CDR Chemical, Disease, BC2GM),
 * mean 83.90 against the model shipped before (83.42); bench/accuracy-notes.md. 48 minutes on 2
 * threads; the minutes only bound a slower machine.
 * Windows of up to 64 words over the documents (train --doc-level --max-length 64; the transfer
 * text as passages of 10 consecutive lines, which the document-level teachers tag in context)
 * instead of sentences: the same command otherwise, with two disease teachers on windows besides
 * the nine then in the recipe (2026-12-05, one seed): int8 devel with the document rules 84.45 /
 * 91.20 / 79.54 / 80.86, mean 84.01, against the sentence-level student's 84.54 / 90.79 / 79.76 / 80.62 (83.93): level
 * within one seed's noise, chosen by this recipe's rule (the higher mean devel F1). Windows of 128
 * would cost a third more tagging time than sentences; 64 cost none (bench/accuracy-notes.md).
 * 10 epochs instead of 14, with the nine teachers on windows (WORD_TEACHER), so that the recipe runs
 * within 3 hours (session 27, one seed): int8 devel with the document rules 84.55 / 91.20 / 79.15 /
 * 81.20, mean 84.03, against 84.01 for 14 epochs of the eleven teachers before: level, chosen by the
 * rule. 31 minutes of training after 6 of tagging the transfer passages, on 2 threads.
 * No checkpoint averaging (averageLast 0; train --average-last N keeps the mean of the last N
 * epochs' weights when devel prefers it): the recipe's command with --average-last 3 (session 29,
 * seed 42, 2 threads) scored the mean of epochs 8–10 83.95 on devel as train reports it against
 * epoch 10's 83.96, so it was not kept; int8 with the document rules, every epoch's weights kept
 * aside: epoch 10 83.95, the mean of 8–10 83.95, of 6–10 83.84. With the rate falling to 0 the
 * last epochs' weights are already close together.
 * The shipped model is this recipe's session-27 run, built before the training graphs stopped
 * using ScatterND(add) (commit ff5eb55: onnxruntime's kernel raced on 2 threads, so no 2-thread
 * run repeated itself). The recipe as it is now, run once on session 27's teachers (session 29):
 * int8 devel with the document rules 84.83 / 90.38 / 79.43 / 80.88, mean 83.88 against the
 * shipped 84.03 — level within four runs' spread (83.88–84.03), so by the rule the shipped model
 * stays (bench/accuracy-notes.md).
 * One student, not a second generation: two first students (seeds 42, 43) as teachers of every head
 * beside its three teachers raised the vote the student learns from to 84.98 on devel (the
 * teachers' alone 84.47), and its student (seed 44) scored int8 devel with the rules 84.83 / 90.44
 * / 79.41 / 80.73, mean 83.85, for about 50 minutes more (session 30; bench/accuracy-notes.md,
 * "Students as teachers").
 * The student runs alone (after every teacher), so it takes both cores: the word
 * tagger trains 1.45× faster on 2 threads than on 1 (bench:engine --kinds word-lstm, 20 094 against
 * 13 886 tokens/s), i.e. more epochs in the same minutes.
 */
export const WORD_STUDENT = { transferSentences: 60_000, maxWords: 25_000, lstmHidden: 300, lrSchedule: 'linear', epochs: 10, averageLast: 0, minutes: 120, seed: 42, threads: 2, dropout: 0.25, docLevel: true, maxLength: 64 }

/*
 * No stage after the student on the gold corpora alone (train --init, the same heads and
 * vocabulary, Adam 5e-4, 6 epochs, dropout 0.5): the recipe ran one until 2026-12-05 and kept its
 * model only when it raised the mean devel F1, which it never did in three runs (sessions 16, 22, 23; e.g. the
 * student's 83.23 with the document rules against 82.93 after it), and cost 13 minutes of the
 * recipe's time. int8 quantizes the student.
 */

/** One `fastbioner eval` of the evaluation stage, its scores kept under key. */
export interface EvalRun {
  key: string
  /** What the progress line says. */
  what: string
  args: string[]
}

/**
 * Where the scores of a corpus's type are kept: its own head (devel, test) or every head merged
 * (test), with the document rules as `tag` applies them or, `rules` false, without
 * (--no-document-rules: the model's own decisions alone).
 */
export function scoreKey(s: TypeCorpus, split: 'devel' | 'test', merged = false, rules = true): string {
  return `${s.corpus}/${s.type}/${split}${merged ? '/merged' : ''}${rules ? '' : '/no-rules'}`
}

/** Where a head's score on another corpus of its type is kept (cross-corpus: test, with the document rules). */
export function crossKey(s: TypeCorpus, head: string): string {
  return `${s.corpus}/${s.type}/test/head:${head}`
}

/** For each corpus, the other heads of its type that do not learn its gold (a type with a head per corpus): scored on it for the card's cross-corpus line. */
export function otherHeads(sets: readonly TypeCorpus[]): Array<{ set: TypeCorpus; head: string }> {
  return sets.flatMap((s) => [...new Set(sets.filter((o) => o.type === s.type && o.head !== s.head && o.head !== s.alsoLearns).map((o) => o.head))].map((head) => ({ set: s, head })))
}

export interface WordPlan {
  /** The word vectors every teacher and the student start from (WORD_VECTORS). */
  vectors: Stage
  /** The character LM the teachers of WORD_CHAR_LM.heads read. */
  charLm: Stage
  /** `charLm`: the teacher reads the character LM (it starts once that stage is done). */
  teachers: Array<Stage & { head: string; charLm: boolean }>
  student: Stage
  /** Quantizes the student's model: what ships. */
  int8: Stage
  /** The evaluation of what ships (the int8 folder); recorded as one stage, its command every eval in turn. */
  eval: Stage & { runs: EvalRun[] }
  shipDir: string
}

/**
 * Every stage of the word-lstm recipe in a run folder; `teacher`: the teachers' width and cap (default WORD_TEACHER's; the width of train's default is
 * given as no flag, so a run made with it, e.g. the session-16 one, is this recipe's with 200 / 22).
 */
export function wordPlan(out: string, data: string, sets: readonly TypeCorpus[], teacher: TeacherSettings = WORD_TEACHER): WordPlan {
  const unlabeled = join(data, 'unlabeled', 'biomed-sentences.txt')
  const trainOpts = (o: { minutes: number; seed: number; threads: number }, dir: string) => ['--minutes', String(o.minutes), '--seed', String(o.seed), '--threads', String(o.threads), '--out', dir]
  // An interrupted word-tagger stage continues from its last kept epoch, its minutes counting the time before.
  const resumable = (dir: string, threads: number) => ({ resumeArgs: ['train', '--resume', '--out', dir, '--threads', String(threads)], resumeMarker: 'optimizer.safetensors' })
  const vectorsDir = join(out, '0-vectors')
  const vectorFile = join(vectorsDir, WORD_VECTORS.file)
  const vectors: Stage = { name: 'vectors', dir: vectorsDir, args: ['wordvec', '--text', unlabeled, '--vec', vectorFile, '--seed', String(WORD_VECTORS.seed)] }
  const charLmDir = join(out, '0-char-lm')
  const lmTime = ['--minutes', String(WORD_CHAR_LM.minutes), '--threads', String(WORD_CHAR_LM.threads)]
  const charLm: Stage = {
    name: 'char-lm',
    dir: charLmDir,
    args: ['charlm', '--text', unlabeled, '--hidden', String(WORD_CHAR_LM.hidden), '--seed', String(WORD_CHAR_LM.seed), ...lmTime, '--out', charLmDir],
    resumeArgs: ['charlm', '--resume', ...lmTime, '--out', charLmDir],
    resumeMarker: 'optimizer.safetensors',
  }
  const doc = WORD_TEACHER.docLevel
  const teachers = typeHeads(sets).flatMap(({ head }) =>
    WORD_TEACHER.seeds.map((seed) => {
      const name = `teacher-${head}${doc ? '-doc' : ''}-s${seed}`
      const dir = join(out, `1-${name}`)
      const readsLm = WORD_CHAR_LM.heads.includes(head)
      return {
        name,
        head,
        dir,
        charLm: readsLm,
        args: ['train', ...taskArgs(teacherCorpora(sets, head), head), '--map-types', TYPE_MAP, '--arch', 'word-lstm', '--word-vectors', vectorFile, ...(readsLm ? ['--char-lm', charLmDir] : []), ...(teacher.lstmHidden === WORD_TAGGER_DEFAULTS.lstmHidden ? [] : ['--lstm-hidden', String(teacher.lstmHidden)]), ...(doc ? ['--doc-level'] : []), ...trainOpts({ ...WORD_TEACHER, minutes: teacher.minutes, seed }, dir)],
        ...resumable(dir, WORD_TEACHER.threads),
      }
    }),
  )
  const studentDir = join(out, '2-student')
  const student: Stage = {
    name: 'student',
    dir: studentDir,
    args: [
      'train', ...taskArgs(sets), ...sets.flatMap((c) => (c.alsoLearns ? taskArgs([c], c.alsoLearns, { devel: false }) : [])), '--map-types', TYPE_MAP, '--arch', 'word-lstm',
      ...teachers.flatMap((t) => ['--teacher', `${t.head}=${t.dir}`]),
      '--transfer', unlabeled, '--transfer-sentences', String(WORD_STUDENT.transferSentences), '--max-words', String(WORD_STUDENT.maxWords), '--dropout', String(WORD_STUDENT.dropout), '--word-vectors', vectorFile,
      '--lstm-hidden', String(WORD_STUDENT.lstmHidden), '--lr-schedule', WORD_STUDENT.lrSchedule, '--epochs', String(WORD_STUDENT.epochs),
      ...(WORD_STUDENT.averageLast >= 2 ? ['--average-last', String(WORD_STUDENT.averageLast)] : []),
      ...(WORD_STUDENT.docLevel ? ['--doc-level', '--max-length', String(WORD_STUDENT.maxLength)] : []),
      ...trainOpts(WORD_STUDENT, studentDir),
    ],
    ...resumable(studentDir, WORD_STUDENT.threads),
  }
  // int8: the word table as int8 rows (a smaller folder, the same arithmetic) and the BiLSTM on
  // int8 weights (about a third less tagging time), refused when it costs more than MAX_INT8_DROP
  // points on NCBI-disease devel.
  const int8Dir = join(out, '3-int8')
  const ncbi = sets[0]
  const int8: Stage = {
    name: 'int8',
    dir: int8Dir,
    args: ['quantize', '--model', studentDir, '--out', int8Dir, '--int8-lstm', '--calibrate', join(ncbi.dir, 'devel.tsv'), '--head', ncbi.head, '--max-f1-drop', String(MAX_INT8_DROP)],
  }
  // What ships is the int8 folder: it is what is scored and timed. Each corpus's type with its
  // head, devel and test, and test as `tag` gives it (no --head: every head merged; the card and
  // the floor read the corpus's type only, the other heads' mentions are not in its gold); and
  // merged without the document rules, to show what they add.
  const evalArgs = (gold: string, head?: string, extra: string[] = []) => ['eval', '--model', int8Dir, '--gold', gold, ...(head ? ['--head', head] : []), '--map-types', TYPE_MAP, ...extra, '-q']
  const runs = sets.flatMap((s): EvalRun[] => [
    ...(['devel', 'test'] as const).map((split) => ({ key: scoreKey(s, split), what: `${s.corpus} ${s.type} ${split} (head ${s.head})`, args: evalArgs(join(s.dir, `${split}.tsv`), s.head) })),
    { key: scoreKey(s, 'test', true), what: `${s.corpus} ${s.type} test (every head merged, as tag gives it)`, args: evalArgs(join(s.dir, 'test.tsv')) },
    { key: scoreKey(s, 'test', true, false), what: `${s.corpus} ${s.type} test (every head merged, no document rules)`, args: evalArgs(join(s.dir, 'test.tsv'), undefined, ['--no-document-rules']) },
  ]).concat(otherHeads(sets).map(({ set, head }) => ({ key: crossKey(set, head), what: `${set.corpus} ${set.type} test (head ${head}, cross-corpus)`, args: evalArgs(join(set.dir, 'test.tsv'), head) })))
  const evalStage = { name: 'eval', dir: join(out, '4-eval'), args: runs.flatMap((r, i) => (i ? [';', 'fastbioner', ...r.args] : r.args)), runs }
  return { vectors, charLm, teachers, student, int8, eval: evalStage, shipDir: int8Dir }
}

/**
 * The floor below which a candidate does not ship (test F1 as `tag` gives it, each corpus's own
 * types): what one from-scratch character-aware BiLSTM-CRF reaches on each corpus alone
 * (../shared/bench/torch_bilstm_ref.py, the default-model issue's table).
 */
export const SHIP_FLOOR: Record<string, number> = { 'NCBI-disease/Disease': 0.822, 'BC5CDR/Chemical': 0.849, 'BC5CDR/Disease': 0.778, 'BC2GM/Gene': 0.769 }

/** The corpus/type scores (every head merged, test) below the floor, as lines; empty when it may ship. */
export function belowFloor(sets: readonly TypeCorpus[], scores: Record<string, EvalSummary>): string[] {
  return sets.flatMap((s) => {
    const floor = SHIP_FLOOR[`${s.corpus}/${s.type}`]
    const f1 = scores[scoreKey(s, 'test', true)]?.types[s.type]?.f1 ?? 0
    return floor !== undefined && f1 < floor ? [`${s.corpus} ${s.type}: test F1 ${pct(f1)} < ${pct(floor)}`] : []
  })
}

/**
 * What the shipped folder's fastbioner.json states of the model (`benchmark`, shown in the app's
 * model details): test F1 as `tag` gives it (every head merged, document rules on), each corpus's
 * own type; a corpus without that score is left out.
 */
export function wordBenchmark(sets: readonly TypeCorpus[], scores: Record<string, EvalSummary>): ModelBenchmark {
  return {
    split: 'test',
    tagging: 'every head merged, document rules on (as tagging does it)',
    scores: sets.flatMap((s) => {
      const f1 = scores[scoreKey(s, 'test', true)]?.types[s.type]?.f1
      return f1 === undefined ? [] : [{ corpus: s.corpus, type: s.type, f1 }]
    }),
  }
}

interface TrainRun {
  best_epoch: number | null
  best_dev_f1: number | null
  /** Checkpoint averaging (train --average-last): the epochs averaged, the mean weights' devel, whether they were kept. */
  averaged?: { epochs: number[]; dev: { f1: number }; kept: boolean } | null
  epochs: Array<{ epoch: number; dev?: { f1: number } }>
  /** Each corpus's devel scores at the best epoch (train's summary when a head has several corpora). */
  dev_by_corpus?: Array<{ head: string; dev?: string; f1: number }>
}

/**
 * A run's devel F1 per corpus of the plan, as "NCBI-disease Disease 84.0, BC5CDR Disease 77.0";
 * empty when the run did not say or had one corpus (its best devel F1 says it all).
 */
/**
 * Which weights the student kept, and their devel F1 (each corpus's as `each` says): its best
 * epoch, or the mean of its last epochs' weights (checkpoint averaging, kept only when devel
 * scored it above every single epoch).
 */
export function studentChoice(run: TrainRun, best: { epoch: number; dev?: { f1: number } } | undefined, each: string): string {
  const a = run.averaged
  const scores = (f1: number | undefined) => `(${f1 !== undefined ? pct(f1) : '-'}${each ? `: ${each}` : ''})`
  if (a?.kept) {
    const single = run.epochs.reduce((x, e) => ((e.dev?.f1 ?? -1) > (x.dev?.f1 ?? -1) ? e : x), run.epochs[0])
    return `the mean of the weights of epochs ${a.epochs.join(', ')} of ${run.epochs.length} (checkpoint averaging) by the mean devel F1 over the corpora ${scores(a.dev.f1)}, above the best single epoch's (${single.epoch}, ${single.dev ? pct(single.dev.f1) : '-'})`
  }
  const chosen = `best epoch ${run.best_epoch} of ${run.epochs.length} by the mean devel F1 over the corpora ${scores(best?.dev?.f1)}`
  return a ? `${chosen}; the mean of the weights of epochs ${a.epochs.join(', ')} scored ${pct(a.dev.f1)} and was not kept` : chosen
}

function devByCorpus(run: TrainRun, sets: readonly TypeCorpus[]): string {
  const each = run.dev_by_corpus ?? []
  if (each.length < 2) return ''
  return each
    .map((d) => {
      const s = sets.find((c) => (c.head === d.head || c.alsoTeaches === d.head) && (d.dev ?? '').replaceAll('\\', '/').endsWith(`/${basename(c.dir)}/devel.tsv`))
      return s ? `${s.corpus} ${s.type} ${pct(d.f1)}` : null
    })
    .filter((x) => x !== null)
    .join(', ')
}

/** A model card's title, provenance and intended use; \`accuracy\`: how it compares, and what to use instead. */
export function cardIntro(accuracy: string): string {
  return `# FastBioNER default model (Disease, Chemical, Gene)

Generated by \`npm run train:default\` from its measured records (${new Date().toISOString().slice(0, 10)}); do not edit by hand.

## Intended use
Assistive tagging of biomedical text (PubMed titles and abstracts) in FastBioNER Workbench and the
\`fastbioner\` CLI: it proposes Disease, Chemical and Gene mentions that **a person reviews**. It is
not a diagnostic tool and its output must not be used for clinical decisions unreviewed. Its
accuracy is ${accuracy}`
}

export interface WordCardInput {
  /** Replaced by $DATA and $OUT in the commands shown. */
  data: string
  out: string
  sets: readonly TypeCorpus[]
  /** wordvec --vec: the word vectors the teachers and the student started from. */
  vectors: StageRecord
  /** charlm: the character LM some teachers read (null: none did). */
  charLm?: StageRecord | null
  teachers: Array<{ head: string; record: StageRecord }>
  /** The student: what int8 quantizes. */
  trained: StageRecord
  int8: StageRecord
  scores: Record<string, EvalSummary>
  latency: Latency
  evalWall: number
  /** The folder that ships (its config.json and files are read). */
  modelDir: string
}

/** The --seed of a stage's command. */
function seedOf(r: StageRecord): string {
  const i = r.command.indexOf('--seed')
  return i >= 0 ? r.command[i + 1] : '?'
}

/** The teachers' BiLSTM width(s) from their commands ("300", or "200–300" when they differ); train's default 200 when not given. */
function teacherWidths(teachers: ReadonlyArray<{ record: StageRecord }>): string {
  const widths = teachers.map(({ record: r }) => {
    const i = r.command.indexOf('--lstm-hidden')
    return Number(i >= 0 ? r.command[i + 1] : WORD_TAGGER_DEFAULTS.lstmHidden)
  })
  const lo = Math.min(...widths)
  const hi = Math.max(...widths)
  return lo === hi ? String(lo) : `${lo}–${hi}`
}

/** "3" when every head has three teachers, else the counts ("1–3"). */
function teachersPerHead(teachers: ReadonlyArray<{ head: string }>): string {
  const counts = [...new Set(teachers.map((t) => t.head))].map((h) => teachers.filter((t) => t.head === h).length)
  const lo = Math.min(...counts)
  const hi = Math.max(...counts)
  return lo === hi ? String(lo) : `${lo}–${hi}`
}

export function wordModelCard(c: WordCardInput): string {
  const cfg = JSON.parse(readFileSync(join(c.modelDir, 'config.json'), 'utf8')) as Record<string, number>
  const int8Lstm = (readMetadata(c.modelDir) as { quantization?: { int8Lstm?: boolean } } | undefined)?.quantization?.int8Lstm === true
  const run = c.trained.summary as TrainRun & { parameters: number; tokens_per_second: number; train_examples: number; word_vectors?: { initialised: number; vocabulary: number } }
  const vec = c.vectors.summary as { vectors: number; dim: number; words: number }
  const bytes = SHIPPED_FILES.filter((f) => existsSync(join(c.modelDir, f))).reduce((a, f) => a + statSync(join(c.modelDir, f)).size, 0)
  const row = (cells: string[], p: { precision: number; recall: number; f1: number } | undefined) => {
    const q = p ?? { precision: 0, recall: 0, f1: 0 }
    return `| ${[...cells, pct(q.precision), pct(q.recall), pct(q.f1)].join(' | ')} |`
  }
  // What a user of `tag` with no options gets: every head merged, scored on the corpus's own type;
  // and the F1 of the same without the document rules.
  const merged = c.sets.map((s) => {
    const raw = c.scores[scoreKey(s, 'test', true, false)]?.types[s.type]
    return `${row([s.corpus, s.type], c.scores[scoreKey(s, 'test', true)]?.types[s.type])} ${raw ? pct(raw.f1) : '-'} |`
  })
  // A run that learnt the devel splits (--with-devel) has no devel scores to give: they are of its own training data.
  const withDevel = c.sets.some((s) => s.develInTraining)
  const splits = withDevel ? (['test'] as const) : (['devel', 'test'] as const)
  const own = c.sets.flatMap((s) => splits.map((split) => row([s.corpus, split, s.type, `\`${s.head}\``], c.scores[scoreKey(s, split)]?.types[s.type])))
  const short = (r: StageRecord) => r.command.join(' ').replaceAll(c.data, '$DATA').replaceAll(c.out, '$OUT')
  const best = run.epochs.find((e) => e.epoch === run.best_epoch)
  const cal = (c.int8.summary as { calibration: { float: { f1: number }; int8: { f1: number }; bytesRatio: number } }).calibration
  const heads = typeHeads(c.sets)
  // Teachers that read windows over whole documents (train --doc-level) instead of sentences; when
  // every teacher does, said once instead of on each row.
  const docTeachers = c.teachers.filter((t) => t.record.command.includes('--doc-level'))
  const allDoc = docTeachers.length === c.teachers.length
  const teacherRows = c.teachers.map((t, i) => {
    const r = t.record.summary as TrainRun
    const each = devByCorpus(r, c.sets)
    const doc = t.record.command.includes('--doc-level') && !allDoc ? ' on windows over documents,' : ''
    const kept = r.best_dev_f1 === null ? `train + devel, the last of ${r.epochs.length} epochs` : `devel F1 ${each ? `${each}; mean ` : ''}${pct(r.best_dev_f1)}, best of ${r.epochs.length} epochs at ${r.best_epoch}`
    return `| 1.${i + 1} teacher \`${t.head}\`${doc} seed ${seedOf(t.record)} (${kept}) | \`${short(t.record)}\` | ${minutes(t.record.wallSeconds)} |`
  })
  // The character LM: which teachers read it, and how well it predicts held-out text.
  const lm = c.charLm ? (c.charLm.summary as { hidden: number; heldOut: Array<{ bitsPerChar: number }>; epochs: number; minutes: number }) : null
  const lmHeads = [...new Set(c.teachers.filter((t) => t.record.command.includes('--char-lm')).map((t) => `\`${t.head}\``))]
  const lmBits = lm?.heldOut.at(-1)?.bitsPerChar
  const lmText = lm && lmHeads.length ? `; the ${lmHeads.join(', ')} teachers also read, per word, the states of a character language model of the unlabelled sentences (a forward and a backward LSTM of ${lm.hidden}, Akbik et al. 2018; ${lmBits?.toFixed(2)} bits per held-out character), which the student does not run` : ''
  const lmRow = lm && c.charLm ? `| 0 character LM: forward and backward LSTM ${lm.hidden} of the unlabelled sentences (held out ${lmBits?.toFixed(3)} bits per character) | \`${short(c.charLm)}\` | ${minutes(c.charLm.wallSeconds)} |\n` : ''
  const studentEach = devByCorpus(run, c.sets)
  // How a stage came to be recorded when not by this script (run by hand and adopted).
  const stageNotes = [c.vectors, ...(c.charLm ? [c.charLm] : []), ...c.teachers.map((t) => t.record), c.trained, c.int8].filter((r) => r.note).map((r) => `Stage ${r.stage}: ${r.note}.`)
  const docHeads = [...new Set(docTeachers.map((t) => `\`${t.head}\``))]
  const docTeacherText = !docTeachers.length
    ? ''
    : allDoc
      ? `; each reads windows of up to ${WORD_TAGGER_RECIPE.maxLength} words over whole documents instead of single sentences`
      : `; ${docTeachers.length} of them (head ${docHeads.join(', ')}) read windows over whole documents instead of single sentences`
  const studentDoc = c.trained.command.includes('--doc-level')
  const windowFlag = c.trained.command.indexOf('--max-length')
  const studentWindow = windowFlag >= 0 ? c.trained.command[windowFlag + 1] : String(WORD_TAGGER_RECIPE.maxLength)
  const docText = studentDoc ? ` It reads a document in overlapping windows of up to ${studentWindow} words across sentence boundaries
(train --doc-level), not one sentence at a time.` : ''
  const ncbi = c.sets[0]
  const splitsLearnt = withDevel ? ' (train + devel)' : ''
  // Cross-corpus: a head of a type scored on the other corpus of the type (its guideline on text
  // annotated under another), when the type has a head per corpus; else nothing is left out.
  const others = otherHeads(c.sets)
  const cross = others.flatMap(({ set, head }) => {
    const r = c.scores[crossKey(set, head)]?.types[set.type]
    return r ? [`the \`${head}\` head on ${set.corpus} ${set.type} scores ${pct(r.f1)} (its own head ${pct(c.scores[scoreKey(set, 'test')]?.types[set.type]?.f1 ?? 0)})`] : []
  })
  const guidelines = `How far annotation guidelines can move the figures: a
disease tagger trained on NCBI-disease alone scores 47.6 F1 on BC5CDR's disease devel set, and
one trained on BC5CDR 48.1 on NCBI-disease's (other models of this project, docs/ACCURACY.md);
expect text annotated under other guidelines to score well below the tables above.`
  const crossText = cross.length
    ? `Cross-corpus (test, with the document rules): ${cross.join('; ')}. This is what a document gets
when it reads like one corpus but is annotated under the other's guideline. ${guidelines}`
    : others.length
      ? `Cross-corpus: not measured (no head was scored on another corpus of its type). ${guidelines}`
      : `Cross-corpus: not measured. Every head is trained on every corpus of its type here, so no corpus
of any type is left out to score it on. ${guidelines}`
  const shared = heads.filter((h) => h.corpora.length > 1).map((h) => `the \`${h.head}\` head on ${h.corpora.map((x) => x.corpus).join(' and ')}`).join('; ')
  // Types with a head per corpus (their guidelines disagree): tagging routes each document to one.
  const routed = [...new Set(heads.map((h) => h.type))].map((type) => ({ type, heads: heads.filter((h) => h.type === type) })).filter((t) => t.heads.length > 1)
  const headsText = routed.length
    ? `per head: one head per entity type${shared ? ` (${shared}, each corpus teaching only its own sentences)` : ''}, but ${routed.map((t) => `${t.type} has ${t.heads.every((h) => h.corpora.length === 1) ? 'one per corpus' : `${t.heads.length} heads`} (${t.heads.map((h) => `\`${h.head}\` on ${h.corpora.map((x) => x.corpus).join(' and ')}`).join(', ')})`).join('; ')}, whose guidelines
disagree. Tagging keeps, per document, the mentions of the head whose training corpus the document
reads like (a naive Bayes over its words, trained on those corpora: core/tag/router), then merges
the heads,`
    : `per head: one head per entity type, trained on every corpus that annotates the type (${shared}, each
corpus teaching only its own sentences), merged when tagging,`
  return `${cardIntro('below BioBERT-class models (see below): for research-grade tagging fine-tune a\npre-trained BioBERT/PubMedBERT checkpoint, or retrain from your corrections.')}

## What it is
A character-aware word tagger (Lample et al. 2016; Ma & Hovy 2016), trained from scratch here: per
word a ${cfg.word_dim}-dimensional embedding of the lower-cased word (${cfg.word_vocab_size} words of the training text; ${run.word_vectors?.initialised ?? 0} of them started from fastText skip-gram vectors of the unlabelled sentences, ${vec.vectors} vectors learnt from ${(vec.words / 1e6).toFixed(1)} M words), a
character CNN (${cfg.char_dim}-dimensional embeddings of ${cfg.char_vocab_size} characters, ${cfg.char_filters} filters of width ${cfg.char_width}, max over the
word's first ${cfg.max_chars} characters) and 4 case/shape flags → a BiLSTM of 2 × ${cfg.lstm_hidden} → one linear layer and a CRF
${headsText}
so no two heads tag the same type in one document; mentions of different types may overlap ("BRCA1" a Gene
inside "BRCA1 deficiency" a Disease), as in PubTator's output (a workspace, whose entities may not
overlap, keeps the more confident suggestion). ${(run.parameters / 1e6).toFixed(2)} M parameters; the word table is stored as int8 (one scale per
word, dequantized when loaded), the rest float32: ${(bytes / 1024 ** 2).toFixed(1)} MB on disk.${int8Lstm ? ` The BiLSTM runs on int8 weights
(one scale per gate column and direction, quantized when the model loads; onnxruntime's
DynamicQuantizeLSTM).` : ''}${docText}

It learnt from ${c.teachers.length} teachers, ${teachersPerHead(c.teachers)} word taggers per head (one per seed, BiLSTM 2 × ${teacherWidths(c.teachers)}) trained on that head's corpora${docTeacherText}${lmText}, and from ${(run.train_examples / 1000).toFixed(0)} k training ${studentDoc ? 'windows' : 'sentences'}: the gold
corpora and unlabelled in-domain sentences (\`../shared/data/unlabeled\`) that each head's teachers tagged,
the head learning the mentions more than half of them agree on (sequence-level knowledge distillation,
Kim & Rush 2016, from an ensemble; MT-BioNER's multi-teacher, multi-task setting with the teachers'
best label sequences as targets).

| head | trained on | its teachers trained on | types |
|---|---|---|---|
${heads.map((h) => `| \`${h.head}\` | ${h.corpora.map((s) => s.corpus).join(', ')}${splitsLearnt} | ${teacherCorpora(c.sets, h.head).map((s) => s.corpus).join(', ')}${splitsLearnt} | ${h.type} |`).join('\n')}

## Training data and licences
- NCBI-disease (Doğan, Leaman, Lu 2014): public domain (US Government work). Its four
  subtypes are one type, Disease.
- BC5CDR (Li et al. 2016; Chemical, Disease; its chemical and disease files) and BC2GM (Smith et
  al. 2008; GENE, renamed Gene) in the IOB versions of the MTL-Bioinformatics-2016 collection
  (Crichton, Pyysalo, Chiu, Korhonen 2017, *A neural network multi-task learning approach to
  biomedical named entity recognition*, BMC Bioinformatics 18:368): CC BY 4.0.

## Recipe
\`npm run train:default -- --out DIR${withDevel ? ' --with-devel' : ''}\` (reads \`../shared/data\`)${withDevel ? `. Every stage learns each corpus's train and devel splits and keeps its last epoch, as
FastBioNER trained its final models; the settings, epochs and time caps are the ones this recipe chose on devel
with devel held out, so this card gives test scores only` : ''}:

| stage | command | wall time |
|---|---|---|
| 0 word vectors: fastText skip-gram, ${vec.dim} dimensions, of the unlabelled sentences' words (${vec.vectors} words) | \`${short(c.vectors)}\` | ${minutes(c.vectors.wallSeconds)} |
${lmRow}${teacherRows.join('\n')}
| 2 student: multi-task word tagger on gold + teacher-tagged text | \`${short(c.trained)}\` | ${minutes(c.trained.wallSeconds)} |
| 3 int8 of the student's model (${ncbi.corpus} devel F1${withDevel ? ', devel being training data here' : ''}, head \`${ncbi.head}\`: ${pct(cal.float.f1)} float → ${pct(cal.int8.f1)} int8, ${cal.bytesRatio.toFixed(2)}× bytes) | \`${short(c.int8)}\` | ${minutes(c.int8.wallSeconds)} |
| 4 evaluation + latency | \`fastbioner eval\` per corpus and type: devel${withDevel ? ' (not reported: training data here)' : ''} and test with its head, test with every head merged, with and without the document rules | ${minutes(c.evalWall)} |
${stageNotes.length ? `\n${stageNotes.join('\n')}\n` : ''}
Student: ${run.best_dev_f1 === null ? `the last of its ${run.epochs.length} epochs (no devel held out)` : studentChoice(run, best, studentEach)}.
${Math.round(run.tokens_per_second)} tokens/s of training
on ${WORD_STUDENT.threads} threads of a 2-core machine (wall times are not a speed claim).
Settings are \`train\`'s word-lstm defaults (Adam 2e-3, batch 16, dropout 0.5, gradient clip 5),
chosen on NCBI-disease devel (docs/ACCURACY.md), but for the student on the teachers' text dropout ${WORD_STUDENT.dropout} and
a rate falling linearly from 2e-3 to 0 over its ${WORD_STUDENT.epochs} epochs; epochs and minutes bound the runs.

## Scores
Sentence-level IOB2, exact entity spans and types (conlleval rules); test measured once for this model.

What \`fastbioner tag\` with no options gives (every head merged, types allowed to overlap, the
document rules applied), on each corpus's test set and its own type (the other heads' mentions
are not in that corpus's gold and are not counted); the last column is the F1 of the model's
own decisions alone (\`--no-document-rules\`):

| corpus | type | precision | recall | F1 | F1 without document rules |
|---|---|---|---|---|---|
${merged.join('\n')}

Document rules (\`core/tag/document-rules.ts\`): after the model has tagged the text, an abbreviation
the document defines ("nitroglycerin (NTG)", Schwartz & Hearst 2003) takes the type of its long
form wherever it occurs, or loses its mentions when the head did not tag the long form; and a
Chemical tagged once is tagged wherever the same words recur in the document. The benchmark
files have no document boundaries: \`tag\` reads every 10 sentences of a CoNLL file without
\`-DOCSTART-\` lines as one document, so here the rules see parts of abstracts; on whole abstracts
(PubTator, PubMed XML, BioC) they see each abstract.

Each corpus scored with the head of its type (\`--head\`, document rules applied):

| corpus | split | type | head | precision | recall | F1 |
|---|---|---|---|---|---|---|
${own.join('\n')}

${crossText}

Latency: a ${c.latency.pieces}-word abstract (NCBI-disease devel sentences) tags in ${c.latency.medianMs.toFixed(1)} ms median
(90th percentile ${c.latency.p90Ms.toFixed(1)} ms, ${c.latency.runs} runs) with onnxruntime on ${LATENCY_THREADS} CPU threads; ${latencyLoad(c.latency)}.

## Known limits
- Trained without any pretrained language model (none can be downloaded where it is built); its
  word vectors were learnt here from ${(vec.words / 1e6).toFixed(1)} M words of unlabelled sentences. A word in neither
  those nor the training text is read through its characters only.
- The corpora follow different annotation guidelines (e.g. what counts as a Disease differs
  between NCBI-disease and BC5CDR); the one \`disease\` head learns both and follows neither
  exactly.
- Trained on sentences of abstracts: full texts, tables and clinical notes are out of domain.
- English only.
`
}
