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

import { existsSync, mkdirSync, readdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import * as tf from '@tensorflow/tfjs-core'
import { populateFolderAtomic, writeFileAtomic } from '../fs/atomic'
import { BertTokenClassifier } from '../model/bert'
import { saveCheckpoint } from '../model/checkpoint'
import { presetConfig } from '../model/presets'
import { SPECIAL_TOKENS } from '../nlp/vocab-trainer'
import type { PresetName } from '../../shared/recipes'
import { FASTTEXT_DEFAULTS, FastTextVectors, type FastTextOptions } from './fasttext'
import { collectDocuments, learnVocabulary, PRETRAIN_DEFAULTS, PretrainError } from './run'
import { embeddingFromVectors, wordVectorLines } from '../nlp/word-vectors'
import { wordTaggerTokenizer } from '../train/word-loop'
import { WORD_TAGGER_DEFAULTS } from '../model/word-tagger'

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

/** What both outputs of wordvec take: the text and fastText's settings. */
interface FastTextRunOptions {
  text: readonly string[]
  /** fastText passes over the text. */
  epochs?: number
  /** fastText's minCount: rarer words have no row of their own. */
  minCount?: number
  /** fastText's (and a checkpoint's initialisation's) seed. */
  seed?: number
  /** Other fastText settings (n-gram lengths, window, buckets, learning rate). */
  fastText?: Pick<FastTextOptions, 'minn' | 'maxn' | 'window' | 'negatives' | 'lr' | 'bucket'>
  /** Words whose nearest neighbours (by fastText) go into the result, a check that the vectors mean something. */
  neighbours?: readonly string[]
  onProgress?: FastTextOptions['onProgress']
  log?: (line: string) => void
}

export interface WordVecOptions extends FastTextRunOptions {
  outDir: string
  preset?: PresetName
  vocabSize?: number
  lowercase?: boolean
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
    const emb = embeddingFromVectors(pv.vectors, table.dataSync() as Float32Array, dim, config.initializerRange)
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

export interface WordVectorFileOptions extends FastTextRunOptions {
  /** The .vec file to write (replaced whole, never half written). */
  out: string
  dim?: number
}

export interface WordVectorFileResult {
  out: string
  /** Words with a vector in the file (fastText's, seen minCount times), most frequent first. */
  vectors: number
  words: number
  wordTypes: number
  dim: number
  neighbours: Record<string, Array<{ word: string; cosine: number }>>
  fastTextSeconds: number
  wallSeconds: number
}

/**
 * fastText skip-gram vectors of the words the word tagger reads (`train --arch word-lstm
 * --word-vectors`): the text split into words as the tagger splits it, lower-cased as its word
 * vocabulary is, written in the word2vec/fastText text format, most frequent word first.
 */
export async function buildWordVectorFile(o: WordVectorFileOptions): Promise<WordVectorFileResult> {
  const t0 = performance.now()
  const log = o.log ?? (() => {})
  const dim = o.dim ?? WORD_TAGGER_DEFAULTS.wordDim
  const minCount = o.minCount ?? WORDVEC_DEFAULTS.minCount
  const epochs = o.epochs ?? WORDVEC_DEFAULTS.epochs
  const seed = o.seed ?? WORDVEC_DEFAULTS.seed
  // The file's folder is made now, not after the minutes fastText takes (a missing one failed only then).
  mkdirSync(dirname(resolve(o.out)), { recursive: true })
  log(`reading ${o.text.join(', ')}`)
  const docs = await collectDocuments(o.text)
  const basic = wordTaggerTokenizer().basic
  const counts = new Map<string, number>()
  const lines: string[] = []
  let words = 0
  for (const d of docs) {
    for (const line of d.lines) {
      const ws = basic.tokenize(line).map((t) => line.slice(t.start, t.end).toLowerCase())
      if (ws.length === 0) continue
      for (const w of ws) counts.set(w, (counts.get(w) ?? 0) + 1)
      words += ws.length
      lines.push(ws.join(' '))
    }
  }
  docs.length = 0
  let frequent = 0
  for (const c of counts.values()) if (c >= minCount) frequent++
  if (frequent === 0) throw new PretrainError(`${o.text.join(', ')}: no word occurs ${minCount} times (${words} words in all); give more text or a lower --min-count`)
  log(`${words} words, ${counts.size} word types, ${frequent} seen at least ${minCount} times; training fastText skip-gram vectors of ${dim} dimensions (${epochs} epochs, one thread)`)
  const tf0 = performance.now()
  const ft = await FastTextVectors.train(lines.join('\n') + '\n', { ...o.fastText, dim, epochs, minCount, seed, onProgress: o.onProgress })
  lines.length = 0
  const fastTextSeconds = (performance.now() - tf0) / 1000
  try {
    // fastText's dictionary lists words by count, most frequent first.
    const kept = ft.words()
    const neighbours: WordVectorFileResult['neighbours'] = {}
    for (const w of o.neighbours ?? []) neighbours[w] = ft.nearest(w, WORDVEC_DEFAULTS.neighbours)
    writeFileAtomic(o.out, wordVectorLines(kept, (w) => ft.wordVector(w), dim))
    log(`wrote ${kept.length} vectors to ${o.out}`)
    return { out: o.out, vectors: kept.length, words, wordTypes: counts.size, dim, neighbours, fastTextSeconds, wallSeconds: (performance.now() - t0) / 1000 }
  } finally {
    ft.dispose()
  }
}
