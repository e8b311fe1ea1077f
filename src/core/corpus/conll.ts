import type { CorpusDocument, CorpusIssue, Mention } from '@shared/domain'
import { IssueLog } from './errors'
import { parseLines, q, stem, type ReadOptions, type ReadResult } from './util'

export const DEFAULT_SENTENCES_PER_DOCUMENT = 10

export interface ConllReadOptions extends ReadOptions {
  /** Without -DOCSTART- lines, consecutive sentences are grouped into documents of this many. */
  sentencesPerDocument?: number
}

type Prefix = 'B' | 'I' | 'E' | 'S' | 'O'

interface Tag {
  prefix: Prefix
  type: string
}

interface Sentence {
  tokens: string[]
  tags: Tag[]
  /** 1-based file line of each token. */
  lines: number[]
}

const OUTSIDE: Tag = { prefix: 'O', type: '' }
/** An unknown tag, read as O but told apart so a file without a single valid tag is rejected. */
const UNKNOWN_AS_OUTSIDE: Tag = { prefix: 'O', type: '' }
const TYPED_TAG = /^([BIESLU])-(.*)$/
const BARE_TAG = /^[BIESLU]$/
const DOCSTART = '-DOCSTART-'

function normalisePrefix(p: string): Prefix {
  if (p === 'L') return 'E'
  if (p === 'U') return 'S'
  return p as Prefix
}

/** One document as the parser completes it, with the 1-based file line of each token. */
export interface ConllParsedDocument {
  document: CorpusDocument
  /** tokenLines[k] is the line of document.tokens[k] in the file. */
  tokenLines: number[]
}

/**
 * Token-per-line CoNLL: first column the token, last column the tag, blank line between sentences,
 * `-DOCSTART-` lines between documents. Tags are IOB2, IOB1 or BIOES (BILOU), decoded with conlleval's
 * chunk rules, so an I-X that does not continue an X chunk starts one.
 *
 * Document text is the tokens joined by single spaces, sentences joined by "\n"; `tokens` records
 * each token's span. Without -DOCSTART- lines, every `sentencesPerDocument` sentences form a
 * document (sentences before a first -DOCSTART- line are grouped the same way). Documents are
 * named `<file stem>-<n>` (1-based) either way: CoNLL documents have no ids of their own.
 *
 * The parser is fed line by line and hands each document out as soon as it is complete, so a
 * streaming reader holds one document at a time; readConll feeds it a whole string.
 */
export class ConllParser {
  readonly log: IssueLog
  private readonly perDocument: number
  private readonly stemName: string
  private readonly tagCache = new Map<string, Tag>()
  private bareWarned = false
  private sawDocstart = false
  private sentence: Sentence | undefined
  private group: Sentence[] = []
  private documentCount = 0
  private tokenCount = 0
  private validTagCount = 0
  private firstUnknownTag: { line: number; raw: string } | undefined

  constructor(
    fileName: string,
    options: ConllReadOptions,
    private readonly emit: (parsed: ConllParsedDocument) => void,
  ) {
    const perDocument = options.sentencesPerDocument ?? DEFAULT_SENTENCES_PER_DOCUMENT
    if (!Number.isInteger(perDocument) || perDocument < 1) {
      throw new RangeError(`sentencesPerDocument must be a positive integer, got ${perDocument}`)
    }
    this.perDocument = perDocument
    this.log = new IssueLog(fileName)
    this.stemName = stem(fileName)
  }

  /** One line of the file, without its line end; `lineNo` is 1-based. */
  line(line: string, lineNo: number): void {
    if (line.endsWith('\r')) line = line.slice(0, -1)
    if (line.trim() === '') {
      this.endSentence()
      return
    }
    const tabbed = line.includes('\t')
    const cols = tabbed ? line.split('\t') : line.trim().split(/\s+/)
    while (cols.length > 1 && cols[cols.length - 1]!.trim() === '') cols.pop()
    const token = cols[0]!
    if (token.trim() === DOCSTART) {
      this.endSentence()
      this.sawDocstart = true
      this.flush()
      return
    }
    if (cols.length < 2) {
      this.log.error(lineNo, `missing tag column in ${q(line)}: expected token<TAB>tag`)
      return
    }
    if (token.trim() === '') {
      this.log.error(lineNo, 'empty token before the tag column')
      return
    }
    const tag = this.parseTag(cols[cols.length - 1]!.trim(), lineNo)
    if (!tag) return
    this.tokenCount++
    if (tag !== UNKNOWN_AS_OUTSIDE) this.validTagCount++
    this.sentence ??= { tokens: [], tags: [], lines: [] }
    this.sentence.tokens.push(token)
    this.sentence.tags.push(tag)
    this.sentence.lines.push(lineNo)
  }

