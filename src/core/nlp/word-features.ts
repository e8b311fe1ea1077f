// Word-level input features of character-aware taggers: a lower-cased word vocabulary, a
// character vocabulary, and case/shape flags, learnt from the training text (each with an
// unknown slot) and stored beside the model as plain text files.
//
// Why characters: with a few thousand labelled sentences the WordPiece vocabulary sees most
// biomedical names once or never; their spelling (-itis, -oma, -ase, digits, Greek letters, mixed
// case) carries the signal (Lample et al. 2016; Ma & Hovy 2016).

import type { Example } from './examples'

export const PAD_ID = 0
export const UNK_ID = 1
const PAD = '<pad>'
const UNK = '<unk>'

/** Case/shape flags of a word: initial capital, all capitals (>1 char), has a digit, no letter or digit. */
export const SHAPE_FLAGS = 4
export function shapeFlags(word: string, out: Float32Array, offset: number): void {
  const first = word.slice(0, 1)
  out[offset] = first !== first.toLowerCase() ? 1 : 0
  out[offset + 1] = word.length > 1 && word === word.toUpperCase() && word !== word.toLowerCase() ? 1 : 0
  out[offset + 2] = /\p{Nd}/u.test(word) ? 1 : 0
  out[offset + 3] = /[\p{L}\p{N}]/u.test(word) ? 0 : 1
}

export interface WordVocabOptions {
  /** Words seen fewer times are left out (they map to <unk>). */
  minCount?: number
  /** Most frequent words kept, <pad> and <unk> included. */
  maxSize?: number
}

/** The vocabularies a word-level tagger reads its input through. */
export class WordFeaturizer {
  private readonly wordIndex = new Map<string, number>()
  private readonly charIndex = new Map<string, number>()
  /** Words seen once in the training text: replaced by <unk> at random while training. */
  readonly singletons: ReadonlySet<number>

  constructor(
    /** [<pad>, <unk>, words…] lower-cased. */
    readonly words: readonly string[],
    /** [<pad>, <unk>, characters…] as written (one Unicode code point each). */
    readonly chars: readonly string[],
    singletons: Iterable<number> = [],
  ) {
    if (words[PAD_ID] !== PAD || words[UNK_ID] !== UNK) throw new Error(`word vocabulary must start with ${PAD} and ${UNK}`)
    if (chars[PAD_ID] !== PAD || chars[UNK_ID] !== UNK) throw new Error(`character vocabulary must start with ${PAD} and ${UNK}`)
    words.forEach((w, i) => this.wordIndex.set(w, i))
    chars.forEach((c, i) => this.charIndex.set(c, i))
    this.singletons = new Set(singletons)
  }

  /** Vocabularies from the words of the training text (and any extra unlabelled words for the word list). */
  static learn(trainingWords: Iterable<string>, opts: WordVocabOptions = {}): WordFeaturizer {
    return new WordFeaturizer([PAD, UNK], [PAD, UNK]).extend(trainingWords, opts)
  }

  /**
   * This vocabulary with what `trainingWords` adds: words it lacks (seen at least minCount times,
   * most frequent first, up to maxSize words in all) and characters it lacks, appended so that
   * every known id keeps its meaning (a model's embedding rows stay valid; the new rows are
   * new parameters). New words seen once join the singletons.
   */
  extend(trainingWords: Iterable<string>, opts: WordVocabOptions = {}): WordFeaturizer {
    const counts = new Map<string, number>()
    const newChars = new Set<string>()
    for (const w of trainingWords) {
      const lw = w.toLowerCase()
      if (!this.wordIndex.has(lw)) counts.set(lw, (counts.get(lw) ?? 0) + 1)
      for (const ch of w) if (!this.charIndex.has(ch)) newChars.add(ch)
    }
    const minCount = opts.minCount ?? 1
    const kept = [...counts].filter(([, n]) => n >= minCount).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    const room = opts.maxSize ? Math.max(0, opts.maxSize - this.words.length) : kept.length
    const added = kept.slice(0, room)
    const singles = [...this.singletons]
    added.forEach(([, n], i) => {
      if (n === 1) singles.push(this.words.length + i)
    })
    return new WordFeaturizer([...this.words, ...added.map(([w]) => w)], [...this.chars, ...[...newChars].sort()], singles)
  }

  wordId(word: string): number {
    return this.wordIndex.get(word.toLowerCase()) ?? UNK_ID
  }

  charId(ch: string): number {
    return this.charIndex.get(ch) ?? UNK_ID
  }

  /**
   * Writes one word's features: its id, its first `maxChars` characters' ids (the rest <pad>) and
   * its shape flags, at row `r` of arrays laid out [rows], [rows, maxChars], [rows, SHAPE_FLAGS].
   */
  encodeWord(word: string, r: number, maxChars: number, out: { wordIds: BigInt64Array; charIds: BigInt64Array; shapes: Float32Array }): void {
    out.wordIds[r] = BigInt(this.wordId(word))
    let k = 0
    for (const ch of word) {
      if (k >= maxChars) break
      out.charIds[r * maxChars + k++] = BigInt(this.charId(ch))
    }
    shapeFlags(word, out.shapes, r * SHAPE_FLAGS)
  }
}

/**
 * The words of an example in order: for each word, its first piece's position and its text
 * (document characters from the word's first piece start to its last piece end).
 */
export function exampleWords(ex: Pick<Example, 'wordIds' | 'wordStarts' | 'offsets'>, text: string): { positions: number[]; texts: string[] } {
  const positions: number[] = []
  const texts: string[] = []
  const n = ex.wordIds.length
  for (let p = 0; p < n; p++) {
    if (!ex.wordStarts[p]) continue
    let q = p
    while (q + 1 < n && ex.wordIds[q + 1] === ex.wordIds[p] && !ex.wordStarts[q + 1]) q++
    positions.push(p)
    texts.push(text.slice(ex.offsets[2 * p], ex.offsets[2 * q + 1]))
  }
  return { positions, texts }
}
