// The onnxruntime training graph against tfjs autodiff (itself checked against a float64
// reference in test/unit/model/hf_equivalence.test.ts): every parameter's gradient, with padding,
// token types, two heads, ignored labels and dropout with identical masks; token classification
// masked LM and the distillation losses.

import * as tf from '@tensorflow/tfjs-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { useBackend } from '@core/model/backend'
import { BertTokenClassifier, makeBertConfig, type BertConfig } from '@core/model/bert'
import { gelu, layerNorm } from '@core/model/ops'
import { loadOnnxRuntime } from '@core/onnx/session'
import { distillTrainGraph, MLM_PARAMS, maskedLmTrainGraph, strideSafeWidth, tokenClassificationTrainGraph } from '@core/onnx/training'
import { attentionMse, hiddenMse, labeledMask, realMask, softCrossEntropy, softTargets } from '@core/distill/losses'
import { Rng } from '@core/rng'
import { collate, modelInputs, toTensors, type HostBatch } from '@core/train/batching'
import { charCnnConfig, charVocabulary, pieceCharInputs, type CharPieces } from '@core/model/char-cnn'
import type { WordFeaturizer } from '@core/nlp/word-features'
import { crfLoss, maskedCrossEntropy } from '@core/train/loss'
import { crfParamNames } from '@core/model/crf'
import { batchFeeds, dropoutProbabilities, dropoutSitesOf, maskFeeds, OrtGraphRunner, OrtTokenClassifierTrainer } from '@core/train/ort'
import { onnxConfigOf } from '@core/onnx/export'
import { denseGradient } from '@core/train/optimizer'

beforeAll(async () => {
  await useBackend('cpu')
})

export function tinyConfig(dropout: number, extra: Partial<BertConfig> = {}): BertConfig {
  return makeBertConfig({
    vocabSize: 37,
    hiddenSize: 16,
    numHiddenLayers: 2,
    numAttentionHeads: 4,
    intermediateSize: 24,
    maxPositionEmbeddings: 20,
    typeVocabSize: 2,
    hiddenDropoutProb: dropout,
    attentionProbsDropoutProb: dropout,
    ...extra,
  })
}

/** A model whose every parameter is random (LayerNorm and biases too), so each gradient matters. */
export function randomModel(c: BertConfig, heads: Record<string, string[]>, seed: number, crfHeads: string[] = [], charVocab: WordFeaturizer | null = null): BertTokenClassifier {
  const model = BertTokenClassifier.random(c, seed, heads, charVocab)
  for (const h of crfHeads) model.addCrf(h)
  const rng = new Rng(seed + 1)
  for (const [name, v] of model.variables()) {
    const std = name.includes('LayerNorm') || name.endsWith('.bias') ? 0.2 : 0.4
    const mean = name.includes('LayerNorm.weight') ? 1 : 0
    v.assign(tf.tensor(rng.normalArray(v.size, std, mean), v.shape))
  }
  return model
}

/** Padded batch of three sequences (lengths 9, 6, 4), token types 0/1, some labels ignored. */
export function tinyBatch(c: BertConfig, numLabels: number[], seed: number): { batch: HostBatch; labels: Int32Array[] } {
  const rng = new Rng(seed)
  const lengths = [9, 6, 4]
  const examples = lengths.map((n) => ({
    inputIds: Array.from({ length: n }, () => 1 + (rng.nextU32() % (c.vocabSize - 1))),
    tokenTypeIds: Array.from({ length: n }, (_, i) => (i >= n / 2 ? 1 : 0)),
    labels: Array.from({ length: n }, () => 0),
  }))
  const batch = collate(examples, [0, 1, 2])
  const labels = numLabels.map((C) => {
    const l = new Int32Array(batch.labels.length).fill(-100)
    for (let i = 0; i < l.length; i++) if (batch.attentionMask[i] && rng.next() < 0.75) l[i] = rng.nextU32() % C
    return l
  })
  return { batch, labels }
}

