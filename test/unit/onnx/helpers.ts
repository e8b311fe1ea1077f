// Shared by the ONNX tests: a seeded random BERT (plain weights map, torch [out, in] layout),
// random padded inputs, and an independent float64 forward pass written with plain loops.

import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import * as tf from '@tensorflow/tfjs-core'
import { BertTokenClassifier, isLinearWeight, makeBertConfig } from '../../../src/core/model/bert'
import { writeSafetensors } from '../../../src/core/model/safetensors'
import { Rng } from '../../../src/core/rng'
import type { OnnxBertConfig, WeightsMap } from '../../../src/core/onnx/export'

/** The core's seeded generator under the names these tests use. */
export function makeRng(seed: number): { uniform(): number; normal(): number; int(n: number): number } {
  const r = new Rng(seed)
  return { uniform: () => r.next(), normal: () => r.normal(), int: (n: number) => r.int(n) }
}

export const SMALL_CONFIG: OnnxBertConfig = {
  vocabSize: 50,
  hiddenSize: 32,
  numHiddenLayers: 2,
  numAttentionHeads: 4,
  intermediateSize: 64,
  maxPositionEmbeddings: 40,
  typeVocabSize: 2,
  layerNormEps: 1e-12,
  hiddenAct: 'gelu',
}

/** HF config.json for SMALL_CONFIG-like configs. */
export function hfConfigJson(c: OnnxBertConfig, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    architectures: ['BertForTokenClassification'],
    model_type: 'bert',
    vocab_size: c.vocabSize,
    hidden_size: c.hiddenSize,
    num_hidden_layers: c.numHiddenLayers,
    num_attention_heads: c.numAttentionHeads,
    intermediate_size: c.intermediateSize,
    max_position_embeddings: c.maxPositionEmbeddings,
    type_vocab_size: c.typeVocabSize,
    layer_norm_eps: c.layerNormEps,
    hidden_act: c.hiddenAct,
    ...extra,
  }
}

/**
 * Random weights in HF names and torch layout. Scales are larger than BERT's 0.02 init so that
 * attention is far from uniform and GELU is far from linear: the test must see the maths.
 */
export function randomWeights(c: OnnxBertConfig, heads: Record<string, number>, seed: number): WeightsMap {
  const rng = makeRng(seed)
  const m: WeightsMap = new Map()
  const H = c.hiddenSize
  const I = c.intermediateSize
  const t = (name: string, shape: number[], std: number, mean = 0) => {
    const n = shape.reduce((a, b) => a * b, 1)
    const data = new Float32Array(n)
    for (let i = 0; i < n; i++) data[i] = mean + std * rng.normal()
    m.set(name, { shape, data })
  }
  t('bert.embeddings.word_embeddings.weight', [c.vocabSize, H], 0.5)
  t('bert.embeddings.position_embeddings.weight', [c.maxPositionEmbeddings, H], 0.5)
  t('bert.embeddings.token_type_embeddings.weight', [c.typeVocabSize, H], 0.5)
  t('bert.embeddings.LayerNorm.weight', [H], 0.2, 1)
  t('bert.embeddings.LayerNorm.bias', [H], 0.1)
  for (let l = 0; l < c.numHiddenLayers; l++) {
    const p = `bert.encoder.layer.${l}`
    for (const n of ['query', 'key', 'value']) {
      t(`${p}.attention.self.${n}.weight`, [H, H], 0.25)
      t(`${p}.attention.self.${n}.bias`, [H], 0.1)
    }
    t(`${p}.attention.output.dense.weight`, [H, H], 0.2)
    t(`${p}.attention.output.dense.bias`, [H], 0.1)
    t(`${p}.attention.output.LayerNorm.weight`, [H], 0.2, 1)
    t(`${p}.attention.output.LayerNorm.bias`, [H], 0.1)
    t(`${p}.intermediate.dense.weight`, [I, H], 0.25)
    t(`${p}.intermediate.dense.bias`, [I], 0.2)
    t(`${p}.output.dense.weight`, [H, I], 0.15)
    t(`${p}.output.dense.bias`, [H], 0.1)
    t(`${p}.output.LayerNorm.weight`, [H], 0.2, 1)
    t(`${p}.output.LayerNorm.bias`, [H], 0.1)
  }
  for (const [head, n] of Object.entries(heads)) {
    const base = head === 'default' ? 'classifier' : `classifiers.${head}`
    t(`${base}.weight`, [n, H], 0.3)
    t(`${base}.bias`, [n], 0.1)
  }
  return m
}

export interface Batch {
  batch: number
  seq: number
  inputIds: BigInt64Array
  attentionMask: BigInt64Array
  tokenTypeIds: BigInt64Array
}

