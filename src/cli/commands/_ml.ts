// Shared by the model commands (train, tag, eval, encode): argument parsing with usage errors,
// corpus reading with readable errors, model loading, and mapping known errors to exit codes.
// Not a command itself (src/cli/index.ts dispatches only the names it lists).

import { PretrainError } from '../../core/pretrain/run'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { CORPUS_FORMATS, type CorpusDocument, type CorpusFormat } from '../../shared/domain'
import { CorpusError, formatIssue, mapMentionTypes, parseTypeMap, readCorpusFile, unusedSources, type TypeMap } from '../../core/corpus'
import { BackendError, initBackend, type BackendInfo } from '../../core/model/backend'
import type { BertTokenClassifier } from '../../core/model/bert'
import { bertConfigFromHf, CheckpointError, loadCheckpoint } from '../../core/model/checkpoint'
import { SafetensorsError } from '../../core/model/safetensors'
import { findDefaultModel } from '../../core/model/default-model'
import { WordPieceTokenizer } from '../../core/nlp/tokenizer'
import { VocabError } from '../../core/nlp/vocab'
import { headLabelsOf, readCheckpointInfo, readMetadata } from '../../core/model/checkpoint-files'
import { InferenceEngineError } from '../../core/onnx/session'
import { openTagger, type CheckpointTagger } from '../../core/tag/open'
import { TaggingError } from '../../core/tag/tagger'
import type { TrainingMetadata } from '../../core/train/loop'
import { TRAIN_DEFAULTS } from '../../shared/recipes'

/** An error whose message is meant for the user as is; `code` is the exit status. */
export class CliError extends Error {
  constructor(message: string, readonly code = 1) {
    super(message)
    this.name = 'CliError'
  }
}

export const MAX_WARNINGS_SHOWN = 10

type Options = NonNullable<ParseArgsConfig['options']>

/** parseArgs with strict checking; a usage problem becomes CliError(…, 2). */
export function parse<O extends Options>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values
  } catch (e) {
    throw new CliError((e as Error).message, 2)
  }
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

/** Reads a corpus; warnings go to stderr (capped), errors become a CliError naming file and line. */
export async function readCorpus(path: string, format: CorpusFormat | undefined, quiet = false, typeMap?: TypeMap): Promise<{ documents: CorpusDocument[]; format: CorpusFormat }> {
  try {
    const r = await readCorpusFile(path, format)
    if (!quiet) {
      for (const w of r.issues.slice(0, MAX_WARNINGS_SHOWN)) process.stderr.write(`warning: ${formatIssue(w)}\n`)
      if (r.issues.length > MAX_WARNINGS_SHOWN) process.stderr.write(`warning: … and ${r.issues.length - MAX_WARNINGS_SHOWN} more in ${path}\n`)
    }
    if (!typeMap || typeMap.size === 0) return { documents: r.documents, format: r.format }
    const unused = unusedSources(r.documents, typeMap)
    if (!quiet && unused.length) process.stderr.write(`warning: ${path}: --map-types source type(s) ${unused.join(', ')} do not occur in it\n`)
    return { documents: mapMentionTypes(r.documents, typeMap), format: r.format }
  } catch (e) {
    if (e instanceof CorpusError) {
      const lines = e.issues.filter((i) => i.severity === 'error').slice(0, MAX_WARNINGS_SHOWN).map(formatIssue)
      throw new CliError(lines.join('\nerror: ') || e.message)
    }
    throw e
  }
}

export async function startBackend(quiet = false): Promise<BackendInfo> {
  return initBackend({ logger: quiet ? () => {} : (line) => process.stderr.write(line + '\n') })
}

export interface LoadedModel {
  model: BertTokenClassifier
  tokenizer: WordPieceTokenizer
  /** What training recorded (sequence length, sentence level), when the checkpoint has it. */
  training: Partial<TrainingMetadata>
  notes: string[]
}

/** A checkpoint for tagging: its stored heads, vocab and casing. */
export async function loadModel(dir: string): Promise<LoadedModel> {
  const ck = await loadCheckpoint(dir)
  const tokenizer = new WordPieceTokenizer(ck.vocab, { lowercase: ck.lowercase, source: `${dir}/vocab.txt` })
  const training = ((ck.metadata as { training?: Partial<TrainingMetadata> } | undefined)?.training ?? {}) as Partial<TrainingMetadata>
  return { model: ck.model, tokenizer, training, notes: ck.notes }
}

/**
 * Checks --max-length and --stride against the model's config.json (and the window size it was
 * trained with) before anything heavy is loaded: a usage error, not a failure after loading.
 * A missing or unreadable config is left for loadModel to report.
 */
