// The word-level recurrent tagger: per word, a lower-cased word embedding, a character CNN (max
// over the word's characters) and case/shape flags → dropout → BiLSTM → dropout → one linear
// layer per head → CRF (Lample et al. 2016 / Ma & Hovy 2016). Measured on this machine's CPU it
// learns far more from a few thousand labelled sentences than a from-scratch transformer over
// word pieces (docs/ACCURACY.md); it is the project's from-scratch teacher.
//
// Parameters (tfjs layout, [in, out]; the LSTM's two directions stacked on the first axis, forward
// then backward; gates i, f, g, o as PyTorch):
//   embeddings.word_embeddings.weight [Vw, Dw]       char_cnn.char_embeddings.weight [Vc, Dc]
//   char_cnn.conv.weight [w·Dc, F]  char_cnn.conv.bias [F]
//   lstm.weight_ih [2, Din, 4H]  lstm.weight_hh [2, H, 4H]  lstm.bias [2, 4H]
//   classifier.weight [2H, C]  classifier.bias [C]  (classifiers.<head>.* for named heads)
//   crf.transitions [C, C]  crf.start_transitions [C]  crf.end_transitions [C]  (crfs.<head>.*)

import { crfParamShapes } from './crf'
import { Rng } from '../rng'
import { wordTaggerInputDim, type WordTaggerDims } from '../onnx/recurrent'
import { SHAPE_FLAGS, type WordFeaturizer } from '../nlp/word-features'

export const WORD_TAGGER_MODEL_TYPE = 'fastbioner-word-tagger'

/** config.json of a word tagger. */
export interface WordTaggerConfig extends WordTaggerDims {
  modelType: typeof WORD_TAGGER_MODEL_TYPE
  /** Dropout on the input features and on the BiLSTM output. */
  dropout: number
  /** Probability of replacing a word seen once in training by <unk> while training. */
  singletonUnk: number
}

export const WORD_TAGGER_DEFAULTS = {
  wordDim: 100,
  charDim: 30,
  charFilters: 50,
  charWidth: 3,
  maxChars: 25,
  lstmHidden: 200,
  dropout: 0.5,
  singletonUnk: 0.5,
} as const

export function wordTaggerConfig(f: WordFeaturizer, over: Partial<WordTaggerConfig> = {}): WordTaggerConfig {
  return {
    modelType: WORD_TAGGER_MODEL_TYPE,
    wordVocabSize: f.words.length,
    charVocabSize: f.chars.length,
    shapeFlags: SHAPE_FLAGS,
    ...WORD_TAGGER_DEFAULTS,
    ...over,
  }
}

const headPrefix = (head: string): string => (head === 'default' ? 'classifier' : `classifiers.${head}`)

/** Parameter names and shapes of a word tagger with these heads (CRF scores included). */
export function wordTaggerParamShapes(c: WordTaggerConfig, heads: ReadonlyArray<{ name: string; numLabels: number }>): Map<string, number[]> {
  const H = c.lstmHidden
  const shapes = new Map<string, number[]>([
    ['embeddings.word_embeddings.weight', [c.wordVocabSize, c.wordDim]],
    ['char_cnn.char_embeddings.weight', [c.charVocabSize, c.charDim]],
    ['char_cnn.conv.weight', [c.charWidth * c.charDim, c.charFilters]],
    ['char_cnn.conv.bias', [c.charFilters]],
    ['lstm.weight_ih', [2, wordTaggerInputDim(c), 4 * H]],
    ['lstm.weight_hh', [2, H, 4 * H]],
    ['lstm.bias', [2, 4 * H]],
  ])
  for (const h of heads) {
    shapes.set(`${headPrefix(h.name)}.weight`, [2 * H, h.numLabels])
    shapes.set(`${headPrefix(h.name)}.bias`, [h.numLabels])
    for (const [name, shape] of crfParamShapes(h.name, h.numLabels)) shapes.set(name, shape)
  }
  return shapes
}

