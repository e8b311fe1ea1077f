// The pure parts of `npm run bench:accuracy` (bench/accuracy.ts): the variant table, which runs
// to make and in what order, which are already stored, the statistics and the markdown. No file
// or process access here, so test/unit/bench can check all of it without training.

/** Options of the bench that name a checkpoint a variant starts from. */
export type CheckpointOption = 'mlm' | 'wordvec' | 'electra'

/** A labelled corpus in sentence-level IOB (train/devel/test .tsv) and the head it trains in multi-task runs. */
export interface Corpus {
  /** Also the head name in multi-task runs and the suffix of stored results when it is not the main target. */
  name: string
  train: string
  devel: string
  test: string
}

export interface VariantContext {
  /** The corpus whose devel F1 is scored. */
  target: Corpus
  /** Every corpus of a multi-task run (the target among them). */
  tasks: readonly Corpus[]
  /** Checkpoint folders given on the command line (--mlm DIR, --wordvec DIR). */
  checkpoints: Partial<Record<CheckpointOption, string>>
}

export interface Variant {
  name: string
  description: string
  /** Skipped, with a printed reason, when this option was not given. */
  needs?: CheckpointOption
  /** `train` options of the variant: data, model, learning rate; the bench adds seed, budget, threads and --out. */
  flags: (c: VariantContext) => string[]
  /**
   * The variant's own budget instead of the shared optimizer-step budget: a model of another kind
   * (the word tagger's steps are not the transformer's) gets epochs and a wall-clock limit.
   */
  budget?: string[]
}

/** Single-corpus data options. */
export const single = (c: VariantContext): string[] => ['--train', c.target.train, '--dev', c.target.devel]
/** One head per corpus (MT-BioNER); the target's head is the one scored. */
export const multitask = (c: VariantContext): string[] => c.tasks.flatMap((t) => ['--task', `${t.name}=${t.train}:${t.devel}`])
/**
 * From scratch with each lever set explicitly (train's from-scratch defaults turn the measured
 * levers on, so a baseline must turn them off to mean the same run whatever the defaults).
 */
const scratch = (levers: { crf?: boolean; augment?: number; average?: number } = {}): string[] => [
  '--preset', 'cpu-small', '--lr', '1e-3', '--batch-size', '32',
  levers.crf ? '--crf' : '--no-crf', '--augment-mentions', String(levers.augment ?? 0), '--average-last', String(levers.average ?? 0),
]
const checkpoint = (c: VariantContext, o: CheckpointOption): string => {
  const dir = c.checkpoints[o]
  if (dir === undefined) throw new Error(`variant needs --${o} DIR`)
  return dir
}

export const BASELINE = 'scratch'

/** One line per lever; the first is the baseline the Δ column is measured against. */
export const VARIANTS: readonly Variant[] = [
  { name: BASELINE, description: 'from scratch, cpu-small (4 × 256), lr 1e-3', flags: (c) => [...single(c), ...scratch()] },
  { name: 'mlm', description: 'fine-tuned from a whole-word MLM checkpoint (--mlm), lr 5e-4', needs: 'mlm', flags: (c) => [...single(c), '--init', checkpoint(c, 'mlm'), '--lr', '5e-4', '--batch-size', '32'] },
  { name: 'augment', description: 'scratch + one mention-replaced copy of the training set', flags: (c) => [...single(c), ...scratch({ augment: 1 })] },
  { name: 'multitask', description: 'scratch, one head per corpus: NCBI-disease + BC5CDR-disease', flags: (c) => [...multitask(c), ...scratch()] },
  { name: 'wordvec', description: 'fine-tuned from a fastText-initialised encoder (--wordvec, `fastbioner wordvec`), lr 1e-3', needs: 'wordvec', flags: (c) => [...single(c), '--init', checkpoint(c, 'wordvec'), '--lr', '1e-3', '--batch-size', '32'] },
  { name: 'electra', description: 'fine-tuned from an ELECTRA discriminator (--electra, `pretrain --objective electra`), lr 5e-4', needs: 'electra', flags: (c) => [...single(c), '--init', checkpoint(c, 'electra'), '--lr', '5e-4', '--batch-size', '32'] },
  { name: 'crf', description: 'scratch + a CRF output layer (Viterbi decoding)', flags: (c) => [...single(c), ...scratch({ crf: true })] },
  { name: 'average', description: 'scratch + the mean of the last 3 epochs kept if devel prefers it', flags: (c) => [...single(c), ...scratch({ average: 3 })] },
  { name: 'combo', description: 'scratch + CRF + one mention-replaced copy (the levers that helped alone)', flags: (c) => [...single(c), ...scratch({ crf: true, augment: 1 })] },
  {
    name: 'word-lstm',
    description: "word tagger (train's default): word embedding + character CNN + shape flags → BiLSTM-CRF; 25 epochs, stopped after the first epoch past 20 min",
    flags: (c) => [...single(c), '--arch', 'word-lstm'],
    budget: ['--epochs', '25', '--minutes', '20'],
  },
]

