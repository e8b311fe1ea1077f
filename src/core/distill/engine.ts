// Distillation trainer engines: one optimizer step of the distillation loss on a batch of one
// task, given the step's teacher targets (core/distill/distill.ts prepares them). onnxruntime
// runs the distillation training graph (core/onnx/training.ts distillTrainGraph: forward, the
// loss terms and every gradient) with HostAdamW; tfjs autodiff is the fallback. Both compute
//   L = w_hard·CE(z, y) + w_soft·T²·CE(p̄, softmax(z/T)) + w_feature·(Σ hidden MSE + Σ attention MSE)
// with the weights already scaled by the task weight λ.

import * as tf from '@tensorflow/tfjs-core'
import type * as Ort from 'onnxruntime-node'
import type { BertTokenClassifier } from '../model/bert'
import { onnxConfigOf } from '../onnx/export'
import { distillTrainGraph, type TrainGraph } from '../onnx/training'
import { disposeBatch, IGNORE_INDEX, modelInputs, toTensors, type HostBatch } from '../train/batching'
import { copyParamsIntoModel, openEngine, TfjsEngineBase, type EngineChoice } from '../train/engine'
import { maskedCrossEntropy } from '../train/loss'
import { HostAdamW, type AdamWOptions, type OptimizerState } from '../train/optimizer'
import { batchFeeds, dropoutProbabilities, dropoutSitesOf, maskFeeds, OrtGraphRunner, type OrtSessionOptions } from '../train/ort'
import { attentionMse, hiddenMse, labeledMask, realMask, softCrossEntropy } from './losses'
import type { FeatureAttentionPair, FeatureHiddenPair } from './mapping'

/** What one step trains on besides the batch; tensors belong to the caller. */
export interface DistillStepInputs {
  head: string
  /** Loss weights of this step, task weight λ included. */
  weights: { soft: number; hard: number; feature: number }
  temperature: number
  /** Mixed softened teacher distribution [B, S, C]; null: no soft loss this step. */
  soft: tf.Tensor3D | null
  /** Per FeatureHiddenPair: teacher hidden state [B, S, Ht]; null when not computed this step. */
  hidden: Array<tf.Tensor3D | null>
  /** Per FeatureAttentionPair: teacher attention [B, h_t, S, S]; null when not computed this step. */
  attention: Array<tf.Tensor4D | null>
}

export interface DistillStepResult {
  loss: number
  lr: number
  gradNorm: number
  /** Unweighted loss terms; a feature term is 0 when its targets were not computed. */
  hard: number
  soft: number
  hidden: number
  attention: number
}

export interface DistillEngine {
  readonly trainer: string
  readonly reason: string
  step(b: HostBatch, inputs: DistillStepInputs, seed: number): Promise<DistillStepResult>
  currentLr(): number
  /** Copies the engine's weights into the student model. */
  syncModel(): void
  /** Current values of the learned projections W (not part of the student checkpoint). */
  projectionValues(): Map<string, Float32Array>
  optimizerState(): OptimizerState
  loadOptimizerState(s: OptimizerState): void
  dispose(): Promise<void>
}

export interface OpenDistillEngineOptions extends OrtSessionOptions, EngineChoice {
  student: BertTokenClassifier
  /** Heads the run trains (one per task). */
  heads: string[]
  hiddenPairs: FeatureHiddenPair[]
  attentionPairs: FeatureAttentionPair[]
  /** Learned projections W [Hs, Ht] by parameter name, with their initial values. */
  projections: Map<string, { shape: [number, number]; init: Float32Array }>
  scaleT2: boolean
  softPositions: 'labeled' | 'real'
  optimizer: AdamWOptions
}

/** The fastest distillation engine that starts (rules of openTrainer: FASTBIONER_TRAINER, fallback). */
export function openDistillEngine(opts: OpenDistillEngineOptions): Promise<DistillEngine> {
  return openEngine<DistillEngine>(opts, () => OrtDistillEngine.open(opts), (reason) => new TfjsDistillEngine(opts, reason))
}

/** The soft-loss positions of a batch [B·S]: labelled word starts or every real token. */
export function softMaskOf(b: HostBatch, positions: 'labeled' | 'real'): Float32Array {
  const m = new Float32Array(b.batchSize * b.seqLen)
  for (let i = 0; i < m.length; i++) m[i] = positions === 'real' ? (b.attentionMask[i] ? 1 : 0) : b.labels[i] !== IGNORE_INDEX ? 1 : 0
  return m
}

