// The recipe of the shipped default model (`npm run train:default -- --out DIR`).
//
// Each stage is a `fastbioner` command (the same code a user runs), writes into its own folder
// under --out and, when the command exits 0, a `stage.json` beside it with the command, its
// wall time and its JSON summary. A stage whose stage.json exists is skipped when the command it
// records is the stage's (apart from --out; another recipe's record is refused, never taken as
// done); one that was interrupted is resumed (--resume) where the command supports it, else
// started over. So the recipe can be stopped at any point and run again with the same --out.
// What runs nothing (the records, the word-lstm plan, the floor, the card) is in train-default-plan.ts.
//
// Copying the candidate into resources/models/default is a separate, deliberate step
// (`--install`), never done by a run.
import { spawn } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import { METADATA_FILE, readJsonObject } from '../src/core/model/checkpoint-files'
import { writeFileAtomic } from '../src/core/fs/atomic'
import { openTagger } from '../src/core/tag/open'
import { markLoad, otherCoresSince, waitQuiet } from '../src/core/machine-load'
import { TRANSFER_TAGS_FILE } from '../src/core/train/transfer-tags'
import {
  belowFloor,
  cardIntro,
  foreignStages,
  inParallel,
  vectorsLmAndTeachers,
  LATENCY_QUIET_S,
  LATENCY_THREADS,
  MAX_INT8_DROP,
  minutes,
  pct,
  readStage,
  SHIPPED_FILES,
  staleRecord,
  stageCommand,
  stageFile,
  TYPE_MAP,
  typeCorpora,
  wordBenchmark,
  wordModelCard,
  wordPlan,
  type EvalSummary,
  type Latency,
  type Stage,
  type StageRecord,
  type TeacherSettings,
  type WordPlan,
  WORD_TEACHER,
} from './train-default-plan'

const ROOT = resolve(__dirname, '..')
const CLI = join(ROOT, 'bin', 'fastbioner.js')

interface Options {
  out: string
  data: string
  stages: Set<string> | null
  install: boolean
  /** word-lstm (default): the multi-task word tagger; bert: pretraining → teacher → student → int8. */
  recipe: 'word-lstm' | 'bert'
  /** Teachers trained side by side (one thread each). */
  parallel: number
  /** word-lstm: the teachers' BiLSTM width and time cap. */
  teacher: TeacherSettings
  /** word-lstm: the student's `disease` head learns NCBI-disease's gold too (TypeCorpus.alsoLearns). */
  sharedDiseaseGold: boolean
  /** word-lstm: every stage learns each corpus's devel split too (TypeCorpus.develInTraining). */
  withDevel: boolean
}

function parseArgs(argv: string[]): Options {
  let out: string | undefined
  let data = resolve(ROOT, '..', 'shared', 'data')
  let stages: Set<string> | null = null
  let install = false
  let recipe: Options['recipe'] = 'word-lstm'
  let parallel = 2
  let sharedDiseaseGold = false
  let withDevel = false
  const teacher: TeacherSettings = { lstmHidden: WORD_TEACHER.lstmHidden, minutes: WORD_TEACHER.minutes }
  const positive = (flag: string, value: string): number => {
    const n = Number(value)
    if (!Number.isInteger(n) || n < 1) {
      process.stderr.write(`train-default: ${flag} is a whole number ≥ 1, got '${value}'\n`)
      process.exit(2)
    }
    return n
  }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--out') out = argv[++i]
    else if (a === '--data') data = argv[++i]
    else if (a === '--stages') stages = new Set(argv[++i].split(','))
    else if (a === '--install') install = true
    else if (a === '--teacher-hidden') teacher.lstmHidden = positive(a, argv[++i])
    else if (a === '--teacher-minutes') teacher.minutes = positive(a, argv[++i])
    else if (a === '--shared-disease-gold') sharedDiseaseGold = true
    else if (a === '--with-devel') withDevel = true
    else if (a === '--parallel') {
      parallel = Number(argv[++i])
      if (!Number.isInteger(parallel) || parallel < 1) {
        process.stderr.write(`train-default: --parallel is a whole number ≥ 1, got '${argv[i]}'\n`)
        process.exit(2)
      }
    }
    else if (a === '--recipe') {
      const r = argv[++i]
      if (r !== 'word-lstm' && r !== 'bert') {
        process.stderr.write(`train-default: --recipe is word-lstm or bert, got '${r}'\n`)
        process.exit(2)
      }
      recipe = r
    }
    else if (a === '-h' || a === '--help') {
      process.stdout.write(USAGE)
      process.exit(0)
    } else {
      process.stderr.write(`train-default: unknown argument '${a}'\n${USAGE}`)
      process.exit(2)
    }
  }
  if (!out) {
    process.stderr.write(`train-default: --out DIR is required\n${USAGE}`)
    process.exit(2)
  }
  return { out: resolve(out), data: resolve(data), stages, install, recipe, parallel, teacher, sharedDiseaseGold, withDevel }
}

