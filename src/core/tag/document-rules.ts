// Document-level rules over one head's mentions, after the model has tagged each sentence on its
// own: a sentence-level tagger misses "NTG" four sentences after "nitroglycerin (NTG)", and tags
// "lead" in one sentence but not the next. Both rules only copy what the head already decided
// somewhere in the same document to other occurrences of the same words (or take back an
// abbreviation's mentions when its definition says it is something else); they never invent a
// type. Chosen on devel with the shipped model (bench/accuracy-notes.md, "Document rules"):
// abbreviations gained on every corpus; copying to every occurrence gained on chemicals
// (BC5CDR Chemical 89.0 → 90.1) and lost a little on diseases, so it is on for Chemical only.
//
// Written here rather than taken from a library: the Schwartz & Hearst algorithm is forty lines,
// and the implementations that exist (Ab3P, scispaCy's AbbreviationDetector) are C++ or Python.

import type { SuggestionRule } from '../../shared/domain'
import type { ScoredMention } from '../nlp/examples'

export interface DocumentRules {
  /**
   * Abbreviations defined in the document ("long form (SF)", Schwartz & Hearst 2003): when the head
   * tagged the long form (a mention ending just before the parenthesis) or the short form at its
   * definition, every occurrence of the short form gets that type; when it tagged neither, its
   * mentions of the short form elsewhere are removed.
   */
  abbreviations: boolean
  /** Types whose mention texts are copied to every untagged occurrence of the same words. */
  consistentTypes: readonly string[]
}

export const DEFAULT_DOCUMENT_RULES: DocumentRules = { abbreviations: true, consistentTypes: ['Chemical'] }

/** Rules off: each sentence's mentions exactly as the model decoded them. */
export const NO_DOCUMENT_RULES: DocumentRules = { abbreviations: false, consistentTypes: [] }

/** An abbreviation's definition, as word indices: long form [longStart, longEnd), short form [shortStart, shortEnd). */
export interface AbbreviationDefinition {
  longStart: number
  longEnd: number
  shortStart: number
  shortEnd: number
}

/** A short form: 2–10 characters (without spaces) in at most 5 words, starting alphanumeric, with a letter. */
const MAX_SHORT_WORDS = 5
const MAX_SHORT_CHARS = 10
/** A copied mention text needs this many characters, so that "T" or "Ca" are not spread around. */
const MIN_CONSISTENT_CHARS = 3

const isAlnum = (c: string) => /[\p{L}\p{N}]/u.test(c)

/**
 * Schwartz & Hearst's best long form: the start (a word index into `words`) of the shortest tail of
 * `words` whose characters contain the short form's letters and digits in order, matched from the
 * end, its first character at the start of a word. Null when there is none.
 */
export function longFormStart(short: string, words: readonly string[]): number | null {
  const s = short.toLowerCase()
  const l = words.join(' ').toLowerCase()
  let si = s.length - 1
  let li = l.length - 1
  for (; si >= 0; si--) {
    const c = s[si]
    if (!isAlnum(c)) continue
    while (li >= 0 && (l[li] !== c || (si === 0 && li > 0 && isAlnum(l[li - 1])))) li--
    if (li < 0) return null
    li--
  }
  const start = l.lastIndexOf(' ', li) + 1
  return l.slice(0, start).split(' ').length - 1
}

/** The abbreviations a document defines as "long form ( short form )", over its words. */
export function findAbbreviations(words: readonly string[]): AbbreviationDefinition[] {
  const found: AbbreviationDefinition[] = []
  for (let open = 1; open < words.length; open++) {
    if (words[open] !== '(') continue
    // Only as far as a short form can reach: an unclosed '(' costs a few words, not the rest of the document.
    const close = words.slice(open + 1, open + 2 + MAX_SHORT_WORDS).indexOf(')') + open + 1
    if (close <= open + 1) continue
    const short = words.slice(open + 1, close).join('')
    if (short.length < 2 || short.length > MAX_SHORT_CHARS || !isAlnum(short[0]) || !/\p{L}/u.test(short)) continue
    // Schwartz & Hearst: the long form has at most min(|SF| + 5, 2|SF|) words.
    const from = Math.max(0, open - Math.min(short.length + 5, 2 * short.length))
    const k = longFormStart(short, words.slice(from, open))
    if (k === null) continue
    const longStart = from + k
    if (words.slice(longStart, open).join(' ').length <= short.length) continue
    found.push({ longStart, longEnd: open, shortStart: open + 1, shortEnd: close })
  }
  return found
}

/**
 * The head's mentions of one document with the rules applied; sorted by start. `wordOffsets` are the
 * document's words ([start, end) character offsets, as the tagger cut them); a mention that does
 * not start and end on word boundaries is kept as it is and never copied.
 */
