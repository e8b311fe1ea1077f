import { XMLBuilder } from 'fast-xml-parser'
import type { CorpusDocument, CorpusIssue, Mention, Passage } from '@shared/domain'
import { CorpusError, IssueLog } from './errors'
import { checkedMention, LineIndex, OffsetMap, parseOffset, q, stem, type OffsetUnit, type ReadOptions, type ReadResult } from './util'
import { attr, element, elements, parseXml, tagOf, textContent, type ParsedXml, type XmlNode } from './xml'

// Both BioC flavours are first turned into these plain records, then into CorpusDocuments by one
// function, so XML and JSON follow exactly the same rules.
interface RawLocation {
  offset: number
  length: number
}

interface RawAnnotation {
  id: string | undefined
  infons: Record<string, string>
  locations: RawLocation[]
  text: string | undefined
  line: number | undefined
}

interface RawPassage {
  infons: Record<string, string>
  offset: number
  text: string
  annotations: RawAnnotation[]
  line: number | undefined
}

interface RawDocument {
  id: string | undefined
  passages: RawPassage[]
  line: number | undefined
}

/** Infon keys that carry a concept id, in order of preference (PubTator, BioCreative, PMC). */
const CONCEPT_KEYS = ['identifier', 'Identifier', 'MESH', 'MeSH', 'NCBI Gene', 'NCBI Homologene', 'CUI']
const TYPE_KEYS = ['type', 'Type']
const PASSAGE_TYPE_KEYS = ['type', 'section_type', 'section']

function firstInfon(infons: Record<string, string>, keys: string[]): string | undefined {
  for (const key of keys) {
    const value = infons[key]?.trim()
    if (value !== undefined && value !== '') return value
  }
  return undefined
}

/**
 * Builds documents from raw BioC. Passage offsets are document-absolute, so `text` is assembled
 * with each passage at its offset and gaps padded with spaces: annotation offsets stay exactly as
 * in the file. An annotation with several locations (discontinuous) is kept as one mention over
 * the outer span (first start to last end), with a warning.
 */
function buildDocuments(raws: RawDocument[], fileName: string, log: IssueLog, options: ReadOptions): CorpusDocument[] {
  const builder = new BiocDocumentBuilder(fileName, log, options.offsets)
  const documents: CorpusDocument[] = []
  raws.forEach((raw, index) => {
    if (options.onProgress && index % 1000 === 0 && index > 0) options.onProgress(index, raws.length)
    const doc = builder.add(raw, index)
    if (doc) documents.push(doc)
  })
  return documents
}

/** buildDocuments one document at a time (for streaming); remembers ids to report duplicates. */
export class BiocDocumentBuilder {
  private readonly firstLineOf = new Map<string, number | undefined>()
  private missingTypeWarned = false

  constructor(
    private readonly fileName: string,
    private readonly log: IssueLog,
    /** ReadOptions.offsets; default: detected per document from the annotations' text. */
    private readonly offsets?: OffsetUnit,
  ) {}

