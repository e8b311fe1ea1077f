// A from-scratch encoder whose word embeddings start from in-domain fastText vectors instead of
// noise (issue 18's first lever; Poerner et al. 2020 show word vectors aligned into BERT's input
// space recover much of a domain-pretrained model's gain cheaply). The rest of the encoder is the
// usual random initialisation; the folder is a normal checkpoint for `train --init` and
// `pretrain --init`.
//
//   text → WordPiece vocabulary (exactly as `pretrain` learns it) and the same normalised words
//        → fastText skip-gram with character n-grams, dim = the preset's hidden size
//        → one vector per piece (pieceVectors) → centred and scaled to the initialiser's std
//        → bert.embeddings.word_embeddings.weight of a randomly initialised encoder.

import { existsSync, readdirSync } from 'node:fs'
import * as tf from '@tensorflow/tfjs-core'
import { populateFolderAtomic } from '../fs/atomic'
import { BertTokenClassifier } from '../model/bert'
import { saveCheckpoint } from '../model/checkpoint'
import { presetConfig } from '../model/presets'
import { SPECIAL_TOKENS } from '../nlp/vocab-trainer'
import type { PresetName } from '../../shared/recipes'
import { FASTTEXT_DEFAULTS, FastTextVectors, type FastTextOptions } from './fasttext'
import { collectDocuments, learnVocabulary, PRETRAIN_DEFAULTS, PretrainError } from './run'

export const WORDVEC_DEFAULTS = {
  preset: PRETRAIN_DEFAULTS.preset,
  vocabSize: PRETRAIN_DEFAULTS.vocabSize,
  lowercase: PRETRAIN_DEFAULTS.lowercase,
  seed: PRETRAIN_DEFAULTS.seed,
  epochs: FASTTEXT_DEFAULTS.epochs,
  minCount: FASTTEXT_DEFAULTS.minCount,
  /** Nearest neighbours reported per --neighbours word. */
  neighbours: 5,
}

const WORD_EMBEDDINGS = 'bert.embeddings.word_embeddings.weight'

/** Where a piece's vector came from. */
export type PieceVectorKind = 'word' | 'fragment' | 'random'

/** What pieceVectors needs of a trained model (FastTextVectors; a stand-in in tests). */
export interface PieceVectorSource {
  readonly dim: number
  readonly minn: number
  readonly maxn: number
  wordVector(word: string): Float32Array
  ngramVector(ngram: string): Float32Array
}

/**
 * The fastText n-grams a continuation piece ('##' + fragment) stands for. A continuation never
 * starts a word, so its n-grams carry no '<'; it may or may not end one, so they carry no '>'
 * either: the fragment's own n-grams of minn..maxn characters are exactly those that every word
 * containing it shares, which makes their mean the fragment's share of those words' vectors
 * (fastText's word vector is the mean of its n-grams, so a whole word decomposes the same way).
 * A fragment shorter than minn has no such n-gram; it is then read as a word ending ("##es" →
 * "es>"), its commonest position; one still too short (a single letter) gets none.
 */
export function fragmentNgrams(fragment: string, minn: number, maxn: number): string[] {
  const chars = Array.from(fragment)
  const out: string[] = []
  if (chars.length >= minn) {
    for (let i = 0; i < chars.length; i++) {
      for (let n = minn; n <= maxn && i + n <= chars.length; n++) out.push(chars.slice(i, i + n).join(''))
    }
  } else if (chars.length + 1 >= minn) {
    out.push(fragment + '>')
  }
  return out
}

/**
 * One vector per vocabulary entry (null: keep the random initialisation). Whole-word pieces take
 * fastText's word vector, which for a word fastText did not keep (rarer than minCount) is built
 * from its n-grams; '##' pieces take the mean of their fragment's n-gram rows (fragmentNgrams);
 * special tokens and pieces without any vector stay random.
 */
