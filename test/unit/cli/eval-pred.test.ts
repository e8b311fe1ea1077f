// eval --pred without a model: how gold and predicted documents are paired.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { run as evalCmd } from '../../../src/cli/commands/eval'
import { parseCorpusText, writeCorpus } from '@core/corpus'
import { capture } from './capture'

// Invented sentences: two documents, three mentions.
const GOLD_CONLL = [
  '-DOCSTART-\tO', '',
  'Loss\tO', 'of\tO', 'Zorblin\tB-Gene', 'causes\tO', 'grey\tB-Disease', 'fever\tI-Disease', '.\tO', '',
  'Patients\tO', 'recover\tO', '.\tO', '',
  '-DOCSTART-\tO', '',
  'Kelp-3\tB-Gene', 'binds\tO', 'Zorblin\tB-Gene', '.\tO', '',
].join('\n') + '\n'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'eval-pred-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

describe('eval --pred', () => {
  it('scores a byte-identical CoNLL copy under another name as perfect (documents matched by position)', async () => {
    writeFileSync(join(dir, 'gold.tsv'), GOLD_CONLL)
    writeFileSync(join(dir, 'pred.tsv'), GOLD_CONLL)
    const r = await capture(() => evalCmd(['--gold', join(dir, 'gold.tsv'), '--pred', join(dir, 'pred.tsv')]))
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    const s = JSON.parse(r.out)
    expect(s.overall).toMatchObject({ tp: 4, fp: 0, fn: 0, f1: 1 })
    expect(s.token_accuracy).toBe(1)
  })

  it('scores CoNLL predictions (re-tokenised at mention edges) against PubTator gold by position', async () => {
    const gold = '77|t|Kelp-3 binds Zorblin.\n77|a|Grey fever follows.\n77\t0\t6\tKelp-3\tGene\n77\t22\t32\tGrey fever\tDisease\n\n'
    writeFileSync(join(dir, 'gold.pubtator'), gold)
    // The prediction finds "Kelp" only (a token split inside "Kelp-3") and "Grey fever".
    const doc = parseCorpusText(gold, 'gold.pubtator').documents[0]!
    const predicted = { ...doc, id: 'whatever', mentions: [{ start: 0, end: 4, text: 'Kelp', type: 'Gene' }, doc.mentions[1]!] }
    writeFileSync(join(dir, 'pred.tsv'), writeCorpus([predicted], 'conll').files[0]!.content)
    const r = await capture(() => evalCmd(['--gold', join(dir, 'gold.pubtator'), '--pred', join(dir, 'pred.tsv')]))
    expect(r.code).toBe(0)
    expect(JSON.parse(r.out).overall).toMatchObject({ tp: 1, fp: 1, fn: 1 })
  })

  it('scores PubTator predictions against CoNLL gold by position, the same as the other way round', async () => {
    const gold = '77|t|Kelp-3 binds Zorblin.\n77|a|Grey fever follows.\n77\t0\t6\tKelp-3\tGene\n77\t22\t32\tGrey fever\tDisease\n\n'
    writeFileSync(join(dir, 'g.pubtator'), gold)
    const doc = parseCorpusText(gold, 'g.pubtator').documents[0]!
    writeFileSync(join(dir, 'g.tsv'), writeCorpus([doc], 'conll').files[0]!.content)
    // The PubTator prediction finds "Kelp-3" right and "fever" alone (a token of "Grey fever").
    writeFileSync(join(dir, 'p.pubtator'), '77|t|Kelp-3 binds Zorblin.\n77|a|Grey fever follows.\n77\t0\t6\tKelp-3\tGene\n77\t27\t32\tfever\tDisease\n\n')
    const forward = await capture(() => evalCmd(['--gold', join(dir, 'g.tsv'), '--pred', join(dir, 'g.pubtator')]))
    expect(forward.code).toBe(0)
    expect(JSON.parse(forward.out).overall).toMatchObject({ tp: 2, fp: 0, fn: 0 })
    const partial = await capture(() => evalCmd(['--gold', join(dir, 'g.tsv'), '--pred', join(dir, 'p.pubtator')]))
    expect(JSON.parse(partial.out).overall).toMatchObject({ tp: 1, fp: 1, fn: 1 })
    // A prediction whose words differ is an error naming the gold line, not a silent zero.
    writeFileSync(join(dir, 'q.pubtator'), '77|t|Kelp-3 bound Zorblin.\n77|a|Grey fever follows.\n\n')
    const wrong = await capture(() => evalCmd(['--gold', join(dir, 'g.tsv'), '--pred', join(dir, 'q.pubtator')]))
    expect(wrong.code).toBe(1)
    expect(wrong.err).toMatch(/g\.tsv:\d+: token "binds" is not in document 1 of .*q\.pubtator, which has "bound" there/)
  })

  it('names the line where the prediction file’s tokens stop matching the gold file', async () => {
    writeFileSync(join(dir, 'gold.tsv'), GOLD_CONLL)
    writeFileSync(join(dir, 'pred.tsv'), GOLD_CONLL.replace('binds\tO', 'bound\tO'))
    const r = await capture(() => evalCmd(['--gold', join(dir, 'gold.tsv'), '--pred', join(dir, 'pred.tsv')]))
    expect(r.code).toBe(1)
    expect(r.err).toContain(`${join(dir, 'pred.tsv')}:18: token "bound" does not match the gold text, which has "binds" there (${join(dir, 'gold.tsv')}:18)`)
    expect(r.out).toBe('')
  })

  it('refuses files of different document counts when documents have no ids', async () => {
    writeFileSync(join(dir, 'gold.tsv'), GOLD_CONLL)
    writeFileSync(join(dir, 'pred.tsv'), GOLD_CONLL.slice(0, GOLD_CONLL.lastIndexOf('-DOCSTART-')))
    const r = await capture(() => evalCmd(['--gold', join(dir, 'gold.tsv'), '--pred', join(dir, 'pred.tsv')]))
    expect(r.code).toBe(1)
    expect(r.err).toMatch(/pred\.tsv: 1 documents, but .*gold\.tsv has 2; .*matched by position/)
  })
})

