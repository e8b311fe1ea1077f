// Accuracy levers on NCBI-disease devel (issue 18): one `fastbioner train` per (variant, seed),
// the same optimizer-step budget for every variant, devel F1 mean ± sd over seeds, and
// docs/ACCURACY.md rewritten from every stored result.
//
//   npm run bench:accuracy -- [--only scratch,mlm] [--seeds 42,43,44] [--steps 1098] [--threads N]
//       [--mlm DIR] [--wordvec DIR] [--electra DIR] [--data DIR] [--out DIR] [--keep] [--test VARIANT]
//       [--bc5cdr VARIANT] [--bc5cdr-iob VARIANT] [--render]
//
// The variants are the table in bench/accuracy-plan.ts. Each run's result is stored as
// <out>/<variant>-s<seed>.json (default out: bench-results/accuracy) and a stored run is not made
// again, so an interrupted bench continues where it stopped. --data is the folder holding
// NCBI-disease-IOB/ and BC5CDR-disease-IOB/ (default ../shared/data/mtl-bioner from the project
// root). --test VARIANT also scores that variant's first-seed model once on NCBI test (the model
// is kept as <out>/<key>.model); --bc5cdr VARIANT also runs it with BC5CDR-disease as the target.
// --bc5cdr-iob VARIANT likewise with BC5CDR-IOB (chemical and disease in one file).
// --render only rewrites the table and docs/ACCURACY.md from the stored results.
// Progress goes to standard error, the table to standard output.

import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import {
  MAIN_TARGET,
  pendingRuns,
  planRuns,
  renderDoc,
  renderTable,
  runKey,
  scoredDevF1,
  scoreOtherHead,
  selectVariants,
  summarise,
  VARIANTS,
  type CheckpointOption,
  type Corpus,
  type PlannedRun,
  type StoredRun,
  type TrainSummary,
  type VariantContext,
} from './accuracy-plan'
import { benchCli } from './cli'

const ROOT = resolve(__dirname, '..')
const { values: a } = parseArgs({
  options: {
    only: { type: 'string' },
    seeds: { type: 'string', default: '42,43,44' },
    // 6 epochs of NCBI-disease train (5 829 sentences) at batch 32.
    steps: { type: 'string', default: '1098' },
    threads: { type: 'string' },
    mlm: { type: 'string' },
    wordvec: { type: 'string' },
    electra: { type: 'string' },
    data: { type: 'string', default: resolve(ROOT, '../shared/data/mtl-bioner') },
    out: { type: 'string', default: resolve(ROOT, 'bench-results/accuracy') },
    keep: { type: 'boolean', default: false },
    test: { type: 'string' },
    bc5cdr: { type: 'string' },
    'bc5cdr-iob': { type: 'string' },
    render: { type: 'boolean', default: false },
  },
})

const cli = benchCli('bench:accuracy')
// Annotated, so that TypeScript narrows after a call (a destructured never-function does not).
const fail: (msg: string) => never = cli.fail
const { log, positiveInt } = cli

const seeds = a.seeds!.split(',').map((s) => positiveInt(s.trim(), '--seeds'))
if (new Set(seeds).size !== seeds.length) fail(`--seeds lists a seed twice (${a.seeds})`)
const steps = positiveInt(a.steps!, '--steps')
const threads = a.threads === undefined ? null : positiveInt(a.threads, '--threads')
const outDir = resolve(a.out!)
const dataDir = resolve(a.data!)
const checkpoints: Partial<Record<CheckpointOption, string>> = {}
for (const o of ['mlm', 'wordvec', 'electra'] as const) {
  const dir = a[o]
  if (dir === undefined) continue
  if (!existsSync(join(dir, 'config.json'))) fail(`--${o} ${dir}: no config.json there (give a checkpoint folder)`)
  checkpoints[o] = resolve(dir)
}

