// Streaming reads and writes (issue 11, item 15): same documents, issues and bytes as the
// whole-file functions, across chunk boundaries, with the same errors.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CorpusDocument } from '@shared/domain'
import { corpusChunks, CorpusError, openCorpusStream, readCorpusFile, writeCorpus } from '@core/corpus'
import { textLines } from '@core/corpus/stream'
import { fixture, fixturePath } from './helpers'

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'stream-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const x of items) out.push(x)
  return out
}

async function* each(docs: CorpusDocument[]): AsyncGenerator<CorpusDocument> {
  yield* docs
}

/** n invented documents, ~300 characters each, with mentions. */
function synthetic(n: number): CorpusDocument[] {
  return Array.from({ length: n }, (_, i) => {
    const title = `Zorblin-${i} binds kelp in grey fever.`
    const text = `${title} The patients (n = ${i}) had grey fever & "kelp" <b>rash</b>; none recovered. ` + 'Most cells stayed quiet. '.repeat(8).trim()
    return {
      id: String(100000 + i),
      text,
      passages: [
        { type: 'title', offset: 0, length: title.length },
        { type: 'abstract', offset: title.length + 1, length: text.length - title.length - 1 },
      ],
      mentions: [
        { start: 0, end: `Zorblin-${i}`.length, text: `Zorblin-${i}`, type: 'Gene' },
        { start: title.indexOf('grey'), end: title.indexOf('grey') + 10, text: 'grey fever', type: 'Disease', conceptId: 'D1' },
      ],
    }
  })
}

