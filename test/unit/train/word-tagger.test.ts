// The word-level recurrent tagger: its onnxruntime training graph (emissions + CRF loss in one run)
// against tfjs autodiff of the same forward and of crfLoss (itself checked against brute force):
// the loss and every parameter's gradient, with padded rows, both directions, heads whose rows
// are each other's unlabelled rows (two with their own label counts, or three of which two share
// theirs and so one CRF computation, ./crf-graph), and dropout with identical masks; the tagging graph (ONNX's
// LSTM operator) against the same forward; input features and batches.

import * as tf from '@tensorflow/tfjs-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { useCpuBackend } from './tfSetup'
import { WordFeaturizer, shapeFlags, SHAPE_FLAGS, UNK_ID } from '@core/nlp/word-features'
import { initWordTaggerParams, wordBatch, wordBucket, wordTaggerConfig, wordTaggerInputDim, wordTaggerParamShapes, type WordBatch, type WordTaggerConfig } from '@core/model/word-tagger'
import { wordTaggerTaggingGraph, wordTaggerTrainGraph } from '@core/onnx/recurrent'
import { crfLoss } from '@core/train/loss'
import { OrtGraphRunner } from '@core/train/ort'
import { denseGradient } from '@core/train/optimizer'
import { logitsOutput } from '@core/onnx/training'
import { Rng } from '@core/rng'

beforeAll(async () => {
  await useCpuBackend()
})

const HEAD = 'default'

const TWO_HEADS = [
  { name: HEAD, numLabels: 3 },
  { name: 'chem', numLabels: 5 },
]

function tinySetup(seed: number, heads = TWO_HEADS) {
  const f = new WordFeaturizer(['<pad>', '<unk>', 'a', 'b', 'c', 'd', 'e'], ['<pad>', '<unk>', 'x', 'y', 'z', 'w'])
  const config: WordTaggerConfig = wordTaggerConfig(f, { wordDim: 4, charDim: 3, charFilters: 5, charWidth: 3, maxChars: 4, lstmHidden: 3, dropout: 0.3 })
  const params = initWordTaggerParams(config, heads, seed)
  // Non-zero CRF scores, so that their gradients and the transitions' effect are all exercised.
  const r = new Rng(seed + 9)
  for (const [name, v] of params) if (name.startsWith('crf')) v.set(r.normalArray(v.length, 0.5))
  // Words of exactly maxChars characters: no all-padding window, so the max over characters has no ties.
  const rng = new Rng(seed + 5)
  const word = () => Array.from({ length: 4 }, () => 'xyzw'[rng.int(4)]).join('')
  const sentences = (heads.length > 2 ? [5, 3, 1, 4] : [5, 3, 1]).map((n) => Array.from({ length: n }, word))
  // A word twice (and in two sentences): the graph's character CNN runs once per distinct word,
  // so its gradient must be the sum over both places, as tfjs's per-position autodiff gives it.
  sentences[1][1] = sentences[0][3]
  return { f, config, heads, params, sentences, rng }
}