const USAGE = `usage: npm run train:default -- --out DIR [--data DIR] [--stages teacher-disease,...]

  --out DIR      working folder of the run; run again with the same DIR to resume
  --data DIR     the corpora (default ../shared/data)
  --stages LIST  run only these stages (they still need their inputs); word-lstm: vectors, char-lm,
                 teacher-HEAD-doc-sSEED (HEAD disease, chemical, gene; SEED 42, 43, 44), student, int8
  --parallel N   word-lstm: teachers trained side by side, one thread each (default 2, the cores
                 the recipe was timed on)
  --teacher-hidden N, --teacher-minutes M
                 word-lstm: the teachers' BiLSTM width (default ${WORD_TEACHER.lstmHidden}) and time cap (default
                 ${WORD_TEACHER.minutes}); the width is a flag only when it is not train's default (200)
  --shared-disease-gold
                 word-lstm: the student's \`disease\` head learns NCBI-disease's gold too, as its teachers
                 do (off: it learns BC5CDR-disease's); tagging routes NCBI-disease-like documents to
                 \`disease-ncbi\` all the same
  --with-devel   word-lstm: every stage learns each corpus's devel split beside its train split and
                 keeps its last epoch (FastBioNER's final models: train and devel merged); the
                 settings are the ones chosen on devel, and the card gives no devel scores
  --install      after the run, copy the candidate's model files into resources/models/default
  --recipe R     word-lstm (default): one multi-task character-aware word tagger (BiLSTM-CRF, a head
                 per entity type), the most accurate model trained here from scratch; bert: the earlier recipe
                 (masked-LM pretraining → multi-task BERT teacher → 3-layer student → int8)
`

/**
 * Runs `fastbioner ARGS`, progress to our stderr (each line after `prefix`, so stages running
 * side by side can be told apart), and returns its last JSON line on stdout.
 */
function runCli(args: string[], prefix = ''): Promise<unknown> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', prefix ? 'pipe' : 'inherit'] })
    let stdout = ''
    child.stdout?.on('data', (b: Buffer) => (stdout += b.toString('utf8')))
    let partial = ''
    child.stderr?.on('data', (b: Buffer) => {
      const lines = (partial + b.toString('utf8')).split('\n')
      partial = lines.pop() ?? ''
      for (const line of lines) process.stderr.write(`${prefix}${line}\n`)
    })
    child.stderr?.on('end', () => partial && process.stderr.write(`${prefix}${partial}\n`))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`fastbioner ${args[0]} exited with ${code}`))
      const last = stdout.trim().split('\n').filter((l) => l.startsWith('{')).pop()
      resolvePromise(last ? JSON.parse(last) : null)
    })
  })
}

/** Whether `dir` holds files other than the teachers' stored transfer tags, which `train` checks
 * against its own teachers and text before it uses them: a stage may start over them (a student of another size). */
function holdsRunFiles(dir: string): boolean {
  return existsSync(dir) && readdirSync(dir).some((f) => f !== TRANSFER_TAGS_FILE)
}

async function runStage(stage: Stage, opts: Options): Promise<StageRecord> {
  const done = readStage(stage.dir)
  if (done) {
    const stale = staleRecord(stage, done)
    if (stale) throw new Error(`${stale}: not taken as done; delete the folder to run the stage again, or give a new --out`)
    process.stderr.write(`[${stage.name}] done before (${done.wallSeconds.toFixed(0)} s, ${done.finishedAt}); skipped\n`)
    return done
  }
  if (opts.stages && !opts.stages.has(stage.name)) throw new Error(`stage ${stage.name} has not run; it is needed (add it to --stages)`)
  const resuming = stage.resumeArgs !== undefined && stage.resumeMarker !== undefined && existsSync(join(stage.dir, stage.resumeMarker))
  if (!resuming && holdsRunFiles(stage.dir)) throw new Error(`${stage.dir}: an interrupted run that cannot be resumed; delete the folder to start the stage over`)
  const args = resuming ? stage.resumeArgs! : stage.args
  process.stderr.write(`[${stage.name}] ${resuming ? 'resuming' : 'starting'}: fastbioner ${args.join(' ')}\n`)
  mkdirSync(stage.dir, { recursive: true })
  const t0 = performance.now()
  const summary = await runCli(args, opts.parallel > 1 ? `[${stage.name}] ` : '')
  const record: StageRecord = {
    stage: stage.name,
    command: stageCommand(stage),
    wallSeconds: (performance.now() - t0) / 1000,
    finishedAt: new Date().toISOString(),
    summary,
  }
  writeFileAtomic(stageFile(stage.dir), [JSON.stringify(record, null, 2) + '\n'])
  process.stderr.write(`[${stage.name}] finished in ${record.wallSeconds.toFixed(0)} s\n`)
  return record
}