describe('eval --pred by id', () => {
  it('warns about gold documents the prediction file lacks (they count as misses)', async () => {
    writeFileSync(join(dir, 'gold.pubtator'), '5|t|Grey fever.\n5\t0\t10\tGrey fever\tDisease\n\n6|t|Kelp fever.\n6\t0\t10\tKelp fever\tDisease\n\n')
    writeFileSync(join(dir, 'pred.pubtator'), '5|t|Grey fever.\n5\t0\t10\tGrey fever\tDisease\n\n')
    const r = await capture(() => evalCmd(['--gold', join(dir, 'gold.pubtator'), '--pred', join(dir, 'pred.pubtator')]))
    expect(r.code).toBe(0)
    expect(JSON.parse(r.out).overall).toMatchObject({ tp: 1, fp: 0, fn: 1 })
    expect(r.err).toMatch(/pred\.pubtator: 1 document\(s\) of .*gold\.pubtator missing \(6\); their gold mentions count as false negatives/)
  })
})

describe('eval with prediction and gold types that only partly overlap (issue 27, item 11)', () => {
  it('warns, naming the types on one side only, and scores the shared types apart', async () => {
    // Gold: Disease only. Predictions: the Disease mention right, plus a Chemical and a Gene gold cannot have.
    writeFileSync(join(dir, 'gold.pubtator'), '5|t|Grey fever after zorbate and Kelp-3.\n5\t0\t10\tGrey fever\tDisease\n\n')
    writeFileSync(
      join(dir, 'pred.pubtator'),
      '5|t|Grey fever after zorbate and Kelp-3.\n5\t0\t10\tGrey fever\tDisease\n5\t17\t24\tzorbate\tChemical\n5\t29\t35\tKelp-3\tGene\n\n',
    )
    const r = await capture(() => evalCmd(['--gold', join(dir, 'gold.pubtator'), '--pred', join(dir, 'pred.pubtator')]))
    expect(r.code).toBe(0)
    const s = JSON.parse(r.out)
    expect(s.overall).toMatchObject({ tp: 1, fp: 2, fn: 0 })
    expect(s.overall.f1).toBeCloseTo(0.5, 6)
    expect(s.shared_types).toEqual({ types: ['Disease'], overall: { precision: 1, recall: 1, f1: 1, tp: 1, fp: 0, fn: 0 } })
    expect(r.err).toContain('warning: the predicted entity types and the gold types only partly overlap: Chemical, Gene not in the gold')
    expect(r.err).toContain('on the shared types (Disease) F1 is 1.000')
  })

  it('adds nothing when the types coincide', async () => {
    writeFileSync(join(dir, 'gold.pubtator'), '5|t|Grey fever.\n5\t0\t10\tGrey fever\tDisease\n\n')
    const r = await capture(() => evalCmd(['--gold', join(dir, 'gold.pubtator'), '--pred', join(dir, 'gold.pubtator')]))
    expect(r.err).toBe('')
    expect(JSON.parse(r.out).shared_types).toBeUndefined()
  })
})

describe('eval --pred with tagging options (issue 27, Low)', () => {
  it('refuses --head, which a prediction file has no use for, instead of ignoring it', async () => {
    writeFileSync(join(dir, 'gold.pubtator'), '5|t|Grey fever.\n5\t0\t10\tGrey fever\tDisease\n\n')
    const r = await capture(() => evalCmd(['--gold', join(dir, 'gold.pubtator'), '--pred', join(dir, 'gold.pubtator'), '--head', 'ncbi']))
    expect(r.code).toBe(2)
    expect(r.out).toBe('')
    expect(r.err).toContain('fastbioner eval: --head is for tagging with --model; --pred FILE is scored as it is')
  })
})