/** A character vocabulary and a config with the character channel. */
export function charSetup(c: BertConfig, pieces: CharPieces): { config: BertConfig; vocab: WordFeaturizer } {
  const vocab = charVocabulary(['<pad>', '<unk>', 'a', 'b', 'c', 'd', 'e', 'X'])
  return { config: { ...c, charCnn: charCnnConfig(vocab, { charDim: 3, charFilters: 5, charWidth: 3, maxChars: 4, pieces }) }, vocab }
}

/**
 * The batch of tinyBatch with the character inputs pieceCharInputs gives words of 1-3 pieces.
 * Every word has exactly max_chars characters, so no all-padding window ties with another in the
 * max over characters (tfjs then splits the gradient, onnxruntime gives it to the first).
 */
export function tinyCharBatch(c: BertConfig, vocab: WordFeaturizer, numLabels: number[], seed: number): { batch: HostBatch; labels: Int32Array[] } {
  const { batch, labels } = tinyBatch(c, numLabels, seed)
  const cc = c.charCnn!
  const rng = new Rng(seed + 3)
  const examples = [9, 6, 4].map((n, r) => {
    const wordIds = new Int32Array(n).fill(-1)
    const wordStarts = new Uint8Array(n)
    const offsets = new Int32Array(2 * n)
    let text = ''
    let w = -1
    for (let p = 1; p < n - 1; p++) {
      if (p === 1 || rng.next() < 0.5) {
        w++
        wordStarts[p] = 1
        if (text) text += ' '
        text += Array.from({ length: cc.maxChars }, () => vocab.chars[2 + rng.int(vocab.chars.length - 1)] ?? '?').join('')
      }
      wordIds[p] = w
      offsets[2 * p] = text.length - cc.maxChars
      offsets[2 * p + 1] = text.length
    }
    return { inputIds: batch.inputIds.subarray(r * batch.seqLen, r * batch.seqLen + n), ...pieceCharInputs({ wordIds, wordStarts, offsets }, text, vocab, cc) }
  })
  const chars = collate(examples, [0, 1, 2]).chars!
  return { batch: { ...batch, chars }, labels }
}

function tfjsGradients(model: BertTokenClassifier, b: HostBatch, labels: Record<string, Int32Array>, seed: number, training: boolean) {
  const shape: [number, number] = [b.batchSize, b.seqLen]
  const vars = model.trainableVariables()
  const byVar = new Map([...model.variables()].map(([n, v]) => [v.name, n]))
  const { value, grads } = tf.variableGrads(() => {
    const out = model.forward(
      modelInputs(toTensors(b)),
      { training, seed, heads: Object.keys(labels) },
    )
    const terms = Object.entries(labels).map(([h, l]) => {
      if (!model.heads.get(h)!.crf) return maskedCrossEntropy(out.logits[h], tf.tensor2d(l, shape, 'int32'))
      const n = crfParamNames(h)
      const v = model.variables()
      return crfLoss(out.logits[h], l, v.get(n.transitions)!, v.get(n.start)!, v.get(n.end)!)
    })
    return (terms.length === 1 ? terms[0] : tf.addN(terms)) as tf.Scalar
  }, vars)
  const out = new Map<string, Float32Array>()
  for (const [k, g] of Object.entries(grads)) out.set(byVar.get(k)!, g.dataSync() as Float32Array)
  return { loss: value.dataSync()[0], grads: out }
}

function paramsOf(model: BertTokenClassifier): Map<string, Float32Array> {
  return new Map([...model.variables()].map(([n, v]) => [n, Float32Array.from(v.dataSync() as Float32Array)]))
}

