// The onnxruntime trainer: runs a training graph (core/onnx/training.ts: forward, loss and every
// parameter's gradient in one ONNX graph) and updates the parameters, held in Float32Arrays, with
// HostAdamW between runs.

import { availableParallelism, cpus } from 'node:os'
import type * as Ort from 'onnxruntime-node'
import type { BertConfig } from '../model/bert'
import { dropoutMask } from '../model/dropout'
import { Rng } from '../rng'
import { createOrtSession, defaultExecutionProviders, loadOnnxRuntime, parseProviders, type ExecutionProvider } from '../onnx/session'
import { GRAD_NORM_SQ, gradName, tokenClassificationTrainGraph, type CeHead, type DropoutSites, type TrainGraph } from '../onnx/training'
import { onnxConfigOf } from '../onnx/export'
import type { HostBatch } from './batching'
import { HostAdamW, type AdamWOptions, type OptimizerState } from './optimizer'

export interface OrtSessionOptions {
  /** Providers to try in order; default: FASTBIONER_ORT_EP, else cuda (if installed), dml (Windows), cpu. */
  executionProviders?: ExecutionProvider[]
  /** Intra-op threads; default: all cores. */
  threads?: number
  ort?: typeof Ort
}

/** Dropout sites of a config and their probabilities (the tfjs model's rules). */
export function dropoutProbabilities(c: BertConfig): { hidden: number; attention: number; classifier: number } {
  return { hidden: c.hiddenDropoutProb, attention: c.attentionProbsDropoutProb, classifier: c.classifierDropout ?? c.hiddenDropoutProb }
}

export function dropoutSitesOf(p: { hidden: number; attention: number; classifier: number }): DropoutSites {
  return { hidden: p.hidden > 0, attention: p.attention > 0, classifier: p.classifier > 0 }
}

/**
 * The masks of one training step, in the order BertTokenClassifier.forward draws them from
 * `new Rng(seed)` (embeddings; per layer attention probs, attention output, FFN output;
 * classifier), so the onnxruntime and tfjs engines drop the same units for the same step seed.
 * With a pool, the arrays of the previous step are refilled instead of allocated (several MB a
 * step: allocating them cost more than drawing them).
 */
export function dropoutMasks(c: BertConfig, batch: number, seq: number, seed: number, withClassifier = true, pool?: MaskPool): Float32Array[] {
  const p = dropoutProbabilities(c)
  const rng = new Rng(seed)
  const N = batch * seq * c.hiddenSize
  const A = batch * c.numAttentionHeads * seq * seq
  const out: Float32Array[] = []
  const draw = (size: number, prob: number) => out.push(pool ? rng.fillDropoutMask(pool.take(out.length, size), prob) : dropoutMask(size, prob, rng))
  if (p.hidden > 0) draw(N, p.hidden)
  for (let l = 0; l < c.numHiddenLayers; l++) {
    if (p.attention > 0) draw(A, p.attention)
    if (p.hidden > 0) draw(N, p.hidden)
    if (p.hidden > 0) draw(N, p.hidden)
  }
  if (withClassifier && p.classifier > 0) draw(N, p.classifier)
  return out
}

/** Mask arrays reused from step to step (a graph run has finished with them before the next is drawn). */
export class MaskPool {
  private readonly buffers: Float32Array[] = []
  take(index: number, size: number): Float32Array {
    const have = this.buffers[index]
    if (have && have.length === size) return have
    return (this.buffers[index] = new Float32Array(size))
  }
}

export interface GraphRunResult {
  loss: number
  /** Each `loss.<term>` output. */
  terms: Record<string, number>
  grads: Map<string, Float32Array>
  /** Σ‖grad‖² as the graph computed it. */
  gradNormSq: number
}

/** A training graph loaded in onnxruntime; parameters are fed from `params` on every run. */
export class OrtGraphRunner {
  private constructor(
    readonly ort: typeof Ort,
    readonly session: Ort.InferenceSession,
    readonly graph: TrainGraph,
    readonly provider: ExecutionProvider,
    readonly threads: number,
    readonly notes: string[],
  ) {}

  /** The dropout mask arrays of this graph's runs. */
  readonly maskPool = new MaskPool()

  static async open(graph: TrainGraph, opts: OrtSessionOptions = {}): Promise<OrtGraphRunner> {
    const ort = opts.ort ?? (await loadOnnxRuntime())
    const envEp = process.env.FASTBIONER_ORT_EP
    const def = defaultExecutionProviders()
    const providers = opts.executionProviders ?? (envEp ? parseProviders(envEp) : def.order)
    const threads = opts.threads ?? defaultThreads()
    const opened = await createOrtSession(ort, graph.model, providers, threads, false)
    return new OrtGraphRunner(ort, opened.session, graph, opened.provider, threads, opened.failures)
  }

  /** Runs forward + backward; `inputs` holds the batch, masks and targets (already ORT tensors). */
  async run(params: Map<string, Float32Array>, inputs: Record<string, Ort.Tensor>): Promise<GraphRunResult> {
    const feeds: Record<string, Ort.Tensor> = { ...inputs }
    for (const p of this.graph.params) {
      const data = params.get(p.name)
      if (!data) throw new Error(`training graph: parameter ${p.name} has no value`)
      feeds[p.name] = new this.ort.Tensor('float32', data, p.shape)
    }
    const out = await this.session.run(feeds)
    const grads = new Map<string, Float32Array>()
    for (const p of this.graph.params) grads.set(p.name, out[gradName(p.name)].data as Float32Array)
    const terms: Record<string, number> = {}
    for (const t of this.graph.lossTerms) terms[t] = (out[t].data as Float32Array)[0]
    for (const name of this.graph.metricOutputs ?? []) terms[name] = (out[name].data as Float32Array)[0]
    return { loss: (out.loss.data as Float32Array)[0], terms, grads, gradNormSq: (out[GRAD_NORM_SQ].data as Float32Array)[0] }
  }

