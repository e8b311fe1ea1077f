// Training of the word-level recurrent tagger (core/model/word-tagger.ts) on onnxruntime: per
// step, the emissions graph of the batch's length bucket runs, the CRF loss and its gradient are
// computed on the host (core/model/crf), and the training graph of the same bucket backpropagates
// them; Adam (HostAdamW) updates the parameters in place. Both graphs of a bucket are built and
// opened on first use and kept.

import type * as Ort from 'onnxruntime-node'
import { crfBatchLoss, crfParamNames } from '../model/crf'
import type { WordBatch, WordTaggerConfig } from '../model/word-tagger'
import { Rng } from '../rng'
import { dlogitsInput, logitsOutput } from '../onnx/training'
import { wordTaggerLogitsGraph, wordTaggerTrainGraph } from '../onnx/recurrent'
import { wordTaggerInputDim } from '../model/word-tagger'
import { HostAdamW, type AdamWOptions, type OptimizerState } from './optimizer'
import { OrtGraphRunner, type GraphRunResult, type OrtSessionOptions } from './ort'

export interface WordTrainerOptions extends OrtSessionOptions {
  config: WordTaggerConfig
  heads: Array<{ name: string; numLabels: number }>
  /** Every parameter of wordTaggerParamShapes; updated in place. */
  params: Map<string, Float32Array>
  optimizer: AdamWOptions
  /** Dropout on (training) or off (gradient checks). Default on. */
  dropout?: boolean
}

interface BucketGraphs {
  train: OrtGraphRunner
  logits: OrtGraphRunner
}

export class OrtWordTaggerTrainer {
  private readonly buckets = new Map<number, Promise<BucketGraphs>>()
  readonly optimizer: HostAdamW

  constructor(readonly opts: WordTrainerOptions) {
    this.optimizer = new HostAdamW(opts.params, opts.optimizer)
  }

  get params(): Map<string, Float32Array> {
    return this.opts.params
  }

  private graphs(steps: number): Promise<BucketGraphs> {
    let have = this.buckets.get(steps)
    if (!have) {
      const o = { dims: this.opts.config, steps, heads: this.opts.heads, dropout: this.opts.dropout !== false }
      have = (async () => {
        const train = await OrtGraphRunner.open(wordTaggerTrainGraph(o), this.opts)
        const logits = await OrtGraphRunner.open(wordTaggerLogitsGraph(o), { ...this.opts, ort: train.ort })
        return { train, logits }
      })()
      this.buckets.set(steps, have)
    }
    return have
  }

  /** The batch's input tensors and, with dropout on, its masks drawn from `seed`. */
  private feeds(ort: typeof Ort, b: WordBatch, seed: number): Record<string, Ort.Tensor> {
    const c = this.opts.config
    const B = b.batchSize
    const T = b.steps
    const feeds: Record<string, Ort.Tensor> = {
      word_ids: new ort.Tensor('int64', b.wordIds, [B, T]),
      char_ids: new ort.Tensor('int64', b.charIds, [B, T, c.maxChars]),
      shape_flags: new ort.Tensor('float32', b.shapes, [B, T, c.shapeFlags]),
      reverse_index: new ort.Tensor('int64', b.reverseIndex, [B * T]),
    }
    if (this.opts.dropout !== false && c.dropout > 0) {
      const rng = new Rng(seed)
      const din = wordTaggerInputDim(c)
      feeds['dropout.input'] = new ort.Tensor('float32', rng.fillDropoutMask(new Float32Array(B * T * din), c.dropout), [B * T, din])
      feeds['dropout.output'] = new ort.Tensor('float32', rng.fillDropoutMask(new Float32Array(B * T * 2 * c.lstmHidden), c.dropout), [B * T, 2 * c.lstmHidden])
    }
    return feeds
  }

  /** Per-head emissions [B·T, C] of a batch (dropout as configured, same masks for a seed). */
  async emissions(b: WordBatch, seed: number): Promise<Record<string, Float32Array>> {
    const { logits } = await this.graphs(b.steps)
    const out = await logits.outputs(this.params, this.feeds(logits.ort, b, seed))
    return Object.fromEntries(this.opts.heads.map((h) => [h.name, out[logitsOutput(h.name)].data as Float32Array]))
  }

  /** CRF loss (mean over labelled words, summed over heads) and every parameter's gradient. */
  async gradients(b: WordBatch, labels: Record<string, Int32Array>, seed: number): Promise<GraphRunResult> {
    const { train, logits } = await this.graphs(b.steps)
    const feeds = this.feeds(train.ort, b, seed)
    const emitted = await logits.outputs(this.params, feeds)
    let loss = 0
    const terms: Record<string, number> = {}
    const crfGrads = new Map<string, Float32Array>()
    for (const h of this.opts.heads) {
      const y = labels[h.name]
      if (!y) throw new Error(`word tagger trainer: no labels for head '${h.name}'`)
      const n = crfParamNames(h.name)
      const scores = { transitions: this.params.get(n.transitions)!, start: this.params.get(n.start)!, end: this.params.get(n.end)! }
      const r = crfBatchLoss(emitted[logitsOutput(h.name)].data as Float32Array, y, b.batchSize, b.steps, h.numLabels, scores)
      feeds[dlogitsInput(h.name)] = new train.ort.Tensor('float32', r.dLogits, [b.batchSize * b.steps, h.numLabels])
      loss += r.loss
      terms[`loss.${h.name}`] = r.loss
      crfGrads.set(n.transitions, Float32Array.from(r.grads.transitions))
      crfGrads.set(n.start, Float32Array.from(r.grads.start))
      crfGrads.set(n.end, Float32Array.from(r.grads.end))
    }
    const r = await train.run(this.params, feeds)
    r.loss = loss
    r.terms = terms
    for (const [name, g] of crfGrads) {
      r.grads.set(name, g)
      for (let i = 0; i < g.length; i++) r.gradNormSq += g[i] * g[i]
    }
    return r
  }

  async step(b: WordBatch, labels: Record<string, Int32Array>, seed: number): Promise<{ loss: number; lr: number; gradNorm: number }> {
    const r = await this.gradients(b, labels, seed)
    if (!Number.isFinite(r.loss)) return { loss: r.loss, lr: this.optimizer.currentLr(), gradNorm: NaN }
    return { loss: r.loss, ...this.optimizer.applyGradients(r.grads, r.gradNormSq) }
  }

  optimizerState(): OptimizerState {
    return this.optimizer.state()
  }

  async dispose(): Promise<void> {
    for (const p of this.buckets.values()) {
      const g = await p
      await g.train.dispose()
      await g.logits.dispose()
    }
    this.buckets.clear()
  }
}