// Stage settings. Sizes are fixed by the budgets (≤ 2.5 h on 2 cores, ≤ 15 ms per 300-token
// abstract); learning rate and epochs as recorded in MODEL_CARD.md.
const MLM = { preset: 'cpu-small', epochs: 2, saveEverySeconds: 300 }
const TEACHER = { epochs: 5, lr: 5e-4, batchSize: 32, patience: 3, seed: 42 }
/** FastBioNER dynamic-weight KD into a shallower student initialised from the teacher's layers. */
const STUDENT = { layers: 3, kd: 'dynamic', epochs: 4, lr: 3e-4, batchSize: 32, patience: 2, seed: 42, cacheMb: 4000 }
/** The student ships when its mean devel F1 is at most this many points below the teacher's. */
const MAX_STUDENT_DROP = 1

/** The bert recipe's corpora: one head each (MT-BioNER), named as the heads are. */
function corpora(data: string): Array<{ head: string; name: string; dir: string; types: string }> {
  const m = join(data, 'mtl-bioner')
  return [
    { head: 'ncbi', name: 'NCBI-disease', dir: join(m, 'NCBI-disease-IOB'), types: 'Disease' },
    { head: 'bc5cdr', name: 'BC5CDR', dir: join(m, 'BC5CDR-IOB'), types: 'Chemical, Disease' },
    { head: 'bc2gm', name: 'BC2GM', dir: join(m, 'BC2GM-IOB'), types: 'Gene' },
  ]
}

/** Median wall time of tagging one ~300-piece abstract (sentence windows), onnxruntime, 2 threads. */
async function measureLatency(modelDir: string, devText: string): Promise<Latency> {
  const tagger = await openTagger(modelDir, { engine: 'onnx', threads: LATENCY_THREADS })
  try {
    // The first sentences of the devel text that make up about 300 word pieces.
    const sentences = devText.split('\n')
    let text = ''
    let pieces = 0
    for (const s of sentences) {
      if (pieces >= 300) break
      const n = tagger.tokenizer.tokenize(s).ids.length
      text += (text ? '\n' : '') + s
      pieces += n
    }
    const doc = { id: 'latency', text, passages: [{ type: 'abstract', offset: 0, length: text.length }], mentions: [] }
    for (let i = 0; i < 3; i++) await tagger.tag([doc])
    // Other work slows the timing (12.7 ms right after the student's threads stopped, load 1.88,
    // 2026-12-07): wait for a quiet machine, and say how busy it was.
    waitQuiet(LATENCY_QUIET_S)
    const loadAverage = loadavg()[0]
    const mark = markLoad()
    const times: number[] = []
    // 100 runs: the medians of 30 runs of one model, each on a quiet machine, ranged 9.7–13.9 ms
    // between processes (2026-12-07).
    for (let i = 0; i < 100; i++) {
      const t0 = performance.now()
      await tagger.tag([doc])
      times.push(performance.now() - t0)
    }
    const otherCores = otherCoresSince(mark)
    times.sort((a, b) => a - b)
    return { pieces, medianMs: times[Math.floor(times.length / 2)], p90Ms: times[Math.floor(times.length * 0.9)], runs: times.length, loadAverage, otherCores }
  } finally {
    await tagger.dispose()
  }
}

/** Sentences of a token-per-line IOB file joined into plain text (one sentence a line). */
function iobText(path: string): string {
  return readFileSync(path, 'utf8')
    .split(/\n\s*\n/)
    .map((block) => block.split('\n').map((l) => l.split('\t')[0]).filter((w) => w.length > 0).join(' '))
    .filter((s) => s.length > 0)
    .join('\n')
}

