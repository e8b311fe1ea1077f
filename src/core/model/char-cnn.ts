// The character channel of the BERT encoder (issue 25): per word, character embeddings → 1-D
// convolution (width w, zero padding (w−1)/2, a Linear over the windows) → max over the word's
// characters, concatenated with its case/shape flags, times feature_scale (1/(F + flags): the
// term then moves at the embeddings' pace, see CharCnnConfig) → a Linear projection to the hidden size,
// added to the embeddings of the word's pieces (`pieces: 'all'`) or of its first piece only
// ('first') before the embedding LayerNorm. The character CNN and flags are the word tagger's
// (core/model/word-tagger.ts, one ONNX graph for both: core/onnx/char-cnn.ts); its character
// vocabulary (chars.txt, <pad> and <unk> first) is the word tagger's featurizer.
//
// Rows without characters ([CLS], [SEP], padding, and with 'first' every later piece) contribute
// exactly zero: the projection is multiplied by (char_ids[·, ·, 0] ≠ <pad>). The projection starts
// at zero, so a pretrained encoder given the channel computes what it did until it trains.
//
// No tfjs (the exporter and the tagger read it; config.json's part: ./char-cnn-config); the tfjs forward is in
// ./bert.ts.
//
// Parameters (HF names beside BertEmbeddings'; ours [in, out], on disk torch's [out, in]):
//   bert.embeddings.char_cnn.char_embeddings.weight [Vc, Dc]
//   bert.embeddings.char_cnn.conv.weight [w·Dc, F]  .conv.bias [F]
//   bert.embeddings.char_cnn.projection.weight [F + flags, H]  .projection.bias [H]

import { exampleWords, PAD_ID, SHAPE_FLAGS, shapeFlags, WordFeaturizer } from '../nlp/word-features'
import type { Example } from '../nlp/examples'
import { CHAR_CNN_DEFAULTS, defaultFeatureScale, type CharCnnConfig } from './char-cnn-config'

export * from './char-cnn-config'

/** The channel's sizes for a character vocabulary (`over` changes any default). */
export function charCnnConfig(vocab: WordFeaturizer, over: Partial<Omit<CharCnnConfig, 'charVocabSize' | 'shapeFlags'>> = {}): CharCnnConfig {
  const c: CharCnnConfig = { charVocabSize: vocab.chars.length, shapeFlags: SHAPE_FLAGS, ...CHAR_CNN_DEFAULTS, ...over }
  return { ...c, featureScale: over.featureScale ?? defaultFeatureScale(c) }
}

/** A character vocabulary learnt from the training words (no word list: BERT reads pieces). */
export function learnCharVocabulary(words: Iterable<string>): WordFeaturizer {
  return WordFeaturizer.learn(words, { maxSize: 2 })
}

/** The character vocabulary of chars.txt's lines. */
export function charVocabulary(chars: readonly string[]): WordFeaturizer {
  return new WordFeaturizer(['<pad>', '<unk>'], chars)
}

/** The channel's host inputs of one example: char ids [len, L] and shape flags [len, flags]. */
export interface PieceCharInputs {
  charIds: Int32Array
  shapeFlags: Float32Array
}

/**
 * The characters and flags of the word each piece of `ex` belongs to (`text` is the document the
 * example's offsets point into); rows of special tokens, and with 'first' later pieces, stay
 * all <pad> / zero, which the model reads as "no character input".
 */
export function pieceCharInputs(ex: Pick<Example, 'wordIds' | 'wordStarts' | 'offsets'>, text: string, vocab: WordFeaturizer, c: CharCnnConfig): PieceCharInputs {
  if (c.shapeFlags !== SHAPE_FLAGS) throw new Error(`char_cnn.shape_flags is ${c.shapeFlags}; the featurizer writes ${SHAPE_FLAGS}`)
  const n = ex.wordIds.length
  const L = c.maxChars
  const charIds = new Int32Array(n * L)
  const flags = new Float32Array(n * c.shapeFlags)
  const row = new Int32Array(L)
  const rowFlags = new Float32Array(c.shapeFlags)
  const { positions, texts } = exampleWords(ex, text)
  positions.forEach((p, k) => {
    row.fill(PAD_ID)
    let j = 0
    for (const ch of texts[k]) {
      if (j >= L) break
      row[j++] = vocab.charId(ch)
    }
    shapeFlags(texts[k], rowFlags, 0)
    for (let q = p; q < n && ex.wordIds[q] === ex.wordIds[p] && (q === p || !ex.wordStarts[q]); q++) {
      charIds.set(row, q * L)
      flags.set(rowFlags, q * c.shapeFlags)
      if (c.pieces === 'first') break
    }
  })
  return { charIds, shapeFlags: flags }
}

/** Adds the channel's inputs to examples made from `text` (training, devel or tagging windows). */
export function attachCharInputs<E extends Pick<Example, 'wordIds' | 'wordStarts' | 'offsets'>>(examples: E[], text: string, vocab: WordFeaturizer, c: CharCnnConfig): Array<E & PieceCharInputs> {
  return examples.map((ex) => Object.assign(ex, pieceCharInputs(ex, text, vocab, c)))
}
