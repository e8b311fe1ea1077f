// Batch tagging (core/batch/run + `fastbioner tag --out-dir`): shards, resume, bad files, SIGKILL.
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { gzipSync, gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writePubtator } from '@core/corpus'
import { expandInputs, tagFiles } from '@core/batch/run'
import { readRecord } from '@core/batch/manifest'
import { TEMP_PREFIX } from '@core/fs/atomic'
import { useBackend } from '@core/model/backend'
import { BertTokenClassifier, makeBertConfig } from '@core/model/bert'
import { saveCheckpoint } from '@core/model/checkpoint'
import { buildLabelMap } from '@core/nlp/bio'
import { openTagger, type CheckpointTagger } from '@core/tag/open'
import { syntheticDocs, syntheticVocab } from '../train/synthetic'

const ROOT = resolve(__dirname, '../../..')
let dir: string
let modelDir: string
let inDir: string
let tagger: CheckpointTagger

function outputsOf(folder: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const n of readdirSync(folder).sort()) {
    if (n.endsWith('.done.json')) continue
    const b = readFileSync(join(folder, n))
    out[n] = n.endsWith('.gz') ? gunzipSync(b).toString('utf8') : b.toString('utf8')
  }
  return out
}

beforeAll(async () => {
  await useBackend('wasm')
  dir = mkdtempSync(join(tmpdir(), 'batch-tag-'))
  const vocab = syntheticVocab()
  const config = makeBertConfig({ vocabSize: vocab.length, hiddenSize: 32, numHiddenLayers: 1, numAttentionHeads: 2, intermediateSize: 64, maxPositionEmbeddings: 64 })
  // Random weights: arbitrary but deterministic mentions, which is all these tests compare.
  const model = BertTokenClassifier.random(config, 11, { default: buildLabelMap(['Disease']).labels })
  modelDir = join(dir, 'model')
  await saveCheckpoint(modelDir, model, vocab, { lowercase: true, metadata: { training: { maxLength: 32, sentenceLevel: true } } })
  model.dispose()
  inDir = join(dir, 'in')
  mkdirSync(inDir)
  for (let f = 0; f < 5; f++) writeFileSync(join(inDir, `part${f}.pubtator`), writePubtator(syntheticDocs(6, 100 + f, 3, `p${f}-`)))
  writeFileSync(join(inDir, 'zipped.pubtator.gz'), gzipSync(writePubtator(syntheticDocs(4, 200, 3, 'z-'))))
  tagger = await openTagger(modelDir, { engine: 'onnx', export: 'memory', threads: 1 })
})
afterAll(async () => {
  await tagger?.dispose()
  rmSync(dir, { recursive: true, force: true })
})

