// AdamW with decoupled weight decay (Loshchilov & Hutter), step for step as torch.optim.AdamW,
// global-norm clipping as torch.nn.utils.clip_grad_norm_, and HF's linear warm-up/decay schedule.
//
// tfjs-core ships Adam but not AdamW, clipping by global norm or per-parameter decay masks,
// and tfjs-layers (which has none of these either) is not a dependency; hence written here.

import * as tf from '@tensorflow/tfjs-core'
import { TRAIN_DEFAULTS } from '../../shared/recipes'
import { ADAMW_WASM_BASE64 } from './adamw-wasm'
import { instantiateKernel, WASM_PAGE_BYTES } from '../wasm'

/** Learning rate as a function of the number of optimizer steps already taken (0-based). */
export type LrSchedule = (step: number) => number

/**
 * HF `get_linear_schedule_with_warmup`: lr·step/warmup while warming up, then linear decay to 0
 * at `totalSteps`. As in HF (scheduler stepped after the optimizer), step 0 uses factor
 * 0/warmup = 0 when warmupSteps > 0.
 */
export function linearScheduleWithWarmup(peakLr: number, warmupSteps: number, totalSteps: number): LrSchedule {
  return (step: number) => {
    if (step < warmupSteps) return (peakLr * step) / Math.max(1, warmupSteps)
    return peakLr * Math.max(0, (totalSteps - step) / Math.max(1, totalSteps - warmupSteps))
  }
}

/** HF TrainingArguments.get_warmup_steps: ceil(total · ratio). */
export function warmupStepsFromRatio(totalSteps: number, ratio: number): number {
  return Math.ceil(totalSteps * ratio)
}

/**
 * Whether a parameter (HF name) gets weight decay. HF recipes exclude every bias and every
 * LayerNorm parameter ("bias", "LayerNorm.weight"; old TF checkpoints name them gamma/beta).
 */
export function decaysWeight(name: string): boolean {
  if (/(^|[._])bias$/i.test(name)) return false
  if (/layer_?norm/i.test(name)) return false
  if (/(^|\.)(gamma|beta)$/.test(name)) return false
  return true
}

export interface AdamWOptions {
  /** Constant learning rate or a schedule over steps. */
  lr: number | LrSchedule
  beta1?: number
  beta2?: number
  /** torch.optim.AdamW default 1e-8. */
  epsilon?: number
  /** Decoupled decay coefficient; torch default 0.01, HF Trainer default 0. */
  weightDecay?: number
  /** Global L2 norm limit over all gradients; null/0 disables clipping. Default 1.0. */
  maxGradNorm?: number | null
  /** Override of the decay rule (defaults to decaysWeight). */
  decay?: (name: string) => boolean
}

export interface StepInfo {
  /** Learning rate used for this update. */
  lr: number
  /** Global gradient norm before clipping. */
  gradNorm: number
}

/** AdamW's options with torch's defaults filled in; shared by the tfjs and the host optimizer. */
function resolveAdamW(opts: AdamWOptions) {
  const lr = opts.lr
  return {
    schedule: (typeof lr === 'function' ? lr : () => lr) as LrSchedule,
    beta1: opts.beta1 ?? 0.9,
    beta2: opts.beta2 ?? 0.999,
    epsilon: opts.epsilon ?? 1e-8,
    weightDecay: opts.weightDecay ?? 0.01,
    maxGradNorm: opts.maxGradNorm === undefined ? 1.0 : opts.maxGradNorm || null,
    decay: opts.decay ?? decaysWeight,
  }
}

/** [n]: 1 at the given rows. */
function rowMask(rows: Int32Array, n: number): Uint8Array {
  const mask = new Uint8Array(n)
  for (const r of rows) mask[r] = 1
  return mask
}

/** Parameters (embedding tables) updated lazily: only the rows a batch read (see HostAdamW). */
export interface LazyRows {
  readRows?: ReadonlyMap<string, Int32Array>
}

/**
 * AdamW over named tf.Variables. Moments live in non-trainable variables so a step allocates
 * nothing that outlives it.
 */
