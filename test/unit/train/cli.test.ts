// train → tag → eval → encode through the command modules' run(), on invented fixtures.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run as trainCmd } from '../../../src/cli/commands/train'
import { run as tagCmd } from '../../../src/cli/commands/tag'
import { run as evalCmd } from '../../../src/cli/commands/eval'
import { run as encodeCmd } from '../../../src/cli/commands/encode'
import { readCorpusFile } from '@core/corpus'
import { SafetensorsReader } from '@core/model/safetensors'
import { capture } from '../cli/capture'

const FIX = resolve(__dirname, '../../fixtures/train')
let tmp: string

describe('CLI: train → tag → eval → encode', () => {
  beforeAll(() => {
    process.env.FASTBIONER_BACKEND ??= 'wasm'
    tmp = mkdtempSync(join(tmpdir(), 'fastbioner-cli-'))
  })
  afterAll(() => rmSync(tmp, { recursive: true, force: true }))

  it('trains from scratch, tags, scores and encodes consistently', async () => {
    const model = join(tmp, 'model')
    const tr = await capture(() =>
      trainCmd([
        '--train', join(FIX, 'train.pubtator'), '--dev', join(FIX, 'dev.pubtator'), '--out', model,
        '--preset', 'cpu-tiny', '--epochs', '3', '--seed', '1', '--batch-size', '16', '--lr', '2e-3', '--max-length', '32', '--vocab-size', '400',
      ]),
    )
    expect(tr.err).toMatch(/step \d+\/\d+ loss/)
    expect(tr.code).toBe(0)
    const summary = JSON.parse(tr.out)
    expect(summary.labels).toEqual(['O', 'B-Disease', 'I-Disease'])
    expect(summary.epochs).toHaveLength(3)
    expect(summary.best_dev_f1).toBeGreaterThan(0.9)
    expect(summary.trainer).toBe('onnxruntime-cpu')
    expect(summary.tokens_per_second).toBeGreaterThan(0)
    // From scratch the recipe's levers are on by default: a CRF and mention replacement.
    expect(summary.crf_heads).toEqual(['default'])
    expect(summary.averaged).toBeNull()
    for (const f of ['config.json', 'vocab.txt', 'model.safetensors', 'fastbioner.json']) expect(existsSync(join(model, f))).toBe(true)

    // A finished run has nothing to resume; extending it is --init's job, so --epochs is refused.
    const again = await capture(() => trainCmd(['--resume', '--out', model, '--epochs', '4']))
    expect(again.code).toBe(2)
    expect(again.err).toMatch(/as it was started.*give no --epochs/)

    const predPath = join(tmp, 'pred.json')
    const tg = await capture(() => tagCmd(['--model', model, '--in', join(FIX, 'dev.pubtator'), '--out', predPath, '--format', 'bioc']))
    expect(tg.code).toBe(0)
    // onnxruntime on our own export of the weights (kept in the per-user cache): the model folder is left as it was.
    expect(tg.err).toMatch(/engine: onnxruntime-cpu \(/)
    expect(existsSync(join(model, 'model.onnx'))).toBe(false)
    const pred = await readCorpusFile(predPath)
    expect(pred.format).toBe('bioc-json')
    expect(pred.documents).toHaveLength(12)

    const evPred = await capture(() => evalCmd(['--gold', join(FIX, 'dev.pubtator'), '--pred', predPath]))
    expect(evPred.code).toBe(0)
    const a = JSON.parse(evPred.out)
    expect(Object.keys(a)).toEqual(expect.arrayContaining(['overall', 'types', 'token_accuracy']))
    for (const k of ['precision', 'recall', 'f1']) {
      expect(a.overall[k]).toBeGreaterThanOrEqual(0)
      expect(a.overall[k]).toBeLessThanOrEqual(1)
    }
    expect(Object.keys(a.types)).toEqual(['Disease'])
    expect(a.token_accuracy).toBeGreaterThan(0.9)
    // The saved model is the best epoch's: tagging reproduces the devel F1 seen in training.
    expect(a.overall.f1).toBeCloseTo(summary.best_dev_f1, 6)

    const evModel = await capture(() => evalCmd(['--gold', join(FIX, 'dev.pubtator'), '--model', model, '-q']))
    expect(evModel.code).toBe(0)
    expect(JSON.parse(evModel.out).overall).toEqual(a.overall)

    // Fine-tuning path: --init loads the checkpoint (same labels, so its head is kept).
    const tuned = join(tmp, 'tuned')
    const ft = await capture(() =>
      trainCmd(['--train', join(FIX, 'train.pubtator'), '--dev', join(FIX, 'dev.pubtator'), '--out', tuned, '--init', model, '--epochs', '1', '--max-steps', '2', '--max-length', '32', '-q']),
    )
    expect(ft.code).toBe(0)
    const ftSummary = JSON.parse(ft.out)
    expect(ftSummary.init).toBe(model)
    expect(ftSummary.steps).toBe(2)
    expect(ftSummary.best_dev_f1).toBeGreaterThan(0.8) // starts from the trained weights

    const input = join(tmp, 'in.json')
    writeFileSync(input, JSON.stringify({ input_ids: [[2, 10, 11, 3], [2, 12, 3, 0]], attention_mask: [[1, 1, 1, 1], [1, 1, 1, 0]], token_type_ids: [[0, 0, 0, 0], [0, 0, 0, 0]] }))
    const encOut = join(tmp, 'enc.json')
    const en = await capture(() => encodeCmd(['--model', model, '--input', input, '--out', encOut, '-q']))
    expect(en.code).toBe(0)
    const enc = JSON.parse(readFileSync(encOut, 'utf8'))
    expect(enc.logits).toHaveLength(2)
    expect(enc.logits[0]).toHaveLength(4)
    expect(enc.logits[0][0]).toHaveLength(3)
    expect(enc.hidden_states).toHaveLength(3) // embeddings + 2 layers (cpu-tiny)
    expect(enc.hidden_states[2][1][3]).toHaveLength(128)
    expect(enc.attentions).toHaveLength(2)
    expect(enc.attentions[0][1]).toHaveLength(2) // heads
    const row = enc.attentions[1][1][0][0] as number[] // batch 1, head 0, query 0
    expect(row[3]).toBe(0) // padded key
    expect(row.reduce((s, x) => s + x, 0)).toBeCloseTo(1, 5)
  }, 120_000)

  it('--crf: trains a CRF with the encoder, saves it, and tagging decodes as training evaluated', async () => {
    const model = join(tmp, 'crf')
    const args = ['--train', join(FIX, 'train.pubtator'), '--dev', join(FIX, 'dev.pubtator'), '--preset', 'cpu-tiny', '--seed', '1', '--batch-size', '16', '--lr', '2e-3', '--max-length', '32', '--vocab-size', '400', '-q']
    const tr = await capture(() => trainCmd([...args, '--out', model, '--epochs', '3', '--crf', '--average-last', '2']))
    expect(tr.code).toBe(0)
    const summary = JSON.parse(tr.out)
    expect(summary.crf_heads).toEqual(['default'])
    expect(summary.averaged.epochs).toEqual([2, 3])
    expect(summary.trainer).toBe('onnxruntime-cpu')
    expect(summary.best_dev_f1).toBeGreaterThan(0.8)
    // --no-crf turns the default off; both flags at once are refused.
    const plainRun = await capture(() => trainCmd([...args, '--out', join(tmp, 'nocrf'), '--epochs', '1', '--max-steps', '2', '--no-crf', '--augment-mentions', '0', '--average-last', '0']))
    expect(plainRun.code).toBe(0)
    const plainSummary = JSON.parse(plainRun.out)
    expect(plainSummary).toMatchObject({ crf_heads: [], averaged: null })
    expect(plainSummary.train_examples).toBeLessThan(summary.train_examples * 0.6) // no mention-replaced copy
    expect((await capture(() => trainCmd([...args, '--out', join(tmp, 'both'), '--crf', '--no-crf']))).err).toMatch(/either --crf or --no-crf/)
    const stored = SafetensorsReader.open(join(model, 'model.safetensors'))
    const transitions = stored.read('crf.transitions')
    expect(transitions.shape).toEqual([3, 3])
    expect([...transitions.data].some((x) => Math.abs(x) > 1e-3)).toBe(true) // learnt, not the zero start
    const ev = await capture(() => evalCmd(['--gold', join(FIX, 'dev.pubtator'), '--model', model, '-q']))
    expect(ev.code).toBe(0)
    expect(JSON.parse(ev.out).overall.f1).toBeCloseTo(summary.best_dev_f1, 6)
    // A run started without a CRF cannot gain one on --resume.
    const plain = join(tmp, 'plain')
    expect((await capture(() => trainCmd([...args, '--out', plain, '--epochs', '1', '--no-crf']))).code).toBe(0)
    const res = await capture(() => trainCmd(['--out', plain, '--resume', '--crf']))
    expect(res.code).toBe(2)
    expect(res.err).toMatch(/as it was started.*give no --crf/)
  }, 120_000)

  it('--resume after Ctrl-C continues the run with the inputs and settings it was started with', async () => {
    const model = join(tmp, 'stopped')
    // Ctrl-C (the handler train installs) once the first epoch is saved.
    const poll = setInterval(() => {
      if (!existsSync(join(model, 'fastbioner.json'))) return
      clearInterval(poll)
      ;(process.listeners('SIGINT').at(-1) as () => void)()
    }, 20)
    const first = await capture(() =>
      trainCmd([
        '--train', join(FIX, 'train.pubtator'), '--dev', join(FIX, 'dev.pubtator'), '--out', model,
        '--preset', 'cpu-tiny', '--epochs', '4', '--seed', '3', '--batch-size', '8', '--lr', '2e-3', '--max-length', '32', '--vocab-size', '400', '--threads', '1',
      ]),
    ).finally(() => clearInterval(poll))
    expect(first.code, first.err).toBe(130)
    const stopped = JSON.parse(first.out)
    expect(stopped.epochs.length).toBeLessThan(4)
    // Nothing but --out (and --threads, -q): the corpus, epochs, batch size, … come from the run.
    const more = await capture(() => trainCmd(['--resume', '--out', model, '--threads', '1', '-q']))
    expect(more.code, more.err).toBe(0)
    const resumed = JSON.parse(more.out)
    expect(resumed.resumed_after_epoch).toBe(stopped.epochs.filter((e: { saved: boolean }) => e.saved).at(-1).epoch)
    expect(resumed.epochs.at(-1).epoch).toBe(4)
    expect(JSON.parse(readFileSync(join(model, 'fastbioner.json'), 'utf8')).training).toMatchObject({ batchSize: 8, seed: 3 })
    for (const extra of [['--epochs', '6'], ['--train', join(FIX, 'train.pubtator')], ['--lr', '1e-3']]) {
      const r = await capture(() => trainCmd(['--resume', '--out', model, ...extra]))
      expect(r.code).toBe(2)
      expect(r.err).toContain(`give no ${extra[0]}`)
    }
    // A folder that does not record how it was started is not guessed at.
    const bare = join(tmp, 'bare')
    cpSync(model, bare, { recursive: true })
    const meta = JSON.parse(readFileSync(join(bare, 'fastbioner.json'), 'utf8'))
    delete meta.source.options
    writeFileSync(join(bare, 'fastbioner.json'), JSON.stringify(meta))
    const old = await capture(() => trainCmd(['--resume', '--out', bare]))
    expect(old.code).toBe(1)
    expect(old.err).toMatch(/does not record the options it was started with.*--init/)
  }, 120_000)

  it('reports usage and input problems with exit codes and actionable messages', async () => {
    const noTrain = await capture(() => trainCmd(['--out', join(tmp, 'x')]))
    expect(noTrain.code).toBe(2)
    expect(noTrain.err).toContain('--train is required')

    const both = await capture(() => trainCmd(['--train', 'a', '--out', 'b', '--init', 'c', '--preset', 'cpu-tiny']))
    expect(both.code).toBe(2)

    const missingModel = await capture(() => tagCmd(['--model', join(tmp, 'nope'), '--in', join(FIX, 'dev.pubtator'), '--out', join(tmp, 'o.pubtator'), '-q']))
    expect(missingModel.code).toBe(1)
    expect(missingModel.err).toMatch(/nope.*config\.json/)

    const badFile = join(tmp, 'bad.pubtator')
    writeFileSync(badFile, '123|t|Title\n123|a|Abstract text\n123\t5\t999\tx\tDisease\t-\n')
    const bad = await capture(() => evalCmd(['--gold', badFile, '--pred', join(FIX, 'dev.pubtator')]))
    expect(bad.code).toBe(1)
    expect(bad.err).toMatch(/bad\.pubtator:\d+/)

    const predAndModel = await capture(() => evalCmd(['--gold', 'g', '--pred', 'p', '--model', 'm']))
    expect(predAndModel.code).toBe(2)

    const badJson = join(tmp, 'bad.json')
    writeFileSync(badJson, JSON.stringify({ input_ids: [[1, 2], [3]] }))
    const enc = await capture(() => encodeCmd(['--model', join(tmp, 'model'), '--input', badJson, '--out', join(tmp, 'e.json')]))
    expect(enc.code).toBe(1)
    expect(enc.err).toContain('row 1 has 1 entries')
  })
})
