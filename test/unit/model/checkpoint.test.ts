// Checkpoint IO: round trip, atomic writes, HF-variant tolerance, clear errors, half floats.

import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as tf from '@tensorflow/tfjs-core'
import { removeStaleTempFiles, TEMP_PREFIX, writeFileAtomic } from '@core/fs/atomic'
import { useBackend } from '@core/model/backend'
import { BertTokenClassifier, makeBertConfig } from '@core/model/bert'
import { loadCheckpoint, saveCheckpoint } from '@core/model/checkpoint'
import { fromHalf, toHalf } from '@core/model/f16'
import { parseSafetensors, readSafetensors, serializeSafetensors, type TensorToWrite } from '@core/model/safetensors'

const root = mkdtempSync(join(tmpdir(), 'fastbioner-ckpt-'))
let n = 0
const freshDir = () => join(root, `d${++n}`)
afterAll(() => rmSync(root, { recursive: true, force: true }))
beforeAll(async () => {
  await useBackend('cpu')
})

const config = makeBertConfig({ vocabSize: 24, hiddenSize: 8, numHiddenLayers: 2, numAttentionHeads: 2, intermediateSize: 16, maxPositionEmbeddings: 10 })
const VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'The', 'cell', '##s', ...Array.from({ length: 16 }, (_, i) => `t${i}`)]
const HEADS = { default: ['O', 'B-Gene', 'I-Gene'], ncbi: ['O', 'B-Disease', 'I-Disease', 'X'] }

function concatChunks(chunks: Uint8Array[]): Buffer {
  return Buffer.concat(chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength)))
}

function forwardLogits(model: BertTokenClassifier): Record<string, number[]> {
  return tf.tidy(() => {
    const out = model.forward({
      inputIds: tf.tensor2d([[2, 5, 6, 7, 3], [2, 9, 3, 0, 0]], [2, 5], 'int32'),
      attentionMask: tf.tensor2d([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], [2, 5], 'int32'),
    })
    return Object.fromEntries(Object.entries(out.logits).map(([k, v]) => [k, Array.from(v.dataSync())]))
  })
}

/** Rewrites a checkpoint's weights through `map` (name/tensor → new entries). */
function rewriteWeights(dir: string, map: (name: string, t: TensorToWrite) => Array<[string, TensorToWrite]>, extra: Array<[string, TensorToWrite]> = []) {
  const { tensors } = readSafetensors(join(dir, 'model.safetensors'))
  const out = new Map<string, TensorToWrite>(extra)
  for (const [name, t] of tensors) for (const [k, v] of map(name, { shape: t.shape, data: t.data })) out.set(k, v)
  writeFileSync(join(dir, 'model.safetensors'), concatChunks(serializeSafetensors(out, { format: 'pt' })))
}

describe('round trip', () => {
  test('save → load gives identical tensors, heads and forward', async () => {
    const dir = freshDir()
    const model = BertTokenClassifier.random(config, 5, HEADS)
    const meta = { epochs: 3, corpus: 'unit-test', f1: 0.5 }
    await saveCheckpoint(dir, model, VOCAB, { lowercase: false, metadata: meta })
    expect(readdirSync(dir).sort()).toEqual(['config.json', 'fastbioner.json', 'model.safetensors', 'tokenizer_config.json', 'vocab.txt'])

    // HF layout on disk
    const cfg = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))
    expect(cfg).toMatchObject({
      model_type: 'bert', architectures: ['BertForTokenClassification'], hidden_size: 8, num_hidden_layers: 2,
      num_attention_heads: 2, intermediate_size: 16, vocab_size: 24, hidden_act: 'gelu', layer_norm_eps: 1e-12,
      id2label: { 0: 'O', 1: 'B-Gene', 2: 'I-Gene' }, label2id: { O: 0, 'B-Gene': 1, 'I-Gene': 2 },
    })
    const st = readSafetensors(join(dir, 'model.safetensors'))
    expect(st.metadata).toEqual({ format: 'pt' })
    expect(st.tensors.get('classifier.weight')!.shape).toEqual([3, 8])
    expect(st.tensors.get('classifiers.ncbi.weight')!.shape).toEqual([4, 8])
    expect(st.tensors.get('bert.encoder.layer.1.intermediate.dense.weight')!.shape).toEqual([16, 8]) // torch [out, in]
    expect(st.tensors.has('bert.encoder.layer.0.attention.output.LayerNorm.weight')).toBe(true)
    expect(st.tensors.size).toBe(5 + 2 * 16 + 4)

    const loaded = await loadCheckpoint(dir)
    try {
      expect(loaded.vocab).toEqual(VOCAB)
      expect(loaded.lowercase).toBe(false)
      expect(loaded.metadata).toEqual(meta)
      expect(loaded.config).toEqual(config)
      expect(Object.fromEntries([...loaded.model.heads].map(([k, v]) => [k, v.labels]))).toEqual(HEADS)
      const a = model.variables()
      const b = loaded.model.variables()
      expect([...b.keys()].sort()).toEqual([...a.keys()].sort())
      for (const [name, v] of a) {
        expect(b.get(name)!.shape, name).toEqual(v.shape)
        expect(Array.from(b.get(name)!.dataSync()), name).toEqual(Array.from(v.dataSync()))
      }
      expect(forwardLogits(loaded.model)).toEqual(forwardLogits(model))
      expect(loaded.model.numParameters()).toBe(model.numParameters())
    } finally {
      model.dispose()
      loaded.model.dispose()
    }
  })

  test('a half-precision (F16) copy of the weights loads as float32', async () => {
    const dir = freshDir()
    const model = BertTokenClassifier.random(config, 6, { default: HEADS.default })
    await saveCheckpoint(dir, model, VOCAB)
    rewriteWeights(dir, (name, t) => [[name, { ...t, dtype: 'F16' }]])
    expect(readSafetensors(join(dir, 'model.safetensors')).tensors.get('bert.embeddings.word_embeddings.weight')!.dtype).toBe('F16')
    const loaded = await loadCheckpoint(dir)
    const w = loaded.model.variables().get('bert.embeddings.word_embeddings.weight')!.dataSync()
    const orig = model.variables().get('bert.embeddings.word_embeddings.weight')!.dataSync()
    expect(Array.from(w)).toEqual(Array.from(orig, (v) => fromHalf(toHalf(v))))
    model.dispose()
    loaded.model.dispose()
  })
})

