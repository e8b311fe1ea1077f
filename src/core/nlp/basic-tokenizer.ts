// BERT's BasicTokenizer with the semantics of HuggingFace's Python implementation
// (transformers/models/bert/tokenization_bert.py), plus [start, end) offsets into the ORIGINAL
// text for every token, mapped back through lower-casing and accent stripping. WordPiece on top
// of it is in tokenizer.ts, which says why this is written by hand.
//
// Pipeline, in HF's order:
//   special-token literals ("[CLS]" …) are cut out first (PreTrainedTokenizer.tokenize's trie);
//   _clean_text: drop NUL, U+FFFD and category C* except \t\n\r; whitespace -> " ";
//   _tokenize_chinese_chars: CJK ideographs become words of their own;
//   NFC; whitespace split (str.split also splits on U+2028/U+2029);
//   per word: lower() then NFD + drop Mn (uncased), or NFD + drop Mn (strip_accents only);
//   _run_split_on_punc (ASCII symbol ranges + category P*).
//
// Offsets are UTF-16 code-unit indices (JavaScript string indices), like Mention.start/end.
// All lengths that HF measures in Python characters are measured here in code points.

// ---------------------------------------------------------------------------------------------
// Character classes. One table lookup per BMP char instead of a regex per char.

const F_SKIP = 1 // removed by _clean_text (does not separate words)
const F_WS = 2 // whitespace (separates words)
const F_PUNCT = 4 // BERT _is_punctuation
const F_CJK = 8 // BERT _is_chinese_char
const F_MN = 16 // category Mn (dropped by accent stripping)
const F_MARK = 32 // continues a composition cluster (any M*, Hangul medial/final jamo)

const RE_C = /\p{C}/u
const RE_ZS = /\p{Zs}/u
const RE_P = /\p{P}/u
const RE_MN = /\p{Mn}/u
const RE_M = /\p{M}/u

function isChineseChar(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b820 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  )
}

function computeFlags(cp: number): number {
  const ch = String.fromCodePoint(cp)
  let f = 0
  if (cp === 0 || cp === 0xfffd) f |= F_SKIP
  else if (cp === 0x20 || cp === 0x09 || cp === 0x0a || cp === 0x0d) f |= F_WS
  else if (RE_C.test(ch)) f |= F_SKIP // includes lone surrogates (Cs) and unassigned (Cn), as Python
  else if (RE_ZS.test(ch) || cp === 0x2028 || cp === 0x2029) f |= F_WS
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) f |= F_PUNCT
  else if (RE_P.test(ch)) f |= F_PUNCT
  if (isChineseChar(cp)) f |= F_CJK
  if (RE_MN.test(ch)) f |= F_MN
  // Hangul V/T jamo compose with the preceding syllable under NFC although they are letters.
  if (RE_M.test(ch) || (cp >= 0x1160 && cp <= 0x11ff)) f |= F_MARK
  return f
}

let bmpFlags: Uint8Array | null = null
const astralFlags = new Map<number, number>()

function bmpTable(): Uint8Array {
  if (bmpFlags === null) {
    bmpFlags = new Uint8Array(0x10000)
    for (let c = 0; c < 0x10000; c++) bmpFlags[c] = computeFlags(c)
  }
  return bmpFlags
}

function flagsOf(cp: number): number {
  if (cp < 0x10000) return bmpTable()[cp]
  let f = astralFlags.get(cp)
  if (f === undefined) {
    f = computeFlags(cp)
    astralFlags.set(cp, f)
  }
  return f
}

/** BERT's `_is_punctuation` (ASCII symbol ranges count as punctuation). */
export function isBertPunctuation(cp: number): boolean {
  return (flagsOf(cp) & F_PUNCT) !== 0
}

// ---------------------------------------------------------------------------------------------
// Basic tokenizer