export function checkWindowOptions(modelDir: string, maxLength: number | undefined, stride: number | undefined): void {
  if (maxLength === undefined && stride === undefined) return
  let maxPositions: number
  let trained: Partial<TrainingMetadata> = {}
  try {
    maxPositions = bertConfigFromHf(JSON.parse(readFileSync(join(modelDir, 'config.json'), 'utf8'))).maxPositionEmbeddings
  } catch {
    return
  }
  try {
    trained = ((readMetadata(modelDir) as { training?: Partial<TrainingMetadata> } | undefined)?.training ?? {}) as Partial<TrainingMetadata>
  } catch {
    // no metadata: defaults apply
  }
  if (maxLength !== undefined && maxLength > maxPositions) throw new CliError(`--max-length ${maxLength} exceeds the model's max_position_embeddings (${maxPositions})`, 2)
  const length = maxLength ?? trained.maxLength ?? Math.min(TRAIN_DEFAULTS.maxLength, maxPositions)
  if (stride !== undefined && stride >= length - 2) throw new CliError(`--stride ${stride} must be below ${length - 2} (--max-length ${length} minus [CLS] and [SEP])`, 2)
}

/**
 * Checks --head against the heads config.json names, before anything heavy is loaded. A missing
 * or unreadable checkpoint is left for the loader to report.
 */
export function checkHeadOption(modelDir: string, head: string | undefined): void {
  if (head === undefined) return
  let heads: string[]
  try {
    heads = Object.keys(headLabelsOf(readCheckpointInfo(modelDir)))
  } catch {
    return
  }
  if (!heads.includes(head)) throw new CliError(`--head ${head}: ${modelDir} has no such head (heads: ${heads.join(', ')})`, 2)
}

export interface ModelTaggerOptions {
  /** Window settings; default: as the checkpoint was trained. */
  maxLength?: number
  stride?: number
  /** onnxruntime intra-op threads (default: all cores). */
  threads?: number
}

/**
 * A tagger for a checkpoint on onnxruntime (tfjs where it cannot load). The CLI writes nothing
 * into the model folder: a model.onnx that is missing or stale is exported into memory for this
 * run only. Its load notes go to standard error unless quiet.
 */
export async function openModelTagger(dir: string, opts: ModelTaggerOptions, quiet: boolean): Promise<CheckpointTagger> {
  const tagger = await openTagger(dir, { export: 'memory', maxLength: opts.maxLength, stride: opts.stride, threads: opts.threads, logger: quiet ? () => {} : undefined })
  if (!quiet) {
    process.stderr.write(`engine: ${tagger.engine.engine} (${tagger.engine.reason})\n`)
    for (const n of tagger.engine.warnings) process.stderr.write(`note: ${n}\n`)
  }
  return tagger
}

/** Runs a command body: known errors → "fastbioner CMD: message" on stderr and their exit code. */
export async function runCommand(cmd: string, usage: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body()
  } catch (e) {
    if (e instanceof CliError) {
      process.stderr.write(`fastbioner ${cmd}: ${e.message}\n`)
      if (e.code === 2) process.stderr.write(`\n${usage}\n`)
      return e.code
    }
    if (
      e instanceof CheckpointError ||
      e instanceof VocabError ||
      e instanceof SafetensorsError ||
      e instanceof BackendError ||
      e instanceof CorpusError ||
      e instanceof TaggingError ||
      e instanceof InferenceEngineError ||
      e instanceof PretrainError
    ) {
      process.stderr.write(`fastbioner ${cmd}: ${e.message}\n`)
      return 1
    }
    throw e
  }
}

export function writeJsonLine(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n')
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?'
  const s = Math.round(seconds)
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
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

/**
 * Splits "NAME=TRAIN:DEV" (or "TRAIN,DEV"). A ':' is a separator except after a lone drive letter
 * followed by a slash ("C:\\data\\train.tsv", "C:/data"), so POSIX absolute paths split too.
 */
export function parseTaskSpec(spec: string): { name: string; train: string; dev?: string } {
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

/** --model when given, else the installed default model (said on standard error unless quiet). */
export function modelOrDefault(model: string | undefined, quiet: boolean): string {
  if (model !== undefined) return model
  const found = findDefaultModel()
  if (!found.dir) throw new CliError(`no --model DIR given, and this installation has no default model (looked in ${found.searched.join(', ')})`, 2)
  if (!quiet) process.stderr.write(`model: the default model (${found.dir})\n`)
  return found.dir
}
