import { corpusChunks, readPubtator, writePubtator } from '@core/corpus'
import type { CorpusDocument } from '@shared/domain'
import { corpusError, expectConsistent, fixture } from './helpers'

const sample = fixture('sample.pubtator')

describe('readPubtator', () => {
  it('reads titles, abstracts, mentions and concept ids', () => {
    const { documents, issues } = readPubtator(sample, 'sample.pubtator')
    expect(issues).toEqual([])
    expect(documents.map((d) => d.id)).toEqual(['1000001', '1000002', '1000003'])
    expectConsistent(documents)

    const [first, second, third] = documents as [CorpusDocument, CorpusDocument, CorpusDocument]
    const title = 'Familial tremor syndrome in two siblings.'
    expect(first.text.startsWith(title + ' We describe')).toBe(true)
    expect(first.passages).toEqual([
      { type: 'title', offset: 0, length: title.length },
      { type: 'abstract', offset: title.length + 1, length: first.text.length - title.length - 1 },
    ])
    expect(first.mentions).toHaveLength(4) // the CID relation line is skipped
    expect(first.mentions[0]).toEqual({ start: 0, end: 24, text: 'Familial tremor syndrome', type: 'SpecificDisease', conceptId: 'D000001' })
    expect(first.mentions[3]).toMatchObject({ text: 'breast or ovarian cancer', type: 'CompositeMention', conceptId: 'D001943|D010051' })

    expect(second.mentions.find((m) => m.text === 'neuropathy')).toEqual({ start: 73, end: 83, text: 'neuropathy', type: 'DiseaseClass' })
    expect(second.mentions.find((m) => m.type === 'CompositeMention')?.conceptId).toBe('D000740+D009422')

    // No abstract line: the text is the title alone.
    expect(third.text).toBe('Title-only record about migraine.')
    expect(third.passages).toEqual([{ type: 'title', offset: 0, length: third.text.length }])
    expect(third.mentions[0]?.text).toBe('migraine')
    expect(documents.every((d) => d.tokens === undefined)).toBe(true)
  })

  it('reads CRLF files and a leading BOM the same way', () => {
    const crlf = '\uFEFF' + sample.replace(/\n/g, '\r\n')
    expect(readPubtator(crlf, 'x.pubtator').documents).toEqual(readPubtator(sample, 'x.pubtator').documents)
  })

  it('keeps the first of duplicate documents and warns naming both lines', () => {
    const doc = '7|t|Alpha.\n7|a|Beta gamma.\n7\t0\t5\tAlpha\tX\n'
    const { documents, issues } = readPubtator(`${doc}\n\n7|t|Other.\n7|a|Text.\n`, 'dup.pubtator')
    expect(documents).toHaveLength(1)
    expect(documents[0]!.text).toBe('Alpha. Beta gamma.')
    expect(issues).toHaveLength(1)
    expect(issues[0]).toMatchObject({ severity: 'warning', file: 'dup.pubtator', line: 6 })
    expect(issues[0]!.message).toContain('lines 1 and 6')
  })

  it('tolerates a missing blank line between documents, 5-column mentions and mentions without a type', () => {
    const content = '1|t|One.\n1|a|Alpha beta.\n1\t5\t10\tAlpha\n2|t|Two.\n2|a|Gamma.\n2\t5\t10\tGamma\tT\n'
    const { documents, issues } = readPubtator(content, 'x.pubtator')
    expect(documents.map((d) => d.id)).toEqual(['1', '2'])
    expect(documents[0]!.mentions[0]).toEqual({ start: 5, end: 10, text: 'Alpha', type: 'Entity' })
    expect(documents[1]!.mentions[0]).toEqual({ start: 5, end: 10, text: 'Gamma', type: 'T' })
    expect(issues).toHaveLength(1)
    expect(issues[0]).toMatchObject({ severity: 'warning', line: 3 })
  })

  it('accepts a mention text column with stray surrounding whitespace, with a warning', () => {
    const { documents, issues } = readPubtator('1|t|Alpha.\n1|a|x\n1\t0\t5\tAlpha  \tT\n', 'x.pubtator')
    expect(documents[0]!.mentions[0]!.text).toBe('Alpha')
    expect(issues[0]).toMatchObject({ severity: 'warning', line: 3 })
  })

  const bad: Array<[string, string, number, RegExp]> = [
    ['truncated mention line', '1|t|Alpha.\n1|a|Beta.\n1\t0\t5\n', 3, /truncated/],
    ['truncated title line', '1|t|Alpha.\n1|a|Beta.\n\n2|t\n', 4, /truncated/],
    ['non-integer start', '1|t|Alpha.\n1|a|Beta.\n1\t0.5\t5\tAlpha\tT\n', 3, /start offset "0\.5" is not a non-negative integer/],
    ['negative start', '1|t|Alpha.\n1|a|Beta.\n1\t-1\t5\tAlpha\tT\n', 3, /not a non-negative integer/],
    ['non-integer end', '1|t|Alpha.\n1|a|Beta.\n1\t0\t5x\tAlpha\tT\n', 3, /end offset "5x"/],
    ['offsets outside the text', '1|t|Alpha.\n1|a|Beta.\n1\t10\t20\tAlpha\tT\n', 3, /mention offsets 10-20 lie outside the document text \(length 12\)/],
    ['reversed offsets', '1|t|Alpha.\n1|a|Beta.\n1\t5\t0\tAlpha\tT\n', 3, /empty or reversed/],
    ['text mismatch', '1|t|Alpha.\n1|a|Beta.\n1\t0\t5\tAlpja\tT\n', 3, /expected "Alpja", found "Alpha"/],
    ['mention for another PMID', '1|t|Alpha.\n1|a|Beta.\n2\t0\t5\tAlpha\tT\n', 3, /mention for 2 inside document 1/],
    ['mention after the document ended', '1|t|Alpha.\n1|a|Beta.\n\n1\t0\t5\tAlpha\tT\n', 4, /outside any document/],
    ['abstract before title', '1|a|Beta.\n1|t|Alpha.\n', 1, /abstract line for 1 comes before its title/],
    ['abstract of another document', '1|t|Alpha.\n2|a|Beta.\n', 2, /abstract line for 2 follows the title of 1/],
    ['second abstract', '1|t|Alpha.\n1|a|Beta.\n1|a|Gamma.\n', 3, /second abstract line/],
    ['unrecognised line', '1|t|Alpha.\n1|a|Beta.\njust some words\n', 3, /unrecognised line/],
    ['empty type column', '1|t|Alpha.\n1|a|Beta.\n1\t0\t5\tAlpha\t\tD1\n', 3, /empty entity type/],
    ['no documents', '\n\n1\tCID\tD1\tD2\n', 1, /no PubTator documents/],
  ]
  it.each(bad)('rejects the whole file on %s, naming file and line', (_, content, line, message) => {
    const error = corpusError(() => readPubtator(content, 'bad.pubtator'))
    expect(error.line).toBe(line)
    expect(error.message).toMatch(new RegExp(`^bad\\.pubtator:${line}: `))
    expect(error.message).toMatch(message)
  })

  it('is all or nothing: one bad mention rejects every document, and all errors are listed', () => {
    const content = sample + '\n9|t|Late.\n9|a|Doc.\n9\t0\t4\tLatE\tT\n9\t0\t99\tLate\tT\n'
    const error = corpusError(() => readPubtator(content, 'mixed.pubtator'))
    expect(error.errors.map((e) => e.line)).toEqual([22, 23])
    expect(error.message).toContain('(and 1 more error)')
  })

  it('reads 10 000 abstracts within a couple of seconds, reporting progress', () => {
    const abstract = 'Alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu. '.repeat(20)
    const parts: string[] = []
    for (let i = 0; i < 10_000; i++) {
      const id = String(10_000_000 + i)
      parts.push(`${id}|t|Title number ${i} about tremor.\n${id}|a|${abstract}\n${id}\t0\t5\tTitle\tT\tD1\n${id}\t${20 + String(i).length}\t${26 + String(i).length}\ttremor\tDisease\n`)
    }
    const content = parts.join('\n')
    const progress: Array<[number, number]> = []
    // Speed is measured by `npm run bench:import`, not asserted here (a loaded CI machine varies 10×).
    const { documents } = readPubtator(content, 'big.pubtator', { onProgress: (done, total) => progress.push([done, total]) })
    expect(documents).toHaveLength(10_000)
    expect(documents[1234]!.mentions[1]!.text).toBe('tremor')
    expect(progress.length).toBeGreaterThan(2)
    expect(progress.at(-1)![0]).toBe(progress.at(-1)![1])
  })
})