class OrtDistillEngine implements DistillEngine {
  private readonly runners = new Map<string, OrtGraphRunner>()
  trainer = 'onnxruntime'
  reason = ''
  private constructor(
    private readonly opts: OpenDistillEngineOptions,
    private readonly params: Map<string, Float32Array>,
    private readonly optimizer: HostAdamW,
  ) {}

  static async open(opts: OpenDistillEngineOptions): Promise<OrtDistillEngine> {
    const params = new Map<string, Float32Array>()
    for (const [n, v] of opts.student.variables()) if (v.trainable) params.set(n, Float32Array.from(v.dataSync() as Float32Array))
    for (const [n, p] of opts.projections) params.set(n, Float32Array.from(p.init))
    const engine = new OrtDistillEngine(opts, params, new HostAdamW(params, opts.optimizer))
    // The first head's graph now, so that an engine that cannot start fails here (and falls back).
    const first = await engine.runner(opts.heads[0])
    engine.trainer = `onnxruntime-${first.provider}`
    engine.reason = first.describe()
    return engine
  }

  /** One graph per head: each batch holds one task, and only its head is in the loss. */
  private async runner(head: string): Promise<OrtGraphRunner> {
    const have = this.runners.get(head)
    if (have) return have
    const info = this.opts.student.heads.get(head)
    if (!info) throw new Error(`the student has no head '${head}'`)
    const graph: TrainGraph = distillTrainGraph({
      config: onnxConfigOf(this.opts.student.config),
      head: { name: head, numLabels: info.labels.length },
      hiddenPairs: this.opts.hiddenPairs,
      attentionPairs: this.opts.attentionPairs,
      scaleT2: this.opts.scaleT2,
      dropout: dropoutSitesOf(dropoutProbabilities(this.opts.student.config)),
    })
    const r = await OrtGraphRunner.open(graph, this.opts)
    this.runners.set(head, r)
    return r
  }

  async step(b: HostBatch, inputs: DistillStepInputs, seed: number): Promise<DistillStepResult> {
    const runner = await this.runner(inputs.head)
    const ort: typeof Ort = runner.ort
    const c = this.opts.student.config
    const B = b.batchSize
    const S = b.seqLen
    const numLabels = this.opts.student.heads.get(inputs.head)!.labels.length
    const f32 = (data: Float32Array, dims: number[]) => new ort.Tensor('float32', data, dims)
    const scalar = (x: number) => f32(new Float32Array([x]), [])
    const feeds: Record<string, Ort.Tensor> = {
      ...batchFeeds(ort, b, { [inputs.head]: b.labels }),
      ...maskFeeds(runner, c, B, S, seed),
      temperature: scalar(inputs.temperature),
      'weight.soft': scalar(inputs.soft ? inputs.weights.soft : 0),
      'weight.hard': scalar(inputs.weights.hard),
      'weight.feature': scalar(inputs.weights.feature),
      soft_targets: f32(inputs.soft ? (inputs.soft.dataSync() as Float32Array) : new Float32Array(B * S * numLabels), [B, S, numLabels]),
      soft_mask: f32(softMaskOf(b, this.opts.softPositions), [B, S]),
    }
    this.opts.hiddenPairs.forEach((p, k) => {
      const t = inputs.hidden[k]
      feeds[`teacher_hidden.${k}`] = f32(t ? (t.dataSync() as Float32Array) : new Float32Array(B * S * p.teacherWidth), [B, S, p.teacherWidth])
    })
    this.opts.attentionPairs.forEach((p, k) => {
      const t = inputs.attention[k]
      feeds[`teacher_attention.${k}`] = f32(t ? (t.dataSync() as Float32Array) : new Float32Array(B * p.teacherHeads * S * S), [B, p.teacherHeads, S, S])
    })
    const r = await runner.run(this.params, feeds, this.optimizer.gradientBuffers)
    const sumOf = (prefix: string, present: Array<unknown>) => present.reduce<number>((a, t, k) => a + (t ? r.terms[`${prefix}.${k}`] : 0), 0)
    const terms = {
      hard: r.terms['loss.hard'],
      soft: inputs.soft ? r.terms['loss.soft'] : 0,
      hidden: sumOf('loss.hidden', inputs.hidden),
      attention: sumOf('loss.attention', inputs.attention),
    }
    if (!Number.isFinite(r.loss)) return { loss: r.loss, lr: this.optimizer.currentLr(), gradNorm: NaN, ...terms }
    // The other heads are not in this graph: like torch's AdamW they are skipped, decay included.
    const info = this.optimizer.applyGradients(r.grads, r.gradNormSq, { partial: true })
    return { loss: r.loss, ...info, ...terms }
  }