/**
 * The word vectors, the character LM some teachers read and the teachers that have not run,
 * --parallel at a time, one thread each (teachers named in --stages only, when given; the order is
 * vectorsLmAndTeachers's). Null when --stages left a teacher out. A stage that fails stops the run once
 * the others under way have finished (their records kept).
 */
async function wordTeachers(opts: Options, plan: Pick<WordPlan, 'vectors' | 'charLm' | 'teachers'>): Promise<{ vectors: StageRecord; teachers: Array<{ head: string; record: StageRecord }>; charLm: StageRecord | null } | null> {
  const { teachers } = plan
  const records = new Map<string, StageRecord>()
  const todo = teachers.filter((t) => {
    if (!opts.stages || opts.stages.has(t.name) || readStage(t.dir)) return true
    process.stderr.write(`[${t.name}] not run (not in --stages)\n`)
    return false
  })
  for (const [t, record] of await vectorsLmAndTeachers(plan.vectors, plan.charLm, todo, opts.parallel, (t) => runStage(t, opts))) records.set(t.name, record)
  if (todo.length < teachers.length) return null
  return { vectors: records.get(plan.vectors.name)!, teachers: teachers.map((t) => ({ head: t.head, record: records.get(t.name)! })), charLm: records.get(plan.charLm.name) ?? null }
}

/**
 * The word-lstm recipe (train-default-plan.ts wordPlan): a word-tagger teacher per entity type, the
 * multi-task student with a head per type, int8, evaluation and latency, the model card and the
 * ship floor. A run folder another recipe made is refused before anything runs.
 */
