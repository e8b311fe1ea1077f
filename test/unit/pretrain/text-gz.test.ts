// pretrain --text reads every corpus format gzipped too (issue 27, item 18): PubMed baseline
// .xml.gz streamed, .pubtator.gz in a folder, and a gzipped corpus file is not taken for plain text.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readTextDocuments } from '@core/pretrain/text'

const ROOT = resolve(__dirname, '../../..')
let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pretrain-text-gz-'))
  writeFileSync(join(dir, 'pubmed25n0001.xml.gz'), gzipSync(readFileSync(join(ROOT, 'test/fixtures/corpus/pubmed.xml'))))
  writeFileSync(join(dir, 'export.pubtator.gz'), gzipSync('7|t|Zorvitis in mice.\n7|a|Kalemia was seen.\n7\t0\t8\tZorvitis\tDisease\n\n'))
  writeFileSync(join(dir, 'notes.md'), 'not read')
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

async function read(paths: string[]): Promise<Array<[string, string[]]>> {
  const out: Array<[string, string[]]> = []
  for await (const d of readTextDocuments(paths)) out.push([d.file.slice(dir.length + 1), d.lines])
  return out
}

describe('pretraining text from gzipped corpus files', () => {
  it('takes every gzipped corpus file of a folder, by format', async () => {
    const docs = await read([dir])
    expect([...new Set(docs.map(([f]) => f))]).toEqual(['export.pubtator.gz', 'pubmed25n0001.xml.gz'])
    expect(docs[0]).toEqual(['export.pubtator.gz', ['Zorvitis in mice.', 'Kalemia was seen.']])
    expect(docs.filter(([f]) => f === 'pubmed25n0001.xml.gz').length).toBeGreaterThan(1)
  })

  it('reads a .pubtator.gz given on its own as PubTator, not as plain text lines', async () => {
    expect(await read([join(dir, 'export.pubtator.gz')])).toEqual([['export.pubtator.gz', ['Zorvitis in mice.', 'Kalemia was seen.']]])
  })

  it('names the file and line of a damaged record', async () => {
    const bad = join(dir, 'bad', 'broken.pubtator.gz')
    mkdirSync(join(dir, 'bad'))
    writeFileSync(bad, gzipSync('7|t|Zorvitis.\n7\tx\t8\tZorvitis\tDisease\n\n'))
    await expect(read([bad])).rejects.toThrow(/broken\.pubtator\.gz:2: .*start offset/)
  })
})
