// Batch tagging of many corpus files (PubMed baseline and update files, a folder of PubTator
// exports): one output per input, this task's shard only, each output written to a temporary
// file, then its completion record (./manifest.ts), then renamed into place. A rerun skips
// outputs whose record still matches and redoes the rest; a file that cannot be read is reported
// and the others are still tagged; a file at an output path without a record is not ours and is
// never overwritten.
//
// Pipeline: documents stream from the reader in chunks; while onnxruntime runs a chunk (on its
// own threads) the next chunk is read and parsed on the main thread, so reading overlaps
// inference. Memory stays bounded by two chunks, whatever the file size.

import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import type { CorpusDocument, CorpusFormat, CorpusIssue } from '@shared/domain'
import { corpusChunks, CorpusError, encodeForPath, formatIssue, isCorpusFileName, openCorpusStream, type OffsetUnit } from '../corpus'
import { TEMP_PREFIX, writeFileAtomicStream } from '../fs/atomic'
import type { DocumentRules } from '../tag/document-rules'
import type { Tagger } from '../tag/tagger'
import { checkComplete, fileDigest, inputFilesOf, recordPathOf, RECORD_SUFFIX, RECORD_VERSION, writeRecord } from './manifest'
import { planOutputs } from './outputs'
import { filesOfShard, type Shard } from './shard'

/** A file in an input folder that is not tagged, and why. */
export interface IgnoredInput {
  path: string
  reason: string
}

/**
 * The input files: files as given, and the corpus files directly inside each folder (sorted):
 * every format the readers take, gzipped or not. A brat pair is one input, its .txt (the .ann
 * goes with it). What a folder holds that is not tagged — subfolders, completion records,
 * temporary files, other names, an .ann without its .txt — goes to `onIgnored` with the reason.
 * A path that does not exist, or a folder with nothing to tag, is an error.
 */
export function expandInputs(paths: readonly string[], onIgnored?: (ignored: IgnoredInput) => void): string[] {
  const files: string[] = []
  for (const p of paths) {
    let st
    try {
      st = statSync(p)
    } catch {
      throw new CorpusError([{ file: p, severity: 'error', message: 'no such file or folder' }])
    }
    if (!st.isDirectory()) {
      files.push(p)
      continue
    }
    const names = new Set(readdirSync(p))
    const inside: string[] = []
    for (const name of [...names].sort()) {
      const path = join(p, name)
      const reason = folderEntryReason(name, path, names)
      if (reason === null) inside.push(path)
      else if (reason !== '') onIgnored?.({ path, reason })
    }
    if (inside.length === 0) throw new CorpusError([{ file: p, severity: 'error', message: `the folder holds no corpus files (${CORPUS_NAMES})` }])
    files.push(...inside)
  }
  return files.map((f) => resolve(f))
}

const CORPUS_NAMES = '.xml, .pubtator, .conll, .tsv, .json, .txt with or without a brat .ann, each also .gz'

/** null: tag it; '': part of another input (a brat pair's .ann); else why it is left out. */
function folderEntryReason(name: string, path: string, names: ReadonlySet<string>): string | null {
  if (name.endsWith(RECORD_SUFFIX)) return 'a completion record of batch tagging'
  if (name.startsWith(TEMP_PREFIX)) return 'a temporary file of an unfinished write'
  let st
  try {
    st = statSync(path)
  } catch {
    return 'cannot be read'
  }
  if (st.isDirectory()) return 'a folder (folders inside --in folders are not entered)'
  if (!st.isFile()) return 'not a regular file'
  if (!isCorpusFileName(name)) return `not a corpus file name (${CORPUS_NAMES})`
  if (/\.ann$/i.test(name)) return names.has(name.slice(0, -4) + '.txt') ? '' : `brat annotations without their text (${name.slice(0, -4)}.txt)`
  if (/\.ann\.gz$/i.test(name) || (/\.txt\.gz$/i.test(name) && names.has(name.slice(0, -7) + '.ann'))) return 'half of a gzipped brat pair; brat pairs are read uncompressed'
  return null
}

