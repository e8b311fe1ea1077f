// AdamW with decoupled weight decay (Loshchilov & Hutter), step for step as torch.optim.AdamW,
// global-norm clipping as torch.nn.utils.clip_grad_norm_, and HF's linear warm-up/decay schedule.
//
// tfjs-core ships Adam but not AdamW, clipping by global norm or per-parameter decay masks,
// and tfjs-layers (which has none of these either) is not a dependency; hence written here.

import * as tf from '@tensorflow/tfjs-core'
import { TRAIN_DEFAULTS } from '../../shared/recipes'

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
  applyGradients(grads: Map<string, tf.Tensor> | tf.NamedTensorMap): StepInfo {
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
        m.assign(mNew)
        v.assign(vNew)
        p.assign(tf.sub(pDecayed, tf.mul(stepT, tf.div(mNew, denom))))
      }
      return norm
    })
    const gradNorm = normT.dataSync()[0]
    normT.dispose()
    this.stepCount = t
    return { lr, gradNorm }
  }

  /** computeGradients + applyGradients; disposes everything it made. Returns the loss. */
  step(f: () => tf.Scalar): StepInfo & { loss: number } {
    const { loss, grads } = this.computeGradients(f)
    try {
      const info = this.applyGradients(grads)
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
 * The same AdamW (torch semantics, decay mask, global-norm clip, schedule) over parameters held in
 * Float32Arrays and updated in place: the onnxruntime trainer's optimizer. One fused loop per
 * parameter instead of a dozen elementwise kernels.
 */
export class HostAdamW {
  readonly params: Map<string, Float32Array>
  readonly beta1: number
  readonly beta2: number
  readonly epsilon: number
  readonly weightDecay: number
  readonly maxGradNorm: number | null
  private readonly schedule: LrSchedule
  private readonly decayMask = new Map<string, boolean>()
  private m = new Map<string, Float32Array>()
  private v = new Map<string, Float32Array>()
  stepCount = 0

  constructor(params: Map<string, Float32Array>, opts: AdamWOptions) {
    this.params = params
    const r = resolveAdamW(opts)
    this.schedule = r.schedule
    this.beta1 = r.beta1
    this.beta2 = r.beta2
    this.epsilon = r.epsilon
    this.weightDecay = r.weightDecay
    this.maxGradNorm = r.maxGradNorm
    const decay = r.decay
    for (const [name, p] of params) {
      this.decayMask.set(name, decay(name))
      this.m.set(name, new Float32Array(p.length))
      this.v.set(name, new Float32Array(p.length))
    }
  }

  currentLr(): number {
    return this.schedule(this.stepCount)
  }

  /**
   * One update; every parameter must have a gradient of its own size, unless `partial`: then a
   * parameter without one is not touched (no moment update, no decay), as torch's AdamW does.
   * `gradNormSq` (Σ‖g‖², e.g. computed by the training graph) saves a pass over the gradients.
   */
  applyGradients(grads: Map<string, Float32Array>, gradNormSq?: number, opts: { partial?: boolean } = {}): StepInfo {
    let sq = gradNormSq ?? 0
    for (const [name, p] of this.params) {
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
    const bc2Sqrt = Math.sqrt(1 - Math.pow(b2, t))
    const stepSize = lr / (1 - Math.pow(b1, t))
    const eps = this.epsilon
    const c1 = 1 - b1
    const c2 = 1 - b2
    const invBc2 = 1 / bc2Sqrt
    for (const [name, p] of this.params) {
      // partial: a parameter outside this step's graph is left as it is (torch skips grad None).
      const g = grads.get(name)
      if (!g) continue
      const m = this.m.get(name)!
      const v = this.v.get(name)!
      const decay = this.decayMask.get(name) && this.weightDecay !== 0 ? 1 - lr * this.weightDecay : 1
      for (let i = 0; i < p.length; i++) {
        const gi = g[i] * coef
        const mi = b1 * m[i] + c1 * gi
        const vi = b2 * v[i] + c2 * gi * gi
        m[i] = mi
        v[i] = vi
        p[i] = p[i] * decay - (stepSize * mi) / (Math.sqrt(vi) * invBc2 + eps)
      }
    }
    this.stepCount = t
    return { lr, gradNorm }
  }

  state(): OptimizerState {
    return { step: this.stepCount, m: this.m, v: this.v }
  }

  loadState(s: OptimizerState): void {
    for (const [name, p] of this.params) {
      const m = s.m.get(name)
      const v = s.v.get(name)
      if (!m || !v || m.length !== p.length || v.length !== p.length) throw new Error(`optimizer state has no moments of the right size for ${name}`)
    }
    this.m = new Map([...this.params.keys()].map((n) => [n, Float32Array.from(s.m.get(n)!)]))
    this.v = new Map([...this.params.keys()].map((n) => [n, Float32Array.from(s.v.get(n)!)]))
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
