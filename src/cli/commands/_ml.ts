// Shared by the commands: running one (options parsed, --help answered, known errors mapped to
// exit codes), corpus reading with readable errors, model loading and tagging, progress lines.
// The options several commands share and the parsing of option values are in _options.ts.
// Not a command itself (src/cli/index.ts dispatches only the names it lists).

import { CharLmTrainError } from '../../core/pretrain/char-lm'
import { FastTextError } from '../../core/pretrain/fasttext'
import { WordVectorError } from '../../core/nlp/word-vectors'
import { PretrainError } from '../../core/pretrain/run'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import type { CorpusDocument, CorpusFormat } from '../../shared/domain'
import { typesOfLabels } from '../../core/nlp/bio'
import { CorpusError, formatIssue, mapMentionTypes, readCorpusFile, unusedSources, type CorpusReadOptions, type TypeMap } from '../../core/corpus'
import { BackendError, initBackend, type BackendInfo } from '../../core/model/backend'
import type { BertTokenClassifier } from '../../core/model/bert'
import { bertConfigFromHf, CheckpointError, loadCheckpoint } from '../../core/model/checkpoint'
import { SafetensorsError } from '../../core/model/safetensors'
import { findDefaultModel } from '../../core/model/default-model'
import { resolveModelRef } from '../../core/model/hf-cache'
import { WordPieceTokenizer } from '../../core/nlp/tokenizer'
import { VocabError } from '../../core/nlp/vocab'
import { headLabelsOf, readCheckpointInfo, readMetadata } from '../../core/model/checkpoint-files'
import { InferenceEngineError } from '../../core/onnx/session'
import { checkTaggingHeads, openTagger, WORD_TAGGER_MAX_WORDS, type CheckpointTagger } from '../../core/tag/open'
import { folderHeadLabels, isWordTaggerFolder } from '../../core/model/word-tagger'
import { TaggingError } from '../../core/tag/tagger'
import type { TrainingMetadata } from '../../core/train/loop'
import { TRAIN_DEFAULTS } from '../../shared/recipes'

/**
 * An error whose message is meant for the user as is; `code` is the exit status. `showUsage`: the
 * command line itself is wrong (an option, a value), so the usage text follows the message; a
 * problem with a file it names (an output folder in the way) gets a one-line pointer instead.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code = 1,
    readonly showUsage = code === 2,
  ) {
    super(message)
    this.name = 'CliError'
  }
}

export const MAX_WARNINGS_SHOWN = 10

type Options = NonNullable<ParseArgsConfig['options']>

/** The options every command takes (tokenize, which parses on its own, aside). */
const COMMON_OPTIONS = {
  quiet: { type: 'boolean', short: 'q' },
  help: { type: 'boolean', short: 'h' },
} as const

/** parseArgs with strict checking; a usage problem becomes CliError(…, 2). */
export function parse<O extends Options>(argv: string[], options: O) {
  try {
    return parseArgs({ args: joinNegativeValues(argv, options), options, strict: true, allowPositionals: false }).values
  } catch (e) {
    throw new CliError((e as Error).message, 2)
  }
}

/**
 * `--lr -1` → `--lr=-1`: parseArgs takes a value starting with '-' for an option ("argument is
 * ambiguous"), so a negative number would never reach the value checks that say what is allowed.
 */
function joinNegativeValues(argv: readonly string[], options: Options): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    const next = argv[i + 1]
    const name = a.startsWith('--') ? a.slice(2) : null
    if (name !== null && options[name]?.type === 'string' && next !== undefined && /^-(\d|\.\d)/.test(next)) {
      out.push(`${a}=${next}`)
      i++
    } else out.push(a)
  }
  return out
}

/** What parse gives for a command's table: its own options, --quiet and --help. */
export type OptionValues<O extends Options> = ReturnType<typeof parse<O & typeof COMMON_OPTIONS>>

/** Reads a corpus; warnings go to stderr (capped), errors become a CliError naming file and line. */
/**
 * The --map-types sources found across several corpora (the files of a multi-task run): a source
 * is worth a warning only when no file holds it, not once for every file that lacks it.
 */
export class TypeMapUse {
  private readonly seen = new Set<string>()
  private readonly files: string[] = []

  constructor(private readonly typeMap: TypeMap) {}

  add(path: string, documents: readonly CorpusDocument[]): void {
    this.files.push(path)
    for (const d of documents) for (const m of d.mentions) this.seen.add(m.type)
  }

