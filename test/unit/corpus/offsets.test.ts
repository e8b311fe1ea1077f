// Character offsets on astral-plane text (issue 27, item 13): files count code points (Python and
// most tools) or UTF-16 units (Java, JavaScript); the store keeps UTF-16. Reading detects the unit
// from the mention text, writing uses code points by default; `offsets` forces either.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CorpusDocument } from '@shared/domain'
import { openCorpusStream, parseCorpusText, readBrat, writeBrat, writeCorpus } from '@core/corpus'
import { run as convertCmd } from '../../../src/cli/commands/convert'
import { capture } from '../cli/capture'

// "𝛼" (U+1D6FC) is one code point and two UTF-16 units: every offset after it differs by one.
const TITLE = '𝛼-Synuclein in mice.'
const ABSTRACT = 'It causes Parkinson disease.'
const TEXT = `${TITLE} ${ABSTRACT}`
const U16 = TEXT.indexOf('Parkinson disease') // 32
const CP = [...TEXT.slice(0, U16)].length // 31
const LEN = 'Parkinson disease'.length

const DOC: CorpusDocument = {
  id: '9',
  text: TEXT,
  passages: [
    { type: 'title', offset: 0, length: TITLE.length },
    { type: 'abstract', offset: TITLE.length + 1, length: ABSTRACT.length },
  ],
  mentions: [
    { start: 0, end: 12, text: '𝛼-Synuclein', type: 'Gene' },
    { start: U16, end: U16 + LEN, text: 'Parkinson disease', type: 'Disease' },
  ],
}

const pubtator = (at: number, alphaEnd: number) => `9|t|${TITLE}\n9|a|${ABSTRACT}\n9\t0\t${alphaEnd}\t𝛼-Synuclein\tGene\n9\t${at}\t${at + LEN}\tParkinson disease\tDisease\n\n`

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'offsets-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('offsets after an astral-plane character', () => {
  it('sanity: the two units differ by one here', () => {
    expect(U16 - CP).toBe(1)
  })

  it('PubTator: code points and UTF-16 offsets both read to the same mentions; written in code points', () => {
    for (const file of [pubtator(CP, 11), pubtator(U16, 12)]) {
      const r = parseCorpusText(file, 'x.pubtator')
      expect(r.documents[0]!.mentions).toEqual(DOC.mentions)
    }
    const out = writeCorpus([DOC], 'pubtator').files[0]!.content
    expect(out).toBe(pubtator(CP, 11))
    expect(writeCorpus([DOC], 'pubtator', { offsets: 'utf16' }).files[0]!.content).toBe(pubtator(U16, 12))
  })

  it('PubTator streamed reads the same', async () => {
    const path = join(dir, 'cp.pubtator')
    writeFileSync(path, pubtator(CP, 11))
    const s = await openCorpusStream(path)
    const docs: CorpusDocument[] = []
    for await (const d of s.documents) docs.push(d)
    expect(docs[0]!.mentions).toEqual(DOC.mentions)
  })

  it('a forced unit that does not fit is an error naming the file and line', () => {
    expect(() => parseCorpusText(pubtator(CP, 11), 'x.pubtator', undefined, { offsets: 'utf16' })).toThrow(/x\.pubtator:3: mention text does not match/)
  })

  it('brat: both units read; written in code points', () => {
    const { txt, ann } = writeBrat(DOC)
    expect(ann).toBe(`T1\tGene 0 11\t𝛼-Synuclein\nT2\tDisease ${CP} ${CP + LEN}\tParkinson disease\n`)
    expect(readBrat(txt, ann, 'x.ann').documents[0]!.mentions).toEqual(DOC.mentions)
    const u16 = writeBrat(DOC, { offsets: 'utf16' }).ann
    expect(u16).toContain(`Disease ${U16} ${U16 + LEN}`)
    expect(readBrat(txt, u16, 'x.ann').documents[0]!.mentions).toEqual(DOC.mentions)
  })

  it.each(['bioc-json', 'bioc-xml'] as const)('%s: passage and annotation offsets in code points, read back in either unit', (format) => {
    const cp = writeCorpus([DOC], format).files[0]!.content
    const u16 = writeCorpus([DOC], format, { offsets: 'utf16' }).files[0]!.content
    expect(cp).not.toBe(u16)
    const name = format === 'bioc-json' ? 'x.json' : 'x.xml'
    if (format === 'bioc-json') {
      const j = JSON.parse(cp)
      expect(j.documents[0].passages[1].offset).toBe([...TITLE].length + 1)
      expect(j.documents[0].passages[1].annotations[0].locations[0]).toEqual({ offset: CP, length: LEN })
    } else {
      expect(cp).toContain(`<location offset="${CP}" length="${LEN}"`)
    }
    for (const file of [cp, u16]) {
      const d = parseCorpusText(file, name).documents[0]!
      expect(d.text).toBe(TEXT)
      expect(d.mentions.map(({ start, end, text }) => ({ start, end, text }))).toEqual(DOC.mentions.map(({ start, end, text }) => ({ start, end, text })))
    }
  })

  it('convert: a UTF-16 file becomes code points by default; --offsets utf16 writes UTF-16', async () => {
    const input = join(dir, 'u16.pubtator')
    writeFileSync(input, pubtator(U16, 12))
    const cp = join(dir, 'cp.pubtator') // written by the test above: replaced
    expect((await capture(() => convertCmd(['--in', input, '--to', 'pubtator', '--out', cp, '--force', '-q']))).code).toBe(0)
    expect(readFileSync(cp, 'utf8')).toBe(pubtator(CP, 11))
    const back = join(dir, 'back.pubtator')
    expect((await capture(() => convertCmd(['--in', cp, '--to', 'pubtator', '--out', back, '--offsets', 'utf16', '-q']))).code).toBe(0)
    expect(readFileSync(back, 'utf8')).toBe(pubtator(U16, 12))
    const bad = await capture(() => convertCmd(['--in', input, '--to', 'pubtator', '--out', join(dir, 'x.pubtator'), '--offsets', 'bytes']))
    expect(bad.code).toBe(2)
    expect(bad.err).toContain("--offsets must be one of codepoints, utf16, got 'bytes'")
  })
})