describe('batch tagging', () => {
  it('tags every input once whether run as one shard or as three, with identical outputs', async () => {
    const inputs = expandInputs([inDir])
    expect(inputs.map((p) => p.slice(inDir.length + 1))).toEqual(['part0.pubtator', 'part1.pubtator', 'part2.pubtator', 'part3.pubtator', 'part4.pubtator', 'zipped.pubtator.gz'])
    const whole = join(dir, 'whole')
    const r = await tagFiles({ inputs, outDir: whole, format: 'pubtator', shard: { index: 0, count: 1 }, tagger, model: 'm1' })
    expect(r.files.map((f) => f.status)).toEqual(Array(6).fill('tagged'))
    expect(r.documents).toBe(5 * 6 + 4)
    const sharded = join(dir, 'sharded')
    const owned: string[] = []
    for (let i = 0; i < 3; i++) {
      const s = await tagFiles({ inputs, outDir: sharded, format: 'pubtator', shard: { index: i, count: 3 }, tagger, model: 'm1' })
      owned.push(...s.files.map((f) => f.input))
    }
    expect(owned.sort()).toEqual(inputs)
    const a = outputsOf(whole)
    expect(Object.keys(a)).toContain('zipped.pubtator.gz')
    expect(a['zipped.pubtator.gz']).toMatch(/^z-0\|t\|/)
    expect(Object.values(a).some((t) => /\tDisease\n/.test(t))).toBe(true) // something was tagged
    expect(outputsOf(sharded)).toEqual(a)
    const rec = readRecord(join(whole, 'part0.pubtator'))!
    expect(rec).toMatchObject({ documents: 6, model: 'm1', format: 'pubtator' })
  })

  it('skips complete outputs on a rerun and redoes those whose input, output or model changed', async () => {
    const inputs = expandInputs([inDir])
    const out = join(dir, 'resume')
    await tagFiles({ inputs, outDir: out, format: 'pubtator', shard: { index: 0, count: 1 }, tagger, model: 'm1' })
    const again = await tagFiles({ inputs, outDir: out, format: 'pubtator', shard: { index: 0, count: 1 }, tagger, model: 'm1' })
    expect(again.files.every((f) => f.status === 'skipped')).toBe(true)

    writeFileSync(join(out, 'part1.pubtator'), 'damaged') // output damaged
    const third = await tagFiles({ inputs, outDir: out, format: 'pubtator', shard: { index: 0, count: 1 }, tagger, model: 'm2' })
    expect(third.files.every((f) => f.status === 'tagged' && f.reason?.startsWith('redone:'))).toBe(true) // model changed
    const fourth = await tagFiles({ inputs, outDir: out, format: 'pubtator', shard: { index: 0, count: 1 }, tagger, model: 'm2' })
    expect(fourth.files.every((f) => f.status === 'skipped')).toBe(true)
    writeFileSync(join(out, 'part1.pubtator'), 'damaged')
    const fifth = await tagFiles({ inputs, outDir: out, format: 'pubtator', shard: { index: 0, count: 1 }, tagger, model: 'm2' })
    expect(fifth.files.filter((f) => f.status === 'tagged').map((f) => [f.input.slice(inDir.length + 1), f.reason])).toEqual([['part1.pubtator', 'redone: output changed or damaged']])
    writeFileSync(join(inDir, 'part3.pubtator'), writePubtator(syntheticDocs(7, 999, 3, 'p3b-'))) // input replaced
    const sixth = await tagFiles({ inputs, outDir: out, format: 'pubtator', shard: { index: 0, count: 1 }, tagger, model: 'm2' })
    expect(sixth.files.filter((f) => f.status === 'tagged').map((f) => [f.input.slice(inDir.length + 1), f.reason, f.documents])).toEqual([['part3.pubtator', 'redone: input changed', 7]])
  })

  it('records the input as it was tagged: one changed meanwhile is redone on the next run (issue 31 F10)', async () => {
    const own = join(dir, 'changing-in')
    mkdirSync(own)
    const input = join(own, 'moving.pubtator')
    const original = writePubtator(syntheticDocs(3, 500, 3, 'm-'))
    writeFileSync(input, original)
    const out = join(dir, 'changing-out')
    // A tagger during whose work the input file is replaced (another job appending, a sync client).
    const changing = Object.assign(Object.create(tagger) as CheckpointTagger, {
      tag: (...args: Parameters<CheckpointTagger['tag']>) => {
        writeFileSync(input, writePubtator(syntheticDocs(5, 501, 3, 'm2-')))
        return tagger.tag(...args)
      },
    })
    const first = await tagFiles({ inputs: [input], outDir: out, format: 'pubtator', shard: { index: 0, count: 1 }, tagger: changing, model: 'm1' })
    expect(first.files.map((f) => [f.status, f.documents])).toEqual([['tagged', 3]])
    expect(readRecord(join(out, 'moving.pubtator'))!.inputSha256).toBe(createHash('sha256').update(original).digest('hex'))
    const again = await tagFiles({ inputs: [input], outDir: out, format: 'pubtator', shard: { index: 0, count: 1 }, tagger, model: 'm1' })
    expect(again.files.map((f) => [f.status, f.reason, f.documents])).toEqual([['tagged', 'redone: input changed', 5]])
  })

  it('records the PMIDs a PubMed update file deletes and tags its articles', async () => {
    const upd = join(dir, 'update')
    mkdirSync(upd)
    const xml = readFileSync(resolve(ROOT, 'test/fixtures/corpus/pubmed.xml'), 'utf8').replace(
      '</PubmedArticleSet>',
      '  <DeleteCitation>\n    <PMID Version="1">1111</PMID>\n    <PMID Version="1">2222</PMID>\n  </DeleteCitation>\n</PubmedArticleSet>',
    )
    writeFileSync(join(upd, 'pubmed25n1300.xml.gz'), gzipSync(xml))
    const out = join(dir, 'update-out')
    const r = await tagFiles({ inputs: expandInputs([upd]), outDir: out, format: 'pubtator', shard: { index: 0, count: 1 }, tagger, model: 'm1' })
    expect(r.files[0]).toMatchObject({ status: 'tagged', documents: 3, deleted: ['1111', '2222'] })
    expect(readRecord(join(out, 'pubmed25n1300.pubtator.gz'))!.deleted).toEqual(['1111', '2222'])
    expect(gunzipSync(readFileSync(join(out, 'pubmed25n1300.pubtator.gz'))).toString('utf8')).toMatch(/^2000001\|t\|/)
  })

  it('skips a PubMed record it cannot read, names it, and still tags the rest of the file', async () => {
    const dirBad = join(dir, 'bad-record')
    mkdirSync(dirBad)
    // The second article has no PMID: it is reported and skipped, the others are tagged.
    const xml = readFileSync(resolve(ROOT, 'test/fixtures/corpus/pubmed.xml'), 'utf8')
    const articles = xml.split('<PubmedArticle>')
    articles[2] = articles[2].replace(/<PMID Version="1">\d+<\/PMID>/, '')
    writeFileSync(join(dirBad, 'mixed.xml'), articles.join('<PubmedArticle>'))
    const out = join(dir, 'bad-record-out')
    const r = await tagFiles({ inputs: expandInputs([dirBad]), outDir: out, format: 'pubtator', shard: { index: 0, count: 1 }, tagger, model: 'm1' })
    expect(r.files[0].status).toBe('tagged')
    expect(r.files[0].documents).toBe(2)
    expect(r.files[0].problems).toHaveLength(1)
    expect(r.files[0].problems![0]).toMatch(/mixed\.xml:\d+: .*PMID/)
    const rec = readRecord(join(out, 'mixed.pubtator'))!
    expect(rec.skipped).toBe(1)
    expect(rec.problems).toEqual(r.files[0].problems)
  })

  it('reports a bad file by name, tags the others and leaves nothing of the bad one', async () => {
    const bad = join(dir, 'bad')
    mkdirSync(bad)
    copyFileSync(join(inDir, 'part0.pubtator'), join(bad, 'good.pubtator'))
    writeFileSync(join(bad, 'broken.xml.gz'), gzipSync('<PubmedArticleSet><PubmedArticle><MedlineCitation>').subarray(0, 30))
    const out = join(dir, 'bad-out')
    const r = await tagFiles({ inputs: expandInputs([bad]), outDir: out, format: 'pubtator', shard: { index: 0, count: 1 }, tagger, model: 'm1' })
    const byName = Object.fromEntries(r.files.map((f) => [f.input.slice(bad.length + 1), f]))
    expect(byName['good.pubtator'].status).toBe('tagged')
    expect(byName['broken.xml.gz'].status).toBe('failed')
    expect(byName['broken.xml.gz'].reason).toMatch(/broken\.xml\.gz.*gzip data is truncated or damaged/)
    expect(readdirSync(out).sort()).toEqual(['good.pubtator', 'good.pubtator.done.json'])
  })

  it("keeps PubTator ids apart in its outputs and lists the change among the file's warnings (session 40, item 7)", async () => {
    const ids = join(dir, 'ids')
    mkdirSync(ids)
    writeFileSync(join(ids, 'c.json'), JSON.stringify({ documents: ['a|b', 'a_b'].map((id) => ({ id, passages: [{ offset: 0, text: 'Zorblin binds kelp.' }] })) }))
    const out = join(dir, 'ids-out')
    const r = await tagFiles({ inputs: expandInputs([ids]), outDir: out, format: 'pubtator', shard: { index: 0, count: 1 }, tagger, model: 'm1' })
    expect(r.files[0]!.warnings).toEqual([`${join(out, 'c.pubtator')}: document "a_b" written with id a_b~2: document "a|b" was written as a_b (PubTator ids cannot hold '|', tabs or line breaks)`])
    expect(readFileSync(join(out, 'c.pubtator'), 'utf8')).toMatch(/^a_b\|t\|[^]*\na_b~2\|t\|/)
  })

  it('a task killed with SIGKILL mid-file leaves no output for it; the rerun finishes it like an uninterrupted run', async () => {
    const big = join(dir, 'big')
    mkdirSync(big)
    writeFileSync(join(big, 'big.pubtator'), writePubtator(syntheticDocs(1500, 300, 3, 'b-')))
    const out = join(dir, 'killed')
    const cli = (outDir: string) => spawn(process.execPath, [join(ROOT, 'bin/fastbioner.js'), 'tag', '--model', modelDir, '--in', big, '--out-dir', outDir, '--threads', '1', '-q'], { stdio: 'ignore', cwd: tmpdir() }) // any working directory
    const child = cli(out)
    // Kill it once the output's temporary file exists (tagging under way).
    await new Promise<void>((done, fail) => {
      const t0 = Date.now()
      const poll = setInterval(() => {
        if (existsSync(out) && readdirSync(out).some((n) => n.startsWith(TEMP_PREFIX))) {
          clearInterval(poll)
          child.kill('SIGKILL')
          done()
        } else if (Date.now() - t0 > 60_000 || child.exitCode !== null) {
          clearInterval(poll)
          fail(new Error(`no temporary output appeared (exit ${child.exitCode})`))
        }
      }, 20)
    })
    await new Promise((r) => child.once('exit', r))
    expect(existsSync(join(out, 'big.pubtator'))).toBe(false)
    expect(existsSync(join(out, 'big.pubtator.done.json'))).toBe(false)
    const rerun = cli(out)
    expect(await new Promise((r) => rerun.once('exit', r))).toBe(0)
    expect(readdirSync(out).sort()).toEqual(['big.pubtator', 'big.pubtator.done.json']) // the killed run's temp file is gone
    const clean = join(dir, 'clean')
    const once = cli(clean)
    expect(await new Promise((r) => once.once('exit', r))).toBe(0)
    expect(outputsOf(out)).toEqual(outputsOf(clean))
  }, 180_000)
})
