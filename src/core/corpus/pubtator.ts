import type { CorpusDocument, CorpusIssue, Mention, Passage } from '@shared/domain'
import { IssueLog } from './errors'
import { checkedMention, flattenWhitespace, OffsetMap, parseLines, parseOffset, q, type OffsetUnit, type ReadOptions, type ReadResult } from './util'

interface RawMention {
  line: number
  start: number
  end: number
  text: string
  type: string
  conceptId: string | undefined
}

interface OpenDocument {
  id: string
  titleLine: number
  title: string
  abstract: string | undefined
  abstractLine: number
  mentions: RawMention[]
}

const SECTION = /^([^\t|]+)\|([A-Za-z])\|/
const TRUNCATED_SECTION = /^[^\t|]+\|[A-Za-z]?$/
const RELATION_KIND = /^[A-Za-z][\w:.-]*$/

/**
 * PubTator: `ID|t|title`, `ID|a|abstract`, then `ID<TAB>start<TAB>end<TAB>text<TAB>type[<TAB>concept]`;
 * a blank line ends a document. text = title + " " + abstract (just the title when there is no
 * abstract line). Relation lines (`ID<TAB>CID<TAB>D1<TAB>D2`) are skipped.
 *
 * Fed line by line; each document is handed out as soon as it is complete (a streaming reader
 * holds one at a time, plus the ids seen, to report duplicates). readPubtator feeds a string.
 */
export class PubtatorParser {
  readonly log: IssueLog
  private readonly firstLineOf = new Map<string, number>()
  private missingTypeWarned = false
  private current: OpenDocument | undefined
  private emitted = 0

  constructor(
    fileName: string,
    private readonly emit: (document: CorpusDocument) => void,
    private readonly options: Pick<ReadOptions, 'textOnly' | 'offsets'> = {},
  ) {
    this.log = new IssueLog(fileName, options.textOnly)
  }

  private close(): void {
    const current = this.current
    if (!current) return
    const doc = buildDocument(current, this.log, this.options.offsets)
    const seen = this.firstLineOf.get(current.id)
    if (seen !== undefined) {
      this.log.warn(current.titleLine, `duplicate document ${current.id} (lines ${seen} and ${current.titleLine}); keeping the first`)
    } else {
      this.firstLineOf.set(current.id, current.titleLine)
      // Once the file has an error it is rejected at end(): nothing more is handed out.
      if (doc && !this.log.hasErrors) {
        this.emitted++
        this.emit(doc)
      }
    }
    this.current = undefined
  }

  /** One line without its line end; `lineNo` is 1-based. */
  line(line: string, lineNo: number): void {
    const log = this.log
    if (line.endsWith('\r')) line = line.slice(0, -1)
    if (line.trim() === '') {
      this.close()
      return
    }

    const section = SECTION.exec(line)
    if (section) {
      const id = section[1]!
      const kind = section[2]!
      const body = line.slice(section[0].length)
      const current = this.current
      if (kind === 't') {
        this.close() // tolerate a missing blank line between documents
        this.current = { id, titleLine: lineNo, title: body, abstract: undefined, abstractLine: 0, mentions: [] }
      } else if (kind === 'a') {
        if (!current) {
          log.error(lineNo, `abstract line for ${id} comes before its title line (ID|t|title)`)
        } else if (current.id !== id) {
          log.error(lineNo, `abstract line for ${id} follows the title of ${current.id} (line ${current.titleLine})`)
        } else if (current.abstract !== undefined) {
          log.error(lineNo, `second abstract line for ${id} (the first is on line ${current.abstractLine})`)
        } else {
          current.abstract = body
          current.abstractLine = lineNo
        }
      } else {
        log.warn(lineNo, `ignoring unknown PubTator section '${kind}' (only 't' and 'a' are read)`)
      }
      return
    }

    if (!line.includes('\t')) {
      if (TRUNCATED_SECTION.test(line)) log.error(lineNo, `truncated line ${q(line)}: expected ID|t|title or ID|a|abstract`)
      else log.error(lineNo, `unrecognised line ${q(line)}: expected ID|t|title, ID|a|abstract or a tab-separated mention`)
      return
    }

    const cols = line.split('\t')
    const startText = cols[1]!
    const start = parseOffset(startText)
    if (start === undefined) {
      // Relation lines name a relation kind where a mention has its start offset.
      if (cols.length >= 3 && RELATION_KIND.test(startText) && parseOffset(cols[2]!) === undefined) return
      if (cols.length < 4) log.error(lineNo, `truncated line ${q(line)}: expected ID<TAB>start<TAB>end<TAB>text<TAB>type[<TAB>concept]`)
      else log.error(lineNo, `mention start offset ${q(startText)} is not a non-negative integer`)
      return
    }
    if (cols.length < 4) {
      log.error(lineNo, `truncated mention line: ${cols.length} columns, expected ID<TAB>start<TAB>end<TAB>text<TAB>type[<TAB>concept]`)
      return
    }
    const end = parseOffset(cols[2]!)
    if (end === undefined) {
      log.error(lineNo, `mention end offset ${q(cols[2]!)} is not a non-negative integer`)
      return
    }
    const id = cols[0]!
    const current = this.current
    if (!current) {
      log.error(lineNo, `mention for ${id} is outside any document (no title line since the last blank line)`)
      return
    }
    if (id !== current.id) {
      log.error(lineNo, `mention for ${id} inside document ${current.id} (title on line ${current.titleLine})`)
      return
    }
    let type = cols[4]
    if (type === undefined || type.trim() === '') {
      if (type !== undefined) {
        log.error(lineNo, 'mention has an empty entity type')
        return
      }
      if (!this.missingTypeWarned) log.warn(lineNo, "mention lines without a type column; using type 'Entity'")
      this.missingTypeWarned = true
      type = 'Entity'
    }
    // Surrounding whitespace in an id is never meaningful (NCBI Disease has " D008661").
    const concept = cols[5]?.trim()
    current.mentions.push({ line: lineNo, start, end, text: cols[3]!, type, conceptId: concept === '' ? undefined : concept })
  }

