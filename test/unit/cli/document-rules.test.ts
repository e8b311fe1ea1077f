// tag and eval apply the document rules by default; --no-document-rules gives the model's
// sentence-level mentions alone (core/tag/document-rules).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildLabelMap } from '@core/nlp/bio'
import { run as evalCmd } from '../../../src/cli/commands/eval'
import { run as tagCmd } from '../../../src/cli/commands/tag'
import { capture } from './capture'
import { saveTinyModel } from './tiny-model'

// Random weights tag some occurrences of a repeated word and not others (seed 2 leaves some
// untagged; others tag nearly every word): what the Chemical copy rule fills in.
const TEXT = Array.from({ length: 12 }, (_, i) => `kelpamine binds zorbate in mice ${i % 3 ? 'and' : 'with'} kelpamine .`).join(' ')
let dir: string
let model: string
let input: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'doc-rules-'))
  model = await saveTinyModel(dir, 'model', { chemical: buildLabelMap(['Chemical']).labels }, 2)
  input = join(dir, 'in.pubtator')
  writeFileSync(input, `9|t|Kelpamine.\n9|a|${TEXT}\n\n`)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The mention lines of a PubTator file: start, end, text. */
const mentions = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => /^9\t\d+\t\d+\t/.test(l))
    .map((l) => l.split('\t').slice(1, 4).join(' '))

describe('document rules on the command line', () => {
  it('tag copies a chemical to its other occurrences by default; --no-document-rules does not', async () => {
    const ruled = join(dir, 'ruled.pubtator')
    const raw = join(dir, 'raw.pubtator')
    expect((await capture(() => tagCmd(['--model', model, '--in', input, '--out', ruled, '-q']))).code).toBe(0)
    expect((await capture(() => tagCmd(['--model', model, '--in', input, '--out', raw, '--no-document-rules', '-q']))).code).toBe(0)
    const [withRules, without] = [mentions(ruled), mentions(raw)]
    expect(without.length).toBeGreaterThan(0)
    // Copies only add: every mention of the model is still there.
    expect(withRules).toEqual(expect.arrayContaining(without))
    expect(withRules.length).toBeGreaterThan(without.length)
    const text = `Kelpamine. ${TEXT}`
    for (const m of withRules) {
      const [start, end, words] = m.split(' ', 2).concat(m.split(' ').slice(2).join(' '))
      expect(text.slice(Number(start), Number(end))).toBe(words)
    }
  })

  it('eval scores with the rules by default and refuses the flag for a prediction file', async () => {
    const gold = join(dir, 'gold.pubtator')
    writeFileSync(gold, `9|t|Kelpamine.\n9|a|${TEXT}\n9\t0\t9\tKelpamine\tChemical\n\n`)
    const ruled = await capture(() => evalCmd(['--gold', gold, '--model', model, '-q']))
    const raw = await capture(() => evalCmd(['--gold', gold, '--model', model, '--no-document-rules', '-q']))
    expect(ruled.code).toBe(0)
    expect(raw.code).toBe(0)
    const predicted = (out: string) => JSON.parse(out).overall.tp + JSON.parse(out).overall.fp
    expect(predicted(ruled.out)).toBeGreaterThan(predicted(raw.out))
    const refused = await capture(() => evalCmd(['--gold', gold, '--pred', gold, '--no-document-rules']))
    expect(refused.code).toBe(2)
    expect(refused.err).toContain('--no-document-rules is for tagging with --model')
  })

  it('tag --help lists the flag, apart from its text', async () => {
    const r = await capture(() => tagCmd(['--help']))
    const help = r.out + r.err
    expect(help).toContain('--no-document-rules')
    // The flag fills tag's option column: its text must not run into it ("--no-document-ruleseach").
    expect(help).not.toMatch(/--no-document-rules\S/)
    expect(help).toMatch(/--no-document-rules\s+each sentence's mentions/)
  })
})
