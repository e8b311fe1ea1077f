// Streaming corpus IO: documents one at a time, so memory stays flat in the size of the file.
//
// openCorpusStream reads PubTator and CoNLL line by line and PubMed/BioC XML one record element
// (<PubmedArticle>, <document>) at a time; every other format is read whole and handed out the
// same way, so callers have one API. The rules are the whole-file readers' own (the same parser
// classes): a file with an error is rejected as a whole — the error is thrown when iteration
// reaches the end (or at once, for XML that is not well-formed), and a document is never handed
// out once an error has been seen. A consumer that must not leave half an output behind writes
// to a temporary file (writeFileAtomicStream) and lets the error discard it.
//
// corpusChunks serialises a document stream in the single-file formats, the same bytes as
// writeCorpus.
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGunzip, createGzip } from 'node:zlib'
import { SAXParser } from 'sax'
import type { CorpusDocument, CorpusFormat, CorpusIssue } from '@shared/domain'
import { BIOC_JSON_TAIL, BIOC_XML_TAIL, biocJsonDocument, biocJsonHead, biocXmlDocument, biocXmlHead, BiocXmlDocumentReader } from './bioc'
import { ConllParser } from './conll'
import { detectFormat } from './detect'
import { CorpusError, fsProblem, type IssueLog } from './errors'
import { readCorpusFile, type CorpusReadOptions, type WriteCorpusOptions } from './files'
import { PubmedArticleReader, pmidVersion, RevisionPlan } from './pubmed-xml'
import { PubtatorIds, PubtatorParser, writePubtator } from './pubtator'
import { writeConll } from './conll'
import { extension, isGzipped } from './util'
import { DECLARED_ENTITY, declaredEntity, undefinedEntity } from './xml'

export { isGzipped }

/** Formats read record by record; the others are read whole. */
export const STREAMED_FORMATS: readonly CorpusFormat[] = ['pubtator', 'conll', 'pubmed-xml', 'bioc-xml']

export interface StreamOptions extends CorpusReadOptions {
  /** Bytes read at a time (default 1 MiB); small values exercise chunk boundaries in tests. */
  chunkBytes?: number
  /**
   * PubMed and BioC XML: a record with an error (no PMID, offsets outside the text, …) is
   * skipped and its error goes to `issues` instead of rejecting the file; the other records are
   * still handed out (batch tagging). XML that is not well-formed still rejects the file.
   */
  lenient?: boolean
}

export interface CorpusStream {
  format: CorpusFormat
  /** The documents in file order; throws CorpusError when the file turns out to be bad. */
  documents: AsyncIterable<CorpusDocument>
  /** Warnings; complete once `documents` has been iterated to the end. */
  issues: CorpusIssue[]
  /**
   * PMIDs a PubMed update file deletes (<DeleteCitation>), in file order; complete once
   * `documents` has been iterated. Empty for other formats.
   */
  deleted: string[]
}

const CHUNK_BYTES = 1 << 20
const HEAD_CHARS = 65536

/**
 * Opens a corpus file as a stream of documents. The format is detected from the name and the
 * first 64 KiB when not given. `maxBytes` applies only to formats read whole (a streamed file
 * is never held in memory), unless given explicitly.
 */
export async function openCorpusStream(path: string, format?: CorpusFormat, options: StreamOptions = {}): Promise<CorpusStream> {
  let chosen = format
  const gzipped = isGzipped(path)
  if (!chosen) {
    const ext = extension(path)
    // A brat pair is read whole by readCorpusFile, which finds the other half. Formats that do
    // not stream are read whole (a .gz decompressed in memory, within maxBytes).
    const bratPair = !gzipped && (ext === '.ann' || (ext === '.txt' && (await isFile(path.slice(0, -4) + '.ann'))))
    if (!bratPair) chosen = detectFormat(path, await readHead(path))
  }
  if (gzipped && chosen === 'brat') throw CorpusError.at(path, undefined, 'a brat pair is read uncompressed: gunzip its .txt and .ann first')
  if (!chosen || !STREAMED_FORMATS.includes(chosen)) {
    const whole = await readCorpusFile(path, chosen, options)
    return { format: whole.format, documents: fromArray(whole.documents), issues: whole.issues, deleted: [] }
  }
  if (options.maxBytes !== undefined) {
    const size = (await stat(path)).size
    if (size > options.maxBytes) throw CorpusError.at(path, undefined, `the file is ${size} bytes, over the ${options.maxBytes}-byte limit`)
  }
  const issues: CorpusIssue[] = []
  const deleted: string[] = []
  const documents =
    chosen === 'pubtator' || chosen === 'conll' ? lineDocuments(path, chosen, options, issues) : xmlDocuments(path, chosen as 'pubmed-xml' | 'bioc-xml', issues, options.chunkBytes, deleted, options.lenient ?? false, options)
  return { format: chosen, documents, issues, deleted }
}


