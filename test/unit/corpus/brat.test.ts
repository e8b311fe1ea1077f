import { readBrat, writeBrat } from '@core/corpus'
import type { CorpusDocument } from '@shared/domain'
import { corpusError, expectConsistent, fixture } from './helpers'

const txt = fixture('brat/report.txt')
const ann = fixture('brat/report.ann')

describe('readBrat', () => {
  it('reads T lines as mentions, N lines as concept ids, and skips R, A and # lines', () => {
    const { documents, issues } = readBrat(txt, ann, 'some/dir/report.ann')
    expectConsistent(documents)
    expect(documents).toHaveLength(1)
    const doc = documents[0]!
    expect(doc.id).toBe('report')
    expect(doc.text).toBe(txt)
    expect(doc.mentions.map((m) => [m.text, m.type, m.conceptId])).toEqual([
      ['acute liver failure', 'Disease', 'MeSH:D017114'],
      ['drug', 'Chemical', undefined],
      ['renal\nfailure', 'Disease', undefined],
      ['anemia', 'Disease', 'MeSH:D000740'],
    ])
    // T3 is discontinuous ("renal" … "failure" across a line break): outer span, with a warning.
    expect(issues).toHaveLength(1)
    expect(issues[0]).toMatchObject({ severity: 'warning', line: 3 })
    expect(issues[0]!.message).toContain('outer span')
  })

  it('falls back to LF line ends when the offsets only fit that way', () => {
    const { documents, issues } = readBrat(txt.replace(/\n/g, '\r\n'), ann, 'report.ann')
    expect(documents[0]!.text).toBe(txt)
    expect(issues[0]!.message).toContain('CRLF')
  })

  const bad: Array<[string, string, number, RegExp]> = [
    ['a truncated T line', 'T1\tDisease 13 32\n', 1, /truncated/],
    ['non-integer offsets', 'T1\tDisease 13 3x\tacute\n', 1, /not two non-negative integers/],
    ['offsets outside the text', 'T1\tDisease 13 3000\tacute\n', 1, /lie outside the document text/],
    ['a text mismatch', '#1\tnote\nT1\tDisease 13 32\tacute kidney failure\n', 2, /expected "acute kidney failure", found "acute liver failure"/],
  ]
  it.each(bad)('rejects %s, naming the .ann file and line', (_, content, line, message) => {
    const error = corpusError(() => readBrat(txt, content, 'report.ann'))
    expect(error.message).toMatch(new RegExp(`^report\\.ann:${line}: `))
    expect(error.message).toMatch(message)
  })
})

describe('writeBrat', () => {
  it('writes T and N lines that read back to the same mentions', () => {
    const doc = readBrat(txt, ann, 'report.ann').documents[0]!
    const out = writeBrat(doc)
    expect(out.txt).toBe(txt)
    expect(out.ann).toBe(
      [
        'T1\tDisease 13 32\tacute liver failure',
        'T2\tChemical 39 43\tdrug',
        'T3\tDisease 70 75;76 83\trenal failure',
        'T4\tDisease 93 99\tanemia',
        'N1\tReference T1 MeSH:D017114\tacute liver failure',
        'N2\tReference T4 MeSH:D000740\tanemia',
        '',
      ].join('\n'),
    )
    expect(readBrat(out.txt, out.ann, 'report.ann').documents[0]).toEqual(doc)
  })

  it('writes an empty .ann for a document without mentions', () => {
    const doc: CorpusDocument = { id: 'e', text: 'Nothing here.', passages: [], mentions: [] }
    expect(writeBrat(doc)).toEqual({ txt: 'Nothing here.', ann: '' })
  })
})
