// HF equivalence without downloads: a small random checkpoint is written here in HF layout
// (config.json, vocab.txt, model.safetensors written by an independent writer, torch weight
// layouts, HF names incl. pooler/MLM tensors to be ignored), loaded with loadCheckpoint, and its
// forward pass compared with a float64 reference implemented below from the BERT definition:
// every logit, hidden state and attention map at real positions, on cpu and on wasm.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as tf from '@tensorflow/tfjs-core'
import { useBackend } from '@core/model/backend'
import { loadCheckpoint } from '@core/model/checkpoint'
import { Rng } from '@core/rng'


// ---- erf in float64: Maclaurin series near 0, continued fraction for erfc in the tails ------
export function erf64(x: number): number {
  const ax = Math.abs(x)
  if (ax < 2.5) {
    // erf(x) = 2/√π Σ (-1)^n x^(2n+1) / (n! (2n+1))
    let term = ax
    let sum = ax
    for (let n = 1; n < 200; n++) {
      term *= (-ax * ax) / n
      const add = term / (2 * n + 1)
      sum += add
      if (Math.abs(add) < 1e-18 * Math.abs(sum)) break
    }
    return Math.sign(x) * (2 / Math.sqrt(Math.PI)) * sum
  }
  // erfc(x) = e^{-x²}/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + …)))))
  let f = ax
  for (let k = 120; k >= 1; k--) f = ax + k / 2 / f
  const erfc = Math.exp(-ax * ax) / Math.sqrt(Math.PI) / f
  return Math.sign(x) * (1 - erfc)
}

// ---- the test model -------------------------------------------------------------------------
const C = { vocab: 40, hidden: 16, layers: 2, heads: 4, inter: 48, maxPos: 12, types: 2, eps: 1e-12 }
const LABELS = ['O', 'B-Chemical', 'I-Chemical', 'B-Disease', 'I-Disease']
const D = C.hidden / C.heads

type W = Map<string, { shape: number[]; data: Float32Array }>

function makeWeights(seed: number): W {
  const rng = new Rng(seed)
  const g = () => rng.normal()
  const w: W = new Map()
  const add = (name: string, shape: number[], std: number, mean = 0) => {
    const n = shape.reduce((a, b) => a * b, 1)
    const data = new Float32Array(n)
    for (let i = 0; i < n; i++) data[i] = mean + std * g()
    w.set(name, { shape, data })
  }
  // Larger than BERT's 0.02 init so attention is far from uniform and GELU sees its tails.
  const s = 0.5
  add('bert.embeddings.word_embeddings.weight', [C.vocab, C.hidden], 1)
  add('bert.embeddings.position_embeddings.weight', [C.maxPos, C.hidden], 1)
  add('bert.embeddings.token_type_embeddings.weight', [C.types, C.hidden], 1)
  add('bert.embeddings.LayerNorm.weight', [C.hidden], 0.2, 1)
  add('bert.embeddings.LayerNorm.bias', [C.hidden], 0.2)
  for (let l = 0; l < C.layers; l++) {
    const p = `bert.encoder.layer.${l}`
    for (const n of ['attention.self.query', 'attention.self.key', 'attention.self.value', 'attention.output.dense']) {
      add(`${p}.${n}.weight`, [C.hidden, C.hidden], s) // torch [out, in]
      add(`${p}.${n}.bias`, [C.hidden], 0.2)
    }
    add(`${p}.attention.output.LayerNorm.weight`, [C.hidden], 0.2, 1)
    add(`${p}.attention.output.LayerNorm.bias`, [C.hidden], 0.2)
    add(`${p}.intermediate.dense.weight`, [C.inter, C.hidden], s)
    add(`${p}.intermediate.dense.bias`, [C.inter], 0.5)
    add(`${p}.output.dense.weight`, [C.hidden, C.inter], s / 2)
    add(`${p}.output.dense.bias`, [C.hidden], 0.2)
    add(`${p}.output.LayerNorm.weight`, [C.hidden], 0.2, 1)
    add(`${p}.output.LayerNorm.bias`, [C.hidden], 0.2)
  }
  add('classifier.weight', [LABELS.length, C.hidden], s)
  add('classifier.bias', [LABELS.length], 0.2)
  // present in real checkpoints, must be ignored
  add('bert.pooler.dense.weight', [C.hidden, C.hidden], s)
  add('bert.pooler.dense.bias', [C.hidden], s)
  add('cls.predictions.bias', [C.vocab], s)
  return w
}