export interface BasicToken {
  /** Normalised text (NFC; lower-cased / accent-stripped when configured). */
  text: string
  /** Span in the original text: first covered char to last covered char. */
  start: number
  end: number
  /**
   * Per code point of `text`: the original span it came from. null when `text` maps one to one
   * onto the original code units start..end (the common ASCII case).
   */
  cpStarts: Int32Array | null
  cpEnds: Int32Array | null
  /** A special-token literal such as "[CLS]" found verbatim in the text. */
  special: boolean
}

export interface BasicTokenizerOptions {
  /** BERT do_lower_case. */
  lowercase: boolean
  /** Default: same as `lowercase` (HF strip_accents=None). */
  stripAccents?: boolean
  /** Default true. */
  tokenizeChineseChars?: boolean
  /** Literals kept whole wherever they occur (HF splits these out before basic tokenisation). */
  specialTokens?: readonly string[]
}

export class BasicTokenizer {
  readonly lowercase: boolean
  readonly stripAccents: boolean
  readonly tokenizeChineseChars: boolean
  readonly specialTokens: readonly string[]
  private readonly specialRe: RegExp | null
  /** Per BMP char: its normalisation when that is one BMP char (>= 0), nothing (-2), or "needs the general path" (-1). */
  private simpleMap: Int32Array | null = null

  constructor(opts: BasicTokenizerOptions) {
    this.lowercase = opts.lowercase
    this.stripAccents = opts.stripAccents ?? opts.lowercase
    this.tokenizeChineseChars = opts.tokenizeChineseChars ?? true
    this.specialTokens = [...new Set(opts.specialTokens ?? [])].filter((t) => t.length > 0)
    // Longest first so that alternation picks the longest literal at the leftmost position.
    const alts = [...this.specialTokens].sort((a, b) => b.length - a.length).map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    this.specialRe = alts.length > 0 ? new RegExp(alts.join('|'), 'g') : null
  }

  /** Tokens of text[from, to). */
  tokenize(text: string, from = 0, to = text.length): BasicToken[] {
    const out: BasicToken[] = []
    this.tokenizeInto(text, from, to, out)
    return out
  }

  /** Normalised word strings only (vocabulary training). */
  words(text: string): string[] {
    return this.tokenize(text).map((t) => t.text)
  }

  tokenizeInto(text: string, from: number, to: number, out: BasicToken[]): void {
    const re = this.specialRe
    if (re === null) {
      this.tokenizePlain(text, from, to, out)
      return
    }
    // Search a view ending at `to` so tokenising many short spans is not quadratic.
    const hay = to === text.length ? text : text.slice(0, to)
    let segStart = from
    re.lastIndex = from
    for (;;) {
      const m = re.exec(hay)
      if (m === null) break
      this.tokenizePlain(text, segStart, m.index, out)
      out.push({ text: m[0], start: m.index, end: m.index + m[0].length, cpStarts: null, cpEnds: null, special: true })
      segStart = m.index + m[0].length
      re.lastIndex = segStart
    }
    this.tokenizePlain(text, segStart, to, out)
  }

  private tokenizePlain(text: string, from: number, to: number, out: BasicToken[]): void {
    let wStart = -1 // first kept char of the current word
    let wEnd = -1 // end of its last kept char
    let ascii = true
    let contiguous = true
    const cjk = this.tokenizeChineseChars
    const table = bmpTable()
    let i = from
    while (i < to) {
      const cp = text.codePointAt(i)!
      const len = cp > 0xffff ? 2 : 1
      const f = cp < 0x10000 ? table[cp] : flagsOf(cp)
      if (f & F_SKIP) {
        if (wStart >= 0) contiguous = false
      } else if (f & F_WS) {
        if (wStart >= 0) {
          this.emitWord(text, wStart, wEnd, ascii && contiguous, out)
          wStart = -1
        }
      } else if (cjk && f & F_CJK) {
        if (wStart >= 0) {
          this.emitWord(text, wStart, wEnd, ascii && contiguous, out)
          wStart = -1
        }
        this.emitWord(text, i, i + len, false, out)
      } else {
        if (wStart < 0) {
          wStart = i
          ascii = true
          contiguous = true
        }
        if (cp >= 128) ascii = false
        wEnd = i + len
      }
      i += len
    }
    if (wStart >= 0) this.emitWord(text, wStart, wEnd, ascii && contiguous, out)
  }

