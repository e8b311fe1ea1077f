// Inference engine of the word-level recurrent tagger on onnxruntime: the tagger's piece windows
// come with the text of their words (InferenceBatch.words); the rows' words run through the
// tagging graph (./recurrent: ONNX's LSTM operator, any length, one session), and the emissions go
// back to the words' first-piece positions, where the one tagging path reads them (other
// positions: 0).

import type * as Ort from 'onnxruntime-node'
import type { WordFeaturizer } from '../nlp/word-features'
import { charLmInputs, charLmStateDim, wordBatch, type WordTaggerConfig, type WordTaggerDims } from '../model/word-tagger'
import { OrtGraphRunner } from '../train/ort'
import type { InferenceBatch, InferenceEngine, InferenceResult, OrtEngineName } from './engine'
import { CHAR_LM_STATES_INPUT, int8LstmInputs, wordTaggerTaggingGraph } from './recurrent'
import { logitsOutput } from './training'
import { batchCharLmStates, charLmFeeds, charLmStatesOf } from './char-lm'

export interface WordEngineOptions {
  threads?: number
  ort?: typeof Ort
  /** onnxruntime's threads spin between operators (default off, as every tagging session: core/onnx/session). */
  spin?: boolean
  /**
   * With a character LM: keep each sentence's LM states and compute them once (the LM is frozen).
   * For a training run's devel tagging, the same sentences every epoch, where running the LM was
   * about half of an epoch's time; memory grows with the distinct sentences tagged.
   */
  cacheCharLmStates?: boolean
  /**
   * Run the BiLSTM with int8 weights (onnxruntime's DynamicQuantizeLSTM; a scale per gate column,
   * ./recurrent int8LstmInputs), quantized once from `params` on the first run: for a model that
   * no longer trains (an int8 folder whose quantization chose it).
   */
  int8Lstm?: boolean
}

/** The int8 BiLSTM's inputs of the tagging graph (int8LstmInputs) as onnxruntime tensors, by input name. */
export function int8LstmTensors(ort: typeof Ort, params: ReadonlyMap<string, Float32Array>, dims: WordTaggerDims): Record<string, Ort.Tensor> {
  return Object.fromEntries(int8LstmInputs(params, dims).map((q) => [q.name, new ort.Tensor(q.data instanceof Int8Array ? 'int8' : 'float32', q.data, q.dims)]))
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

  private readonly lmStates = new Map<string, Float32Array>()

  private get cachesLmStates(): boolean {
    return !!this.config.charLm && !!this.opts.cacheCharLmStates
  }

  private runner(): Promise<OrtGraphRunner> {
    this.session ??= OrtGraphRunner.open(wordTaggerTaggingGraph(this.config, this.heads, { lmStatesInput: this.cachesLmStates, int8Lstm: this.opts.int8Lstm }), { threads: this.opts.threads, ort: this.opts.ort, spin: this.opts.spin ?? false })
    return this.session
  }

  private int8LstmFeeds: Record<string, Ort.Tensor> | null = null

  private lstmFeeds(ort: typeof Ort): Record<string, Ort.Tensor> {
    if (!this.opts.int8Lstm) return {}
    this.int8LstmFeeds ??= int8LstmTensors(ort, this.params, this.config)
    return this.int8LstmFeeds
  }

  /** The LM states of these sentences [B, T, 2H_lm], those not seen before computed now (cacheCharLmStates). */
  private async cachedLmStates(sentences: readonly (readonly string[])[], T: number): Promise<Float32Array> {
    const keyOf = (words: readonly string[]) => words.join('\u0000')
    const missing = [...new Map(sentences.filter((w) => !this.lmStates.has(keyOf(w))).map((w) => [keyOf(w), w])).values()]
    if (missing.length) {
      const states = await charLmStatesOf(this.config.charLm!, this.params, missing, { threads: this.opts.threads, ort: this.opts.ort })
      missing.forEach((w, i) => this.lmStates.set(keyOf(w), states[i]))
    }
    return batchCharLmStates(sentences.map((w) => this.lmStates.get(keyOf(w))!), T, charLmStateDim(this.config))
  }

  async run(batch: InferenceBatch): Promise<InferenceResult> {
    const words = batch.words
    if (!words || words.length !== batch.batch) throw new Error('word tagger: the batch carries no word texts')
    const logits: Record<string, Float32Array> = Object.fromEntries(this.heads.map((h) => [h.name, new Float32Array(batch.batch * batch.seq * h.numLabels)]))
    const texts = words.map((w) => w.texts)
    const T = Math.max(1, ...texts.map((t) => t.length))
    const runner = await this.runner()
    const b = wordBatch(this.featurizer, this.config, texts, T)
    const ort = runner.ort
    // The LM's inputs only where the graph runs it (not in training steps, nor with cached states).
    const lm = !this.config.charLm
      ? {}
      : this.cachesLmStates
        ? { [CHAR_LM_STATES_INPUT]: new ort.Tensor('float32', await this.cachedLmStates(texts, T), [b.batchSize, T, charLmStateDim(this.config)]) }
        : charLmFeeds(ort, charLmInputs(this.config.charLm, texts, T), b.batchSize)
    const out = await runner.outputs(this.params as Map<string, Float32Array>, {
      ...lm,
      ...this.lstmFeeds(ort),
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
