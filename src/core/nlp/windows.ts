// Long documents: windows of at most maxLength pieces (counting [CLS] and [SEP]) over a
// tokenised document, merging per-window predictions back to one per word, and a sentence
// splitter for sentence-level training examples.

/** A window over a document's pieces (no special tokens): pieces [start, end). */
export interface PieceWindow {
  start: number
  end: number
}

export interface WindowOptions {
  /** Model sequence length including [CLS] and [SEP]; at least 3. */
  maxLength: number
  /**
   * Pieces shared by consecutive windows (HF's `stride`), 0 <= stride < maxLength - 2.
   * Default: min(128, floor((maxLength - 2) / 4)).
   */
  stride?: number
}

export function defaultStride(maxLength: number): number {
  return Math.min(128, Math.floor((maxLength - 2) / 4))
}

/**
 * Windows covering pieces [from, to) of a document. A window never ends or starts inside a
 * word (between two pieces with the same wordIndex) unless the word alone is longer than a
 * window; consecutive windows overlap by about `stride` pieces (more when moving the start to
 * a word start needs it). Every window adds at least one piece not in the previous one.
 */
export function makeWindows(wordIndex: ArrayLike<number>, opts: WindowOptions, from = 0, to = wordIndex.length): PieceWindow[] {
  const capacity = opts.maxLength - 2
  if (!Number.isInteger(opts.maxLength) || capacity < 1) throw new RangeError(`maxLength must be an integer >= 3, got ${opts.maxLength}`)
  const stride = opts.stride ?? defaultStride(opts.maxLength)
  if (!Number.isInteger(stride) || stride < 0 || stride >= capacity) {
    throw new RangeError(`stride must be an integer in [0, ${capacity - 1}] for maxLength ${opts.maxLength}, got ${stride}`)
  }
  if (from < 0 || to > wordIndex.length || from > to) throw new RangeError(`piece range [${from}, ${to}) outside 0..${wordIndex.length}`)
  const midWord = (p: number) => p > from && p < to && wordIndex[p] >= 0 && wordIndex[p] === wordIndex[p - 1]
  const out: PieceWindow[] = []
  let s = from
  let prevEnd = from
  while (s < to) {
    let e = Math.min(to, s + capacity)
    if (e < to && midWord(e)) {
      let b = e
      while (b > s && midWord(b)) b--
      if (b > prevEnd) e = b // else the word does not fit: split it
    }
    out.push({ start: s, end: e })
    if (e >= to) break
    prevEnd = e
    let ns = Math.max(e - stride, s + 1)
    let b = ns
    while (b > s + 1 && midWord(b)) b--
    if (!midWord(b)) ns = b
    else while (ns < e && midWord(ns)) ns++
    s = ns
  }
  return out
}

export interface MergedPredictions {
  /** [numWords, numLabels] row-major: the chosen window's scores at each word's first piece. */
  scores: Float32Array
  numLabels: number
  /** 1 where some window held the word's first piece. */
  covered: Uint8Array
}

/**
 * One score row per word from per-window scores. windowScores[k] is window k's model output,
 * row-major [seqLen, numLabels] with row 0 = [CLS], so piece p sits in row 1 + p - start;
 * seqLen may include padding. A word takes its first piece's row from the window in which
 * that piece is farthest from a window edge (ties: the earlier window).
 */
export function mergeWindowPredictions(
  windows: readonly PieceWindow[],
  windowScores: ReadonlyArray<ArrayLike<number>>,
  wordIndex: ArrayLike<number>,
  numWords: number,
  numLabels: number,
): MergedPredictions {
  if (windows.length !== windowScores.length) throw new Error(`${windows.length} windows but ${windowScores.length} score arrays`)
  const firstPiece = new Int32Array(numWords).fill(-1)
  for (let p = 0; p < wordIndex.length; p++) {
    const w = wordIndex[p]
    if (w >= 0 && w < numWords && firstPiece[w] < 0) firstPiece[w] = p
  }
  const bestDist = new Int32Array(numWords).fill(-1)
  const bestWin = new Int32Array(numWords).fill(-1)
  windows.forEach((win, k) => {
    const need = (win.end - win.start + 1) * numLabels
    if (windowScores[k].length < need) throw new Error(`window ${k} has ${windowScores[k].length} scores, needs at least ${need}`)
    for (let p = win.start; p < win.end; p++) {
      const w = wordIndex[p]
      if (w < 0 || w >= numWords || firstPiece[w] !== p) continue
      const d = Math.min(p - win.start, win.end - 1 - p)
      if (d > bestDist[w]) {
        bestDist[w] = d
        bestWin[w] = k
      }
    }
  })
  const scores = new Float32Array(numWords * numLabels)
  const covered = new Uint8Array(numWords)
  for (let w = 0; w < numWords; w++) {
    const k = bestWin[w]
    if (k < 0) continue
    covered[w] = 1
    const row = 1 + firstPiece[w] - windows[k].start
    const src = windowScores[k]
    for (let j = 0; j < numLabels; j++) scores[w * numLabels + j] = src[row * numLabels + j]
  }
  return { scores, numLabels, covered }
}