async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile()
  } catch {
    return false
  }
}

async function* fromArray(docs: CorpusDocument[]): AsyncGenerator<CorpusDocument> {
  yield* docs
}

async function readHead(path: string): Promise<string> {
  let head = ''
  for await (const text of textChunks(path)) {
    head += text
    if (head.length >= HEAD_CHARS) break
  }
  if (head.trim() === '') throw CorpusError.at(path, 1, 'the file is empty')
  return head.slice(0, HEAD_CHARS)
}

/**
 * The file as decoded text chunks: strict UTF-8 (a bad byte or a NUL is an error naming the
 * line), BOM dropped. Lines are counted only to name them in those errors.
 */
async function* textChunks(path: string, chunkBytes = CHUNK_BYTES): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let line = 1
  let first = true
  let stream
  let raw
  try {
    raw = createReadStream(path, { highWaterMark: chunkBytes })
    stream = isGzipped(path) ? raw.pipe(createGunzip({ chunkSize: Math.min(chunkBytes, 1 << 16) })) : raw
    // pipe() does not forward the source's errors (e.g. a file that vanished).
    if (stream !== raw) raw.on('error', (e) => stream!.destroy(e))
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const nul = chunk.indexOf(0)
      if (nul !== -1) throw CorpusError.at(path, line + countNewlines(chunk, nul), `the file contains a NUL byte: it looks binary (or UTF-16), not a text corpus`)
      let text: string
      try {
        text = decoder.decode(chunk, { stream: true })
      } catch {
        throw CorpusError.at(path, line, `invalid UTF-8 on this line or within the next ${CHUNK_BYTES >> 20} MiB; save the file as UTF-8`)
      }
      line += countNewlines(chunk, chunk.length)
      if (first && text.charCodeAt(0) === 0xfeff) text = text.slice(1)
      first = false
      if (text !== '') yield text
    }
    const rest = decoder.decode()
    if (rest !== '') yield rest
  } catch (error) {
    if (error instanceof CorpusError) throw error
    if (error instanceof TypeError) throw CorpusError.at(path, line, 'invalid UTF-8 at the end of the file; save the file as UTF-8')
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'Z_BUF_ERROR' || code === 'Z_DATA_ERROR' || code === 'Z_STREAM_ERROR') {
      throw CorpusError.at(path, line, `the gzip data is truncated or damaged near this line (${(error as Error).message}); download the file again`)
    }
    throw CorpusError.at(path, undefined, `cannot read the file: ${fsProblem(error)}`)
  } finally {
    stream?.destroy()
    raw?.destroy()
  }
}

function countNewlines(bytes: Uint8Array, end: number): number {
  let n = 0
  for (let i = bytes.indexOf(0x0a); i !== -1 && i < end; i = bytes.indexOf(0x0a, i + 1)) n++
  return n
}

async function* lineDocuments(path: string, format: 'pubtator' | 'conll', options: StreamOptions, issues: CorpusIssue[]): AsyncGenerator<CorpusDocument> {
  const ready: CorpusDocument[] = []
  const parser: { line(line: string, lineNo: number): void; end(): CorpusIssue[]; log: IssueLog } =
    format === 'pubtator'
      ? new PubtatorParser(path, (d) => ready.push(d), options)
      : new ConllParser(path, { sentencesPerDocument: options.sentencesPerDocument }, (p) => ready.push(p.document))
  let any = false
  for await (const { line, lineNo } of textLines(path, { chunkBytes: options.chunkBytes, maxLineChars: MAX_CORPUS_LINE_CHARS })) {
    any ||= line.trim() !== ''
    parser.line(line, lineNo)
    // Hand out what is complete; keep the array from growing.
    for (const d of ready) yield d
    ready.length = 0
  }
  if (!any) throw CorpusError.at(path, 1, 'the file is empty')
  issues.push(...parser.end())
  yield* ready
}