export interface BatchTagOptions {
  /** Every input of the whole job (see expandInputs): output names are checked across all shards. */
  inputs: readonly string[]
  outDir: string
  format: CorpusFormat
  shard: Pick<Shard, 'index' | 'count'>
  tagger: Tagger
  /** Fingerprint of the model and the tagging options; an output made otherwise is redone. */
  model: string
  head?: string
  batchSize?: number
  /** Document-level rules (core/tag/document-rules); default the tagger's. */
  documentRules?: DocumentRules
  /** Documents read and tagged together (default 64). */
  docsPerChunk?: number
  /** Keep mentions at or above this confidence (default 0). */
  minConfidence?: number
  /** Unit of the character offsets written (default code points; reading detects the unit). */
  offsets?: OffsetUnit
  onFile?: (outcome: FileOutcome) => void
  onProgress?: (input: string, documents: number) => void
  signal?: AbortSignal
}

export interface FileOutcome {
  input: string
  output: string
  /** 'skipped': a matching output and record exist already. */
  status: 'tagged' | 'skipped' | 'failed'
  documents: number
  mentions: number
  /** Word pieces through the model. */
  pieces: number
  seconds: number
  /** Why it failed, or why an earlier output was redone. */
  reason?: string
  /** PMIDs the input deletes (PubMed <DeleteCitation>). */
  deleted?: string[]
  /** Records that could not be read (file:line: problem); the rest of the file was tagged. */
  problems?: string[]
  /** Records left out on purpose, e.g. superseded revisions of a PMID (file:line: why). */
  warnings?: string[]
}

export interface BatchTagResult {
  files: FileOutcome[]
  /** This shard's inputs. */
  owned: number
  documents: number
  seconds: number
}

/**
 * This shard's outputs at which a file exists that batch tagging did not make: no completion
 * record beside it. Such a file is the user's and is never overwritten. (An output of ours always
 * has its record: the record is written before the output is renamed into place, see tagOneFile.)
 */
export function foreignOutputs(inputs: readonly string[], outDir: string, format: CorpusFormat, shard: Pick<Shard, 'index' | 'count'>): string[] {
  const plan = planOutputs(inputs, outDir, format)
  return filesOfShard(inputs, shard)
    .map((input) => plan.get(input)!)
    .filter(isForeignOutput)
}

function isForeignOutput(output: string): boolean {
  return existsSync(output) && !existsSync(recordPathOf(output))
}

export function foreignOutputMessage(output: string): string {
  return `${output} exists and was not written by batch tagging (no ${basename(recordPathOf(output))} beside it); it is kept: move it away or choose another --out-dir`
}

export async function tagFiles(o: BatchTagOptions): Promise<BatchTagResult> {
  const t0 = performance.now()
  const plan = planOutputs(o.inputs, o.outDir, o.format)
  const mine = filesOfShard(o.inputs, o.shard)
  await mkdir(o.outDir, { recursive: true })
  const files: FileOutcome[] = []
  let documents = 0
  for (const input of mine) {
    if (o.signal?.aborted) break
    const output = plan.get(input)!
    const done = await checkComplete(input, output, o.model)
    let outcome: FileOutcome
    if (done.done) {
      outcome = { input, output, status: 'skipped', documents: done.record.documents, mentions: done.record.mentions, pieces: 0, seconds: 0 }
    } else {
      outcome = await tagOneFile(o, input, output)
      if (outcome.status === 'tagged' && done.reason !== 'no completion record') outcome.reason = `redone: ${done.reason}`
      documents += outcome.documents
    }
    files.push(outcome)
    o.onFile?.(outcome)
  }
  return { files, owned: mine.length, documents, seconds: (performance.now() - t0) / 1000 }
}

/**
 * Temp files a killed earlier attempt left for this output or its record. Only this output's:
 * each output belongs to one shard, so another task's temp file (perhaps on another node of a
 * shared file system, where its pid means nothing here) is never touched.
 */
function removeOwnTempFiles(output: string): void {
  const dir = dirname(output)
  const own = new Set([basename(output), basename(recordPathOf(output))])
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(TEMP_PREFIX)) continue
    // TEMP_PREFIX <pid> - <random> - <target name> (core/fs/atomic); the staged output's own
    // temp file nests a second prefix.
    let target: string | undefined = name
    while (target?.startsWith(TEMP_PREFIX)) target = TEMP_NAME.exec(target.slice(TEMP_PREFIX.length))?.[1]
    if (target !== undefined && own.has(target)) rmSync(join(dir, name), { force: true })
  }
}

const TEMP_NAME = /^\d+-[0-9a-z]+-(.+)$/

