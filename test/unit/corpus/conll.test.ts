import { parseCorpusText, readConll, tokenize, writeConll, writeCorpus } from '@core/corpus'
import type { CorpusDocument, CorpusIssue } from '@shared/domain'
import { corpusError, expectConsistent, fixture } from './helpers'

/** n sentences "wN is a tremor ." with the tremor tagged as Disease. */
function sentences(n: number): string {
  return Array.from({ length: n }, (_, i) => `w${i}\tO\nis\tO\na\tO\ntremor\tB-Disease\n.\tO\n`).join('\n')
}

describe('readConll', () => {
  it('reads -DOCSTART- documents: text, tokens and IOB2 mentions', () => {
    const { documents, issues } = readConll(fixture('sample.conll'), 'dir/sample.conll')
    expect(issues).toEqual([])
    expectConsistent(documents)
    expect(documents.map((d) => d.id)).toEqual(['sample-1', 'sample-2'])
    const [one, two] = documents as [CorpusDocument, CorpusDocument]
    expect(one.text).toBe('Mutations in the ABC1 gene cause cystic renal dysplasia .\nThe PQR and XYZ2 kinases bind .')
    expect(one.passages).toEqual([])
    expect(one.tokens).toHaveLength(17)
    expect(one.tokens![3]).toEqual([17, 21])
    expect(one.mentions.map((m) => [m.text, m.type])).toEqual([
      ['ABC1', 'Gene'],
      ['cystic renal dysplasia', 'Disease'],
      ['PQR', 'Gene'],
      ['XYZ2 kinases', 'Gene'],
    ])
    // conlleval: an I- after O starts an entity; B-X B-X are two entities.
    expect(two.mentions.map((m) => m.text)).toEqual(['ataxia', 'tremor', 'tremor'])
    expect(two.mentions[1]!.start).not.toBe(two.mentions[2]!.start)
  })

  it('reads space-separated CoNLL-2003 style lines (token first, tag last) and IOB1 tags', () => {
    const { documents } = readConll(fixture('spaces.conll'), 'spaces.conll')
    expect(documents).toHaveLength(1)
    expect(documents[0]!.text).toBe('Aspirin reduced fever in rats .')
    expect(documents[0]!.mentions.map((m) => [m.text, m.type])).toEqual([
      ['Aspirin', 'Chemical'],
      ['fever', 'Disease'],
    ])
  })

  it('groups sentences into documents of N (default 10) when there is no -DOCSTART-', () => {
    const content = sentences(25)
    const byDefault = readConll(content, 'train.tsv').documents
    expect(byDefault.map((d) => d.id)).toEqual(['train-1', 'train-2', 'train-3'])
    expect(byDefault.map((d) => d.text.split('\n').length)).toEqual([10, 10, 5])
    expect(byDefault[2]!.mentions).toHaveLength(5)
    const byFour = readConll(content, 'train.tsv', { sentencesPerDocument: 4 }).documents
    expect(byFour.map((d) => d.text.split('\n').length)).toEqual([4, 4, 4, 4, 4, 4, 1])
    expect(() => readConll(content, 'train.tsv', { sentencesPerDocument: 0 })).toThrow(RangeError)
  })

  it('reads BIOES and BILOU tags', () => {
    const content = 'a\tS-X\nb\tB-Y\nc\tE-Y\nd\tU-Z\ne\tB-W\nf\tL-W\ng\tO\n'
    const doc = readConll(content, 'b.tsv').documents[0]!
    expect(doc.mentions.map((m) => [m.text, m.type])).toEqual([
      ['a', 'X'],
      ['b c', 'Y'],
      ['d', 'Z'],
      ['e f', 'W'],
    ])
  })

  it('warns on unknown and untyped tags, and reads CRLF files', () => {
    const { documents, issues } = readConll('a\tB\nb\tI\nc\tMISC\nd\tB-X\r\n', 'w.tsv')
    expect(documents[0]!.mentions.map((m) => [m.text, m.type])).toEqual([
      ['a b', 'Entity'],
      ['d', 'X'],
    ])
    expect(issues.map((i) => i.line)).toEqual([1, 3])
    expect(issues[1]!.message).toContain('unknown tag "MISC"')
  })

  const bad: Array<[string, string, number, RegExp]> = [
    ['a tag without a type', 'a\tO\nb\tB-\n', 2, /malformed tag "B-": no entity type/],
    ['a missing tag column', 'a\tO\nlonely\n', 2, /missing tag column/],
    ['an empty token', 'a\tO\n\tB-X\n', 2, /empty token/],
    ['no tokens at all', '-DOCSTART-\tO\n\n', 1, /no tokens found/],
    // PubTator forced through the CoNLL reader: no line ends in a tag (issue 11, item 11).
    ['a file in which no tag is valid', '-DOCSTART-\tO\n\n42|t|Zorblin binds kelp\n42|a|It is grey\n42\t0\t7\tZorblin\tGene\tG1\n', 3, /no line ends in an IOB tag .* the first one ends in "kelp": is this really CoNLL\?/],
  ]
  it.each(bad)('rejects %s, naming file and line', (_, content, line, message) => {
    const error = corpusError(() => readConll(content, 'bad.tsv'))
    expect(error.message).toMatch(new RegExp(`^bad\\.tsv:${line}: `))
    expect(error.message).toMatch(message)
  })
})

