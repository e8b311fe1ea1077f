// The onnxruntime trainer: runs a training graph (core/onnx/training.ts: forward, loss and every
// parameter's gradient in one ONNX graph) and updates the parameters, held in Float32Arrays, with
// HostAdamW between runs.

import { createHash } from 'node:crypto'
import { availableParallelism, cpus } from 'node:os'
import type * as Ort from 'onnxruntime-node'
import type { BertConfig } from '../model/bert'
import { dropoutMask } from '../model/dropout'
import { DropoutArena, Rng } from '../rng'
import { createOrtSession, defaultExecutionProviders, loadOnnxRuntime, parseProviders, type ExecutionProvider } from '../onnx/session'
import { crfBatchLoss, crfParamNames, crfParamShapes } from '../model/crf'
import { dlogitsInput, GRAD_NORM_SQ, gradName, logitsOutput, rowGradName, tokenClassificationLogitsGraph, tokenClassificationTrainGraph, type CeHead, type DropoutSites, type TrainGraph } from '../onnx/training'
import { onnxConfigOf } from '../onnx/export'
import type { HostBatch } from './batching'
import { HostAdamW, sumRowGradients, type AdamWOptions, type OptimizerState, type RowGradient } from './optimizer'

export interface OrtSessionOptions {
  /** Providers to try in order; default: FASTBIONER_ORT_EP, else cuda (if installed), dml (Windows), cpu. */
  executionProviders?: ExecutionProvider[]
  /** Intra-op threads; default: all cores. */
  threads?: number
  ort?: typeof Ort
  /**
   * Keep the session open after dispose and hand it to the next runner of the same graph, threads
   * and providers in this process (sharedSession below). For graphs that are slow to open and
   * opened again and again: the word tagger's unrolled buckets, once per retraining round.
   */
  shareSession?: boolean
  /**
   * Let onnxruntime's worker threads spin between operators; default: when more than one thread.
   * A training step runs about a thousand operators back to back, and a worker that sleeps after
   * each wakes late for the next: spinning cut a quiet cpu-small step's graph run by 8 % (16 × 128,
   * 2 threads: 280 → 258 ms, bench/profile-step.ts). Tagging sessions do not spin (core/onnx/session).
   * With one thread there is no worker to spin; run several trainings at once with one thread each.
   */
  spin?: boolean
}

type OpenedSession = Awaited<ReturnType<typeof createOrtSession>>

/**
 * Sessions kept by shareSession, least recently used first. onnxruntime's session creation for
 * the word tagger's unrolled graphs grows about with the square of the bucket length (1.2 s at
 * 16 words, 9.7 s at 64, 50 s at 128 on one loaded core), paid again by every retraining round
 * before this; a session only reads its inputs, so runners of the same graph can share it.
 */
const sharedSessions = new Map<string, { opened: Promise<OpenedSession>; users: number }>()
/** Sessions kept when no runner uses them (the largest bucket set of one model, with room). */
export const MAX_SHARED_SESSIONS = 24

async function sharedSession(key: string, open: () => Promise<OpenedSession>): Promise<{ opened: OpenedSession; release: () => Promise<void> }> {
  let entry = sharedSessions.get(key)
  if (entry) sharedSessions.delete(key) // re-inserted below as the most recently used
  else entry = { opened: open(), users: 0 }
  sharedSessions.set(key, entry)
  entry.users++
  const mine = entry
  let opened: OpenedSession
  try {
    opened = await mine.opened
  } catch (e) {
    mine.users--
    if (sharedSessions.get(key) === mine) sharedSessions.delete(key)
    throw e
  }
  let released = false
  const release = async () => {
    if (released) return
    released = true
    mine.users--
    // Close the least recently used idle sessions beyond the limit.
    for (const [k, e] of sharedSessions) {
      if (sharedSessions.size <= MAX_SHARED_SESSIONS) break
      if (e.users > 0) continue
      sharedSessions.delete(k)
      await (await e.opened).session.release()
    }
  }
  return { opened, release }
}