async function wordRecipe(opts: Options): Promise<void> {
  const sets = typeCorpora(opts.data, { sharedDiseaseGold: opts.sharedDiseaseGold, withDevel: opts.withDevel })
  for (const c of sets) for (const f of ['train.tsv', 'devel.tsv', 'test.tsv']) if (!existsSync(join(c.dir, f))) throw new Error(`${join(c.dir, f)}: not found`)
  const unlabeled = join(opts.data, 'unlabeled', 'biomed-sentences.txt')
  if (!existsSync(unlabeled)) throw new Error(`${unlabeled}: not found (give --data DIR, the folder that holds unlabeled/ and mtl-bioner/)`)
  const plan = wordPlan(opts.out, opts.data, sets, opts.teacher)
  const foreign = foreignStages(opts.out, [plan.vectors, plan.charLm, ...plan.teachers, plan.student, plan.int8, plan.eval])
  if (foreign.length) {
    throw new Error(
      `${opts.out} holds stages this recipe (a head per entity type) did not make, so nothing is resumed from it:\n  ${foreign.join('\n  ')}\n` +
        'give a new --out, or delete what is listed to run those stages again',
    )
  }
  const taught = await wordTeachers(opts, plan)
  if (!taught) return
  const { vectors, teachers, charLm } = taught
  const trained = await runStage(plan.student, opts)
  const int8 = await runStage(plan.int8, opts)
  let evalRecord = readStage(plan.eval.dir)
  if (!evalRecord) {
    mkdirSync(plan.eval.dir, { recursive: true })
    const e0 = performance.now()
    // Latency first: timed right after sixteen evaluations on both cores, the same model read
    // 16.1 ms median where it reads 10.1–10.8 alone (2026-12-05).
    const latency = await measureLatency(plan.shipDir, iobText(join(sets[0].dir, 'devel.tsv')))
    const scores: Record<string, EvalSummary> = {}
    for (const r of plan.eval.runs) {
      process.stderr.write(`[eval] ${r.what}\n`)
      scores[r.key] = (await runCli(r.args)) as EvalSummary
    }
    evalRecord = { stage: 'eval', command: stageCommand(plan.eval), wallSeconds: (performance.now() - e0) / 1000, finishedAt: new Date().toISOString(), summary: { scores, latency } }
    writeFileAtomic(stageFile(plan.eval.dir), [JSON.stringify(evalRecord, null, 2) + '\n'])
  }
  const { scores, latency } = evalRecord.summary as { scores: Record<string, EvalSummary>; latency: Latency }
  const card = wordModelCard({ data: opts.data, out: opts.out, sets, vectors, charLm, teachers, trained, int8, scores, latency, evalWall: evalRecord.wallSeconds, modelDir: plan.shipDir })
  writeFileAtomic(join(plan.shipDir, 'MODEL_CARD.md'), [card])
  process.stderr.write(`model card: ${join(plan.shipDir, 'MODEL_CARD.md')}\n`)
  // The card's test scores in the folder's metadata too, where the app reads them (benchmarkOf).
  const metaFile = join(plan.shipDir, METADATA_FILE)
  writeFileAtomic(metaFile, [JSON.stringify({ ...readJsonObject(metaFile), benchmark: wordBenchmark(sets, scores) }, null, 2) + '\n'])
  const short = belowFloor(sets, scores)
  if (short.length) {
    process.stderr.write(`not shipped: below the floor on ${short.join('; ')}\n`)
    if (opts.install) process.exitCode = 1
    return
  }
  const teacherFlags = (opts.teacher.lstmHidden === WORD_TEACHER.lstmHidden && opts.teacher.minutes === WORD_TEACHER.minutes ? '' : ` --teacher-hidden ${opts.teacher.lstmHidden} --teacher-minutes ${opts.teacher.minutes}`) + (opts.sharedDiseaseGold ? ' --shared-disease-gold' : '') + (opts.withDevel ? ' --with-devel' : '')
  process.stderr.write(`to ship it: npm run train:default -- --out ${opts.out}${teacherFlags} --install\n`)
  if (opts.install) install(plan.shipDir)
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2))
  mkdirSync(opts.out, { recursive: true })
  if (opts.recipe === 'word-lstm') return wordRecipe(opts)
  const unlabeled = join(opts.data, 'unlabeled', 'biomed-sentences.txt')
  if (!existsSync(unlabeled)) throw new Error(`${unlabeled}: not found (give --data DIR, the folder that holds unlabeled/ and mtl-bioner/)`)
  const sets = corpora(opts.data)
  for (const c of sets) for (const f of ['train.tsv', 'devel.tsv', 'test.tsv']) if (!existsSync(join(c.dir, f))) throw new Error(`${join(c.dir, f)}: not found`)
  const t0 = performance.now()

  // (1) masked-LM pretraining on the unlabelled in-domain text.
  const mlmDir = join(opts.out, '1-mlm')
  const mlm = await runStage(
    {
      name: 'mlm',
      dir: mlmDir,
      args: ['pretrain', '--text', unlabeled, '--out', mlmDir, '--preset', MLM.preset, '--epochs', String(MLM.epochs), '--save-every', String(MLM.saveEverySeconds)],
      resumeArgs: ['pretrain', '--out', mlmDir, '--resume'],
      resumeMarker: 'optimizer.safetensors',
    },
    opts,
  )

  // (2) the multi-task teacher: one head per corpus, fine-tuned from the pretrained encoder.
  const teacherDir = join(opts.out, '2-teacher')
  const taskArgs = sets.flatMap((c) => ['--task', `${c.head}=${join(c.dir, 'train.tsv')}:${join(c.dir, 'devel.tsv')}`])
  const teacherOpts = ['--map-types', TYPE_MAP, '--epochs', String(TEACHER.epochs), '--lr', String(TEACHER.lr), '--batch-size', String(TEACHER.batchSize), '--patience', String(TEACHER.patience), '--seed', String(TEACHER.seed)]
  const teacher = await runStage(
    {
      name: 'teacher',
      dir: teacherDir,
      args: ['train', '--init', mlmDir, ...taskArgs, '--out', teacherDir, ...teacherOpts],
      resumeArgs: ['train', '--resume', ...taskArgs, '--out', teacherDir, ...teacherOpts],
      resumeMarker: 'optimizer.safetensors',
    },
    opts,
  )

  // (3) FastBioNER: the teacher distilled into a shallower student, on the same three corpora.
  const studentDir = join(opts.out, '3-student')
  const studentArgs = [
    'distill', '--teacher', teacherDir, '--layers', String(STUDENT.layers), '--kd', STUDENT.kd, ...taskArgs, '--out', studentDir, '--map-types', TYPE_MAP,
    '--epochs', String(STUDENT.epochs), '--lr', String(STUDENT.lr), '--batch-size', String(STUDENT.batchSize), '--patience', String(STUDENT.patience),
    '--seed', String(STUDENT.seed), '--cache-mb', String(STUDENT.cacheMb),
  ]
  const student = await runStage(
    { name: 'student', dir: studentDir, args: studentArgs, resumeArgs: [...studentArgs, '--resume'], resumeMarker: 'optimizer.safetensors' },
    opts,
  )
  const choice = chooseShipped(teacher, student)
  process.stderr.write(`[choice] ${choice.why}\n`)
  const shippedDir = choice.shipped === 'student' ? studentDir : teacherDir

  // (4) the shipped form: int8 weights and graph, checked against the float model on devel.
  const ncbiDevel = join(sets[0].dir, 'devel.tsv')
  const candidateDir = join(opts.out, '4-int8')
  const int8 = await runStage(
    {
      name: 'int8',
      dir: candidateDir,
      args: ['quantize', '--model', shippedDir, '--out', candidateDir, '--calibrate', ncbiDevel, '--head', sets[0].head, '--max-f1-drop', String(MAX_INT8_DROP)],
    },
    opts,
  )

  // (5) evaluation: each corpus with its own head, devel and (once, for this model) test.
  const evalDir = join(opts.out, '5-eval')
  const evalRecord = readStage(evalDir)
  let scores: Record<string, EvalSummary>
  let latency: Awaited<ReturnType<typeof measureLatency>>
  let evalWall: number
  if (evalRecord) {
    ;({ scores, latency } = evalRecord.summary as { scores: typeof scores; latency: typeof latency })
    evalWall = evalRecord.wallSeconds
    process.stderr.write(`[eval] done before; skipped\n`)
  } else {
    mkdirSync(evalDir, { recursive: true })
    const e0 = performance.now()
    scores = {}
    for (const c of sets) {
      for (const split of ['devel', 'test']) {
        const key = `${c.head}/${split}`
        process.stderr.write(`[eval] ${c.name} ${split} (head ${c.head})\n`)
        scores[key] = (await runCli(['eval', '--model', candidateDir, '--gold', join(c.dir, `${split}.tsv`), '--head', c.head, '--map-types', TYPE_MAP, '-q'])) as EvalSummary
      }
    }
    latency = await measureLatency(candidateDir, iobText(ncbiDevel))
    evalWall = (performance.now() - e0) / 1000
    writeFileAtomic(stageFile(evalDir), [JSON.stringify({ stage: 'eval', command: ['fastbioner', 'eval', '…'], wallSeconds: evalWall, finishedAt: new Date().toISOString(), summary: { scores, latency } }, null, 2) + '\n'])
  }

  // (6) the model card, written from the records above.
  const card = modelCard({ opts, sets, mlm, teacher, student, choice, int8, scores, latency, evalWall, candidateDir })
  writeFileAtomic(join(candidateDir, 'MODEL_CARD.md'), [card])
  process.stderr.write(`model card: ${join(candidateDir, 'MODEL_CARD.md')}\n`)
  process.stderr.write(`recipe done in ${((performance.now() - t0) / 1000).toFixed(0)} s (this invocation); candidate: ${candidateDir}\n`)
  process.stderr.write(`to ship it: npm run train:default -- --out ${opts.out} --install\n`)
  if (opts.install) install(candidateDir)
}