export interface PlannedRun {
  variant: string
  seed: number
  /** Corpus scored; 'ncbi' is the main target. */
  target: string
  /** File name stem of the stored result: `<variant>-s<seed>` or `<variant>@<target>-s<seed>`. */
  key: string
  /**
   * A multi-task variant already trains a head on every corpus: its score on another target is
   * read from this stored run (the same training) instead of training again.
   */
  from?: string
}

export const MAIN_TARGET = 'ncbi'

export function runKey(variant: string, seed: number, target = MAIN_TARGET): string {
  return `${variant}${target === MAIN_TARGET ? '' : `@${target}`}-s${seed}`
}

/**
 * Variants to run (--only, in table order) and those skipped with the reason. An unknown name in
 * `only` is an error rather than an empty plan.
 */
export function selectVariants(
  variants: readonly Variant[],
  only: readonly string[] | undefined,
  checkpoints: Partial<Record<CheckpointOption, string>>,
): { run: Variant[]; skipped: Array<{ variant: string; reason: string }> } {
  if (only) {
    const unknown = only.filter((n) => !variants.some((v) => v.name === n))
    if (unknown.length) throw new Error(`unknown variant(s) ${unknown.join(', ')} (known: ${variants.map((v) => v.name).join(', ')})`)
  }
  const run: Variant[] = []
  const skipped: Array<{ variant: string; reason: string }> = []
  for (const v of variants) {
    if (only && !only.includes(v.name)) continue
    if (v.needs && checkpoints[v.needs] === undefined) skipped.push({ variant: v.name, reason: `needs --${v.needs} DIR (a checkpoint to start from)` })
    else run.push(v)
  }
  return { run, skipped }
}

/** Whether a variant trains one head per corpus (its options use --task). */
export function isMultiTask(v: Variant): boolean {
  const corpus = (name: string): Corpus => ({ name, train: `${name}/train.tsv`, devel: `${name}/devel.tsv`, test: `${name}/test.tsv` })
  const a = corpus('a')
  return v.flags({ target: a, tasks: [a, corpus('b')], checkpoints: { mlm: 'ckpt', wordvec: 'ckpt', electra: 'ckpt' } }).includes('--task')
}

/**
 * The runs, seed-major (every variant's first seed before any second seed) so that partial
 * results compare like with like; the extra targets (BC5CDR for the combination) come last.
 */
export function planRuns(
  variants: readonly Variant[],
  seeds: readonly number[],
  extra: ReadonlyArray<{ variant: Variant; target: string }> = [],
): PlannedRun[] {
  const plan: PlannedRun[] = []
  for (const seed of seeds) for (const v of variants) plan.push({ variant: v.name, seed, target: MAIN_TARGET, key: runKey(v.name, seed) })
  for (const seed of seeds) {
    for (const { variant: v, target } of extra) {
      plan.push({ variant: v.name, seed, target, key: runKey(v.name, seed, target), ...(isMultiTask(v) ? { from: runKey(v.name, seed) } : {}) })
    }
  }
  return plan
}

/** The runs still to train: those without a stored result that are not read from another run. */
export function pendingRuns(plan: readonly PlannedRun[], stored: ReadonlySet<string>): PlannedRun[] {
  return plan.filter((r) => !stored.has(r.key) && r.from === undefined)
}

/** A multi-task run's result scored on another of its heads (`planned.from` is `run`'s key). */
export function scoreOtherHead(run: StoredRun, planned: PlannedRun): StoredRun {
  const { test: _test, ...rest } = run
  return { ...rest, target: planned.target, head: planned.target, dev_f1: scoredDevF1(run.summary, planned.target), derived_from: planned.from }
}

// ---- stored results -------------------------------------------------------------------------

/** The part of `fastbioner train`'s JSON summary the bench reads. */
export interface TrainSummary {
  best_dev_f1: number | null
  best_epoch: number | null
  dev_by_head: Record<string, { f1: number }> | null
  steps: number
  planned_steps: number
  wall_seconds: number
  train_seconds: number
  tokens_per_second: number
  trainer: string
  epochs: Array<{ epoch: number; steps: number; dev?: { f1: number } }>
}