  add(raw: RawDocument, index: number): CorpusDocument | undefined {
    const { log, fileName, firstLineOf } = this
    let id = raw.id?.trim()
    if (!id) {
      id = `${stem(fileName)}-${index + 1}`
      log.warn(raw.line, `document ${index + 1} has no id; named it ${id}`)
    }
    if (firstLineOf.has(id)) {
      log.warn(raw.line, `duplicate document ${id} (lines ${firstLineOf.get(id) ?? '?'} and ${raw.line ?? '?'}); keeping the first`)
      return undefined
    }
    firstLineOf.set(id, raw.line)

    const ordered = [...raw.passages].sort((a, b) => a.offset - b.offset)
    // The file's offsets count code points or UTF-16 units; they differ only after an astral character.
    const unit = this.offsets ?? (ordered.some((p) => OffsetMap.of(p.text).astral) ? detectUnit(ordered) : 'utf16')
    const assembled = assemble(ordered, unit)
    if ('overlap' in assembled) {
      const { passage, end } = assembled.overlap
      log.error(passage.line ?? raw.line, `document ${id}: passage at offset ${passage.offset} overlaps the previous passage, which ends at ${end}`)
      return undefined
    }
    if ('gap' in assembled) {
      const { passage, end, present } = assembled.gap
      log.error(passage.line ?? raw.line, `document ${id}, passage ${raw.passages.indexOf(passage) + 1}: ${farGap(passage.offset, end, present)}`)
      return undefined
    }
    const text = assembled.text
    const passages: Passage[] = ordered.map((p, i) => ({ type: firstInfon(p.infons, PASSAGE_TYPE_KEYS) ?? 'passage', offset: assembled.starts[i]!, length: p.text.length }))

    const mentions: Mention[] = []
    for (const p of ordered) {
      for (const a of p.annotations) {
        const line = a.line ?? p.line ?? raw.line
        const label = a.id !== undefined ? `annotation ${a.id}` : 'annotation'
        if (a.locations.length === 0) {
          log.mentionProblem(line, `document ${id}: ${label} has no location`)
          continue
        }
        const start = Math.min(...a.locations.map((l) => l.offset))
        const end = Math.max(...a.locations.map((l) => l.offset + l.length))
        if (a.locations.length > 1) {
          const spans = a.locations.map((l) => `${l.offset}-${l.offset + l.length}`).join(', ')
          log.warn(line, `document ${id}: ${label} is discontinuous (${spans}); kept as the outer span ${start}-${end}`)
        }
        let type = firstInfon(a.infons, TYPE_KEYS)
        if (type === undefined) {
          if (!this.missingTypeWarned) log.warn(line, `document ${id}: ${label} has no type infon; using type 'Entity'`)
          this.missingTypeWarned = true
          type = 'Entity'
        }
        const expected = a.locations.length === 1 ? a.text : undefined
        const m = checkedMention(log, line, text, start, end, type, firstInfon(a.infons, CONCEPT_KEYS), expected, `document ${id}: `, unit)
        if (m) mentions.push(m)
      }
    }
    return { id, text, passages, mentions }
  }
}

/**
 * Gaps between passages (and sentences) stand for text left out and are padded with spaces, but
 * only up to this many plus ten times the text there is: an offset far beyond the text (a typo,
 * or a 120-byte file saying 500000000) would otherwise take gigabytes of spaces.
 */
const MAX_GAP_SPACES = 1 << 20

function gapTooLarge(gap: number, present: number): boolean {
  return gap > MAX_GAP_SPACES + 10 * present
}

/** The error for an offset that gapTooLarge refuses. */
function farGap(offset: number, end: number, present: number): string {
  return `offset ${offset} is far beyond the text before it (which ends at ${end}; with ${present} characters of text, gaps of at most ${MAX_GAP_SPACES + 10 * present} are padded)`
}

/**
 * A document's text with each passage at its offset (in `unit`), gaps padded with spaces; the
 * passages' UTF-16 starts; or the passage that overlaps the one before, or whose gap is too large.
 */
function assemble(
  ordered: readonly RawPassage[],
  unit: OffsetUnit,
): { text: string; starts: number[] } | { overlap: { passage: RawPassage; end: number } } | { gap: { passage: RawPassage; end: number; present: number } } {
  let text = ''
  let end = 0 // in `unit`
  const starts: number[] = []
  const present = ordered.reduce((n, p) => n + p.text.length, 0)
  for (const p of ordered) {
    if (p.offset < end) return { overlap: { passage: p, end } }
    const pad = p.offset - end
    if (gapTooLarge(pad, present)) return { gap: { passage: p, end, present } }
    starts.push(text.length + pad)
    text += ' '.repeat(pad) + p.text
    end = p.offset + (unit === 'utf16' ? p.text.length : OffsetMap.of(p.text).codePoints)
  }
  return { text, starts }
}

/** The unit under which more annotations' stated text matches the document text (code points on a tie). */
function detectUnit(ordered: readonly RawPassage[]): OffsetUnit {
  const matches = (unit: OffsetUnit): number => {
    const built = assemble(ordered, unit)
    if (!('text' in built)) return -1
    const map = OffsetMap.of(built.text)
    let n = 0
    for (const p of ordered) {
      for (const a of p.annotations) {
        const l = a.locations[0]
        if (a.locations.length !== 1 || a.text === undefined || !l) continue
        const s = unit === 'utf16' ? l.offset : map.fromCodePoints(l.offset)
        const e = unit === 'utf16' ? l.offset + l.length : map.fromCodePoints(l.offset + l.length)
        if (s !== undefined && e !== undefined && built.text.slice(s, e) === a.text) n++
      }
    }
    return n
  }
  return matches('utf16') > matches('codepoints') ? 'utf16' : 'codepoints'
}