/** The same forward in tfjs ops: the BiLSTM output after dropout [B·T, 2H] (heads apply their linear layer). */
function tfjsHidden(c: WordTaggerConfig, p: Record<string, tf.Tensor>, b: WordBatch, masks: { input: Float32Array; output: Float32Array }): tf.Tensor2D {
  const B = b.batchSize
  const T = b.steps
  const H = c.lstmHidden
  const L = c.maxChars
  const N = B * T
  const ids = tf.tensor1d(Array.from(b.wordIds, Number), 'int32')
  const words = tf.gather(p['embeddings.word_embeddings.weight'], ids) // [N, Dw]
  const chars = tf.reshape(tf.gather(p['char_cnn.char_embeddings.weight'], tf.tensor1d(Array.from(b.charIds, Number), 'int32')), [N, L, c.charDim])
  const half = (c.charWidth - 1) / 2
  const padded = tf.pad(chars, [
    [0, 0],
    [half, half],
    [0, 0],
  ])
  const windows = tf.reshape(tf.concat(Array.from({ length: c.charWidth }, (_, k) => tf.slice(padded, [0, k, 0], [N, L, c.charDim])), 2), [N * L, c.charWidth * c.charDim]) as tf.Tensor2D
  const conv = tf.reshape(tf.add(tf.matMul(windows, p['char_cnn.conv.weight'] as tf.Tensor2D), p['char_cnn.conv.bias']), [N, L, c.charFilters])
  const charFeat = tf.max(conv, 1) // [N, F]
  const x = tf.mul(tf.concat([words, charFeat, tf.tensor2d(b.shapes, [N, c.shapeFlags])], 1), tf.tensor2d(masks.input, [N, wordTaggerInputDim(c)]))
  const rev = tf.tensor1d(Array.from(b.reverseIndex, Number), 'int32')
  const dirInputs = [x, tf.gather(x, rev)].map((v) => tf.reshape(v, [B, T, -1]))
  const outs = [0, 1].map((dir) => {
    const wIh = tf.gather(p['lstm.weight_ih'], dir) as tf.Tensor2D
    const wHh = tf.gather(p['lstm.weight_hh'], dir) as tf.Tensor2D
    const bias = tf.gather(p['lstm.bias'], dir)
    let h = tf.zeros([B, H]) as tf.Tensor2D
    let cell = tf.zeros([B, H]) as tf.Tensor2D
    const hs: tf.Tensor2D[] = []
    for (let t = 0; t < T; t++) {
      const xt = tf.reshape(tf.slice(dirInputs[dir], [0, t, 0], [B, 1, -1]), [B, -1]) as tf.Tensor2D
      const z = tf.add(tf.add(tf.matMul(xt, wIh), tf.matMul(h, wHh)), bias)
      const [zi, zf, zg, zo] = tf.split(z, 4, 1)
      cell = tf.add(tf.mul(tf.sigmoid(zf), cell), tf.mul(tf.sigmoid(zi), tf.tanh(zg))) as tf.Tensor2D
      h = tf.mul(tf.sigmoid(zo), tf.tanh(cell)) as tf.Tensor2D
      hs.push(h)
    }
    return tf.reshape(tf.stack(hs, 1), [N, H])
  })
  return tf.mul(tf.concat([outs[0], tf.gather(outs[1], rev)], 1), tf.tensor2d(masks.output, [N, 2 * H])) as tf.Tensor2D
}

const headLinear = (p: Record<string, tf.Tensor>, hidden: tf.Tensor2D, prefix: string) => tf.add(tf.matMul(hidden, p[`${prefix}.weight`] as tf.Tensor2D), p[`${prefix}.bias`]) as tf.Tensor2D

