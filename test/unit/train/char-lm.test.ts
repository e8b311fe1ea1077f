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
