// Output paths of every command that writes (train, distill, tag, convert, compare, encode, …):
// checked before any work, so a bad --out is reported at once (not after an epoch as a raw
// EEXIST/ENOTDIR), an input is never overwritten, and a file, a folder holding other files or a
// model is never silently replaced. Also the one place where file outputs are written (atomically).
import { accessSync, constants, existsSync, mkdirSync, readdirSync, realpathSync, statSync, type Stats } from 'node:fs'
import { basename, dirname, join, relative, resolve, sep } from 'node:path'
import type { CorpusDocument, CorpusFormat, CorpusIssue } from '../../shared/domain'
import { bratCompanion, encodeForPath, fsProblem, isGzipped, writeCorpus, type OffsetUnit } from '../../core/corpus'
import { writeFileAtomicStream, writeFolderAtomic } from '../../core/fs/atomic'
import { CliError } from './_ml'

export type OutputKind =
  /** One file ('-' is standard output). */
  | 'file'
  /** A folder of files (brat, text): must be new or empty unless `replace`. */
  | 'folder'
  /** A model checkpoint folder: may hold other files, but not a checkpoint unless `replace`. */
  | 'checkpoint'

export interface OutputCheck {
  /** The option named in messages, e.g. '--out'. */
  flag: string
  kind: OutputKind
  /** Input files and folders that the output must not be, nor (for folders) contain. */
  inputs?: Array<string | undefined>
  /** Input folders that the output must not be inside either (the model folder quantize reads). */
  outside?: Array<string | undefined>
  /** The user allowed replacing what is there: an existing file, a non-empty folder, a model (--force, --overwrite). */
  replace?: boolean
  /** The option that allows it, for the message; without one, the message offers none. */
  replaceFlag?: string
  /** What else the user can do with a folder that is in the way, e.g. '--resume to continue the run in it'. */
  alternative?: string
}

/** Files that make a folder a checkpoint (see core/model/checkpoint). */
const CHECKPOINT_FILES = ['config.json', 'model.safetensors', 'fastbioner.json']

/** Throws CliError(…, 2) when `path` cannot or must not be written as `check` describes. */
export function checkOutputPath(path: string, check: OutputCheck): void {
  const { flag, kind } = check
  if (path === '-' && kind === 'file') return
  const target = resolve(path)
  const usage = (message: string): never => {
    // About the file system, not the command line's form: no usage text.
    throw new CliError(`${flag} ${path}: ${message}`, 2, false)
  }

  // The nearest part of the path that exists must be a folder we may write into.
  let existing = target
  let info: Stats | undefined = statOrUndefined(existing)
  while (!info) {
    const parent = dirname(existing)
    if (parent === existing) break
    existing = parent
    info = statOrUndefined(existing)
  }
  if (existing !== target && info && !info.isDirectory()) usage(`${existing} is a file, not a folder`)

  const here = existing === target ? info : undefined
  // A .gz file is written gzipped; a folder of files cannot be.
  if (kind !== 'file' && isGzipped(target)) usage('names a folder of files, which is not compressed; drop the .gz')
  if (here) {
    if (kind === 'file' && here.isDirectory()) usage('is a folder; give a file name')
    if (kind !== 'file' && !here.isDirectory()) usage('is a file; give a folder')
  }

  // Never the same file as an input, by any name (relative path, symbolic or hard link), nor
  // the other half of an input's brat pair (read with it).
  const realTarget = realpathOfPossiblyMissing(target)
  const inputs = (check.inputs ?? []).flatMap((input) => {
    if (input === undefined || input === '-') return []
    const companion = bratCompanion(input)
    return [{ path: input, name: `the input ${input}` }, ...(companion === undefined ? [] : [{ path: companion, name: `${companion}, the other half of the input's brat pair ${input}` }])]
  })
  for (const input of inputs) {
    const inputInfo = statOrUndefined(input.path)
    if (!inputInfo) continue
    const realInput = realpathSync(input.path)
    const same = realInput === realTarget || (here !== undefined && here.ino === inputInfo.ino && here.dev === inputInfo.dev)
    if (same) usage(`is ${input.name}; writing there would destroy it (choose another ${flag})`)
    if (kind !== 'file' && isInside(realInput, realTarget)) usage(`holds ${input.name}; writing there could destroy it (choose another ${flag})`)
  }
  for (const folder of check.outside ?? []) {
    if (folder === undefined || !statOrUndefined(folder)) continue
    if (isInside(realTarget, realpathSync(folder))) usage(`is inside the input ${folder}; writing there would change it (choose another ${flag})`)
  }

  // A file already there is someone's: replaced only when asked.
  if (kind === 'file' && here?.isFile() && !check.replace) {
    usage(`the file exists; choose a new file name${check.replaceFlag !== undefined ? `, or pass ${check.replaceFlag} to replace it` : ''}`)
  }

  if (here?.isDirectory()) {
    if (kind === 'folder') {
      const entries = readdirSync(target)
      if (entries.length > 0 && !check.replace) {
        const otherwise = check.replaceFlag !== undefined ? `, or ${check.replaceFlag} to replace its contents` : check.alternative !== undefined ? `, or ${check.alternative}` : ''
        usage(`the folder is not empty (${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}); choose a new or empty folder${otherwise}`)
      }
    } else if (kind === 'checkpoint') {
      const found = CHECKPOINT_FILES.filter((f) => existsSync(join(target, f)))
      if (found.length > 0 && !check.replace) {
        usage(`already holds a model (${found.join(', ')}); choose a new folder, or ${check.replaceFlag ?? '--overwrite'} to replace it`)
      }
    }
  }

  try {
    accessSync(existing, constants.W_OK)
  } catch {
    usage(`${existing === target ? 'it' : existing} is not writable`)
  }
}