export class AdamW {
  readonly params: Map<string, tf.Variable>
  readonly beta1: number
  readonly beta2: number
  readonly epsilon: number
  readonly weightDecay: number
  readonly maxGradNorm: number | null
  private readonly schedule: LrSchedule
  private readonly decayMask: Map<string, boolean>
  private readonly m = new Map<string, tf.Variable>()
  private readonly v = new Map<string, tf.Variable>()
  private readonly byVariableName = new Map<string, string>()
  /** Steps taken so far. */
  stepCount = 0

  constructor(params: Map<string, tf.Variable> | Iterable<[string, tf.Variable]>, opts: AdamWOptions) {
    this.params = new Map(params)
    const r = resolveAdamW(opts)
    this.schedule = r.schedule
    this.beta1 = r.beta1
    this.beta2 = r.beta2
    this.epsilon = r.epsilon
    this.weightDecay = r.weightDecay
    this.maxGradNorm = r.maxGradNorm
    const decay = r.decay
    this.decayMask = new Map()
    for (const [name, p] of this.params) {
      this.decayMask.set(name, decay(name))
      this.byVariableName.set(p.name, name)
      // Inside tidy so the zeros used to initialise the variables do not linger.
      this.m.set(name, tf.tidy(() => tf.variable(tf.zeros(p.shape, 'float32'), false)))
      this.v.set(name, tf.tidy(() => tf.variable(tf.zeros(p.shape, 'float32'), false)))
    }
  }

  /** Learning rate the next step will use. */
  currentLr(): number {
    return this.schedule(this.stepCount)
  }

  /** Names of parameters that receive weight decay (for logs and tests). */
  decayedParameters(): string[] {
    return [...this.decayMask].filter(([, d]) => d).map(([n]) => n)
  }

  /**
   * Loss and gradients of f with respect to every parameter, keyed by HF name. Parameters f
   * does not touch get no entry (as a torch parameter with grad None: no update, no decay).
   * The caller owns the returned tensors. Needs tfjs-core's gradient functions registered
   * (initBackend/useBackend or ensureGradients from core/model do that).
   */
  computeGradients(f: () => tf.Scalar): { loss: tf.Scalar; grads: Map<string, tf.Tensor> } {
    const vars = [...this.params.values()]
    const { value, grads } = tf.variableGrads(f, vars)
    const out = new Map<string, tf.Tensor>()
    for (const [varName, g] of Object.entries(grads)) {
      const name = this.byVariableName.get(varName)
      if (name === undefined) g.dispose()
      else out.set(name, g)
    }
    return { loss: value, grads: out }
  }

