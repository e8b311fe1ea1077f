// config.json `char_cnn` of a BERT encoder with a character channel (./char-cnn): sizes, checks,
// parameter names and shapes, initial values. Plain data (config.ts reads it), no tensors and no
// text processing.

import type { Rng } from '../rng'

/** The case/shape flags core/nlp/word-features writes per word (SHAPE_FLAGS there). */
const DEFAULT_SHAPE_FLAGS = 4

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
  /**
   * Factor on the projection's input [F + flags] (config.json `feature_scale`; absent = 1, the
   * channels saved before it existed). AdamW moves every weight by about lr a step, so a Linear
   * over F + flags inputs of size ~0.5, most of them shared by every word (the max over a word's
   * windows is mostly positive, the flags are 0/1), moved the character term (F + flags)/2 times
   * faster than an embedding row: from zero it outgrew the piece and position embeddings before
   * the LayerNorm within a few hundred steps at lr 1e-3, every piece normalised to nearly the same
   * vector, and the encoder collapsed to tagging nothing. New channels take 1/(F + flags).
   */
  featureScale?: number
}

/** The projection input's factor of a new channel: 1/(F + flags) (see CharCnnConfig.featureScale). */
export function defaultFeatureScale(d: Pick<CharCnnDims, 'charFilters' | 'shapeFlags'>): number {
  return 1 / (d.charFilters + d.shapeFlags)
}

export const CHAR_CNN_DEFAULTS = { charDim: 30, charFilters: 50, charWidth: 3, maxChars: 20, pieces: 'all' as CharPieces }

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
  ['shapeFlags', 'shape_flags', 64],
]

export function validateCharCnn(c: CharCnnConfig): void {
  for (const [key, name, max] of LIMITS) {
    const v = c[key]
    if (!Number.isInteger(v) || v < (key === 'shapeFlags' ? 0 : 1) || v > max) throw new Error(`BERT config: char_cnn.${name} must be an integer up to ${max}, got ${v}`)
  }
  if (c.charWidth % 2 !== 1) throw new Error(`BERT config: char_cnn.width must be odd, got ${c.charWidth}`)
  if (c.charVocabSize < 2) throw new Error(`BERT config: char_cnn.vocab_size must count <pad> and <unk>, got ${c.charVocabSize}`)
  if (c.pieces !== 'all' && c.pieces !== 'first') throw new Error(`BERT config: char_cnn.pieces must be 'all' or 'first', got ${JSON.stringify(c.pieces)}`)
  const scale = c.featureScale ?? 1
  if (typeof scale !== 'number' || !Number.isFinite(scale) || scale <= 0) throw new Error(`BERT config: char_cnn.feature_scale must be a positive number, got ${JSON.stringify(c.featureScale)}`)
}

/** config.json `char_cnn` → CharCnnConfig (undefined when absent); throws naming the key. */
export function charCnnFromHf(j: unknown): CharCnnConfig | undefined {
  if (j === undefined || j === null) return undefined
  if (typeof j !== 'object' || Array.isArray(j)) throw new Error('char_cnn must be an object')
  const o = j as Record<string, unknown>
  const c = { pieces: o.pieces ?? 'all' } as CharCnnConfig
  if (o.feature_scale !== undefined) c.featureScale = o.feature_scale as number
  for (const [key, name] of LIMITS) {
    const v = o[name] ?? (key === 'shapeFlags' ? DEFAULT_SHAPE_FLAGS : undefined)
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
  if (c.featureScale !== undefined) out.feature_scale = c.featureScale
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