describe('word tagger training graph', () => {
  // Three heads: 'default' and 'gene' share a label count, so their CRFs are one computation.
  const THREE_HEADS = [{ name: HEAD, numLabels: 3 }, { name: 'chem', numLabels: 5 }, { name: 'gene', numLabels: 3 }]
  it.each([
    ['two heads', TWO_HEADS],
    ['three heads, two of them one CRF computation', THREE_HEADS],
  ])('gives the CRF loss and every parameter the gradient tfjs autodiff gives, with padding, dropout and %s', async (_, headSet) => {
    const { f, config, heads, params, sentences, rng } = tinySetup(3, headSet)
    const T = 5
    const b = wordBatch(f, config, sentences, T)
    const N = b.batchSize * T
    const din = wordTaggerInputDim(config)
    const masks = { input: rng.fillDropoutMask(new Float32Array(N * din), 0.3), output: rng.fillDropoutMask(new Float32Array(N * 2 * config.lstmHidden), 0.3) }
    // Row 0 is the default head's corpus, rows 1 and 2 chem's, row 3 (three heads) gene's: each
    // head's labels are −100 on padding and on the other corpora's rows.
    const labels: Record<string, Int32Array> = Object.fromEntries(heads.map((h) => [h.name, new Int32Array(N).fill(-100)]))
    b.lengths.forEach((n, r) => {
      const h = heads[[0, 1, 1, 2][r]]
      for (let t = 0; t < n; t++) labels[h.name][r * T + t] = rng.int(h.numLabels)
    })

    const graph = wordTaggerTrainGraph({ dims: config, steps: T, heads, dropout: true })
    const runner = await OrtGraphRunner.open(graph, { threads: 1 })
    const ort = runner.ort
    const feeds: Record<string, InstanceType<typeof ort.Tensor>> = {
      word_ids: new ort.Tensor('int64', b.wordIds, [b.batchSize, T]),
      char_ids: new ort.Tensor('int64', b.charIds, [b.batchSize, T, config.maxChars]),
      shape_flags: new ort.Tensor('float32', b.shapes, [b.batchSize, T, SHAPE_FLAGS]),
      reverse_index: new ort.Tensor('int64', b.reverseIndex, [N]),
      'dropout.input': new ort.Tensor('float32', masks.input, [N, din]),
      'dropout.output': new ort.Tensor('float32', masks.output, [N, 2 * config.lstmHidden]),
    }
    for (const h of heads) feeds[`labels.${h.name}`] = new ort.Tensor('int64', BigInt64Array.from(labels[h.name], (v) => BigInt(v)), [b.batchSize, T])
    const out = await runner.run(params, feeds)
    await runner.dispose()

    const names = graph.params.map((p) => p.name)
    const shapes = new Map(graph.params.map((p) => [p.name, p.shape]))
    const { loss, terms, grads } = tf.tidy(() => {
      const termsOf = (xs: tf.Tensor[]) => {
        const p = Object.fromEntries(names.map((n, i) => [n, xs[i]]))
        const hidden = tfjsHidden(config, p, b, masks)
        return heads.map((h) => {
          const pre = h.name === HEAD ? 'classifier' : `classifiers.${h.name}`
          const crf = h.name === HEAD ? 'crf' : `crfs.${h.name}`
          const em = tf.reshape(headLinear(p, hidden, pre), [b.batchSize, T, h.numLabels])
          return crfLoss(em, labels[h.name], p[`${crf}.transitions`], p[`${crf}.start_transitions`], p[`${crf}.end_transitions`])
        })
      }
      const lossOf = (...xs: tf.Tensor[]) => tf.addN(termsOf(xs)) as tf.Scalar
      const xs = names.map((n) => tf.tensor(params.get(n)!, shapes.get(n)!))
      const g = tf.grads(lossOf)(xs).map((t) => t.dataSync() as Float32Array)
      return { loss: lossOf(...xs).dataSync()[0], terms: termsOf(xs).map((x) => x.dataSync()[0]), grads: g }
    })
    expect(out.loss).toBeCloseTo(loss, 4)
    expect(out.loss).toBeGreaterThan(0)
    heads.forEach((h, k) => expect(out.terms[`loss.${h.name}`], `loss of ${h.name}`).toBeCloseTo(terms[k], 4))
    // The word table's gradient comes as the rows the batch read: as a table it is tfjs's.
    expect([...out.rowGrads.keys()]).toEqual(['embeddings.word_embeddings.weight'])
    for (const [n, r] of out.rowGrads) out.grads.set(n, denseGradient(r, params.get(n)!.length))
    names.forEach((n, i) => {
      const got = out.grads.get(n)!
      const want = grads[i]
      let maxAbs = 0
      let scale = 1e-6
      for (let k = 0; k < want.length; k++) {
        maxAbs = Math.max(maxAbs, Math.abs(got[k] - want[k]))
        scale = Math.max(scale, Math.abs(want[k]))
      }
      expect(maxAbs / scale, `gradient of ${n}`).toBeLessThan(2e-4)
      expect(scale, `gradient of ${n} is not all zero`).toBeGreaterThan(1e-5)
    })
  })
})