describe('loading HF variants', () => {
  test('bare BertModel names, gamma/beta, pooler + MLM heads, no classifier, cased vocab', async () => {
    const dir = freshDir()
    const model = BertTokenClassifier.random(config, 7, { default: ['O'] })
    await saveCheckpoint(dir, model, VOCAB) // no tokenizer_config.json
    const cfg = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))
    delete cfg.id2label
    delete cfg.label2id
    delete cfg.fastbioner_heads
    cfg.architectures = ['BertForPreTraining']
    writeFileSync(join(dir, 'config.json'), JSON.stringify(cfg))
    const vec = (k: number) => ({ shape: [k], data: new Float32Array(k) })
    rewriteWeights(
      dir,
      (name, t) => {
        if (name.startsWith('classifier')) return []
        const renamed = name.replace(/^bert\./, '').replace(/LayerNorm\.weight$/, 'LayerNorm.gamma').replace(/LayerNorm\.bias$/, 'LayerNorm.beta')
        return [[renamed, t]]
      },
      [
        ['pooler.dense.weight', { shape: [8, 8], data: new Float32Array(64) }],
        ['pooler.dense.bias', vec(8)],
        ['cls.predictions.bias', vec(24)],
        ['cls.predictions.transform.dense.weight', { shape: [8, 8], data: new Float32Array(64) }],
        ['embeddings.position_ids', { shape: [1, 10], data: Int32Array.from({ length: 10 }, (_, i) => i), dtype: 'I64' }],
      ],
    )
    const names = [...readSafetensors(join(dir, 'model.safetensors')).tensors.keys()]
    expect(names).toContain('embeddings.LayerNorm.gamma')
    expect(names.some((x) => x.startsWith('bert.'))).toBe(false)

    const labels = ['O', 'B-Chemical', 'I-Chemical']
    const loaded = await loadCheckpoint(dir, { heads: { default: labels }, seed: 3 })
    try {
      expect(loaded.lowercase).toBe(false) // 'The' in the vocabulary: cased
      expect(loaded.model.heads.get('default')!.labels).toEqual(labels)
      const notes = loaded.notes.join('\n')
      expect(notes).toMatch(/ignored 5 tensor/)
      expect(notes).toMatch(/no classifier in the checkpoint; initialised a fresh head with 3 labels/)
      expect(notes).toMatch(/vocabulary looks cased/)
      for (const [name, v] of model.variables()) {
        if (name.startsWith('classifier')) continue
        expect(Array.from(loaded.model.variables().get(name)!.dataSync()), name).toEqual(Array.from(v.dataSync()))
      }
      expect(loaded.model.variables().get('classifier.weight')!.shape).toEqual([8, 3])
    } finally {
      model.dispose()
      loaded.model.dispose()
    }
  })

  test('tokenizer_config.json do_lower_case wins over the vocabulary', async () => {
    const dir = freshDir()
    const model = BertTokenClassifier.random(config, 8)
    await saveCheckpoint(dir, model, VOCAB, { lowercase: true })
    const loaded = await loadCheckpoint(dir)
    expect(loaded.lowercase).toBe(true)
    model.dispose()
    loaded.model.dispose()
  })

  test('a stored head with other labels is replaced by a fresh one', async () => {
    const dir = freshDir()
    const model = BertTokenClassifier.random(config, 9, { default: ['O', 'B-X', 'I-X'] })
    await saveCheckpoint(dir, model, VOCAB)
    const loaded = await loadCheckpoint(dir, { heads: { default: ['O', 'B-Y', 'I-Y'] } })
    expect(loaded.notes.join('\n')).toMatch(/stored labels differ/)
    expect(loaded.model.heads.get('default')!.labels).toEqual(['O', 'B-Y', 'I-Y'])
    model.dispose()
    loaded.model.dispose()
  })
})