export function pieceVectors(vocab: readonly string[], source: PieceVectorSource): { vectors: Array<Float32Array | null>; kinds: PieceVectorKind[] } {
  const specials = new Set<string>(SPECIAL_TOKENS)
  const vectors: Array<Float32Array | null> = []
  const kinds: PieceVectorKind[] = []
  for (const piece of vocab) {
    let v: Float32Array | null = null
    let kind: PieceVectorKind = 'random'
    if (specials.has(piece)) {
      // [PAD], [CLS] … are not words of the text.
    } else if (piece.startsWith('##') && piece.length > 2) {
      const grams = fragmentNgrams(piece.slice(2), source.minn, source.maxn)
      if (grams.length) {
        v = new Float32Array(source.dim)
        for (const g of grams) {
          const row = source.ngramVector(g)
          for (let j = 0; j < v.length; j++) v[j] += row[j]
        }
        for (let j = 0; j < v.length; j++) v[j] /= grams.length
        kind = 'fragment'
      }
    } else {
      v = source.wordVector(piece)
      kind = 'word'
    }
    // fastText gives zeros for a word with neither a row nor an n-gram (shorter than minn - 2).
    if (v && !v.some((x) => x !== 0)) {
      v = null
      kind = 'random'
    }
    vectors.push(v)
    kinds.push(kind)
  }
  return { vectors, kinds }
}

/**
 * The word-embedding table [vocab, hidden]: rows with a vector become (vector − mean) · scale,
 * the others keep `random`'s values. Centred because skip-gram vectors share a large common
 * direction (Mu & Viswanath 2018) that random N(0, σ²) rows do not have and that LayerNorm, which
 * normalises each token across its own dimensions, would pass on to every token; scaled so that
 * their values have the initialiser's standard deviation σ, which keeps the word embeddings in
 * proportion to the position and token-type embeddings they are summed with.
 */
export function embeddingFromPieceVectors(
  vectors: ReadonlyArray<Float32Array | null>,
  random: Float32Array,
  hidden: number,
  std: number,
): { matrix: Float32Array; mean: Float32Array; scale: number; assigned: number } {
  if (random.length !== vectors.length * hidden) throw new RangeError(`random table has ${random.length} values, expected ${vectors.length} × ${hidden}`)
  const mean = new Float64Array(hidden)
  let assigned = 0
  for (const v of vectors) {
    if (!v) continue
    if (v.length !== hidden) throw new RangeError(`a piece vector has ${v.length} dimensions, expected ${hidden}`)
    for (let j = 0; j < hidden; j++) mean[j] += v[j]
    assigned++
  }
  if (assigned < 2) throw new PretrainError(`only ${assigned} vocabulary piece(s) got a word vector; the text is too small to learn from`)
  for (let j = 0; j < hidden; j++) mean[j] /= assigned
  let sumSq = 0
  for (const v of vectors) {
    if (!v) continue
    for (let j = 0; j < hidden; j++) sumSq += (v[j] - mean[j]) ** 2
  }
  const sd = Math.sqrt(sumSq / (assigned * hidden))
  if (!(sd > 0)) throw new PretrainError('all word vectors are equal; the text is too small or too repetitive to learn from')
  const scale = std / sd
  const matrix = Float32Array.from(random)
  vectors.forEach((v, i) => {
    if (!v) return
    for (let j = 0; j < hidden; j++) matrix[i * hidden + j] = (v[j] - mean[j]) * scale
  })
  return { matrix, mean: Float32Array.from(mean), scale, assigned }
}

export interface WordVecOptions {
  text: readonly string[]
  outDir: string
  preset?: PresetName
  vocabSize?: number
  lowercase?: boolean
  /** fastText passes over the text. */
  epochs?: number
  /** fastText's minCount: rarer words have no row of their own. */
  minCount?: number
  /** fastText's and the encoder initialisation's seed. */
  seed?: number
  /** Other fastText settings (n-gram lengths, window, buckets, learning rate). */
  fastText?: Pick<FastTextOptions, 'minn' | 'maxn' | 'window' | 'negatives' | 'lr' | 'bucket'>
  /** Words whose nearest neighbours (by fastText) go into the result, a check that the vectors mean something. */
  neighbours?: readonly string[]
  onProgress?: FastTextOptions['onProgress']
  log?: (line: string) => void
}

export interface WordVecResult {
  outDir: string
  pieces: number
  /** Pieces initialised from a word vector, from n-gram rows, left random. */
  fromWords: number
  fromFragments: number
  random: number
  wordTypes: number
  words: number
  /** Words fastText kept (seen minCount times). */
  fastTextWords: number
  scale: number
  dim: number
  neighbours: Record<string, Array<{ word: string; cosine: number }>>
  fastTextSeconds: number
  wallSeconds: number
}

