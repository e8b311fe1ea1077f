// Kernel overrides (src/core/model/kernels.ts) against the stock cpu kernels, and the BERT
// training gradients on wasm against cpu.

import * as tf from '@tensorflow/tfjs-core'
import { useBackend } from '@core/model/backend'
import { BertTokenClassifier, makeBertConfig } from '@core/model/bert'
import { gelu, layerNorm } from '@core/model/ops'
import { stockKernels } from '@core/model/kernels'

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length)
  let m = 0
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]))
  return m
}

/** Runs f on a backend with the stock kernel temporarily restored. */
function withStock<T>(kernel: string, backend: string, f: () => T): T {
  const stock = stockKernels.get(`${backend}/${kernel}`)
  if (!stock) throw new Error(`no stock ${backend}/${kernel} recorded`)
  const ours = tf.getKernel(kernel, backend)!
  tf.unregisterKernel(kernel, backend)
  tf.registerKernel(stock)
  try {
    return f()
  } finally {
    tf.unregisterKernel(kernel, backend)
    tf.registerKernel(ours)
  }
}

function seeded(n: number, seed: number): Float32Array {
  let s = seed
  return Float32Array.from({ length: n }, () => {
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 1073741824 - 1
  })
}

/** Evaluates f on a backend and returns plain arrays (computed tensors disposed). */
async function on(backend: 'cpu' | 'wasm', f: () => tf.Tensor): Promise<Float32Array | Int32Array> {
  await useBackend(backend)
  const t = f()
  const v = t.dataSync() as Float32Array | Int32Array
  t.dispose()
  return v.slice()
}

beforeAll(async () => {
  // Install both sets of overrides (and record the stock kernels).
  await useBackend('wasm')
  await useBackend('cpu')
})

describe('UnsortedSegmentSum', () => {
  // The op takes 1-D segment ids (one per row of x).
  const cases: Array<{ name: string; x: number[]; ids: number[]; idsShape: [number]; xShape: number[]; n: number; dtype: 'float32' | 'int32' }> = [
    { name: '1-D ids, out-of-range ids dropped', xShape: [6, 3], ids: [0, 2, 2, -1, 5, 1], idsShape: [6], n: 4, dtype: 'float32', x: [] },
    { name: 'rows of rank-3 values', xShape: [6, 3, 2], ids: [1, 0, 1, 2, 2, 0], idsShape: [6], n: 3, dtype: 'float32', x: [] },
    { name: 'int32 values', xShape: [5, 2], ids: [3, 3, 0, 1, 3], idsShape: [5], n: 4, dtype: 'int32', x: [] },
    { name: 'embedding-gradient shape', xShape: [40, 8], ids: Array.from({ length: 40 }, (_, i) => (i * 7) % 13), idsShape: [40], n: 29, dtype: 'float32', x: [] },
  ]
  for (const c of cases) {
    test(c.name, async () => {
      const size = c.xShape.reduce((a, b) => a * b, 1)
      const xs = c.dtype === 'int32' ? Int32Array.from(seeded(size, 7), (v) => Math.round(v * 10)) : seeded(size, 7)
      const f = () => tf.unsortedSegmentSum(tf.tensor(xs, c.xShape, c.dtype), tf.tensor1d(c.ids, 'int32'), c.n)
      await useBackend('cpu')
      const expected = withStock('UnsortedSegmentSum', 'cpu', () => f().dataSync().slice())
      for (const backend of ['cpu', 'wasm'] as const) {
        await useBackend(backend)
        const t = f()
        expect(t.shape).toEqual([c.n, ...c.xShape.slice(c.idsShape.length)])
        // TF keeps the values' dtype (the stock cpu kernel returns float32 for int32 input).
        expect(t.dtype).toBe(c.dtype)
        t.dispose()
      }
      const cpu = await on('cpu', f)
      const wasm = await on('wasm', f)
      expect(maxAbsDiff(cpu, expected)).toBeLessThan(1e-6)
      expect(maxAbsDiff(wasm, expected)).toBeLessThan(1e-6)
    })
  }
  test('gradient of gather (embedding lookup) on wasm equals cpu', async () => {
    const table = seeded(29 * 4, 3)
    const idx = [3, 3, 0, 28, 7, 3]
    const g = () => tf.grad((t: tf.Tensor) => tf.sum(tf.mul(tf.gather(t, tf.tensor1d(idx, 'int32')), tf.tensor(seeded(24, 5), [6, 4]))))(tf.tensor(table, [29, 4]))
    expect(maxAbsDiff(await on('wasm', g), await on('cpu', g))).toBeLessThan(1e-6)
  })
})