/** How many shared sessions this process holds open (tests). */
export function sharedSessionCount(): number {
  return sharedSessions.size
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
export function dropoutMasks(c: BertConfig, batch: number, seq: number, seed: number, withClassifier = true, arena?: DropoutArena): Float32Array[] {
  const p = dropoutProbabilities(c)
  const rng = new Rng(seed)
  const N = batch * seq * c.hiddenSize
  const A = batch * c.numAttentionHeads * seq * seq
  // The masks in the forward's order: (size, p) each.
  const plan: Array<[number, number]> = []
  if (p.hidden > 0) plan.push([N, p.hidden])
  for (let l = 0; l < c.numHiddenLayers; l++) {
    if (p.attention > 0) plan.push([A, p.attention])
    if (p.hidden > 0) plan.push([N, p.hidden])
    if (p.hidden > 0) plan.push([N, p.hidden])
  }
  if (withClassifier && p.classifier > 0) plan.push([N, p.classifier])
  if (!arena) return plan.map(([size, prob]) => dropoutMask(size, prob, rng))
  // Views of the arena's memory, filled where they are (valid until its next views call).
  const views = arena.views(plan.map(([size]) => size))
  return views.map((v, i) => rng.fillDropoutMask(v, plan[i][1]))
}

export interface GraphRunResult {
  /** Every output of the run, for graphs with outputs beyond loss and gradients. */
  outputs: Ort.InferenceSession.ReturnType
  loss: number
  /** Each `loss.<term>` output. */
  terms: Record<string, number>
  grads: Map<string, Float32Array>
  /** The graph's row gradients (TrainGraph.rowGrads), the rows of one id summed; not in gradNormSq. */
  rowGrads: Map<string, RowGradient>
  /** Σ‖grad‖² as the graph computed it (the dense gradients'). */
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
    private readonly release: () => Promise<void> = () => session.release(),
  ) {}

  /** Where this graph's dropout masks are drawn, step after step (a run has finished with them before the next are drawn). */
  readonly masks = new DropoutArena()

  static async open(graph: TrainGraph, opts: OrtSessionOptions = {}): Promise<OrtGraphRunner> {
    const ort = opts.ort ?? (await loadOnnxRuntime())
    const envEp = process.env.FASTBIONER_ORT_EP
    const def = defaultExecutionProviders()
    const providers = opts.executionProviders ?? (envEp ? parseProviders(envEp) : def.order)
    const threads = opts.threads ?? defaultThreads()
    const spin = opts.spin ?? threads > 1
    const open = () => createOrtSession(ort, graph.model, providers, threads, { spin, memoryPattern: false })
    if (!opts.shareSession) {
      const opened = await open()
      return new OrtGraphRunner(ort, opened.session, graph, opened.provider, threads, opened.failures)
    }
    const key = `${createHash('sha256').update(graph.model).digest('hex')} ${providers.join(',')} ${threads} ${spin}`
    const { opened, release } = await sharedSession(key, open)
    return new OrtGraphRunner(ort, opened.session, graph, opened.provider, threads, opened.failures, release)
  }

  /**
   * Runs the graph on `inputs` (batch, masks, targets as ORT tensors) and the parameters; every
   * output. `gradientsInto`: arrays (of a parameter's size) that onnxruntime writes the gradient
   * outputs `grad.<name>` into instead of allocating them (HostAdamW.gradientBuffers).
   */
  async outputs(params: Map<string, Float32Array>, inputs: Record<string, Ort.Tensor>, gradientsInto?: ReadonlyMap<string, Float32Array>): Promise<Ort.InferenceSession.ReturnType> {
    const feeds: Record<string, Ort.Tensor> = { ...inputs }
    for (const p of this.graph.params) {
      const data = params.get(p.name)
      if (!data) throw new Error(`training graph: parameter ${p.name} has no value`)
      feeds[p.name] = new this.ort.Tensor('float32', data, p.shape)
    }
    if (!gradientsInto?.size) return this.session.run(feeds)
    // Every output is fetched: null ones onnxruntime allocates as usual.
    const fetches: Record<string, Ort.Tensor | null> = {}
    for (const name of this.session.outputNames) fetches[name] = null
    for (const p of this.graph.params) {
      const into = gradientsInto.get(p.name)
      if (into && gradName(p.name) in fetches) fetches[gradName(p.name)] = new this.ort.Tensor('float32', into, p.shape)
    }
    return this.session.run(feeds, fetches)
  }

  /** Runs forward + backward; `inputs` holds the batch, masks and targets (already ORT tensors). */
  async run(params: Map<string, Float32Array>, inputs: Record<string, Ort.Tensor>, gradientsInto?: ReadonlyMap<string, Float32Array>): Promise<GraphRunResult> {
    const out = await this.outputs(params, inputs, gradientsInto)
    const grads = new Map<string, Float32Array>()
    const rowGrads = new Map<string, RowGradient>()
    for (const { param, ids } of this.graph.rowGrads ?? []) {
      const rows = out[rowGradName(param)]
      rowGrads.set(param, sumRowGradients(inputs[ids].data as BigInt64Array, rows.data as Float32Array, rows.dims[1]))
    }
    for (const p of this.graph.params) if (!rowGrads.has(p.name)) grads.set(p.name, out[gradName(p.name)].data as Float32Array)
    const terms: Record<string, number> = {}
    for (const t of this.graph.lossTerms) terms[t] = (out[t].data as Float32Array)[0]
    for (const name of this.graph.metricOutputs ?? []) terms[name] = (out[name].data as Float32Array)[0]
    return { outputs: out, loss: (out.loss.data as Float32Array)[0], terms, grads, rowGrads, gradNormSq: (out[GRAD_NORM_SQ].data as Float32Array)[0] }
  }

  async dispose(): Promise<void> {
    await this.release()
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

/** Batch tensors of a token-classification graph: ids, mask, types (char_ids, shape_flags when the batch has characters) and labels.<head>. */
export function batchFeeds(ort: typeof Ort, b: HostBatch, labels: Record<string, Int32Array>): Record<string, Ort.Tensor> {
  const dims = [b.batchSize, b.seqLen]
  const feeds: Record<string, Ort.Tensor> = {
    input_ids: new ort.Tensor('int64', toInt64(b.inputIds), dims),
    attention_mask: new ort.Tensor('int64', toInt64(b.attentionMask), dims),
    token_type_ids: new ort.Tensor('int64', toInt64(b.tokenTypeIds), dims),
  }
  if (b.chars) {
    feeds.char_ids = new ort.Tensor('int64', toInt64(b.chars.charIds), [...dims, b.chars.maxChars])
    feeds.shape_flags = new ort.Tensor('float32', b.chars.shapeFlags, [...dims, b.chars.flags])
  }
  for (const [head, l] of Object.entries(labels)) feeds[`labels.${head}`] = new ort.Tensor('int64', toInt64(l), dims)
  return feeds
}

/** Mask tensors for the runner's dropout inputs, drawn as the tfjs forward draws them. */
export function maskFeeds(runner: OrtGraphRunner, c: BertConfig, batch: number, seq: number, seed: number): Record<string, Ort.Tensor> {
  const { ort, graph } = runner
  const feeds: Record<string, Ort.Tensor> = {}
  if (graph.dropoutInputs.length === 0) return feeds
  const masks = dropoutMasks(c, batch, seq, seed, graph.dropoutInputs.includes('dropout.classifier'), runner.masks)
  if (masks.length !== graph.dropoutInputs.length) throw new Error(`training graph has ${graph.dropoutInputs.length} dropout inputs, the config gives ${masks.length} masks`)
  graph.dropoutInputs.forEach((name, i) => {
    const dims = name.endsWith('.attention') ? [batch, c.numAttentionHeads, seq, seq] : [batch * seq, c.hiddenSize]
    feeds[name] = new ort.Tensor('float32', masks[i], dims)
  })
  return feeds
}

export interface TokenClassifierTrainerOptions extends OrtSessionOptions {
  config: BertConfig
  /** Heads with lossOnHost have a CRF (core/model/crf); `params` must hold its scores. */
  heads: CeHead[]
  /**
   * Parameters in the tfjs layout. Must hold every parameter of the graph; its entries are then
   * replaced by the arrays the trainer updates in place (views of its optimizer's memory, see
   * HostAdamW): read them through the map.
   */
  params: Map<string, Float32Array>
  optimizer: AdamWOptions
  /** Dropout on (training) or off (tests comparing engines). Default on. */
  dropout?: boolean
  /**
   * The word table's gradient as the rows the batch read, updated lazily (HostAdamW's row
   * gradients); default on. Off: the whole table's gradient and the dense AdamW update.
   */
  wordRowGrads?: boolean
  /** Graph operators: onnxruntime's com.microsoft ones too (default) or standard ONNX only (GraphBuildOptions). */
  contribOps?: boolean
  /** false: the parameters stay in the arrays given, copied through the optimizer's memory each step (HostAdamWLayout.resident; A/B). */
  residentParams?: boolean
}

export interface TrainStepResult {
  loss: number
  lr: number
  gradNorm: number
}

/**
 * Token-classification training on onnxruntime: one graph run + one HostAdamW update per step.
 * A CRF head costs one more run, of the forward graph: its logits go through the CRF on the host
 * (core/model/crf), whose d loss / d logits the training graph then backpropagates.
 */
export class OrtTokenClassifierTrainer {
  private constructor(
    readonly runner: OrtGraphRunner,
    /** The forward graph of the CRF heads; null without CRF. */
    private readonly logitsRunner: OrtGraphRunner | null,
    readonly config: BertConfig,
    readonly heads: CeHead[],
    readonly params: Map<string, Float32Array>,
    readonly optimizer: HostAdamW,
  ) {}

  static async create(opts: TokenClassifierTrainerOptions): Promise<OrtTokenClassifierTrainer> {
    const sites = opts.dropout === false ? { hidden: false, attention: false, classifier: false } : dropoutSitesOf(dropoutProbabilities(opts.config))
    const config = onnxConfigOf(opts.config)
    const graph = tokenClassificationTrainGraph({ config, heads: opts.heads, dropout: sites, wordRowGrads: opts.wordRowGrads !== false, contribOps: opts.contribOps })
    const params = new Map<string, Float32Array>()
    const take = (name: string, size: number) => {
      const data = opts.params.get(name)
      if (!data || data.length !== size) throw new Error(`onnxruntime trainer: parameter ${name} ${data ? `has ${data.length} values, expected ${size}` : 'is missing'}`)
      params.set(name, data)
    }
    for (const p of graph.params) take(p.name, p.shape.reduce((a, b) => a * b, 1))
    const crfHeads = opts.heads.filter((h) => h.lossOnHost)
    for (const h of crfHeads) for (const [name, shape] of crfParamShapes(h.name, h.numLabels)) take(name, shape.reduce((a, b) => a * b, 1))
    const runner = await OrtGraphRunner.open(graph, opts)
    let logitsRunner: OrtGraphRunner | null = null
    try {
      if (crfHeads.length) logitsRunner = await OrtGraphRunner.open(tokenClassificationLogitsGraph({ config, heads: crfHeads, dropout: sites, contribOps: opts.contribOps }), opts)
    } catch (e) {
      await runner.dispose()
      throw e
    }
    const optimizer = new HostAdamW(params, opts.optimizer, { rowGradients: (graph.rowGrads ?? []).map((r) => r.param), resident: opts.residentParams })
    // The optimizer moved them into its memory: the caller's map names where they are now.
    for (const [name, data] of params) opts.params.set(name, data)
    return new OrtTokenClassifierTrainer(runner, logitsRunner, opts.config, opts.heads, params, optimizer)
  }

  /** Loss and gradients of one batch without an update (gradient checks). */
  async gradients(b: HostBatch, labels: Record<string, Int32Array>, seed: number): Promise<GraphRunResult> {
    const ort = this.runner.ort
    const crfHeads = this.heads.filter((h) => h.lossOnHost)
    const ceLabels = Object.fromEntries(Object.entries(labels).filter(([h]) => !crfHeads.some((c) => c.name === h)))
    const masks = maskFeeds(this.runner, this.config, b.batchSize, b.seqLen, seed)
    const feeds = { ...batchFeeds(ort, b, ceLabels), ...masks }
    const hostLoss: Array<{ head: string; loss: number; grads: Map<string, Float32Array> }> = []
    if (this.logitsRunner && crfHeads.length) {
      // Same masks as the training graph: both runs see the same dropped units.
      const out = await this.logitsRunner.outputs(this.params, { ...batchFeeds(ort, b, {}), ...masks })
      for (const h of crfHeads) {
        const y = labels[h.name]
        if (!y) throw new Error(`onnxruntime trainer: no labels for CRF head '${h.name}'`)
        const n = crfParamNames(h.name)
        const scores = { transitions: this.params.get(n.transitions)!, start: this.params.get(n.start)!, end: this.params.get(n.end)! }
        const r = crfBatchLoss(out[logitsOutput(h.name)].data as Float32Array, y, b.batchSize, b.seqLen, h.numLabels, scores)
        feeds[dlogitsInput(h.name)] = new ort.Tensor('float32', r.dLogits, [b.batchSize * b.seqLen, h.numLabels])
        const grads = new Map([
          [n.transitions, Float32Array.from(r.grads.transitions)],
          [n.start, Float32Array.from(r.grads.start)],
          [n.end, Float32Array.from(r.grads.end)],
        ])
        hostLoss.push({ head: h.name, loss: r.loss, grads })
      }
    }
    const r = await this.runner.run(this.params, feeds, this.optimizer.gradientBuffers)
    for (const h of hostLoss) {
      r.loss += h.loss
      r.terms[`loss.${h.head}`] = h.loss
      for (const [name, g] of h.grads) {
        r.grads.set(name, g)
        for (let i = 0; i < g.length; i++) r.gradNormSq += g[i] * g[i]
      }
    }
    return r
  }

  async step(b: HostBatch, labels: Record<string, Int32Array>, seed: number): Promise<TrainStepResult> {
    const r = await this.gradients(b, labels, seed)
    if (!Number.isFinite(r.loss)) return { loss: r.loss, lr: this.optimizer.currentLr(), gradNorm: NaN }
    const info = this.optimizer.applyGradients(r.grads, r.gradNormSq, { rows: r.rowGrads })
    return { loss: r.loss, ...info }
  }

  optimizerState(): OptimizerState {
    return this.optimizer.state()
  }

  async dispose(): Promise<void> {
    await this.runner.dispose()
    await this.logitsRunner?.dispose()
  }
}
