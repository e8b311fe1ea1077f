import * as tf from '@tensorflow/tfjs-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { AdamW, decaysWeight, denseGradient, HostAdamW, linearScheduleWithWarmup, sumRowGradients, warmupStepsFromRatio } from '@core/train/optimizer'
import { useCpuBackend } from './tfSetup'

/** torch.optim.AdamW + clip_grad_norm_ in float64, written out scalar by scalar. */
function referenceAdamW(
  params: Record<string, number[]>,
  gradSeq: Array<Record<string, number[]>>,
  o: { lr: (s: number) => number; wd: number; maxNorm: number; b1: number; b2: number; eps: number; decay: (n: string) => boolean },
): Record<string, number[]> {
  const p = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, [...v]]))
  const m = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, v.map(() => 0)]))
  const v = Object.fromEntries(Object.entries(params).map(([k, x]) => [k, x.map(() => 0)]))
  gradSeq.forEach((grads, step) => {
    const t = step + 1
    const lr = o.lr(step)
    let sq = 0
    for (const g of Object.values(grads)) for (const x of g) sq += x * x
    const norm = Math.sqrt(sq)
    const coef = Math.min(1, o.maxNorm / (norm + 1e-6))
    for (const k of Object.keys(p)) {
      for (let i = 0; i < p[k].length; i++) {
        const g = grads[k][i] * coef
        if (o.decay(k)) p[k][i] *= 1 - lr * o.wd
        m[k][i] = o.b1 * m[k][i] + (1 - o.b1) * g
        v[k][i] = o.b2 * v[k][i] + (1 - o.b2) * g * g
        const mHat = m[k][i] / (1 - o.b1 ** t)
        const denom = Math.sqrt(v[k][i]) / Math.sqrt(1 - o.b2 ** t) + o.eps
        p[k][i] -= (lr / (1 - o.b1 ** t)) * (m[k][i] / denom) * 1
        void mHat
      }
    }
  })
  return p
}