async function compare(c: BertConfig, heads: Record<string, string[]>, dropout: boolean, crfHeads: string[] = [], charVocab: WordFeaturizer | null = null, contribOps = true) {
  const model = randomModel(c, heads, 7, crfHeads, charVocab)
  const names = Object.keys(heads)
  const { batch, labels } = charVocab ? tinyCharBatch(c, charVocab, names.map((h) => heads[h].length), 11) : tinyBatch(c, names.map((h) => heads[h].length), 11)
  const labelMap = Object.fromEntries(names.map((h, i) => [h, labels[i]]))
  const seed = 1234
  const ref = tfjsGradients(model, batch, labelMap, seed, dropout)
  const trainer = await OrtTokenClassifierTrainer.create({
    config: c,
    heads: names.map((h) => ({ name: h, numLabels: heads[h].length, lossOnHost: crfHeads.includes(h) })),
    params: paramsOf(model),
    optimizer: { lr: 1e-3 },
    dropout,
    threads: 1,
    contribOps,
  })
  const got = await trainer.gradients(batch, labelMap, seed)
  await trainer.dispose()
  model.dispose()
  // The word table's gradient comes as the rows the batch read (summed per id): as a table, with
  // every other row 0, it must be tfjs's dense gradient.
  const word = 'bert.embeddings.word_embeddings.weight'
  const rows = got.rowGrads.get(word)!
  expect([...rows.rows]).toEqual([...new Set(batch.inputIds)].sort((a, b) => a - b))
  got.grads.set(word, denseGradient(rows, c.vocabSize * c.hiddenSize))
  expect(got.loss).toBeCloseTo(ref.loss, 4)
  let maxAbs = 0
  for (const g of ref.grads.values()) for (const x of g) maxAbs = Math.max(maxAbs, Math.abs(x))
  expect(maxAbs).toBeGreaterThan(1e-3)
  expect([...got.grads.keys()].sort()).toEqual([...ref.grads.keys()].sort())
  const worst: Array<[string, number]> = []
  for (const [name, g] of ref.grads) {
    const o = got.grads.get(name)!
    let err = 0
    for (let i = 0; i < g.length; i++) err = Math.max(err, Math.abs(g[i] - o[i]))
    worst.push([name, err / maxAbs])
  }
  worst.sort((a, b) => b[1] - a[1])
  expect(worst[0][1], `worst: ${worst[0][0]}`).toBeLessThanOrEqual(1e-4)
  return { ref, got }
}

describe('the word table updated by its rows (lazy AdamW)', () => {
  // Three steps of two trainers from the same weights, one with the word table's row gradients
  // (the default) and one with its dense gradient; the batch reads `ids` of a vocabulary of `vocab`.
  async function twoTrainers(vocab: number, ids: number[][]) {
    const c = tinyConfig(0, { vocabSize: vocab })
    const model = randomModel(c, { default: ['O', 'B-X', 'I-X'] }, 3)
    const start = paramsOf(model)
    model.dispose()
    const examples = ids.map((row) => ({ inputIds: row, labels: row.map((id) => id % 3) }))
    const batch = collate(examples, examples.map((_, i) => i))
    const run = async (wordRowGrads: boolean) => {
      const params = new Map([...start].map(([n, v]) => [n, Float32Array.from(v)]))
      const trainer = await OrtTokenClassifierTrainer.create({ config: c, heads: [{ name: 'default', numLabels: 3 }], params, optimizer: { lr: 1e-2, weightDecay: 0.1 }, dropout: false, threads: 1, wordRowGrads })
      const norms: number[] = []
      for (let i = 0; i < 3; i++) norms.push((await trainer.step(batch, { default: batch.labels }, i)).gradNorm)
      await trainer.dispose()
      return { params, norms }
    }
    return { start, c, rows: await run(true), dense: await run(false) }
  }
  const maxDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0)
  const word = 'bert.embeddings.word_embeddings.weight'
  // A key bias's true gradient is 0 (softmax ignores what it adds to every score of a query), so
  // its computed gradient is rounding noise, which Adam scales up to a step of about lr either way.
  const compared = (name: string) => !name.endsWith('attention.self.key.bias')

  it('is the dense AdamW update when every row is read every step, gradient norm (clipping) included', async () => {
    // Vocabulary of 8: both sequences together read ids 0-7, one id twice in a sequence.
    const { rows, dense, start } = await twoTrainers(8, [[2, 0, 1, 3, 1], [4, 5, 6, 7, 2]])
    expect(maxDiff(rows.params.get(word)!, start.get(word)!)).toBeGreaterThan(1e-3)
    for (const [name, p] of dense.params) if (compared(name)) expect(maxDiff(rows.params.get(name)!, p), name).toBeLessThan(1e-5)
    rows.norms.forEach((n, i) => expect(n).toBeCloseTo(dense.norms[i], 4))
  })

  it('leaves a row the batch does not read as it was (dense AdamW decays it), and updates the rows it reads as dense AdamW does', async () => {
    const { rows, dense, start, c } = await twoTrainers(12, [[2, 0, 1, 3, 1], [4, 5, 6, 7, 2]])
    const H = c.hiddenSize
    const row = (p: Float32Array, r: number) => p.subarray(r * H, (r + 1) * H)
    for (const unread of [8, 9, 10, 11]) {
      expect(maxDiff(row(rows.params.get(word)!, unread), row(start.get(word)!, unread))).toBe(0)
      expect(maxDiff(row(dense.params.get(word)!, unread), row(start.get(word)!, unread))).toBeGreaterThan(1e-6)
    }
    // Every other parameter sees the same gradients in both, so only the word table differs.
    for (const [name, p] of dense.params) if (name !== word && compared(name)) expect(maxDiff(rows.params.get(name)!, p), name).toBeLessThan(1e-5)
    for (let r = 0; r < 8; r++) expect(maxDiff(row(rows.params.get(word)!, r), row(dense.params.get(word)!, r))).toBeLessThan(1e-5)
  })
})

