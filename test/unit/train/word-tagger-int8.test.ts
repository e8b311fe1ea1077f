// A word tagger's int8 folder (fastbioner quantize): the word-embedding table stored as int8 rows
// with one scale per word, the rest float32; it loads as the dequantized table, tags as the float
// model does within the calibration's tolerance, and is refused where int8 makes no sense.
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { headsOf, loadWordTagger, WORD_TAGGER_EMBEDDINGS } from '@core/model/word-tagger'
import { readSafetensors } from '@core/model/safetensors'
import { isInt8Folder, QUANTIZATION_KEY, quantizeModelFolder } from '@core/onnx/quantize'
import { readMetadata } from '@core/model/checkpoint-files'
import { int8LstmInputs } from '@core/onnx/recurrent'
import { WordTaggerEngine } from '@core/onnx/word-engine'
import type { InferenceBatch } from '@core/onnx/engine'
import { run as trainCmd } from '../../../src/cli/commands/train'
import { run as quantizeCmd } from '../../../src/cli/commands/quantize'
import { run as evalCmd } from '../../../src/cli/commands/eval'
import { capture } from '../cli/capture'

const FIX = resolve(__dirname, '../../fixtures/train')
let tmp: string
let float: string

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'fastbioner-word-int8-'))
  float = join(tmp, 'float')
  const tr = await capture(() => trainCmd(['--train', join(FIX, 'train.pubtator'), '--dev', join(FIX, 'dev.pubtator'), '--out', float, '--epochs', '4', '--seed', '1', '--threads', '1']))
  expect(tr.code, tr.err).toBe(0)
}, 240_000)
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

