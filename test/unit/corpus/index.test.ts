import { mkdtempSync, writeFileSync, copyFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CorpusError, parseCorpusText, readCorpusBuffer, readCorpusFile, writeCorpus } from '@core/corpus'
import type { CorpusDocument } from '@shared/domain'
import { corpusError, fixture, fixturePath } from './helpers'

const bytes = (s: string | number[]): Buffer => (typeof s === 'string' ? Buffer.from(s, 'utf8') : Buffer.from(s))

describe('readCorpusBuffer', () => {
  it('detects the format and strips a BOM', () => {
    const result = readCorpusBuffer(bytes('\uFEFF' + fixture('sample.pubtator')), 'sample.pubtator')
    expect(result.format).toBe('pubtator')
    expect(result.documents[0]!.id).toBe('1000001')
  })

  it('rejects empty and whitespace-only files', () => {
    expect(corpusError(() => readCorpusBuffer(Buffer.alloc(0), 'e.pubtator')).message).toBe('e.pubtator:1: the file is empty')
    expect(corpusError(() => readCorpusBuffer(bytes('\n \n'), 'e.tsv')).message).toBe('e.tsv:1: the file is empty')
  })

  it('rejects binary files, naming the line of the first NUL byte', () => {
    const error = corpusError(() => readCorpusBuffer(bytes('1|t|A\n1|a|B\n\u0000\u0001'), 'bin.pubtator'))
    expect(error.message).toMatch(/^bin\.pubtator:3: the file contains a NUL byte at byte 12/)
    const utf16 = Buffer.from('\uFEFF1|t|A', 'utf16le')
    expect(corpusError(() => readCorpusBuffer(utf16, 'u.pubtator')).message).toMatch(/UTF-16/)
  })

  it('rejects invalid UTF-8, naming the line of the first bad byte', () => {
    const error = corpusError(() => readCorpusBuffer(Buffer.concat([bytes('1|t|Caf\u00e9\n1|a|ok\nbad '), Buffer.from([0xff]), bytes('\n')]), 'l.pubtator'))
    expect(error.message).toBe('l.pubtator:3: invalid UTF-8 at byte 21; save the file as UTF-8')
    // Past the first 64 KiB block, and a multi-byte sequence cut short at the end of the file.
    const big = Buffer.concat([bytes('a\tO\n'.repeat(30_000)), Buffer.from([0xe2, 0x82])])
    expect(corpusError(() => readCorpusBuffer(big, 'big.tsv')).message).toBe('big.tsv:30001: invalid UTF-8 at byte 120000; save the file as UTF-8')
    const split = Buffer.concat([bytes('x'.repeat(65_535) + '\n'), Buffer.from([0xe2, 0x28, 0xa1])])
    expect(corpusError(() => readCorpusBuffer(split, 's.txt')).message).toBe('s.txt:2: invalid UTF-8 at byte 65536; save the file as UTF-8')
  })

  it('rejects files over the size limit with a clear message', () => {
    const error = corpusError(() => readCorpusBuffer(bytes('x'.repeat(3 * 1024 * 1024)), 'big.txt', undefined, { maxBytes: 2 * 1024 * 1024 }))
    expect(error.message).toBe('big.txt: the file is 3 MiB, over the 2 MiB limit; split it or raise the limit (maxBytes, --max-size)')
  })

  it('passes the CoNLL grouping option through', () => {
    const content = Array.from({ length: 6 }, (_, i) => `t${i}\tO\n`).join('\n')
    expect(readCorpusBuffer(bytes(content), 'g.tsv', 'conll', { sentencesPerDocument: 2 }).documents).toHaveLength(3)
  })
})

