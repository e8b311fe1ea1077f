import { XMLParser, XMLValidator } from 'fast-xml-parser'
import * as sax from 'sax'
import { CorpusError } from './errors'
import { LineIndex } from './util'

/**
 * One node of fast-xml-parser's `preserveOrder` output: `{ tag: children, ':@': attributes }` for
 * an element, `{ '#text': string }` for text. Order-preserving output keeps inline markup
 * (`<i>`, `<sup>`) in place, and every element's children are an array whether there is one or many.
 */
export type XmlNode = Record<string, unknown>

/** The named entities the streaming reader (sax, strict) accepts: XML's five and HTML's. */
const SAX_ENTITIES = (sax as unknown as { ENTITIES: Record<string, string> }).ENTITIES

const ATTRS = ':@'
const TEXT = '#text'
const META = XMLParser.getMetaDataSymbol() as unknown as symbol

const PARSER_OPTIONS = {
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  // Whitespace around inline markup is part of the text ("the <i>beta</i> cell").
  trimValues: false,
  // XML's five, HTML's named ones and character references; a file's own (DTD) ones are refused:
  // see entityIssue. The parser takes a map of named entities here (its JavaScript does; its types
  // say boolean): sax's, so that both readers know the same names (`true` would give it a dozen).
  processEntities: true,
  htmlEntities: SAX_ENTITIES as unknown as boolean,
  captureMetaData: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
} as const

export interface ParsedXml {
  /** Top-level element nodes (declaration, processing instructions and text dropped). */
  roots: XmlNode[]
  /** 1-based line of an element's start tag, when known. */
  lineOf(node: XmlNode): number | undefined
}

/**
 * Validates and parses XML; any problem becomes a CorpusError naming the line. `firstLine` is
 * the file line `content` starts on, when it is one element cut out of a larger file;
 * `alreadyChecked` skips validation when a streaming parser has checked that text already.
 */
export function parseXml(content: string, fileName: string, firstLine = 1, alreadyChecked = false): ParsedXml {
  const entities = alreadyChecked ? null : entityIssue(content)
  if (entities) {
    const { line, column } = new LineIndex(content).position(entities.index)
    throw CorpusError.at(fileName, line + firstLine - 1, `malformed XML (column ${column}): ${entities.message}`)
  }
  const valid = alreadyChecked || XMLValidator.validate(content)
  if (valid !== true) {
    const error = xmlError(content, fileName, valid.err)
    if (firstLine === 1) throw error
    throw CorpusError.at(fileName, (error.line ?? 1) + firstLine - 1, error.issues[0]!.message)
  }
  let parsed: XmlNode[]
  try {
    // A fresh parser per file: DOCTYPE entities of one file must not leak into the next.
    parsed = new XMLParser(PARSER_OPTIONS).parse(content) as XmlNode[]
  } catch (error) {
    throw CorpusError.at(fileName, undefined, `malformed XML: ${error instanceof Error ? error.message : String(error)}`)
  }
  const lines = new LineIndex(content)
  return {
    roots: parsed.filter((n) => tagOf(n) !== undefined),
    lineOf(node) {
      const meta = (node as Record<symbol, { startIndex?: number } | undefined>)[META]
      return meta?.startIndex !== undefined ? lines.lineOf(meta.startIndex) + firstLine - 1 : undefined
    },
  }
}

/**
 * Entities a file declares in its DOCTYPE would be expanded by the whole-file parser but refused
 * by the streaming one (sax reads no DTD), so the same file read as two texts; expanding a file's
 * own entities is also how XML bombs are built. Both readers therefore refuse a declaration, and
 * a reference to an entity that is neither XML's, HTML's (sax's list) nor a character reference.
 */
export function entityIssue(content: string): { index: number; message: string } | null {
  // CDATA sections and comments hold literal text: blanked out, offsets kept.
  const scanned = content.replace(/<!\[CDATA\[[\s\S]*?\]\]>|<!--[\s\S]*?-->/g, (m) => ' '.repeat(m.length))
  const declared = DECLARED_ENTITY.exec(scanned)
  if (declared) return { index: declared.index, message: declaredEntity(declared[1]!) }
  for (const used of scanned.matchAll(/&([A-Za-z_:][\w.:-]*);/g)) {
    if (!Object.hasOwn(SAX_ENTITIES, used[1]!)) return { index: used.index, message: undefinedEntity(used[1]!) }
  }
  return null
}

/** An entity declaration (<!ENTITY name …> or a parameter one, <!ENTITY % name …>); group 1 the name. */
export const DECLARED_ENTITY = /<!ENTITY\s+(?:%\s*)?([^\s>]+)/

export function declaredEntity(name: string): string {
  return `the DOCTYPE declares the entity ${name} (<!ENTITY …>); entities a file declares are not expanded: write their text in its place`
}

export function undefinedEntity(name: string): string {
  return `&${name}; is not a known entity (XML's five, HTML's named ones such as &eacute; and character references such as &#233; are; the file's DTD is not read): write the character itself or its character reference`
}

/**
 * The validator's error as a readable CorpusError with line and column. An unclosed element is
 * reported as "Invalid '[\"a\", \"b\"]' found" at line 1: that is a file that ends too early,
 * so it is placed at the end of the file and says which elements are still open.
 */
function xmlError(content: string, fileName: string, err: { msg: string; line: number; col: number }): CorpusError {
  const unclosed = /^Invalid '(\[[\s\S]*\])' found\.?$/.exec(err.msg)
  if (unclosed) {
    let names: unknown
    try {
      names = JSON.parse(unclosed[1]!)
    } catch {
      names = undefined
    }
    if (Array.isArray(names) && names.length > 0) {
      const body = content.replace(/[\r\n]+$/, '')
      const lastLine = body.slice(body.lastIndexOf('\n') + 1)
      const line = body.split('\n').length
      const list = names.map((n) => `<${String(n)}>`).join(', ')
      return CorpusError.at(fileName, line, `malformed XML (column ${lastLine.length + 1}): the file ends inside <${String(names.at(-1))}> (unclosed: ${list}); it looks truncated`)
    }
  }
  return CorpusError.at(fileName, err.line, `malformed XML (column ${err.col}): ${err.msg}`)
}

/** Element name, or undefined for a text node. */
export function tagOf(node: XmlNode): string | undefined {
  for (const key of Object.keys(node)) if (key !== ATTRS && key !== TEXT) return key
  return undefined
}

export function childrenOf(node: XmlNode): XmlNode[] {
  const tag = tagOf(node)
  const value = tag === undefined ? undefined : node[tag]
  return Array.isArray(value) ? (value as XmlNode[]) : []
}

export function elements(node: XmlNode, name: string): XmlNode[] {
  return childrenOf(node).filter((c) => tagOf(c) === name)
}

export function element(node: XmlNode, name: string): XmlNode | undefined {
  return childrenOf(node).find((c) => tagOf(c) === name)
}

export function attr(node: XmlNode, name: string): string | undefined {
  const attrs = node[ATTRS] as Record<string, unknown> | undefined
  const value = attrs?.[name]
  return value === undefined || value === null ? undefined : String(value)
}

/** All text inside a node, markup dropped and its content kept, in document order. */
export function textContent(node: XmlNode): string {
  if (TEXT in node) return String(node[TEXT])
  let out = ''
  for (const child of childrenOf(node)) out += textContent(child)
  return out
}