describe('BatchMatMul on wasm', () => {
  const shapes: Array<[number[], number[]]> = [
    [[5, 7], [7, 3]],
    [[2, 3, 5, 7], [2, 3, 7, 4]],
    [[1, 5, 7], [4, 7, 3]],
    [[4, 5, 7], [1, 7, 3]],
    [[4, 5, 7], [7, 3]],
    [[64, 33], [33, 65]],
  ]
  for (const [sa, sb] of shapes) {
    for (const ta of [false, true]) {
      for (const tb of [false, true]) {
        test(`[${sa}]${ta ? 'ᵀ' : ''} · [${sb}]${tb ? 'ᵀ' : ''}`, async () => {
          const swap = (s: number[]) => [...s.slice(0, -2), s[s.length - 1], s[s.length - 2]]
          const aShape = ta ? swap(sa) : sa
          const bShape = tb ? swap(sb) : sb
          const av = seeded(aShape.reduce((x, y) => x * y, 1), 11)
          const bv = seeded(bShape.reduce((x, y) => x * y, 1), 13)
          const f = () => tf.matMul(tf.tensor(av, aShape), tf.tensor(bv, bShape), ta, tb)
          const cpu = await on('cpu', f)
          await useBackend('wasm')
          const t = f()
          const expectedShape = tf.tidy(() => f().shape)
          expect(t.shape).toEqual(expectedShape)
          const wasm = t.dataSync()
          t.dispose()
          expect(maxAbsDiff(wasm, cpu)).toBeLessThan(1e-5)
        })
      }
    }
  }
  test('fused matMul with bias (the dense layers) and its gradients', async () => {
    const x = seeded(6 * 5, 1)
    const w = seeded(5 * 4, 2)
    const b = seeded(4, 3)
    const dy = seeded(6 * 4, 4)
    const grads = () =>
      tf.tidy(() => {
        const gs = tf.grads((xx: tf.Tensor, ww: tf.Tensor, bb: tf.Tensor) =>
          tf.sum(tf.mul(tf.fused.matMul({ a: xx as tf.Tensor2D, b: ww as tf.Tensor2D, bias: bb }), tf.tensor(dy, [6, 4]))),
        )([tf.tensor(x, [6, 5]), tf.tensor(w, [5, 4]), tf.tensor(b, [4])])
        return tf.concat(gs.map((g) => tf.reshape(g, [-1])))
      })
    expect(maxAbsDiff(await on('wasm', grads), await on('cpu', grads))).toBeLessThan(1e-5)
  })
  test('no memory is leaked by the aliasing matmul (tensors, nor XNNPACK operators on the heap)', async () => {
    await useBackend('wasm')
    const heapBytes = () => (tf.backend() as unknown as { wasm: { HEAPU8: Uint8Array } }).wasm.HEAPU8.length
    // Each call packs 8 weight slices of 256 KB; a leaked operator would grow the heap by 60 MB.
    const a = tf.tensor(seeded(8 * 16 * 256, 1), [8, 16, 256])
    const b = tf.tensor(seeded(8 * 256 * 256, 2), [8, 256, 256])
    tf.matMul(a, b, false, true).dispose()
    const before = tf.memory().numTensors
    const bytes = tf.memory().numBytes
    const heap = heapBytes()
    for (let i = 0; i < 30; i++) tf.matMul(a, b, false, true).dispose()
    expect(tf.memory().numTensors).toBe(before)
    expect(tf.memory().numBytes).toBe(bytes)
    expect(heapBytes()).toBeLessThan(heap + 20e6)
    tf.dispose([a, b])
  })
})