// ---------------------------------------------------------------------------------------------
// BioC XML

/** A <document> element as a raw record (errors go to the log). */
function rawXmlDocument(d: XmlNode, xml: ParsedXml, log: IssueLog): RawDocument {
  const number = (node: XmlNode | undefined, what: string, line: number | undefined, value: string | undefined): number | undefined => {
    const parsed = value === undefined ? undefined : parseOffset(value.trim())
    if (parsed === undefined) log.error(line ?? (node ? xml.lineOf(node) : undefined), `${what} ${value === undefined ? 'is missing' : `${q(value)} is not a non-negative integer`}`)
    return parsed
  }
  const infons = (node: XmlNode): Record<string, string> => {
    const out: Record<string, string> = {}
    for (const infon of elements(node, 'infon')) {
      const key = attr(infon, 'key')
      if (key !== undefined && !(key in out)) out[key] = textContent(infon)
    }
    return out
  }
  const annotations = (node: XmlNode): RawAnnotation[] =>
    elements(node, 'annotation').map((a) => {
      const line = xml.lineOf(a)
      const locations: RawLocation[] = []
      for (const loc of elements(a, 'location')) {
        const offset = number(loc, 'location offset', xml.lineOf(loc), attr(loc, 'offset'))
        const length = number(loc, 'location length', xml.lineOf(loc), attr(loc, 'length'))
        if (offset !== undefined && length !== undefined) locations.push({ offset, length })
      }
      const textNode = element(a, 'text')
      return { id: attr(a, 'id'), infons: infons(a), locations, text: textNode ? textContent(textNode) : undefined, line }
    })

    const idNode = element(d, 'id')
    const docName = (idNode ? textContent(idNode).trim() : '') || '(no id)'
    const passages: RawPassage[] = []
    for (const [pi, p] of elements(d, 'passage').entries()) {
      const line = xml.lineOf(p)
      const offsetNode = element(p, 'offset')
      const offset = number(offsetNode, 'passage offset', offsetNode ? xml.lineOf(offsetNode) : line, offsetNode ? textContent(offsetNode) : undefined)
      if (offset === undefined) continue
      const textNode = element(p, 'text')
      let text = textNode ? textContent(textNode) : ''
      const anns = annotations(p)
      // Sentence-level BioC: the passage text is spread over <sentence> elements.
      const sentences = elements(p, 'sentence')
      if (sentences.length > 0) {
        for (const [si, s] of sentences.entries()) {
          const sOffsetNode = element(s, 'offset')
          const sOffset = number(sOffsetNode, 'sentence offset', sOffsetNode ? xml.lineOf(sOffsetNode) : xml.lineOf(s), sOffsetNode ? textContent(sOffsetNode) : undefined)
          const sTextNode = element(s, 'text')
          if (sOffset !== undefined && sTextNode && !textNode) text = placeAt(text, sOffset - offset, textContent(sTextNode), log, xml.lineOf(s), `document ${docName}, passage ${pi + 1}, sentence ${si + 1}`)
          anns.push(...annotations(s))
        }
      }
      passages.push({ infons: infons(p), offset, text, annotations: anns, line })
    }
    return { id: idNode ? textContent(idNode) : undefined, passages, line: xml.lineOf(d) }
}

/**
 * For streaming: reads BioC XML one <document> element at a time (its text and the line it
 * starts on), with one log and one duplicate-id memory for the whole file.
 */
export class BiocXmlDocumentReader {
  readonly log: IssueLog
  private readonly builder: BiocDocumentBuilder
  private index = 0

  /** lenient: a document with an error is skipped, the ones after it are still handed out. */
  constructor(
    private readonly fileName: string,
    private readonly lenient = false,
    options: Pick<ReadOptions, 'textOnly' | 'offsets'> = {},
  ) {
    this.log = new IssueLog(fileName, options.textOnly)
    this.builder = new BiocDocumentBuilder(fileName, this.log, options.offsets)
  }

