import { readPubmedXml } from '@core/corpus'
import { corpusError, expectConsistent, fixture } from './helpers'

describe('readPubmedXml', () => {
  it('reads PMIDs, titles and structured abstracts, keeping the text inside inline markup', () => {
    const { documents, issues } = readPubmedXml(fixture('pubmed.xml'), 'pubmed.xml')
    expect(issues).toEqual([])
    expectConsistent(documents)
    expect(documents.map((d) => d.id)).toEqual(['2000001', '2000002', '2000003'])

    const structured = documents[0]!
    const title = 'Role of Tmx1 in Ca2+ signalling & H2O transport.'
    expect(structured.text).toBe(`${title} The Tmx1 gene is poorly understood. We measured Ca2+ flux (p < 0.05). Tmx1 matters.`)
    expect(structured.passages.map((p) => [p.type, structured.text.slice(p.offset, p.offset + p.length)])).toEqual([
      ['title', title],
      ['BACKGROUND', 'The Tmx1 gene is poorly understood.'],
      ['METHODS', 'We measured Ca2+ flux (p < 0.05).'],
      ['CONCLUSIONS', 'Tmx1 matters.'],
    ])
    expect(structured.mentions).toEqual([])

    // A single, unlabelled AbstractText (not an array in the XML) is one "abstract" passage.
    expect(documents[1]!.text).toBe('A plain abstract. Only one unlabelled part.')
    expect(documents[1]!.passages.map((p) => p.type)).toEqual(['title', 'abstract'])
    // No abstract: the title alone.
    expect(documents[2]!.text).toBe('No abstract at all.')
  })

  it('accepts a single PubmedArticle as the root', () => {
    const xml = '<PubmedArticle><MedlineCitation><PMID>5</PMID><Article><ArticleTitle>T.</ArticleTitle></Article></MedlineCitation></PubmedArticle>'
    expect(readPubmedXml(xml, 'one.xml').documents).toEqual([{ id: '5', text: 'T.', passages: [{ type: 'title', offset: 0, length: 2 }], mentions: [] }])
  })

  it('keeps the last record of a duplicate PMID (a revision) and warns naming both lines', () => {
    const article = (title: string): string =>
      `<PubmedArticle><MedlineCitation><PMID>5</PMID><Article><ArticleTitle>${title}</ArticleTitle></Article></MedlineCitation></PubmedArticle>\n`
    const { documents, issues } = readPubmedXml(`<PubmedArticleSet>\n${article('First.')}${article('Second.')}</PubmedArticleSet>`, 'd.xml')
    expect(documents.map((d) => d.text)).toEqual(['Second.'])
    expect(issues[0]).toMatchObject({ severity: 'warning', line: 2 })
    expect(issues[0]!.message).toContain('PMID 5 occurs 2 times: this record is superseded by the one on line 3')
  })

  it('keeps the highest <PMID Version> of a PMID wherever it is in the file', () => {
    const article = (version: number, title: string): string =>
      `<PubmedArticle><MedlineCitation><PMID Version="${version}">5</PMID><Article><ArticleTitle>${title}</ArticleTitle></Article></MedlineCitation></PubmedArticle>\n`
    const { documents, issues } = readPubmedXml(`<PubmedArticleSet>\n${article(2, 'Revised.')}${article(1, 'Original.')}</PubmedArticleSet>`, 'v.xml')
    expect(documents.map((d) => d.text)).toEqual(['Revised.'])
    expect(issues).toHaveLength(1)
    expect(issues[0]).toMatchObject({ severity: 'warning', line: 3 })
    expect(issues[0]!.message).toContain('superseded by the one on line 2 (version 1; version 2 is kept)')
  })

  it('rejects malformed XML naming the line', () => {
    const error = corpusError(() => readPubmedXml('<PubmedArticleSet>\n<PubmedArticle>\n</PubmedArticleSet>\n', 'broken.xml'))
    expect(error.message).toMatch(/^broken\.xml:3: malformed XML/)
  })

  it('rejects an article without a PMID, and XML that is not PubMed', () => {
    const noPmid = corpusError(() =>
      readPubmedXml('<PubmedArticleSet>\n\n<PubmedArticle><MedlineCitation><Article/></MedlineCitation></PubmedArticle></PubmedArticleSet>', 'p.xml'),
    )
    expect(noPmid.message).toMatch(/^p\.xml:3: article 1 has no PMID/)
    expect(corpusError(() => readPubmedXml('<collection/>', 'c.xml')).message).toMatch(/^c\.xml:1: expected a <PubmedArticleSet>/)
  })
})
