// Reading a corpus file whole (any format, detected or given; size, binary and UTF-8 checks)
// and serialising documents in every writable format. The barrel (index.ts) re-exports it.
import { readFileSync } from 'node:fs'
import { gunzipSync } from 'node:zlib'
import { readFile, stat } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import type { CorpusDocument, CorpusFormat, CorpusIssue } from '@shared/domain'
import { readBiocJson, readBiocXml, writeBiocJson, writeBiocXml, type BiocWriteOptions } from './bioc'
import { readBrat, writeBrat } from './brat'
import { readConll, readConllWithLines, writeConll, type ConllWriteOptions } from './conll'
import { detectFormat } from './detect'
import { CorpusError, fsProblem } from './errors'
import { readPubmedXml } from './pubmed-xml'
import { readPubtator, writePubtator } from './pubtator'
import { readText } from './text'
import { extension, isGzipped, safeFileName, stem, stripBom, type OffsetUnit, type ReadOptions } from './util'

export const DEFAULT_MAX_BYTES = 512 * 1024 * 1024

/** Formats writeCorpus can produce (PubMed XML is import only). */
export const WRITABLE_FORMATS: readonly CorpusFormat[] = ['pubtator', 'conll', 'bioc-json', 'bioc-xml', 'brat', 'text']

export interface CorpusReadOptions extends ReadOptions {
  /** Files larger than this are rejected before reading (default 512 MiB). */
  maxBytes?: number
  /** CoNLL without -DOCSTART-: sentences per document (default 10). */
  sentencesPerDocument?: number
  /**
   * brat only, for readCorpusBuffer / parseCorpusText: the other half of the pair (the .txt when
   * `fileName` is the .ann, and the other way round). readCorpusFile finds it on disk itself.
   */
  companion?: Uint8Array | string
}

export interface CorpusReadResult {
  /** The format that was read (detected when not given). */
  format: CorpusFormat
  documents: CorpusDocument[]
  /** Warnings; errors are thrown as CorpusError. */
  issues: CorpusIssue[]
}

/**
 * Reads a corpus file. The format is detected when not given; a `.txt` with a sibling `.ann` is
 * read as brat, and for brat the sibling file of the pair is read too.
 */
export async function readCorpusFile(path: string, format?: CorpusFormat, options: CorpusReadOptions = {}): Promise<CorpusReadResult> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES
  const bytes = await readChecked(path, maxBytes)
  const ext = extension(path)
  let chosen = format
  if (!chosen && ext === '.txt' && (await isFile(sibling(path, '.ann')))) chosen = 'brat'
  if (chosen === 'brat' || (!chosen && ext === '.ann')) {
    const other = sibling(path, ext === '.ann' ? '.txt' : '.ann')
    if (!(await isFile(other))) {
      throw CorpusError.at(path, undefined, `brat ${ext === '.ann' ? 'annotation' : 'text'} file has no matching ${basename(other)} next to it`)
    }
    return readCorpusBuffer(bytes, path, 'brat', { ...options, companion: await readChecked(other, maxBytes) })
  }
  return readCorpusBuffer(bytes, path, chosen, options)
}

/**
 * The files to read when a person chose both halves of a brat pair: readCorpusFile reads a pair
 * from either half, so the .ann goes when its .txt is chosen too (the pair is read, and reported,
 * once, as batch tagging does).
 */
export function oneFilePerBratPair(paths: readonly string[]): string[] {
  const chosen = new Set(paths)
  return paths.filter((p) => !(extension(p) === '.ann' && chosen.has(bratCompanion(p)!)))
}

/**
 * Reads a corpus from bytes: rejects oversized, empty, binary and non-UTF-8 input, strips a BOM.
 * A `.gz` name is decompressed first (the limit applies to the uncompressed size).
 */
export function readCorpusBuffer(bytes: Uint8Array, fileName: string, format?: CorpusFormat, options: CorpusReadOptions = {}): CorpusReadResult {
  if (isGzipped(fileName)) bytes = gunzipCorpusBytes(bytes, fileName, options.maxBytes ?? DEFAULT_MAX_BYTES)
  const content = decodeCorpusBytes(bytes, fileName, options.maxBytes ?? DEFAULT_MAX_BYTES)
  let companion = options.companion
  if (companion instanceof Uint8Array) companion = decodeCorpusBytes(companion, companionName(fileName), options.maxBytes ?? DEFAULT_MAX_BYTES, true)
  return parseCorpusText(content, fileName, format, { ...options, companion })
}