/** Independent minimal safetensors writer (F32 only), so the reader is not tested by itself. */
function writeSafetensorsF32(path: string, w: W) {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } }
  let off = 0
  const bufs: Buffer[] = []
  for (const [name, t] of w) {
    const b = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)
    header[name] = { dtype: 'F32', shape: t.shape, data_offsets: [off, off + b.length] }
    off += b.length
    bufs.push(b)
  }
  const h = Buffer.from(JSON.stringify(header))
  const len = Buffer.alloc(8)
  len.writeBigUInt64LE(BigInt(h.length))
  writeFileSync(path, Buffer.concat([len, h, ...bufs]))
}

// ---- float64 reference (HF BertForTokenClassification, eval mode) -----------------------------
interface Ref {
  hidden: number[][][][] // [layer+1][b][s][h]
  attn: number[][][][][] // [layer][b][head][i][j]
  logits: number[][][] // [b][s][label]
}

function reference(w: W, ids: number[][], types: number[][], mask: number[][]): Ref {
  const get = (n: string) => Array.from(w.get(n)!.data, Number)
  const B = ids.length
  const S = ids[0].length
  const linear = (x: number[], name: string, outDim: number, inDim: number) => {
    const W = get(`${name}.weight`)
    const b = get(`${name}.bias`)
    const y = new Array<number>(outDim)
    for (let o = 0; o < outDim; o++) {
      let acc = b[o]
      for (let i = 0; i < inDim; i++) acc += W[o * inDim + i] * x[i]
      y[o] = acc
    }
    return y
  }
  const ln = (x: number[], name: string) => {
    const g = get(`${name}.weight`)
    const bb = get(`${name}.bias`)
    const mean = x.reduce((a, v) => a + v, 0) / x.length
    const v = x.reduce((a, t) => a + (t - mean) ** 2, 0) / x.length
    return x.map((t, i) => ((t - mean) / Math.sqrt(v + C.eps)) * g[i] + bb[i])
  }
  const gelu = (x: number) => 0.5 * x * (1 + erf64(x / Math.SQRT2))
  const we = get('bert.embeddings.word_embeddings.weight')
  const pe = get('bert.embeddings.position_embeddings.weight')
  const te = get('bert.embeddings.token_type_embeddings.weight')
  let h: number[][][] = ids.map((row, b) =>
    row.map((id, s) => {
      const x = new Array<number>(C.hidden)
      for (let k = 0; k < C.hidden; k++) x[k] = we[id * C.hidden + k] + pe[s * C.hidden + k] + te[types[b][s] * C.hidden + k]
      return ln(x, 'bert.embeddings.LayerNorm')
    }),
  )
  const hidden = [h]
  const attn: number[][][][][] = []
  for (let l = 0; l < C.layers; l++) {
    const p = `bert.encoder.layer.${l}`
    const layerAttn: number[][][][] = []
    const next: number[][][] = []
    for (let b = 0; b < B; b++) {
      const q = h[b].map((x) => linear(x, `${p}.attention.self.query`, C.hidden, C.hidden))
      const k = h[b].map((x) => linear(x, `${p}.attention.self.key`, C.hidden, C.hidden))
      const v = h[b].map((x) => linear(x, `${p}.attention.self.value`, C.hidden, C.hidden))
      const ctx = h[b].map(() => new Array<number>(C.hidden).fill(0))
      const probsB: number[][][] = []
      for (let hd = 0; hd < C.heads; hd++) {
        const probsH: number[][] = []
        for (let i = 0; i < S; i++) {
          // Padded keys get weight exactly 0 (what adding float32-min before softmax does).
          const sc = new Array<number>(S)
          let max = -Infinity
          for (let j = 0; j < S; j++) {
            if (!mask[b][j]) continue
            let dot = 0
            for (let t = 0; t < D; t++) dot += q[i][hd * D + t] * k[j][hd * D + t]
            sc[j] = dot / Math.sqrt(D)
            max = Math.max(max, sc[j])
          }
          let z = 0
          const pr = new Array<number>(S).fill(0)
          for (let j = 0; j < S; j++) if (mask[b][j]) z += (pr[j] = Math.exp(sc[j] - max))
          for (let j = 0; j < S; j++) pr[j] /= z
          for (let j = 0; j < S; j++) for (let t = 0; t < D; t++) ctx[i][hd * D + t] += pr[j] * v[j][hd * D + t]
          probsH.push(pr)
        }
        probsB.push(probsH)
      }
      layerAttn.push(probsB)
      next.push(
        h[b].map((x, i) => {
          const ao = linear(ctx[i], `${p}.attention.output.dense`, C.hidden, C.hidden)
          const a = ln(ao.map((t, kk) => t + x[kk]), `${p}.attention.output.LayerNorm`)
          const inter = linear(a, `${p}.intermediate.dense`, C.inter, C.hidden).map(gelu)
          const o = linear(inter, `${p}.output.dense`, C.hidden, C.inter)
          return ln(o.map((t, kk) => t + a[kk]), `${p}.output.LayerNorm`)
        }),
      )
    }
    attn.push(layerAttn)
    h = next
    hidden.push(h)
  }
  const logits = h.map((row) => row.map((x) => linear(x, 'classifier', LABELS.length, C.hidden)))
  return { hidden, attn, logits }
}