/**
 * The outputs of one command must be distinct and apart (no one inside another), by any name:
 * checked with checkOutputPath's others before any work, so that a clash is not found only when
 * the last output is written (after hours of training).
 */
export function checkDistinctOutputs(outputs: ReadonlyArray<{ flag: string; path: string }>): void {
  const real = outputs.map((o) => realpathOfPossiblyMissing(resolve(o.path)))
  for (let i = 0; i < outputs.length; i++) {
    for (let j = i + 1; j < outputs.length; j++) {
      const [a, b] = [outputs[i]!, outputs[j]!]
      if (real[i] === real[j]) throw new CliError(`${b.flag} ${b.path} is the ${a.flag} folder; give each output its own`, 2, false)
      if (isInside(real[j]!, real[i]!) || isInside(real[i]!, real[j]!)) throw new CliError(`${b.flag} ${b.path} and ${a.flag} ${a.path} are one inside the other; give each output its own folder`, 2, false)
    }
  }
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path)
  } catch {
    return undefined
  }
}

/** realpath of `path`, or of its nearest existing ancestor joined with the rest. */
function realpathOfPossiblyMissing(path: string): string {
  const rest: string[] = []
  let p = path
  for (;;) {
    try {
      return join(realpathSync(p), ...rest.reverse())
    } catch {
      const parent = dirname(p)
      if (parent === p) return path
      rest.push(basename(p))
      p = parent
    }
  }
}

function isInside(child: string, folder: string): boolean {
  const rel = relative(folder, child)
  return rel !== '' && !rel.startsWith('..' + sep) && rel !== '..' && !rel.startsWith(sep)
}

/**
 * Writes documents as `format` to `outPath` (checked beforehand with checkOutputPath): standard
 * output for '-', one file written atomically (gzipped when its name ends in .gz), or for brat
 * and text a folder that replaces `outPath` as a whole. Returns the number of files written.
 */
export async function writeCorpusOutput(
  docs: CorpusDocument[],
  format: CorpusFormat,
  outPath: string,
  options: { baseName: string; onIssue?: (issue: CorpusIssue) => void; outputName?: string; offsets?: OffsetUnit },
): Promise<number> {
  const { files } = writeCorpus(docs, format, options)
  if (format !== 'brat' && format !== 'text') {
    await writeOutputFile(outPath, files[0]!.content)
    return 1
  }
  try {
    mkdirSync(dirname(resolve(outPath)), { recursive: true })
    writeFolderAtomic(outPath, files)
  } catch (e) {
    throw new CliError(`${outPath}: cannot write the output: ${fsProblem(e)}`)
  }
  return files.length
}

/**
 * Writes one output file (checked beforehand with checkOutputPath): standard output for '-',
 * else atomically (gzipped when its name ends in .gz), its folder made when missing. `what` names
 * it in the error, e.g. 'the report'.
 */
export async function writeOutputFile(outPath: string, content: string, what = 'the output'): Promise<void> {
  try {
    if (outPath === '-') process.stdout.write(content)
    else {
      mkdirSync(dirname(resolve(outPath)), { recursive: true })
      await writeFileAtomicStream(outPath, encodeForPath(outPath, once(content)))
    }
  } catch (e) {
    throw new CliError(`${outPath}: cannot write ${what}: ${fsProblem(e)}`)
  }
}

async function* once(text: string): AsyncGenerator<string> {
  yield text
}