/** Parses content that is already a string (pasted or dropped into the UI). */
export function parseCorpusText(content: string, fileName: string, format?: CorpusFormat, options: CorpusReadOptions = {}): CorpusReadResult {
  const text = stripBom(content)
  if (text.trim() === '') throw CorpusError.at(fileName, 1, 'the file is empty')
  const chosen = format ?? detectFormat(fileName, text.slice(0, 65536))
  const readerOptions: ReadOptions = { ...(options.onProgress ? { onProgress: options.onProgress } : {}), ...(options.textOnly ? { textOnly: true } : {}), ...(options.offsets ? { offsets: options.offsets } : {}) }
  let result
  switch (chosen) {
    case 'pubtator':
      result = readPubtator(text, fileName, readerOptions)
      break
    case 'conll':
      result = readConll(text, fileName, { ...readerOptions, sentencesPerDocument: options.sentencesPerDocument })
      break
    case 'pubmed-xml':
      result = readPubmedXml(text, fileName, readerOptions)
      break
    case 'bioc-xml':
      result = readBiocXml(text, fileName, readerOptions)
      break
    case 'bioc-json':
      result = readBiocJson(text, fileName, readerOptions)
      break
    case 'text':
      result = readText(text, fileName, readerOptions)
      break
    case 'brat': {
      const other = options.companion === undefined ? undefined : typeof options.companion === 'string' ? options.companion : decodeCorpusBytes(options.companion, companionName(fileName), options.maxBytes ?? DEFAULT_MAX_BYTES, true)
      if (other === undefined) throw CorpusError.at(fileName, undefined, 'brat needs both the .txt and the .ann file of a pair')
      const isAnn = extension(fileName) === '.ann'
      const annName = isAnn ? fileName : companionName(fileName)
      result = isAnn ? readBrat(other, text, annName, readerOptions) : readBrat(text, other, annName, readerOptions)
      break
    }
    default:
      throw new RangeError(`unknown corpus format '${String(chosen)}'`)
  }
  return { format: chosen, documents: result.documents, issues: result.issues }
}

export interface WriteCorpusOptions extends BiocWriteOptions, ConllWriteOptions {
  /** Name (without extension) of the single output file; default "corpus". */
  baseName?: string
}

/**
 * Serialises documents. One file for pubtator (.pubtator), conll (.conll), bioc-json (.json) and
 * bioc-xml (.xml); a .txt/.ann pair per document for brat and one .txt per document for text,
 * named after the document id (made file-system safe and unique).
 */
export function writeCorpus(docs: CorpusDocument[], format: CorpusFormat, options: WriteCorpusOptions = {}): { files: Array<{ name: string; content: string }> } {
  const base = options.baseName ?? 'corpus'
  switch (format) {
    case 'pubtator':
      return { files: [{ name: `${base}.pubtator`, content: writePubtator(docs, options) }] }
    case 'conll':
      return { files: [{ name: `${base}.conll`, content: writeConll(docs, options) }] }
    case 'bioc-json':
      return { files: [{ name: `${base}.json`, content: writeBiocJson(docs, options) }] }
    case 'bioc-xml':
      return { files: [{ name: `${base}.xml`, content: writeBiocXml(docs, options) }] }
    case 'brat':
    case 'text': {
      const names = new UniqueFileNames()
      return { files: docs.flatMap((doc) => documentFiles(doc, format, names.next(doc), options)) }
    }
    case 'pubmed-xml':
      throw new RangeError('pubmed-xml can be read but not written; choose bioc-xml or bioc-json')
    default:
      throw new RangeError(`unknown corpus format '${String(format)}'`)
  }
}

/**
 * For messages about a token of a CoNLL file that was read already: a lookup of the file line of
 * token `token` in document `doc`. The file is read again, only when a line is first asked for.
 */
