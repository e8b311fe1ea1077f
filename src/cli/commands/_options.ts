// The command-line options that several commands share: their tables, spread into a command's
// runCommand table so that a flag shared by commands is declared once, and the parsing of option
// values (numbers, formats, type maps, task lists) into usage errors (exit 2) that name the flag.

import { CORPUS_FORMATS, type CorpusFormat } from '../../shared/domain'
import { OFFSET_UNITS, parseTypeMap, type OffsetUnit, type TypeMap } from '../../core/corpus'
import { DEFAULT_DOCUMENT_RULES, NO_DOCUMENT_RULES, type DocumentRules } from '../../core/tag/document-rules'
import { CliError, type OptionValues } from './_ml'

/** Options that take a value (`--name VALUE`): strings, which the command checks and converts. */
export function valueOptions<const K extends string>(...names: K[]) {
  return Object.fromEntries(names.map((name) => [name, { type: 'string' }])) as { [P in K]: { type: 'string' } }
}

/** Options that take a value and may be repeated (`--name A --name B`). */
export function repeatableOptions<const K extends string>(...names: K[]) {
  return Object.fromEntries(names.map((name) => [name, { type: 'string', multiple: true }])) as { [P in K]: { type: 'string'; multiple: true } }
}

/** Options without a value (`--name`). */
export function flagOptions<const K extends string>(...names: K[]) {
  return Object.fromEntries(names.map((name) => [name, { type: 'boolean' }])) as { [P in K]: { type: 'boolean' } }
}

/** The length and optimiser of a training run: train, distill and pretrain. */
export const RUN_OPTIONS = valueOptions('epochs', 'batch-size', 'lr', 'max-length', 'max-steps', 'seed', 'threads')

/** A token-classification run adds warm-up, weight decay and early stopping: train and distill. */
export const FINETUNE_OPTIONS = { ...RUN_OPTIONS, ...valueOptions('warmup-ratio', 'weight-decay', 'patience') }

/** The labelled corpora of a token-classification run and the checkpoint it writes: train and distill. */
export const CORPUS_OPTIONS = { ...valueOptions('train', 'dev', 'out'), ...repeatableOptions('task', 'map-types'), ...flagOptions('overwrite') }

/** Tagging with a model: tag and eval. */
export const TAGGING_OPTIONS = { ...valueOptions('model', 'batch-size', 'max-length', 'head'), ...flagOptions('no-document-rules') }

/** --no-document-rules: each sentence's mentions as the model decoded them (core/tag/document-rules). */
export function documentRulesOpt(noRules: boolean | undefined): DocumentRules {
  return noRules ? NO_DOCUMENT_RULES : DEFAULT_DOCUMENT_RULES
}

/** The help line of --no-document-rules, indented to a command's option column. */
export function documentRulesHelp(column: number): string {
  const pad = (s: string) => s.padEnd(column)
  // The flag is as wide as tag's option column: its text then starts on the next line.
  const flag = '  --no-document-rules'
  return (
    `${flag.length < column ? pad(flag) : `${flag}\n${pad('')}`}each sentence's mentions as the model decoded them. By default an\n` +
    `${pad('')}abbreviation the document defines ("nitroglycerin (NTG)") takes its long\n` +
    `${pad('')}form's type everywhere, and a chemical tagged once is tagged wherever the\n` +
    `${pad('')}same words recur in the document`
  )
}

/**
 * RUN_OPTIONS' values, each undefined when not given (the command's recipe has the default).
 * `minLength`: the shortest --max-length the command can use (pieces incl. [CLS]/[SEP]).
 */
export function runSettings(v: OptionValues<typeof RUN_OPTIONS>, minLength = 3) {
  return {
    epochs: intOpt(v.epochs, '--epochs'),
    batchSize: intOpt(v['batch-size'], '--batch-size'),
    lr: numOpt(v.lr, '--lr', (n) => n > 0 && n < 1, 'a number in (0, 1)'),
    maxLength: intOpt(v['max-length'], '--max-length', minLength),
    maxSteps: intOpt(v['max-steps'], '--max-steps'),
    seed: intOpt(v.seed, '--seed', 0),
    threads: intOpt(v.threads, '--threads'),
  }
}

/**
 * --resume continues the run in --out as it was started, with its own inputs and settings (the
 * same rule in every command that resumes): an option in `fixed` that is given would change the
 * run and is a usage error naming it. Options such as --threads or --save-every may differ.
 */
export function checkResumeOptions(v: Record<string, unknown>, fixed: readonly string[]): void {
  const given = fixed.filter((n) => {
    const x = v[n]
    return x !== undefined && x !== false && !(Array.isArray(x) && x.length === 0)
  })
  if (given.length) throw new CliError(`--resume continues the run in --out as it was started, with its own inputs and settings: give no ${given.map((n) => `--${n}`).join(', ')}`, 2)
}

