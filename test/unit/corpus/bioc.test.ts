import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openCorpusStream, readBiocJson, readBiocXml, writeBiocJson, writeBiocXml } from '@core/corpus'
import type { CorpusDocument } from '@shared/domain'
import { corpusError, expectConsistent, fixture } from './helpers'

describe.each([
  ['bioc.xml', readBiocXml],
  ['bioc.json', readBiocJson],
] as const)('reading %s', (name, read) => {
  it('places passages at their offsets and keeps annotation offsets exactly', () => {
    const { documents, issues } = read(fixture(name), name)
    expectConsistent(documents)
    expect(documents.map((d) => d.id)).toEqual(['3000001', '3000002'])
    const [one, two] = documents as [CorpusDocument, CorpusDocument]
    expect(one.text).toBe('Gene X variants in migraine. Variants of gene X were found in patients with migraine and cluster headache.')
    expect(one.passages).toEqual([
      { type: 'title', offset: 0, length: 28 },
      { type: 'abstract', offset: 29, length: one.text.length - 29 },
    ])
    expect(one.mentions[0]).toEqual({ start: 0, end: 6, text: 'Gene X', type: 'Gene', conceptId: 'NCBI:1' })
    expect(one.mentions.map((m) => m.text)).toEqual(['Gene X', 'migraine', 'migraine', 'cluster headache'])
    // The gap between title and abstract is padded with spaces.
    expect(two.text).toBe('Second document.   Its abstract starts after a gap of three spaces.')
    expect(two.mentions[0]).toEqual({ start: 23, end: 31, text: 'abstract', type: 'Concept' })
    // The discontinuous annotation (cluster … headache, two locations) is kept as its outer span.
    expect(issues).toHaveLength(1)
    const outer = `${one.text.indexOf('cluster')}-${one.text.indexOf('headache') + 8}`
    expect(issues[0]!.message).toContain(`discontinuous`)
    expect(issues[0]!.message).toContain(`outer span ${outer}`)
    expect(one.mentions[3]!.start).toBe(one.text.indexOf('cluster'))
  })
})

