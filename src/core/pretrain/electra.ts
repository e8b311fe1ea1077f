// ELECTRA pretraining (Clark et al. 2020): a small masked-LM generator fills the masked
// positions with its own samples, and the encoder being pretrained (the discriminator) learns to
// tell, at every position, whether the token is the original or a replacement. The
// discriminator gets a learning signal from every token instead of the 15 % that are masked,
// which is what makes small models learn more per step than with MLM.
//
// Both networks train on onnxruntime with the graphs that exist already: the generator with the
// masked-LM graph (core/onnx/training.ts, its logits output for sampling), the discriminator with
// the token-classification graph and a two-label head 'rtd'. As in the paper the two losses are
// summed (discriminator weight 50); they share no parameters here (the paper ties the
// embeddings), so each has its own AdamW and the weight only scales the reported loss.
// The result is the discriminator: a BERT encoder with HF names that `train --init` fine-tunes.
// The generator is kept beside it, in optimizer.safetensors, only for resuming.

import { makeBertConfig, type BertConfig, type BertTokenClassifier } from '../model/bert'
import { onnxConfigOf } from '../onnx/export'
import { logitsOutput, MLM_CORRECT_OUTPUT, MLM_LOGITS_OUTPUT, maskedLmTrainGraph, tokenClassificationLogitsGraph, tokenClassificationTrainGraph } from '../onnx/training'
import { deriveSeed, Rng } from '../rng'
import type { HostBatch } from '../train/batching'
import { countLabeled } from '../train/loss'
import { copyParamsIntoModel, type TrainerEngine, type TrainStepInfo } from '../train/engine'
import { HostAdamW, type AdamWOptions, type OptimizerState } from '../train/optimizer'
import { batchFeeds, dropoutProbabilities, dropoutSitesOf, maskFeeds, OrtGraphRunner, type OrtSessionOptions } from '../train/ort'
import type { HeldOutScores } from './engine'

/** The discriminator's head: is the token at this position the original one? */
export const RTD_HEAD = 'rtd'
export const RTD_LABELS = ['original', 'replaced']
/** The paper's weight of the discriminator loss in the reported sum. */
export const RTD_WEIGHT = 50
/** Prefix of the generator's parameters (and moments) in optimizer.safetensors. */
export const GENERATOR_PREFIX = 'generator.'

/** The generator: the discriminator's depth at a quarter of its width (the paper's best size ratio). */
export function generatorConfig(disc: BertConfig): BertConfig {
  const hidden = Math.max(16, Math.round(disc.hiddenSize / 4 / 16) * 16)
  let heads = Math.max(1, Math.round(disc.numAttentionHeads / 4))
  while (hidden % heads !== 0) heads--
  return makeBertConfig({ ...disc, hiddenSize: hidden, numAttentionHeads: heads, intermediateSize: 4 * hidden })
}

/**
 * Samples one piece per labelled position from the generator's logits [M, V] (softmax at
 * temperature 1, inverse CDF); ids in `exclude` (special pieces) are never drawn.
 */
export function sampleReplacements(logits: Float32Array, M: number, V: number, rng: Rng, exclude: ReadonlySet<number>): Int32Array {
  const out = new Int32Array(M)
  const p = new Float64Array(V)
  for (let m = 0; m < M; m++) {
    const o = m * V
    let max = -Infinity
    for (let v = 0; v < V; v++) if (!exclude.has(v)) max = Math.max(max, logits[o + v])
    let z = 0
    for (let v = 0; v < V; v++) z += p[v] = exclude.has(v) ? 0 : Math.exp(logits[o + v] - max)
    let u = rng.next() * z
    let pick = -1
    for (let v = 0; v < V; v++) {
      if (p[v] === 0) continue
      pick = v
      u -= p[v]
      if (u <= 0) break
    }
    out[m] = pick
  }
  return out
}

/**
 * The discriminator's batch: the masked positions (mlmLabels ≠ −100, in flat order) hold the
 * generator's samples, every other position its original piece. Labels: 1 where the piece
 * differs from the original, 0 where it is the original (a sample that guessed right counts as
 * original, as in the paper), −100 on padding and special pieces.
 */
export function replacedTokenBatch(b: HostBatch, mlmLabels: Int32Array, samples: Int32Array, special: ReadonlySet<number>): { batch: HostBatch; labels: Int32Array } {
  const inputIds = Int32Array.from(b.inputIds)
  const labels = new Int32Array(inputIds.length).fill(-100)
  let m = 0
  for (let i = 0; i < inputIds.length; i++) {
    if (mlmLabels[i] !== -100) {
      if (m >= samples.length) throw new Error(`replaced-token batch: more masked positions than the ${samples.length} samples`)
      const original = mlmLabels[i]
      inputIds[i] = samples[m++]
      labels[i] = inputIds[i] === original ? 0 : 1
    } else if (b.attentionMask[i] && !special.has(inputIds[i])) {
      labels[i] = 0
    }
  }
  if (m !== samples.length) throw new Error(`replaced-token batch: ${samples.length} samples for ${m} masked positions`)
  return { batch: { ...b, inputIds, labels }, labels }
}

