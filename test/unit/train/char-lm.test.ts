// The character language model: its onnxruntime training chunk (both directions stacked, a state
// carried in from the previous chunk, dropout) against tfjs autodiff of the same forward: the loss,
// every parameter's gradient and the state handed to the next chunk; the vocabulary and the folder.

import * as tf from '@tensorflow/tfjs-core'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useCpuBackend } from './tfSetup'
import { CHAR_LM_PARAMS, CharLmEncoder, charLmVocabulary, initCharLmParams, loadCharLm, saveCharLm, type CharLmDims } from '@core/model/char-lm'
import { CHAR_LM_STATE_OUTPUTS, charLmTrainGraph } from '@core/onnx/char-lm'
import { OrtGraphRunner } from '@core/train/ort'
import { denseGradient } from '@core/train/optimizer'
import { Rng } from '@core/rng'
import { WordFeaturizer } from '@core/nlp/word-features'
import { charLmInputs, initWordTaggerParams, loadWordTagger, saveWordTagger, wordBatch, wordTaggerConfig, type WordTaggerConfig } from '@core/model/word-tagger'
import { CHAR_LM_STATES_INPUT, wordTaggerTaggingGraph, wordTaggerTrainGraph } from '@core/onnx/recurrent'
import { batchCharLmStates, charLmFeeds, charLmStatesOf } from '@core/onnx/char-lm'
import { logitsOutput } from '@core/onnx/training'
import { WordTaggerEngine } from '@core/onnx/word-engine'
import { crfBatchLoss } from '@core/model/crf'

beforeAll(async () => {
  await useCpuBackend()
})