describe('word tagger tagging graph', () => {
  it("gives the forward's emissions (dropout off) with ONNX's LSTM operator, for any length", async () => {
    const { f, config, heads, params, sentences } = tinySetup(4)
    const T = 5
    const b = wordBatch(f, config, sentences, T)
    const N = b.batchSize * T
    const tagging = await OrtGraphRunner.open(wordTaggerTaggingGraph(config, heads), { threads: 1 })
    const ort = tagging.ort
    const out = await tagging.outputs(params, {
      word_ids: new ort.Tensor('int64', b.wordIds, [b.batchSize, T]),
      char_ids: new ort.Tensor('int64', b.charIds, [b.batchSize, T, config.maxChars]),
      shape_flags: new ort.Tensor('float32', b.shapes, [b.batchSize, T, SHAPE_FLAGS]),
      sequence_lens: new ort.Tensor('int32', Int32Array.from(b.lengths), [b.batchSize]),
    })
    await tagging.dispose()
    const ones = { input: new Float32Array(N * wordTaggerInputDim(config)).fill(1), output: new Float32Array(N * 2 * config.lstmHidden).fill(1) }
    let compared = 0
    for (const h of heads) {
      const want = tf.tidy(() => {
        const p = Object.fromEntries([...params].map(([n, v]) => [n, tf.tensor(v)]))
        for (const [n, shape] of wordTaggerParamShapes(config, heads)) p[n] = tf.reshape(p[n], shape)
        return headLinear(p, tfjsHidden(config, p, b, ones), h.name === HEAD ? 'classifier' : `classifiers.${h.name}`).dataSync() as Float32Array
      })
      const got = out[logitsOutput(h.name)].data as Float32Array
      b.lengths.forEach((n, r) => {
        for (let t = 0; t < n; t++) {
          for (let j = 0; j < h.numLabels; j++) {
            expect(got[(r * T + t) * h.numLabels + j]).toBeCloseTo(want[(r * T + t) * h.numLabels + j], 4)
            compared++
          }
        }
      })
    }
    expect(compared).toBe(9 * (3 + 5))
  })
})

describe('word features', () => {
  it('learns lower-cased words by frequency and every character, with <pad>/<unk> first', () => {
    const f = WordFeaturizer.learn(['Fever', 'fever', 'IL-2', 'fever', 'α'])
    expect(f.words).toEqual(['<pad>', '<unk>', 'fever', 'il-2', 'α'])
    expect(f.wordId('FEVER')).toBe(2)
    expect(f.wordId('cough')).toBe(UNK_ID)
    expect(f.charId('α')).toBeGreaterThan(1)
    expect(f.charId('Ω')).toBe(UNK_ID)
    expect([...f.singletons].map((i) => f.words[i]).sort()).toEqual(['il-2', 'α'])
    expect(WordFeaturizer.learn(['a', 'a', 'b'], { minCount: 2 }).words).toEqual(['<pad>', '<unk>', 'a'])
  })

  it('flags case and shape as the reference does', () => {
    const flags = (w: string) => {
      const out = new Float32Array(SHAPE_FLAGS)
      shapeFlags(w, out, 0)
      return Array.from(out)
    }
    expect(flags('Crohn')).toEqual([1, 0, 0, 0])
    expect(flags('BRCA1')).toEqual([1, 1, 1, 0])
    expect(flags('-')).toEqual([0, 0, 0, 1])
    expect(flags('a')).toEqual([0, 0, 0, 0])
    expect(flags('I')).toEqual([1, 0, 0, 0])
  })

  it('pads a batch to its bucket and reverses each sentence within its own length', () => {
    const f = WordFeaturizer.learn(['a', 'b', 'c'])
    const c = wordTaggerConfig(f, { maxChars: 2 })
    const b = wordBatch(f, c, [['a', 'b', 'c'], ['b']], 4)
    expect(Array.from(b.reverseIndex, Number)).toEqual([2, 1, 0, 3, 4, 5, 6, 7])
    expect(Array.from(b.wordIds, Number)).toEqual([f.wordId('a'), f.wordId('b'), f.wordId('c'), 0, f.wordId('b'), 0, 0, 0])
    expect(b.numWords).toBe(4)
    expect(wordBucket(1)).toBe(8)
    expect(wordBucket(17)).toBe(24)
    expect(() => wordBatch(f, c, [['a', 'b', 'c', 'a', 'b']], 4)).toThrow(/5 words/)
  })
})
