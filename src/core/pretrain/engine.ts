// The masked-LM trainer engine: the BertForMaskedLM training graph (core/onnx/training.ts) on
// onnxruntime with HostAdamW, behind the runner's TrainerEngine interface. The encoder's
// parameters live in a tfjs BertTokenClassifier between saves (so checkpoints are written by the
// one checkpoint writer); the LM head's live only here.
//
// There is no tfjs fallback for pretraining: at tfjs-wasm speed (≈ 0.1× PyTorch) pretraining is
// not useful, so an onnxruntime that cannot start is reported as an error.

import type { BertTokenClassifier } from '../model/bert'
import { Rng } from '../rng'
import type { TensorToWrite } from '../model/safetensors'
import { transpose2d } from '../model/checkpoint'
import { MLM_CORRECT_OUTPUT, MLM_PARAMS, maskedLmTrainGraph } from '../onnx/training'
import type { HostBatch } from '../train/batching'
import { copyParamsIntoModel, type TrainerEngine, type TrainStepInfo } from '../train/engine'
import { HostAdamW, type AdamWOptions, type OptimizerState } from '../train/optimizer'
import { OrtGraphRunner, batchFeeds, dropoutProbabilities, dropoutSitesOf, maskFeeds, type OrtSessionOptions } from '../train/ort'
import { onnxConfigOf } from '../onnx/export'

/** LM-head parameters in the layout of the training graph (linear weights [in, out]). */
export function initLmHead(hidden: number, vocabSize: number, initializerRange: number, seed: number): Map<string, Float32Array> {
  const rng = new Rng(seed ^ 0x6c6d68)
  return new Map([
    [`${MLM_PARAMS.dense}.weight`, rng.normalArray(hidden * hidden, initializerRange)],
    [`${MLM_PARAMS.dense}.bias`, new Float32Array(hidden)],
    [`${MLM_PARAMS.layerNorm}.weight`, new Float32Array(hidden).fill(1)],
    [`${MLM_PARAMS.layerNorm}.bias`, new Float32Array(hidden)],
    [MLM_PARAMS.bias, new Float32Array(vocabSize)],
  ])
}

/** The LM head in HF BertForMaskedLM layout (dense weight [out, in]) for the checkpoint. */
export function lmHeadTensors(head: ReadonlyMap<string, Float32Array>, hidden: number): Map<string, TensorToWrite> {
  const out = new Map<string, TensorToWrite>()
  for (const [name, data] of head) {
    if (name === `${MLM_PARAMS.dense}.weight`) out.set(name, { shape: [hidden, hidden], data: transpose2d(data, hidden, hidden) })
    else out.set(name, { shape: [data.length], data })
  }
  return out
}

/** The LM head read back from HF layout (resume, --init from a BertForMaskedLM checkpoint). */
export function lmHeadFromTensors(tensors: ReadonlyMap<string, { shape: number[]; data: Float32Array }>, hidden: number): Map<string, Float32Array> | null {
  const names = [`${MLM_PARAMS.dense}.weight`, `${MLM_PARAMS.dense}.bias`, `${MLM_PARAMS.layerNorm}.weight`, `${MLM_PARAMS.layerNorm}.bias`, MLM_PARAMS.bias]
  if (!names.every((n) => tensors.has(n))) return null
  const out = new Map<string, Float32Array>()
  for (const n of names) {
    const t = tensors.get(n)!
    out.set(n, n === `${MLM_PARAMS.dense}.weight` ? transpose2d(t.data, hidden, hidden) : Float32Array.from(t.data))
  }
  return out
}

export interface HeldOutScores {
  loss: number
  /** Fraction of masked positions whose arg-max prediction is the original piece. */
  accuracy: number
  predicted: number
}

export class MaskedLmTrainer implements TrainerEngine {
  readonly trainer: string
  readonly reason: string

  private constructor(
    private readonly model: BertTokenClassifier,
    private readonly runner: OrtGraphRunner,
    private readonly evalRunner: OrtGraphRunner,
    readonly params: Map<string, Float32Array>,
    private readonly optimizer: HostAdamW,
  ) {
    this.trainer = `onnxruntime-${runner.provider}`
    this.reason = runner.describe()
  }

  static async open(model: BertTokenClassifier, head: Map<string, Float32Array>, optimizer: AdamWOptions, opts: OrtSessionOptions = {}): Promise<MaskedLmTrainer> {
    const config = onnxConfigOf(model.config)
    const graph = maskedLmTrainGraph({ config, dropout: dropoutSitesOf({ ...dropoutProbabilities(model.config), classifier: 0 }) })
    // Held-out scoring runs the same graph without dropout (and ignores its gradients).
    const evalGraph = maskedLmTrainGraph({ config })
    const params = new Map<string, Float32Array>()
    const vars = model.variables()
    for (const p of graph.params) {
      const v = vars.get(p.name)
      const data = v ? Float32Array.from(v.dataSync() as Float32Array) : head.get(p.name)
      const size = p.shape.reduce((a, b) => a * b, 1)
      if (!data || data.length !== size) throw new Error(`masked-LM trainer: parameter ${p.name} ${data ? `has ${data.length} values, expected ${size}` : 'is missing'}`)
      params.set(p.name, data)
    }
    const runner = await OrtGraphRunner.open(graph, opts)
    const evalRunner = await OrtGraphRunner.open(evalGraph, opts)
    return new MaskedLmTrainer(model, runner, evalRunner, params, new HostAdamW(params, optimizer))
  }

  async step(b: HostBatch, labels: Record<string, Int32Array>, seed: number): Promise<TrainStepInfo> {
    const ort = this.runner.ort
    const feeds = { ...batchFeeds(ort, b, labels), ...maskFeeds(this.runner, this.model.config, b.batchSize, b.seqLen, seed) }
    const r = await this.runner.run(this.params, feeds, this.optimizer.gradientBuffers)
    if (!Number.isFinite(r.loss)) return { loss: r.loss, lr: this.optimizer.currentLr(), gradNorm: NaN }
    return { loss: r.loss, ...this.optimizer.applyGradients(r.grads, r.gradNormSq) }
  }

  /** Mean loss and accuracy over held-out batches (each weighted by its masked positions). */
  async score(batches: Iterable<{ batch: HostBatch; labels: Int32Array }>): Promise<HeldOutScores> {
    let lossSum = 0
    let correct = 0
    let predicted = 0
    for (const { batch, labels } of batches) {
      const n = labels.reduce((a, l) => a + (l !== -100 ? 1 : 0), 0)
      if (n === 0) continue
      const r = await this.evalRunner.run(this.params, batchFeeds(this.evalRunner.ort, batch, { mlm: labels }))
      lossSum += r.loss * n
      correct += r.terms[MLM_CORRECT_OUTPUT] ?? 0
      predicted += n
    }
    return { loss: predicted ? lossSum / predicted : NaN, accuracy: predicted ? correct / predicted : NaN, predicted }
  }

  /** The LM head's current values (graph layout). */
  head(): Map<string, Float32Array> {
    return new Map([...this.params].filter(([n]) => n.startsWith('cls.')))
  }

  currentLr(): number {
    return this.optimizer.currentLr()
  }
  syncModel(): void {
    // The LM head's parameters have no variable in the model and are skipped.
    copyParamsIntoModel(this.model, this.params)
  }
  optimizerState(): OptimizerState {
    return this.optimizer.state()
  }
  loadOptimizerState(s: OptimizerState): void {
    this.optimizer.loadState(s)
  }
  async dispose(): Promise<void> {
    await this.runner.dispose()
    await this.evalRunner.dispose()
  }
}