describe('onnxruntime training graph: gradients equal tfjs autodiff', () => {
  it('one head, padding, token types, ignored labels, no dropout', async () => {
    const { ref } = await compare(tinyConfig(0), { default: ['O', 'B-X', 'I-X'] }, false)
    // the word-embedding gradient is sparse: rows of ids not in the batch are exactly 0
    expect(ref.grads.get('bert.embeddings.word_embeddings.weight')!.some((x) => x !== 0)).toBe(true)
  })

  it('two heads summed', async () => {
    await compare(tinyConfig(0), { default: ['O', 'B-X', 'I-X'], genes: ['O', 'B-G', 'I-G', 'B-H', 'I-H'] }, false)
  })

  it('dropout on every site with identical masks', async () => {
    await compare(tinyConfig(0.2, { classifierDropout: 0.3 }), { default: ['O', 'B-X', 'I-X'] }, true)
  })

  it('a CRF head beside a cross-entropy head, dropout on: the host CRF gradient flows back through the graph', async () => {
    const { got } = await compare(tinyConfig(0.2), { default: ['O', 'B-X', 'I-X'], genes: ['O', 'B-G', 'I-G', 'B-H', 'I-H'] }, true, ['default'])
    expect(Object.keys(got.terms).sort()).toEqual(['loss.default', 'loss.genes'])
    expect(got.grads.get('crf.transitions')!.some((x) => x !== 0)).toBe(true)
  })

  it('an FFN inner width stored padded (1 024 floats, a 4 KiB row: strideSafeWidth): the same gradients, cut to the parameters\' shapes', async () => {
    const c = tinyConfig(0.2, { numHiddenLayers: 1, intermediateSize: 1024 })
    expect(strideSafeWidth(c.intermediateSize)).toBeGreaterThan(c.intermediateSize)
    // The padded graph has Pad nodes that one of another inner width (1 000: no 4 KiB rows) lacks.
    const pads = (intermediateSize: number) => {
      const cc = tinyConfig(0.2, { numHiddenLayers: 1, intermediateSize })
      return Buffer.from(tokenClassificationTrainGraph({ config: onnxConfigOf(cc), heads: [{ name: 'default', numLabels: 3 }], dropout: dropoutSitesOf(dropoutProbabilities(cc)) }).model).toString('latin1').split('Pad').length
    }
    expect(pads(1024)).toBeGreaterThan(pads(1000))
    const { got } = await compare(c, { default: ['O', 'B-X', 'I-X'] }, true)
    expect(got.grads.get('bert.encoder.layer.0.intermediate.dense.weight')!.length).toBe(c.hiddenSize * c.intermediateSize)
    expect(got.grads.get('bert.encoder.layer.0.output.dense.weight')!.length).toBe(c.intermediateSize * c.hiddenSize)
  })

  it('standard ONNX operators only (the fallback): the same gradients, and no com.microsoft operator in the graph', async () => {
    const config = onnxConfigOf(tinyConfig(0.2))
    const heads = [{ name: 'default', numLabels: 3 }]
    const opsOf = (contribOps: boolean) => Buffer.from(tokenClassificationTrainGraph({ config, heads, dropout: dropoutSitesOf(dropoutProbabilities(tinyConfig(0.2))), contribOps }).model)
    expect(opsOf(true).includes('FusedMatMul')).toBe(true)
    expect(opsOf(false).includes('FusedMatMul')).toBe(false)
    expect(opsOf(false).includes('com.microsoft')).toBe(false)
    await compare(tinyConfig(0.2), { default: ['O', 'B-X', 'I-X'] }, true, [], null, false)
  })

  for (const pieces of ['all', 'first'] as const) {
    it(`the character channel (pieces: '${pieces}'), a CRF head and dropout: every character parameter's gradient too`, async () => {
      const { config, vocab } = charSetup(tinyConfig(0.2), pieces)
      const { ref, got } = await compare(config, { default: ['O', 'B-X', 'I-X'] }, true, ['default'], vocab)
      for (const name of ['bert.embeddings.char_cnn.char_embeddings.weight', 'bert.embeddings.char_cnn.conv.weight', 'bert.embeddings.char_cnn.projection.weight']) {
        expect(ref.grads.get(name)!.some((x) => Math.abs(x) > 1e-6), name).toBe(true)
        expect(got.grads.has(name), name).toBe(true)
      }
      // <pad>'s row is read only by rows the mask zeroes (all-padding words do not exist here).
      const table = got.grads.get('bert.embeddings.char_cnn.char_embeddings.weight')!
      expect(table.subarray(0, 3).every((x) => x === 0)).toBe(true)
    })
  }
})