describe('word tagger int8', () => {
  it('quantize stores the word table as int8 rows, loads it dequantized and tags within the calibration drop', async () => {
    const out = join(tmp, 'int8')
    const q = await capture(() => quantizeCmd(['--model', float, '--out', out, '--calibrate', join(FIX, 'dev.pubtator'), '--max-f1-drop', '1']))
    expect(q.code, q.err).toBe(0)
    const summary = JSON.parse(q.out)
    expect(summary.onnxBytes).toBeNull()
    expect(summary.calibration.f1DropPoints).toBeLessThanOrEqual(1)
    expect(isInt8Folder(out)).toBe(true)
    const stored = readSafetensors(join(out, 'model.safetensors')).tensors
    expect(stored.get(WORD_TAGGER_EMBEDDINGS)!.dtype).toBe('I8')
    expect(stored.get('lstm.weight_ih')!.dtype).toBe('F32')
    const a = loadWordTagger(float)
    const b = loadWordTagger(out)
    // The table's 4 bytes a value become 1, plus a float scale a word (header bytes aside).
    const { wordVocabSize: V, wordDim: D } = a.config
    const saved = statSync(join(float, 'model.safetensors')).size - statSync(join(out, 'model.safetensors')).size
    expect(saved).toBeGreaterThan(3 * V * D - 4 * V - 512)
    for (const [name, value] of a.params) {
      const other = b.params.get(name)!
      if (name !== WORD_TAGGER_EMBEDDINGS) {
        expect(other, name).toEqual(value)
        continue
      }
      // Each word's row is within half a step of its scale (max |row| / 127).
      const dim = a.config.wordDim
      for (let r = 0; r < a.config.wordVocabSize; r++) {
        const row = value.subarray(r * dim, (r + 1) * dim)
        const step = Math.max(...row.map(Math.abs)) / 127
        for (let c = 0; c < dim; c++) expect(Math.abs(other[r * dim + c] - row[c])).toBeLessThanOrEqual(step / 2 + 1e-7)
      }
    }
    const ev = await capture(() => evalCmd(['--gold', join(FIX, 'dev.pubtator'), '--model', out]))
    expect(ev.code, ev.err).toBe(0)
    expect(JSON.parse(ev.out).overall.f1).toBeCloseTo(summary.calibration.int8.f1, 6)
    expect(summary.calibration.bytesRatio).toBeLessThan(1)
  }, 240_000)

  it('--int8-lstm: the BiLSTM runs with int8 weights, a scale per gate column, near the float emissions', async () => {
    const out = join(tmp, 'int8-lstm')
    const q = await capture(() => quantizeCmd(['--model', float, '--out', out, '--int8-lstm', '--calibrate', join(FIX, 'dev.pubtator'), '--max-f1-drop', '2']))
    expect(q.code, q.err).toBe(0)
    expect(readMetadata(out)![QUANTIZATION_KEY]).toMatchObject({ int8Lstm: true })
    // The file keeps the LSTM float32: it is quantized when the model loads.
    expect(readSafetensors(join(out, 'model.safetensors')).tensors.get('lstm.weight_ih')!.dtype).toBe('F32')
    const m = loadWordTagger(out)
    // Each weight within half a step of its column's scale, in ONNX's gate order (i, o, f, c).
    const H = m.config.lstmHidden
    const [wq, ws] = int8LstmInputs(m.params, m.config)
    const w = m.params.get('lstm.weight_ih')!
    const Din = w.length / (2 * 4 * H)
    const ours = [0, 2, 3, 1] // our block (i, f, g, o) of each ONNX block (i, o, f, c)
    for (let d = 0; d < 2; d++)
      for (let r = 0; r < Din; r += 3)
        for (let k = 0; k < 4 * H; k += 5) {
          const col = ours.indexOf(Math.floor(k / H)) * H + (k % H)
          const scale = ws.data[d * 4 * H + k]
          expect(Math.abs(wq.data[(d * Din + r) * 4 * H + k] * scale - w[(d * Din + r) * 4 * H + col])).toBeLessThanOrEqual(scale / 2 + 1e-7)
        }
    // The same weights through the float and the int8 recurrence: emissions close, not equal.
    const run = async (int8Lstm: boolean) => {
      const engine = new WordTaggerEngine(m.config, m.featurizer, headsOf(m.heads), m.params, { threads: 1, int8Lstm })
      const texts = ['Patients with cystic fibrosis and asthma were treated .'.split(' '), 'No fever .'.split(' ')]
      const r = await engine.run({ batch: 2, seq: 16, words: texts.map((t) => ({ texts: t, positions: t.map((_, i) => i) })) } as unknown as InferenceBatch)
      await engine.dispose()
      return Object.values(r.logits)[0]
    }
    const [a, b] = [await run(false), await run(true)]
    let diff = 0
    let scale = 0
    for (let i = 0; i < a.length; i++) {
      diff = Math.max(diff, Math.abs(a[i] - b[i]))
      scale = Math.max(scale, Math.abs(a[i]))
    }
    expect(diff).toBeGreaterThan(0)
    expect(diff).toBeLessThan(0.1 * scale)
    const ev = await capture(() => evalCmd(['--gold', join(FIX, 'dev.pubtator'), '--model', out]))
    expect(ev.code, ev.err).toBe(0)
    expect(JSON.parse(ev.out).overall.f1).toBeCloseTo(JSON.parse(q.out).calibration.int8.f1, 6)
  }, 240_000)

  it('refuses an int8 parent, --bits 7 and --float-embeddings for a word tagger, writing nothing', async () => {
    const int8 = join(tmp, 'int8-b')
    await quantizeModelFolder(float, int8)
    await expect(quantizeModelFolder(int8, join(tmp, 'again'))).rejects.toThrow(/already an int8 model/)
    await expect(quantizeModelFolder(float, join(tmp, 'seven'), { bits: 7 })).rejects.toThrow(/--bits 7 does not apply/)
    await expect(quantizeModelFolder(float, join(tmp, 'floaty'), { embeddings: false })).rejects.toThrow(/nothing to quantize/)
    for (const d of ['again', 'seven', 'floaty']) expect(() => statSync(join(tmp, d))).toThrow()
  }, 60_000)
})
