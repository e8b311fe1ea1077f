// Training of the word-level recurrent tagger (core/model/word-tagger.ts) on onnxruntime: per
// step, one run of the training graph of the batch's length bucket (emissions, CRF loss and every
// gradient, ../onnx/recurrent), then Adam (HostAdamW) updates the parameters in place. A bucket's
// graph is built and opened on first use and kept (and shared with later trainers in the process).

import type * as Ort from 'onnxruntime-node'
import type { WordBatch, WordTaggerConfig } from '../model/word-tagger'
import { DropoutArena, Rng } from '../rng'
import { CHAR_LM_STATES_INPUT, WORD_TAGGER_PARAMS, wordTaggerTrainGraph } from '../onnx/recurrent'
import { charLmStateDim, wordTaggerInputDim } from '../model/word-tagger'
import { HostAdamW, type AdamWOptions, type OptimizerState } from './optimizer'
import { OrtGraphRunner, type GraphRunResult, type OrtSessionOptions } from './ort'

export interface WordTrainerOptions extends OrtSessionOptions {
  config: WordTaggerConfig
  heads: Array<{ name: string; numLabels: number }>
  /** Every parameter of wordTaggerParamShapes; its entries become the arrays the trainer updates in place (HostAdamW moves them into its memory): read them through the map. */
  params: Map<string, Float32Array>
  optimizer: AdamWOptions
  /** Dropout on (training) or off (gradient checks). Default on. */
  dropout?: boolean
}

export class OrtWordTaggerTrainer {
  private readonly buckets = new Map<number, Promise<OrtGraphRunner>>()
  private readonly masks = new DropoutArena()
  readonly optimizer: HostAdamW

  constructor(readonly opts: WordTrainerOptions) {
    this.optimizer = new HostAdamW(opts.params, opts.optimizer, { rowGradients: [WORD_TAGGER_PARAMS.wordEmbeddings] })
  }

  get params(): Map<string, Float32Array> {
    return this.opts.params
  }

  /** Masks are fed only when they drop something (a model with dropout 0 trains without them). */
  private get dropout(): boolean {
    return this.opts.dropout !== false && this.opts.config.dropout > 0
  }

  private graph(steps: number): Promise<OrtGraphRunner> {
    let have = this.buckets.get(steps)
    if (!have) {
      // Shared: the next trainer of a model with these sizes and heads (a retraining round) finds
      // the bucket's session open (train/ort.ts).
      have = OrtGraphRunner.open(wordTaggerTrainGraph({ dims: this.opts.config, steps, heads: this.opts.heads, dropout: this.dropout }), { ...this.opts, shareSession: true })
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
    if (c.charLm) {
      if (!b.charLmStates) throw new Error('word tagger trainer: the batch has no character LM states')
      feeds[CHAR_LM_STATES_INPUT] = new ort.Tensor('float32', b.charLmStates, [B, T, charLmStateDim(c)])
    }
    if (this.dropout) {
      const rng = new Rng(seed)
      const din = wordTaggerInputDim(c)
      // Drawn where the graph reads them (valid until the next step's).
      const [input, output] = this.masks.views([B * T * din, B * T * 2 * c.lstmHidden])
      feeds['dropout.input'] = new ort.Tensor('float32', rng.fillDropoutMask(input, c.dropout), [B * T, din])
      feeds['dropout.output'] = new ort.Tensor('float32', rng.fillDropoutMask(output, c.dropout), [B * T, 2 * c.lstmHidden])
    }
    return feeds
  }

  /** CRF loss (mean over labelled words, summed over heads) and every parameter's gradient. */
  async gradients(b: WordBatch, labels: Record<string, Int32Array>, seed: number): Promise<GraphRunResult> {
    const train = await this.graph(b.steps)
    const feeds = this.feeds(train.ort, b, seed)
    for (const h of this.opts.heads) {
      const y = labels[h.name]
      if (!y) throw new Error(`word tagger trainer: no labels for head '${h.name}'`)
      feeds[`labels.${h.name}`] = new train.ort.Tensor('int64', BigInt64Array.from(y, (v) => BigInt(v)), [b.batchSize, b.steps])
    }
    return train.run(this.params, feeds, this.optimizer.gradientBuffers)
  }

  async step(b: WordBatch, labels: Record<string, Int32Array>, seed: number): Promise<{ loss: number; lr: number; gradNorm: number }> {
    const r = await this.gradients(b, labels, seed)
    if (!Number.isFinite(r.loss)) return { loss: r.loss, lr: this.optimizer.currentLr(), gradNorm: NaN }
    return { loss: r.loss, ...this.optimizer.applyGradients(r.grads, r.gradNormSq, { rows: r.rowGrads }) }
  }

  optimizerState(): OptimizerState {
    return this.optimizer.state()
  }

  async dispose(): Promise<void> {
    for (const p of this.buckets.values()) await (await p).dispose()
    this.buckets.clear()
  }
}