describe('errors', () => {
  test('a pytorch_model.bin that is not torch.save\'s zip format: says how to convert', async () => {
    const dir = freshDir()
    const model = BertTokenClassifier.random(config, 10)
    await saveCheckpoint(dir, model, VOCAB)
    model.dispose()
    rmSync(join(dir, 'model.safetensors'))
    writeFileSync(join(dir, 'pytorch_model.bin'), 'not really a pickle')
    await expect(loadCheckpoint(dir)).rejects.toThrow(/pytorch_model\.bin: .*model\.safetensors.*AutoModelForTokenClassification.*save_pretrained\(d, safe_serialization=True\)/)
  })

  test('missing tensor and wrong shape name the tensor', async () => {
    const dir = freshDir()
    const model = BertTokenClassifier.random(config, 11)
    await saveCheckpoint(dir, model, VOCAB)
    model.dispose()
    rewriteWeights(dir, (name, t) => (name === 'bert.encoder.layer.1.output.dense.bias' ? [] : [[name, t]]))
    await expect(loadCheckpoint(dir)).rejects.toThrow(/tensor bert\.encoder\.layer\.1\.output\.dense\.bias is missing/)
    rewriteWeights(
      dir,
      (name, t) => [[name, name === 'bert.encoder.layer.0.attention.self.key.weight' ? { shape: [8, 4], data: t.data.slice(0, 32) } : t]],
      [['bert.encoder.layer.1.output.dense.bias', { shape: [8], data: new Float32Array(8) }]],
    )
    await expect(loadCheckpoint(dir)).rejects.toThrow(/model\.safetensors: tensor bert\.encoder\.layer\.0\.attention\.self\.key\.weight has shape \[8,4\], expected \[8,8\]/)
  })

  test('corrupt safetensors files are rejected with the file name', async () => {
    const dir = freshDir()
    const model = BertTokenClassifier.random(config, 12)
    await saveCheckpoint(dir, model, VOCAB)
    model.dispose()
    const path = join(dir, 'model.safetensors')
    const good = readFileSync(path)
    writeFileSync(path, good.subarray(0, good.length - 10))
    await expect(loadCheckpoint(dir)).rejects.toThrow(new RegExp(`${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: .*(past the end|truncated)`))

    const bad = (buf: Uint8Array) => () => parseSafetensors(buf, 'x.safetensors')
    expect(bad(new Uint8Array(4))).toThrow(/x\.safetensors: not a safetensors file/)
    const hugeLen = Buffer.alloc(16)
    hugeLen.writeBigUInt64LE(1n << 40n)
    expect(bad(hugeLen)).toThrow(/implausible/)
    const mk = (header: string, data = 0) => {
      const h = Buffer.from(header)
      const len = Buffer.alloc(8)
      len.writeBigUInt64LE(BigInt(h.length))
      return Buffer.concat([len, h, Buffer.alloc(data)])
    }
    expect(bad(mk('{"a": '))).toThrow(/not valid JSON/)
    expect(bad(mk('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}', 12))).toThrow(/overlap/)
    expect(bad(mk('{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', 8))).toThrow(/needs 12/)
    expect(bad(mk('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', 12))).toThrow(/cover 8/)
    expect(bad(mk('{"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}}', 8))).toThrow(/dtype "Q4" is not supported/)
  })
})