  /**
   * One update from gradients keyed by HF name (or by tf variable name). Does not dispose
   * the gradients; `step` does.
   */
  applyGradients(grads: Map<string, tf.Tensor> | tf.NamedTensorMap, opts: LazyRows = {}): StepInfo {
    const entries: Array<[string, tf.Tensor]> = []
    const get = (k: string): tf.Tensor | undefined => (grads instanceof Map ? grads.get(k) : grads[k])
    for (const [name, p] of this.params) {
      const g = get(name) ?? get(p.name)
      if (g) entries.push([name, g])
    }
    if (entries.length === 0) throw new Error('AdamW: no gradient matches any parameter')
    const lr = this.schedule(this.stepCount)
    const t = this.stepCount + 1
    const b1 = this.beta1
    const b2 = this.beta2
    const bc1 = 1 - Math.pow(b1, t)
    const bc2Sqrt = Math.sqrt(1 - Math.pow(b2, t))
    const stepSize = lr / bc1
    const normT = tf.tidy(() => {
      const sq = entries.map(([, g]) => tf.sum(tf.square(tf.cast(g, 'float32'))))
      const norm = tf.sqrt(sq.length === 1 ? sq[0] : tf.addN(sq))
      // torch clip_grad_norm_: coef = max_norm / (norm + 1e-6), clamped to 1.
      const coef =
        this.maxGradNorm === null
          ? tf.scalar(1)
          : tf.minimum(tf.scalar(1), tf.div(tf.scalar(this.maxGradNorm), tf.add(norm, tf.scalar(1e-6))))
      const decayFactor = tf.scalar(1 - lr * this.weightDecay)
      const b1T = tf.scalar(b1)
      const b1cT = tf.scalar(1 - b1)
      const b2T = tf.scalar(b2)
      const b2cT = tf.scalar(1 - b2)
      const bc2T = tf.scalar(bc2Sqrt)
      const epsT = tf.scalar(this.epsilon)
      const stepT = tf.scalar(stepSize)
      for (const [name, gRaw] of entries) {
        const p = this.params.get(name)!
        const m = this.m.get(name)!
        const v = this.v.get(name)!
        const g = tf.mul(tf.cast(gRaw, 'float32'), coef)
        // Decoupled decay first, on the pre-update weights (torch: p.mul_(1 - lr·wd)).
        const pDecayed = this.decayMask.get(name) && this.weightDecay !== 0 ? tf.mul(p, decayFactor) : p
        const mNew = tf.add(tf.mul(m, b1T), tf.mul(g, b1cT))
        const vNew = tf.add(tf.mul(v, b2T), tf.mul(tf.square(g), b2cT))
        const denom = tf.add(tf.div(tf.sqrt(vNew), bc2T), epsT)
        const pNew = tf.sub(pDecayed, tf.mul(stepT, tf.div(mNew, denom)))
        // Lazy rows (HostAdamW's row gradients): a row the batch did not read keeps all three.
        const rows = opts.readRows?.get(name)
        const read = rows ? tf.tensor2d(rowMask(rows, p.shape[0]), [p.shape[0], 1], 'bool') : null
        const keep = (next: tf.Tensor, old: tf.Tensor) => (read ? tf.where(tf.broadcastTo(read, old.shape), next, old) : next)
        m.assign(keep(mNew, m))
        v.assign(keep(vNew, v))
        p.assign(keep(pNew, p))
      }
      return norm
    })
    const gradNorm = normT.dataSync()[0]
    normT.dispose()
    this.stepCount = t
    return { lr, gradNorm }
  }

  /** computeGradients + applyGradients; disposes everything it made. Returns the loss. */
  step(f: () => tf.Scalar, opts: LazyRows = {}): StepInfo & { loss: number } {
    const { loss, grads } = this.computeGradients(f)
    try {
      const info = this.applyGradients(grads, opts)
      return { ...info, loss: loss.dataSync()[0] }
    } finally {
      loss.dispose()
      for (const g of grads.values()) g.dispose()
    }
  }

  /** Moments and step count on the host (for saving beside a checkpoint). */
  state(): OptimizerState {
    const read = (m: Map<string, tf.Variable>) => new Map([...m].map(([n, x]) => [n, Float32Array.from(x.dataSync() as Float32Array)]))
    return { step: this.stepCount, m: read(this.m), v: read(this.v) }
  }

  loadState(s: OptimizerState): void {
    for (const [name, p] of this.params) {
      const m = s.m.get(name)
      const v = s.v.get(name)
      if (!m || !v || m.length !== p.size || v.length !== p.size) throw new Error(`optimizer state has no moments of the right size for ${name}`)
      this.m.get(name)!.assign(tf.tensor(m, p.shape, 'float32'))
      this.v.get(name)!.assign(tf.tensor(v, p.shape, 'float32'))
    }
    this.stepCount = s.step
  }

  dispose(): void {
    for (const x of this.m.values()) x.dispose()
    for (const x of this.v.values()) x.dispose()
    this.m.clear()
    this.v.clear()
  }
}

/** Moments and step count of an AdamW run, keyed by parameter name (for resume). */
export interface OptimizerState {
  step: number
  m: Map<string, Float32Array>
  v: Map<string, Float32Array>
}

/**
 * The gradient of an embedding table as the rows a batch read: `rows` (distinct, ascending) and
 * their gradients, `values` [rows.length, width]; every other row's gradient is zero.
 */
export interface RowGradient {
  width: number
  rows: Int32Array
  values: Float32Array
}