/** Where an output is staged, complete, until its record is written: a temp name removeOwnTempFiles knows. */
function stagedPathOf(output: string): string {
  return join(dirname(output), `${TEMP_PREFIX}${process.pid}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}-${basename(output)}`)
}

async function tagOneFile(o: BatchTagOptions, input: string, output: string): Promise<FileOutcome> {
  removeOwnTempFiles(output)
  const t0 = performance.now()
  if (isForeignOutput(output)) return { input, output, status: 'failed', documents: 0, mentions: 0, pieces: 0, seconds: 0, reason: foreignOutputMessage(output) }
  const staged = stagedPathOf(output)
  const startedAt = new Date().toISOString()
  const perChunk = Math.max(1, o.docsPerChunk ?? 64)
  const minConfidence = o.minConfidence ?? 0
  let documents = 0
  let mentions = 0
  let pieces = 0
  try {
    // The input as it is tagged: hashed first, so that an input changed while it was being tagged
    // no longer matches its record and is tagged again on the next run.
    const inp = await fileDigest(...inputFilesOf(input))
    // Its annotations are replaced by the model's: a bad one is a warning, not a lost record.
    const stream = await openCorpusStream(input, undefined, { lenient: true, textOnly: true })
    const docs = stream.documents[Symbol.asyncIterator]()
    const readChunk = async (): Promise<CorpusDocument[]> => {
      const chunk: CorpusDocument[] = []
      while (chunk.length < perChunk) {
        const r = await docs.next()
        if (r.done) break
        chunk.push(r.value)
      }
      return chunk
    }
    const tagger = o.tagger
    const tagged = async function* (): AsyncGenerator<CorpusDocument> {
      let next = readChunk()
      for (;;) {
        const chunk = await next
        if (chunk.length === 0) return
        const running = tagger.tag(chunk, { head: o.head, batchSize: o.batchSize, documentRules: o.documentRules, docsPerChunk: perChunk, signal: o.signal })
        // Read the next chunk while the engine works; its error surfaces when awaited above.
        next = readChunk()
        next.catch(() => {})
        const results = await running
        for (let i = 0; i < chunk.length; i++) {
          const kept = results[i].mentions.filter((m) => m.confidence >= minConfidence).map(({ start, end, text, type }) => ({ start, end, text, type }))
          documents++
          mentions += kept.length
          pieces += results[i].pieces
          yield { ...chunk[i], mentions: kept }
        }
        o.onProgress?.(input, documents)
      }
    }
    // What the writer had to change (PubTator ids kept apart) is a warning of the file, like the reader's.
    const written: CorpusIssue[] = []
    const text = corpusChunks(tagged(), o.format, { offsets: o.offsets, onIssue: (i) => written.push(i), outputName: output })
    // Staged complete, then its record, then renamed into place: a task killed between any two
    // steps leaves either no record (and no output: the rerun tags it) or a record whose output
    // is missing or differs (the rerun redoes it). So a file at an output path without a record
    // is never ours, and a rerun after any kill makes progress.
    await writeFileAtomicStream(staged, encodeForPath(output, text))
    const out = await fileDigest(staged)
    // A file that appeared at the output path while this one was tagged is kept too.
    if (isForeignOutput(output)) throw new Error(foreignOutputMessage(output))
    const problems = stream.issues.filter((i) => i.severity === 'error').map(formatIssue)
    const warnings = [...stream.issues.filter((i) => i.severity === 'warning'), ...written].map(formatIssue)
    writeRecord({
      version: RECORD_VERSION,
      input,
      inputSha256: inp.sha256,
      inputBytes: inp.bytes,
      output,
      outputSha256: out.sha256,
      outputBytes: out.bytes,
      model: o.model,
      format: o.format,
      documents,
      mentions,
      skipped: problems.length,
      problems,
      deleted: stream.deleted,
      warnings,
      startedAt,
      finishedAt: new Date().toISOString(),
      seconds: (performance.now() - t0) / 1000,
    })
    renameSync(staged, output)
    return { input, output, status: 'tagged', documents, mentions, pieces, seconds: (performance.now() - t0) / 1000, deleted: stream.deleted, problems, warnings }
  } catch (e) {
    rmSync(staged, { force: true })
    const reason = e instanceof CorpusError ? e.issues.filter((i) => i.severity === 'error').map(formatIssue).join('; ') || e.message : (e as Error).message
    return { input, output, status: 'failed', documents: 0, mentions: 0, pieces, seconds: (performance.now() - t0) / 1000, reason }
  }
}