interface RunSummary {
  best_dev_f1: number | null
  parameters: number
}

/** Student or teacher: chosen on devel (mean F1 of the heads), the student when it loses little. */
function chooseShipped(teacher: StageRecord, student: StageRecord): { shipped: 'student' | 'teacher'; why: string } {
  const t = (teacher.summary as RunSummary).best_dev_f1 ?? 0
  const s = (student.summary as RunSummary).best_dev_f1 ?? 0
  const drop = (t - s) * 100
  const said = `student devel F1 ${pct(s)} vs teacher ${pct(t)} (mean of the heads)`
  return drop <= MAX_STUDENT_DROP
    ? { shipped: 'student', why: `${said}: the student ships (at most ${MAX_STUDENT_DROP} point below the teacher)` }
    : { shipped: 'teacher', why: `${said}: the teacher ships (the student is ${drop.toFixed(2)} points below, more than ${MAX_STUDENT_DROP})` }
}

/** Copies the candidate's model files into resources/models/default (the deliberate step). */
function install(candidateDir: string): void {
  const dest = join(ROOT, 'resources', 'models', 'default')
  const staging = `${dest}.new`
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(staging, { recursive: true })
  for (const f of SHIPPED_FILES) if (existsSync(join(candidateDir, f))) copyFileSync(join(candidateDir, f), join(staging, f))
  for (const f of ['config.json', 'vocab.txt', 'model.safetensors', 'MODEL_CARD.md']) if (!existsSync(join(staging, f))) throw new Error(`${candidateDir}: ${f} is missing; nothing installed`)
  rmSync(`${dest}.old`, { recursive: true, force: true })
  if (existsSync(dest)) renameSync(dest, `${dest}.old`)
  renameSync(staging, dest)
  rmSync(`${dest}.old`, { recursive: true, force: true })
  process.stderr.write(`installed into ${dest}\n`)
}

