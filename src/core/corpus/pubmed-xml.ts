import type { CorpusDocument, Passage } from '@shared/domain'
import { IssueLog } from './errors'
import { attr, childrenOf, element, elements, parseXml, tagOf, textContent, type ParsedXml, type XmlNode } from './xml'
import type { ReadOptions, ReadResult } from './util'

/** XML layout whitespace (newlines, indentation) inside a title or abstract is not content. */
function clean(value: string): string {
  return value.replace(/\s+/g, ' ').trim()
}

/**
 * PubMed efetch XML (PubmedArticleSet of PubmedArticle / PubmedBookArticle). Each article becomes
 * a document `title + " " + abstract`, the abstract being its AbstractText parts joined by " ".
 * Passages: "title", then one per AbstractText typed with its Label ("BACKGROUND", …) or
 * "abstract". Inline markup (<i>, <sup>, …) is dropped and its text kept ("H<sub>2</sub>O" → "H2O").
 */
export function readPubmedXml(content: string, fileName: string, options: ReadOptions = {}): ReadResult {
  const log: IssueLog = new IssueLog(fileName)
  const xml = parseXml(content, fileName)
  const root = xml.roots[0]
  const rootTag = root ? tagOf(root) : undefined
  let articles: XmlNode[]
  if (rootTag === 'PubmedArticleSet' || rootTag === 'PubmedBookArticleSet') {
    articles = childrenOf(root!).filter((c) => tagOf(c) === 'PubmedArticle' || tagOf(c) === 'PubmedBookArticle')
  } else if (rootTag === 'PubmedArticle' || rootTag === 'PubmedBookArticle') {
    articles = [root!]
  } else {
    log.fatal(root ? xml.lineOf(root) : 1, `expected a <PubmedArticleSet> root element, found ${rootTag ? `<${rootTag}>` : 'no element'}`)
  }

  const documents: CorpusDocument[] = []
  const revisions = new RevisionPlan()
  for (const article of articles) {
    const pmidNode = citationPmid(article)
    const pmid = pmidNode ? clean(textContent(pmidNode)) : ''
    if (pmid !== '') revisions.add(pmid, pmidVersion(attr(pmidNode!, 'Version')), xml.lineOf(pmidNode!))
  }
  const seen = new Map<string, number>()
  articles.forEach((article, index) => {
    if (options.onProgress && index % 1000 === 0 && index > 0) options.onProgress(index, articles.length)
    const doc = articleDocument(article, index, xml, log, revisions, seen)
    if (doc) documents.push(doc)
  })

  if (articles.length === 0) log.error(root ? xml.lineOf(root) : 1, 'no PubmedArticle elements found')
  const issues = log.finish()
  options.onProgress?.(articles.length, articles.length)
  return { documents, issues }
}

function bookTitle(bookDocument: XmlNode): XmlNode | undefined {
  const book = element(bookDocument, 'Book')
  return book ? element(book, 'BookTitle') : undefined
}

/** The record's own PMID element (MedlineCitation/PMID, BookDocument/PMID). */
function citationPmid(article: XmlNode): XmlNode | undefined {
  const citation = tagOf(article) === 'PubmedBookArticle' ? element(article, 'BookDocument') : element(article, 'MedlineCitation')
  return citation && element(citation, 'PMID')
}

/** <PMID Version="2">: the record's revision (1 when absent or unreadable). */
export function pmidVersion(value: string | undefined): number {
  const v = Number(value)
  return Number.isInteger(v) && v > 0 ? v : 1
}

/**
 * PubMed's rule for a PMID found more than once in one file (a revised record): the record with
 * the highest <PMID Version> is kept, else the last one; the others are skipped with a warning
 * naming both. Every record's PMID is added, in file order, before the records are read (the
 * streaming reader makes a first pass for it).
 */
export class RevisionPlan {
  private readonly byPmid = new Map<string, Array<{ version: number; line: number | undefined }>>()

  add(pmid: string, version: number, line: number | undefined): void {
    const list = this.byPmid.get(pmid)
    if (list) list.push({ version, line })
    else this.byPmid.set(pmid, [{ version, line }])
  }