export function applyDocumentRules(text: string, wordOffsets: ReadonlyArray<readonly [number, number]>, mentions: readonly ScoredMention[], rules: DocumentRules): ScoredMention[] {
  if ((!rules.abbreviations && rules.consistentTypes.length === 0) || wordOffsets.length === 0) return [...mentions]
  const words = wordOffsets.map(([s, e]) => text.slice(s, e))
  const wordAt = new Map(wordOffsets.map(([s], i) => [s, i]))
  const wordEndingAt = new Map(wordOffsets.map(([, e], i) => [e, i]))
  // Where each word occurs, so that finding a phrase's occurrences costs the occurrences of its
  // first word, not a scan of the whole document per phrase.
  const positions = new Map<string, number[]>()
  words.forEach((w, i) => (positions.get(w) ?? positions.set(w, []).get(w)!).push(i))
  // How many of the head's mentions cover each word: a copy goes only where none does.
  const cover = new Int32Array(words.length)
  const firstWordEndingAfter = (offset: number) => {
    let lo = 0
    let hi = wordOffsets.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (wordOffsets[mid][1] <= offset) lo = mid + 1
      else hi = mid
    }
    return lo
  }
  const mark = (m: ScoredMention, by: number) => {
    for (let w = firstWordEndingAfter(m.start); w < words.length && wordOffsets[w][0] < m.end; w++) cover[w] += by
  }
  let kept = [...mentions]
  kept.forEach((m) => mark(m, 1))
  const wordSpan = (m: ScoredMention) => {
    const a = wordAt.get(m.start)
    const b = wordEndingAt.get(m.end)
    return a === undefined || b === undefined || b < a ? null : { a, b: b + 1 }
  }
  const same = (k: number, a: number, n: number) => {
    for (let j = 0; j < n; j++) if (words[k + j] !== words[a + j]) return false
    return true
  }
  // Occurrences of words[a, a + n), not across a line break (a sentence break in CoNLL input).
  const occurrences = (a: number, n: number) =>
    (positions.get(words[a]) ?? []).filter((k) => k + n <= words.length && same(k, a, n) && !text.slice(wordOffsets[k][0], wordOffsets[k + n - 1][1]).includes('\n'))
  // A copy goes only where no mention (the model's, or a copy made just before) covers a word. It
  // names the mention it copies, so that the app can say why it is there.
  const copy = (k: number, n: number, like: ScoredMention, rule: SuggestionRule['rule']) => {
    if (cover.subarray(k, k + n).some((c) => c > 0)) return
    const start = wordOffsets[k][0]
    const end = wordOffsets[k + n - 1][1]
    const m: ScoredMention = { start, end, text: text.slice(start, end), type: like.type, confidence: like.confidence, rule: { rule, from: { start: like.start, end: like.end, text: like.text } } }
    kept.push(m)
    mark(m, 1)
  }

  if (rules.abbreviations) {
    for (const d of findAbbreviations(words)) {
      const n = d.shortEnd - d.shortStart
      const longEnd = wordOffsets[d.longEnd - 1][1]
      const near = wordOffsets[Math.max(0, d.longStart - 3)][0]
      const atShort = kept.find((m) => m.start === wordOffsets[d.shortStart][0] && m.end === wordOffsets[d.shortEnd - 1][1])
      // The long form as the head tagged it: its mention may start a few words before the ones
      // Schwartz & Hearst chose, or after them ("renal failure" of "acute renal failure (ARF)").
      const atLong = kept.find((m) => m.end === longEnd && m.start >= near)
      const defined = atShort ?? atLong
      if (defined) {
        for (const k of occurrences(d.shortStart, n)) copy(k, n, defined, 'abbreviation')
      } else {
        kept = kept.filter((m) => {
          const s = wordSpan(m)
          const isShortForm = s !== null && s.b - s.a === n && same(s.a, d.shortStart, n)
          if (isShortForm) mark(m, -1)
          return !isShortForm
        })
      }
    }
  }
  if (rules.consistentTypes.length > 0) {
    const seen = new Set<string>()
    for (const m of [...kept]) {
      const s = wordSpan(m)
      if (!s || !rules.consistentTypes.includes(m.type) || m.text.replace(/\s/g, '').length < MIN_CONSISTENT_CHARS) continue
      const key = `${m.type}\0${words.slice(s.a, s.b).join('\0')}`
      if (seen.has(key)) continue
      seen.add(key)
      for (const k of occurrences(s.a, s.b - s.a)) copy(k, s.b - s.a, m, 'repeat')
    }
  }
  return kept.sort((x, y) => x.start - y.start || x.end - y.end)
}