describe('safetensors dtypes', () => {
  test('F16, BF16 and I64 decode to the expected values', () => {
    const f16 = [0x3c00, 0xc000, 0x3800, 0x7bff, 0x0001, 0x7c00, 0xfc00, 0x3555]
    const bf16 = [0x3f80, 0xc000, 0x4049, 0x0000, 0x8000, 0x7f80]
    const i64 = [0n, -1n, 123456789n, -2147483648n]
    const data = Buffer.concat([Buffer.from(new Uint16Array(f16).buffer), Buffer.from(new Uint16Array(bf16).buffer), Buffer.from(new BigInt64Array(i64).buffer)])
    const header = JSON.stringify({
      h: { dtype: 'F16', shape: [8], data_offsets: [0, 16] },
      b: { dtype: 'BF16', shape: [2, 3], data_offsets: [16, 28] },
      l: { dtype: 'I64', shape: [4], data_offsets: [28, 60] },
    })
    const len = Buffer.alloc(8)
    len.writeBigUInt64LE(BigInt(header.length))
    const { tensors } = parseSafetensors(Buffer.concat([len, Buffer.from(header), data]))
    expect(Array.from(tensors.get('h')!.data)).toEqual([1, -2, 0.5, 65504, 2 ** -24, Infinity, -Infinity, Math.fround(0.333251953125)])
    expect(tensors.get('b')!.shape).toEqual([2, 3])
    expect(Array.from(tensors.get('b')!.data)).toEqual([1, -2, 3.140625, 0, -0, Infinity])
    expect(tensors.get('l')!.data).toBeInstanceOf(Int32Array)
    expect(Array.from(tensors.get('l')!.data)).toEqual([0, -1, 123456789, -2147483648])
  })

  test('F16/BF16 encoding rounds to nearest and round-trips', () => {
    const vals = Float32Array.from([0, 1, -1.5, 1e-3, 3.14159, 70000, 1e-8, -65504])
    const chunks = serializeSafetensors(
      new Map<string, TensorToWrite>([
        ['h', { shape: [8], data: vals, dtype: 'F16' }],
        ['b', { shape: [8], data: vals, dtype: 'BF16' }],
      ]),
    )
    const { tensors } = parseSafetensors(concatChunks(chunks))
    const h = tensors.get('h')!.data
    const b = tensors.get('b')!.data
    expect(h[5]).toBe(Infinity) // 70000 overflows half
    expect(h[6]).toBe(0) // below half's subnormal range
    for (const i of [0, 1, 2, 3, 4, 7]) expect(Math.abs(h[i] - vals[i])).toBeLessThanOrEqual(Math.abs(vals[i]) * 2 ** -11 + 2 ** -25)
    for (let i = 0; i < 8; i++) expect(Math.abs(b[i] - vals[i])).toBeLessThanOrEqual(Math.abs(vals[i]) * 2 ** -8)
  })
})

describe('atomic writes', () => {
  test('a failure mid-write leaves the old file intact and no temp file', () => {
    const dir = freshDir()
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir)
    const path = join(dir, 'model.safetensors')
    writeFileAtomic(path, ['old contents'])
    function* crashing() {
      yield Buffer.from('new contents, first half')
      throw new Error('disk full (simulated)')
    }
    expect(() => writeFileAtomic(path, crashing())).toThrow(/simulated/)
    expect(readFileSync(path, 'utf8')).toBe('old contents')
    expect(readdirSync(dir)).toEqual(['model.safetensors'])
    writeFileAtomic(path, ['new contents'])
    expect(readFileSync(path, 'utf8')).toBe('new contents')
    expect(readdirSync(dir)).toEqual(['model.safetensors'])
  })

  test('a save that fails part-way keeps the previous checkpoint loadable', async () => {
    const dir = freshDir()
    const a = BertTokenClassifier.random(config, 13)
    await saveCheckpoint(dir, a, VOCAB)
    const before = readFileSync(join(dir, 'model.safetensors'))
    // A vocabulary the model cannot hold is refused before anything is written.
    await expect(saveCheckpoint(dir, a, [...VOCAB, 'extra'])).rejects.toThrow(/vocab_size/)
    expect(readFileSync(join(dir, 'model.safetensors')).equals(before)).toBe(true)
    // A writer killed hard leaves only its temp file; the next save removes it.
    const stale = join(dir, `${TEMP_PREFIX}99999999-x-model.safetensors`)
    writeFileSync(stale, 'half a file')
    expect(removeStaleTempFiles(dir)).toEqual([`${TEMP_PREFIX}99999999-x-model.safetensors`])
    expect(existsSync(stale)).toBe(false)
    writeFileSync(stale, 'half a file')
    await saveCheckpoint(dir, a, VOCAB)
    expect(readdirSync(dir).filter((f) => f.startsWith(TEMP_PREFIX))).toEqual([])
    const loaded = await loadCheckpoint(dir)
    expect(forwardLogits(loaded.model)).toEqual(forwardLogits(a))
    a.dispose()
    loaded.model.dispose()
  })
})