/**
 * Longest line of a line-based corpus (PubTator, CoNLL): far above any abstract (a few thousand
 * characters), low enough that a file without line breaks is refused instead of read into memory.
 */
export const MAX_CORPUS_LINE_CHARS = 16 << 20

/**
 * The file's lines (textChunks' decoding: strict UTF-8, .gz, BOM dropped), numbered from 1,
 * without their '\n' (a '\r' before it stays; callers trim). As String.split('\n') gives them: a
 * final newline is followed by one empty line. A line longer than maxLineChars is an error naming
 * it, so that a file with no line breaks cannot fill the memory.
 */
export async function* textLines(path: string, o: { chunkBytes?: number; maxLineChars: number }): AsyncGenerator<{ line: string; lineNo: number }> {
  let rest = ''
  let lineNo = 0
  for await (const text of textChunks(path, o.chunkBytes)) {
    const lines = (rest + text).split('\n')
    rest = lines.pop()!
    for (const line of lines) {
      lineNo++
      if (line.length > o.maxLineChars) throw CorpusError.at(path, lineNo, `the line is longer than ${o.maxLineChars} characters`)
      yield { line, lineNo }
    }
    if (rest.length > o.maxLineChars) throw CorpusError.at(path, lineNo + 1, `the line is longer than ${o.maxLineChars} characters`)
  }
  yield { line: rest, lineNo: lineNo + 1 }
}

/**
 * PubMed or BioC XML, one record element at a time. sax checks that the whole file is
 * well-formed and gives each record's extent; the record's text is then read by the same code
 * as the whole-file reader.
 */
