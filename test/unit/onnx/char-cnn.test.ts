// The BERT encoder's character channel (core/model/char-cnn.ts) outside training: its host inputs
// per piece, the exported ONNX graph against the tfjs forward (both engines of a saved folder),
// save/load of the weights and chars.txt, a channel added to a model changing nothing until it
// trains, and the int8 folder (the channel stays float32).
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as tf from '@tensorflow/tfjs-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BertTokenClassifier, makeBertConfig, type BertConfig } from '@core/model/bert'
import { loadCheckpoint, saveCheckpoint } from '@core/model/checkpoint'
import { attachCharInputs, charCnnConfig, charCnnFromHf, charCnnToHf, charVocabulary, pieceCharInputs, type CharPieces } from '@core/model/char-cnn'
import { readCheckpointInfo } from '@core/model/checkpoint-files'
import { labelMapFromLabels } from '@core/nlp/bio'
import { planTagging } from '@core/nlp/examples'
import { WordPieceTokenizer } from '@core/nlp/tokenizer'
import { readSafetensorsNames } from '@core/model/safetensors'
import { openInferenceEngine, type InferenceBatch } from '@core/onnx/session'
import { quantizeModelFolder } from '@core/onnx/quantize'
import { collate, modelInputs, toTensors, type HostBatch } from '@core/train/batching'
import { Rng } from '@core/rng'
import { useCpuBackend } from '../train/tfSetup'
import { maxAbsDiff } from './helpers'

const VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', '.', ',', '-', '6', 'inter', '##leu', '##kin', 'levels', 'of', 'in', 'the', 'were', 'high', 'patients', 'with', 'colitis', 'car', '##cin', '##oma']
const CHARS = charVocabulary(['<pad>', '<unk>', ...'abcdefghijklmnopqrstuvwxyz-6I'])
const LABELS = { default: ['O', 'B-Disease', 'I-Disease'], chem: ['O', 'B-Chemical', 'I-Chemical'] }
const TEXTS = [
  'Interleukin-6 levels were high in patients with colitis.',
  'The carcinoma of patients with IL-6.',
  'Colitis, carcinoma.',
]
const tokenizer = new WordPieceTokenizer(VOCAB, { lowercase: true })
let tmp: string

function config(pieces: CharPieces): BertConfig {
  return makeBertConfig({
    vocabSize: VOCAB.length,
    hiddenSize: 16,
    numHiddenLayers: 2,
    numAttentionHeads: 2,
    intermediateSize: 32,
    maxPositionEmbeddings: 40,
    charCnn: charCnnConfig(CHARS, { charDim: 4, charFilters: 6, charWidth: 3, maxChars: 7, pieces }),
  })
}

/** Every parameter random and far from zero (the projection too), so the channel shows in the logits. */
function randomCharModel(pieces: CharPieces, seed: number): BertTokenClassifier {
  const model = BertTokenClassifier.random(config(pieces), seed, LABELS, CHARS)
  const rng = new Rng(seed + 1)
  for (const [name, v] of model.variables()) {
    const mean = name.includes('LayerNorm.weight') ? 1 : 0
    v.assign(tf.tensor(rng.normalArray(v.size, name.includes('LayerNorm') ? 0.1 : 0.4, mean), v.shape))
  }
  return model
}

/** Tagging windows of TEXTS with their character inputs, collated as the tagger does. */
function batchOf(pieces: CharPieces): HostBatch {
  const examples = TEXTS.flatMap((text, i) => {
    const plan = planTagging({ id: String(i), text }, tokenizer, labelMapFromLabels(LABELS.default), { maxLength: 32, sentenceLevel: false })
    return attachCharInputs(plan.examples, text, CHARS, config(pieces).charCnn!)
  })
  return collate(examples, examples.map((_, i) => i))
}

const inferenceBatch = (h: HostBatch): InferenceBatch => ({ inputIds: h.inputIds, attentionMask: h.attentionMask, tokenTypeIds: h.tokenTypeIds, batch: h.batchSize, seq: h.seqLen, chars: h.chars })

function tfjsLogits(model: BertTokenClassifier, h: HostBatch): Record<string, Float32Array> {
  return tf.tidy(() => {
    const out = model.forward(modelInputs(toTensors(h)))
    return Object.fromEntries(Object.entries(out.logits).map(([k, t]) => [k, t.dataSync() as Float32Array]))
  })
}