  /** One warning for the sources none of the files holds. */
  warnUnused(quiet: boolean): void {
    const unused = [...this.typeMap.keys()].filter((s) => !this.seen.has(s))
    if (!quiet && unused.length && this.files.length) process.stderr.write(`warning: --map-types source type(s) ${unused.join(', ')} occur in none of ${this.files.join(', ')}\n`)
  }
}

export async function readCorpus(path: string, format: CorpusFormat | undefined, quiet = false, typeMap?: TypeMap, options: CorpusReadOptions = {}, typeUse?: TypeMapUse): Promise<{ documents: CorpusDocument[]; format: CorpusFormat }> {
  try {
    const r = await readCorpusFile(path, format, options)
    if (!quiet) {
      for (const w of r.issues.slice(0, MAX_WARNINGS_SHOWN)) process.stderr.write(`warning: ${formatIssue(w)}\n`)
      if (r.issues.length > MAX_WARNINGS_SHOWN) process.stderr.write(`warning: … and ${r.issues.length - MAX_WARNINGS_SHOWN} more in ${path}\n`)
    }
    if (!typeMap || typeMap.size === 0) return { documents: r.documents, format: r.format }
    if (typeUse) typeUse.add(path, r.documents)
    else {
      const unused = unusedSources(r.documents, typeMap)
      if (!quiet && unused.length) process.stderr.write(`warning: ${path}: --map-types source type(s) ${unused.join(', ')} do not occur in it\n`)
    }
    return { documents: mapMentionTypes(r.documents, typeMap), format: r.format }
  } catch (e) {
    if (e instanceof CorpusError) {
      const lines = e.issues.filter((i) => i.severity === 'error').slice(0, MAX_WARNINGS_SHOWN).map(formatIssue)
      throw new CliError(lines.join('\nerror: ') || e.message)
    }
    throw e
  }
}

/** Progress and notes: lines on standard error, none when quiet. */
export function stderrLog(quiet: boolean): (line: string) => void {
  return quiet ? () => {} : (line) => process.stderr.write(line + '\n')
}

/**
 * Ctrl-C asks a long run to stop at its next safe point: `message` (what is kept) goes to the log
 * and the returned signal aborts. With exitOnSecond a second Ctrl-C exits at once (code 130);
 * without it, further presses repeat the message and the run still stops at that point.
 * release() removes the handler when the run is over.
 */
export function stopOnCtrlC(log: (line: string) => void, message: string, opts: { exitOnSecond?: boolean } = {}): { signal: AbortSignal; release(): void } {
  const controller = new AbortController()
  let presses = 0
  const onSigint = () => {
    presses++
    if (presses > 1 && opts.exitOnSecond) process.exit(130)
    log(message)
    controller.abort()
  }
  process.on('SIGINT', onSigint)
  return { signal: controller.signal, release: () => process.off('SIGINT', onSigint) }
}

export async function startBackend(quiet = false): Promise<BackendInfo> {
  return initBackend({ logger: stderrLog(quiet) })
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
  // A word tagger's windows count words, up to its own limit (its config is not a BERT's).
  const wordTagger = isWordTaggerFolder(modelDir)
  try {
    maxPositions = wordTagger ? WORD_TAGGER_MAX_WORDS : bertConfigFromHf(JSON.parse(readFileSync(join(modelDir, 'config.json'), 'utf8'))).maxPositionEmbeddings
  } catch {
    return
  }
  try {
    trained = ((readMetadata(modelDir) as { training?: Partial<TrainingMetadata> } | undefined)?.training ?? {}) as Partial<TrainingMetadata>
  } catch {
    // no metadata: defaults apply
  }
  if (maxLength !== undefined && maxLength > maxPositions) throw new CliError(`--max-length ${maxLength} exceeds the model's ${wordTagger ? 'longest window, in words' : 'max_position_embeddings'} (${maxPositions})`, 2)
  const length = maxLength ?? trained.maxLength ?? Math.min(TRAIN_DEFAULTS.maxLength, maxPositions)
  if (stride !== undefined && stride >= length - 2) throw new CliError(`--stride ${stride} must be below ${length - 2} (--max-length ${length} minus [CLS] and [SEP])`, 2)
}

