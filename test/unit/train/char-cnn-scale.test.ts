// The character channel must not outgrow the embeddings it is added to before the LayerNorm.
// AdamW moves every weight by about lr a step; the projection reads F + flags features of size
// ~0.5 that every word shares in good part, so without feature_scale its output moved (F + flags)/2
// times faster than an embedding row: from zero it passed the piece embeddings (N(0, 0.02)) in a few
// steps at lr 1e-3, and in the NCBI + transfer-set run (batch 16, 3 500 steps) every piece came out
// of the LayerNorm as nearly the same vector and the encoder collapsed to tagging nothing.
import * as tf from '@tensorflow/tfjs-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { BertTokenClassifier, charCnnEmbedding, makeBertConfig } from '@core/model/bert'
import { charCnnFromHf, charCnnToHf, learnCharVocabulary } from '@core/model/char-cnn'
import { buildLabelMap } from '@core/nlp/bio'
import { WordPieceTokenizer } from '@core/nlp/tokenizer'
import { collate } from '@core/train/batching'
import { train, trainingExamples } from '@core/train/loop'
import { syntheticDocs, syntheticVocab } from './synthetic'
import { useCpuBackend } from './tfSetup'

beforeAll(async () => {
  await useCpuBackend()
})

/** rms over the rows that read characters of the channel's term [N, H] on `docs`, and of the word embeddings. */
function scales(model: BertTokenClassifier, tokenizer: WordPieceTokenizer, docs: ReturnType<typeof syntheticDocs>): { chars: number; words: number } {
  const examples = trainingExamples(model, docs, tokenizer, buildLabelMap(['Disease']), { maxLength: 32, sentenceLevel: true })
  const b = collate(examples, examples.map((_, i) => i))
  const c = b.chars!
  const vars = model.variables()
  return tf.tidy(() => {
    const term = charCnnEmbedding((n) => vars.get(n)!, model.config.charCnn!, tf.tensor3d(c.charIds, [b.batchSize, b.seqLen, c.maxChars], 'int32'), tf.tensor3d(c.shapeFlags, [b.batchSize, b.seqLen, c.flags])) // [N, H]
    const rowsWithChars = Array.from({ length: b.batchSize * b.seqLen }, (_, r) => r).filter((r) => c.charIds[r * c.maxChars] !== 0)
    const rows = tf.gather(term, rowsWithChars) // [n, H]
    const rms = (x: tf.Tensor) => Math.sqrt(tf.mean(tf.square(x)).dataSync()[0])
    return { chars: rms(rows), words: rms(vars.get('bert.embeddings.word_embeddings.weight')!) }
  })
}

describe('character channel scale', () => {
  it('a new channel stays below the word embeddings after 20 steps at lr 1e-3 (both trainers)', async () => {
    const docs = syntheticDocs(24, 5, 3)
    const chars = learnCharVocabulary(docs.flatMap((d) => d.text.split(/\s+/)))
    const tokenizer = new WordPieceTokenizer(syntheticVocab(), { lowercase: true })
    for (const trainer of ['onnxruntime', 'tfjs'] as const) {
      const config = makeBertConfig({ vocabSize: syntheticVocab().length, hiddenSize: 32, numHiddenLayers: 1, numAttentionHeads: 2, intermediateSize: 64, maxPositionEmbeddings: 64 })
      const model = BertTokenClassifier.random(config, 3, { default: ['O', 'B-Disease', 'I-Disease'] })
      try {
        model.addCharCnn(chars, {}, 3)
        const cc = model.config.charCnn!
        expect(cc.featureScale).toBeCloseTo(1 / (cc.charFilters + cc.shapeFlags), 12)
        await train({ model, tokenizer, train: docs, epochs: 20, maxSteps: 20, batchSize: 8, lr: 1e-3, warmupRatio: 0, maxLength: 32, seed: 2, trainer, threads: 1 })
        const s = scales(model, tokenizer, docs)
        // Unscaled, the term's rms was ~0.2 here, ten times the word embeddings' 0.02.
        expect(s.chars, trainer).toBeLessThan(s.words)
      } finally {
        model.dispose()
      }
    }
  }, 120_000)

  it('config.json keeps feature_scale; a channel saved without it reads with 1', () => {
    const base = { vocab_size: 10, dim: 4, filters: 6, width: 3, max_chars: 5, shape_flags: 4, pieces: 'all' }
    expect(charCnnFromHf(base)!.featureScale).toBeUndefined()
    const c = charCnnFromHf({ ...base, feature_scale: 0.1 })!
    expect(c.featureScale).toBe(0.1)
    expect(charCnnToHf(c).feature_scale).toBe(0.1)
    expect(() => charCnnFromHf({ ...base, feature_scale: -1 })).toThrow(/feature_scale/)
  })
})