  /** After the last line: hands out the last document; throws the collected errors, else returns the warnings. */
  end(): CorpusIssue[] {
    this.close()
    if (this.emitted === 0 && !this.log.hasErrors && this.firstLineOf.size === 0) this.log.error(1, 'no PubTator documents found (expected ID|t|title lines)')
    return this.log.finish()
  }
}

export function readPubtator(content: string, fileName: string, options: ReadOptions = {}): ReadResult {
  const documents: CorpusDocument[] = []
  const parser = new PubtatorParser(fileName, (doc) => documents.push(doc), options)
  const issues = parseLines(content, parser, options.onProgress)
  return { documents, issues }
}

function buildDocument(open: OpenDocument, log: IssueLog, offsets: OffsetUnit | undefined): CorpusDocument | undefined {
  const { title, abstract } = open
  const text = abstract === undefined ? title : `${title} ${abstract}`
  const passages: Passage[] = [{ type: 'title', offset: 0, length: title.length }]
  if (abstract !== undefined) passages.push({ type: 'abstract', offset: title.length + 1, length: abstract.length })
  const mentions: Mention[] = []
  for (const m of open.mentions) {
    const checked = checkedMention(log, m.line, text, m.start, m.end, m.type, m.conceptId, m.text, '', offsets)
    if (checked) mentions.push(checked)
  }
  return { id: open.id, text, passages, mentions }
}

/**
 * Writes PubTator. The title is the document's "title" passage when it starts the text and is
 * followed by a space; otherwise the text up to its first newline. Line breaks and tabs inside the
 * text become spaces (same length, so every offset stays valid).
 */
export interface PubtatorWriteOptions {
  offsets?: OffsetUnit
  /** Told about ids that had to change to stay apart (see PubtatorIds). */
  onIssue?: (issue: CorpusIssue) => void
  /** Names the output in those issues (default "PubTator output"). */
  outputName?: string
  /** The ids written so far, when a file is written in several calls (a stream of documents). */
  ids?: PubtatorIds
}

/**
 * The ids of one PubTator file as written: an id cannot hold '|', tabs or line breaks (they
 * become '_'), so 'a|b' and 'a_b' would both be written 'a_b' and the second document would be
 * lost when the file is read back (a duplicate). The later one is written 'a_b~2' instead (~3, …
 * while taken), and told.
 */
export class PubtatorIds {
  /** Written id → the document id it was written for. */
  private readonly used = new Map<string, string>()

  next(doc: CorpusDocument, options: Pick<PubtatorWriteOptions, 'onIssue' | 'outputName'>): string {
    const base = doc.id.replace(/[|\t\r\n]/g, '_') || 'document'
    let id = base
    for (let n = 2; this.used.has(id); n++) id = `${base}~${n}`
    if (id !== base) {
      const earlier = this.used.get(base)!
      const why = earlier === doc.id ? 'an earlier document has the same id' : `document ${JSON.stringify(earlier)} was written as ${base}${/[|\t\r\n]/.test(earlier) ? " (PubTator ids cannot hold '|', tabs or line breaks)" : ''}`
      options.onIssue?.({ severity: 'warning', file: options.outputName ?? 'PubTator output', message: `document ${JSON.stringify(doc.id)} written with id ${id}: ${why}` })
    }
    this.used.set(id, doc.id)
    return id
  }
}

export function writePubtator(docs: CorpusDocument[], options: PubtatorWriteOptions = {}): string {
  const out: string[] = []
  const ids = options.ids ?? new PubtatorIds()
  for (const doc of docs) {
    const id = ids.next(doc, options)
    const flat = flattenWhitespace(doc.text)
    const split = titleLength(doc)
    if (split === undefined) {
      out.push(`${id}|t|${flat}`)
    } else {
      out.push(`${id}|t|${flat.slice(0, split)}`, `${id}|a|${flat.slice(split + 1)}`)
    }
    for (const m of doc.mentions) {
      const map = OffsetMap.of(doc.text)
      const cols = [id, String(map.write(m.start, options.offsets)), String(map.write(m.end, options.offsets)), flat.slice(m.start, m.end), flattenWhitespace(m.type)]
      if (m.conceptId !== undefined && m.conceptId !== '') cols.push(flattenWhitespace(m.conceptId))
      out.push(cols.join('\t'))
    }
    out.push('')
  }
  return out.join('\n') + (out.length > 0 ? '\n' : '')
}

/** Where the title ends (the separator's index), or undefined when the whole text is the title. */
function titleLength(doc: CorpusDocument): number | undefined {
  const text = doc.text
  const title = doc.passages.find((p) => p.type === 'title' && p.offset === 0)
  if (title) {
    if (title.length >= text.length) return undefined
    if (/\s/.test(text[title.length]!)) return title.length
  }
  const newline = text.search(/[\r\n]/)
  return newline === -1 ? undefined : newline
}