describe('AdamW', () => {
  beforeAll(useCpuBackend)

  it('decides weight decay by HF parameter name', () => {
    expect(decaysWeight('bert.encoder.layer.0.attention.self.query.weight')).toBe(true)
    expect(decaysWeight('bert.embeddings.word_embeddings.weight')).toBe(true)
    expect(decaysWeight('classifier.weight')).toBe(true)
    expect(decaysWeight('bert.encoder.layer.0.attention.self.query.bias')).toBe(false)
    expect(decaysWeight('bert.embeddings.LayerNorm.weight')).toBe(false)
    expect(decaysWeight('bert.encoder.layer.3.output.LayerNorm.bias')).toBe(false)
    expect(decaysWeight('bert.embeddings.LayerNorm.gamma')).toBe(false)
    expect(decaysWeight('classifier.bias')).toBe(false)
  })

  it('follows HF get_linear_schedule_with_warmup', () => {
    const s = linearScheduleWithWarmup(1e-3, 2, 10)
    expect([0, 1, 2, 6, 10, 12].map(s)).toEqual([0, 5e-4, 1e-3, 5e-4, 0, 0])
    expect(warmupStepsFromRatio(101, 0.1)).toBe(11)
  })

  it('first step by hand: p·(1 − lr·wd) − lr·sign(g) for decayed weights', () => {
    const w = tf.variable(tf.tensor1d([1, -2]), true, 'opt-hand-w')
    const opt = new AdamW(new Map([['dense.weight', w]]), { lr: 0.1, weightDecay: 0.5, maxGradNorm: null })
    const g = tf.tensor1d([0.3, -4])
    opt.applyGradients(new Map([['dense.weight', g]]))
    // m̂ = g, v̂ = g², so the Adam step is lr·g/(|g| + eps) ≈ lr·sign(g).
    const got = w.dataSync()
    expect(got[0]).toBeCloseTo(1 * (1 - 0.05) - 0.1, 6)
    expect(got[1]).toBeCloseTo(-2 * (1 - 0.05) + 0.1, 6)
    tf.dispose([w, g])
    opt.dispose()
  })

  it('matches a float64 reference over several steps with clipping, warm-up and no-decay params', () => {
    const init: Record<string, number[]> = {
      'encoder.dense.weight': [0.5, -0.25, 1.5, 2.0, -1.0, 0.1],
      'encoder.dense.bias': [0.3, -0.7, 0.0],
      'encoder.LayerNorm.weight': [1.0, 1.0, 1.0],
    }
    const gradSeq: Array<Record<string, number[]>> = [
      { 'encoder.dense.weight': [0.1, -0.2, 0.3, 0.05, 0.0, -0.1], 'encoder.dense.bias': [0.2, 0.1, -0.3], 'encoder.LayerNorm.weight': [0.01, -0.02, 0.03] },
      { 'encoder.dense.weight': [3.0, -2.0, 1.0, 0.5, -4.0, 2.5], 'encoder.dense.bias': [1.5, -2.0, 0.5], 'encoder.LayerNorm.weight': [0.3, 0.4, -0.5] },
      { 'encoder.dense.weight': [-0.05, 0.02, 0.01, -0.3, 0.2, 0.0], 'encoder.dense.bias': [0.0, 0.05, 0.1], 'encoder.LayerNorm.weight': [-0.1, 0.0, 0.2] },
      { 'encoder.dense.weight': [10, 10, -10, 5, 0.1, -7], 'encoder.dense.bias': [-6, 2, 8], 'encoder.LayerNorm.weight': [4, -4, 1] },
      { 'encoder.dense.weight': [0.2, 0.2, 0.2, -0.2, -0.2, -0.2], 'encoder.dense.bias': [0.1, 0.1, 0.1], 'encoder.LayerNorm.weight': [0.0, 0.3, 0.0] },
    ]
    const sched = linearScheduleWithWarmup(0.05, 2, 6)
    const ref = referenceAdamW(init, gradSeq, { lr: sched, wd: 0.1, maxNorm: 1.0, b1: 0.9, b2: 0.999, eps: 1e-8, decay: decaysWeight })

    const vars = new Map(Object.entries(init).map(([k, v]) => [k, tf.variable(tf.tensor1d(v), true, `opt-ref-${k}`)]))
    const opt = new AdamW(vars, { lr: sched, weightDecay: 0.1 })
    const before = tf.memory().numTensors
    const norms: number[] = []
    for (const grads of gradSeq) {
      const g = new Map(Object.entries(grads).map(([k, v]) => [k, tf.tensor1d(v)]))
      norms.push(opt.applyGradients(g).gradNorm)
      tf.dispose([...g.values()])
      expect(tf.memory().numTensors).toBe(before)
    }
    expect(opt.stepCount).toBe(5)
    expect(norms[1]).toBeGreaterThan(1) // the clipping path was exercised
    for (const [k, v] of vars) {
      const got = Array.from(v.dataSync())
      ref[k].forEach((x, i) => expect(got[i]).toBeCloseTo(x, 5))
    }
    // Decoupled decay touched only the weight matrix: with zero gradients a bias would not move.
    expect(Array.from(vars.get('encoder.dense.weight')!.dataSync())).not.toEqual(init['encoder.dense.weight'])
    opt.dispose()
    tf.dispose([...vars.values()])
  })

  it('step() computes gradients by HF name, skips untouched params and frees everything', () => {
    const w = tf.variable(tf.tensor1d([2, -3]), true, 'opt-step-w')
    const unused = tf.variable(tf.tensor1d([7]), true, 'opt-step-unused')
    const opt = new AdamW(new Map([['a.weight', w], ['b.weight', unused]]), { lr: 0.1, weightDecay: 0.5 })
    const before = tf.memory().numTensors
    let last = Infinity
    for (let i = 0; i < 30; i++) {
      const { loss } = opt.step(() => tf.sum(tf.square(w)) as tf.Scalar)
      expect(tf.memory().numTensors).toBe(before)
      last = loss
    }
    expect(last).toBeLessThan(1)
    expect(unused.dataSync()[0]).toBe(7)
    opt.dispose()
    tf.dispose([w, unused])
  })
})

