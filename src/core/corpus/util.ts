import type { CorpusDocument, CorpusIssue, Mention } from '@shared/domain'
import type { IssueLog } from './errors'

export interface ReadResult {
  documents: CorpusDocument[]
  /** Warnings only: errors are thrown as a CorpusError. */
  issues: CorpusIssue[]
}

export interface ReadOptions {
  /** Called now and then while reading, and once at the end with done === total. */
  onProgress?: (done: number, total: number) => void
  /**
   * Only the documents' text is used (tagging discards the annotations): a mention whose span
   * cannot be used is left out with a warning instead of failing its document.
   */
  textOnly?: boolean
  /**
   * The unit of the file's character offsets. Default: detected per mention from its text where
   * the file states it (PubTator, brat, BioC), else code points; the two differ only after a
   * character outside the Basic Multilingual Plane ("𝛼"), which UTF-16 counts twice.
   */
  offsets?: OffsetUnit
}

/** Character offsets in files: code points (Python, most tools; what we write by default) or UTF-16 code units (Java, JavaScript). */
export type OffsetUnit = 'codepoints' | 'utf16'
export const OFFSET_UNITS: readonly OffsetUnit[] = ['codepoints', 'utf16']

const SURROGATE = /[\uD800-\uDFFF]/

/**
 * Converts one text's offsets between code points and UTF-16 code units (the store's unit). Built
 * once per text (OffsetMap.of keeps the last one: a document's mentions are converted together);
 * the identity, with no tables, for text without astral characters.
 */
export class OffsetMap {
  private static last: OffsetMap | null = null
  /** u16Of[cp]: the UTF-16 offset of code point offset cp (length: code points + 1). */
  private readonly u16Of: Int32Array | null = null
  /** cpOf[u16]: the code point offset of UTF-16 offset u16 (inside a pair: the pair's start). */
  private readonly cpOf: Int32Array | null = null
  readonly codePoints: number

  private constructor(readonly text: string) {
    if (!SURROGATE.test(text)) {
      this.codePoints = text.length
      return
    }
    const cpOf = new Int32Array(text.length + 1)
    const u16: number[] = []
    let cp = 0
    for (let i = 0; i < text.length; cp++) {
      const c = text.charCodeAt(i)
      const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00
      u16.push(i)
      cpOf[i] = cp
      if (pair) cpOf[i + 1] = cp
      i += pair ? 2 : 1
    }
    u16.push(text.length)
    cpOf[text.length] = cp
    this.u16Of = Int32Array.from(u16)
    this.cpOf = cpOf
    this.codePoints = cp
  }

  static of(text: string): OffsetMap {
    if (OffsetMap.last?.text !== text) OffsetMap.last = new OffsetMap(text)
    return OffsetMap.last
  }

  /** Whether the two units differ anywhere in this text. */
  get astral(): boolean {
    return this.u16Of !== null
  }

  /** The UTF-16 offset of a code point offset; undefined past the end. */
  fromCodePoints(cp: number): number | undefined {
    if (cp > this.codePoints) return undefined
    return this.u16Of ? this.u16Of[cp] : cp
  }

  /** The code point offset of a UTF-16 offset (within the text). */
  toCodePoints(u16: number): number {
    return this.cpOf ? this.cpOf[Math.min(u16, this.text.length)]! : u16
  }

  /** A UTF-16 offset written in `unit`. */
  write(u16: number, unit: OffsetUnit = 'codepoints'): number {
    return unit === 'utf16' ? u16 : this.toCodePoints(u16)
  }
}

/** How often (in lines or documents) readers report progress. */
export const PROGRESS_EVERY = 5000

/** File name without directories and without its last extension ("a/b/train.tsv" → "train"). */
export function stem(fileName: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? fileName
  const dot = base.lastIndexOf('.')
  return dot > 0 ? base.slice(0, dot) : base
}

/** `.gz` files are decompressed while read and compressed when written (PubMed baseline files are .xml.gz). */
export function isGzipped(path: string): boolean {
  return /\.gz$/i.test(path)
}

/** Lower-case extension with the dot, or '' ("x/train.PubTator" → ".pubtator"). */
export function extension(fileName: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? fileName
  const dot = base.lastIndexOf('.')
  return dot > 0 ? base.slice(dot).toLowerCase() : ''
}

export function stripBom(content: string): string {
  return content.charCodeAt(0) === 0xfeff ? content.slice(1) : content
}

/**
 * Lines of a line-based format, with a trailing "\r" removed from each. Safe for PubTator and CoNLL:
 * their offsets are into the title/abstract strings (or rebuilt from tokens), never into the file.
 */
export function splitLines(content: string): string[] {
  const lines = stripBom(content).split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (line.endsWith('\r')) lines[i] = line.slice(0, -1)
  }
  return lines
}

/** A line-by-line reader (PubTator, CoNLL): fed every line with its 1-based number, then ended. */
export interface LineParser {
  line(line: string, lineNo: number): void
  /** The warnings; throws a CorpusError when the input had errors. */
  end(): CorpusIssue[]
}

/** Feeds a whole file's lines to a line parser, reporting progress; returns the parser's warnings. */
export function parseLines(content: string, parser: LineParser, onProgress?: ReadOptions['onProgress']): CorpusIssue[] {
  const lines = splitLines(content)
  for (let i = 0; i < lines.length; i++) {
    if (onProgress && i % PROGRESS_EVERY === 0 && i > 0) onProgress(i, lines.length)
    parser.line(lines[i]!, i + 1)
  }
  const issues = parser.end()
  onProgress?.(lines.length, lines.length)
  return issues
}