async function* xmlDocuments(
  path: string,
  format: 'pubmed-xml' | 'bioc-xml',
  issues: CorpusIssue[],
  chunkBytes?: number,
  deleted: string[] = [],
  lenient = false,
  options: Pick<StreamOptions, 'textOnly' | 'offsets'> = {},
): AsyncGenerator<CorpusDocument> {
  const reader = format === 'bioc-xml' ? new BiocXmlDocumentReader(path, lenient, options) : new PubmedArticleReader(path, lenient, await pubmedRevisions(path, chunkBytes))
  const isRecord = format === 'bioc-xml' ? (name: string) => name === 'document' : (name: string) => name === 'PubmedArticle' || name === 'PubmedBookArticle'
  const parser = new SAXParser(true, { position: true })
  const open: string[] = []
  // The text not yet consumed: buffer[0] is at file position bufferStart.
  let buffer = ''
  let bufferStart = 0
  let recordStart = -1
  let recordLine = 0
  let rootSeen = false
  const records: Array<{ xml: string; line: number }> = []
  let failure: CorpusError | undefined

  // Lines are counted forwards from the last record's start: each character is scanned once.
  let countedTo = 0
  let countedLine = 1
  const lineAt = (position: number): number => {
    for (let i = buffer.indexOf('\n', countedTo - bufferStart); i !== -1 && i < position - bufferStart; i = buffer.indexOf('\n', i + 1)) countedLine++
    countedTo = position
    return countedLine
  }
  // PubMed update files list withdrawn records as <DeleteCitation><PMID>…</PMID>…</DeleteCitation>.
  let deletedPmid: string | null = null
  parser.ontext = (text) => {
    if (deletedPmid !== null) deletedPmid += text
  }
  parser.onopentag = (tag) => {
    open.push(tag.name)
    if (format === 'pubmed-xml' && tag.name === 'PMID' && open.length === 3 && open[1] === 'DeleteCitation') deletedPmid = ''
    if (open.length === 1) {
      rootSeen = true
      const ok = format === 'bioc-xml' ? tag.name === 'collection' : tag.name === 'PubmedArticleSet' || tag.name === 'PubmedBookArticleSet' || isRecord(tag.name)
      if (!ok) {
        failure ??= CorpusError.at(path, parser.line + 1, `expected a ${format === 'bioc-xml' ? 'BioC <collection>' : '<PubmedArticleSet>'} root element, found <${tag.name}>`)
        return
      }
    }
    const depth = format === 'pubmed-xml' && open.length === 1 && isRecord(tag.name) ? 2 : open.length
    if (depth === 2 && isRecord(tag.name) && recordStart < 0) {
      recordStart = parser.startTagPosition - 1
      recordLine = lineAt(recordStart)
    }
  }
  parser.onclosetag = () => {
    const name = open.pop()!
    if (deletedPmid !== null && name === 'PMID') {
      if (deletedPmid.trim()) deleted.push(deletedPmid.trim())
      deletedPmid = null
    }
    const depth = format === 'pubmed-xml' && open.length === 0 && isRecord(name) ? 2 : open.length + 1
    if (depth === 2 && recordStart >= 0 && isRecord(name)) {
      if (recordStart < bufferStart) throw new Error(`internal: record at ${recordStart} no longer buffered (from ${bufferStart})`)
      records.push({ xml: buffer.slice(recordStart - bufferStart, parser.position - bufferStart), line: recordLine })
      recordStart = -1
    }
  }
  parser.ondoctype = (doctype) => {
    const declared = DECLARED_ENTITY.exec(doctype)
    if (declared) failure ??= CorpusError.at(path, parser.line + 1, `malformed XML (column ${parser.column + 1}): ${declaredEntity(declared[1]!)}`)
    if (failure) throw failure
  }
  parser.onerror = (error) => {
    const message = error.message.split('\n')[0]!
    // sax names no entity: the reference is the text from the last '&' to where it stopped.
    const entity = /^Invalid character entity/.test(message) ? /&([^&;\s<]*);?$/.exec(buffer.slice(0, parser.position - bufferStart)) : null
    if (entity) {
      failure ??= CorpusError.at(path, parser.line + 1, `malformed XML (column ${parser.column + 1}): ${undefinedEntity(entity[1]!)}`)
    } else if (/^Unclosed root tag|^Unexpected end/.test(message) && open.length > 0) {
      failure ??= CorpusError.at(path, parser.line + 1, `malformed XML (column ${parser.column + 1}): the file ends inside <${open.at(-1)}> (unclosed: ${open.map((n) => `<${n}>`).join(', ')}); it looks truncated`)
    } else {
      failure ??= CorpusError.at(path, parser.line + 1, `malformed XML (column ${parser.column + 1}): ${message}`)
    }
    throw failure
  }

  const drainRecords = function* (): Generator<CorpusDocument> {
    for (const r of records) {
      const doc = reader.read(r.xml, r.line)
      if (doc) yield doc
    }
    records.length = 0
  }
  const write = (text: string): void => {
    try {
      if (text === '') parser.close()
      else parser.write(text)
    } catch (error) {
      if (error instanceof CorpusError) throw error
      throw failure ?? CorpusError.at(path, parser.line + 1, `malformed XML: ${(error as Error).message.split('\n')[0]}`)
    }
    if (failure) throw failure
  }

  let any = false
  for await (const text of textChunks(path, chunkBytes)) {
    any ||= text.trim() !== ''
    buffer += text
    write(text)
    yield* drainRecords()
    // Keep an unfinished record, or else a start tag that may be cut off at the chunk's end.
    const lastTag = buffer.lastIndexOf('<')
    const keepFrom = recordStart >= 0 ? recordStart : lastTag >= 0 ? bufferStart + lastTag : parser.position
    const drop = keepFrom - bufferStart
    if (drop > 0) {
      if (countedTo < keepFrom) lineAt(keepFrom)
      buffer = buffer.slice(drop)
      bufferStart = keepFrom
    }
  }
  if (!any) throw CorpusError.at(path, 1, 'the file is empty')
  write('')
  yield* drainRecords()
  if (!rootSeen) reader.log.error(1, 'no XML element found')
  else if (reader.count === 0 && deleted.length > 0) {
    // A PubMed update file that only withdraws records: no documents, its deletions in `deleted`.
    reader.log.warn(1, `no articles: the file only deletes ${deleted.length} PMID${deleted.length === 1 ? '' : 's'} (<DeleteCitation>)`)
  } else if (reader.count === 0) reader.log.error(1, format === 'bioc-xml' ? 'no <document> elements in the collection' : 'no PubmedArticle elements found')
  // Lenient: record errors are reported, not thrown — unless no record could be read at all.
  if (lenient && reader.count > 0) issues.push(...reader.log.report())
  else issues.push(...reader.log.finish())
}

