// WordPiece vocabulary training for from-scratch models, and vocab.txt IO.
//
// The procedure is the one HuggingFace `tokenizers`' WordPieceTrainer uses: BPE merges over
// BERT basic-tokenizer words where every non-initial symbol carries the "##" prefix, the most
// frequent adjacent pair merged first. Written by hand because the Rust `tokenizers` package is
// not a dependency of this app; deterministic by construction (ties: merged token, then left
// token, compared by UTF-16 code units), so the same corpus always gives the same vocab.txt.
//
// Vocabulary order (ids):
//   0 [PAD], 1 [UNK], 2 [CLS], 3 [SEP], 4 [MASK]          (SPECIAL_TOKENS)
//   every single character seen, word-initial form, sorted by code point
//   every single character seen again as "##c", sorted by code point
//   merged tokens in merge order
// Because every character of the training text is in the vocabulary in both forms, no
// training word except one longer than maxInputCharsPerWord becomes [UNK].
import { readFileSync, writeFileSync, existsSync } from 'node:fs'
import { BasicTokenizer } from './basic-tokenizer'
import { parseVocabText, VocabError } from './vocab'

export const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'] as const
export const PAD_ID = 0
export const UNK_ID = 1
export const CLS_ID = 2
export const SEP_ID = 3
export const MASK_ID = 4

export interface TrainVocabOptions {
  /** Target size including special tokens and the alphabet; the alphabet is never cut, so the result may be larger. */
  vocabSize: number
  /** BERT do_lower_case for the basic tokenizer; the model's tokenizer must use the same. */
  lowercase: boolean
  stripAccents?: boolean
  /** A pair seen fewer times than this is never merged. Default 2. */
  minFrequency?: number
  /** Words longer than this (code points) are skipped; they become [UNK] anyway. Default 100. */
  maxInputCharsPerWord?: number
}

export interface TrainedVocab {
  tokens: string[]
  /** Distinct words counted. */
  wordTypes: number
  /** Merges performed. */
  merges: number
}

/**
 * Counts of normalised basic-tokenizer words. `onWords` sees each text's words as they are
 * counted (the word-vector trainer reuses them, so the text is tokenised once).
 */
export function countWords(texts: Iterable<string>, opts: Pick<TrainVocabOptions, 'lowercase' | 'stripAccents'>, onWords?: (words: string[]) => void): Map<string, number> {
  const basic = new BasicTokenizer({ lowercase: opts.lowercase, stripAccents: opts.stripAccents })
  const counts = new Map<string, number>()
  for (const text of texts) {
    const words = basic.words(text)
    for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1)
    onWords?.(words)
  }
  return counts
}

export function trainWordPieceVocab(texts: Iterable<string>, opts: TrainVocabOptions): TrainedVocab {
  return trainFromWordCounts(countWords(texts, opts), opts)
}

/**
 * A whole-word vocabulary for a transformer that runs over words (`train --word-level`): the
 * special tokens, then the vocabSize − 5 most frequent normalised basic-tokenizer words (seen at
 * least minFrequency times, default 1; ties by code units). With no "##" continuations the
 * WordPiece tokenizer gives each listed word one piece and every other word one [UNK], so one
 * position is one word and an unlisted word is read through the character channel alone.
 */
export function trainWordVocab(texts: Iterable<string>, opts: TrainVocabOptions): TrainedVocab {
  if (!Number.isInteger(opts.vocabSize) || opts.vocabSize < SPECIAL_TOKENS.length) {
    throw new RangeError(`vocabSize must be an integer >= ${SPECIAL_TOKENS.length}, got ${opts.vocabSize}`)
  }
  const minFrequency = opts.minFrequency ?? 1
  const maxChars = opts.maxInputCharsPerWord ?? 100
  const counts = countWords(texts, opts)
  const special = new Set<string>(SPECIAL_TOKENS)
  const words = [...counts]
    .filter(([w, n]) => n >= minFrequency && !special.has(w) && [...w].length <= maxChars)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, opts.vocabSize - SPECIAL_TOKENS.length)
    .map(([w]) => w)
  return { tokens: [...SPECIAL_TOKENS, ...words], wordTypes: counts.size, merges: 0 }
}

interface HeapEntry {
  count: number
  a: number
  b: number
  merged: string
  left: string
}

/** Max-heap by count, then smallest merged token, then smallest left token. */
function better(x: HeapEntry, y: HeapEntry): boolean {
  if (x.count !== y.count) return x.count > y.count
  if (x.merged !== y.merged) return x.merged < y.merged
  return x.left < y.left
}

class Heap {
  private readonly items: HeapEntry[] = []
  get size(): number {
    return this.items.length
  }
  push(e: HeapEntry): void {
    const h = this.items
    h.push(e)
    let i = h.length - 1
    while (i > 0) {
      const p = (i - 1) >> 1
      if (!better(h[i], h[p])) break
      ;[h[i], h[p]] = [h[p], h[i]]
      i = p
    }
  }
  pop(): HeapEntry | undefined {
    const h = this.items
    if (h.length === 0) return undefined
    const top = h[0]
    const last = h.pop()!
    if (h.length > 0) {
      h[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < h.length && better(h[l], h[m])) m = l
        if (r < h.length && better(h[r], h[m])) m = r
        if (m === i) break
        ;[h[i], h[m]] = [h[m], h[i]]
        i = m
      }
    }
    return top
  }
}

// Pair keys pack two symbol ids into one safe integer.
const KEY_BASE = 2 ** 24