/** What the bench stores per run (`<out>/<key>.json`). */
export interface StoredRun {
  variant: string
  description: string
  seed: number
  target: string
  /** The head whose devel F1 counts (multi-task runs), else null. */
  head: string | null
  /** Devel F1 that counts: the target head's at the best epoch, or best_dev_f1. */
  dev_f1: number
  /** The exact command, run from the project root (model folder as MODEL_DIR). */
  command: string[]
  /** null: the variant's own budget (Variant.budget), recorded in its command. */
  steps_budget: number | null
  threads: number | null
  cores: number
  cpu: string
  /** os.loadavg() when the run ended: 1, 5, 15 minutes. */
  load_average_end: [number, number, number]
  finished_at: string
  summary: TrainSummary
  /** Key of the multi-task run this score was read from (same training, another head). */
  derived_from?: string
  /** `fastbioner eval` on test, for the final recipe only. */
  test?: { f1: number; precision: number; recall: number; command: string[] }
}

/**
 * The devel F1 that counts for a run: in a multi-task run the target's head at the epoch chosen
 * by the heads' mean (the checkpoint that is kept); otherwise the best devel F1.
 */
export function scoredDevF1(s: TrainSummary, head: string | null): number {
  if (head !== null) {
    const h = s.dev_by_head?.[head]
    if (!h) throw new Error(`the summary has no devel scores for head '${head}' (heads: ${Object.keys(s.dev_by_head ?? {}).join(', ') || 'none'})`)
    return h.f1
  }
  if (s.best_dev_f1 === null) throw new Error('the summary has no devel F1 (was --dev given?)')
  return s.best_dev_f1
}

// ---- statistics and tables --------------------------------------------------------------------

export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return NaN
  return xs.reduce((a, b) => a + b, 0) / xs.length
}

/** Sample standard deviation (n − 1); NaN below two values. */
export function sampleSd(xs: readonly number[]): number {
  if (xs.length < 2) return NaN
  const m = mean(xs)
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1))
}

export interface VariantRow {
  variant: string
  description: string
  /** Per seed, ascending. */
  seeds: Array<{ seed: number; f1: number }>
  meanF1: number
  sdF1: number
  meanWallSeconds: number
  /** Mean minus the baseline's mean; null for the baseline itself or without one. */
  delta: number | null
}

/** One row per variant with results for `target`, in the order of `variantOrder` (unknown names last). */
export function summarise(runs: readonly StoredRun[], target: string, variantOrder: readonly string[], baseline = BASELINE): VariantRow[] {
  const byVariant = new Map<string, StoredRun[]>()
  for (const r of runs) if (r.target === target) byVariant.set(r.variant, [...(byVariant.get(r.variant) ?? []), r])
  const order = (n: string) => (variantOrder.includes(n) ? variantOrder.indexOf(n) : variantOrder.length)
  const rows = [...byVariant.entries()]
    .sort(([a], [b]) => order(a) - order(b) || a.localeCompare(b))
    .map(([variant, rs]): VariantRow => {
      const seeds = rs.map((r) => ({ seed: r.seed, f1: r.dev_f1 })).sort((a, b) => a.seed - b.seed)
      const f1s = seeds.map((s) => s.f1)
      return { variant, description: rs[0].description, seeds, meanF1: mean(f1s), sdF1: sampleSd(f1s), meanWallSeconds: mean(rs.map((r) => r.summary.wall_seconds)), delta: null }
    })
  const base = rows.find((r) => r.variant === baseline)
  if (base) for (const r of rows) if (r !== base) r.delta = r.meanF1 - base.meanF1
  return rows
}

const f3 = (x: number) => x.toFixed(3)

export function formatMinutes(seconds: number): string {
  return seconds >= 90 ? `${(seconds / 60).toFixed(1)} min` : `${Math.round(seconds)} s`
}

/** The markdown table (one row per variant). */
export function renderTable(rows: readonly VariantRow[]): string {
  const lines = [
    '| variant | description | devel F1 mean ± sd (n) | per seed | wall time / run | Δ vs baseline |',
    '|---|---|---|---|---|---|',
  ]
  for (const r of rows) {
    const sd = Number.isNaN(r.sdF1) ? '–' : f3(r.sdF1)
    const perSeed = r.seeds.map((s) => `${s.seed}: ${f3(s.f1)}`).join(', ')
    const delta = r.delta === null ? '–' : `${r.delta >= 0 ? '+' : '−'}${f3(Math.abs(r.delta))}`
    lines.push(`| ${r.variant} | ${r.description} | ${f3(r.meanF1)} ± ${sd} (${r.seeds.length}) | ${perSeed} | ${formatMinutes(r.meanWallSeconds)} | ${delta} |`)
  }
  return lines.join('\n')
}

/** A command as one shell line (arguments with spaces or quotes quoted). */
export function shellLine(argv: readonly string[]): string {
  return argv.map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ')
}

