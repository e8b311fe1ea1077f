import { parseCorpusText, readBrat, readCorpusBuffer, writeCorpus } from '@core/corpus'
import type { CorpusDocument, CorpusFormat } from '@shared/domain'
import { expectConsistent, fixture } from './helpers'

function roundTrip(docs: CorpusDocument[], format: CorpusFormat, fileName: string): CorpusDocument[] {
  const { files } = writeCorpus(docs, format)
  if (format === 'brat') {
    const out: CorpusDocument[] = []
    for (let i = 0; i < files.length; i += 2) out.push(...readBrat(files[i]!.content, files[i + 1]!.content, fileName).documents)
    return out
  }
  expect(files).toHaveLength(1)
  return parseCorpusText(files[0]!.content, fileName, format).documents
}

/** Mentions compared across tokenisation: whitespace inside the covered text does not count. */
function mentionKeys(docs: CorpusDocument[]): string[][] {
  return docs.map((d) => d.mentions.map((m) => `${m.type}:${m.text.replace(/\s+/g, '')}`))
}

const conllNoDocstart = Array.from({ length: 23 }, (_, i) => `S${i}\tO\nhas\tO\nIL\tB-Gene\n-\tI-Gene\n2\tI-Gene\n.\tO\n`).join('\n')

describe('same-format round trips reproduce every document and mention', () => {
  it.each([
    ['pubtator', 'sample.pubtator', fixture('sample.pubtator')],
    ['conll', 'sample.conll', fixture('sample.conll')],
    ['conll', 'nodocstart.tsv', conllNoDocstart],
    ['conll', 'spaces.conll', fixture('spaces.conll')],
    ['bioc-json', 'bioc.json', fixture('bioc.json')],
    ['bioc-xml', 'bioc.xml', fixture('bioc.xml')],
  ] as const)('%s (%s)', (format, name, content) => {
    const docs = readCorpusBuffer(Buffer.from(content), name, format).documents
    expect(docs.length).toBeGreaterThan(0)
    const again = roundTrip(docs, format, name)
    expectConsistent(again)
    expect(again).toEqual(docs)
  })

  it('brat', () => {
    const docs = readBrat(fixture('brat/report.txt'), fixture('brat/report.ann'), 'report.ann').documents
    expect(roundTrip(docs, 'brat', 'report.ann')).toEqual(docs)
  })
})

describe('cross-format conversions keep the mentions', () => {
  const pubtator = readCorpusBuffer(Buffer.from(fixture('sample.pubtator')), 'sample.pubtator', 'pubtator').documents

  it('pubtator → conll → same mentions (types and covered words)', () => {
    const viaConll = roundTrip(pubtator, 'conll', 'converted.conll')
    expectConsistent(viaConll)
    expect(viaConll).toHaveLength(pubtator.length)
    expect(mentionKeys(viaConll)).toEqual(mentionKeys(pubtator))
    // Tokens now exist and every mention starts and ends on one.
    for (const d of viaConll) {
      const starts = new Set(d.tokens!.map((t) => t[0]))
      const ends = new Set(d.tokens!.map((t) => t[1]))
      expect(d.mentions.every((m) => starts.has(m.start) && ends.has(m.end))).toBe(true)
    }
  })

  it.each(['bioc-json', 'bioc-xml', 'brat'] as const)('pubtator → %s → exact same text, offsets, types and concept ids', (format) => {
    const again = roundTrip(pubtator, format, format === 'brat' ? 'x.ann' : 'x')
    expect(again.map((d) => d.text)).toEqual(pubtator.map((d) => d.text))
    expect(again.map((d) => d.mentions)).toEqual(pubtator.map((d) => d.mentions))
  })

  it('pubtator → bioc-json → pubtator is the identity', () => {
    const bioc = roundTrip(pubtator, 'bioc-json', 'x.json')
    expect(roundTrip(bioc, 'pubtator', 'x.pubtator')).toEqual(pubtator)
  })

  it('conll → pubtator → conll keeps mentions; conll → bioc-json keeps text and offsets', () => {
    const conll = readCorpusBuffer(Buffer.from(fixture('sample.conll')), 'sample.conll', 'conll').documents
    const back = roundTrip(roundTrip(conll, 'pubtator', 'x.pubtator'), 'conll', 'x.conll')
    expect(mentionKeys(back)).toEqual(mentionKeys(conll))
    const bioc = roundTrip(conll, 'bioc-json', 'x.json')
    expect(bioc.map((d) => [d.text, d.mentions])).toEqual(conll.map((d) => [d.text, d.mentions]))
  })
})
