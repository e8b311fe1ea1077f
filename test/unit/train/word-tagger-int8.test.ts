// A word tagger's int8 folder (fastbioner quantize): the word-embedding table stored as int8 rows
// with one scale per word, the rest float32; it loads as the dequantized table, tags as the float
// model does within the calibration's tolerance, and is refused where int8 makes no sense.
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadWordTagger, WORD_TAGGER_EMBEDDINGS } from '@core/model/word-tagger'
import { readSafetensors } from '@core/model/safetensors'
import { isInt8Folder, quantizeModelFolder } from '@core/onnx/quantize'
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

  it('refuses an int8 parent, --bits 7 and --float-embeddings for a word tagger, writing nothing', async () => {
    const int8 = join(tmp, 'int8-b')
    await quantizeModelFolder(float, int8)
    await expect(quantizeModelFolder(int8, join(tmp, 'again'))).rejects.toThrow(/already an int8 model/)
    await expect(quantizeModelFolder(float, join(tmp, 'seven'), { bits: 7 })).rejects.toThrow(/--bits 7 does not apply/)
    await expect(quantizeModelFolder(float, join(tmp, 'floaty'), { embeddings: false })).rejects.toThrow(/nothing to quantize/)
    for (const d of ['again', 'seven', 'floaty']) expect(() => statSync(join(tmp, d))).toThrow()
  }, 60_000)
})
