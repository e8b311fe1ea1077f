// The character channel of the BERT encoder (issue 25): per word, character embeddings → 1-D
// convolution (width w, zero padding (w−1)/2, a Linear over the windows) → max over the word's
// characters, concatenated with its case/shape flags, → a Linear projection to the hidden size,
// added to the embeddings of the word's pieces (`pieces: 'all'`) or of its first piece only
// ('first') before the embedding LayerNorm. The character CNN and flags are the word tagger's
// (core/model/word-tagger.ts, one ONNX graph for both: core/onnx/char-cnn.ts); its character
// vocabulary (chars.txt, <pad> and <unk> first) is the word tagger's featurizer.
//
// Rows without characters ([CLS], [SEP], padding, and with 'first' every later piece) contribute
// exactly zero: the projection is multiplied by (char_ids[·, ·, 0] ≠ <pad>). The projection starts
// at zero, so a pretrained encoder given the channel computes what it did until it trains.
//
// Plain data, no tfjs (config.ts, the exporter and the tagger read it); the tfjs forward is in
// ./bert.ts.
//
// Parameters (HF names beside BertEmbeddings'; ours [in, out], on disk torch's [out, in]):
//   bert.embeddings.char_cnn.char_embeddings.weight [Vc, Dc]
//   bert.embeddings.char_cnn.conv.weight [w·Dc, F]  .conv.bias [F]
//   bert.embeddings.char_cnn.projection.weight [F + flags, H]  .projection.bias [H]

import { exampleWords, PAD_ID, SHAPE_FLAGS, shapeFlags, WordFeaturizer } from '../nlp/word-features'
import type { Example } from '../nlp/examples'
import type { Rng } from '../rng'

/** Sizes of a character CNN (the word tagger's names). */
export interface CharCnnDims {
  charVocabSize: number
  charDim: number
  charFilters: number
  /** Odd convolution width. */
  charWidth: number
  /** Characters kept per word (longer words are cut). */
  maxChars: number
  /** Case/shape flags per word. */
  shapeFlags: number
}

/** Which pieces of a word receive its character vector. */
export type CharPieces = 'all' | 'first'

/** config.json `char_cnn` of a BERT encoder. */
export interface CharCnnConfig extends CharCnnDims {
  pieces: CharPieces
}

export const CHAR_CNN_DEFAULTS = { charDim: 30, charFilters: 50, charWidth: 3, maxChars: 20, pieces: 'all' as CharPieces }

/** The channel's sizes for a character vocabulary (`over` changes any default). */
export function charCnnConfig(vocab: WordFeaturizer, over: Partial<Omit<CharCnnConfig, 'charVocabSize' | 'shapeFlags'>> = {}): CharCnnConfig {
  return { charVocabSize: vocab.chars.length, shapeFlags: SHAPE_FLAGS, ...CHAR_CNN_DEFAULTS, ...over }
}

export function charCnnParamNames(prefix = 'bert.'): { embeddings: string; conv: string; projection: string } {
  const base = `${prefix}embeddings.char_cnn`
  return { embeddings: `${base}.char_embeddings.weight`, conv: `${base}.conv`, projection: `${base}.projection` }
}

/** Parameter shapes in our layout ([in, out] for the conv and projection). */
export function charCnnParamShapes(c: CharCnnConfig, hiddenSize: number, prefix = 'bert.'): Map<string, number[]> {
  const n = charCnnParamNames(prefix)
  return new Map([
    [n.embeddings, [c.charVocabSize, c.charDim]],
    [`${n.conv}.weight`, [c.charWidth * c.charDim, c.charFilters]],
    [`${n.conv}.bias`, [c.charFilters]],
    [`${n.projection}.weight`, [c.charFilters + c.shapeFlags, hiddenSize]],
    [`${n.projection}.bias`, [hiddenSize]],
  ])
}

/** True for the channel's Linear weights (stored [out, in] like every HF Linear). */
export function isCharCnnLinearWeight(name: string): boolean {
  return /embeddings\.char_cnn\.(?:conv|projection)\.weight$/.test(name)
}

const LIMITS: Array<[keyof CharCnnDims, string, number]> = [
  ['charVocabSize', 'vocab_size', 1e6],
  ['charDim', 'dim', 4096],
  ['charFilters', 'filters', 4096],
  ['charWidth', 'width', 31],
  ['maxChars', 'max_chars', 1000],
  ['shapeFlags', 'shape_flags', SHAPE_FLAGS],
]

export function validateCharCnn(c: CharCnnConfig): void {
  for (const [key, name, max] of LIMITS) {
    const v = c[key]
    if (!Number.isInteger(v) || v < (key === 'shapeFlags' ? 0 : 1) || v > max) throw new Error(`BERT config: char_cnn.${name} must be an integer up to ${max}, got ${v}`)
  }
  if (c.shapeFlags !== SHAPE_FLAGS) throw new Error(`BERT config: char_cnn.shape_flags must be ${SHAPE_FLAGS}, got ${c.shapeFlags}`)
  if (c.charWidth % 2 !== 1) throw new Error(`BERT config: char_cnn.width must be odd, got ${c.charWidth}`)
  if (c.charVocabSize < 2) throw new Error(`BERT config: char_cnn.vocab_size must count <pad> and <unk>, got ${c.charVocabSize}`)
  if (c.pieces !== 'all' && c.pieces !== 'first') throw new Error(`BERT config: char_cnn.pieces must be 'all' or 'first', got ${JSON.stringify(c.pieces)}`)
}

/** config.json `char_cnn` → CharCnnConfig (undefined when absent); throws naming the key. */
export function charCnnFromHf(j: unknown): CharCnnConfig | undefined {
  if (j === undefined || j === null) return undefined
  if (typeof j !== 'object' || Array.isArray(j)) throw new Error('char_cnn must be an object')
  const o = j as Record<string, unknown>
  const c = { pieces: o.pieces ?? 'all' } as CharCnnConfig
  for (const [key, name] of LIMITS) {
    const v = o[name] ?? (key === 'shapeFlags' ? SHAPE_FLAGS : undefined)
    if (typeof v !== 'number') throw new Error(`char_cnn.${name} must be a number, got ${JSON.stringify(v)}`)
    c[key] = v
  }
  validateCharCnn(c)
  return c
}

export function charCnnToHf(c: CharCnnConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, name] of LIMITS) out[name] = c[key]
  out.pieces = c.pieces
  return out
}

/**
 * Initial values (our layout): character embeddings N(0, 1) and the convolution uniform
 * ±1/√fan_in (PyTorch's defaults, as the word tagger), the projection and biases zero.
 */
export function initCharCnnParams(c: CharCnnConfig, hiddenSize: number, rng: Rng, prefix = 'bert.'): Map<string, Float32Array> {
  const n = charCnnParamNames(prefix)
  const out = new Map<string, Float32Array>()
  for (const [name, shape] of charCnnParamShapes(c, hiddenSize, prefix)) {
    const size = shape.reduce((a, b) => a * b, 1)
    let v: Float32Array = new Float32Array(size)
    if (name === n.embeddings) v = rng.normalArray(size, 1)
    else if (name === `${n.conv}.weight`) {
      const bound = 1 / Math.sqrt(c.charWidth * c.charDim)
      for (let i = 0; i < size; i++) v[i] = (rng.next() * 2 - 1) * bound
    }
    out.set(name, v)
  }
  return out
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