describe('openCorpusStream', () => {
  it.each([
    ['sample.pubtator', 'pubtator'],
    ['sample.conll', 'conll'],
    ['bioc.xml', 'bioc-xml'],
    ['pubmed.xml', 'pubmed-xml'],
    ['bioc.json', 'bioc-json'],
  ])('%s: the same documents and warnings as readCorpusFile', async (name, format) => {
    const whole = await readCorpusFile(fixturePath(name))
    const stream = await openCorpusStream(fixturePath(name))
    expect(stream.format).toBe(format)
    expect(await collect(stream.documents)).toEqual(whole.documents)
    expect(stream.issues).toEqual(whole.issues)
  })

  it.each(['pubtator', 'conll', 'bioc-xml'] as const)('%s over many 1 MiB chunks: the same as the whole-file reader', async (format) => {
    const docs = synthetic(4000) // ~1.6 MB as PubTator, ~4 MB as BioC XML
    const path = join(dir, `big.${format === 'bioc-xml' ? 'xml' : format === 'conll' ? 'tsv' : 'pubtator'}`)
    writeFileSync(path, writeCorpus(docs, format).files[0]!.content)
    const whole = await readCorpusFile(path)
    const streamed = await collect((await openCorpusStream(path)).documents)
    expect(streamed.length).toBe(whole.documents.length)
    expect(streamed).toEqual(whole.documents)
  }, 120_000)

  it.each([
    ['sample.pubtator'],
    ['sample.conll'],
    ['bioc.xml'],
    ['pubmed.xml'],
  ])('%s read 7 bytes at a time: every chunk boundary (inside tags, lines, characters) gives the same documents', async (name) => {
    const whole = await readCorpusFile(fixturePath(name))
    const stream = await openCorpusStream(fixturePath(name), undefined, { chunkBytes: 7 })
    expect(await collect(stream.documents)).toEqual(whole.documents)
    expect(stream.issues).toEqual(whole.issues)
  })

  it('throws the whole-file reader’s error, naming file and line, and hands out nothing after it', async () => {
    const path = join(dir, 'bad.pubtator')
    writeFileSync(path, fixture('sample.pubtator').replace('\t106\t112\t', '\t106\t999\t'))
    const wholeError = await readCorpusFile(path).catch((e: unknown) => e)
    const stream = await openCorpusStream(path)
    const seen: string[] = []
    const error = await (async () => {
      for await (const d of stream.documents) seen.push(d.id)
    })().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CorpusError)
    expect((error as CorpusError).message).toBe((wholeError as CorpusError).message)
    expect(seen.length).toBeLessThan(3)
  })

  it('reads entities as the whole-file reader does: HTML names expanded, a file’s own or unknown ones refused alike', async () => {
    const bioc = (doctype: string, text: string) =>
      `<?xml version="1.0"?>\n${doctype}<collection><source/><date/><key/><document><id>1</id><passage><offset>0</offset>\n<text>${text}</text></passage></document></collection>\n`
    const read = async (name: string, content: string) => {
      const path = join(dir, name)
      writeFileSync(path, content)
      const whole = await readCorpusFile(path).then((r) => r.documents[0]!.text, (e: unknown) => e as CorpusError)
      const streamed = await collect((await openCorpusStream(path)).documents).then((d) => d[0]!.text, (e: unknown) => e as CorpusError)
      return { whole, streamed }
    }
    // Known names and character references: the same text (before, &eacute; stayed as it was written).
    const known = await read('known.xml', bioc('', 'caf&eacute; &amp; &#233;&#xE9; &lt;b&gt;'))
    expect(known).toEqual({ whole: 'café & éé <b>', streamed: 'café & éé <b>' })
    // A name no reader knows: refused by both, on its line.
    const unknown = await read('unknown.xml', bioc('', 'a &zorg; b'))
    expect(unknown.whole).toBeInstanceOf(CorpusError)
    expect(unknown.streamed).toBeInstanceOf(CorpusError)
    for (const e of [unknown.whole, unknown.streamed] as CorpusError[]) expect(e.message).toMatch(/unknown\.xml:3: malformed XML \(column \d+\): &zorg; is not a known entity/)
    // The file's own entities: refused by both (the whole-file parser used to expand them, sax refused them).
    const own = await read('own.xml', bioc('<!DOCTYPE collection [<!ENTITY x "Aspirin">]>\n', 'A &x; B'))
    for (const e of [own.whole, own.streamed] as CorpusError[]) {
      expect(e).toBeInstanceOf(CorpusError)
      expect(e.message).toMatch(/own\.xml:2: malformed XML \(column \d+\): the DOCTYPE declares the entity x/)
    }
    // Inside CDATA, an ampersand is text.
    expect(await read('cdata.xml', bioc('', '<![CDATA[a &zorg; b]]>'))).toEqual({ whole: 'a &zorg; b', streamed: 'a &zorg; b' })
  })

  it('reports a truncated BioC XML file at its end, with the unclosed elements', async () => {
    const path = join(dir, 'trunc.xml')
    const xml = writeCorpus(synthetic(3), 'bioc-xml').files[0]!.content
    const cut = xml.slice(0, xml.lastIndexOf('<passage>') + 12)
    writeFileSync(path, cut)
    const error = await collect((await openCorpusStream(path)).documents).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CorpusError)
    expect((error as CorpusError).message).toMatch(new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${cut.split('\n').length}: malformed XML \\(column \\d+\\): the file ends inside <passage> \\(unclosed: <collection>, <document>, <passage>\\); it looks truncated$`))
  })
})

describe('textLines', () => {
  it('numbers the lines as split gives them, across chunk boundaries and through gzip', async () => {
    const text = 'alpha beta\r\n\ngamma é\ndelta\n'
    const path = join(dir, 'lines.txt')
    writeFileSync(path, text)
    const gz = join(dir, 'lines.txt.gz')
    writeFileSync(gz, gzipSync(Buffer.from(text)))
    const expected = text.split('\n').map((line, i) => ({ line, lineNo: i + 1 }))
    expect(await collect(textLines(path, { chunkBytes: 3, maxLineChars: 100 }))).toEqual(expected)
    expect(await collect(textLines(gz, { maxLineChars: 100 }))).toEqual(expected)
  })

  it('refuses a line longer than the limit, naming it, before reading the rest of it', async () => {
    const path = join(dir, 'long.txt')
    writeFileSync(path, 'short\n' + 'x'.repeat(5000) + '\nlast\n')
    const error = await collect(textLines(path, { chunkBytes: 256, maxLineChars: 1000 })).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CorpusError)
    expect((error as Error).message).toBe(`${path}:2: the line is longer than 1000 characters`)
    // Within the limit the same line passes.
    expect((await collect(textLines(path, { maxLineChars: 5000 }))).map((l) => l.lineNo)).toEqual([1, 2, 3, 4])
  })
})

describe('corpusChunks', () => {
  it.each(['pubtator', 'conll', 'bioc-xml', 'bioc-json'] as const)('%s: the same bytes as writeCorpus, also for no documents', async (format) => {
    const docs = synthetic(5)
    const options = { date: '20250101' }
    expect((await collect(corpusChunks(each(docs), format, options))).join('')).toBe(writeCorpus(docs, format, options).files[0]!.content)
    expect((await collect(corpusChunks(each([]), format, options))).join('')).toBe(writeCorpus([], format, options).files[0]!.content)
  })
})