  /** `documentXml` must be well-formed (the streaming reader's sax parser has checked it). */
  read(documentXml: string, firstLine: number): CorpusDocument | undefined {
    const xml = parseXml(documentXml, this.fileName, firstLine, true)
    const root = xml.roots[0]
    if (!root) return undefined
    const errorsBefore = this.log.errors.length
    const raw = rawXmlDocument(root, xml, this.log)
    const doc = this.builder.add(raw, this.index++)
    return this.log.errors.length > errorsBefore || (!this.lenient && this.log.hasErrors) ? undefined : doc
  }

  get count(): number {
    return this.index
  }
}

export function readBiocXml(content: string, fileName: string, options: ReadOptions = {}): ReadResult {
  const log: IssueLog = new IssueLog(fileName, options.textOnly)
  const xml = parseXml(content, fileName)
  const root = xml.roots[0]
  if (!root || tagOf(root) !== 'collection') {
    log.fatal(root ? xml.lineOf(root) : 1, `expected a BioC <collection> root element, found ${root ? `<${tagOf(root)}>` : 'no element'}`)
  }
  const raws: RawDocument[] = elements(root, 'document').map((d) => rawXmlDocument(d, xml, log))
  if (log.hasErrors) throw log.failure()
  const documents = buildDocuments(raws, fileName, log, options)
  if (raws.length === 0) log.error(xml.lineOf(root), 'no <document> elements in the collection')
  const issues = log.finish()
  options.onProgress?.(raws.length, raws.length)
  return { documents, issues }
}

/** Puts a sentence's text at its (passage-relative) offset, padding with spaces; `where` names the sentence in errors. */
function placeAt(text: string, at: number, piece: string, log: IssueLog, line: number | undefined, where: string): string {
  if (at < text.length) {
    log.error(line, `${where}: sentence at passage offset ${at} overlaps the previous sentence, which ends at ${text.length}`)
    return text
  }
  if (gapTooLarge(at - text.length, text.length + piece.length)) {
    log.error(line, `${where}: passage-relative ${farGap(at, text.length, text.length + piece.length)}`)
    return text
  }
  return text + ' '.repeat(at - text.length) + piece
}

// ---------------------------------------------------------------------------------------------
// BioC JSON