  /** After the last line: hands out the last document; throws the collected errors, else returns the warnings. */
  end(): CorpusIssue[] {
    this.endSentence()
    this.flush()
    if (this.tokenCount > 0 && this.validTagCount === 0 && this.firstUnknownTag) {
      // Every "tag" unknown: this is not CoNLL (e.g. PubTator read with --from conll).
      const { line, raw } = this.firstUnknownTag
      this.log.error(line, `no line ends in an IOB tag (O, B-TYPE, I-TYPE, …); the first one ends in ${q(raw)}: is this really CoNLL?`)
    }
    if (this.documentCount === 0 && !this.log.hasErrors) this.log.error(1, 'no tokens found (expected token<TAB>tag lines)')
    return this.log.finish()
  }

  private parseTag(raw: string, lineNo: number): Tag | undefined {
    const cached = this.tagCache.get(raw)
    if (cached) {
      if (cached === UNKNOWN_AS_OUTSIDE) this.firstUnknownTag ??= { line: lineNo, raw }
      return cached
    }
    let tag: Tag
    if (raw === 'O') {
      tag = OUTSIDE
    } else {
      const typed = TYPED_TAG.exec(raw)
      if (typed) {
        const type = typed[2]!.trim()
        if (type === '') {
          this.log.error(lineNo, `malformed tag ${q(raw)}: no entity type after '${typed[1]}-'`)
          return undefined
        }
        tag = { prefix: normalisePrefix(typed[1]!), type }
      } else if (BARE_TAG.test(raw)) {
        if (!this.bareWarned) this.log.warn(lineNo, `tag ${q(raw)} has no entity type; using type 'Entity' for untyped tags`)
        this.bareWarned = true
        tag = { prefix: normalisePrefix(raw), type: 'Entity' }
      } else {
        this.log.warn(lineNo, `unknown tag ${q(raw)} (expected O, B-TYPE, I-TYPE, E-TYPE or S-TYPE); read as O`)
        this.firstUnknownTag ??= { line: lineNo, raw }
        tag = UNKNOWN_AS_OUTSIDE
      }
    }
    this.tagCache.set(raw, tag)
    return tag
  }

  private endSentence(): void {
    if (!this.sentence) return
    this.group.push(this.sentence)
    this.sentence = undefined
    if (!this.sawDocstart && this.group.length >= this.perDocument) this.flush()
  }

  private flush(): void {
    if (this.group.length === 0) return
    this.documentCount++
    // Documents with errors are not handed out: the file is rejected at end() anyway.
    if (!this.log.hasErrors) this.emit(buildDocument(`${this.stemName}-${this.documentCount}`, this.group))
    this.group = []
  }
}

export function readConll(content: string, fileName: string, options: ConllReadOptions = {}): ReadResult {
  return readConllWithLines(content, fileName, options)
}

/** readConll, plus the file line of every token (for messages that point at a token). */
export function readConllWithLines(content: string, fileName: string, options: ConllReadOptions = {}): ReadResult & { tokenLines: number[][] } {
  const documents: CorpusDocument[] = []
  const tokenLines: number[][] = []
  const parser = new ConllParser(fileName, options, (parsed) => {
    documents.push(parsed.document)
    tokenLines.push(parsed.tokenLines)
  })
  const issues = parseLines(content, parser, options.onProgress)
  return { documents, issues, tokenLines }
}

