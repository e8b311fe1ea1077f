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
): Mention | undefined {
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
