// Inference engine of the word-level recurrent tagger on onnxruntime: the tagger's piece windows
// come with the text of their words (InferenceBatch.words); the rows' words run through the
// tagging graph (./recurrent: ONNX's LSTM operator, any length, one session), and the emissions go
// back to the words' first-piece positions, where the one tagging path reads them (other
// positions: 0).

import type * as Ort from 'onnxruntime-node'
import type { WordFeaturizer } from '../nlp/word-features'
import { wordBatch, type CharLmInputs, type WordTaggerConfig } from '../model/word-tagger'
import { OrtGraphRunner } from '../train/ort'
import type { InferenceBatch, InferenceEngine, InferenceResult, OrtEngineName } from './engine'
import { wordTaggerTaggingGraph } from './recurrent'
import { logitsOutput } from './training'
import { CHAR_LM_INPUTS } from './char-lm'

/** The character LM's inputs of a batch (core/model/word-tagger.ts charLmInputs) as tensors. */
export function charLmFeeds(ort: typeof Ort, lm: CharLmInputs, batch: number): Record<string, Ort.Tensor> {
  return {
    [CHAR_LM_INPUTS.ids]: new ort.Tensor('int64', lm.ids, [2, batch, lm.steps]),
    [CHAR_LM_INPUTS.lengths]: new ort.Tensor('int32', lm.lengths, [batch]),
    [CHAR_LM_INPUTS.positions]: new ort.Tensor('int64', lm.positions, [2, lm.positions.length / 2]),
  }
}

export interface WordEngineOptions {
  threads?: number
  ort?: typeof Ort
  /** onnxruntime's threads spin between operators (default off, as every tagging session: core/onnx/session). */
  spin?: boolean
}

export class WordTaggerEngine implements InferenceEngine {
  engine: OrtEngineName = 'onnxruntime-cpu'
  reason = 'onnxruntime: word-level recurrent tagger'
  warnings: string[] = []
  readonly needsWords = true
  private session: Promise<OrtGraphRunner> | null = null

  constructor(
    readonly config: WordTaggerConfig,
    readonly featurizer: WordFeaturizer,
    readonly heads: ReadonlyArray<{ name: string; numLabels: number }>,
    /** Read on every run: a model in training is tagged with its weights as they are now. */
    readonly params: ReadonlyMap<string, Float32Array>,
    readonly opts: WordEngineOptions = {},
    readonly files: string[] = [],
  ) {}

  get parameterCount(): number {
    let n = 0
    for (const p of this.params.values()) n += p.length
    return n
  }

  private runner(): Promise<OrtGraphRunner> {
    this.session ??= OrtGraphRunner.open(wordTaggerTaggingGraph(this.config, this.heads), { threads: this.opts.threads, ort: this.opts.ort, spin: this.opts.spin ?? false })
    return this.session
  }

  async run(batch: InferenceBatch): Promise<InferenceResult> {
    const words = batch.words
    if (!words || words.length !== batch.batch) throw new Error('word tagger: the batch carries no word texts')
    const logits: Record<string, Float32Array> = Object.fromEntries(this.heads.map((h) => [h.name, new Float32Array(batch.batch * batch.seq * h.numLabels)]))
    const T = Math.max(1, ...words.map((w) => w.texts.length))
    const runner = await this.runner()
    const b = wordBatch(this.featurizer, this.config, words.map((w) => w.texts), T)
    const ort = runner.ort
    const out = await runner.outputs(this.params as Map<string, Float32Array>, {
      ...(b.charLm ? charLmFeeds(ort, b.charLm, b.batchSize) : {}),
      word_ids: new ort.Tensor('int64', b.wordIds, [b.batchSize, T]),
      char_ids: new ort.Tensor('int64', b.charIds, [b.batchSize, T, this.config.maxChars]),
      shape_flags: new ort.Tensor('float32', b.shapes, [b.batchSize, T, this.config.shapeFlags]),
      // A window without words still runs (its row is never read): ONNX's LSTM wants lengths ≥ 1.
      sequence_lens: new ort.Tensor('int32', Int32Array.from(b.lengths, (n) => Math.max(1, n)), [b.batchSize]),
    })
    for (const h of this.heads) {
      const C = h.numLabels
      const em = out[logitsOutput(h.name)].data as Float32Array // [B·T, C]
      const dst = logits[h.name]
      words.forEach((w, r) => {
        w.positions.forEach((p, t) => dst.set(em.subarray((r * T + t) * C, (r * T + t + 1) * C), (r * batch.seq + p) * C))
      })
    }
    return { logits }
  }

  async dispose(): Promise<void> {
    const s = this.session
    this.session = null
    if (s) await (await s).dispose()
  }
}
