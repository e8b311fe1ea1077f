// The streaming PubMed reader's memory bound: a 21 MB PubMed XML file (45 000 articles, gzipped)
// is read in a Node process limited to a 40 MB heap, where the whole-file reader runs out of
// memory. (A PubMed baseline file is ~30 000 articles; streaming keeps memory flat in its size.)
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ROOT = resolve(__dirname, '../../..')
const HEAP_MB = 40
let dir: string
let file: string

function count(mode: 'stream' | 'whole'): { status: number | null; signal: string | null; out: string } {
  const r = spawnSync(process.execPath, [`--max-old-space-size=${HEAP_MB}`, join(__dirname, 'stream-count.cjs'), ROOT, file, ...(mode === 'whole' ? ['whole'] : [])], {
    encoding: 'utf8',
    timeout: 120_000,
  })
  return { status: r.status, signal: r.signal, out: r.stdout }
}

describe('streaming PubMed XML', () => {
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'stream-memory-'))
    const xml = readFileSync(join(ROOT, 'test/fixtures/corpus/pubmed.xml'), 'utf8')
    const start = xml.indexOf('<PubmedArticle>')
    const end = xml.lastIndexOf('</PubmedArticleSet>')
    const articles = xml.slice(start, end)
    const parts: string[] = [xml.slice(0, start)]
    for (let i = 0; i < 15_000; i++) parts.push(articles.replace(/<PMID Version="1">(\d+)<\/PMID>/g, (_, id: string) => `<PMID Version="1">${id}${String(i).padStart(5, '0')}</PMID>`))
    parts.push('</PubmedArticleSet>\n')
    file = join(dir, 'big.xml.gz')
    writeFileSync(file, gzipSync(parts.join('')))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it(`reads 45 000 articles within a ${HEAP_MB} MB heap, where reading the file whole does not fit`, () => {
    const streamed = count('stream')
    expect(streamed.status).toBe(0)
    expect(JSON.parse(streamed.out)).toMatchObject({ documents: 45_000 })
    const whole = count('whole')
    expect(whole.status === 0 && whole.signal === null).toBe(false)
  }, 240_000)
})