export async function buildWordVectorCheckpoint(o: WordVecOptions): Promise<WordVecResult> {
  const t0 = performance.now()
  const log = o.log ?? (() => {})
  if (existsSync(o.outDir) && readdirSync(o.outDir).length > 0) throw new PretrainError(`${o.outDir} is not empty; choose a new folder`)
  const preset = o.preset ?? WORDVEC_DEFAULTS.preset
  const lowercase = o.lowercase ?? WORDVEC_DEFAULTS.lowercase
  const seed = o.seed ?? WORDVEC_DEFAULTS.seed
  const minCount = o.minCount ?? WORDVEC_DEFAULTS.minCount
  const epochs = o.epochs ?? WORDVEC_DEFAULTS.epochs

  log(`reading ${o.text.join(', ')}`)
  const docs = await collectDocuments(o.text)
  // fastText splits on white space only: it gets the tokenizer's own words, so its words are the
  // strings WordPiece cuts into pieces (lower-cased, accents stripped, punctuation apart).
  const lines: string[] = []
  let words = 0
  const learnt = learnVocabulary(docs, {
    vocabSize: o.vocabSize ?? WORDVEC_DEFAULTS.vocabSize,
    lowercase,
    onWords: (w) => {
      if (w.length === 0) return
      lines.push(w.join(' '))
      words += w.length
    },
  })
  docs.length = 0
  const vocab = learnt.tokens
  let frequent = 0
  for (const c of learnt.wordCounts.values()) if (c >= minCount) frequent++
  // fastText aborts without a message on an empty vocabulary: say what is wrong instead.
  if (frequent === 0) throw new PretrainError(`${o.text.join(', ')}: no word occurs ${minCount} times (${words} words in all); give more text or a lower --min-count`)
  log(`learnt a ${vocab.length}-piece WordPiece vocabulary from ${learnt.wordTypes} word types (${words} words, ${frequent} seen at least ${minCount} times)`)

  const config = presetConfig(preset, { vocabSize: vocab.length, maxPositionEmbeddings: 512 })
  const dim = config.hiddenSize
  log(`training fastText skip-gram vectors of ${dim} dimensions (${epochs} epochs, one thread)`)
  const tf0 = performance.now()
  const ft = await FastTextVectors.train(lines.join('\n') + '\n', { ...o.fastText, dim, epochs, minCount, seed, onProgress: o.onProgress })
  lines.length = 0
  const fastTextSeconds = (performance.now() - tf0) / 1000
  let pv: ReturnType<typeof pieceVectors>
  const neighbours: WordVecResult['neighbours'] = {}
  let fastTextWords: number
  try {
    fastTextWords = ft.words().length
    pv = pieceVectors(vocab, ft)
    for (const w of o.neighbours ?? []) neighbours[w] = ft.nearest(w, WORDVEC_DEFAULTS.neighbours)
  } finally {
    ft.dispose()
  }

  const model = BertTokenClassifier.random(config, seed, {})
  try {
    const table = model.variables().get(WORD_EMBEDDINGS)!
    const emb = embeddingFromPieceVectors(pv.vectors, table.dataSync() as Float32Array, dim, config.initializerRange)
    const initial = tf.tensor(emb.matrix, table.shape, 'float32') // [vocab, hidden]
    table.assign(initial)
    initial.dispose()
    const count = (k: PieceVectorKind) => pv.kinds.filter((x) => x === k).length
    const result: Omit<WordVecResult, 'wallSeconds'> = {
      outDir: o.outDir,
      pieces: vocab.length,
      fromWords: count('word'),
      fromFragments: count('fragment'),
      random: count('random'),
      wordTypes: learnt.wordTypes,
      words,
      fastTextWords,
      scale: emb.scale,
      dim,
      neighbours,
      fastTextSeconds,
    }
    const wordvec = {
      text: [...o.text],
      preset,
      lowercase,
      seed,
      fastText: { model: 'skipgram', loss: 'ns', ...FASTTEXT_DEFAULTS, ...o.fastText, epochs, minCount, seed, dim },
      pieces: { word: result.fromWords, fragment: result.fromFragments, random: result.random },
      scale: emb.scale,
      fastTextSeconds,
    }
    await populateFolderAtomic(o.outDir, (dir) => saveCheckpoint(dir, model, vocab, { lowercase, architectures: ['BertModel'], metadata: { wordvec } }))
    log(`wrote ${o.outDir}`)
    return { ...result, wallSeconds: (performance.now() - t0) / 1000 }
  } finally {
    model.dispose()
  }
}