describe('Sum and Transpose on wasm', () => {
  const cases: Array<[number[], number | number[], boolean]> = [
    [[7, 5], 0, false],
    [[3, 4, 5], [0, 1], true],
    [[3, 4, 5], [1, 0], false],
    [[3, 4, 5], -1, false],
    [[3, 4, 5], [0, 2], true],
    [[600, 1000], 0, false],
  ]
  for (const [shape, axis, keepDims] of cases) {
    test(`sum [${shape}] over ${JSON.stringify(axis)}${keepDims ? ' keepDims' : ''}`, async () => {
      const v = seeded(shape.reduce((x, y) => x * y, 1), 5)
      const f = () => tf.sum(tf.tensor(v, shape), axis, keepDims)
      await useBackend('cpu')
      const shapeCpu = tf.tidy(() => f().shape)
      const cpu = await on('cpu', f)
      await useBackend('wasm')
      expect(tf.tidy(() => f().shape)).toEqual(shapeCpu)
      expect(maxAbsDiff(await on('wasm', f), cpu)).toBeLessThan(1e-3)
    })
  }
  const perms: Array<[number[], number[]]> = [
    [[600, 1000], [1, 0]],
    [[1, 800, 700], [0, 2, 1]],
    [[4, 5, 6], [2, 0, 1]],
    [[1, 5, 1, 6], [2, 0, 1, 3]],
  ]
  for (const [shape, perm] of perms) {
    test(`transpose [${shape}] by [${perm}]`, async () => {
      const v = seeded(shape.reduce((x, y) => x * y, 1), 6)
      const f = () => tf.transpose(tf.tensor(v, shape), perm)
      const cpu = await on('cpu', f)
      await useBackend('wasm')
      expect(tf.tidy(() => f().shape)).toEqual(perm.map((p) => shape[p]))
      expect(maxAbsDiff(await on('wasm', f), cpu)).toBe(0)
    })
  }
})

test('Identity on wasm shares the buffer and survives disposal of the source', async () => {
  await useBackend('wasm')
  const a = tf.tensor([1, 2, 3])
  const c = tf.clone(a)
  a.dispose()
  expect(Array.from(c.dataSync())).toEqual([1, 2, 3])
  c.dispose()
})

describe('hand-written gradients', () => {
  test('layerNorm gradient equals autodiff of the plain formula', async () => {
    await useBackend('cpu')
    const x = tf.tensor(seeded(3 * 4 * 6, 21), [3, 4, 6])
    const g = tf.tensor(seeded(6, 22), [6])
    const b = tf.tensor(seeded(6, 23), [6])
    const w = tf.tensor(seeded(3 * 4 * 6, 24), [3, 4, 6])
    const plain = (xx: tf.Tensor, gg: tf.Tensor, bb: tf.Tensor) => {
      const mean = tf.mean(xx, -1, true)
      const v = tf.mean(tf.square(tf.sub(xx, mean)), -1, true)
      return tf.add(tf.mul(tf.div(tf.sub(xx, mean), tf.sqrt(tf.add(v, 1e-5))), gg), bb)
    }
    const ours = tf.grads((xx: tf.Tensor, gg: tf.Tensor, bb: tf.Tensor) => tf.sum(tf.mul(layerNorm(xx, gg, bb, 1e-5), w)))([x, g, b])
    const ref = tf.grads((xx: tf.Tensor, gg: tf.Tensor, bb: tf.Tensor) => tf.sum(tf.mul(plain(xx, gg, bb), w)))([x, g, b])
    ours.forEach((o, i) => expect(maxAbsDiff(o.dataSync(), ref[i].dataSync())).toBeLessThan(1e-5))
  })
  test('gelu gradient equals autodiff of 0.5·x·(1+erf(x/√2))', async () => {
    await useBackend('cpu')
    const x = tf.tensor(seeded(50, 31).map((v) => v * 4))
    const ours = tf.grad((xx: tf.Tensor) => tf.sum(gelu(xx)))(x)
    const ref = tf.grad((xx: tf.Tensor) => tf.sum(tf.mul(tf.mul(xx, 0.5), tf.add(1, tf.erf(tf.div(xx, Math.SQRT2))))))(x)
    expect(maxAbsDiff(ours.dataSync(), ref.dataSync())).toBeLessThan(1e-5)
  })
})