describe('tokenize', () => {
  it('splits punctuation into tokens of its own', () => {
    const text = 'IL-2 (p<0.05) in β-cells.'
    expect(tokenize(text).map(([s, e]) => text.slice(s, e))).toEqual(['IL', '-', '2', '(', 'p', '<', '0', '.', '05', ')', 'in', 'β', '-', 'cells', '.'])
  })
})

describe('writeConll', () => {
  it('keeps the sentence breaks that line breaks carry, without splitting at ". X" (CoNLL → BioC → CoNLL)', () => {
    const content = '-DOCSTART-\tO\n\nDr\tO\n.\tO\nKniest\tB-Person\nsaw\tO\nit\tO\n.\tO\n\nThen\tO\nQ\tO\n.\tO\nRose\tO\nleft\tO\n\n'
    const viaBioc = parseCorpusText(writeCorpus(readConll(content, 'a.tsv').documents, 'bioc-xml').files[0]!.content, 'a.xml').documents
    expect(viaBioc[0]!.tokens).toBeUndefined()
    const back = writeConll(viaBioc)
    expect(back.split('\n\n').filter((s) => s.trim() !== '' && !s.startsWith('-DOCSTART-'))).toHaveLength(2)
    expect(back).toBe(content)
  })

  it('writes IOB2 from the tokens of a CoNLL document, reproducing the file', () => {
    const content = fixture('sample.conll')
    const docs = readConll(content, 'sample.conll').documents
    // The input used an I- after O (IOB1 style); IOB2 output starts every entity with B-.
    expect(writeConll(docs)).toBe(content.replace('ataxia\tI-Disease', 'ataxia\tB-Disease') + '\n') // every sentence ends with a blank line
  })

  it('can leave out -DOCSTART- lines', () => {
    const content = sentences(3)
    const docs = readConll(content, 't.tsv').documents
    expect(writeConll(docs, { docStart: false })).toBe(content + '\n')
  })

  it('tokenises untokenised text, breaks sentences, and puts every mention boundary on a token boundary', () => {
    const text = 'BRCA1-associated cancers were seen. Most had p53mutations.\nNext line here.'
    const doc: CorpusDocument = {
      id: 'd',
      text,
      passages: [],
      mentions: [
        { start: 0, end: 5, text: 'BRCA1', type: 'Gene' },
        { start: 17, end: 24, text: 'cancers', type: 'Disease' },
        { start: 45, end: 48, text: 'p53', type: 'Gene' },
      ],
    }
    const out = writeConll([doc])
    expect(out).toBe(
      [
        '-DOCSTART-\tO',
        '',
        'BRCA1\tB-Gene',
        '-\tO',
        'associated\tO',
        'cancers\tB-Disease',
        'were\tO',
        'seen\tO',
        '.\tO',
        '',
        'Most\tO',
        'had\tO',
        'p53\tB-Gene',
        'mutations\tO',
        '.\tO',
        '',
        'Next\tO',
        'line\tO',
        'here\tO',
        '.\tO',
        '',
        '',
      ].join('\n'),
    )
    const back = readConll(out, 'd.conll').documents[0]!
    expect(back.mentions.map((m) => [m.text, m.type])).toEqual(doc.mentions.map((m) => [m.text, m.type]))
  })

  it('never breaks a sentence inside a mention, and reports mentions it cannot write', () => {
    const text = 'Seen in St. Louis encephalitis cases. Also here.'
    const doc: CorpusDocument = {
      id: 'n',
      text,
      passages: [],
      mentions: [
        { start: 8, end: 30, text: 'St. Louis encephalitis', type: 'Disease' },
        { start: 18, end: 30, text: 'encephalitis', type: 'Disease' },
      ],
    }
    const issues: CorpusIssue[] = []
    const out = writeConll([doc], { onIssue: (i) => issues.push(i), outputName: 'out.conll' })
    const back = readConll(out, 'n.conll').documents[0]!
    expect(back.text.split('\n')).toHaveLength(2)
    expect(back.mentions.map((m) => m.text)).toEqual(['St . Louis encephalitis'])
    expect(issues).toHaveLength(1)
    expect(issues[0]!.message).toContain('overlaps')
    // Printed as "out.conll: document n: …": the document id is not where a line number goes.
    expect(issues[0]!.file).toBe('out.conll')
    expect(issues[0]!.line).toBeUndefined()
    expect(issues[0]!.message).toMatch(/^document n: /)
  })
})