  /** One whitespace-delimited word of the original text, [s, e), possibly containing skipped chars. */
  private emitWord(text: string, s: number, e: number, ascii: boolean, out: BasicToken[]): void {
    const table = bmpTable()
    if (ascii) {
      const word = this.lowercase ? text.slice(s, e).toLowerCase() : text.slice(s, e)
      let runStart = 0
      const n = e - s
      for (let k = 0; k < n; k++) {
        if (table[word.charCodeAt(k)] & F_PUNCT) {
          if (k > runStart) out.push(plainToken(word.slice(runStart, k), s + runStart, s + k))
          out.push(plainToken(word[k], s + k, s + k + 1))
          runStart = k + 1
        }
      }
      if (n > runStart) out.push(plainToken(runStart === 0 ? word : word.slice(runStart), s + runStart, e))
      return
    }
    if (!this.emitWordSimple(text, s, e, out)) this.emitWordSlow(text, s, e, out)
  }

  private getSimpleMap(): Int32Array {
    if (this.simpleMap !== null) return this.simpleMap
    const table = bmpTable()
    const map = new Int32Array(0x10000)
    for (let c = 0; c < 0x10000; c++) {
      // Marks compose with their neighbours; lone surrogates pair up; final sigma depends on context.
      if ((c >= 0xd800 && c <= 0xdfff) || table[c] & F_MARK || c === 0x03a3) {
        map[c] = -1
        continue
      }
      const n = this.normalizeChunk(String.fromCharCode(c))
      map[c] = n.length === 0 ? -2 : n.length === 1 ? n.charCodeAt(0) : -1
    }
    this.simpleMap = map
    return map
  }

  /** Words whose chars normalise one at a time (no marks, no astral chars). false: not applicable. */
  private emitWordSimple(text: string, s: number, e: number, out: BasicToken[]): boolean {
    const table = bmpTable()
    const map = this.getSimpleMap()
    if (codeBuf.length < e - s) {
      codeBuf = new Int32Array(2 * (e - s))
      posBuf = new Int32Array(2 * (e - s))
    }
    let n = 0
    for (let i = s; i < e; i++) {
      const c = text.charCodeAt(i)
      const f = table[c]
      if (f & F_SKIP && !(c >= 0xd800 && c <= 0xdfff)) continue
      const m = map[c]
      if (m === -1) return false
      if (m === -2) continue
      codeBuf[n] = m
      posBuf[n] = i
      n++
    }
    let runStart = 0
    for (let k = 0; k < n; k++) {
      if (table[codeBuf[k]] & F_PUNCT) {
        this.emitRun(text, runStart, k, out)
        this.emitRun(text, k, k + 1, out)
        runStart = k + 1
      }
    }
    this.emitRun(text, runStart, n, out)
    return true
  }

  private emitRun(text: string, a: number, b: number, out: BasicToken[]): void {
    if (b <= a) return
    const start = posBuf[a]
    let identity = true // contiguous in the original and unchanged by normalisation
    let contiguous = true
    for (let k = a; k < b; k++) {
      if (posBuf[k] !== start + (k - a)) {
        contiguous = identity = false
        break
      }
      if (codeBuf[k] !== text.charCodeAt(posBuf[k])) identity = false
    }
    let norm: string
    if (identity) norm = text.slice(start, start + (b - a))
    else {
      norm = ''
      for (let k = a; k < b; k++) norm += String.fromCharCode(codeBuf[k])
    }
    if (contiguous) {
      out.push({ text: norm, start, end: start + (b - a), cpStarts: null, cpEnds: null, special: false })
      return
    }
    const cpStarts = new Int32Array(b - a)
    const cpEnds = new Int32Array(b - a)
    for (let k = a; k < b; k++) {
      cpStarts[k - a] = posBuf[k]
      cpEnds[k - a] = posBuf[k] + 1
    }
    out.push({ text: norm, start, end: posBuf[b - 1] + 1, cpStarts, cpEnds, special: false })
  }