/** Maps character offsets of a string to 1-based line numbers. */
export class LineIndex {
  private readonly starts: number[] = [0]

  constructor(content: string) {
    for (let i = content.indexOf('\n'); i !== -1; i = content.indexOf('\n', i + 1)) this.starts.push(i + 1)
  }

  lineOf(offset: number): number {
    let lo = 0
    let hi = this.starts.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (this.starts[mid]! <= offset) lo = mid
      else hi = mid - 1
    }
    return lo + 1
  }

  /** 1-based line and column of `offset`. */
  position(offset: number): { line: number; column: number } {
    const line = this.lineOf(offset)
    return { line, column: offset - this.starts[line - 1]! + 1 }
  }
}

/** A string for an error message: quoted, with long strings shortened. */
export function q(value: string, max = 60): string {
  const s = value.length > max ? value.slice(0, max - 1) + '…' : value
  return JSON.stringify(s)
}

const NON_NEGATIVE_INT = /^\d+$/

/** Parses a non-negative integer column; undefined when it is not one (or too large to be exact). */
export function parseOffset(value: string): number | undefined {
  if (!NON_NEGATIVE_INT.test(value)) return undefined
  const n = Number(value)
  return Number.isSafeInteger(n) ? n : undefined
}

/**
 * Checks a mention span against the document text and logs an error when it is unusable.
 * `expectedText` (when the source states the covered text) must equal text.slice(start, end).
 * Returns the mention on success.
 */
export function checkedMention(
  log: IssueLog,
  line: number | undefined,
  docText: string,
  start: number,
  end: number,
  type: string,
  conceptId: string | undefined,
  expectedText: string | undefined,
  /** Prepended to messages, e.g. "document 123: " where the line alone is ambiguous. */
  context = '',
  /** The unit of start and end (ReadOptions.offsets); default: detected from expectedText. */
  unit?: OffsetUnit,
): Mention | undefined {
  const map = OffsetMap.of(docText)
  if (map.astral) {
    // Stored offsets are UTF-16; the file's may be code points (see ReadOptions.offsets).
    const s = map.fromCodePoints(start)
    const e = map.fromCodePoints(end)
    // An exact match decides; only without one does a match up to surrounding white space.
    const matches = (a: number | undefined, b: number | undefined, loose: boolean): boolean => {
      if (a === undefined || b === undefined || expectedText === undefined) return false
      const found = docText.slice(a, b)
      return loose ? found.trim() === expectedText.trim() : found === expectedText
    }
    const codePoints =
      unit !== undefined
        ? unit === 'codepoints'
        : expectedText === undefined || matches(s, e, false) || (!matches(start, end, false) && (matches(s, e, true) || !matches(start, end, true)))
    if (codePoints) {
      if (start >= end || s === undefined || e === undefined) {
        log.mentionProblem(line, start >= end ? `${context}mention offsets ${start}-${end} are empty or reversed (start must be below end)` : `${context}mention offsets ${start}-${end} lie outside the document text (length ${map.codePoints} characters)`)
        return undefined
      }
      return checkedMention(log, line, docText, s, e, type, conceptId, expectedText, context, 'utf16')
    }
  }
  if (start >= end) {
    log.mentionProblem(line, `${context}mention offsets ${start}-${end} are empty or reversed (start must be below end)`)
    return undefined
  }
  if (end > docText.length) {
    log.mentionProblem(line, `${context}mention offsets ${start}-${end} lie outside the document text (length ${docText.length})`)
    return undefined
  }
  const found = docText.slice(start, end)
  if (expectedText !== undefined && expectedText !== found) {
    // Real corpora have stray whitespace in the text column (NCBI Disease train, PMID 10923035):
    // the offsets are right, so keep the span and say so.
    if (expectedText.trim() === found.trim() && found.trim() !== '') {
      log.warn(line, `${context}mention text ${q(expectedText)} differs from the document text at ${start}-${end} only in surrounding whitespace; using ${q(found)}`)
      return mention(start, end, found, type, conceptId)
    }
    log.mentionProblem(line, `${context}mention text does not match the document text at ${start}-${end}: expected ${q(expectedText)}, found ${q(found)}`)
    return undefined
  }
  return mention(start, end, found, type, conceptId)
}

/** Builds a Mention with a stable key order and no `conceptId` key when there is none. */
export function mention(start: number, end: number, text: string, type: string, conceptId?: string): Mention {
  return conceptId !== undefined && conceptId !== '' ? { start, end, text, type, conceptId } : { start, end, text, type }
}

/** Replaces characters that would break a line- or tab-based format, keeping the length. */
export function flattenWhitespace(value: string): string {
  return value.replace(/[\t\n\r\f\v\u2028\u2029]/g, ' ')
}

/** A name safe for a file system: keeps letters, digits, dot, dash and underscore. */
export function safeFileName(value: string): string {
  const cleaned = value.replace(/[^\p{L}\p{N}._-]+/gu, '_').replace(/^\.+/, '_')
  return cleaned.length > 0 ? cleaned.slice(0, 150) : 'document'
}