// --- sentences --------------------------------------------------------------------------------

// Lower-cased words that a "." after them does not end a sentence.
const ABBREVIATIONS = new Set([
  'al', 'approx', 'ca', 'cf', 'co', 'corp', 'dept', 'dr', 'e.g', 'eg', 'eq', 'eqs', 'esp', 'est', 'et',
  'etc', 'fig', 'figs', 'i.e', 'ie', 'inc', 'jr', 'ltd', 'mr', 'mrs', 'ms', 'no', 'nos', 'prof', 'ref',
  'refs', 'resp', 'sp', 'spp', 'sr', 'st', 'subsp', 'suppl', 'tab', 'var', 'viz', 'vol', 'vs', 'wt',
])
const CLOSERS = new Set([...')]}"\'\u2019\u201d\u00bb'])
const SENTENCE_START = /[\p{Lu}\p{N}(\["'\u2018\u201c]/u

export interface SplitSentenceOptions {
  /** Spans a sentence boundary must not cut (e.g. the document's mentions). */
  protect?: ReadonlyArray<{ start: number; end: number }>
}

/**
 * Heuristic sentence spans [start, end) (trimmed, non-empty) of `text`. A line break always
 * ends a sentence (CoNLL documents keep one sentence per line); otherwise ".", "?" or "!",
 * optionally followed by closing brackets/quotes, then whitespace, then an upper-case letter,
 * digit or opening bracket/quote ends one, except after common abbreviations ("e.g.", "Fig.",
 * "et al.", "i.e."). No boundary is placed inside a token of
 * `tokens` or a `protect` span.
 */
export function splitSentences(
  text: string,
  tokens?: ReadonlyArray<readonly [number, number]>,
  opts: SplitSentenceOptions = {},
): Array<[number, number]> {
  const n = text.length
  // blocked[p]: no boundary between p - 1 and p
  const blocked = new Uint8Array(n + 1)
  const block = (s: number, e: number) => {
    for (let p = Math.max(1, s + 1); p < Math.min(n + 1, e); p++) blocked[p] = 1
  }
  if (tokens) for (const [s, e] of tokens) block(s, e)
  if (opts.protect) for (const m of opts.protect) block(m.start, m.end)

  // gaps [gs, ge) between sentences
  const gaps: Array<[number, number]> = []
  for (let i = 0; i < n; i++) {
    const c = text[i]
    if (c === '\n' || c === '\r') {
      let ge = i + 1
      if (c === '\r' && text[ge] === '\n') ge++
      gaps.push([i, ge])
      i = ge - 1
      continue
    }
    if (c !== '.' && c !== '?' && c !== '!') continue
    let j = i + 1
    while (j < n && CLOSERS.has(text[j])) j++
    if (j >= n || !/\s/.test(text[j])) continue
    let k = j
    while (k < n && /[^\S\r\n]/.test(text[k])) k++
    if (k >= n || text[k] === '\n' || text[k] === '\r') continue // the line break makes the boundary
    if (!SENTENCE_START.test(String.fromCodePoint(text.codePointAt(k)!))) continue
    if (c === '.' && isAbbreviation(text, i)) continue
    gaps.push([j, k])
  }

  const out: Array<[number, number]> = []
  let cur = 0
  const emit = (s: number, e: number) => {
    while (s < e && /\s/.test(text[s])) s++
    while (e > s && /\s/.test(text[e - 1])) e--
    if (e > s) out.push([s, e])
  }
  for (const [gs, ge] of gaps) {
    let ok = true
    for (let p = gs; p <= ge && ok; p++) if (blocked[p]) ok = false
    if (!ok) continue
    emit(cur, gs)
    cur = ge
  }
  emit(cur, n)
  return out
}

function isAbbreviation(text: string, dot: number): boolean {
  let s = dot
  while (s > 0 && /[\p{L}.]/u.test(text[s - 1])) s--
  const word = text.slice(s, dot).toLowerCase()
  if (word.length === 0) return false
  if (ABBREVIATIONS.has(word)) return true
  // A lone capital is not treated as an initial: "hepatitis B. The" ends a sentence far more
  // often in abstracts than an author initial occurs; "E. coli" is safe (lower-case next).
  return /^(\p{L}\.)+\p{L}$/u.test(word) // "e.g", "u.s.a"
}