describe('HostAdamW (the onnxruntime trainer\'s AdamW, a WebAssembly SIMD kernel)', () => {
  // Sizes that exercise the kernel's four-wide loop and its one-by-one tail: 9 = 2 vectors + 1,
  // 3 = tail only; the table's rows are 5 wide, so a row's moments start off the 16-byte grid.
  const init: Record<string, number[]> = {
    'encoder.dense.weight': [0.5, -0.25, 1.5, 2.0, -1.0, 0.1, 0.7, -0.3, 0.9],
    'encoder.dense.bias': [0.3, -0.7, 0.0],
    'embeddings.word_embeddings.weight': Array.from({ length: 20 }, (_, i) => Math.sin(i + 1)),
  }
  const grads = (step: number): Record<string, number[]> =>
    Object.fromEntries(Object.entries(init).map(([k, v]) => [k, v.map((_, i) => Math.cos(3 * step + i) * (step === 1 ? 4 : 0.3))]))
  const sched = linearScheduleWithWarmup(0.05, 2, 6)
  const steps = [0, 1, 2, 3, 4].map(grads)

  it('matches the float64 reference over several steps with clipping, warm-up and no-decay params', () => {
    const ref = referenceAdamW(init, steps, { lr: sched, wd: 0.1, maxNorm: 1.0, b1: 0.9, b2: 0.999, eps: 1e-8, decay: decaysWeight })
    const params = new Map(Object.entries(init).map(([k, v]) => [k, Float32Array.from(v)]))
    const opt = new HostAdamW(params, { lr: sched, weightDecay: 0.1 })
    const norms = steps.map((g) => opt.applyGradients(new Map(Object.entries(g).map(([k, v]) => [k, Float32Array.from(v)]))).gradNorm)
    expect(norms[1]).toBeGreaterThan(1) // clipping exercised
    for (const [k, v] of params) ref[k].forEach((x, i) => expect(v[i]).toBeCloseTo(x, 5))
  })

  it('row gradients of a table 5 wide update those rows as the dense update does, every other row untouched', () => {
    const table = 'embeddings.word_embeddings.weight'
    const read = Int32Array.of(0, 2, 3)
    const rowsOf = (g: number[]) => ({ width: 5, rows: read, values: Float32Array.from([...read].flatMap((r) => g.slice(5 * r, 5 * r + 5))) })
    const lazy = new Map(Object.entries(init).map(([k, v]) => [k, Float32Array.from(v)]))
    const lazyOpt = new HostAdamW(lazy, { lr: 0.01, weightDecay: 0.1, maxGradNorm: null })
    // Dense reference: the table's gradient zero outside the rows read, and the unread row compared to its start.
    const dense = new Map(Object.entries(init).map(([k, v]) => [k, Float32Array.from(v)]))
    const denseOpt = new HostAdamW(dense, { lr: 0.01, weightDecay: 0.1, maxGradNorm: null })
    for (const g of steps.slice(0, 3)) {
      const row = rowsOf(g[table])
      const others = new Map(Object.entries(g).filter(([k]) => k !== table).map(([k, v]) => [k, Float32Array.from(v)]))
      lazyOpt.applyGradients(others, undefined, { rows: new Map([[table, row]]) })
      denseOpt.applyGradients(new Map([...others, [table, denseGradient(row, 20)]]))
    }
    const got = lazy.get(table)!
    const want = dense.get(table)!
    for (const r of read) for (let j = 0; j < 5; j++) expect(got[5 * r + j]).toBeCloseTo(want[5 * r + j], 6)
    expect(Array.from(got.subarray(5, 10))).toEqual(Array.from(Float32Array.from(init[table].slice(5, 10))))
    expect(lazy.get('encoder.dense.bias')).toEqual(dense.get('encoder.dense.bias'))
  })

  it('moves the parameters into its memory and reads gradients written there: the same update as arrays copied in and out', () => {
    const table = 'embeddings.word_embeddings.weight'
    const read = Int32Array.of(1, 3)
    const copied = new Map(Object.entries(init).map(([k, v]) => [k, Float32Array.from(v)]))
    const given = copied.get('encoder.dense.weight')!
    const copiedOpt = new HostAdamW(copied, { lr: sched, weightDecay: 0.1 }, { rowGradients: [table], resident: false })
    expect(copied.get('encoder.dense.weight')).toBe(given)
    expect(copiedOpt.gradientBuffers.size).toBe(0)
    const home = new Map(Object.entries(init).map(([k, v]) => [k, Float32Array.from(v)]))
    const before = home.get('encoder.dense.weight')!
    const homeOpt = new HostAdamW(home, { lr: sched, weightDecay: 0.1 }, { rowGradients: [table] })
    // The map now holds other arrays (views of the kernel's memory) with the same values.
    expect(home.get('encoder.dense.weight')).not.toBe(before)
    expect(home.get('encoder.dense.weight')).toEqual(before)
    expect([...homeOpt.gradientBuffers.keys()].sort()).toEqual(['encoder.dense.bias', 'encoder.dense.weight'])
    for (const g of steps) {
      const rows = new Map([[table, { width: 5, rows: read, values: Float32Array.from([...read].flatMap((r) => g[table].slice(5 * r, 5 * r + 5))) }]])
      const dense = Object.entries(g).filter(([k]) => k !== table)
      copiedOpt.applyGradients(new Map(dense.map(([k, v]) => [k, Float32Array.from(v)])), undefined, { rows })
      // As onnxruntime's preallocated outputs do: the gradient written into the optimizer's buffer.
      for (const [k, v] of dense) homeOpt.gradientBuffers.get(k)!.set(v)
      homeOpt.applyGradients(homeOpt.gradientBuffers, undefined, { rows })
    }
    for (const [k, v] of copied) expect(home.get(k), k).toEqual(v)
    expect(copied.get(table)).not.toEqual(Float32Array.from(init[table]))
  })

  it('sums the gradient rows of one id (a repeated id adds up, a single one is its row), rows ascending', () => {
    const ids = BigInt64Array.from([7n, 2n, 7n, 0n, 2n, 7n])
    const perId = Float32Array.from({ length: 6 * 3 }, (_, i) => i + 1)
    const r = sumRowGradients(ids, perId, 3)
    expect([...r.rows]).toEqual([0, 2, 7])
    const row = (k: number) => [...perId.subarray(3 * k, 3 * k + 3)]
    const sum = (...ks: number[]) => [0, 1, 2].map((j) => ks.reduce((a, k) => a + row(k)[j], 0))
    expect([...r.values]).toEqual([...row(3), ...sum(1, 4), ...sum(0, 2, 5)])
  })

  it('leaves one array under two names (tied weights) where it is', () => {
    const shared = Float32Array.from(init['encoder.dense.bias'])
    const params = new Map([['a.weight', shared], ['b.weight', shared]])
    const opt = new HostAdamW(params, { lr: 0.01 })
    expect(params.get('a.weight')).toBe(shared)
    expect(opt.gradientBuffers.size).toBe(0)
  })

  it('saves and restores its moments: a restored optimizer continues as the one that kept going', () => {
    const run = (restoreAfter: number | null) => {
      const params = new Map(Object.entries(init).map(([k, v]) => [k, Float32Array.from(v)]))
      let opt = new HostAdamW(params, { lr: sched, weightDecay: 0.1 })
      steps.forEach((g, i) => {
        if (i === restoreAfter) {
          const s = opt.state()
          const copy = { step: s.step, m: new Map([...s.m].map(([k, v]) => [k, Float32Array.from(v)])), v: new Map([...s.v].map(([k, v]) => [k, Float32Array.from(v)])) }
          opt = new HostAdamW(params, { lr: sched, weightDecay: 0.1 })
          opt.loadState(copy)
        }
        opt.applyGradients(new Map(Object.entries(g).map(([k, v]) => [k, Float32Array.from(v)])))
      })
      return params
    }
    const straight = run(null)
    const restored = run(3)
    for (const [k, v] of straight) expect(restored.get(k)).toEqual(v)
  })
})