/**
 * PyTorch's default initialisation of the same modules: embeddings N(0, 1), Conv1d / Linear /
 * LSTM uniform ±1/√fan_in (the LSTM's two biases summed), CRF scores zero.
 */
export function initWordTaggerParams(c: WordTaggerConfig, heads: ReadonlyArray<{ name: string; numLabels: number }>, seed: number): Map<string, Float32Array> {
  const rng = new Rng(seed)
  const uniform = (size: number, bound: number) => {
    const out = new Float32Array(size)
    for (let i = 0; i < size; i++) out[i] = (rng.next() * 2 - 1) * bound
    return out
  }
  const params = new Map<string, Float32Array>()
  for (const [name, shape] of wordTaggerParamShapes(c, heads)) {
    const size = shape.reduce((a, b) => a * b, 1)
    let value: Float32Array
    if (name.endsWith('embeddings.weight')) value = rng.normalArray(size, 1)
    else if (name.startsWith('char_cnn.conv.')) value = uniform(size, 1 / Math.sqrt(c.charWidth * c.charDim))
    else if (name === 'lstm.bias') {
      const a = uniform(size, 1 / Math.sqrt(c.lstmHidden))
      const b = uniform(size, 1 / Math.sqrt(c.lstmHidden))
      value = a.map((v, i) => v + b[i])
    } else if (name.startsWith('lstm.')) value = uniform(size, 1 / Math.sqrt(c.lstmHidden))
    else if (name.startsWith('classifier')) value = uniform(size, 1 / Math.sqrt(2 * c.lstmHidden))
    else value = new Float32Array(size) // CRF scores
    params.set(name, value)
  }
  return params
}

/** A batch of sentences at word level, padded to `steps` words. */
export interface WordBatch {
  batchSize: number
  /** Padded word positions (the graph's bucket). */
  steps: number
  /** [B, T] real word count of each row. */
  lengths: number[]
  wordIds: BigInt64Array
  /** [B, T, maxChars] */
  charIds: BigInt64Array
  /** [B, T, SHAPE_FLAGS] */
  shapes: Float32Array
  /** [B·T]: row b·T + t holds b·T + (len_b − 1 − t) for t < len_b, else itself. */
  reverseIndex: BigInt64Array
  /** Real words in the batch. */
  numWords: number
}

/** The bucket a sentence of n words runs in: the next multiple of 8 (fewer graphs, little padding). */
export function wordBucket(n: number): number {
  return Math.max(8, Math.ceil(n / 8) * 8)
}

/**
 * Features of `sentences` (each a list of words) padded to `steps` words. `unk` (training) replaces
 * each singleton word by <unk> with the config's probability.
 */
export function wordBatch(f: WordFeaturizer, c: WordTaggerConfig, sentences: readonly (readonly string[])[], steps: number, unk?: Rng): WordBatch {
  const B = sentences.length
  const T = steps
  const wordIds = new BigInt64Array(B * T)
  const charIds = new BigInt64Array(B * T * c.maxChars)
  const shapes = new Float32Array(B * T * SHAPE_FLAGS)
  const reverseIndex = new BigInt64Array(B * T)
  const out = { wordIds, charIds, shapes }
  let numWords = 0
  const lengths = sentences.map((words, b) => {
    const n = words.length
    if (n > T) throw new Error(`word batch: a sentence of ${n} words does not fit ${T} steps`)
    for (let t = 0; t < T; t++) reverseIndex[b * T + t] = BigInt(b * T + (t < n ? n - 1 - t : t))
    words.forEach((w, t) => {
      f.encodeWord(w, b * T + t, c.maxChars, out)
      if (unk && f.singletons.has(Number(wordIds[b * T + t])) && unk.next() < c.singletonUnk) wordIds[b * T + t] = 1n
    })
    numWords += n
    return n
  })
  return { batchSize: B, steps: T, lengths, wordIds, charIds, shapes, reverseIndex, numWords }
}