interface CardInput {
  opts: Options
  sets: ReturnType<typeof corpora>
  mlm: StageRecord
  teacher: StageRecord
  student: StageRecord
  choice: ReturnType<typeof chooseShipped>
  int8: StageRecord
  scores: Record<string, EvalSummary>
  latency: { pieces: number; medianMs: number; p90Ms: number; runs: number; loadAverage?: number }
  evalWall: number
  candidateDir: string
}

function modelCard(c: CardInput): string {
  const cfg = JSON.parse(readFileSync(join(c.candidateDir, 'config.json'), 'utf8')) as Record<string, number>
  const meta = JSON.parse(readFileSync(join(c.candidateDir, 'fastbioner.json'), 'utf8')) as {
    quantization?: { calibration?: { head?: string | null; float: { f1: number; medianMs: number; bytes: number }; int8: { f1: number; medianMs: number; bytes: number }; f1DropPoints: number; documents: number } }
  }
  const mlm = c.mlm.summary as { held_out_accuracy: number; steps: number; tokens_per_second: number; sequences: number }
  const teacher = c.teacher.summary as { best_epoch: number; epochs: Array<{ epoch: number; dev?: { f1: number } }>; dev_by_head: Record<string, { f1: number }>; parameters: number; tokens_per_second: number }
  const cal = meta.quantization?.calibration
  const bytes = SHIPPED_FILES.filter((f) => existsSync(join(c.candidateDir, f))).reduce((a, f) => a + statSync(join(c.candidateDir, f)).size, 0)
  const rows = c.sets.flatMap((s) => {
    const out: string[] = []
    for (const split of ['devel', 'test']) {
      const r = c.scores[`${s.head}/${split}`]
      const types = Object.keys(r.types)
      for (const t of types.length > 1 ? [...types, 'overall'] : types) {
        const p = t === 'overall' ? r.overall : r.types[t]
        out.push(`| ${s.name} | ${split} | ${t} | ${pct(p.precision)} | ${pct(p.recall)} | ${pct(p.f1)} |`)
      }
    }
    return out
  })
  const totalWall = c.mlm.wallSeconds + c.teacher.wallSeconds + c.student.wallSeconds + c.int8.wallSeconds + c.evalWall
  const student = c.student.summary as { best_epoch: number | null; best_dev_f1: number | null; epochs: Array<{ epoch: number; dev?: { f1: number; perTask: Record<string, number> } }>; parameters: number; layer_map: number[]; tokens_per_second: number }
  const studentBest = student.epochs.find((e) => e.epoch === student.best_epoch)?.dev?.perTask ?? {}
  const shippedParameters = c.choice.shipped === 'student' ? student.parameters : teacher.parameters
  return `${cardIntro('far below BioBERT-class models (see below): for research-grade tagging import a\npre-trained BioBERT/PubMedBERT checkpoint and fine-tune it, or retrain from your corrections.')}

## What it is
A BERT encoder of ${cfg.num_hidden_layers} layers × ${cfg.hidden_size} hidden units (${cfg.num_attention_heads} attention heads, feed-forward ${cfg.intermediate_size}),
${cfg.vocab_size} lower-cased WordPiece pieces, ${(shippedParameters / 1e6).toFixed(2)} M parameters, with three token-classification heads
(MT-BioNER: one per training corpus), merged when tagging (an overlap goes to the more
confident head):

| head | trained on | types |
|---|---|---|
${c.sets.map((s) => `| \`${s.head}\` | ${s.name} | ${s.types} |`).join('\n')}