// ---- the test ---------------------------------------------------------------------------------
const dir = mkdtempSync(join(tmpdir(), 'fastbioner-hf-'))
const weights = makeWeights(1234)
writeFileSync(
  join(dir, 'config.json'),
  JSON.stringify({
    architectures: ['BertForTokenClassification'],
    model_type: 'bert',
    vocab_size: C.vocab,
    hidden_size: C.hidden,
    num_hidden_layers: C.layers,
    num_attention_heads: C.heads,
    intermediate_size: C.inter,
    hidden_act: 'gelu',
    hidden_dropout_prob: 0.1,
    attention_probs_dropout_prob: 0.1,
    max_position_embeddings: C.maxPos,
    type_vocab_size: C.types,
    initializer_range: 0.02,
    layer_norm_eps: C.eps,
    pad_token_id: 0,
    id2label: Object.fromEntries(LABELS.map((l, i) => [String(i), l])),
    label2id: Object.fromEntries(LABELS.map((l, i) => [l, i])),
  }),
)
writeFileSync(join(dir, 'vocab.txt'), ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...Array.from({ length: C.vocab - 5 }, (_, i) => `w${i}`)].join('\n') + '\n')
writeSafetensorsF32(join(dir, 'model.safetensors'), weights)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// Three sequences of lengths 7, 4 and 6 padded to 7; two segments in the first and third.
const lengths = [7, 4, 6]
const S = 7
const rand = new Rng(99)
const ids = lengths.map((len) => Array.from({ length: S }, (_, s) => (s < len ? 5 + rand.int(C.vocab - 5) : 0)))
const types = lengths.map((len, b) => Array.from({ length: S }, (_, s) => (b !== 1 && s >= 3 && s < len ? 1 : 0)))
const mask = lengths.map((len) => Array.from({ length: S }, (_, s) => (s < len ? 1 : 0)))
const ref = reference(weights, ids, types, mask)
const TOL = 1e-4