describe('parseCorpusText', () => {
  it('reads UI content in a given format, and brat with its companion', () => {
    expect(parseCorpusText('Pasted text.', 'pasted', 'text').documents[0]!.text).toBe('Pasted text.')
    const viaAnn = parseCorpusText(fixture('brat/report.ann'), 'report.ann', 'brat', { companion: fixture('brat/report.txt') })
    const viaTxt = parseCorpusText(fixture('brat/report.txt'), 'report.txt', 'brat', { companion: bytes(fixture('brat/report.ann')) })
    expect(viaAnn.documents).toEqual(viaTxt.documents)
    expect(viaAnn.documents[0]!.mentions).toHaveLength(4)
    expect(corpusError(() => parseCorpusText('T1\tX 0 1\ta', 'x.ann')).message).toMatch(/needs both the \.txt and the \.ann/)
  })
})

describe('readCorpusFile', () => {
  it('reads a file, detecting its format', async () => {
    const result = await readCorpusFile(fixturePath('bioc.json'))
    expect(result.format).toBe('bioc-json')
    expect(result.documents).toHaveLength(2)
  })

  it('reads brat pairs from either half, and treats a .txt with a sibling .ann as brat', async () => {
    const fromAnn = await readCorpusFile(fixturePath('brat/report.ann'))
    const fromTxt = await readCorpusFile(fixturePath('brat/report.txt'))
    expect(fromAnn.format).toBe('brat')
    expect(fromTxt.format).toBe('brat')
    expect(fromTxt.documents).toEqual(fromAnn.documents)
    // Asked for as text, it is text.
    expect((await readCorpusFile(fixturePath('brat/report.txt'), 'text')).documents[0]!.mentions).toEqual([])
  })

  it('names the missing half of a brat pair, a missing file, and an oversized file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'corpus-'))
    copyFileSync(fixturePath('brat/report.ann'), join(dir, 'lonely.ann'))
    await expect(readCorpusFile(join(dir, 'lonely.ann'))).rejects.toThrow(/lonely\.ann: brat annotation file has no matching lonely\.txt/)
    await expect(readCorpusFile(join(dir, 'nope.pubtator'))).rejects.toThrow(CorpusError)
    await expect(readCorpusFile(join(dir, 'nope.pubtator'))).rejects.toThrow(/cannot read the file: no such file or folder \(ENOENT\)/)
    writeFileSync(join(dir, 'big.pubtator'), 'x'.repeat(2048))
    await expect(readCorpusFile(join(dir, 'big.pubtator'), undefined, { maxBytes: 1024 })).rejects.toThrow(/big\.pubtator: the file is 2 KiB, over the 1 KiB limit/)
  })
})

describe('writeCorpus', () => {
  const docs: CorpusDocument[] = [
    { id: 'a/b', text: 'One tremor.', passages: [], mentions: [{ start: 4, end: 10, text: 'tremor', type: 'Disease' }] },
    { id: 'a:b', text: 'Two.', passages: [], mentions: [] },
  ]

  it('writes one file for single-file formats', () => {
    expect(writeCorpus(docs, 'pubtator', { baseName: 'out' }).files.map((f) => f.name)).toEqual(['out.pubtator'])
    expect(writeCorpus(docs, 'conll').files.map((f) => f.name)).toEqual(['corpus.conll'])
    expect(writeCorpus(docs, 'bioc-json').files.map((f) => f.name)).toEqual(['corpus.json'])
    expect(writeCorpus(docs, 'bioc-xml').files.map((f) => f.name)).toEqual(['corpus.xml'])
  })

  it('writes a .txt/.ann pair per document for brat, with safe, unique names', () => {
    const { files } = writeCorpus(docs, 'brat')
    expect(files.map((f) => f.name)).toEqual(['a_b.txt', 'a_b.ann', 'a_b-2.txt', 'a_b-2.ann'])
    expect(files[1]!.content).toBe('T1\tDisease 4 10\ttremor\n')
    expect(writeCorpus(docs, 'text').files.map((f) => [f.name, f.content])).toEqual([
      ['a_b.txt', 'One tremor.\n'],
      ['a_b-2.txt', 'Two.\n'],
    ])
  })

  it('refuses to write PubMed XML', () => {
    expect(() => writeCorpus(docs, 'pubmed-xml')).toThrow(RangeError)
  })
})
