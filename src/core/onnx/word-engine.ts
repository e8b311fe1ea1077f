// Inference engine of the word-level recurrent tagger on onnxruntime: the tagger's piece windows
// come with the text of their words (InferenceBatch.words); each row's words run through the
// emissions graph of their length bucket (./recurrent, dropout off), and the emissions go back to
// the words' first-piece positions, where the one tagging path reads them (other positions: 0).

import type * as Ort from 'onnxruntime-node'
import type { WordFeaturizer } from '../nlp/word-features'
import { wordBatch, wordBucket, type WordTaggerConfig } from '../model/word-tagger'
import { OrtGraphRunner } from '../train/ort'
import type { InferenceBatch, InferenceEngine, InferenceResult, OrtEngineName } from './engine'
import { wordTaggerLogitsGraph } from './recurrent'
import { logitsOutput } from './training'

export interface WordEngineOptions {
  threads?: number
  ort?: typeof Ort
}

export class WordTaggerEngine implements InferenceEngine {
  engine: OrtEngineName = 'onnxruntime-cpu'
  reason = 'onnxruntime: word-level recurrent tagger'
  warnings: string[] = []
  readonly needsWords = true
  private readonly buckets = new Map<number, Promise<OrtGraphRunner>>()

  constructor(
    readonly config: WordTaggerConfig,
    readonly featurizer: WordFeaturizer,
    readonly heads: ReadonlyArray<{ name: string; numLabels: number }>,
    /** Read on every run: a model in training is tagged with its weights as they are now. */
    readonly params: ReadonlyMap<string, Float32Array>,
    readonly opts: WordEngineOptions = {},
    readonly files: string[] = [],
  ) {}

  private runner(steps: number): Promise<OrtGraphRunner> {
    let have = this.buckets.get(steps)
    if (!have) {
      have = OrtGraphRunner.open(wordTaggerLogitsGraph({ dims: this.config, steps, heads: [...this.heads], dropout: false }), { threads: this.opts.threads, ort: this.opts.ort })
      this.buckets.set(steps, have)
    }
    return have
  }

  async run(batch: InferenceBatch): Promise<InferenceResult> {
    const words = batch.words
    if (!words || words.length !== batch.batch) throw new Error('word tagger: the batch carries no word texts')
    const logits: Record<string, Float32Array> = Object.fromEntries(this.heads.map((h) => [h.name, new Float32Array(batch.batch * batch.seq * h.numLabels)]))
    const longest = Math.max(1, ...words.map((w) => w.texts.length))
    const T = wordBucket(longest)
    const runner = await this.runner(T)
    const b = wordBatch(this.featurizer, this.config, words.map((w) => w.texts), T)
    const ort = runner.ort
    const out = await runner.outputs(this.params as Map<string, Float32Array>, {
      word_ids: new ort.Tensor('int64', b.wordIds, [b.batchSize, T]),
      char_ids: new ort.Tensor('int64', b.charIds, [b.batchSize, T, this.config.maxChars]),
      shape_flags: new ort.Tensor('float32', b.shapes, [b.batchSize, T, this.config.shapeFlags]),
      reverse_index: new ort.Tensor('int64', b.reverseIndex, [b.batchSize * T]),
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
    for (const p of this.buckets.values()) await (await p).dispose()
    this.buckets.clear()
  }
}