beforeAll(async () => {
  await useCpuBackend()
  tmp = mkdtempSync(join(tmpdir(), 'fastbioner-charcnn-'))
})
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

describe('character inputs of the pieces', () => {
  it("gives every piece of a word its word's characters and flags ('all'), or its first piece only ('first'); special tokens none", () => {
    const text = TEXTS[0]
    const [ex] = planTagging({ id: 'a', text }, tokenizer, labelMapFromLabels(LABELS.default), { maxLength: 32, sentenceLevel: false }).examples
    const L = 7
    const row = (a: Int32Array, p: number) => Array.from(a.subarray(p * L, (p + 1) * L))
    const ids = (w: string) => [...w].slice(0, L).map((ch) => CHARS.charId(ch)).concat(Array(Math.max(0, L - [...w].length)).fill(0))
    // [CLS] inter ##leu ##kin - 6 levels …
    expect(Array.from(ex.inputIds.subarray(1, 4), (i) => VOCAB[i])).toEqual(['inter', '##leu', '##kin'])
    const all = pieceCharInputs(ex, text, CHARS, config('all').charCnn!)
    const first = pieceCharInputs(ex, text, CHARS, config('first').charCnn!)
    expect(row(all.charIds, 0)).toEqual(Array(L).fill(0))
    expect(row(all.charIds, ex.inputIds.length - 1)).toEqual(Array(L).fill(0))
    for (const p of [1, 2, 3]) expect(row(all.charIds, p)).toEqual(ids('Interleukin'))
    expect(row(first.charIds, 1)).toEqual(ids('Interleukin'))
    for (const p of [2, 3]) expect(row(first.charIds, p)).toEqual(Array(L).fill(0))
    // 'I' is in the vocabulary, 'L' is not: <unk>
    expect(CHARS.charId('L')).toBe(1)
    // initial capital; not all capitals; no digit; has letters
    expect(Array.from(all.shapeFlags.subarray(4, 8))).toEqual([1, 0, 0, 0])
    expect(Array.from(all.shapeFlags.subarray(0, 4))).toEqual([0, 0, 0, 0])
  })
})

describe('config.json char_cnn and chars.txt', () => {
  it('reads back what it writes, and refuses sizes it cannot run or a chars.txt of another size, naming the file', async () => {
    const cc = config('first').charCnn!
    expect(charCnnFromHf(charCnnToHf(cc))).toEqual(cc)
    expect(() => charCnnFromHf({ ...charCnnToHf(cc), width: 4 })).toThrow(/width must be odd/)
    expect(() => charCnnFromHf({ ...charCnnToHf(cc), pieces: 'last' })).toThrow(/pieces/)
    expect(() => charCnnFromHf({ ...charCnnToHf(cc), dim: '30' })).toThrow(/char_cnn.dim/)
    const model = BertTokenClassifier.random(config('first'), 1, LABELS, CHARS)
    const dir = join(tmp, 'bad-chars')
    await saveCheckpoint(dir, model, VOCAB, { lowercase: true })
    model.dispose()
    expect(readCheckpointInfo(dir).chars?.chars).toEqual(CHARS.chars)
    writeFileSync(join(dir, 'chars.txt'), CHARS.chars.slice(0, -1).join('\n') + '\n')
    expect(() => readCheckpointInfo(dir)).toThrow(/chars\.txt: \d+ characters, config.json says/)
    rmSync(join(dir, 'chars.txt'))
    expect(() => readCheckpointInfo(dir)).toThrow(/chars\.txt: missing/)
  })
})