function corpus(name: string, folder: string): Corpus {
  const dir = join(dataDir, folder)
  return { name, train: join(dir, 'train.tsv'), devel: join(dir, 'devel.tsv'), test: join(dir, 'test.tsv') }
}
const CORPORA: Record<string, Corpus> = { [MAIN_TARGET]: corpus(MAIN_TARGET, 'NCBI-disease-IOB'), bc5cdr_disease: corpus('bc5cdr_disease', 'BC5CDR-disease-IOB') }
/** Targets scored besides the corpora of multi-task runs: BC5CDR with both types in one file. */
const TARGETS: Record<string, Corpus> = { ...CORPORA, bc5cdr: corpus('bc5cdr', 'BC5CDR-IOB') }
const TITLES = { [MAIN_TARGET]: 'NCBI-disease', bc5cdr_disease: 'BC5CDR-disease', bc5cdr: 'BC5CDR (chemical + disease)' }
const VARIANT_ORDER = VARIANTS.map((v) => v.name)

/** Paths inside the project's parent shown relative to the project root (commands are run from there). */
const shownPath = (p: string) => (p.startsWith('/') && !relative(ROOT, p).startsWith('../../') ? relative(ROOT, p) : p)
/** An argument as shown: paths, also inside `--task NAME=TRAIN:DEV`, relative to the project root. */
const shown = (arg: string) => {
  const task = /^([A-Za-z0-9_-]+)=(\/.*)$/.exec(arg)
  return task ? `${task[1]}=${task[2].split(':').map(shownPath).join(':')}` : shownPath(arg)
}

function readStored(): StoredRun[] {
  if (!existsSync(outDir)) return []
  return readdirSync(outDir)
    .filter((f) => /-s\d+\.json$/.test(f))
    .map((f) => {
      const path = join(outDir, f)
      try {
        return JSON.parse(readFileSync(path, 'utf8')) as StoredRun
      } catch (e) {
        fail(`${path}: not a stored result (${(e as Error).message}); move it away to rerun that run`)
      }
    })
}

function writeJsonAtomic(path: string, value: unknown): void {
  const tmp = `${path}.tmp-${process.pid}`
  writeFileSync(tmp, JSON.stringify(value, null, 1) + '\n')
  renameSync(tmp, path)
}

let child: ReturnType<typeof spawn> | null = null
/** The current run's temporary model folder, removed also when the bench is stopped. */
let currentTmp: string | null = null
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    log(`bench:accuracy: ${sig}: stopping the current run; stored results stay`)
    child?.kill('SIGTERM')
    if (currentTmp) rmSync(currentTmp, { recursive: true, force: true })
    process.exit(130)
  })
}