/**
 * Every record's PMID, version and line, for the revision rule (a PMID found twice: the highest
 * version, else the last), which must know the later records before the first is handed out.
 * A first pass over the text with a pattern rather than the XML parser: MedlineCitation's (and
 * BookDocument's) first child is its PMID in PubMed's DTD, and this pass is several times faster
 * than sax. (A record laid out otherwise is not seen here; the reader then keeps the first.)
 */
async function pubmedRevisions(path: string, chunkBytes?: number): Promise<RevisionPlan> {
  const plan = new RevisionPlan()
  const citationPmid = /<(?:MedlineCitation|BookDocument)\b[^>]*>\s*<PMID\b([^>]*)>([^<]*)<\/PMID>/g
  let text = ''
  let line = 1 // of text[0]
  for await (const chunk of textChunks(path, chunkBytes)) {
    text += chunk
    let counted = 0
    let end = 0
    citationPmid.lastIndex = 0
    for (let m = citationPmid.exec(text); m !== null; m = citationPmid.exec(text)) {
      const at = m.index + m[0].lastIndexOf('<PMID')
      line += newlinesIn(text, counted, at)
      counted = at
      const pmid = m[2]!.replace(/\s+/g, ' ').trim()
      if (pmid !== '') plan.add(pmid, pmidVersion(/\bVersion\s*=\s*["']([^"']*)["']/.exec(m[1]!)?.[1]), line)
      end = citationPmid.lastIndex
    }
    // Keep what may hold a match cut off at the chunk's end (a match is far shorter than 4 KiB).
    const keep = Math.max(end, text.length - 4096)
    line += newlinesIn(text, counted, keep)
    text = text.slice(keep)
  }
  return plan
}

function newlinesIn(text: string, from: number, to: number): number {
  let n = 0
  for (let i = text.indexOf('\n', from); i !== -1 && i < to; i = text.indexOf('\n', i + 1)) n++
  return n
}

/**
 * Serialises a document stream as one file of `format` (pubtator, conll, bioc-json, bioc-xml):
 * the same bytes as writeCorpus, produced a document at a time.
 */
export async function* corpusChunks(docs: AsyncIterable<CorpusDocument>, format: CorpusFormat, options: WriteCorpusOptions = {}): AsyncGenerator<string> {
  switch (format) {
    case 'pubtator': {
      const ids = new PubtatorIds()
      for await (const d of docs) yield writePubtator([d], { ...options, ids })
      return
    }
    case 'conll':
      for await (const d of docs) yield writeConll([d], options)
      return
    case 'bioc-xml':
      yield biocXmlHead(options)
      for await (const d of docs) yield biocXmlDocument(d, options)
      yield BIOC_XML_TAIL
      return
    case 'bioc-json': {
      let first = true
      for await (const d of docs) {
        yield first ? biocJsonHead(options) + biocJsonDocument(d, true, options) : biocJsonDocument(d, false, options)
        first = false
      }
      yield first ? biocJsonHead(options, true) : BIOC_JSON_TAIL
      return
    }
    default:
      throw new RangeError(`${format} is not a single-file format; use writeCorpus`)
  }
}

/**
 * The bytes of a file named `path` made of `text`: gzipped on the fly when the name ends in .gz
 * (`x.pubtator.gz`), so that a .gz output is always gzip; else the text as it is.
 */
export function encodeForPath(path: string, text: AsyncIterable<string>): AsyncIterable<string | Buffer> {
  return isGzipped(path) ? gzipped(text) : text
}

async function* gzipped(text: AsyncIterable<string>): AsyncGenerator<Buffer> {
  const gzip = createGzip()
  const feeding = pipeline(Readable.from(text), gzip)
  // The pipeline's error (a bad input record) also destroys gzip, which ends the loop below with it.
  feeding.catch(() => {})
  for await (const b of gzip as AsyncIterable<Buffer>) yield b
  await feeding
}
