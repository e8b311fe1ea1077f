// `.gz` on either side of every command (issue 27, items 3 and 6): a .gz output is gzip (not
// plain text under a .gz name), and single-file tag/eval read .gz inputs as convert and batch do.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync, gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openCorpusStream, readCorpusFile, writeBiocJson } from '@core/corpus'
import type { CorpusDocument } from '@shared/domain'
import { run as convertCmd } from '../../../src/cli/commands/convert'
import { run as evalCmd } from '../../../src/cli/commands/eval'
import { run as tagCmd } from '../../../src/cli/commands/tag'
import { capture } from './capture'
import { saveTinyModel } from './tiny-model'

const PUBTATOR = '7|t|Zorvitis in mice.\n7|a|Patients with kalemia were treated.\n7\t0\t8\tZorvitis\tDisease\n7\t32\t39\tkalemia\tDisease\n\n8|t|No signs of brunoma.\n8|a|The study found nothing.\n8\t12\t19\tbrunoma\tDisease\n\n'

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gz-io-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const gunzipText = (path: string): string => gunzipSync(readFileSync(path)).toString('utf8')

describe('reading .gz inputs whole', () => {
  it('readCorpusFile decompresses a .gz, detecting the format inside', async () => {
    const p = join(dir, 'r.pubtator.gz')
    writeFileSync(p, gzipSync(PUBTATOR))
    const r = await readCorpusFile(p)
    expect(r.format).toBe('pubtator')
    expect(r.documents.map((d) => [d.id, d.mentions.length])).toEqual([
      ['7', 2],
      ['8', 1],
    ])
  })

  it('openCorpusStream reads a gzipped format that does not stream (BioC JSON) whole', async () => {
    const docs: CorpusDocument[] = (await readCorpusFile(join(dir, 'r.pubtator.gz'))).documents
    const p = join(dir, 'c.bioc.json.gz')
    writeFileSync(p, gzipSync(writeBiocJson(docs)))
    const s = await openCorpusStream(p)
    const ids: string[] = []
    for await (const d of s.documents) ids.push(d.id)
    expect(s.format).toBe('bioc-json')
    expect(ids).toEqual(['7', '8'])
  })

  it('names the file when a .gz is not gzip or is truncated', async () => {
    const plain = join(dir, 'plain.pubtator.gz')
    writeFileSync(plain, PUBTATOR)
    await expect(readCorpusFile(plain)).rejects.toThrow(`${plain}: the name ends in .gz but the file is not gzip-compressed`)
    const cut = join(dir, 'cut.pubtator.gz')
    const whole = gzipSync(PUBTATOR)
    writeFileSync(cut, whole.subarray(0, whole.length - 12))
    await expect(readCorpusFile(cut)).rejects.toThrow(`${cut}: the gzip data is truncated or damaged`)
  })
})

describe('writing .gz outputs', () => {
  it('convert --out x.pubtator.gz writes gzip', async () => {
    const src = join(dir, 'conv.pubtator')
    writeFileSync(src, PUBTATOR)
    const out = join(dir, 'conv-out.pubtator.gz')
    const r = await capture(() => convertCmd(['--in', src, '--to', 'pubtator', '--out', out, '-q']))
    expect(r.code).toBe(0)
    expect(gunzipText(out)).toBe(PUBTATOR)
  })

  it('convert refuses a .gz name for a folder output (brat), writing nothing', async () => {
    const src = join(dir, 'conv.pubtator')
    const out = join(dir, 'brat.gz')
    const r = await capture(() => convertCmd(['--in', src, '--to', 'brat', '--out', out]))
    expect(r.code).toBe(2)
    expect(r.err).toContain(`--out ${out}: names a folder of files, which is not compressed; drop the .gz`)
  })
})

describe('single-file tag and eval with .gz', () => {
  let model: string
  beforeAll(async () => {
    mkdirSync(join(dir, 'models'), { recursive: true })
    model = await saveTinyModel(join(dir, 'models'))
  })

  it('eval reads gzipped gold and predictions', async () => {
    const gold = join(dir, 'gold.pubtator.gz')
    const pred = join(dir, 'pred.pubtator.gz')
    writeFileSync(gold, gzipSync(PUBTATOR))
    writeFileSync(pred, gzipSync(PUBTATOR))
    const r = await capture(() => evalCmd(['--gold', gold, '--pred', pred, '-q']))
    expect(r.code).toBe(0)
    expect(JSON.parse(r.out).overall).toMatchObject({ f1: 1, tp: 3 })
  })

  it('tag reads a .gz input and writes a .gz output as gzip', async () => {
    const input = join(dir, 'tag-in.pubtator.gz')
    writeFileSync(input, gzipSync(PUBTATOR))
    const out = join(dir, 'tag-out.pubtator.gz')
    const r = await capture(() => tagCmd(['--model', model, '--in', input, '--out', out, '-q']))
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    const text = gunzipText(out)
    expect(text).toMatch(/^7\|t\|Zorvitis in mice\.\n7\|a\|/)
    expect(text).toContain('8|t|No signs of brunoma.')
  })
})
