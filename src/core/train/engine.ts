// Trainer engines: who computes a training step. onnxruntime (training graphs from
// core/onnx/training.ts, CUDA → DirectML → CPU) first; the tfjs chain (autodiff on the active
// tfjs backend) as the fallback. FASTBIONER_TRAINER=onnxruntime|tfjs forces one: a forced engine
// that cannot start is an error, never a silent fallback.

import * as tf from '@tensorflow/tfjs-core'
import type { BertTokenClassifier } from '../model/bert'
import { errorText } from '../onnx/session'
import { disposeBatch, modelInputs, toTensors, type HostBatch } from './batching'
import { crfParamNames } from '../model/crf'
import { crfLoss, maskedCrossEntropy } from './loss'
import { AdamW, type AdamWOptions, type OptimizerState } from './optimizer'
import { OrtTokenClassifierTrainer, type OrtSessionOptions } from './ort'

export type TrainerPreference = 'auto' | 'onnxruntime' | 'tfjs'

export interface TrainStepInfo {
  loss: number
  lr: number
  gradNorm: number
}

/** One optimizer step per call on a host batch; parameters stay inside the engine between steps. */
export interface TrainerEngine {
  /** 'onnxruntime-cpu', 'onnxruntime-cuda', 'tfjs-wasm', … */
  readonly trainer: string
  /** Why this engine (shown to the user, recorded in the checkpoint). */
  readonly reason: string
  /** labels: per head, [batch · seq] with −100 where no loss applies. */
  step(b: HostBatch, labels: Record<string, Int32Array>, seed: number): Promise<TrainStepInfo>
  currentLr(): number
  /** Copies the engine's parameters into the tfjs model (before evaluation or saving). */
  syncModel(): void
  optimizerState(): OptimizerState
  loadOptimizerState(s: OptimizerState): void
  dispose(): Promise<void>
}

/** Copies host parameters (tfjs layout) into the model's variables; names the model lacks are skipped. */
export function copyParamsIntoModel(model: BertTokenClassifier, params: ReadonlyMap<string, Float32Array>): void {
  const vars = model.variables()
  for (const [name, data] of params) {
    const v = vars.get(name)
    if (!v) continue
    const t = tf.tensor(data, v.shape, 'float32')
    v.assign(t)
    t.dispose()
  }
}

export class TrainerError extends Error {
  override name = 'TrainerError'
}

export interface OpenTrainerOptions extends OrtSessionOptions, EngineChoice {
  model: BertTokenClassifier
  /** Heads in the loss (sum of their masked mean cross-entropies). */
  heads: string[]
  optimizer: AdamWOptions
  /** Dropout during training (default true); off only for engine comparisons. */
  dropout?: boolean
}

/** The fastest engine that starts, with the reason. */
export function openTrainer(opts: OpenTrainerOptions): Promise<TrainerEngine> {
  return openEngine<TrainerEngine>(opts, () => OrtTrainer.open(opts), (reason) => new TfjsTrainer(opts, reason))
}

export interface EngineChoice {
  /** Default 'auto'; FASTBIONER_TRAINER overrides 'auto'. */
  prefer?: TrainerPreference
  env?: NodeJS.ProcessEnv
  logger?: (line: string) => void
}

/**
 * The engine rule of every training task: onnxruntime first, tfjs when it cannot start; a
 * preference or FASTBIONER_TRAINER forces one, and a forced engine that cannot start is an error.
 */
export async function openEngine<E extends { reason: string }>(choice: EngineChoice, openOrt: () => Promise<E>, openTfjs: (reason: string) => E): Promise<E> {
  const env = choice.env ?? process.env
  const envValue = env.FASTBIONER_TRAINER?.trim().toLowerCase()
  if (envValue && envValue !== 'onnxruntime' && envValue !== 'tfjs') {
    throw new TrainerError(`FASTBIONER_TRAINER=${env.FASTBIONER_TRAINER} is not 'onnxruntime' or 'tfjs'`)
  }
  const forced = choice.prefer && choice.prefer !== 'auto' ? choice.prefer : (envValue as 'onnxruntime' | 'tfjs' | undefined)
  const by = choice.prefer && choice.prefer !== 'auto' ? 'requested' : 'forced by FASTBIONER_TRAINER'
  if (forced === 'tfjs') return openTfjs(`tfjs autodiff on the ${tf.getBackend()} backend (${by})`)
  try {
    const ort = await openOrt()
    if (forced === 'onnxruntime') ort.reason += ` (${by})`
    return ort
  } catch (e) {
    if (forced === 'onnxruntime') throw new TrainerError(`the onnxruntime trainer cannot start (${by}): ${errorText(e)}`)
    const why = `onnxruntime trainer cannot start (${errorText(e)})`
    ;(choice.logger ?? ((l: string) => console.warn(l)))(`[fastbioner] ${why}; training with tfjs`)
    return openTfjs(`tfjs autodiff on the ${tf.getBackend()} backend (fallback: ${why})`)
  }
}