  private normalizeChunk(raw: string): string {
    let t = raw.normalize('NFC')
    if (this.lowercase) t = t.toLowerCase()
    if (this.stripAccents) {
      const d = t.normalize('NFD')
      let kept = ''
      for (const ch of d) if (!(flagsOf(ch.codePointAt(0)!) & F_MN)) kept += ch
      t = kept
    }
    return t
  }

  private emitWordSlow(text: string, s: number, e: number, out: BasicToken[]): void {
    // Kept code points of the word and where they came from.
    const cps: number[] = []
    const starts: number[] = []
    const ends: number[] = []
    for (let i = s; i < e; ) {
      const cp = text.codePointAt(i)!
      const len = cp > 0xffff ? 2 : 1
      if (!(flagsOf(cp) & F_SKIP)) {
        cps.push(cp)
        starts.push(i)
        ends.push(i + len)
      }
      i += len
    }
    if (cps.length === 0) return
    // Normalise cluster by cluster (a starter and the marks that may compose with it) so each
    // output char knows its source; verify against normalising the whole word, which is what
    // HF does, and fall back to coarser offsets in the rare case they differ (e.g. final sigma).
    const outCps: number[] = []
    const outStarts: number[] = []
    const outEnds: number[] = []
    let c0 = 0
    while (c0 < cps.length) {
      let c1 = c0 + 1
      while (c1 < cps.length && flagsOf(cps[c1]) & F_MARK) c1++
      const norm = this.normalizeChunk(String.fromCodePoint(...cps.slice(c0, c1)))
      for (const ch of norm) {
        outCps.push(ch.codePointAt(0)!)
        outStarts.push(starts[c0])
        outEnds.push(ends[c1 - 1])
      }
      c0 = c1
    }
    const whole = this.normalizeChunk(String.fromCodePoint(...cps))
    if (whole !== String.fromCodePoint(...outCps)) {
      const wholeCps = Array.from(whole, (ch) => ch.codePointAt(0)!)
      if (wholeCps.length !== outCps.length) {
        outStarts.length = 0
        outEnds.length = 0
        for (let k = 0; k < wholeCps.length; k++) {
          outStarts.push(starts[0])
          outEnds.push(ends[ends.length - 1])
        }
      }
      outCps.length = 0
      outCps.push(...wholeCps)
    }
    // Punctuation split on the normalised chars.
    let runStart = 0
    for (let k = 0; k <= outCps.length; k++) {
      const isPunct = k < outCps.length && (flagsOf(outCps[k]) & F_PUNCT) !== 0
      if (k === outCps.length || isPunct) {
        if (k > runStart) out.push(slowToken(outCps, outStarts, outEnds, runStart, k))
        if (isPunct) out.push(slowToken(outCps, outStarts, outEnds, k, k + 1))
        runStart = k + 1
      }
    }
  }
}

let codeBuf = new Int32Array(256)
let posBuf = new Int32Array(256)

function slowToken(cps: number[], starts: number[], ends: number[], a: number, b: number): BasicToken {
  const cpStarts = Int32Array.from(starts.slice(a, b))
  const cpEnds = Int32Array.from(ends.slice(a, b))
  let start = cpStarts[0]
  let end = cpEnds[0]
  for (let k = 1; k < cpStarts.length; k++) {
    if (cpStarts[k] < start) start = cpStarts[k]
    if (cpEnds[k] > end) end = cpEnds[k]
  }
  return { text: String.fromCodePoint(...cps.slice(a, b)), start, end, cpStarts, cpEnds, special: false }
}

function plainToken(text: string, start: number, end: number): BasicToken {
  return { text, start, end, cpStarts: null, cpEnds: null, special: false }
}