function maxDiffAtReal(actual: number[][][], expected: number[][][]): number {
  let m = 0
  for (let b = 0; b < lengths.length; b++) {
    for (let s = 0; s < lengths[b]; s++) {
      for (let k = 0; k < expected[b][s].length; k++) m = Math.max(m, Math.abs(actual[b][s][k] - expected[b][s][k]))
    }
  }
  return m
}

describe.each(['cpu', 'wasm'] as const)('HF BERT equivalence on %s', (backend) => {
  test('logits, hidden states and attentions match a float64 reference at real positions', async () => {
    await useBackend(backend)
    const { model, vocab, lowercase, notes } = await loadCheckpoint(dir)
    try {
      expect(vocab).toHaveLength(C.vocab)
      expect(lowercase).toBe(true) // no capitals in this vocabulary
      expect(notes.join('\n')).toMatch(/ignored 3 tensor/)
      expect(model.heads.get('default')?.labels).toEqual(LABELS)
      const inputIds = tf.tensor2d(ids, [3, S], 'int32')
      const tokenTypeIds = tf.tensor2d(types, [3, S], 'int32')
      const attentionMask = tf.tensor2d(mask, [3, S], 'int32')
      const out = model.forward({ inputIds, attentionMask, tokenTypeIds }, { outputHiddenStates: true, outputAttentions: true })
      expect(out.hiddenStates).toHaveLength(C.layers + 1)
      expect(out.attentions).toHaveLength(C.layers)
      expect(out.logits.default.shape).toEqual([3, S, LABELS.length])

      expect(maxDiffAtReal(out.logits.default.arraySync(), ref.logits)).toBeLessThan(TOL)
      out.hiddenStates!.forEach((h, l) => {
        expect(h.shape).toEqual([3, S, C.hidden])
        expect(maxDiffAtReal(h.arraySync(), ref.hidden[l]), `hidden state ${l}`).toBeLessThan(TOL)
      })
      out.attentions!.forEach((a, l) => {
        expect(a.shape).toEqual([3, C.heads, S, S])
        const arr = a.arraySync()
        let m = 0
        for (let b = 0; b < 3; b++) {
          for (let hd = 0; hd < C.heads; hd++) {
            for (let i = 0; i < lengths[b]; i++) {
              for (let j = 0; j < S; j++) m = Math.max(m, Math.abs(arr[b][hd][i][j] - ref.attn[l][b][hd][i][j]))
            }
          }
        }
        expect(m, `attention ${l}`).toBeLessThan(TOL)
      })
      // Attention is far from uniform, so the comparison is not trivially satisfied.
      expect(Math.max(...ref.attn.flat(4))).toBeGreaterThan(0.8)
      tf.dispose([inputIds, tokenTypeIds, attentionMask, out as unknown as tf.TensorContainer])

      // Without tokenTypeIds the model uses segment 0 everywhere, as HF does.
      const zeros = ids.map((r) => r.map(() => 0))
      const ref0 = reference(weights, ids, zeros, mask)
      const out0 = model.forward({ inputIds: tf.tensor2d(ids, [3, S], 'int32'), attentionMask: tf.tensor2d(mask, [3, S], 'int32') })
      expect(maxDiffAtReal(out0.logits.default.arraySync(), ref0.logits)).toBeLessThan(TOL)
    } finally {
      model.dispose()
    }
  })
})

test('erf64 matches known values', () => {
  expect(erf64(0.5)).toBeCloseTo(0.5204998778130465, 15)
  expect(erf64(1)).toBeCloseTo(0.8427007929497149, 15)
  expect(erf64(-2)).toBeCloseTo(-0.9953222650189527, 15)
  expect(erf64(3)).toBeCloseTo(0.9999779095030014, 15)
  expect(erf64(2.5)).toBeCloseTo(0.999593047982555, 14)
})