/** Runs `node bin/fastbioner.js …` from the project root; stdout is returned, stderr lines go to ours with a prefix. */
function fastbioner(args: string[], prefix: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const p = spawn(process.execPath, [join(ROOT, 'bin/fastbioner.js'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    child = p
    let stdout = ''
    let pending = ''
    const tail: string[] = []
    p.stdout!.on('data', (d: Buffer) => (stdout += d.toString()))
    p.stderr!.on('data', (d: Buffer) => {
      pending += d.toString()
      const lines = pending.split('\n')
      pending = lines.pop()!
      for (const l of lines) {
        log(`[${prefix}] ${l}`)
        tail.push(l)
        if (tail.length > 20) tail.shift()
      }
    })
    p.on('error', reject)
    p.on('close', (code) => {
      child = null
      if (pending) log(`[${prefix}] ${pending}`)
      if (code === 0) resolvePromise(stdout)
      else reject(new Error(`fastbioner ${args[0]} exited with ${code}: ${tail.slice(-3).join(' | ')}`))
    })
  })
}

function lastJsonLine(stdout: string, what: string): unknown {
  const line = stdout.trim().split('\n').at(-1)
  try {
    return JSON.parse(line ?? '')
  } catch {
    throw new Error(`${what}: no JSON summary on standard output`)
  }
}

async function makeRun(r: PlannedRun, keepModel: boolean, withTest: boolean): Promise<void> {
  const variant = VARIANTS.find((v) => v.name === r.variant)!
  const target = TARGETS[r.target]
  // The same corpus order whatever the target, so a multi-task run does not depend on it.
  const ctx: VariantContext = { target, tasks: Object.values(CORPORA), checkpoints }
  const flags = variant.flags(ctx)
  const multiTask = flags.includes('--task')
  const tmp = keepModel ? null : mkdtempSync(join(tmpdir(), 'fastbioner-accuracy-'))
  currentTmp = tmp
  const modelDir = keepModel ? join(outDir, `${r.key}.model`) : join(tmp!, 'model')
  // --epochs as large as the budget: the run ends at --max-steps, and train plans the learning-rate
  // schedule over min(max-steps, epochs · steps per epoch), i.e. exactly the budget.
  const budget = variant.budget ?? ['--max-steps', String(steps), '--epochs', String(steps)]
  const common = ['--seed', String(r.seed), ...budget, ...(threads === null ? [] : ['--threads', String(threads)])]
  const args = ['train', ...flags, ...common, '--out', modelDir, ...(keepModel ? ['--overwrite'] : [])]
  const command = ['node', 'bin/fastbioner.js', ...args.map((x) => (x === modelDir ? 'MODEL_DIR' : shown(x))).filter((x) => x !== '--overwrite')]
  log(`bench:accuracy: ${r.key}: ${command.join(' ')}`)
  try {
    const summary = lastJsonLine(await fastbioner(args, r.key), r.key) as TrainSummary
    const head = multiTask ? target.name : null
    const stored: StoredRun = {
      variant: variant.name,
      description: variant.description,
      seed: r.seed,
      target: r.target,
      head,
      dev_f1: scoredDevF1(summary, head),
      command,
      steps_budget: variant.budget ? null : steps,
      threads,
      cores: cpus().length,
      cpu: cpus()[0]?.model.trim() ?? 'unknown',
      load_average_end: loadavg() as [number, number, number],
      finished_at: new Date().toISOString(),
      summary,
    }
    if (withTest) {
      const evalArgs = ['eval', '--model', modelDir, '--gold', target.test, ...(head ? ['--head', head] : []), '-q']
      const scores = lastJsonLine(await fastbioner(evalArgs, `${r.key} test`), `${r.key} test`) as { overall: { f1: number; precision: number; recall: number } }
      stored.test = { ...scores.overall, command: ['node', 'bin/fastbioner.js', ...evalArgs.map((x) => (x === modelDir ? shown(modelDir) : shown(x)))] }
      log(`bench:accuracy: ${r.key}: test F1 ${scores.overall.f1.toFixed(4)}`)
    }
    writeJsonAtomic(join(outDir, `${r.key}.json`), stored)
    log(`bench:accuracy: ${r.key}: devel F1 ${stored.dev_f1.toFixed(4)} in ${Math.round(summary.wall_seconds)} s (load ${stored.load_average_end[0].toFixed(2)})`)
  } finally {
    if (tmp) rmSync(tmp, { recursive: true, force: true })
    currentTmp = null
  }
}

function render(all: StoredRun[]): void {
  // docs/ACCURACY.md from nothing would drop every table it has: the committed results live in
  // docs/accuracy-results, not in the default --out where new runs are stored.
  if (all.length === 0) fail(`no stored results in ${relative(ROOT, outDir) || outDir}: nothing to render (the committed ones: --out docs/accuracy-results)`)
  const mainRows = summarise(all, MAIN_TARGET, VARIANT_ORDER)
  if (mainRows.length) process.stdout.write(`${renderTable(mainRows)}\n`)
  const benchCommand = `npm run bench:accuracy -- ${process.argv.slice(2).map(shown).join(' ')}`.trim()
  const notesPath = join(ROOT, 'bench', 'accuracy-notes.md')
  const notes = existsSync(notesPath) ? readFileSync(notesPath, 'utf8') : undefined
  const doc = renderDoc(all, { benchCommand, corpusTitles: TITLES, variantOrder: VARIANT_ORDER, notes })
  const docPath = join(ROOT, 'docs/ACCURACY.md')
  writeFileSync(`${docPath}.tmp`, doc)
  renameSync(`${docPath}.tmp`, docPath)
  log(`bench:accuracy: wrote ${relative(ROOT, docPath)} from ${all.length} stored result(s)`)
}

async function main(): Promise<void> {
  mkdirSync(outDir, { recursive: true })
  if (!a.render) {
    for (const c of Object.values(CORPORA)) for (const f of [c.train, c.devel]) if (!existsSync(f)) fail(`${f} not found (set --data DIR to the folder holding NCBI-disease-IOB/ and BC5CDR-disease-IOB/)`)
    let selection
    try {
      selection = selectVariants(VARIANTS, a.only?.split(',').map((s) => s.trim()), checkpoints)
    } catch (e) {
      fail((e as Error).message)
    }
    for (const s of selection.skipped) log(`bench:accuracy: skipping ${s.variant}: ${s.reason}`)
    const names = selection.run.map((v) => v.name)
    for (const [flag, name] of [['--test', a.test], ['--bc5cdr', a.bc5cdr], ['--bc5cdr-iob', a['bc5cdr-iob']]] as const) {
      if (name !== undefined && !names.includes(name)) fail(`${flag} ${name}: not among the variants run (${names.join(', ') || 'none'})`)
    }
    const bc5cdrVariant = selection.run.find((v) => v.name === a.bc5cdr)
    const iobVariant = selection.run.find((v) => v.name === a['bc5cdr-iob'])
    const extra = [...(bc5cdrVariant ? [{ variant: bc5cdrVariant, target: 'bc5cdr_disease' }] : []), ...(iobVariant ? [{ variant: iobVariant, target: 'bc5cdr' }] : [])]
    const plan = planRuns(selection.run, seeds, extra)
    const stored = new Set(readStored().map((r) => runKey(r.variant, r.seed, r.target)))
    const testKey = a.test ? runKey(a.test, seeds[0]) : null
    // The final recipe's test score needs its model: make that run again if it was stored without one.
    if (testKey && stored.has(testKey) && !readStored().find((r) => runKey(r.variant, r.seed, r.target) === testKey)?.test) {
      log(`bench:accuracy: ${testKey} is stored without a test score; running it again and keeping its model`)
      stored.delete(testKey)
    }
    const todo = pendingRuns(plan, stored)
    log(`bench:accuracy: ${plan.length} run(s) planned, ${plan.length - todo.length} stored or read from another run in ${outDir}, ${todo.length} to train (${steps} steps each)`)
    const failed: string[] = []
    for (const [i, r] of todo.entries()) {
      log(`bench:accuracy: run ${i + 1}/${todo.length}: ${r.key}`)
      try {
        await makeRun(r, a.keep || r.key === testKey, r.key === testKey)
      } catch (e) {
        log(`bench:accuracy: ${r.key} failed: ${(e as Error).message}`)
        failed.push(r.key)
      }
    }
    const byKey = new Map(readStored().map((r) => [runKey(r.variant, r.seed, r.target), r]))
    for (const r of plan) {
      const source = r.from === undefined ? undefined : byKey.get(r.from)
      if (source && !byKey.has(r.key)) writeJsonAtomic(join(outDir, `${r.key}.json`), scoreOtherHead(source, r))
    }
    if (failed.length) {
      log(`bench:accuracy: ${failed.length} run(s) failed (${failed.join(', ')}); docs/ACCURACY.md not rewritten`)
      process.exit(1)
    }
  }
  render(readStored())
}

main().catch((e) => {
  log(`bench:accuracy: ${(e as Error).stack ?? e}`)
  process.exit(1)
})