export function trainFromWordCounts(wordCounts: ReadonlyMap<string, number>, opts: TrainVocabOptions): TrainedVocab {
  const minFrequency = opts.minFrequency ?? 2
  const maxChars = opts.maxInputCharsPerWord ?? 100
  if (!Number.isInteger(opts.vocabSize) || opts.vocabSize < SPECIAL_TOKENS.length) {
    throw new RangeError(`vocabSize must be an integer >= ${SPECIAL_TOKENS.length}, got ${opts.vocabSize}`)
  }
  // Sort words so that symbol ids and word order never depend on Map insertion order.
  const entries = [...wordCounts.entries()].filter(([w, c]) => w.length > 0 && c > 0).sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0))
  const alphabet = new Set<string>()
  const wordChars: string[][] = []
  const counts: number[] = []
  for (const [w, c] of entries) {
    const chars = Array.from(w)
    if (chars.length > maxChars) continue
    for (const ch of chars) alphabet.add(ch)
    wordChars.push(chars)
    counts.push(c)
  }
  const byCodePoint = (x: string, y: string) => x.codePointAt(0)! - y.codePointAt(0)!
  const letters = [...alphabet].sort(byCodePoint)
  const tokens: string[] = [...SPECIAL_TOKENS]
  const symbolId = new Map<string, number>()
  const addToken = (t: string): number => {
    let id = symbolId.get(t)
    if (id === undefined) {
      id = tokens.length
      tokens.push(t)
      symbolId.set(t, id)
    }
    return id
  }
  for (const t of SPECIAL_TOKENS) symbolId.set(t, SPECIAL_TOKENS.indexOf(t))
  for (const ch of letters) addToken(ch)
  for (const ch of letters) addToken('##' + ch)
  if (tokens.length >= KEY_BASE) throw new RangeError('alphabet too large')

  const words: number[][] = wordChars.map((chars) => chars.map((ch, i) => symbolId.get(i === 0 ? ch : '##' + ch)!))
  const pairCount = new Map<number, number>()
  const pairWords = new Map<number, Set<number>>()
  for (let w = 0; w < words.length; w++) {
    const syms = words[w]
    for (let i = 0; i + 1 < syms.length; i++) {
      const key = syms[i] * KEY_BASE + syms[i + 1]
      pairCount.set(key, (pairCount.get(key) ?? 0) + counts[w])
      let set = pairWords.get(key)
      if (set === undefined) pairWords.set(key, (set = new Set()))
      set.add(w)
    }
  }

  const mergedOf = (a: number, b: number) => tokens[a] + tokens[b].slice(2)
  const entry = (key: number, count: number): HeapEntry => {
    const a = Math.floor(key / KEY_BASE)
    const b = key - a * KEY_BASE
    return { count, a, b, merged: mergedOf(a, b), left: tokens[a] }
  }
  const heap = new Heap()
  for (const [key, count] of pairCount) if (count >= minFrequency) heap.push(entry(key, count))

  let merges = 0
  while (tokens.length < opts.vocabSize && heap.size > 0) {
    const top = heap.pop()!
    const key = top.a * KEY_BASE + top.b
    const current = pairCount.get(key) ?? 0
    if (current !== top.count) {
      // Stale: counts only change through merges, which push fresh entries for pairs that grew.
      if (current >= minFrequency && current < top.count) heap.push(entry(key, current))
      continue
    }
    if (current < minFrequency) break
    const newId = addToken(top.merged)
    if (tokens.length >= KEY_BASE) throw new RangeError('vocabulary too large')
    merges++
    // pair -> its count before this merge changed it
    const touched = new Map<number, number>()
    const change = (x: number, y: number, delta: number, w: number) => {
      const k = x * KEY_BASE + y
      const before = pairCount.get(k) ?? 0
      if (!touched.has(k)) touched.set(k, before)
      pairCount.set(k, before + delta)
      if (delta > 0) {
        let set = pairWords.get(k)
        if (set === undefined) pairWords.set(k, (set = new Set()))
        set.add(w)
      }
    }
    // Processing order does not matter: counts are sums and the heap order is total.
    const affected = pairWords.get(key) ?? new Set<number>()
    pairWords.delete(key)
    for (const w of affected) {
      const syms = words[w]
      const c = counts[w]
      let next: number[] | null = null
      // Only the neighbours of each merged occurrence change (as in HF tokenizers' Word.merge).
      for (let i = 0; i < syms.length; i++) {
        if (i + 1 < syms.length && syms[i] === top.a && syms[i + 1] === top.b) {
          if (next === null) next = syms.slice(0, i)
          if (next.length > 0) {
            const x = next[next.length - 1]
            change(x, top.a, -c, w)
            change(x, newId, c, w)
          }
          if (i + 2 < syms.length) {
            const y = syms[i + 2]
            change(top.b, y, -c, w)
            change(newId, y, c, w)
          }
          next.push(newId)
          i++
        } else if (next !== null) next.push(syms[i])
      }
      if (next !== null) words[w] = next
    }
    pairCount.delete(key)
    for (const [k, before] of touched) {
      const c = pairCount.get(k) ?? 0
      if (c <= 0) {
        pairCount.delete(k)
        pairWords.delete(k)
        continue
      }
      if (k === key) continue
      // Pairs that shrank keep their stale (higher) heap entry, re-pushed when popped.
      if (c > before && c >= minFrequency) heap.push(entry(k, c))
    }
  }
  return { tokens, wordTypes: words.length, merges }
}

/** vocab.txt: one token per line, "\n" line ends. */
export function writeVocab(path: string, tokens: readonly string[]): void {
  tokens.forEach((t, i) => {
    if (/[\r\n]/.test(t)) throw new VocabError(`token ${i} contains a line break and cannot be written to ${path}`)
  })
  writeFileSync(path, tokens.join('\n') + '\n', 'utf8')
}

export function readVocab(path: string): string[] {
  if (!existsSync(path)) throw new VocabError(`vocab file not found: ${path}`)
  return parseVocabText(readFileSync(path, 'utf8'))
}