/** One gradient row per id (ids[k] read row k of `perId`, [ids.length, width]), rows of one id summed. */
export function sumRowGradients(ids: ArrayLike<number | bigint>, perId: Float32Array, width: number): RowGradient {
  const n = ids.length
  const keys = Int32Array.from({ length: n }, (_, k) => Number(ids[k]))
  const rows = Int32Array.from(new Set(keys)).sort()
  const slot = new Map<number, number>()
  rows.forEach((r, i) => slot.set(r, i))
  const values = new Float32Array(rows.length * width)
  const filled = new Uint8Array(rows.length)
  for (let k = 0; k < n; k++) {
    const at = slot.get(keys[k])!
    const dst = at * width
    const src = k * width
    // Most ids occur once in a batch: their row is a copy; a repeated id's rows add up.
    if (!filled[at]) {
      values.set(perId.subarray(src, src + width), dst)
      filled[at] = 1
      continue
    }
    for (let j = 0; j < width; j++) values[dst + j] += perId[src + j]
  }
  return { width, rows, values }
}

/** A row gradient as the whole table's gradient (every other row 0); `size` values. */
export function denseGradient(r: RowGradient, size: number): Float32Array {
  const out = new Float32Array(size)
  r.rows.forEach((row, k) => out.set(r.values.subarray(k * r.width, (k + 1) * r.width), row * r.width))
  return out
}

/** HostAdamW's SIMD kernel (./adamw.wat). */
type AdamWKernel = (p: number, g: number, m: number, v: number, n: number, b1: number, b2: number, c1: number, c2: number, coef: number, decay: number, stepSize: number, invBc2: number, eps: number) => void

/** What HostAdamW keeps in its kernel's memory besides the moments (see HostAdamW). */
export interface HostAdamWLayout {
  /** Parameters whose gradient comes as rows (RowGradient: embedding tables): no gradient buffer for them. */
  rowGradients?: readonly string[]
  /** false: the parameters stay in the arrays given, copied in and out at each update (default true). */
  resident?: boolean
}

/** wasm32 addresses 4 GiB; HostAdamW keeps parameters and gradients in its memory only below this. */
const MAX_RESIDENT_BYTES = 3.5 * 2 ** 30

/**
 * The same AdamW (torch semantics, decay mask, global-norm clip, schedule) over parameters held in
 * Float32Arrays and updated in place: the onnxruntime trainer's optimizer. The arithmetic runs in
 * a WebAssembly SIMD kernel (./adamw.wat), four values at a time, in float32 as torch does; the
 * moments live in the kernel's memory. A plain JavaScript loop, one division and one square root
 * per value, took most of a quiet cpu-small step's host time.
 *
 * The parameters move into that memory too: each entry of the `params` map given is replaced by a
 * view of the kernel's memory holding its values (read the map, not arrays taken from it before),
 * and `gradientBuffers` are views the training graph writes its gradients into (onnxruntime's
 * preallocated outputs, OrtGraphRunner.run). The kernel then reads and writes them where they are;
 * arrays from elsewhere are copied in and out of a scratch area as before. Above MAX_RESIDENT_BYTES
 * (BERT-large and up) only the moments and the scratch are there.
 *
 * A parameter given as a RowGradient (an embedding table) is updated lazily, as torch's
 * SparseAdam and TF's LazyAdam do: the rows the batch read get the full AdamW update (moments,
 * bias correction by the global step, decoupled decay); every other row keeps its weights and
 * moments for that step, where dense AdamW would decay the moments, move the row by its old
 * momentum and shrink it by the weight decay. With every row read every step the two are the
 * same. Most of a large vocabulary is not in a batch, so this skips most of the work.
 */
export class HostAdamW {
  readonly params: Map<string, Float32Array>
  readonly beta1: number
  readonly beta2: number
  readonly epsilon: number
  readonly weightDecay: number
  readonly maxGradNorm: number | null
  /** Views of the kernel's memory the graph may write each dense gradient into; empty when not resident. */
  readonly gradientBuffers = new Map<string, Float32Array>()
  private readonly schedule: LrSchedule
  private readonly decayMask = new Map<string, boolean>()
  /** Views of the kernel's memory (allocated once, never grown: the views stay valid). */
  private readonly m = new Map<string, Float32Array>()
  private readonly v = new Map<string, Float32Array>()
  /** Scratch for one parameter (or one batch's rows) and its gradient, in the kernel's memory. */
  private readonly pScratch: Float32Array
  private readonly gScratch: Float32Array
  private readonly memory: WebAssembly.Memory
  private readonly kernel: AdamWKernel
  stepCount = 0