describe('the character channel on both engines', () => {
  for (const pieces of ['all', 'first'] as const) {
    it(`a saved folder loads back exactly and both engines give the tfjs logits (pieces: '${pieces}')`, async () => {
      const model = randomCharModel(pieces, 5)
      const dir = join(tmp, `float-${pieces}`)
      await saveCheckpoint(dir, model, VOCAB, { lowercase: true })
      const h = batchOf(pieces)
      const want = tfjsLogits(model, h)
      try {
        expect(readFileSync(join(dir, 'chars.txt'), 'utf8')).toBe(CHARS.chars.join('\n') + '\n')
        const cfg = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))
        expect(cfg.char_cnn).toEqual({ vocab_size: CHARS.chars.length, dim: 4, filters: 6, width: 3, max_chars: 7, shape_flags: 4, pieces, feature_scale: 1 / (6 + 4) })
        // Extra tensors beside the HF names, Linear weights in torch's [out, in].
        expect(readSafetensorsNames(join(dir, 'model.safetensors')).filter((n) => n.includes('char_cnn')).sort()).toEqual([
          'bert.embeddings.char_cnn.char_embeddings.weight',
          'bert.embeddings.char_cnn.conv.bias',
          'bert.embeddings.char_cnn.conv.weight',
          'bert.embeddings.char_cnn.projection.bias',
          'bert.embeddings.char_cnn.projection.weight',
        ])
        const back = await loadCheckpoint(dir, { trainable: false })
        try {
          expect(back.model.config.charCnn).toEqual(model.config.charCnn)
          expect(back.model.charVocab?.chars).toEqual(CHARS.chars)
          for (const [name, v] of model.variables()) expect(Array.from(back.model.variables().get(name)!.dataSync()), name).toEqual(Array.from(v.dataSync()))
        } finally {
          back.model.dispose()
        }

        const ortEngine = await openInferenceEngine(dir, { export: 'memory', threads: 1, logger: () => {}, env: {} })
        const tfjsEngine = await openInferenceEngine(dir, { prefer: 'tfjs', logger: () => {}, env: {} })
        try {
          expect(ortEngine.engine).toBe('onnxruntime-cpu')
          const a = await ortEngine.run(inferenceBatch(h))
          const b = await tfjsEngine.run(inferenceBatch(h))
          for (const head of Object.keys(LABELS)) {
            expect(maxAbsDiff(a.logits[head], want[head]), `onnxruntime ${head}`).toBeLessThan(1e-4)
            expect(maxAbsDiff(b.logits[head], want[head]), `tfjs ${head}`).toBeLessThan(1e-5)
          }
          // The characters reach the logits: without them (all <pad>) the real rows change.
          const blank = { ...h.chars!, charIds: new Int32Array(h.chars!.charIds.length) }
          const c = await ortEngine.run({ ...inferenceBatch(h), chars: blank })
          expect(maxAbsDiff(c.logits.default, want.default)).toBeGreaterThan(1e-2)
        } finally {
          await ortEngine.dispose()
          await tfjsEngine.dispose()
        }
      } finally {
        model.dispose()
      }
    })
  }

  it('a channel added to an encoder changes nothing until it trains (its projection starts at zero)', () => {
    const plain = BertTokenClassifier.random({ ...config('all'), charCnn: undefined }, 9, LABELS)
    const h = batchOf('all')
    const before = tfjsLogits(plain, { ...h, chars: undefined })
    plain.addCharCnn(CHARS, { charDim: 4, charFilters: 6, maxChars: 7 }, 3)
    try {
      expect(plain.config.charCnn?.maxChars).toBe(7)
      const after = tfjsLogits(plain, h)
      for (const head of Object.keys(LABELS)) expect(Array.from(after[head])).toEqual(Array.from(before[head]))
    } finally {
      plain.dispose()
    }
  })

  it('an int8 folder keeps the channel float32 and chars.txt, and tags like its float parent', async () => {
    const model = randomCharModel('all', 12)
    const dir = join(tmp, 'float-int8-parent')
    await saveCheckpoint(dir, model, VOCAB, { lowercase: true })
    const h = batchOf('all')
    const want = tfjsLogits(model, h)
    model.dispose()
    const out = join(tmp, 'int8')
    const r = await quantizeModelFolder(dir, out)
    expect(readdirSync(out)).toContain('chars.txt')
    expect(r.info.int8Tensors.filter((n) => n.includes('char_cnn'))).toEqual([])
    expect(r.info.int8Tensors.length).toBeGreaterThan(0)
    for (const prefer of ['onnx', 'tfjs'] as const) {
      const engine = await openInferenceEngine(out, { prefer, export: 'memory', threads: 1, logger: () => {}, env: {} })
      try {
        const got = await engine.run(inferenceBatch(h))
        for (const head of Object.keys(LABELS)) {
          const range = Math.max(...Array.from(want[head], Math.abs))
          expect(maxAbsDiff(got.logits[head], want[head]), `${prefer} ${head}`).toBeLessThan(0.1 * range)
        }
      } finally {
        await engine.dispose()
      }
    }
  })
})