export function readBiocJson(content: string, fileName: string, options: ReadOptions = {}): ReadResult {
  const log: IssueLog = new IssueLog(fileName, options.textOnly)
  let data: unknown
  try {
    data = JSON.parse(content.charCodeAt(0) === 0xfeff ? content.slice(1) : content)
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    throw CorpusError.at(fileName, jsonErrorLine(content, message), `malformed JSON: ${message}`)
  }
  const lines = new LineIndex(content)
  const docs = biocJsonDocuments(data)
  if (!docs) log.fatal(1, 'expected a BioC JSON collection: an object with a "documents" array')

  let cursor = 0
  const raws: RawDocument[] = []
  docs.forEach((d, di) => {
    const where = `documents[${di}]`
    if (!isObject(d)) {
      log.error(undefined, `${where} is not an object`)
      return
    }
    const id = typeof d.id === 'string' || typeof d.id === 'number' ? String(d.id) : undefined
    // JSON.parse keeps no positions; find the line of the document's id, searching forwards.
    let line: number | undefined
    if (id !== undefined) {
      const found = findJsonKey(content, 'id', id, cursor)
      if (found >= 0) {
        line = lines.lineOf(found)
        cursor = found + 1
      }
    }
    const passages: RawPassage[] = []
    const passageList = d.passages ?? []
    if (!Array.isArray(passageList)) {
      log.error(line, `${where}.passages is not an array`)
      return
    }
    passageList.forEach((p, pi) => {
      const pWhere = `${where}.passages[${pi}]`
      if (!isObject(p)) return log.error(line, `${pWhere} is not an object`)
      const offset = jsonInt(p.offset)
      if (offset === undefined) return log.error(line, `${pWhere}.offset ${describe(p.offset)} is not a non-negative integer`)
      if (p.text !== undefined && p.text !== null && typeof p.text !== 'string') return log.error(line, `${pWhere}.text is not a string`)
      let text = typeof p.text === 'string' ? p.text : ''
      const annotations = jsonAnnotations(p.annotations, pWhere, line, log)
      if (Array.isArray(p.sentences)) {
        p.sentences.forEach((s, si) => {
          const sWhere = `${pWhere}.sentences[${si}]`
          if (!isObject(s)) return log.error(line, `${sWhere} is not an object`)
          const sOffset = jsonInt(s.offset)
          if (sOffset === undefined) return log.error(line, `${sWhere}.offset ${describe(s.offset)} is not a non-negative integer`)
          if (typeof p.text !== 'string' && typeof s.text === 'string') text = placeAt(text, sOffset - offset, s.text, log, line, `document ${id ?? '(no id)'}, passage ${pi + 1}, sentence ${si + 1}`)
          annotations.push(...jsonAnnotations(s.annotations, sWhere, line, log))
        })
      }
      passages.push({ infons: jsonInfons(p.infons), offset, text, annotations, line })
    })
    raws.push({ id, passages, line })
  })
  if (log.hasErrors) throw log.failure()
  const documents = buildDocuments(raws, fileName, log, options)
  if (docs.length === 0) log.error(1, 'the collection has no documents')
  const issues = log.finish()
  options.onProgress?.(docs.length, docs.length)
  return { documents, issues }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The documents of a BioC JSON collection, a list of collections, a bare document list or PubTator3's wrapper. */
function biocJsonDocuments(data: unknown): unknown[] | undefined {
  if (Array.isArray(data)) {
    if (data.length > 0 && data.every((c) => isObject(c) && Array.isArray(c.documents))) {
      return data.flatMap((c) => (c as { documents: unknown[] }).documents)
    }
    if (data.every((d) => isObject(d) && Array.isArray(d.passages))) return data
    return undefined
  }
  if (!isObject(data)) return undefined
  if (Array.isArray(data.documents)) return data.documents
  if (Array.isArray(data.PubTator3)) return data.PubTator3
  if (Array.isArray(data.passages)) return [data]
  return undefined
}

function jsonInt(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined
  if (typeof value === 'string') return parseOffset(value.trim())
  return undefined
}

function describe(value: unknown): string {
  return value === undefined ? '(missing)' : q(JSON.stringify(value) ?? String(value))
}

function jsonInfons(value: unknown): Record<string, string> {
  const out: Record<string, string> = {}
  if (!isObject(value)) return out
  for (const [key, v] of Object.entries(value)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[key] = String(v)
  }
  return out
}

function jsonAnnotations(value: unknown, where: string, line: number | undefined, log: IssueLog): RawAnnotation[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) {
    log.error(line, `${where}.annotations is not an array`)
    return []
  }
  const out: RawAnnotation[] = []
  value.forEach((a, ai) => {
    const aWhere = `${where}.annotations[${ai}]`
    if (!isObject(a)) return log.error(line, `${aWhere} is not an object`)
    const locations: RawLocation[] = []
    if (!Array.isArray(a.locations)) return log.error(line, `${aWhere}.locations is not an array`)
    for (const [li, l] of a.locations.entries()) {
      const offset = isObject(l) ? jsonInt(l.offset) : undefined
      const length = isObject(l) ? jsonInt(l.length) : undefined
      if (offset === undefined || length === undefined) {
        log.error(line, `${aWhere}.locations[${li}] needs non-negative integer offset and length, got ${describe(l)}`)
        return
      }
      locations.push({ offset, length })
    }
    const id = typeof a.id === 'string' || typeof a.id === 'number' ? String(a.id) : undefined
    out.push({ id, infons: jsonInfons(a.infons), locations, text: typeof a.text === 'string' ? a.text : undefined, line })
  })
  return out
}

/** Index of `"key": value` (value a string or number) at or after `from`, or -1. */
function findJsonKey(content: string, key: string, value: string, from: number): number {
  const escaped = JSON.stringify(value).slice(1, -1).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const pattern = new RegExp(`"${key}"\\s*:\\s*(?:"${escaped}"|${escaped}(?![\\w.]))`, 'g')
  pattern.lastIndex = from
  const m = pattern.exec(content)
  return m ? m.index : -1
}