function buildDocument(id: string, sentences: Sentence[]): ConllParsedDocument {
  const parts: string[] = []
  const tokenLines: number[] = []
  const tokens: Array<[number, number]> = []
  const mentions: Mention[] = []
  let offset = 0
  for (let s = 0; s < sentences.length; s++) {
    const sentence = sentences[s]!
    if (s > 0) {
      parts.push('\n')
      offset += 1
    }
    const first = tokens.length
    tokenLines.push(...sentence.lines)
    for (let t = 0; t < sentence.tokens.length; t++) {
      const token = sentence.tokens[t]!
      if (t > 0) {
        parts.push(' ')
        offset += 1
      }
      tokens.push([offset, offset + token.length])
      parts.push(token)
      offset += token.length
    }
    for (const [from, to, type] of decodeChunks(sentence.tags)) {
      mentions.push({ start: tokens[first + from]![0], end: tokens[first + to]![1], text: '', type })
    }
  }
  const text = parts.join('')
  for (const m of mentions) m.text = text.slice(m.start, m.end)
  return { document: { id, text, passages: [], mentions, tokens }, tokenLines }
}

/** conlleval's chunk boundaries: yields [firstToken, lastToken, type] for each chunk. */
function decodeChunks(tags: Tag[]): Array<[number, number, string]> {
  const chunks: Array<[number, number, string]> = []
  let start = -1
  let chunkType = ''
  let prev: Prefix = 'O'
  let prevType = ''
  for (let j = 0; j < tags.length; j++) {
    const { prefix, type } = tags[j]!
    const ends =
      prev === 'E' || prev === 'S' || ((prev === 'B' || prev === 'I') && (prefix === 'B' || prefix === 'S' || prefix === 'O')) || (prev !== 'O' && prevType !== type)
    if (start >= 0 && ends) {
      chunks.push([start, j - 1, chunkType])
      start = -1
    }
    const starts =
      prefix === 'B' || prefix === 'S' || ((prev === 'E' || prev === 'S' || prev === 'O') && (prefix === 'I' || prefix === 'E')) || (prefix !== 'O' && prevType !== type)
    if (starts) {
      start = j
      chunkType = type
    }
    prev = prefix
    prevType = type
  }
  if (start >= 0) chunks.push([start, tags.length - 1, chunkType])
  return chunks
}

export interface ConllWriteOptions {
  /** Write a `-DOCSTART-` line before each document so document boundaries survive (default true). */
  docStart?: boolean
  /** Told about mentions that cannot be written (overlapping, or covering no token). */
  onIssue?: (issue: CorpusIssue) => void
  /** Names the output in those issues (default "CoNLL output"); the message names the document. */
  outputName?: string
}

const WORD_OR_SYMBOL = /[\p{L}\p{M}\p{N}]+|[^\s\p{L}\p{M}\p{N}]/gu

/**
 * Tokenises like the BioBERT-style corpora: runs of letters/digits are tokens, every other
 * non-space character is a token of its own ("IL-2" → "IL", "-", "2").
 */
export function tokenize(text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = []
  for (const m of text.matchAll(WORD_OR_SYMBOL)) spans.push([m.index!, m.index! + m[0].length])
  return spans
}

/**
 * Writes IOB2 CoNLL (`token<TAB>tag`). Uses the document's `tokens` when present (sentences break
 * where the text between two tokens holds a newline); otherwise tokenises with `tokenize` and also
 * breaks sentences after ". " (or "? ", "! ") before an upper-case letter, when the stop is
 * attached to the word before it. Tokens are split at
 * every mention start and end, so entity boundaries always fall on token boundaries; a sentence
 * never breaks inside a mention. IOB cannot nest: of overlapping mentions the earliest (then the
 * longest) is kept and the others are reported through `onIssue`.
 */