/** FINETUNE_OPTIONS' values, each undefined when not given. */
export function finetuneSettings(v: OptionValues<typeof FINETUNE_OPTIONS>) {
  return {
    ...runSettings(v),
    warmupRatio: numOpt(v['warmup-ratio'], '--warmup-ratio', (n) => n >= 0 && n < 1, 'a number in [0, 1)'),
    weightDecay: numOpt(v['weight-decay'], '--weight-decay', (n) => n >= 0 && n < 1, 'a number in [0, 1)'),
    patience: intOpt(v.patience, '--patience'),
  }
}

/** The --task specs (none when the run has one corpus); --task and --train/--dev exclude each other. */
export function taskSpecsOpt(v: OptionValues<typeof CORPUS_OPTIONS>): TaskSpec[] {
  const specs = (v.task ?? []).map(parseTaskSpec)
  if (specs.length && (v.train !== undefined || v.dev !== undefined)) throw new CliError('give either --train/--dev or --task, not both', 2)
  return specs
}

export function requireOpt(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new CliError(`${flag} is required`, 2)
  return value
}

export function intOpt(value: string | undefined, flag: string, min = 1): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isInteger(n) || n < min) throw new CliError(`${flag} must be an integer >= ${min}, got '${value}'`, 2)
  return n
}

export function numOpt(value: string | undefined, flag: string, check: (n: number) => boolean, what: string): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isFinite(n) || !check(n)) throw new CliError(`${flag} must be ${what}, got '${value}'`, 2)
  return n
}

export function formatOpt(value: string | undefined, flag: string): CorpusFormat | undefined {
  if (value === undefined) return undefined
  const v = value === 'bioc' ? 'bioc-json' : value
  if (!(CORPUS_FORMATS as readonly string[]).includes(v)) throw new CliError(`unknown ${flag} format '${value}' (one of ${CORPUS_FORMATS.join(', ')}, or bioc = bioc-json)`, 2)
  return v as CorpusFormat
}

/** --map-types values ("A,B=X;C=Y", repeatable) as a type map; a usage error names the bad rule. */
export function typeMapOpt(values: readonly string[] | undefined): TypeMap | undefined {
  if (!values || values.length === 0) return undefined
  try {
    return parseTypeMap(values)
  } catch (e) {
    throw new CliError(`--map-types: ${(e as Error).message}`, 2)
  }
}

/** The --map-types lines of a command's usage text, options column at `indent`. */
export function mapTypesHelp(indent: number): string {
  const pad = ' '.repeat(indent)
  return [
    `  --map-types RULES${' '.repeat(Math.max(1, indent - 19))}rename entity types on reading (repeatable), e.g.`,
    `${pad}"SpecificDisease,DiseaseClass,Modifier,CompositeMention=Disease;GENE=Gene"`,
  ].join('\n')
}

/** --offsets: the unit of character offsets in corpus files (core/corpus ReadOptions.offsets). */
export function offsetsOpt(value: string | undefined): OffsetUnit | undefined {
  if (value === undefined) return undefined
  if (!(OFFSET_UNITS as readonly string[]).includes(value)) throw new CliError(`--offsets must be one of ${OFFSET_UNITS.join(', ')}, got '${value}'`, 2)
  return value as OffsetUnit
}

/** The --offsets line of a usage text. */
export function offsetsHelp(indent: number, what: string): string {
  const pad = ' '.repeat(indent)
  return [
    `  --offsets UNIT${' '.repeat(Math.max(1, indent - 16))}character offsets ${what}: codepoints (Python, most tools; written`,
    `${pad}by default) or utf16 (Java, JavaScript); read: detected from the mention text`,
  ].join('\n')
}

/** One --task: a head and its corpora. */
export interface TaskSpec {
  name: string
  train: string
  dev?: string
}

/**
 * Splits "NAME=TRAIN:DEV" (or "TRAIN,DEV"). A ':' is a separator except after a lone drive letter
 * followed by a slash ("C:\\data\\train.tsv", "C:/data"), so POSIX absolute paths split too.
 */
export function parseTaskSpec(spec: string): TaskSpec {
  const eq = spec.indexOf('=')
  if (eq <= 0) throw new CliError(`--task '${spec}' is not NAME=TRAIN[:DEV]`, 2)
  const name = spec.slice(0, eq)
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new CliError(`--task name '${name}' must be letters, digits, '_' or '-'`, 2)
  const rest = spec.slice(eq + 1)
  let parts: string[]
  if (rest.includes(',')) parts = rest.split(',')
  else {
    parts = []
    for (const piece of rest.split(':')) {
      const prev = parts.at(-1)
      if (prev !== undefined && /^[A-Za-z]$/.test(prev) && /^[\\/]/.test(piece)) parts[parts.length - 1] = `${prev}:${piece}`
      else parts.push(piece)
    }
  }
  if (parts.length > 2 || !parts[0]) throw new CliError(`--task '${spec}' is not NAME=TRAIN[:DEV]`, 2)
  return { name, train: parts[0], dev: parts[1] || undefined }
}