function jsonErrorLine(content: string, message: string): number | undefined {
  const line = /line (\d+)/.exec(message)
  if (line) return Number(line[1])
  const position = /position (\d+)/.exec(message)
  if (position) return new LineIndex(content).lineOf(Number(position[1]))
  // A file cut short (a copy or download that stopped): V8 names no position, the end is where it broke.
  if (/end of (JSON )?input/i.test(message)) return new LineIndex(content).lineOf(content.trimEnd().length)
  return undefined
}

// ---------------------------------------------------------------------------------------------
// Writers

export interface BiocWriteOptions {
  /** Told about characters that BioC XML cannot hold (written as spaces). */
  onIssue?: (issue: CorpusIssue) => void
  source?: string
  /** Collection date; defaults to today (YYYYMMDD). */
  date?: string
  key?: string
  /** Unit of the offsets written (default code points; Java BioC tools count UTF-16 units). */
  offsets?: OffsetUnit
}

interface LaidOutPassage {
  type: string
  offset: number
  text: string
  mentions: Mention[]
}

/**
 * Passages for export: the document's own (valid, non-overlapping ones), plus a "text" passage for
 * any stretch of text they leave out that is not just spaces, so reading the file back rebuilds
 * exactly the same `text`. Each mention goes to the passage holding its start.
 */
function layout(doc: CorpusDocument): LaidOutPassage[] {
  const text = doc.text
  const own = doc.passages
    .filter((p) => Number.isInteger(p.offset) && Number.isInteger(p.length) && p.offset >= 0 && p.length >= 0 && p.offset + p.length <= text.length)
    .sort((a, b) => a.offset - b.offset)
  const out: LaidOutPassage[] = []
  let cursor = 0
  const gap = (until: number): void => {
    const piece = text.slice(cursor, until)
    if (/[^ ]/.test(piece)) out.push({ type: 'text', offset: cursor, text: piece, mentions: [] })
  }
  for (const p of own) {
    if (p.offset < cursor) continue
    gap(p.offset)
    out.push({ type: p.type, offset: p.offset, text: text.slice(p.offset, p.offset + p.length), mentions: [] })
    cursor = p.offset + p.length
  }
  gap(text.length)
  for (const m of doc.mentions) {
    let home = out.find((p) => p.offset <= m.start && m.start < p.offset + p.text.length)
    home ??= [...out].reverse().find((p) => p.offset <= m.start) ?? out[0]
    home?.mentions.push(m)
  }
  return out
}

function today(): string {
  return new Date().toISOString().slice(0, 10).replace(/-/g, '')
}

function annotationInfons(m: Mention): Record<string, string> {
  return m.conceptId !== undefined && m.conceptId !== '' ? { type: m.type, identifier: m.conceptId } : { type: m.type }
}

/**
 * BioC JSON in three parts (head, one piece per document, tail), so a streaming writer emits the
 * same bytes as writeBiocJson: JSON.stringify(collection, null, 2).
 */
export function biocJsonHead(options: BiocWriteOptions = {}, empty = false): string {
  const head = JSON.stringify({ source: options.source ?? 'FastBioNER', date: options.date ?? today(), key: options.key ?? 'BioC.key', infons: {} }, null, 2)
  return head.slice(0, -2) + (empty ? ',\n  "documents": []\n}\n' : ',\n  "documents": [\n')
}

/** One document of the "documents" array, indented; `first` says whether a comma goes before it. */
export function biocJsonDocument(doc: CorpusDocument, first: boolean, options: Pick<BiocWriteOptions, 'offsets'> = {}): string {
  let n = 0
  const map = OffsetMap.of(doc.text)
  const at = (u16: number): number => map.write(u16, options.offsets)
  const value = {
    id: doc.id,
    infons: {},
    passages: layout(doc).map((p) => ({
      infons: { type: p.type },
      offset: at(p.offset),
      text: p.text,
      sentences: [],
      annotations: p.mentions.map((m) => ({
        id: String(++n),
        infons: annotationInfons(m),
        text: doc.text.slice(m.start, m.end),
        locations: [{ offset: at(m.start), length: at(m.end) - at(m.start) }],
      })),
      relations: [],
    })),
    relations: [],
  }
  // JSON.stringify escapes line breaks inside strings: every "\n" here is layout.
  return (first ? '' : ',\n') + JSON.stringify(value, null, 2).replace(/^/gm, '    ')
}