const tmp = mkdtempSync(join(tmpdir(), 'charlm-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

describe('character LM training graph', () => {
  it('gives the loss, every gradient and the next state that tfjs autodiff gives, from a carried state, with dropout', async () => {
    const dims: CharLmDims = { charVocabSize: 6, charDim: 3, hidden: 4 }
    const { charVocabSize: V, hidden: H } = dims
    const B = 2
    const T = 3
    const params = initCharLmParams(dims, 7)
    const rng = new Rng(11)
    // Direction d's ids are rows d·V + k of the stacked table; one target is −100 (no next character).
    const chars = Array.from({ length: 2 * B * T }, () => rng.int(V))
    const ids = BigInt64Array.from(chars, (k, i) => BigInt(k + (i >= B * T ? V : 0)))
    const next = BigInt64Array.from({ length: 2 * B * T }, () => BigInt(rng.int(V)))
    next[4] = -100n
    const h0 = rng.normalArray(2 * B * H, 0.5)
    const c0 = rng.normalArray(2 * B * H, 0.5)
    const mask = rng.fillDropoutMask(new Float32Array(2 * B * T * H), 0.3)

    const graph = charLmTrainGraph({ dims, steps: T, dropout: true })
    const runner = await OrtGraphRunner.open(graph, { threads: 1 })
    const ort = runner.ort
    const out = await runner.run(params, {
      char_ids: new ort.Tensor('int64', ids, [2, B, T]),
      next_ids: new ort.Tensor('int64', next, [2, B, T]),
      'state.h': new ort.Tensor('float32', h0, [2, B, H]),
      'state.c': new ort.Tensor('float32', c0, [2, B, H]),
      'dropout.output': new ort.Tensor('float32', mask, [2, B * T, H]),
    })
    await runner.dispose()

    const names = graph.params.map((p) => p.name)
    const shapes = new Map(graph.params.map((p) => [p.name, p.shape]))
    const forward = (p: Record<string, tf.Tensor>) => {
      const losses: tf.Tensor[] = []
      const finals: tf.Tensor[] = []
      for (const d of [0, 1]) {
        const x = tf.reshape(tf.gather(p[CHAR_LM_PARAMS.embeddings], tf.tensor1d(Array.from(ids.slice(d * B * T, (d + 1) * B * T), Number), 'int32')), [B, T, -1])
        const wIh = tf.gather(p[CHAR_LM_PARAMS.weightIh], d) as tf.Tensor2D
        const wHh = tf.gather(p[CHAR_LM_PARAMS.weightHh], d) as tf.Tensor2D
        const bias = tf.gather(p[CHAR_LM_PARAMS.bias], d)
        let h = tf.tensor2d(h0.slice(d * B * H, (d + 1) * B * H), [B, H])
        let c = tf.tensor2d(c0.slice(d * B * H, (d + 1) * B * H), [B, H])
        const hs: tf.Tensor2D[] = []
        for (let s = 0; s < T; s++) {
          const xt = tf.reshape(tf.slice(x, [0, s, 0], [B, 1, -1]), [B, -1]) as tf.Tensor2D
          const [zi, zf, zg, zo] = tf.split(tf.add(tf.add(tf.matMul(xt, wIh), tf.matMul(h, wHh)), bias), 4, 1)
          c = tf.add(tf.mul(tf.sigmoid(zf), c), tf.mul(tf.sigmoid(zi), tf.tanh(zg))) as tf.Tensor2D
          h = tf.mul(tf.sigmoid(zo), tf.tanh(c)) as tf.Tensor2D
          hs.push(h)
        }
        finals.push(h, c)
        const hidden = tf.mul(tf.reshape(tf.stack(hs, 1), [B * T, H]), tf.tensor2d(mask.slice(d * B * T * H, (d + 1) * B * T * H), [B * T, H]))
        const logits = tf.add(tf.matMul(hidden, tf.gather(p[CHAR_LM_PARAMS.decoderWeight], d) as tf.Tensor2D), tf.gather(p[CHAR_LM_PARAMS.decoderBias], d))
        const logp = tf.logSoftmax(logits)
        for (let r = 0; r < B * T; r++) {
          const y = Number(next[d * B * T + r])
          if (y >= 0) losses.push(tf.neg(tf.slice(logp, [r, y], [1, 1])))
        }
      }
      return { loss: tf.div(tf.sum(tf.addN(losses)), losses.length) as tf.Scalar, finals }
    }
    const want = tf.tidy(() => {
      const xs = names.map((n) => tf.tensor(params.get(n)!, shapes.get(n)!))
      const lossOf = (...v: tf.Tensor[]) => forward(Object.fromEntries(names.map((n, i) => [n, v[i]]))).loss
      const grads = tf.grads(lossOf)(xs).map((g) => g.dataSync() as Float32Array)
      const f = forward(Object.fromEntries(names.map((n, i) => [n, xs[i]])))
      return { loss: f.loss.dataSync()[0], grads, h: [f.finals[0], f.finals[2]].flatMap((v) => [...v.dataSync()]), c: [f.finals[1], f.finals[3]].flatMap((v) => [...v.dataSync()]) }
    })
    expect(out.loss).toBeCloseTo(want.loss, 5)
    const close = (got: ArrayLike<number>, exp: ArrayLike<number>, what: string) => {
      let maxAbs = 0
      let scale = 1e-6
      for (let k = 0; k < exp.length; k++) {
        maxAbs = Math.max(maxAbs, Math.abs(got[k] - exp[k]))
        scale = Math.max(scale, Math.abs(exp[k]))
      }
      expect(maxAbs / scale, what).toBeLessThan(2e-4)
      expect(scale, `${what} is not all zero`).toBeGreaterThan(1e-5)
    }
    close(out.outputs[CHAR_LM_STATE_OUTPUTS.h].data as Float32Array, want.h, 'next h')
    close(out.outputs[CHAR_LM_STATE_OUTPUTS.c].data as Float32Array, want.c, 'next c')
    expect([...out.rowGrads.keys()]).toEqual([CHAR_LM_PARAMS.embeddings])
    for (const [n, r] of out.rowGrads) out.grads.set(n, denseGradient(r, params.get(n)!.length))
    names.forEach((n, i) => close(out.grads.get(n)!, want.grads[i], `gradient of ${n}`))
  })
})

describe('character LM vocabulary and folder', () => {
  it('keeps characters seen often enough and the sentence break, <unk> first, and encodes by code point', () => {
    const counts = new Map([['a', 30], ['b', 2], ['𝛼', 25], [' ', 40]])
    const chars = charLmVocabulary(counts, 20)
    expect(chars).toEqual(['<unk>', '\n', ' ', 'a', '𝛼'])
    expect([...new CharLmEncoder(chars).encode('ab 𝛼\n')]).toEqual([3, 0, 2, 4, 1])
  })

  it('saves and loads the weights and the characters (line break and space included), and refuses a folder whose sizes disagree', () => {
    const dims: CharLmDims = { charVocabSize: 4, charDim: 2, hidden: 3 }
    const params = initCharLmParams(dims, 1)
    const dir = join(tmp, 'lm')
    saveCharLm(dir, { dims, dropout: 0.1, chars: ['<unk>', '\n', ' ', 'x'], params })
    const back = loadCharLm(dir)
    expect(back.chars).toEqual(['<unk>', '\n', ' ', 'x'])
    expect(back.dims).toEqual(dims)
    expect([...back.params.get(CHAR_LM_PARAMS.weightHh)!]).toEqual([...params.get(CHAR_LM_PARAMS.weightHh)!])
    expect(() => saveCharLm(join(tmp, 'bad'), { dims, dropout: 0.1, chars: ['<unk>', 'x'], params })).toThrow(/2 characters for a vocabulary of 4/)
  })
})

/** One direction of the LM in plain arithmetic: h after each of `ids` (a row of the stacked table each). */
function lstmStates(p: Map<string, Float32Array>, d: CharLmDims, dir: number, ids: number[]): Float32Array[] {
  const { charDim: E, hidden: H } = d
  const table = p.get(CHAR_LM_PARAMS.embeddings)!
  const wIh = p.get(CHAR_LM_PARAMS.weightIh)!.subarray(dir * E * 4 * H, (dir + 1) * E * 4 * H)
  const wHh = p.get(CHAR_LM_PARAMS.weightHh)!.subarray(dir * H * 4 * H, (dir + 1) * H * 4 * H)
  const bias = p.get(CHAR_LM_PARAMS.bias)!.subarray(dir * 4 * H, (dir + 1) * 4 * H)
  const sig = (v: number) => 1 / (1 + Math.exp(-v))
  let h = new Float32Array(H)
  let c = new Float32Array(H)
  return ids.map((row) => {
    const z = Float64Array.from(bias)
    for (let e = 0; e < E; e++) for (let k = 0; k < 4 * H; k++) z[k] += table[row * E + e] * wIh[e * 4 * H + k]
    for (let j = 0; j < H; j++) for (let k = 0; k < 4 * H; k++) z[k] += h[j] * wHh[j * 4 * H + k]
    const c2 = new Float32Array(H)
    const h2 = new Float32Array(H)
    for (let j = 0; j < H; j++) {
      c2[j] = sig(z[H + j]) * c[j] + sig(z[j]) * Math.tanh(z[2 * H + j])
      h2[j] = sig(z[3 * H + j]) * Math.tanh(c2[j])
    }
    h = h2
    c = c2
    return h
  })
}

describe('a word tagger that reads a character LM', () => {
  const chars = ['<unk>', '\n', ' ', 'x', 'y', 'z', 'w']
  const lmDims: CharLmDims = { charVocabSize: chars.length, charDim: 3, hidden: 4 }
  const lmParams = initCharLmParams(lmDims, 5)
  const lm = { ...lmDims, chars }
  const sentences = [['xy', 'zzw', 'x'], ['wq'], ['y', 'x', 'yy', 'z', 'w']] // 'q' is not in the LM's characters

  it("reads, per word, the forward state after the word's last character and the backward state after its first", async () => {
    const states = await charLmStatesOf(lm, lmParams, sentences, { threads: 1 })
    const enc = new CharLmEncoder(chars)
    const H = lmDims.hidden
    sentences.forEach((words, s) => {
      const text = words.join(' ')
      const fwd = lstmStates(lmParams, lmDims, 0, Array.from(enc.encode('\n' + text)))
      const bwd = lstmStates(lmParams, lmDims, 1, Array.from(enc.encode('\n' + [...text].reverse().join(''))).map((k) => k + lmDims.charVocabSize))
      expect(states[s].length).toBe(words.length * 2 * H)
      let start = 0
      words.forEach((w, t) => {
        const got = states[s].subarray(t * 2 * H, (t + 1) * 2 * H)
        const want = [...fwd[start + w.length], ...bwd[text.length - start]]
        want.forEach((v, k) => expect(got[k], `sentence ${s} word ${t} unit ${k}`).toBeCloseTo(v, 5))
        start += w.length + 1
      })
    })
  })

  it('trains on the states computed once and tags with the LM inside the graph: the same CRF loss', async () => {
    const f = new WordFeaturizer(['<pad>', '<unk>', 'xy', 'x', 'y'], ['<pad>', '<unk>', 'x', 'y', 'z', 'w'])
    const config: WordTaggerConfig = wordTaggerConfig(f, { wordDim: 4, charDim: 3, charFilters: 5, maxChars: 4, lstmHidden: 3, dropout: 0, charLm: lm })
    const heads = [{ name: 'default', numLabels: 3 }]
    const params = initWordTaggerParams(config, heads, 9)
    for (const [n, v] of lmParams) params.get(n)!.set(v)
    const crf = params.get('crf.transitions')!
    crf.set(new Rng(2).normalArray(crf.length, 0.5))
    const T = 5
    const b = wordBatch(f, config, sentences, T)
    const B = b.batchSize
    const labels = new Int32Array(B * T).fill(-100)
    const rng = new Rng(3)
    b.lengths.forEach((n, r) => {
      for (let t = 0; t < n; t++) labels[r * T + t] = rng.int(3)
    })
    b.charLmStates = batchCharLmStates(await charLmStatesOf(lm, params, sentences, { threads: 1 }), T, 2 * lmDims.hidden)

    const train = await OrtGraphRunner.open(wordTaggerTrainGraph({ dims: config, steps: T, heads, dropout: false }), { threads: 1 })
    const ort = train.ort
    const common = {
      word_ids: new ort.Tensor('int64', b.wordIds, [B, T]),
      char_ids: new ort.Tensor('int64', b.charIds, [B, T, config.maxChars]),
      shape_flags: new ort.Tensor('float32', b.shapes, [B, T, config.shapeFlags]),
    }
    const trained = new Map([...params].filter(([n]) => !n.startsWith('char_lm.')))
    expect(train.graph.params.map((p) => p.name).filter((n) => n.startsWith('char_lm.'))).toEqual([])
    const r = await train.run(trained, {
      ...common,
      reverse_index: new ort.Tensor('int64', b.reverseIndex, [B * T]),
      [CHAR_LM_STATES_INPUT]: new ort.Tensor('float32', b.charLmStates, [B, T, 2 * lmDims.hidden]),
      'labels.default': new ort.Tensor('int64', BigInt64Array.from(labels, (v) => BigInt(v)), [B, T]),
    })
    await train.dispose()
    // The BiLSTM reads words (4), characters (5), shape flags (4) and both LM directions (2 × 4).
    expect(r.grads.get('lstm.weight_ih')!.length).toBe(2 * (4 + 5 + 4 + 8) * 4 * 3)

    const tagging = await OrtGraphRunner.open(wordTaggerTaggingGraph(config, heads), { threads: 1 })
    const out = await tagging.outputs(params, { ...common, ...charLmFeeds(ort, charLmInputs(lm, sentences, T), B), sequence_lens: new ort.Tensor('int32', Int32Array.from(b.lengths), [B]) })
    await tagging.dispose()
    const logits = out[logitsOutput('default')].data as Float32Array
    const want = crfBatchLoss(logits, labels, B, T, 3, { transitions: params.get('crf.transitions')!, start: params.get('crf.start_transitions')!, end: params.get('crf.end_transitions')! })
    expect(r.loss).toBeCloseTo(want.loss, 4)

    // Tagging that keeps each sentence's LM states (a training run's devel tagging) gives the same logits.
    const batch = { inputIds: new Int32Array(B * (T + 2)), attentionMask: new Int32Array(B * (T + 2)).fill(1), batch: B, seq: T + 2, words: sentences.map((texts) => ({ positions: texts.map((_, i) => i + 1), texts })) }
    const plain = new WordTaggerEngine(config, f, heads, params, { threads: 1 })
    const cached = new WordTaggerEngine(config, f, heads, params, { threads: 1, cacheCharLmStates: true })
    const want2 = (await plain.run(batch)).logits.default
    for (let round = 0; round < 2; round++) {
      const got2 = (await cached.run(batch)).logits.default
      want2.forEach((v, k) => expect(got2[k]).toBeCloseTo(v, 5))
    }
    expect(want2.some((v) => v !== 0)).toBe(true)
    await plain.dispose()
    await cached.dispose()

    // The folder keeps the LM: its sizes, characters and weights.
    const dir = join(tmp, 'tagger')
    saveWordTagger(dir, { config, featurizer: f, heads: { default: ['O', 'B-X', 'I-X'] }, params })
    const back = loadWordTagger(dir)
    expect(back.config.charLm).toEqual(lm)
    expect([...back.params.get(CHAR_LM_PARAMS.weightHh)!]).toEqual([...lmParams.get(CHAR_LM_PARAMS.weightHh)!])
  })
})