class OrtTrainer implements TrainerEngine {
  private constructor(
    private readonly model: BertTokenClassifier,
    private readonly inner: OrtTokenClassifierTrainer,
    readonly trainer: string,
    public reason: string,
  ) {}

  static async open(opts: OpenTrainerOptions): Promise<OrtTrainer> {
    const vars = opts.model.variables()
    const params = new Map([...vars].map(([n, v]) => [n, Float32Array.from(v.dataSync() as Float32Array)]))
    const inner = await OrtTokenClassifierTrainer.create({
      ...opts,
      config: opts.model.config,
      heads: opts.heads.map((h) => {
        const info = opts.model.heads.get(h)
        if (!info) throw new TrainerError(`model has no head '${h}'`)
        return { name: h, numLabels: info.labels.length, lossOnHost: info.crf }
      }),
      params,
      optimizer: opts.optimizer,
    })
    const p = inner.runner.provider
    return new OrtTrainer(opts.model, inner, `onnxruntime-${p}`, inner.runner.describe())
  }

  step(b: HostBatch, labels: Record<string, Int32Array>, seed: number): Promise<TrainStepInfo> {
    return this.inner.step(b, labels, seed)
  }
  currentLr(): number {
    return this.inner.optimizer.currentLr()
  }
  syncModel(): void {
    copyParamsIntoModel(this.model, this.inner.params)
  }
  optimizerState(): OptimizerState {
    return this.inner.optimizer.state()
  }
  loadOptimizerState(s: OptimizerState): void {
    this.inner.optimizer.loadState(s)
  }
  dispose(): Promise<void> {
    return this.inner.dispose()
  }
}

/** What every tfjs engine shares: autodiff on the model's own variables with the tfjs AdamW. */
export abstract class TfjsEngineBase {
  readonly trainer = `tfjs-${tf.getBackend()}`
  protected readonly optimizer: AdamW

  constructor(
    readonly reason: string,
    params: Map<string, tf.Variable>,
    optimizer: AdamWOptions,
  ) {
    this.optimizer = new AdamW(params, optimizer)
  }

  currentLr(): number {
    return this.optimizer.currentLr()
  }
  /** The weights are the model's variables already. */
  syncModel(): void {}
  optimizerState(): OptimizerState {
    return this.optimizer.state()
  }
  loadOptimizerState(s: OptimizerState): void {
    this.optimizer.loadState(s)
  }
  async dispose(): Promise<void> {
    this.optimizer.dispose()
  }
}

/** The word table, updated by the rows a batch reads in both engines (the onnxruntime trainer's wordRowGrads). */
const WORD_EMBEDDINGS = 'bert.embeddings.word_embeddings.weight'

class TfjsTrainer extends TfjsEngineBase implements TrainerEngine {
  private readonly dropout: boolean

  constructor(
    private readonly opts: OpenTrainerOptions,
    reason: string,
  ) {
    super(reason, new Map([...opts.model.variables()].filter(([, v]) => v.trainable)), opts.optimizer)
    this.dropout = opts.dropout ?? true
  }

  async step(b: HostBatch, labels: Record<string, Int32Array>, seed: number): Promise<TrainStepInfo> {
    const t = toTensors(b)
    const shape: [number, number] = [b.batchSize, b.seqLen]
    const heads = Object.keys(labels)
    const labelTensors = heads.map((h) => tf.tensor2d(labels[h], shape, 'int32'))
    try {
      return this.optimizer.step(() => {
        const out = this.opts.model.forward(modelInputs(t), { training: this.dropout, seed, heads })
        const terms = heads.map((h, i) => {
          if (!this.opts.model.heads.get(h)?.crf) return maskedCrossEntropy(out.logits[h], labelTensors[i])
          const n = crfParamNames(h)
          const v = this.opts.model.variables()
          return crfLoss(out.logits[h], labels[h], v.get(n.transitions)!, v.get(n.start)!, v.get(n.end)!)
        })
        return (terms.length === 1 ? terms[0] : tf.addN(terms)) as tf.Scalar
      }, { readRows: new Map([[WORD_EMBEDDINGS, Int32Array.from(new Set(b.inputIds))]]) })
    } finally {
      disposeBatch(t)
      tf.dispose(labelTensors)
    }
  }
}