  /** The `occurrence`-th record (0-based) of `pmid`: kept (null), or why it is skipped. */
  supersededAt(pmid: string, occurrence: number): string | null {
    const list = this.byPmid.get(pmid) ?? []
    if (occurrence === 0 && list.length <= 1) return null
    // The plan did not see this record (unexpected layout): keep the first, as for other formats.
    if (occurrence >= list.length) return `duplicate PMID ${pmid} not seen when the file was first scanned; keeping the first`
    let kept = 0
    list.forEach((r, i) => {
      if (r.version >= list[kept]!.version) kept = i
    })
    if (kept === occurrence) return null
    const mine = list[occurrence]!
    const winner = list[kept]!
    const versions = mine.version === winner.version ? '' : ` (version ${mine.version}; version ${winner.version} is kept)`
    return (
      `PMID ${pmid} occurs ${list.length} times: this record is superseded by the one on line ${winner.line ?? '?'}${versions}; skipped ` +
      `(the highest <PMID Version> is kept, else the last)`
    )
  }
}

function articleDocument(article: XmlNode, index: number, xml: ParsedXml, log: IssueLog, revisions: RevisionPlan, seen: Map<string, number>): CorpusDocument | undefined {
    const line = xml.lineOf(article)
    const book = tagOf(article) === 'PubmedBookArticle'
    const citation = book ? element(article, 'BookDocument') : element(article, 'MedlineCitation')
    const pmidNode = citation && element(citation, 'PMID')
    const pmid = pmidNode ? clean(textContent(pmidNode)) : ''
    if (!citation || pmid === '') {
      log.error(line, `article ${index + 1} has no PMID (expected ${book ? 'BookDocument' : 'MedlineCitation'}/PMID)`)
      return undefined
    }
    const articleNode = book ? citation : element(citation, 'Article')
    const titleNode = articleNode && (element(articleNode, 'ArticleTitle') ?? (book ? bookTitle(citation) : undefined))
    const title = titleNode ? clean(textContent(titleNode)) : ''
    const abstractNode = articleNode && element(articleNode, 'Abstract')
    const parts = (abstractNode ? elements(abstractNode, 'AbstractText') : [])
      .map((node) => ({ label: attr(node, 'Label'), text: clean(textContent(node)) }))
      .filter((p) => p.text !== '')

    const occurrence = seen.get(pmid) ?? 0
    seen.set(pmid, occurrence + 1)
    const superseded = revisions.supersededAt(pmid, occurrence)
    if (superseded !== null) {
      log.warn(xml.lineOf(pmidNode!) ?? line, superseded)
      return undefined
    }
    if (title === '' && parts.length === 0) {
      log.warn(line, `article ${pmid} has neither a title nor an abstract; skipped`)
      return undefined
    }

    const passages: Passage[] = [{ type: 'title', offset: 0, length: title.length }]
    let text = title
    for (const part of parts) {
      text += ' '
      passages.push({ type: part.label && part.label.trim() !== '' ? part.label.trim() : 'abstract', offset: text.length, length: part.text.length })
      text += part.text
    }
    return { id: pmid, text, passages, mentions: [] }
}

/** For streaming: reads PubMed XML one <PubmedArticle>/<PubmedBookArticle> element at a time. */
export class PubmedArticleReader {
  readonly log: IssueLog
  private readonly seen = new Map<string, number>()
  private index = 0

  /**
   * lenient: an article with an error is skipped, the ones after it are still handed out.
   * revisions: every record's PMID, from a first pass over the file.
   */
  constructor(
    private readonly fileName: string,
    private readonly lenient = false,
    private readonly revisions = new RevisionPlan(),
  ) {
    this.log = new IssueLog(fileName)
  }

  /** `articleXml` must be well-formed (the streaming reader's sax parser has checked it). */
  read(articleXml: string, firstLine: number): CorpusDocument | undefined {
    const xml = parseXml(articleXml, this.fileName, firstLine, true)
    const root = xml.roots[0]
    if (!root) return undefined
    const errorsBefore = this.log.errors.length
    const doc = articleDocument(root, this.index++, xml, this.log, this.revisions, this.seen)
    return this.log.errors.length > errorsBefore || (!this.lenient && this.log.hasErrors) ? undefined : doc
  }

  get count(): number {
    return this.index
  }
}