describe('onnxruntime training graph: masked LM with the decoder tied to the word embeddings', () => {
  it('loss and every gradient equal tfjs autodiff (dropout on, identical masks)', async () => {
    const c = tinyConfig(0.15)
    const model = randomModel(c, { default: ['O'] }, 3)
    const { batch, labels } = tinyBatch(c, [c.vocabSize], 5)
    const mlmLabels = labels[0].map((l, i) => (i % 3 === 0 ? l : -100)) // a few masked positions
    const H = c.hiddenSize
    const rng = new Rng(9)
    const head = new Map<string, tf.Variable>([
      [`${MLM_PARAMS.dense}.weight`, tf.variable(tf.tensor(rng.normalArray(H * H, 0.4), [H, H]))],
      [`${MLM_PARAMS.dense}.bias`, tf.variable(tf.tensor(rng.normalArray(H, 0.2), [H]))],
      [`${MLM_PARAMS.layerNorm}.weight`, tf.variable(tf.tensor(rng.normalArray(H, 0.2, 1), [H]))],
      [`${MLM_PARAMS.layerNorm}.bias`, tf.variable(tf.tensor(rng.normalArray(H, 0.2), [H]))],
      [MLM_PARAMS.bias, tf.variable(tf.tensor(rng.normalArray(c.vocabSize, 0.2), [c.vocabSize]))],
    ])
    const encoderVars = new Map([...model.variables()].filter(([n]) => n.startsWith('bert.')))
    const all = new Map([...encoderVars, ...head])
    const seed = 77
    const shape: [number, number] = [batch.batchSize, batch.seqLen]
    const ref = tf.variableGrads(() => {
      const out = model.forward(
        { inputIds: tf.tensor2d(batch.inputIds, shape, 'int32'), attentionMask: tf.tensor2d(batch.attentionMask, shape, 'int32'), tokenTypeIds: tf.tensor2d(batch.tokenTypeIds, shape, 'int32') },
        { training: true, seed, heads: [], outputHiddenStates: true },
      )
      const top = tf.reshape(out.hiddenStates!.at(-1)!, [-1, H])
      const pre = tf.add(tf.matMul(top, head.get(`${MLM_PARAMS.dense}.weight`)!), head.get(`${MLM_PARAMS.dense}.bias`)!)
      const h = layerNorm(gelu(pre), head.get(`${MLM_PARAMS.layerNorm}.weight`)!, head.get(`${MLM_PARAMS.layerNorm}.bias`)!, c.layerNormEps)
      const logits = tf.add(tf.matMul(h, encoderVars.get('bert.embeddings.word_embeddings.weight')!, false, true), head.get(MLM_PARAMS.bias)!)
      return maskedCrossEntropy(logits, tf.tensor1d(mlmLabels, 'int32'))
    }, [...all.values()])
    const byVar = new Map([...all].map(([n, v]) => [v.name, n]))
    const refGrads = new Map(Object.entries(ref.grads).map(([k, g]) => [byVar.get(k)!, g.dataSync() as Float32Array]))

    const ort = await loadOnnxRuntime()
    const graph = maskedLmTrainGraph({ config: onnxConfigOf(c), dropout: dropoutSitesOf(dropoutProbabilities(c)) })
    expect(graph.dropoutInputs).not.toContain('dropout.classifier')
    const runner = await OrtGraphRunner.open(graph, { threads: 1, ort })
    const params = new Map([...all].map(([n, v]) => [n, Float32Array.from(v.dataSync() as Float32Array)]))
    const got = await runner.run(params, { ...batchFeeds(ort, batch, { mlm: mlmLabels }), ...maskFeeds(runner, c, batch.batchSize, batch.seqLen, seed) })
    await runner.dispose()
    expect(got.loss).toBeCloseTo(ref.value.dataSync()[0], 4)
    let maxAbs = 0
    for (const g of refGrads.values()) for (const x of g) maxAbs = Math.max(maxAbs, Math.abs(x))
    expect([...got.grads.keys()].sort()).toEqual([...refGrads.keys()].sort())
    for (const [name, g] of refGrads) {
      const o = got.grads.get(name)!
      let err = 0
      for (let i = 0; i < g.length; i++) err = Math.max(err, Math.abs(g[i] - o[i]))
      expect(err / maxAbs, name).toBeLessThanOrEqual(1e-4)
    }
    model.dispose()
    for (const v of head.values()) v.dispose()
  })
})