export const BIOC_JSON_TAIL = '\n  ]\n}\n'

export function writeBiocJson(docs: CorpusDocument[], options: BiocWriteOptions = {}): string {
  if (docs.length === 0) return biocJsonHead(options, true)
  return biocJsonHead(options) + docs.map((d, i) => biocJsonDocument(d, i === 0, options)).join('') + BIOC_JSON_TAIL
}

/**
 * Characters XML 1.0 does not allow, even escaped: C0 controls other than tab, LF and CR,
 * U+FFFE/U+FFFF and unpaired surrogates.
 */
const FORBIDDEN_IN_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/**
 * The document with every character XML forbids replaced by a space (one UTF-16 unit for one,
 * so all offsets stay valid), and a warning saying how many there were.
 */
function xmlSafe(doc: CorpusDocument, onIssue: BiocWriteOptions['onIssue']): CorpusDocument {
  let count = 0
  let first: string | undefined
  const clean = (value: string): string =>
    value.replace(FORBIDDEN_IN_XML, (c) => {
      count++
      first ??= c
      return ' '
    })
  const safe: CorpusDocument = {
    ...doc,
    id: clean(doc.id),
    text: clean(doc.text),
    passages: doc.passages.map((p) => ({ ...p, type: clean(p.type) })),
    mentions: doc.mentions.map((m) => ({ ...m, text: clean(m.text), type: clean(m.type), ...(m.conceptId !== undefined ? { conceptId: clean(m.conceptId) } : {}) })),
  }
  if (count === 0) return doc
  const code = `U+${first!.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`
  onIssue?.({ severity: 'warning', file: doc.id, message: `${count} character${count === 1 ? '' : 's'} that XML 1.0 forbids (first ${code}) written as spaces` })
  return safe
}

const xmlBuilder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', format: true, indentBy: '  ', suppressEmptyNode: false })

/** BioC XML head: declaration, doctype and the collection's source, date and key. */
export function biocXmlHead(options: BiocWriteOptions = {}): string {
  const meta = xmlBuilder.build({ source: options.source ?? 'FastBioNER', date: options.date ?? today(), key: options.key ?? 'BioC.key' }) as string
  return `<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE collection SYSTEM "BioC.dtd">\n<collection>\n${meta}`
}

/** One <document> element (characters XML forbids written as spaces, told through onIssue). */
export function biocXmlDocument(original: CorpusDocument, options: BiocWriteOptions = {}): string {
  const infonList = (infons: Record<string, string>): Array<Record<string, string>> =>
    Object.entries(infons).map(([key, value]) => ({ '@_key': key, '#text': value }))
  const doc = xmlSafe(original, options.onIssue)
  let n = 0
  const map = OffsetMap.of(doc.text)
  const at = (u16: number): number => map.write(u16, options.offsets)
  const document = {
    id: doc.id,
    passage: layout(doc).map((p) => ({
      infon: infonList({ type: p.type }),
      offset: at(p.offset),
      text: p.text,
      annotation: p.mentions.map((m) => ({
        '@_id': String(++n),
        infon: infonList(annotationInfons(m)),
        location: { '@_offset': at(m.start), '@_length': at(m.end) - at(m.start) },
        text: doc.text.slice(m.start, m.end),
      })),
    })),
  }
  // A raw CR would not come back: XML parsers turn CR LF and lone CR into LF (attribute values:
  // into a space), which shifts every offset after it. Written as a character reference, it is
  // read back as CR. The builder writes no CR of its own, so every CR here is the text's.
  return (xmlBuilder.build({ document }) as string).replace(/\r/g, '&#13;')
}

export const BIOC_XML_TAIL = '</collection>\n'

export function writeBiocXml(docs: CorpusDocument[], options: BiocWriteOptions = {}): string {
  return biocXmlHead(options) + docs.map((d) => biocXmlDocument(d, options)).join('') + BIOC_XML_TAIL
}