  async dispose(): Promise<void> {
    await this.session.release()
  }

  describe(): string {
    const ep = this.provider === 'cpu' ? `CPU execution provider, ${this.threads} intra-op thread${this.threads === 1 ? '' : 's'}` : `${this.provider.toUpperCase()} execution provider`
    return `onnxruntime-node ${this.ort.env.versions?.common ?? ''} training graph, ${ep}${this.notes.length ? `; ${this.notes.join('; ')}` : ''}`
  }
}

function defaultThreads(): number {
  return typeof availableParallelism === 'function' ? availableParallelism() : cpus().length
}

export function toInt64(a: Int32Array): BigInt64Array {
  const out = new BigInt64Array(a.length)
  for (let i = 0; i < a.length; i++) out[i] = BigInt(a[i])
  return out
}

/** Batch tensors of a token-classification graph: ids, mask, types and labels.<head>. */
export function batchFeeds(ort: typeof Ort, b: HostBatch, labels: Record<string, Int32Array>): Record<string, Ort.Tensor> {
  const dims = [b.batchSize, b.seqLen]
  const feeds: Record<string, Ort.Tensor> = {
    input_ids: new ort.Tensor('int64', toInt64(b.inputIds), dims),
    attention_mask: new ort.Tensor('int64', toInt64(b.attentionMask), dims),
    token_type_ids: new ort.Tensor('int64', toInt64(b.tokenTypeIds), dims),
  }
  for (const [head, l] of Object.entries(labels)) feeds[`labels.${head}`] = new ort.Tensor('int64', toInt64(l), dims)
  return feeds
}

/** Mask tensors for the runner's dropout inputs, drawn as the tfjs forward draws them. */
export function maskFeeds(runner: OrtGraphRunner, c: BertConfig, batch: number, seq: number, seed: number): Record<string, Ort.Tensor> {
  const { ort, graph } = runner
  const feeds: Record<string, Ort.Tensor> = {}
  if (graph.dropoutInputs.length === 0) return feeds
  const masks = dropoutMasks(c, batch, seq, seed, graph.dropoutInputs.includes('dropout.classifier'), runner.maskPool)
  if (masks.length !== graph.dropoutInputs.length) throw new Error(`training graph has ${graph.dropoutInputs.length} dropout inputs, the config gives ${masks.length} masks`)
  graph.dropoutInputs.forEach((name, i) => {
    const dims = name.endsWith('.attention') ? [batch, c.numAttentionHeads, seq, seq] : [batch * seq, c.hiddenSize]
    feeds[name] = new ort.Tensor('float32', masks[i], dims)
  })
  return feeds
}

export interface TokenClassifierTrainerOptions extends OrtSessionOptions {
  config: BertConfig
  heads: CeHead[]
  /** Parameters in the tfjs layout; updated in place. Must hold every parameter of the graph. */
  params: Map<string, Float32Array>
  optimizer: AdamWOptions
  /** Dropout on (training) or off (tests comparing engines). Default on. */
  dropout?: boolean
}

export interface TrainStepResult {
  loss: number
  lr: number
  gradNorm: number
}

/** Token-classification training on onnxruntime: one graph run + one HostAdamW update per step. */
export class OrtTokenClassifierTrainer {
  private constructor(
    readonly runner: OrtGraphRunner,
    readonly config: BertConfig,
    readonly heads: CeHead[],
    readonly params: Map<string, Float32Array>,
    readonly optimizer: HostAdamW,
  ) {}

  static async create(opts: TokenClassifierTrainerOptions): Promise<OrtTokenClassifierTrainer> {
    const sites = opts.dropout === false ? { hidden: false, attention: false, classifier: false } : dropoutSitesOf(dropoutProbabilities(opts.config))
    const graph = tokenClassificationTrainGraph({ config: onnxConfigOf(opts.config), heads: opts.heads, dropout: sites })
    const params = new Map<string, Float32Array>()
    for (const p of graph.params) {
      const data = opts.params.get(p.name)
      const size = p.shape.reduce((a, b) => a * b, 1)
      if (!data || data.length !== size) throw new Error(`onnxruntime trainer: parameter ${p.name} ${data ? `has ${data.length} values, expected ${size}` : 'is missing'}`)
      params.set(p.name, data)
    }
    const runner = await OrtGraphRunner.open(graph, opts)
    return new OrtTokenClassifierTrainer(runner, opts.config, opts.heads, params, new HostAdamW(params, opts.optimizer))
  }

  /** Loss and gradients of one batch without an update (gradient checks). */
  async gradients(b: HostBatch, labels: Record<string, Int32Array>, seed: number): Promise<GraphRunResult> {
    const ort = this.runner.ort
    const feeds = { ...batchFeeds(ort, b, labels), ...maskFeeds(this.runner, this.config, b.batchSize, b.seqLen, seed) }
    return this.runner.run(this.params, feeds)
  }

  async step(b: HostBatch, labels: Record<string, Int32Array>, seed: number): Promise<TrainStepResult> {
    const r = await this.gradients(b, labels, seed)
    if (!Number.isFinite(r.loss)) return { loss: r.loss, lr: this.optimizer.currentLr(), gradNorm: NaN }
    const info = this.optimizer.applyGradients(r.grads, r.gradNormSq)
    return { loss: r.loss, ...info }
  }

  optimizerState(): OptimizerState {
    return this.optimizer.state()
  }

  async dispose(): Promise<void> {
    await this.runner.dispose()
  }
}
