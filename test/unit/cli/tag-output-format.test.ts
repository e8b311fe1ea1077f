// The format tag writes. A plain-text input is tagged into PubTator, not back into plain text,
// which keeps no mentions: `tag --in notes.txt --out notes.pubtator` once wrote a folder of the
// bare text and every mention the model found was lost. An --out name that says its format wins
// over the input's: a CoNLL input tagged into `x.pubtator` was written as CoNLL under that name.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildLabelMap } from '@core/nlp/bio'
import { run as tagCmd } from '../../../src/cli/commands/tag'
import { capture } from './capture'
import { saveTinyModel } from './tiny-model'

let dir: string
let model: string
let input: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tag-text-'))
  // Seed 2's random weights tag some of these words (document-rules.test.ts uses the same).
  model = await saveTinyModel(dir, 'model', { chemical: buildLabelMap(['Chemical']).labels }, 2)
  input = join(dir, 'notes.txt')
  writeFileSync(input, Array.from({ length: 12 }, (_, i) => `kelpamine binds zorbate in mice ${i % 3 ? 'and' : 'with'} kelpamine .`).join(' ') + '\n')
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('the format tag writes', () => {
  it('writes PubTator with the mentions by default', async () => {
    const out = join(dir, 'notes.pubtator')
    const r = await capture(() => tagCmd(['--model', model, '--in', input, '--out', out, '--threads', '1']))
    expect(r.code, r.err).toBe(0)
    expect(r.err).toContain('(pubtator)')
    expect(statSync(out).isFile()).toBe(true)
    const lines = readFileSync(out, 'utf8').split('\n')
    expect(lines[0]).toMatch(/^[^|]+\|t\|/)
    const found = Number(/: (\d+) mentions/.exec(r.err)?.[1])
    expect(found).toBeGreaterThan(0)
    expect(lines.filter((l) => /^[^\t]+\t\d+\t\d+\t[^\t]+\tChemical/.test(l))).toHaveLength(found)
  }, 60_000)

  it('writes the format --out names (.conll, .pubtator), whatever the input, and --format over the name', async () => {
    const conll = join(dir, 'notes.conll')
    const r1 = await capture(() => tagCmd(['--model', model, '--in', input, '--out', conll, '--threads', '1']))
    expect(r1.code, r1.err).toBe(0)
    expect(r1.err).toContain('(conll)')
    const conllText = readFileSync(conll, 'utf8')
    expect(conllText.split('\n').filter((l) => /\tB-Chemical$/.test(l))).toHaveLength(Number(/: (\d+) mentions/.exec(r1.err)?.[1]))
    // The CoNLL file back in, out to a .pubtator name: PubTator, with the same number of mentions.
    const back = join(dir, 'back.pubtator')
    const r2 = await capture(() => tagCmd(['--model', model, '--in', conll, '--out', back, '--threads', '1']))
    expect(r2.code, r2.err).toBe(0)
    expect(r2.err).toContain('(pubtator)')
    expect(readFileSync(back, 'utf8').split('\n')[0]).toMatch(/^[^|]+\|t\|/)
    // --format is the user's word: it wins over the name.
    const forced = join(dir, 'forced.conll')
    const r3 = await capture(() => tagCmd(['--model', model, '--in', conll, '--out', forced, '--format', 'pubtator', '--threads', '1']))
    expect(r3.code, r3.err).toBe(0)
    expect(readFileSync(forced, 'utf8').split('\n')[0]).toMatch(/^[^|]+\|t\|/)
  }, 60_000)

  it('refuses --format text, which would write no mentions, before writing anything', async () => {
    const out = join(dir, 'as-text')
    const r = await capture(() => tagCmd(['--model', model, '--in', input, '--out', out, '--format', 'text']))
    expect(r.code).toBe(2)
    expect(r.err).toContain("--format text writes the documents' text without their mentions; tag writes one of pubtator, conll, bioc-json, bioc-xml, brat")
    expect(existsSync(out)).toBe(false)
  })
})