Stored as int8 (per-row symmetric weights, dynamic uint8 activations; LayerNorm, softmax, GELU
and the classifiers float32): ${(bytes / 1024 ** 2).toFixed(1)} MB on disk.
${cal ? `On NCBI-disease devel (${cal.documents} documents, ${cal.head ? `head \`${cal.head}\`` : 'every head merged'}) the int8 model scores ${pct(cal.int8.f1)} F1 against ${pct(cal.float.f1)} for the float model (${cal.f1DropPoints >= 0 ? '−' : '+'}${Math.abs(cal.f1DropPoints).toFixed(2)} points).` : ''}

## Training data and licences
- NCBI-disease (Doğan, Leaman, Lu 2014): public domain (US Government work). Its four
  subtypes are one type, Disease.
- BC5CDR (Li et al. 2016; Chemical, Disease) and BC2GM (Smith et al. 2008; GENE, renamed Gene) in
  the IOB versions of the MTL-Bioinformatics-2016 collection (Crichton, Pyysalo, Chiu, Korhonen
  2017, *A neural network multi-task learning approach to biomedical named entity
  recognition*, BMC Bioinformatics 18:368): CC BY 4.0.
- Pretraining text: \`unlabeled/biomed-sentences.txt\` (118 568 sentences from the same
  collection's other corpora and the *train* splits only of the three above; CC BY 4.0).

## Recipe
\`npm run train:default -- --out DIR\` (reads \`../shared/data\`), stages resumable:

| stage | command | wall time |
|---|---|---|
| 1 masked-LM pretraining | \`${c.mlm.command.join(' ').replaceAll(c.opts.data, '$DATA').replaceAll(c.opts.out, '$OUT')}\` | ${minutes(c.mlm.wallSeconds)} |
| 2 multi-task teacher | \`${c.teacher.command.join(' ').replaceAll(c.opts.data, '$DATA').replaceAll(c.opts.out, '$OUT')}\` | ${minutes(c.teacher.wallSeconds)} |
| 3 FastBioNER student | \`${c.student.command.join(' ').replaceAll(c.opts.data, '$DATA').replaceAll(c.opts.out, '$OUT')}\` | ${minutes(c.student.wallSeconds)} |
| 4 int8 | \`${c.int8.command.join(' ').replaceAll(c.opts.data, '$DATA').replaceAll(c.opts.out, '$OUT')}\` | ${minutes(c.int8.wallSeconds)} |
| 5 evaluation + latency | \`fastbioner eval --head H\` per corpus and split | ${minutes(c.evalWall)} |
| total | | ${minutes(totalWall)} |

(A stage that was interrupted and resumed counts from its last resume.) Pretraining: ${mlm.steps} steps
over ${mlm.sequences} packed sequences of 128 pieces, held-out masked-token accuracy ${pct(mlm.held_out_accuracy)} %,
${Math.round(mlm.tokens_per_second)} tokens/s. Teacher: best epoch ${teacher.best_epoch} of ${teacher.epochs.length} by the
mean devel F1 of the heads (${Object.entries(teacher.dev_by_head ?? {}).map(([h, s]) => `${h} ${pct(s.f1)}`).join(', ')}).
Settings (learning rate ${TEACHER.lr}, batch ${TEACHER.batchSize}, up to ${TEACHER.epochs} epochs, patience ${TEACHER.patience}) were set once, not swept.
Student: ${STUDENT.layers} layers initialised from the teacher's embeddings and layers ${student.layer_map.join(', ')}, trained with
FastBioNER's dynamic-weight distillation (soft labels, hidden states and attention maps of the mapped
teacher layers, weighted by φ(s), and the gold labels by 1 − φ(s)); best epoch ${student.best_epoch ?? '-'} of ${student.epochs.length}
(${Object.entries(studentBest).map(([h, f]) => `${h} ${pct(f)}`).join(', ')}), ${Math.round(student.tokens_per_second)} tokens/s.
Shipped: the **${c.choice.shipped}** — ${c.choice.why}.

## Scores
Sentence-level IOB2, exact entity spans and types (conlleval rules), each corpus scored with its
own head; test measured once for this model.

| corpus | split | type | precision | recall | F1 |
|---|---|---|---|---|---|
${rows.join('\n')}

Latency: a ${c.latency.pieces}-piece abstract (NCBI-disease devel sentences) tags in ${c.latency.medianMs.toFixed(1)} ms median
(90th percentile ${c.latency.p90Ms.toFixed(1)} ms, ${c.latency.runs} runs) with onnxruntime on ${LATENCY_THREADS} CPU threads, on the machine that ran the recipe
(2 cores${c.latency.loadAverage !== undefined ? `; 1-minute load average ${c.latency.loadAverage.toFixed(2)} when timed` : ', shared with other work'}).

## Known limits
- Trained without BioBERT or any large pretrained model (none can be downloaded where it is
  built): pretraining saw 3.4 M words, so rare words and long entity names are often missed or
  split. Expect far more misses and false alarms than in published results on these corpora.
- The corpora follow different annotation guidelines (e.g. what counts as a Disease differs
  between NCBI-disease and BC5CDR); the merged output inherits both.
- Trained on sentences of abstracts: full texts, tables and clinical notes are out of domain.
- English only; lower-cased input.
`
}

main().catch((e: unknown) => {
  process.stderr.write(`train-default: ${e instanceof Error ? e.message : String(e)}\n`)
  process.exit(1)
})