/** Rows of the given real lengths, right-padded with id 0, mask 0; token types 0 then 1. */
export function randomBatch(c: OnnxBertConfig, lengths: number[], seq: number, seed: number): Batch {
  const rng = makeRng(seed)
  const n = lengths.length * seq
  const inputIds = new BigInt64Array(n)
  const attentionMask = new BigInt64Array(n)
  const tokenTypeIds = new BigInt64Array(n)
  lengths.forEach((len, b) => {
    const split = Math.max(1, Math.floor(len / 2))
    for (let s = 0; s < seq; s++) {
      const i = b * seq + s
      if (s < len) {
        inputIds[i] = BigInt(1 + rng.int(c.vocabSize - 1))
        attentionMask[i] = 1n
        tokenTypeIds[i] = s < split ? 0n : 1n
      }
    }
  })
  return { batch: lengths.length, seq, inputIds, attentionMask, tokenTypeIds }
}

/** erf in float64: Taylor series near 0, Lentz continued fraction for erfc further out. */
export function erf64(x: number): number {
  const ax = Math.abs(x)
  if (ax < 2.5) {
    let term = x
    let sum = x
    const x2 = x * x
    for (let n = 1; n < 80; n++) {
      term *= -x2 / n
      const add = term / (2 * n + 1)
      sum += add
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break
    }
    return (2 / Math.sqrt(Math.PI)) * sum
  }
  // erfc(x) = exp(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …))))
  let f = ax
  for (let k = 60; k >= 1; k--) f = ax + k / 2 / f
  const erfc = Math.exp(-ax * ax) / Math.sqrt(Math.PI) / f
  return Math.sign(x) * (1 - erfc)
}

export interface ReferenceOutput {
  logits: Record<string, Float64Array>
  /** numLayers + 1 arrays [batch, seq, hidden] */
  hidden: Float64Array[]
}