describe('writePubtator', () => {
  it('writes the sample back byte for byte (bar the relation line it does not keep)', () => {
    const { documents } = readPubtator(sample, 'sample.pubtator')
    expect(writePubtator(documents)).toBe(sample.replace('1000001\tCID\tD000001\tD001259\n', ''))
  })

  it('writes documents from other sources: title up to the first newline, line breaks as spaces', () => {
    const doc: CorpusDocument = {
      id: 'doc|1',
      text: 'First line\nsecond\tline with tremor\nthird',
      passages: [],
      mentions: [{ start: 28, end: 34, text: 'tremor', type: 'Disease' }],
    }
    const out = writePubtator([doc])
    expect(out).toBe('doc_1|t|First line\ndoc_1|a|second line with tremor third\ndoc_1\t28\t34\ttremor\tDisease\n\n')
    const back = readPubtator(out, 'w.pubtator').documents[0]!
    expect(back.text).toBe(doc.text.replace(/[\n\t]/g, ' '))
    expect(back.mentions).toEqual(doc.mentions)
  })

  it('keeps ids that meet once written apart, with a warning, so that no document is lost on re-reading (session 40, item 7)', async () => {
    const doc = (id: string, text: string): CorpusDocument => ({ id, text, passages: [], mentions: [] })
    const docs = [doc('a|b', 'One.'), doc('a_b', 'Two.'), doc('a_b~2', 'Three.'), doc('a_b', 'Four.'), doc('x', 'Five.'), doc('x', 'Six.')]
    const issues: string[] = []
    const out = writePubtator(docs, { onIssue: (i) => issues.push(`${i.file}: ${i.message}`), outputName: 'o.pubtator' })
    expect(out).toBe('a_b|t|One.\n\na_b~2|t|Two.\n\na_b~2~2|t|Three.\n\na_b~3|t|Four.\n\nx|t|Five.\n\nx~2|t|Six.\n\n')
    expect(issues).toEqual([
      `o.pubtator: document "a_b" written with id a_b~2: document "a|b" was written as a_b (PubTator ids cannot hold '|', tabs or line breaks)`,
      'o.pubtator: document "a_b~2" written with id a_b~2~2: document "a_b" was written as a_b~2',
      `o.pubtator: document "a_b" written with id a_b~3: document "a|b" was written as a_b (PubTator ids cannot hold '|', tabs or line breaks)`,
      'o.pubtator: document "x" written with id x~2: an earlier document has the same id',
    ])
    expect(readPubtator(out, 'o.pubtator').documents.map((d) => d.text)).toEqual(['One.', 'Two.', 'Three.', 'Four.', 'Five.', 'Six.'])
    // Streamed, a document at a time, the same.
    async function* each() {
      yield* docs
    }
    let streamed = ''
    for await (const chunk of corpusChunks(each(), 'pubtator')) streamed += chunk
    expect(streamed).toBe(out)
  })

  it('writes an empty abstract line when the abstract is empty and none when there is no abstract', () => {
    const docs: CorpusDocument[] = [
      { id: 'a', text: 'Title ', passages: [{ type: 'title', offset: 0, length: 5 }, { type: 'abstract', offset: 6, length: 0 }], mentions: [] },
      { id: 'b', text: 'Only title', passages: [{ type: 'title', offset: 0, length: 10 }], mentions: [] },
    ]
    const out = writePubtator(docs)
    expect(out).toBe('a|t|Title\na|a|\n\nb|t|Only title\n\n')
    expect(readPubtator(out, 'x').documents).toEqual(docs)
  })
})
