// What `tag --in DIR --out-dir` takes from a folder (issue 27, item 2): every format the readers
// take (BioC JSON, plain text and brat pairs included, each also .gz), and a list of what is left
// out and why; batch output written as BioC can be fed back as a folder.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeBiocJson, writeBrat, writeConll, writePubtator } from '@core/corpus'
import { expandInputs, type IgnoredInput } from '@core/batch/run'
import { run as tagCmd } from '../../../src/cli/commands/tag'
import { capture } from '../cli/capture'
import { saveTinyModel } from '../cli/tiny-model'
import { syntheticDocs } from '../train/synthetic'

let dir: string
let inDir: string
let model: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'batch-inputs-'))
  model = await saveTinyModel(dir)
  inDir = join(dir, 'in')
  mkdirSync(inDir)
  const docs = (seed: number, prefix: string) => syntheticDocs(2, seed, 2, prefix)
  writeFileSync(join(inDir, 'a.pubtator'), writePubtator(docs(1, 'a-')))
  writeFileSync(join(inDir, 'b.bioc.json'), writeBiocJson(docs(2, 'b-')))
  writeFileSync(join(inDir, 'c.txt'), 'Patients with kalemia were treated.\n')
  const pair = writeBrat(docs(3, 'e-')[0]!)
  writeFileSync(join(inDir, 'e.txt'), pair.txt)
  writeFileSync(join(inDir, 'e.ann'), pair.ann)
  writeFileSync(join(inDir, 'f.conll.gz'), gzipSync(writeConll(docs(4, 'f-'))))
  writeFileSync(join(inDir, 'g.json.gz'), gzipSync(writeBiocJson(docs(5, 'g-'))))
  // Not inputs:
  writeFileSync(join(inDir, 'lone.ann'), 'T1\tDisease 0 4\tabcd\n')
  writeFileSync(join(inDir, 'README.md'), '# notes\n')
  writeFileSync(join(inDir, 'old.pubtator.done.json'), '{}')
  writeFileSync(join(inDir, '.fastbioner-tmp-1-abc-x.pubtator'), '')
  mkdirSync(join(inDir, 'sub'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('expandInputs on a folder', () => {
  it('takes every corpus format (a brat pair once, by its .txt) and lists the rest with the reason', () => {
    const ignored: IgnoredInput[] = []
    const inputs = expandInputs([inDir], (i) => ignored.push(i))
    expect(inputs.map((p) => basename(p))).toEqual(['a.pubtator', 'b.bioc.json', 'c.txt', 'e.txt', 'f.conll.gz', 'g.json.gz'])
    expect(ignored.map((i) => [basename(i.path), i.reason])).toEqual([
      ['.fastbioner-tmp-1-abc-x.pubtator', 'a temporary file of an unfinished write'],
      ['README.md', expect.stringContaining('not a corpus file name')],
      ['lone.ann', 'brat annotations without their text (lone.txt)'],
      ['old.pubtator.done.json', 'a completion record of batch tagging'],
      ['sub', 'a folder (folders inside --in folders are not entered)'],
    ])
  })
})

describe('tag --in DIR --out-dir', () => {
  it('tags every format, says what it left out, and its BioC output can be fed back as a folder', async () => {
    const out = join(dir, 'out-bioc')
    const r = await capture(() => tagCmd(['--model', model, '--in', inDir, '--out-dir', out, '--format', 'bioc', '--threads', '1']))
    expect(r.code).toBe(0)
    const summary = JSON.parse(r.out)
    expect(summary.files.map((f: { input: string; status: string }) => [basename(f.input), f.status])).toEqual([
      ['a.pubtator', 'tagged'],
      ['b.bioc.json', 'tagged'],
      ['c.txt', 'tagged'],
      ['e.txt', 'tagged'],
      ['f.conll.gz', 'tagged'],
      ['g.json.gz', 'tagged'],
    ])
    expect(summary.ignored.map((i: IgnoredInput) => basename(i.path))).toEqual(['.fastbioner-tmp-1-abc-x.pubtator', 'README.md', 'lone.ann', 'old.pubtator.done.json', 'sub'])
    expect(r.err).toContain(`not tagged: ${join(inDir, 'lone.ann')}: brat annotations without their text (lone.txt)`)
    expect(r.err).toContain('6 of 6 input file(s)')

    const back = join(dir, 'out-again')
    const again = await capture(() => tagCmd(['--model', model, '--in', out, '--out-dir', back, '--threads', '1', '-q']))
    expect(again.code).toBe(0)
    const files = JSON.parse(again.out).files as Array<{ status: string; documents: number }>
    expect(files).toHaveLength(6)
    expect(files.every((f) => f.status === 'tagged' && f.documents > 0)).toBe(true)
    expect(readdirSync(back).filter((n) => !n.endsWith('.done.json'))).toHaveLength(6)
  })

  it('refuses --out-dir equal to an --in folder (by any spelling) before writing anything (item 9)', async () => {
    const before = readdirSync(inDir).sort()
    const link = join(dir, 'link-to-in')
    symlinkSync(inDir, link)
    for (const outDir of [inDir, link]) {
      const r = await capture(() => tagCmd(['--model', model, '--in', inDir, '--out-dir', outDir, '--threads', '1']))
      expect(r.code).toBe(2)
      expect(r.err).toContain(`--out-dir ${outDir} is the --in folder ${inDir}: its outputs would be read as inputs on the next run`)
    }
    expect(readdirSync(inDir).sort()).toEqual(before)
  })

  it('a brat pair is redone when its .ann changes', async () => {
    const out = join(dir, 'out-pair')
    expect((await capture(() => tagCmd(['--model', model, '--in', inDir, '--out-dir', out, '--threads', '1', '-q']))).code).toBe(0)
    writeFileSync(join(inDir, 'e.ann'), '')
    const r = await capture(() => tagCmd(['--model', model, '--in', inDir, '--out-dir', out, '--threads', '1', '-q']))
    const files = JSON.parse(r.out).files as Array<{ input: string; status: string; reason?: string }>
    expect(files.filter((f) => f.status === 'tagged').map((f) => [basename(f.input), f.reason])).toEqual([['e.txt', 'redone: input changed']])
  })
})
