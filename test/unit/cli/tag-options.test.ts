// Window options are checked against the model's config before anything is loaded (issue 11, item 9).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run as tagCmd } from '../../../src/cli/commands/tag'
import { run as evalCmd } from '../../../src/cli/commands/eval'
import { capture } from './capture'

let dir: string
let model: string
let input: string
let wordTagger: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tag-options-'))
  // Only the config: the check must not need the weights.
  model = join(dir, 'model')
  mkdirSync(model)
  writeFileSync(join(model, 'config.json'), JSON.stringify({ model_type: 'bert', max_position_embeddings: 64, hidden_size: 8, num_hidden_layers: 1, num_attention_heads: 1, intermediate_size: 8 }))
  // A word tagger's folder: its config is not a BERT's, and its windows count words.
  wordTagger = join(dir, 'word-tagger')
  mkdirSync(wordTagger)
  writeFileSync(join(wordTagger, 'config.json'), JSON.stringify({ model_type: 'fastbioner-word-tagger', fastbioner_heads: { disease: ['O', 'B-Disease', 'I-Disease'], gene: ['O', 'B-Gene', 'I-Gene'] } }))
  writeFileSync(join(wordTagger, 'fastbioner.json'), JSON.stringify({ training: { maxLength: 64 } }))
  input = join(dir, 'in.pubtator')
  writeFileSync(input, '1|t|Zorblin binds kelp.\n\n')
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('tag and eval check window options before loading the model', () => {
  it.each([
    [['--stride', '200'], '--stride 200 must be below 62 (--max-length 64 minus [CLS] and [SEP])'],
    [['--max-length', '100000'], "--max-length 100000 exceeds the model's max_position_embeddings (64)"],
    [['--max-length', '32', '--stride', '30'], '--stride 30 must be below 30 (--max-length 32 minus [CLS] and [SEP])'],
  ])('tag %j → exit 2', async (opts, message) => {
    const r = await capture(() => tagCmd(['--model', model, '--in', input, '--out', join(dir, 'o.pubtator'), ...opts]))
    expect(r.code).toBe(2)
    expect(r.err).toContain(`fastbioner tag: ${message}`)
    expect(r.err).toContain('usage: fastbioner tag')
  })

  it.each([
    [['--stride', '1000'], '--stride 1000 must be below 62 (--max-length 64 minus [CLS] and [SEP])'],
    [['--max-length', '100000'], "--max-length 100000 exceeds the model's longest window, in words (512)"],
    [['--head', 'nosuch'], '--head nosuch: '],
  ])('a word tagger: tag %j → exit 2, naming the option (session 40, item 6)', async (opts, message) => {
    const r = await capture(() => tagCmd(['--model', wordTagger, '--in', input, '--out', join(dir, 'w.pubtator'), ...opts]))
    expect(r.code).toBe(2)
    expect(r.err).toContain(`fastbioner tag: ${message}`)
    if (opts[0] === '--head') expect(r.err).toContain(`${wordTagger} has no such head (heads: disease, gene)`)
  })

  it('eval --max-length too long → exit 2', async () => {
    const r = await capture(() => evalCmd(['--gold', input, '--model', model, '--max-length', '100000']))
    expect(r.code).toBe(2)
    expect(r.err).toContain("fastbioner eval: --max-length 100000 exceeds the model's max_position_embeddings (64)")
  })
})

describe('tag and eval without --model use the default model', () => {
  it('take FASTBIONER_DEFAULT_MODEL (so its window limits apply) and say so', async () => {
    const before = process.env.FASTBIONER_DEFAULT_MODEL
    process.env.FASTBIONER_DEFAULT_MODEL = model
    try {
      const r = await capture(() => tagCmd(['--in', input, '--out', join(dir, 'd.pubtator'), '--max-length', '100000']))
      expect(r.err).toContain(`model: the default model (${model})`)
      expect(r.err).toContain("--max-length 100000 exceeds the model's max_position_embeddings (64)")
      const e = await capture(() => evalCmd(['--gold', input, '--max-length', '100000']))
      expect(e.err).toContain("fastbioner eval: --max-length 100000 exceeds the model's max_position_embeddings (64)")
    } finally {
      if (before === undefined) delete process.env.FASTBIONER_DEFAULT_MODEL
      else process.env.FASTBIONER_DEFAULT_MODEL = before
    }
  })

  it('exit 2 naming where they looked when there is none', async () => {
    const before = process.env.FASTBIONER_DEFAULT_MODEL
    process.env.FASTBIONER_DEFAULT_MODEL = join(dir, 'no-such-model')
    try {
      const r = await capture(() => tagCmd(['--in', input, '--out', join(dir, 'e.pubtator')]))
      expect(r.code).toBe(2)
      expect(r.err).toContain(`no --model DIR given, and this installation has no default model (looked in ${join(dir, 'no-such-model')})`)
    } finally {
      if (before === undefined) delete process.env.FASTBIONER_DEFAULT_MODEL
      else process.env.FASTBIONER_DEFAULT_MODEL = before
    }
  })
})

describe('eval warns when the two sides name no type in common', () => {
  it('names both type sets for --pred, and stays quiet with -q or any overlap', async () => {
    const gold = join(dir, 'gold.pubtator')
    const pred = join(dir, 'pred.pubtator')
    writeFileSync(gold, '7|t|Zorblin causes kelp.\n7\t15\t19\tkelp\tSpecificDisease\n\n')
    writeFileSync(pred, '7|t|Zorblin causes kelp.\n7\t15\t19\tkelp\tDisease\n\n')
    const r = await capture(() => evalCmd(['--gold', gold, '--pred', pred]))
    expect(r.code).toBe(0)
    expect(r.err).toContain('warning: the predicted entity types (Disease) and the gold types (SpecificDisease) have none in common')
    expect((await capture(() => evalCmd(['--gold', gold, '--pred', pred, '-q']))).err).not.toContain('none in common')
    const mapped = await capture(() => evalCmd(['--gold', gold, '--pred', pred, '--map-types', 'SpecificDisease=Disease']))
    expect(mapped.err).not.toContain('none in common')
    expect(JSON.parse(mapped.out).overall.f1).toBe(1)
  })
})
