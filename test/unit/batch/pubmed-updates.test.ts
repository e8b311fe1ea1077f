// PubMed update files in batch mode (issue 27): a PMID revised within one file keeps its highest
// <PMID Version>, else its last record, and says so (item 1); a file that only deletes records
// gets an empty output and a record listing the deletions (item 7).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync, gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CorpusDocument } from '@shared/domain'
import { openCorpusStream, readCorpusFile } from '@core/corpus'
import { readRecord } from '@core/batch/manifest'
import { expandInputs, tagFiles } from '@core/batch/run'
import { openTagger, type CheckpointTagger } from '@core/tag/open'
import { run as tagCmd } from '../../../src/cli/commands/tag'
import { capture } from '../cli/capture'
import { saveTinyModel } from '../cli/tiny-model'

const article = (pmid: string, title: string, version?: number): string =>
  `  <PubmedArticle>\n    <MedlineCitation Status="MEDLINE" Owner="NLM">\n      <PMID${version === undefined ? '' : ` Version="${version}"`}>${pmid}</PMID>\n` +
  `      <Article><ArticleTitle>${title}</ArticleTitle><Abstract><AbstractText>Patients with kalemia.</AbstractText></Abstract></Article>\n` +
  `    </MedlineCitation>\n  </PubmedArticle>\n`
const set = (...parts: string[]): string => `<?xml version="1.0"?>\n<PubmedArticleSet>\n${parts.join('')}</PubmedArticleSet>\n`
const deletion = (...pmids: string[]): string => `  <DeleteCitation>\n${pmids.map((p) => `    <PMID Version="1">${p}</PMID>\n`).join('')}  </DeleteCitation>\n`

let dir: string
let model: string
let tagger: CheckpointTagger
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pubmed-updates-'))
  model = await saveTinyModel(dir)
  tagger = await openTagger(model, { engine: 'onnx', export: 'memory', threads: 1 })
})
afterAll(async () => {
  await tagger?.dispose()
  rmSync(dir, { recursive: true, force: true })
})

async function collect(docs: AsyncIterable<CorpusDocument>): Promise<CorpusDocument[]> {
  const out: CorpusDocument[] = []
  for await (const d of docs) out.push(d)
  return out
}

describe('a PMID revised within one file', () => {
  const xml = set(article('7', 'a'), article('8', 'other'), article('7', 'a-revised'))

  it('streamed (over chunk boundaries) and read whole, the last record is kept with a warning naming both lines', async () => {
    const p = join(dir, 'rev.xml')
    writeFileSync(p, xml)
    const whole = await readCorpusFile(p)
    for (const chunkBytes of [7, 64, 1 << 20]) {
      const s = await openCorpusStream(p, undefined, { chunkBytes, lenient: true })
      const docs = await collect(s.documents)
      expect(docs.map((d) => [d.id, d.text.split(' ')[0]])).toEqual([
        ['8', 'other'],
        ['7', 'a-revised'],
      ])
      expect(docs).toEqual(whole.documents)
      expect(s.issues).toEqual(whole.issues)
    }
    expect(whole.issues).toHaveLength(1)
    expect(whole.issues[0]).toMatchObject({ severity: 'warning', line: 5 })
    expect(whole.issues[0]!.message).toContain('superseded by the one on line 17')
  })

  it('the highest <PMID Version> wins over the later record', async () => {
    const p = join(dir, 'versions.xml')
    writeFileSync(p, set(article('7', 'second', 2), article('7', 'first', 1)))
    const s = await openCorpusStream(p, undefined, { chunkBytes: 16 })
    expect((await collect(s.documents)).map((d) => d.text.split(' ')[0])).toEqual(['second'])
    expect(s.issues[0]!.message).toContain('(version 1; version 2 is kept)')
  })

  it('batch mode tags the revision and reports the superseded record in its summary and completion record', async () => {
    const inDir = join(dir, 'in-rev')
    mkdirSync(inDir)
    writeFileSync(join(inDir, 'pubmed25n1400.xml.gz'), gzipSync(xml))
    const out = join(dir, 'out-rev')
    const r = await capture(() => tagCmd(['--model', model, '--in', inDir, '--out-dir', out, '--threads', '1']))
    expect(r.code).toBe(0)
    const summary = JSON.parse(r.out)
    expect(summary.files[0]).toMatchObject({ status: 'tagged', documents: 2 })
    expect(summary.files[0].warnings).toHaveLength(1)
    expect(summary.files[0].warnings[0]).toMatch(/pubmed25n1400\.xml\.gz:5: PMID 7 occurs 2 times: this record is superseded by the one on line 17/)
    expect(r.err).toContain('warning: ')
    const text = gunzipSync(readFileSync(join(out, 'pubmed25n1400.pubtator.gz'))).toString('utf8')
    expect(text).toContain('7|t|a-revised')
    expect(text).not.toContain('7|t|a\n')
    const rec = readRecord(join(out, 'pubmed25n1400.pubtator.gz'))!
    expect(rec).toMatchObject({ documents: 2, skipped: 0, problems: [] })
    expect(rec.warnings).toEqual(summary.files[0].warnings)
  })
})

describe('an update file that only deletes records', () => {
  it('gets an empty output and a completion record listing the deletions; exit 0', async () => {
    const inDir = join(dir, 'in-del')
    mkdirSync(inDir)
    writeFileSync(join(inDir, 'pubmed25n1401.xml'), set(deletion('1111', '2222')))
    const out = join(dir, 'out-del')
    const direct = await tagFiles({ inputs: expandInputs([inDir]), outDir: join(dir, 'out-del-direct'), format: 'pubtator', shard: { index: 0, count: 1 }, tagger, model: 'm' })
    expect(direct.files[0]).toMatchObject({ status: 'tagged', documents: 0, deleted: ['1111', '2222'] })
    const r = await capture(() => tagCmd(['--model', model, '--in', inDir, '--out-dir', out, '--threads', '1']))
    expect(r.code).toBe(0)
    expect(JSON.parse(r.out).files[0]).toMatchObject({ status: 'tagged', documents: 0, deleted: ['1111', '2222'] })
    expect(readFileSync(join(out, 'pubmed25n1401.pubtator'), 'utf8')).toBe('')
    expect(readRecord(join(out, 'pubmed25n1401.pubtator'))).toMatchObject({ documents: 0, deleted: ['1111', '2222'], problems: [] })
    // A rerun finds it complete.
    const again = await capture(() => tagCmd(['--model', model, '--in', inDir, '--out-dir', out, '--threads', '1', '-q']))
    expect(JSON.parse(again.out).files[0].status).toBe('skipped')
  })

  it('a PubMed file with neither articles nor deletions is still an error', async () => {
    const p = join(dir, 'empty-set.xml')
    writeFileSync(p, set())
    const s = await openCorpusStream(p, undefined, { lenient: true })
    await expect(collect(s.documents)).rejects.toThrow('no PubmedArticle elements found')
  })
})
