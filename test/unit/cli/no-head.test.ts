// A model folder without a trained token-classification head (pretrain, wordvec or ELECTRA
// output) is refused with what to do, before any output is written (issue 27, item 4).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkTaggingHeads } from '@core/tag/open'
import { run as evalCmd } from '../../../src/cli/commands/eval'
import { run as quantizeCmd } from '../../../src/cli/commands/quantize'
import { run as tagCmd } from '../../../src/cli/commands/tag'
import { capture } from './capture'
import { saveTinyModel } from './tiny-model'

const PUBTATOR = '7|t|Zorvitis in mice.\n7|a|Patients with kalemia were treated.\n7\t0\t8\tZorvitis\tDisease\n\n'

let dir: string
let encoder: string
let electra: string
let tagger: string
let input: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'no-head-'))
  encoder = await saveTinyModel(dir, 'encoder', {})
  electra = await saveTinyModel(dir, 'electra', { rtd: ['original', 'replaced'] })
  tagger = await saveTinyModel(dir, 'tagger')
  input = join(dir, 'in.pubtator')
  writeFileSync(input, PUBTATOR)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('checkTaggingHeads', () => {
  it('accepts a trained tagger', () => {
    expect(() => checkTaggingHeads(tagger)).not.toThrow()
  })

  it('refuses an encoder without a head and an ELECTRA discriminator, saying to fine-tune with train --init', () => {
    expect(() => checkTaggingHeads(encoder)).toThrow(`${encoder} is not a token-classification model: head 'default' has no entity labels (only O)`)
    expect(() => checkTaggingHeads(encoder)).toThrow(`fastbioner train --init ${encoder} --train FILE --dev FILE --out DIR`)
    expect(() => checkTaggingHeads(electra)).toThrow(/head 'rtd' has labels original, replaced, not entity labels/)
  })

  it('refuses a head whose labels are in config.json but whose weights are not', () => {
    const cut = join(dir, 'labels-only')
    mkdirSync(cut)
    for (const f of ['vocab.txt', 'tokenizer_config.json']) writeFileSync(join(cut, f), readFileSync(join(tagger, f)))
    const encoderFiles = readdirSync(encoder)
    expect(encoderFiles).toContain('model.safetensors')
    writeFileSync(join(cut, 'model.safetensors'), readFileSync(join(encoder, 'model.safetensors')))
    writeFileSync(join(cut, 'config.json'), readFileSync(join(tagger, 'config.json')))
    expect(() => checkTaggingHeads(cut)).toThrow("head 'default' has no trained weights (classifier.weight)")
  })
})

describe('the commands refuse it with exit 1', () => {
  it('tag (one file) writes nothing', async () => {
    const out = join(dir, 'o.pubtator')
    const r = await capture(() => tagCmd(['--model', encoder, '--in', input, '--out', out]))
    expect(r.code).toBe(1)
    expect(r.err).toContain(`fastbioner tag: ${encoder} is not a token-classification model`)
    expect(r.err).toContain('train --init')
    expect(existsSync(out)).toBe(false)
  })

  it('tag --out-dir writes no output and no completion record', async () => {
    const out = join(dir, 'batch-out')
    const r = await capture(() => tagCmd(['--model', electra, '--in', input, '--out-dir', out]))
    expect(r.code).toBe(1)
    expect(r.err).toContain('is not a token-classification model')
    expect(existsSync(out) ? readdirSync(out) : []).toEqual([])
  })

  it('eval prints no F1', async () => {
    const r = await capture(() => evalCmd(['--gold', input, '--model', encoder]))
    expect(r.code).toBe(1)
    expect(r.out).toBe('')
    expect(r.err).toContain('is not a token-classification model')
  })

  it('quantize writes no model', async () => {
    const out = join(dir, 'q')
    const r = await capture(() => quantizeCmd(['--model', electra, '--out', out]))
    expect(r.code).toBe(1)
    expect(r.err).toContain('is not a token-classification model')
    expect(existsSync(out)).toBe(false)
  })
})