  currentLr(): number {
    return this.optimizer.currentLr()
  }
  syncModel(): void {
    copyParamsIntoModel(this.opts.student, this.params)
  }
  projectionValues(): Map<string, Float32Array> {
    return new Map([...this.opts.projections.keys()].map((n) => [n, this.params.get(n)!]))
  }
  optimizerState(): OptimizerState {
    return this.optimizer.state()
  }
  loadOptimizerState(s: OptimizerState): void {
    this.optimizer.loadState(s)
  }
  async dispose(): Promise<void> {
    for (const r of this.runners.values()) await r.dispose()
    this.runners.clear()
  }
}

class TfjsDistillEngine extends TfjsEngineBase implements DistillEngine {
  private readonly projections: Map<string, tf.Variable>

  constructor(
    private readonly opts: OpenDistillEngineOptions,
    reason: string,
  ) {
    const projections = new Map<string, tf.Variable>()
    for (const [n, p] of opts.projections) {
      const init = tf.tensor2d(p.init, p.shape)
      projections.set(n, tf.variable(init, true))
      init.dispose() // the variable holds its own reference to the data
    }
    super(reason, new Map([...[...opts.student.variables()].filter(([, v]) => v.trainable), ...projections]), opts.optimizer)
    this.projections = projections
  }

  async step(b: HostBatch, inputs: DistillStepInputs, seed: number): Promise<DistillStepResult> {
    const batch = toTensors(b)
    const { hiddenPairs, attentionPairs } = this.opts
    const wantHidden = inputs.hidden.some((t) => t)
    const wantAttention = inputs.attention.some((t) => t)
    const parts: tf.Scalar[] = []
    try {
      const info = this.optimizer.step(() => {
        const out = this.opts.student.forward(
          modelInputs(batch),
          { training: true, seed, heads: [inputs.head], outputHiddenStates: wantHidden, outputAttentions: wantAttention },
        )
        const logits = out.logits[inputs.head]
        const real = realMask(batch.attentionMask)
        const hard = maskedCrossEntropy(logits, batch.labels)
        const terms: tf.Scalar[] = [tf.mul(hard, inputs.weights.hard)]
        let soft: tf.Scalar = tf.scalar(0)
        if (inputs.soft) {
          const positions = this.opts.softPositions === 'real' ? real : labeledMask(batch.labels)
          soft = softCrossEntropy(logits, inputs.soft, positions, inputs.temperature, this.opts.scaleT2)
          terms.push(tf.mul(soft, inputs.weights.soft))
        }
        const hid: tf.Scalar[] = []
        hiddenPairs.forEach((p, k) => {
          const t = inputs.hidden[k]
          if (t) hid.push(hiddenMse(out.hiddenStates![p.student], t, real, p.projection ? this.projections.get(p.projection) : undefined))
        })
        const att: tf.Scalar[] = []
        attentionPairs.forEach((p, k) => {
          const t = inputs.attention[k]
          if (t) att.push(attentionMse(out.attentions![p.student], t, real))
        })
        const hidSum = hid.length ? (tf.addN(hid) as tf.Scalar) : tf.scalar(0)
        const attSum = att.length ? (tf.addN(att) as tf.Scalar) : tf.scalar(0)
        if (hid.length || att.length) terms.push(tf.mul(tf.add(hidSum, attSum), inputs.weights.feature))
        parts.push(tf.keep(hard), tf.keep(soft), tf.keep(hidSum), tf.keep(attSum))
        return (terms.length === 1 ? terms[0] : tf.addN(terms)) as tf.Scalar
      })
      const [hard, soft, hidden, attention] = parts.map((p) => p.dataSync()[0])
      return { ...info, hard, soft, hidden, attention }
    } finally {
      disposeBatch(batch)
      tf.dispose(parts)
    }
  }

  projectionValues(): Map<string, Float32Array> {
    return new Map([...this.projections].map(([n, v]) => [n, v.dataSync() as Float32Array]))
  }
  override async dispose(): Promise<void> {
    await super.dispose()
    for (const v of this.projections.values()) v.dispose()
  }
}