/**
 * Checks, before anything heavy is loaded, that a model folder can tag: --head is one of the heads
 * config.json names (a usage error), and the heads used have entity labels and trained weights
 * (core/tag/open: an encoder to fine-tune is refused with what to do). A missing or unreadable
 * checkpoint is left for the loader to report.
 */
export function checkTaggingModel(modelDir: string, head: string | undefined): void {
  let heads: string[]
  try {
    heads = Object.keys(folderHeadLabels(modelDir))
  } catch {
    return
  }
  if (head !== undefined && !heads.includes(head)) throw new CliError(`--head ${head}: ${modelDir} has no such head (heads: ${heads.join(', ')})`, 2)
  checkTaggingHeads(modelDir, head)
}

/** The entity types a model folder's heads (or its --head) tag; null when config.json cannot be read (the loader reports it). */
export function modelEntityTypes(modelDir: string, head?: string): Set<string> | null {
  try {
    const labels = Object.entries(headLabelsOf(readCheckpointInfo(modelDir))).filter(([h]) => head === undefined || h === head).flatMap(([, l]) => l)
    return new Set(typesOfLabels(labels))
  } catch {
    return null
  }
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
 * into the model folder: the graph is our own export of its weights, kept in the per-user cache
 * (core/onnx/graph-cache.ts; in memory for this run where the cache cannot be written). Its load
 * notes go to standard error unless quiet.
 */
export async function openModelTagger(dir: string, opts: ModelTaggerOptions, quiet: boolean): Promise<CheckpointTagger> {
  const tagger = await openTagger(dir, { maxLength: opts.maxLength, stride: opts.stride, threads: opts.threads, logger: quiet ? () => {} : undefined })
  if (!quiet) {
    process.stderr.write(`engine: ${tagger.engine.engine} (${tagger.engine.reason})\n`)
    for (const n of tagger.engine.warnings) process.stderr.write(`note: ${n}\n`)
  }
  return tagger
}

/**
 * Runs a command: parses argv against its option table plus -q/--quiet and -h/--help (a usage
 * problem exits 2 with the usage text), answers --help with the usage text on standard output,
 * else runs the body on the values. Known errors → "fastbioner CMD: message" on stderr and their
 * exit code.
 */
export async function runCommand<O extends Options>(cmd: string, usage: string, argv: string[], options: O, body: (values: OptionValues<O>) => Promise<number>): Promise<number> {
  try {
    const values = parse(argv, { ...options, ...COMMON_OPTIONS })
    // (the generic values type does not resolve its keys here)
    if ((values as { help?: boolean }).help) {
      process.stdout.write(usage + '\n')
      return 0
    }
    return await body(values)
  } catch (e) {
    if (e instanceof CliError) {
      process.stderr.write(`fastbioner ${cmd}: ${e.message}\n`)
      if (e.showUsage) process.stderr.write(`\n${usage}\n`)
      else if (e.code === 2) process.stderr.write(`('fastbioner ${cmd} --help' lists the options)\n`)
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
      e instanceof PretrainError ||
      e instanceof CharLmTrainError ||
      e instanceof FastTextError ||
      e instanceof WordVectorError
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

/**
 * The one place a model argument (--model, --init, --teacher) becomes a folder: an existing path
 * always wins; else a repo id (org/name) in the Hugging Face cache gives its snapshot folder (said
 * on standard error unless quiet). Offline: the cache is only read. A repo id found nowhere is
 * refused with the command that downloads it.
 */
export function modelFolder(ref: string, quiet: boolean, flag = '--model'): string {
  const dir = resolveModelRef(ref)
  if (dir !== ref) {
    if (!quiet) process.stderr.write(`${flag} ${ref}: the Hugging Face cache's snapshot ${dir}\n`)
    return dir
  }
  if (!existsSync(ref) && /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/.test(ref)) {
    throw new CliError(`${flag} ${ref}: no such folder, and no Hugging Face cache on this computer holds a model of that repo id (fastbioner get ${ref} downloads it)`)
  }
  return ref
}

/** --model when given (a folder or a cached repo id), else the installed default model (said on standard error unless quiet). */
export function modelOrDefault(model: string | undefined, quiet: boolean): string {
  if (model !== undefined) return modelFolder(model, quiet)
  const found = findDefaultModel()
  if (!found.dir) throw new CliError(`no --model DIR given, and this installation has no default model (looked in ${found.searched.join(', ')})`, 2)
  if (!quiet) process.stderr.write(`model: the default model (${found.dir})\n`)
  return found.dir
}