export function conllTokenLines(path: string, options: { sentencesPerDocument?: number } = {}): (doc: number, token: number) => number | undefined {
  let lines: number[][] | undefined
  return (doc, token) => {
    lines ??= readConllWithLines(readFileSync(path, 'utf8'), path, options).tokenLines
    return lines[doc]?.[token]
  }
}

/** File names from document ids, made file-system safe and unique (case-insensitively), in order. */
export class UniqueFileNames {
  private readonly used = new Set<string>()
  next(doc: CorpusDocument): string {
    const base = safeFileName(doc.id)
    let name = base
    for (let n = 2; this.used.has(name.toLowerCase()); n++) name = `${base}-${n}`
    this.used.add(name.toLowerCase())
    return name
  }
}

/** The files of one document in a per-document format: a .txt/.ann pair (brat) or one .txt (text). */
export function documentFiles(doc: CorpusDocument, format: 'brat' | 'text', name: string, options: { offsets?: OffsetUnit } = {}): Array<{ name: string; content: string }> {
  if (format === 'text') return [{ name: `${name}.txt`, content: doc.text.endsWith('\n') ? doc.text : doc.text + '\n' }]
  const { txt, ann } = writeBrat(doc, options)
  return [
    { name: `${name}.txt`, content: txt },
    { name: `${name}.ann`, content: ann },
  ]
}

// ---------------------------------------------------------------------------------------------
// Byte-level checks

function sibling(path: string, ext: string): string {
  return join(dirname(path), stem(path) + ext)
}

/**
 * The other half of the brat pair `path` may belong to (the .txt of an .ann, the .ann of a .txt),
 * which readCorpusFile reads with it; undefined for other names. It need not exist.
 */
export function bratCompanion(path: string): string | undefined {
  const ext = extension(path)
  return ext === '.ann' ? sibling(path, '.txt') : ext === '.txt' ? sibling(path, '.ann') : undefined
}

function companionName(fileName: string): string {
  return extension(fileName) === '.ann' ? fileName.slice(0, -4) + '.txt' : fileName.replace(/\.[^./\\]*$/, '') + '.ann'
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile()
  } catch {
    return false
  }
}

async function readChecked(path: string, maxBytes: number): Promise<Buffer> {
  let size: number
  try {
    const info = await stat(path)
    if (!info.isFile()) throw CorpusError.at(path, undefined, 'not a regular file')
    size = info.size
  } catch (error) {
    if (error instanceof CorpusError) throw error
    throw CorpusError.at(path, undefined, `cannot read the file: ${fsProblem(error)}`)
  }
  // Checked before reading so a huge file is never loaded.
  if (size > maxBytes) throw tooLarge(path, size, maxBytes)
  try {
    return await readFile(path)
  } catch (error) {
    throw CorpusError.at(path, undefined, `cannot read the file: ${fsProblem(error)}`)
  }
}

function tooLarge(fileName: string, size: number, maxBytes: number): CorpusError {
  return CorpusError.at(fileName, undefined, `the file is ${mib(size)}, over the ${mib(maxBytes)} limit; split it or raise the limit (maxBytes, --max-size)`)
}

function mib(bytes: number): string {
  const unit = (value: number, name: string): string => `${value >= 10 || Number.isInteger(value) ? value.toFixed(0) : value.toFixed(1)} ${name}`
  if (bytes < 1024) return `${bytes} bytes`
  if (bytes < 1024 * 1024) return unit(bytes / 1024, 'KiB')
  return unit(bytes / (1024 * 1024), 'MiB')
}

/**
 * Bytes → string, or a CorpusError naming the line: empty, too large, binary (NUL bytes, which
 * also catches UTF-16) or invalid UTF-8. A UTF-8 BOM is dropped.
 */