export interface ElectraScores extends HeldOutScores {
  /** Discriminator: fraction of labelled positions it classifies right, and its mean loss. */
  replacedTokenAccuracy: number
  replacedTokenLoss: number
  /** Fraction of labelled positions that were replaced (the accuracy of always answering "original" is 1 − this). */
  replacedFraction: number
}

export class ElectraTrainer implements TrainerEngine {
  readonly trainer: string
  readonly reason: string
  private readonly special: Set<number>

  private constructor(
    private readonly model: BertTokenClassifier,
    readonly genConfig: BertConfig,
    private readonly gen: OrtGraphRunner,
    private readonly genEval: OrtGraphRunner,
    private readonly disc: OrtGraphRunner,
    private readonly discEval: OrtGraphRunner,
    /** Discriminator parameters (the model's, 'rtd' head included). */
    readonly params: Map<string, Float32Array>,
    /** Generator encoder and LM head. */
    readonly genParams: Map<string, Float32Array>,
    private readonly discOpt: HostAdamW,
    private readonly genOpt: HostAdamW,
    specialIds: readonly number[],
  ) {
    this.trainer = `onnxruntime-${disc.provider}`
    this.reason = `${disc.describe()}; ELECTRA: generator ${genConfig.numHiddenLayers} × ${genConfig.hiddenSize}`
    this.special = new Set(specialIds)
  }

  /**
   * model: the discriminator, with an 'rtd' head; generator: its parameters in graph layout
   * (encoder names as a BertTokenClassifier's plus the masked-LM head). specialIds are never
   * sampled and never labelled.
   */
  static async open(model: BertTokenClassifier, generator: Map<string, Float32Array>, specialIds: readonly number[], optimizer: AdamWOptions, opts: OrtSessionOptions = {}): Promise<ElectraTrainer> {
    if (!model.heads.has(RTD_HEAD)) throw new Error(`ELECTRA: the discriminator has no '${RTD_HEAD}' head`)
    const genConfig = generatorConfig(model.config)
    const drop = (c: BertConfig) => dropoutSitesOf({ ...dropoutProbabilities(c), classifier: 0 })
    const heads = [{ name: RTD_HEAD, numLabels: RTD_LABELS.length }]
    const discGraph = tokenClassificationTrainGraph({ config: onnxConfigOf(model.config), heads, dropout: drop(model.config) })
    const genGraph = maskedLmTrainGraph({ config: onnxConfigOf(genConfig), dropout: drop(genConfig), outputLogits: true })
    const params = new Map<string, Float32Array>()
    const vars = model.variables()
    for (const p of discGraph.params) params.set(p.name, Float32Array.from(vars.get(p.name)!.dataSync() as Float32Array))
    for (const p of genGraph.params) {
      const size = p.shape.reduce((a, b) => a * b, 1)
      const have = generator.get(p.name)
      if (!have || have.length !== size) throw new Error(`ELECTRA generator: parameter ${p.name} ${have ? `has ${have.length} values, expected ${size}` : 'is missing'}`)
    }
    const runners: OrtGraphRunner[] = []
    try {
      for (const g of [genGraph, maskedLmTrainGraph({ config: onnxConfigOf(genConfig), outputLogits: true }), discGraph, tokenClassificationLogitsGraph({ config: onnxConfigOf(model.config), heads })]) runners.push(await OrtGraphRunner.open(g, opts))
    } catch (e) {
      for (const r of runners) await r.dispose()
      throw e
    }
    const [gen, genEval, disc, discEval] = runners
    return new ElectraTrainer(model, genConfig, gen, genEval, disc, discEval, params, generator, new HostAdamW(params, optimizer), new HostAdamW(generator, optimizer), specialIds)
  }