describe('BioC errors', () => {
  it('rejects an annotation whose text does not match, naming the line', () => {
    const xml = fixture('bioc.xml').replace('<text>Gene X</text>', '<text>Gene Y</text>')
    const error = corpusError(() => readBiocXml(xml, 'b.xml'))
    expect(error.message).toMatch(/^b\.xml:13: document 3000001: .*expected "Gene Y", found "Gene X"/)
  })

  it('rejects locations outside the text and non-integer offsets', () => {
    const json = JSON.parse(fixture('bioc.json'))
    json.documents[1].passages[1].annotations[0].locations[0].offset = 500
    const error = corpusError(() => readBiocJson(JSON.stringify(json, null, 2), 'b.json'))
    expect(error.message).toMatch(/^b\.json:\d+: document 3000002: mention offsets 500-508 lie outside/)
    // The line is that of the document's "id".
    expect(JSON.stringify(json, null, 2).split('\n')[error.line! - 1]).toContain('"id": "3000002"')

    const xml = fixture('bioc.xml').replace('<offset>29</offset>', '<offset>x29</offset>')
    expect(corpusError(() => readBiocXml(xml, 'b.xml')).message).toMatch(/^b\.xml:28: passage offset "x29" is not a non-negative integer/)
  })

  it('refuses a passage or sentence offset far beyond the text instead of padding gigabytes (session 40, item 4)', async () => {
    const far = (offset: number) => ({ documents: [{ id: 'd', passages: [{ offset: 0, text: 'Aspirin.' }, { offset, text: 'x' }] }] })
    const message = (offset: number) => `document d, passage 2: offset ${offset} is far beyond the text before it (which ends at 8; with 9 characters of text, gaps of at most ${2 ** 20 + 90} are padded)`
    for (const offset of [500_000_000, 1e15]) {
      expect(corpusError(() => readBiocJson(JSON.stringify(far(offset)), 'o.json')).message).toBe(`o.json:1: ${message(offset)}`)
    }
    // The same in BioC XML, whole and streamed; the passage is named by its place in the file.
    const xml = writeBiocXml([{ id: 'd', text: 'Aspirin. x', passages: [{ type: 'title', offset: 0, length: 8 }, { type: 'abstract', offset: 9, length: 1 }], mentions: [] }])
    const bad = xml.replace('<offset>9</offset>', '<offset>500000000</offset>')
    expect(corpusError(() => readBiocXml(bad, 'o.xml')).message).toMatch(new RegExp(`^o\\.xml:\\d+: ${message(500_000_000).replace(/[()]/g, '\\$&')}$`))
    const dir = mkdtempSync(join(tmpdir(), 'bioc-gap-'))
    try {
      writeFileSync(join(dir, 'o.xml'), bad)
      const stream = await openCorpusStream(join(dir, 'o.xml'), 'bioc-xml')
      await expect(async () => {
        for await (const _ of stream.documents) void _
      }).rejects.toThrow(message(500_000_000))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    // A gap within the bound is padded as before; so is one of a sentence, whose far offset is refused alike.
    expect(readBiocJson(JSON.stringify(far(1000)), 'o.json').documents[0]!.text).toBe('Aspirin.' + ' '.repeat(992) + 'x')
    const sentences = (offset: number) => JSON.stringify({ documents: [{ id: 'd', passages: [{ offset: 0, sentences: [{ offset: 0, text: 'One.' }, { offset, text: 'Two.' }] }] }] })
    expect(readBiocJson(sentences(6), 's.json').documents[0]!.text).toBe('One.  Two.')
    expect(corpusError(() => readBiocJson(sentences(500_000_000), 's.json')).message).toMatch(/^s\.json:1: document d, passage 1, sentence 2: passage-relative offset 500000000 is far beyond the text before it/)
  })

  it('rejects overlapping passages, malformed JSON and non-BioC input', () => {
    const xml = fixture('bioc.xml').replace('<offset>29</offset>', '<offset>10</offset>')
    expect(corpusError(() => readBiocXml(xml, 'b.xml')).message).toMatch(/overlaps the previous passage/)
    expect(corpusError(() => readBiocJson('{\n  "documents": [\n    {,}\n  ]\n}', 'm.json')).message).toMatch(/^m\.json:3: malformed JSON/)
    // Cut short: the line where the file stops.
    expect(corpusError(() => readBiocJson('{\n  "source": "x",\n  "documents":\n', 'cut.json')).message).toMatch(/^cut\.json:3: malformed JSON/)
    expect(corpusError(() => readBiocJson('{"foo": 1}', 'f.json')).message).toMatch(/^f\.json:1: expected a BioC JSON collection/)
    expect(corpusError(() => readBiocXml('<PubmedArticleSet/>', 'p.xml')).message).toMatch(/^p\.xml:1: expected a BioC <collection>/)
  })

  it('reads sentence-level passages and PubTator3-style JSON', () => {
    const json = {
      PubTator3: [
        {
          id: 42,
          passages: [
            {
              infons: { type: 'abstract' },
              offset: 0,
              sentences: [
                { offset: 0, text: 'One tremor.', annotations: [{ id: 'a', infons: { type: 'Disease', identifier: 'D1' }, text: 'tremor', locations: [{ offset: 4, length: 6 }] }] },
                { offset: 12, text: 'Two.' },
              ],
            },
          ],
        },
      ],
    }
    const doc = readBiocJson(JSON.stringify(json), 's.json').documents[0]!
    expect(doc).toEqual({ id: '42', text: 'One tremor. Two.', passages: [{ type: 'abstract', offset: 0, length: 16 }], mentions: [{ start: 4, end: 10, text: 'tremor', type: 'Disease', conceptId: 'D1' }] })
  })
})

describe('BioC writers', () => {
  const docs = readBiocJson(fixture('bioc.json'), 'bioc.json').documents

  it.each([
    ['json', writeBiocJson, readBiocJson],
    ['xml', writeBiocXml, readBiocXml],
  ] as const)('round-trip through BioC %s', (_, write, read) => {
    const out = write(docs, { date: '20250101' })
    expect(read(out, 'out').documents).toEqual(docs)
  })

  it('writes text outside any passage (or with no passages at all) so it reads back the same', () => {
    const doc: CorpusDocument = {
      id: 'x',
      text: 'Sentence one with a tremor.\nSentence two & <three>.',
      passages: [],
      mentions: [{ start: 20, end: 26, text: 'tremor', type: 'Disease', conceptId: 'D1' }],
    }
    for (const [write, read] of [
      [writeBiocJson, readBiocJson],
      [writeBiocXml, readBiocXml],
    ] as const) {
      const back = read(write([doc]), 'x').documents[0]!
      expect(back.text).toBe(doc.text)
      expect(back.mentions).toEqual(doc.mentions)
      expect(back.passages).toEqual([{ type: 'text', offset: 0, length: doc.text.length }])
    }
  })

  it('writes the BioC JSON layout PubTator uses', () => {
    const out = JSON.parse(writeBiocJson(docs.slice(0, 1), { date: '20250101' }))
    expect(out).toMatchObject({ source: 'FastBioNER', date: '20250101', key: 'BioC.key' })
    expect(out.documents[0].passages[0]).toMatchObject({ infons: { type: 'title' }, offset: 0, text: 'Gene X variants in migraine.' })
    expect(out.documents[0].passages[0].annotations[0]).toEqual({ id: '1', infons: { type: 'Gene', identifier: 'NCBI:1' }, text: 'Gene X', locations: [{ offset: 0, length: 6 }] })
  })
})

describe('BioC XML robustness (issue 11, items 6 and 7)', () => {
  it('writes characters XML 1.0 forbids as spaces, with a warning, so other parsers accept the file', () => {
    const text = 'Zorblin\u0001 binds\u001b kelp\uFFFE.'
    const doc: CorpusDocument = { id: 'ctl\u0002', text, passages: [], mentions: [{ start: 9, end: 15, text: ' binds', type: 'Verb\u0003' }] }
    const issues: string[] = []
    const xml = writeBiocXml([doc], { onIssue: (i) => issues.push(`${i.file}: ${i.message}`) })
    expect(xml).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/)
    expect(issues).toEqual(['ctl\u0002: 5 characters that XML 1.0 forbids (first U+0002) written as spaces'])
    const back = readBiocXml(xml, 'out.xml').documents[0]!
    expect(back.text).toBe('Zorblin  binds  kelp .')
    expect(back.mentions[0]).toMatchObject({ start: 9, end: 15, type: 'Verb' })
  })

  it('writes CR as &#13;, so that both readers get the text and its offsets back (session 40, item 2)', async () => {
    const text = 'Line one\r\nAspirin causes ulcer.\r\nLone\rCR.'
    const doc: CorpusDocument = { id: 'cr', text, passages: [], mentions: [{ start: 10, end: 17, text: 'Aspirin', type: 'Chemical' }] }
    const xml = writeBiocXml([doc])
    expect(xml).not.toContain('\r')
    expect(xml.match(/&#13;/g)).toHaveLength(3)
    const dir = mkdtempSync(join(tmpdir(), 'bioc-cr-'))
    try {
      const path = join(dir, 'c.xml')
      writeFileSync(path, xml)
      const streamed: CorpusDocument[] = []
      for await (const d of (await openCorpusStream(path, 'bioc-xml')).documents) streamed.push(d)
      for (const back of [readBiocXml(xml, 'c.xml').documents[0]!, streamed[0]!]) {
        expect(back.text).toBe(text)
        expect(back.mentions).toEqual([{ start: 10, end: 17, text: 'Aspirin', type: 'Chemical' }])
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('reports a truncated file at its last line and column, naming the unclosed elements', () => {
    const whole = writeBiocXml([{ id: '1', text: 'Zorblin binds kelp.', passages: [], mentions: [] }])
    const cut = whole.slice(0, whole.indexOf('binds'))
    const lines = cut.split('\n')
    const error = corpusError(() => readBiocXml(cut, 'trunc.xml'))
    expect(error.message).toBe(
      `trunc.xml:${lines.length}: malformed XML (column ${lines.at(-1)!.length + 1}): the file ends inside <text> (unclosed: <collection>, <document>, <passage>, <text>); it looks truncated`,
    )
  })

  it('gives the column of other XML errors', () => {
    const error = corpusError(() => readBiocXml('<collection>\n<document></passage></document></collection>', 'bad.xml'))
    expect(error.message).toMatch(/^bad\.xml:2: malformed XML \(column 11\): Expected closing tag 'document'/)
  })
})