/** HF BertForTokenClassification forward (eval) in float64 with plain loops. */
export function referenceForward(c: OnnxBertConfig, w: WeightsMap, heads: Record<string, number>, x: Batch): ReferenceOutput {
  const { batch: B, seq: S } = x
  const H = c.hiddenSize
  const I = c.intermediateSize
  const nH = c.numAttentionHeads
  const d = H / nH
  const N = B * S
  const get = (name: string) => {
    const t = w.get(name)
    if (!t) throw new Error(`missing ${name}`)
    return t.data
  }
  // y[N, out] = x[N, in] · Wᵀ + b with W in torch layout [out, in]
  const linear = (inp: Float64Array, inDim: number, outDim: number, name: string) => {
    const W = get(`${name}.weight`)
    const b = get(`${name}.bias`)
    const out = new Float64Array(N * outDim)
    for (let n = 0; n < N; n++) {
      for (let o = 0; o < outDim; o++) {
        let acc = b[o]
        for (let i = 0; i < inDim; i++) acc += inp[n * inDim + i] * W[o * inDim + i]
        out[n * outDim + o] = acc
      }
    }
    return out
  }
  const layerNorm = (inp: Float64Array, name: string) => {
    const g = get(`${name}.weight`)
    const b = get(`${name}.bias`)
    const out = new Float64Array(inp.length)
    for (let n = 0; n < N; n++) {
      let mean = 0
      for (let i = 0; i < H; i++) mean += inp[n * H + i]
      mean /= H
      let v = 0
      for (let i = 0; i < H; i++) v += (inp[n * H + i] - mean) ** 2
      v /= H
      const r = 1 / Math.sqrt(v + c.layerNormEps)
      for (let i = 0; i < H; i++) out[n * H + i] = (inp[n * H + i] - mean) * r * g[i] + b[i]
    }
    return out
  }
  const word = get('bert.embeddings.word_embeddings.weight')
  const pos = get('bert.embeddings.position_embeddings.weight')
  const typ = get('bert.embeddings.token_type_embeddings.weight')
  const emb = new Float64Array(N * H)
  for (let b = 0; b < B; b++) {
    for (let s = 0; s < S; s++) {
      const n = b * S + s
      const id = Number(x.inputIds[n])
      const tt = Number(x.tokenTypeIds[n])
      for (let i = 0; i < H; i++) emb[n * H + i] = word[id * H + i] + pos[s * H + i] + typ[tt * H + i]
    }
  }
  let h = layerNorm(emb, 'bert.embeddings.LayerNorm')
  const hidden = [h]
  const FMIN = -3.4028234663852886e38
  for (let l = 0; l < c.numHiddenLayers; l++) {
    const p = `bert.encoder.layer.${l}`
    const q = linear(h, H, H, `${p}.attention.self.query`)
    const k = linear(h, H, H, `${p}.attention.self.key`)
    const v = linear(h, H, H, `${p}.attention.self.value`)
    const ctx = new Float64Array(N * H)
    const scores = new Float64Array(S)
    for (let b = 0; b < B; b++) {
      for (let hd = 0; hd < nH; hd++) {
        for (let i = 0; i < S; i++) {
          let max = -Infinity
          for (let j = 0; j < S; j++) {
            let dot = 0
            for (let e = 0; e < d; e++) dot += q[(b * S + i) * H + hd * d + e] * k[(b * S + j) * H + hd * d + e]
            const m = Number(x.attentionMask[b * S + j])
            scores[j] = dot / Math.sqrt(d) + (1 - m) * FMIN
            if (scores[j] > max) max = scores[j]
          }
          let sum = 0
          for (let j = 0; j < S; j++) {
            scores[j] = Math.exp(scores[j] - max)
            sum += scores[j]
          }
          for (let e = 0; e < d; e++) {
            let acc = 0
            for (let j = 0; j < S; j++) acc += (scores[j] / sum) * v[(b * S + j) * H + hd * d + e]
            ctx[(b * S + i) * H + hd * d + e] = acc
          }
        }
      }
    }
    const ao = linear(ctx, H, H, `${p}.attention.output.dense`)
    for (let i = 0; i < ao.length; i++) ao[i] += h[i]
    const a = layerNorm(ao, `${p}.attention.output.LayerNorm`)
    const inter = linear(a, H, I, `${p}.intermediate.dense`)
    for (let i = 0; i < inter.length; i++) inter[i] = 0.5 * inter[i] * (1 + erf64(inter[i] / Math.SQRT2))
    const o = linear(inter, I, H, `${p}.output.dense`)
    for (let i = 0; i < o.length; i++) o[i] += a[i]
    h = layerNorm(o, `${p}.output.LayerNorm`)
    hidden.push(h)
  }
  const logits: Record<string, Float64Array> = {}
  for (const [head, n] of Object.entries(heads)) {
    logits[head] = linear(h, H, n, head === 'default' ? 'classifier' : `classifiers.${head}`)
  }
  return { logits, hidden }
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} vs ${b.length}`)
  let m = 0
  for (let i = 0; i < a.length; i++) {
    const diff = Math.abs(a[i] - b[i])
    if (!(diff <= m)) m = Number.isNaN(diff) ? Infinity : Math.max(m, diff)
  }
  return m
}

/** Labels for a head with n labels. */
export function labelsFor(head: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => (i === 0 ? 'O' : `${i % 2 ? 'B' : 'I'}-${head}${Math.ceil(i / 2)}`))
}

/**
 * Writes an HF checkpoint directory as core/model reads it: config.json (with id2label and
 * fastbioner_heads), vocab.txt and model.safetensors (core/model's writer).
 */
export function writeTestCheckpoint(dir: string, c: OnnxBertConfig, w: WeightsMap, heads: Record<string, number>): void {
  mkdirSync(dir, { recursive: true })
  const labels = Object.fromEntries(Object.entries(heads).map(([h, n]) => [h, labelsFor(h, n)]))
  const id2label = Object.fromEntries((labels.default ?? []).map((l, i) => [String(i), l]))
  writeFileSync(join(dir, 'config.json'), JSON.stringify(hfConfigJson(c, { id2label, fastbioner_heads: labels }), null, 2))
  const vocab = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...Array.from({ length: c.vocabSize - 5 }, (_, i) => `tok${i}`)]
  writeFileSync(join(dir, 'vocab.txt'), vocab.join('\n') + '\n')
  writeSafetensors(join(dir, 'model.safetensors'), new Map([...w].map(([k, t]) => [k, { shape: t.shape, data: t.data }])), { format: 'pt' })
}

/** The tfjs model (core/model) holding the same weights; Linear weights go [out, in] → [in, out]. */
export function tfjsModelFromWeights(c: OnnxBertConfig, w: WeightsMap, heads: Record<string, number>): BertTokenClassifier {
  const config = makeBertConfig({
    vocabSize: c.vocabSize,
    hiddenSize: c.hiddenSize,
    numHiddenLayers: c.numHiddenLayers,
    numAttentionHeads: c.numAttentionHeads,
    intermediateSize: c.intermediateSize,
    maxPositionEmbeddings: c.maxPositionEmbeddings,
    typeVocabSize: c.typeVocabSize,
    layerNormEps: c.layerNormEps,
  })
  const params = new Map<string, tf.Tensor>()
  for (const [name, t] of w) {
    const x = tf.tensor(t.data, t.shape, 'float32')
    if (isLinearWeight(name)) {
      params.set(name, tf.transpose(x))
      x.dispose()
    } else params.set(name, x)
  }
  const labels = Object.fromEntries(Object.entries(heads).map(([h, n]) => [h, labelsFor(h, n)]))
  return new BertTokenClassifier(config, params, labels, { trainable: false })
}