  async step(b: HostBatch, labels: Record<string, Int32Array>, seed: number): Promise<TrainStepInfo> {
    const mlm = labels.mlm
    const ort = this.gen.ort
    const g = await this.gen.run(this.genParams, { ...batchFeeds(ort, b, { mlm }), ...maskFeeds(this.gen, this.genConfig, b.batchSize, b.seqLen, seed) }, this.genOpt.gradientBuffers)
    if (!Number.isFinite(g.loss)) return { loss: g.loss, lr: this.discOpt.currentLr(), gradNorm: NaN }
    const logits = g.outputs[MLM_LOGITS_OUTPUT]
    const [M, V] = logits.dims as number[]
    const samples = sampleReplacements(logits.data as Float32Array, M, V, new Rng(deriveSeed(seed, 0xe1ec)), this.special)
    const rtd = replacedTokenBatch(b, mlm, samples, this.special)
    const d = await this.disc.run(this.params, {
      ...batchFeeds(ort, rtd.batch, { [RTD_HEAD]: rtd.labels }),
      ...maskFeeds(this.disc, this.model.config, b.batchSize, b.seqLen, deriveSeed(seed, 0xd15c)),
    }, this.discOpt.gradientBuffers)
    if (!Number.isFinite(d.loss)) return { loss: d.loss, lr: this.discOpt.currentLr(), gradNorm: NaN }
    this.genOpt.applyGradients(g.grads, g.gradNormSq)
    const info = this.discOpt.applyGradients(d.grads, d.gradNormSq)
    return { loss: g.loss + RTD_WEIGHT * d.loss, lr: info.lr, gradNorm: info.gradNorm }
  }

  /**
   * Held-out scores without dropout: the generator's masked-token accuracy and loss (comparable
   * with MLM runs), and the discriminator's on replacements sampled with a fixed seed.
   */
  async score(batches: Iterable<{ batch: HostBatch; labels: Int32Array }>): Promise<ElectraScores> {
    let genLoss = 0
    let genCorrect = 0
    let masked = 0
    let discLoss = 0
    let discCorrect = 0
    let judged = 0
    let replaced = 0
    let k = 0
    for (const { batch, labels } of batches) {
      const n = countLabeled(labels)
      if (n === 0) continue
      const g = await this.genEval.run(this.genParams, { ...batchFeeds(this.genEval.ort, batch, { mlm: labels }) })
      genLoss += g.loss * n
      genCorrect += g.terms[MLM_CORRECT_OUTPUT] ?? 0
      masked += n
      const logits = g.outputs[MLM_LOGITS_OUTPUT]
      const [M, V] = logits.dims as number[]
      const samples = sampleReplacements(logits.data as Float32Array, M, V, new Rng(deriveSeed(0xe7a1, k++)), this.special)
      const rtd = replacedTokenBatch(batch, labels, samples, this.special)
      const out = await this.discEval.outputs(this.params, batchFeeds(this.discEval.ort, rtd.batch, {}))
      const z = out[logitsOutput(RTD_HEAD)].data as Float32Array // [N, 2]
      for (let i = 0; i < rtd.labels.length; i++) {
        const y = rtd.labels[i]
        if (y < 0) continue
        const a = z[2 * i]
        const b2 = z[2 * i + 1]
        const max = Math.max(a, b2)
        const logZ = max + Math.log(Math.exp(a - max) + Math.exp(b2 - max))
        discLoss += logZ - (y === 1 ? b2 : a)
        if ((b2 > a ? 1 : 0) === y) discCorrect++
        replaced += y
        judged++
      }
    }
    return {
      loss: masked ? genLoss / masked : NaN,
      accuracy: masked ? genCorrect / masked : NaN,
      predicted: masked,
      replacedTokenAccuracy: judged ? discCorrect / judged : NaN,
      replacedTokenLoss: judged ? discLoss / judged : NaN,
      replacedFraction: judged ? replaced / judged : NaN,
    }
  }

  currentLr(): number {
    return this.discOpt.currentLr()
  }
  syncModel(): void {
    copyParamsIntoModel(this.model, this.params)
  }
  /** Both optimizers' moments; the generator's under GENERATOR_PREFIX. */
  optimizerState(): OptimizerState {
    const d = this.discOpt.state()
    const g = this.genOpt.state()
    const prefixed = (m: Map<string, Float32Array>) => new Map([...m].map(([n, x]) => [GENERATOR_PREFIX + n, x]))
    return { step: d.step, m: new Map([...d.m, ...prefixed(g.m)]), v: new Map([...d.v, ...prefixed(g.v)]) }
  }
  loadOptimizerState(s: OptimizerState): void {
    const split = (m: Map<string, Float32Array>, gen: boolean) =>
      new Map([...m].filter(([n]) => n.startsWith(GENERATOR_PREFIX) === gen).map(([n, x]) => [gen ? n.slice(GENERATOR_PREFIX.length) : n, x]))
    this.discOpt.loadState({ step: s.step, m: split(s.m, false), v: split(s.v, false) })
    this.genOpt.loadState({ step: s.step, m: split(s.m, true), v: split(s.v, true) })
  }
  /** The generator's weights, to save beside the optimizer state (GENERATOR_PREFIX). */
  generatorParams(): Map<string, Float32Array> {
    return new Map([...this.genParams].map(([n, x]) => [GENERATOR_PREFIX + n, x]))
  }
  async dispose(): Promise<void> {
    for (const r of [this.gen, this.genEval, this.disc, this.discEval]) await r.dispose()
  }
}