export interface DocContext {
  /** How to regenerate, as typed (npm run bench:accuracy -- …). */
  benchCommand: string
  /** Names of the corpora by target, e.g. { ncbi: 'NCBI-disease', bc5cdr_disease: 'BC5CDR-disease' }. */
  corpusTitles: Record<string, string>
  variantOrder: readonly string[]
  /** Hand-written reading of the results (bench/accuracy-notes.md), placed after the tables. */
  notes?: string
}

/** docs/ACCURACY.md from every stored result. */
export function renderDoc(runs: readonly StoredRun[], c: DocContext): string {
  const out: string[] = []
  const title = (t: string) => c.corpusTitles[t] ?? t
  const budgets = [...new Set(runs.map((r) => r.steps_budget).filter((b): b is number => b !== null))].sort((x, y) => x - y)
  out.push('# Accuracy levers on small data', '')
  out.push(
    `Generated by \`${c.benchCommand}\` from the stored results of ${runs.length} training run(s); do not edit by hand.`,
    '',
    `Each run is \`fastbioner train\` with the variant's options and a fixed budget of ${budgets.join(' or ') || '–'} optimizer steps ` +
      '(the same number of updates whatever the data size; the learning-rate warm-up and decay are planned over those steps); ' +
      'a variant of another model kind (the word tagger) runs on its own budget of epochs and minutes, given in its description. ' +
      'Devel is scored after every epoch and after the last (partial) one; the best devel epoch counts. In multi-task runs the ' +
      "epoch is chosen by the mean of the heads' devel F1 and the score is the target corpus's head at that epoch. " +
      'sd is the sample standard deviation over seeds; Δ is the difference of means to the baseline.',
    '',
  )
  if (budgets.length > 1) out.push(`Note: the stored runs used different step budgets (${budgets.join(', ')}); rows mixing them do not compare.`, '')
  const targets = [...new Set(runs.map((r) => r.target))].sort((a, b) => (a === MAIN_TARGET ? -1 : b === MAIN_TARGET ? 1 : a.localeCompare(b)))
  for (const t of targets) {
    out.push(`## ${title(t)} devel`, '', renderTable(summarise(runs, t, c.variantOrder)), '')
  }
  const tested = runs.filter((r) => r.test)
  if (tested.length) {
    out.push('## Test (final recipe, scored once)', '')
    for (const r of tested) out.push(`- ${r.variant}, seed ${r.seed}, ${title(r.target)} test: F1 ${f3(r.test!.f1)} (precision ${f3(r.test!.precision)}, recall ${f3(r.test!.recall)}); \`${shellLine(r.test!.command)}\``)
    out.push('')
  }
  if (c.notes?.trim()) out.push(c.notes.trim(), '')
  out.push('## Commands', '', 'Run from the project root; MODEL_DIR is a temporary folder, SEED one of the seeds.', '', '```')
  const seen = new Set<string>()
  const order = (n: string) => (c.variantOrder.includes(n) ? c.variantOrder.indexOf(n) : c.variantOrder.length)
  for (const r of [...runs].sort((a, b) => order(a.variant) - order(b.variant) || a.variant.localeCompare(b.variant) || a.seed - b.seed)) {
    const id = `${r.variant}@${r.target}`
    if (seen.has(id) || r.derived_from) continue
    seen.add(id)
    out.push(`# ${r.variant}${r.target === MAIN_TARGET ? '' : ` (${title(r.target)})`}`, shellLine(r.command.map((a, i) => (r.command[i - 1] === '--seed' ? 'SEED' : a))))
  }
  out.push('```', '')
  const loads = runs.map((r) => r.load_average_end[0])
  const machines = [...new Set(runs.map((r) => `${r.cores} cores (${r.cpu})`))]
  const threads = [...new Set(runs.map((r) => (r.threads === null ? 'all cores' : String(r.threads))))]
  const trainers = [...new Set(runs.map((r) => r.summary.trainer))]
  const dates = runs.map((r) => r.finished_at).sort()
  out.push(
    '## Machine',
    '',
    `- ${machines.join('; ')}; trainer ${trainers.join(', ')}; trainer threads: ${threads.join(', ')}.`,
    `- 1-minute load average at the end of each run: min ${loads.length ? Math.min(...loads).toFixed(2) : '–'}, mean ${mean(loads).toFixed(2)}, max ${loads.length ? Math.max(...loads).toFixed(2) : '–'} ` +
      '(other work shared the machine; wall times depend on it, F1 does not).',
    `- Runs finished between ${dates[0] ?? '–'} and ${dates.at(-1) ?? '–'}.`,
    '',
  )
  return out.join('\n')
}