export function writeConll(docs: CorpusDocument[], options: ConllWriteOptions = {}): string {
  const docStart = options.docStart ?? true
  const out: string[] = []
  for (const doc of docs) {
    // The issue's file is the output (a document id in its place read like file:line).
    const warn = (message: string): void => options.onIssue?.({ severity: 'warning', file: options.outputName ?? 'CoNLL output', message: `document ${doc.id}: ${message}` })
    const text = doc.text
    const mentions = nonOverlapping(doc.mentions, text.length, warn)
    const base = doc.tokens ? validTokens(doc.tokens, text.length) : tokenize(text)
    const tokens = splitAtBoundaries(base, mentions, text)
    if (tokens.length === 0) {
      warn(`document ${doc.id} has no tokens; not written`)
      continue
    }
    const tags = tagTokens(tokens, mentions, warn)
    if (docStart) out.push(`${DOCSTART}\tO`, '')
    for (let i = 0; i < tokens.length; i++) {
      const [s, e] = tokens[i]!
      out.push(`${text.slice(s, e).replace(/[\t\n\r]/g, ' ')}\t${tags[i]}`)
      const next = tokens[i + 1]
      if (!next) break
      const insideMention = tags[i + 1]!.startsWith('I-')
      if (!insideMention && sentenceBreak(text, tokens[i]!, next, !doc.tokens)) out.push('')
    }
    out.push('')
  }
  return out.length > 0 ? out.join('\n') + '\n' : ''
}

function sentenceBreak(text: string, [s, e]: [number, number], [ns]: [number, number], heuristics: boolean): boolean {
  const gap = text.slice(e, ns)
  if (/[\n\r\u2028\u2029]/.test(gap)) return true
  if (!heuristics || gap.length === 0) return false
  const token = text.slice(s, e)
  // A stop with a space before it ("Dr . Kniest") comes from pre-tokenised text, such as CoNLL
  // read back from BioC, whose sentences already end at line breaks.
  if (s > 0 && /\s/.test(text[s - 1]!)) return false
  return (token === '.' || token === '?' || token === '!') && /^\p{Lu}/u.test(text.slice(ns, ns + 2))
}

function validTokens(tokens: Array<[number, number]>, length: number): Array<[number, number]> {
  const sorted = tokens.filter(([s, e]) => Number.isInteger(s) && Number.isInteger(e) && s >= 0 && s < e && e <= length).sort((a, b) => a[0] - b[0])
  const kept: Array<[number, number]> = []
  let end = 0
  for (const t of sorted) {
    if (t[0] < end) continue
    kept.push([t[0], t[1]])
    end = t[1]
  }
  return kept
}

function nonOverlapping(mentions: Mention[], length: number, warn: (message: string) => void): Mention[] {
  const sorted = mentions.filter((m) => m.start >= 0 && m.start < m.end && m.end <= length).sort((a, b) => a.start - b.start || b.end - a.end)
  const kept: Mention[] = []
  let end = -1
  for (const m of sorted) {
    if (m.start < end) {
      warn(`mention ${m.start}-${m.end} ${q(m.text)} overlaps another mention; IOB cannot nest, not written`)
      continue
    }
    kept.push(m)
    end = m.end
  }
  return kept
}

/** Cuts tokens at mention boundaries and trims whitespace off the pieces. */
function splitAtBoundaries(tokens: Array<[number, number]>, mentions: Mention[], text: string): Array<[number, number]> {
  const cuts = [...new Set(mentions.flatMap((m) => [m.start, m.end]))].sort((a, b) => a - b)
  const out: Array<[number, number]> = []
  let c = 0
  for (const [s, e] of tokens) {
    while (c < cuts.length && cuts[c]! <= s) c++
    let from = s
    for (let k = c; k < cuts.length && cuts[k]! < e; k++) {
      pushTrimmed(out, text, from, cuts[k]!)
      from = cuts[k]!
    }
    pushTrimmed(out, text, from, e)
  }
  return out
}

function pushTrimmed(out: Array<[number, number]>, text: string, s: number, e: number): void {
  while (s < e && /\s/.test(text[s]!)) s++
  while (e > s && /\s/.test(text[e - 1]!)) e--
  if (s < e) out.push([s, e])
}

function tagTokens(tokens: Array<[number, number]>, mentions: Mention[], warn: (message: string) => void): string[] {
  const tags: string[] = new Array<string>(tokens.length).fill('O')
  let t = 0
  for (const m of mentions) {
    while (t < tokens.length && tokens[t]![1] <= m.start) t++
    const type = m.type.replace(/\s+/g, '_')
    let first = true
    let k = t
    for (; k < tokens.length && tokens[k]![0] < m.end; k++) {
      tags[k] = `${first ? 'B' : 'I'}-${type}`
      first = false
    }
    if (first) warn(`mention ${m.start}-${m.end} ${q(m.text)} covers no token; not written`)
    t = k
  }
  return tags
}