describe('onnxruntime training graph: distillation losses', () => {
  it('soft CE at T with T², gold CE, hidden MSE through W_h and attention MSE (pair mask, fewer heads) equal tfjs autodiff', async () => {
    const c = tinyConfig(0.1, { classifierDropout: 0.2 })
    const labelsList = ['O', 'B-X', 'I-X']
    const model = randomModel(c, { default: labelsList }, 21)
    const { batch, labels } = tinyBatch(c, [3], 23)
    const B = batch.batchSize
    const S = batch.seqLen
    const H = c.hiddenSize
    const Ht = 24 // a wider teacher
    const hT = 2 // with fewer heads
    const rng = new Rng(31)
    // Teacher targets: a two-teacher mixture at T, hidden states and attention maps.
    const T = 2.5
    const teacherLogits = [0, 1].map(() => tf.tensor(rng.normalArray(B * S * 3, 2), [B, S, 3]))
    const pbar = softTargets(teacherLogits, T, [0.7, 0.3])
    const th0 = tf.tensor(rng.normalArray(B * S * Ht, 1), [B, S, Ht])
    const th2 = tf.tensor(rng.normalArray(B * S * Ht, 1), [B, S, Ht])
    const ta1 = tf.softmax(tf.tensor(rng.normalArray(B * hT * S * S, 1), [B, hT, S, S])) as tf.Tensor4D
    const W0 = tf.variable(tf.tensor(rng.normalArray(H * Ht, 0.3), [H, Ht]))
    const W2 = tf.variable(tf.tensor(rng.normalArray(H * Ht, 0.3), [H, Ht]))
    const w = { soft: 0.6, hard: 0.4, feature: 0.8 }
    const shape: [number, number] = [B, S]
    const seed = 99
    const vars = new Map([...model.variables(), ['distill.W_e', W0], ['distill.W_h.2', W2]] as Array<[string, tf.Variable]>)
    const mask = tf.tensor2d(batch.attentionMask, shape, 'int32')
    const ref = tf.variableGrads(() => {
      const out = model.forward(
        { inputIds: tf.tensor2d(batch.inputIds, shape, 'int32'), attentionMask: mask, tokenTypeIds: tf.tensor2d(batch.tokenTypeIds, shape, 'int32') },
        { training: true, seed, outputHiddenStates: true, outputAttentions: true },
      )
      const gold = tf.tensor2d(labels[0], shape, 'int32')
      const real = realMask(mask)
      const soft = softCrossEntropy(out.logits.default, pbar, labeledMask(gold), T)
      const hard = maskedCrossEntropy(out.logits.default, gold)
      const feat = tf.addN([hiddenMse(out.hiddenStates![0], th0, real, W0), hiddenMse(out.hiddenStates![2], th2, real, W2), attentionMse(out.attentions![1], ta1, real)])
      return tf.addN([tf.mul(soft, w.soft), tf.mul(hard, w.hard), tf.mul(feat, w.feature)]) as tf.Scalar
    }, [...vars.values()])
    const byVar = new Map([...vars].map(([n, v]) => [v.name, n]))
    const refGrads = new Map(Object.entries(ref.grads).map(([k, g]) => [byVar.get(k)!, g.dataSync() as Float32Array]))

    const ort = await loadOnnxRuntime()
    const graph = distillTrainGraph({
      config: onnxConfigOf(c),
      head: { name: 'default', numLabels: 3 },
      hiddenPairs: [
        { student: 0, teacherWidth: Ht, projection: 'distill.W_e' },
        { student: 2, teacherWidth: Ht, projection: 'distill.W_h.2' },
      ],
      attentionPairs: [{ student: 1, teacherHeads: hT }],
      dropout: dropoutSitesOf(dropoutProbabilities(c)),
    })
    const runner = await OrtGraphRunner.open(graph, { threads: 1, ort })
    const params = new Map([...vars].map(([n, v]) => [n, Float32Array.from(v.dataSync() as Float32Array)]))
    const f32 = (t: tf.Tensor) => new ort.Tensor('float32', Float32Array.from(t.dataSync() as Float32Array), t.shape)
    const softMask = Float32Array.from(labels[0], (l) => (l === -100 ? 0 : 1))
    const got = await runner.run(params, {
      ...batchFeeds(ort, batch, { default: labels[0] }),
      ...maskFeeds(runner, c, B, S, seed),
      temperature: new ort.Tensor('float32', new Float32Array([T]), []),
      'weight.soft': new ort.Tensor('float32', new Float32Array([w.soft]), []),
      'weight.hard': new ort.Tensor('float32', new Float32Array([w.hard]), []),
      'weight.feature': new ort.Tensor('float32', new Float32Array([w.feature]), []),
      soft_targets: f32(pbar),
      soft_mask: new ort.Tensor('float32', softMask, shape),
      'teacher_hidden.0': f32(th0),
      'teacher_hidden.1': f32(th2),
      'teacher_attention.0': f32(ta1),
    })
    await runner.dispose()
    expect(got.loss).toBeCloseTo(ref.value.dataSync()[0], 4)
    expect(Object.keys(got.terms).sort()).toEqual(['loss.attention.0', 'loss.hard', 'loss.hidden.0', 'loss.hidden.1', 'loss.soft'])
    let maxAbs = 0
    for (const g of refGrads.values()) for (const x of g) maxAbs = Math.max(maxAbs, Math.abs(x))
    expect([...got.grads.keys()].sort()).toEqual([...refGrads.keys()].sort())
    for (const [name, g] of refGrads) {
      const o = got.grads.get(name)!
      let err = 0
      for (let i = 0; i < g.length; i++) err = Math.max(err, Math.abs(g[i] - o[i]))
      expect(err / maxAbs, name).toBeLessThanOrEqual(1e-4)
    }
    model.dispose()
    tf.dispose([...teacherLogits, pbar, th0, th2, ta1, W0, W2, mask])
  })
})