describe('BERT training step on wasm vs cpu', () => {
  const config = makeBertConfig({ vocabSize: 30, hiddenSize: 16, numHiddenLayers: 2, numAttentionHeads: 2, intermediateSize: 32, maxPositionEmbeddings: 10, initializerRange: 0.2 })
  const ids = [
    [2, 5, 9, 11, 3, 0],
    [2, 7, 3, 0, 0, 0],
  ]
  const mask = ids.map((r) => r.map((v) => (v ? 1 : 0)))
  const labels = [
    [0, 1, 2, 0, 0, 0],
    [0, 1, 0, 0, 0, 0],
  ]

  async function grads(backend: 'cpu' | 'wasm', training: boolean) {
    await useBackend(backend)
    const model = BertTokenClassifier.random(config, 42, { default: ['O', 'B', 'I'] })
    try {
      const { value, grads: g } = tf.variableGrads(() => {
        const out = model.forward(
          { inputIds: tf.tensor2d(ids, [2, 6], 'int32'), attentionMask: tf.tensor2d(mask, [2, 6], 'int32') },
          { training, seed: 7 },
        )
        const logp = tf.logSoftmax(out.logits.default)
        const picked = tf.sum(tf.mul(logp, tf.oneHot(tf.tensor2d(labels, [2, 6], 'int32'), 3)), -1)
        const m = tf.tensor2d(mask, [2, 6])
        return tf.neg(tf.div(tf.sum(tf.mul(picked, m)), tf.sum(m))) as tf.Scalar
      }, model.trainableVariables())
      const names = new Map([...model.variables()].map(([n, v]) => [v.name, n]))
      const out = new Map<string, Float32Array>()
      for (const [vname, t] of Object.entries(g)) out.set(names.get(vname)!, (t.dataSync() as Float32Array).slice())
      const loss = value.dataSync()[0]
      tf.dispose([value, g as unknown as tf.TensorContainer])
      return { loss, grads: out }
    } finally {
      model.dispose()
    }
  }

  for (const training of [false, true]) {
    test(`every parameter gradient matches (${training ? 'with seeded dropout' : 'eval mode'})`, async () => {
      const cpu = await grads('cpu', training)
      const wasm = await grads('wasm', training)
      expect(Math.abs(cpu.loss - wasm.loss)).toBeLessThan(1e-5)
      expect([...wasm.grads.keys()].sort()).toEqual([...cpu.grads.keys()].sort())
      expect(cpu.grads.size).toBe(5 + 2 * 16 + 2)
      for (const [name, g] of cpu.grads) {
        const scale = Math.max(1e-3, ...Array.from(g, Math.abs))
        expect(maxAbsDiff(wasm.grads.get(name)!, g) / scale, name).toBeLessThan(1e-4)
      }
      // The embedding gradient reaches only the rows of ids that occur.
      const we = cpu.grads.get('bert.embeddings.word_embeddings.weight')!
      expect(Array.from(we.slice(4 * 16, 5 * 16)).every((v) => v === 0)).toBe(true)
      expect(Array.from(we.slice(5 * 16, 6 * 16)).some((v) => v !== 0)).toBe(true)
    })
  }
})