  constructor(params: Map<string, Float32Array>, opts: AdamWOptions, layout: HostAdamWLayout = {}) {
    this.params = params
    const r = resolveAdamW(opts)
    this.schedule = r.schedule
    this.beta1 = r.beta1
    this.beta2 = r.beta2
    this.epsilon = r.epsilon
    this.weightDecay = r.weightDecay
    this.maxGradNorm = r.maxGradNorm
    let total = 0
    let largest = 0
    let dense = 0
    const rowGradients = new Set(layout.rowGradients ?? [])
    for (const [name, p] of params) {
      total += p.length
      largest = Math.max(largest, p.length)
      if (!rowGradients.has(name)) dense += p.length
    }
    // One array under two names (tied weights) must stay one array: then nothing moves in.
    const shared = new Set(params.values()).size !== params.size
    // [m of every parameter][v of every parameter][parameters][dense gradients][gradient scratch] when
    // resident, else [m][v][parameter scratch][gradient scratch]: the parameter scratch serves only
    // parameters that live elsewhere.
    const residentFloats = 3 * total + dense + largest
    const resident = layout.resident !== false && !shared && 4 * residentFloats <= MAX_RESIDENT_BYTES
    const floats = resident ? residentFloats : 2 * total + 2 * largest
    this.memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil((4 * floats) / WASM_PAGE_BYTES)) })
    this.kernel = instantiateKernel(ADAMW_WASM_BASE64, this.memory).adamw as AdamWKernel
    let at = 0
    const take = (n: number) => {
      const view = new Float32Array(this.memory.buffer, 4 * at, n)
      at += n
      return view
    }
    for (const [name, p] of params) this.m.set(name, take(p.length))
    for (const [name, p] of params) this.v.set(name, take(p.length))
    if (resident) {
      for (const [name, p] of [...params]) {
        const home = take(p.length)
        home.set(p)
        params.set(name, home)
      }
      for (const [name, p] of params) if (!rowGradients.has(name)) this.gradientBuffers.set(name, take(p.length))
    }
    this.pScratch = take(resident ? 0 : largest)
    this.gScratch = take(largest)
    for (const name of params.keys()) this.decayMask.set(name, r.decay(name))
  }

  /** Whether `a` is a view of the kernel's memory (the kernel reads it where it is). */
  private resident(a: Float32Array): boolean {
    return a.buffer === this.memory.buffer
  }

  currentLr(): number {
    return this.schedule(this.stepCount)
  }

  /**
   * One update; every parameter must have a gradient of its own size, unless `partial`: then a
   * parameter without one is not touched (no moment update, no decay), as torch's AdamW does.
   * `gradNormSq` (Σ‖g‖², e.g. computed by the training graph) saves a pass over the gradients.
   */
  applyGradients(grads: Map<string, Float32Array>, gradNormSq?: number, opts: { partial?: boolean; rows?: ReadonlyMap<string, RowGradient> } = {}): StepInfo {
    let sq = gradNormSq ?? 0
    const rowGrads = opts.rows ?? new Map<string, RowGradient>()
    for (const [name, r] of rowGrads) {
      const p = this.params.get(name)
      if (!p || p.length % r.width !== 0 || r.values.length !== r.rows.length * r.width) throw new Error(`AdamW: row gradient of ${name} does not fit the parameter`)
      if (r.rows.length && (r.rows[0] < 0 || r.rows[r.rows.length - 1] >= p.length / r.width)) throw new Error(`AdamW: row gradient of ${name} names a row outside the table`)
      // Not in a graph's Σ‖g‖² (TrainGraph.rowGrads): added here.
      for (let i = 0; i < r.values.length; i++) sq += r.values[i] * r.values[i]
    }
    for (const [name, p] of this.params) {
      if (rowGrads.has(name)) continue
      const g = grads.get(name)
      if (!g && opts.partial) continue
      if (!g || g.length !== p.length) throw new Error(`AdamW: gradient of ${name} is ${g ? `${g.length} values, expected ${p.length}` : 'missing'}`)
      if (gradNormSq === undefined) for (let i = 0; i < g.length; i++) sq += g[i] * g[i]
    }
    const gradNorm = Math.sqrt(sq)
    const coef = this.maxGradNorm === null ? 1 : Math.min(1, this.maxGradNorm / (gradNorm + 1e-6))
    const lr = this.schedule(this.stepCount)
    const t = this.stepCount + 1
    const b1 = this.beta1
    const b2 = this.beta2
    const stepSize = lr / (1 - Math.pow(b1, t))
    const invBc2 = 1 / Math.sqrt(1 - Math.pow(b2, t))
    const P = this.pScratch
    const G = this.gScratch
    for (const [name, p] of this.params) {
      const m = this.m.get(name)!
      const v = this.v.get(name)!
      const decay = this.decayMask.get(name) && this.weightDecay !== 0 ? 1 - lr * this.weightDecay : 1
      // Byte addresses in the kernel's memory; mvAt indexes the parameter's moments.
      const update = (pAddr: number, gAddr: number, mvAt: number, n: number) =>
        this.kernel(pAddr, gAddr, m.byteOffset + 4 * mvAt, v.byteOffset + 4 * mvAt, n, b1, b2, 1 - b1, 1 - b2, coef, decay, stepSize, invBc2, this.epsilon)
      const pHome = this.resident(p)
      const r = rowGrads.get(name)
      if (r) {
        // The rows' gradients side by side in the scratch, each row updated against its own moments
        // (where it lives, or through the parameter scratch and back).
        const w = r.width
        G.set(r.values)
        for (let k = 0; k < r.rows.length; k++) {
          const base = r.rows[k] * w
          if (pHome) {
            update(p.byteOffset + 4 * base, G.byteOffset + 4 * k * w, base, w)
            continue
          }
          P.set(p.subarray(base, base + w), k * w)
          update(P.byteOffset + 4 * k * w, G.byteOffset + 4 * k * w, base, w)
          p.set(P.subarray(k * w, (k + 1) * w), base)
        }
        continue
      }
      // partial: a parameter outside this step's graph is left as it is (torch skips grad None).
      const g = grads.get(name)
      if (!g) continue
      const gHome = this.resident(g)
      if (!pHome) P.set(p)
      if (!gHome) G.set(g)
      update(pHome ? p.byteOffset : P.byteOffset, gHome ? g.byteOffset : G.byteOffset, 0, p.length)
      if (!pHome) p.set(P.subarray(0, p.length))
    }
    this.stepCount = t
    return { lr, gradNorm }
  }

  /** The moments as views of the kernel's memory: read or copy them before the next update. */
  state(): OptimizerState {
    return { step: this.stepCount, m: this.m, v: this.v }
  }

  loadState(s: OptimizerState): void {
    for (const [name, p] of this.params) {
      const m = s.m.get(name)
      const v = s.v.get(name)
      if (!m || !v || m.length !== p.length || v.length !== p.length) throw new Error(`optimizer state has no moments of the right size for ${name}`)
    }
    for (const name of this.params.keys()) {
      this.m.get(name)!.set(s.m.get(name)!)
      this.v.get(name)!.set(s.v.get(name)!)
    }
    this.stepCount = s.step
  }
}

/** AdamW of a training run: linear warm-up over `warmupRatio` of the planned steps, then linear decay to 0. */
export function runOptimizer(peakLr: number, plannedSteps: number, o: { warmupRatio?: number; weightDecay?: number; maxGradNorm?: number | null }): AdamWOptions {
  const warmup = warmupStepsFromRatio(plannedSteps, o.warmupRatio ?? TRAIN_DEFAULTS.warmupRatio)
  return {
    lr: linearScheduleWithWarmup(peakLr, warmup, plannedSteps),
    weightDecay: o.weightDecay ?? TRAIN_DEFAULTS.weightDecay,
    maxGradNorm: o.maxGradNorm === undefined ? TRAIN_DEFAULTS.maxGradNorm : o.maxGradNorm,
  }
}