export function decodeCorpusBytes(bytes: Uint8Array, fileName: string, maxBytes = DEFAULT_MAX_BYTES, allowEmpty = false): string {
  if (bytes.length > maxBytes) throw tooLarge(fileName, bytes.length, maxBytes)
  if (bytes.length === 0) {
    if (allowEmpty) return ''
    throw CorpusError.at(fileName, 1, 'the file is empty')
  }
  const nul = bytes.indexOf(0)
  if (nul !== -1) {
    const utf16 = (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)
    throw CorpusError.at(
      fileName,
      lineOfByte(bytes, nul),
      utf16 ? 'the file is UTF-16 encoded; save it as UTF-8' : `the file contains a NUL byte at byte ${nul}: it looks binary, not a text corpus`,
    )
  }
  let content: string
  try {
    content = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch (error) {
    // V8 caps string length (about 512 Mi characters): not an encoding problem.
    if (!(error instanceof TypeError)) throw CorpusError.at(fileName, undefined, `the file (${mib(bytes.length)}) is too large to read as one text; split it`)
    const bad = firstInvalidUtf8Byte(bytes)
    throw CorpusError.at(fileName, lineOfByte(bytes, bad), `invalid UTF-8 at byte ${bad}; save the file as UTF-8`)
  }
  return content
}

/** The content of a `.gz` file, or a CorpusError: not gzip at all, damaged, or over the limit once uncompressed. */
export function gunzipCorpusBytes(bytes: Uint8Array, fileName: string, maxBytes = DEFAULT_MAX_BYTES): Uint8Array {
  if (bytes.length === 0) throw CorpusError.at(fileName, 1, 'the file is empty')
  if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) {
    throw CorpusError.at(fileName, undefined, 'the name ends in .gz but the file is not gzip-compressed; rename it without .gz or compress it')
  }
  try {
    return gunzipSync(bytes, { maxOutputLength: maxBytes })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ERR_BUFFER_TOO_LARGE') throw CorpusError.at(fileName, undefined, `uncompressed, the file is over the ${mib(maxBytes)} limit; split it or raise the limit (maxBytes, --max-size)`)
    throw CorpusError.at(fileName, undefined, `the gzip data is truncated or damaged (${(error as Error).message}); download or compress the file again`)
  }
}

function lineOfByte(bytes: Uint8Array, index: number): number {
  let line = 1
  for (let i = bytes.indexOf(0x0a); i !== -1 && i < index; i = bytes.indexOf(0x0a, i + 1)) line++
  return line
}

/**
 * Index where the first invalid UTF-8 sequence starts. Decodes 64 KiB blocks in streaming mode to
 * find the bad block, then feeds that block a byte at a time: only on the error path.
 */
function firstInvalidUtf8Byte(bytes: Uint8Array): number {
  const BLOCK = 65536
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let blockStart = 0
  try {
    for (; blockStart < bytes.length; blockStart += BLOCK) decoder.decode(bytes.subarray(blockStart, blockStart + BLOCK), { stream: true })
    decoder.decode()
    return sequenceStart(bytes, bytes.length) // a sequence cut short by the end of the file
  } catch {
    // the bad byte is in the block starting at blockStart (or a sequence that block finishes)
  }
  // Start on a character boundary: back up over continuation bytes (at most 3).
  let from = Math.min(blockStart, bytes.length - 1)
  while (from > 0 && blockStart - from < 3 && (bytes[from]! & 0xc0) === 0x80) from--
  const bytewise = new TextDecoder('utf-8', { fatal: true })
  for (let i = from; i < bytes.length; i++) {
    try {
      bytewise.decode(bytes.subarray(i, i + 1), { stream: true })
    } catch {
      return sequenceStart(bytes, i)
    }
  }
  return sequenceStart(bytes, bytes.length)
}

/** The decoder fails at byte `i`; the bad sequence may have begun at an earlier lead byte. */
function sequenceStart(bytes: Uint8Array, i: number): number {
  const isContinuation = (k: number): boolean => k < bytes.length && (bytes[k]! & 0xc0) === 0x80
  let k = i - 1
  if (isContinuation(i)) {
    // A wrong continuation (overlong, surrogate, out of range): blame its lead byte.
    k = i
    while (k > 0 && i - k < 3 && isContinuation(k)) k--
    return bytes[k]! >= 0xc0 ? k : i
  }
  // Byte i starts something new: was a multi-byte sequence left unfinished just before it?
  while (k >= 0 && i - k <= 3 && isContinuation(k)) k--
  if (k >= 0 && bytes[k]! >= 0xc0) {
    const need = bytes[k]! >= 0xf0 ? 4 : bytes[k]! >= 0xe0 ? 3 : 2
    if (i - k < need) return k
  }
  return Math.min(i, bytes.length - 1)
}
