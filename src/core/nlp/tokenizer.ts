// BERT WordPiece tokenisation with the semantics of HuggingFace's Python `BertTokenizer`
// (transformers/models/bert/tokenization_bert.py: BasicTokenizer + WordpieceTokenizer), plus
// [start, end) character offsets into the ORIGINAL text for every piece, which the Python
// tokenizer does not give. Written by hand because no maintained JS package gives both exact
// slow-tokenizer output and offsets mapped back through lower-casing and accent stripping.
//
// The basic tokenisation (cleaning, CJK, normalisation, punctuation split) is in
// basic-tokenizer.ts, vocab.txt IO in vocab.ts. WordPiece: greedy longest-match-first, "##"
// continuation, [UNK] for a word with an unknowable part or with more than
// max_input_chars_per_word code points.
//
// Offsets are UTF-16 code-unit indices (JavaScript string indices), like Mention.start/end.
import { BasicTokenizer, type BasicToken } from './basic-tokenizer'
import { readVocabFile, VocabError } from './vocab'

export interface SpecialTokenNames {
  pad: string
  unk: string
  cls: string
  sep: string
  mask: string
}

export const DEFAULT_SPECIAL_TOKENS: SpecialTokenNames = {
  pad: '[PAD]',
  unk: '[UNK]',
  cls: '[CLS]',
  sep: '[SEP]',
  mask: '[MASK]',
}

export interface WordPieceTokenizerOptions {
  /** BERT do_lower_case; must match how the vocabulary was made (BioBERT: false, PubMedBERT: true). */
  lowercase: boolean
  /** Default: same as `lowercase`. */
  stripAccents?: boolean
  /** Default true. */
  tokenizeChineseChars?: boolean
  /** Default 100 (code points); longer words become one [UNK]. */
  maxInputCharsPerWord?: number
  /** Names of the special tokens; all five must be in the vocabulary. */
  specialTokens?: Partial<SpecialTokenNames>
  /**
   * Default true, like HF: a special-token literal in the text ("[MASK]") becomes that special
   * token. false treats it as ordinary text ("[", "mask", "]").
   */
  matchSpecialTokensInText?: boolean
  /** Name used in error messages (the vocab file). */
  source?: string
}

export interface Tokenization {
  /** WordPiece tokens ("##" marks a continuation). */
  tokens: string[]
  ids: number[]
  /** [start, end) of each piece in the original text; an [UNK] word covers the whole word. */
  offsets: Array<[number, number]>
  /** Word each piece belongs to (index into wordOffsets); -1 never occurs here. */
  wordIndex: number[]
  /** [start, end) of each word: BERT basic tokens, or the caller's words (see tokenize). */
  wordOffsets: Array<[number, number]>
}

export interface Encoding extends Tokenization {
  /** Same length as ids; [CLS]/[SEP] have wordIndex -1 and offsets [0, 0]. */
  attentionMask: number[]
  tokenTypeIds: number[]
  specialTokensMask: number[]
}

const WORD_CACHE_LIMIT = 200_000

export class WordPieceTokenizer {
  /** id -> token, one entry per vocabulary line. */
  readonly vocab: readonly string[]
  readonly lowercase: boolean
  readonly maxInputCharsPerWord: number
  readonly specialTokens: SpecialTokenNames
  readonly padId: number
  readonly unkId: number
  readonly clsId: number
  readonly sepId: number
  readonly maskId: number
  readonly basic: BasicTokenizer

  private readonly tokenToId = new Map<string, number>()
  /** "##x" entries keyed by "x". */
  private readonly contToId = new Map<string, number>()
  private readonly maxTokenCps: number
  private readonly maxContCps: number
  /** normalised word -> flat [cpFrom, cpTo, id] triples */
  private readonly wordCache = new Map<string, Int32Array>()

  constructor(vocab: readonly string[], opts: WordPieceTokenizerOptions) {
    this.vocab = vocab.slice()
    this.lowercase = opts.lowercase
    this.maxInputCharsPerWord = opts.maxInputCharsPerWord ?? 100
    this.specialTokens = { ...DEFAULT_SPECIAL_TOKENS, ...opts.specialTokens }
    let maxTok = 0
    let maxCont = 0
    vocab.forEach((tok, id) => {
      this.tokenToId.set(tok, id)
      const n = cpLength(tok)
      if (n > maxTok) maxTok = n
      if (tok.startsWith('##')) {
        this.contToId.set(tok.slice(2), id)
        if (n - 2 > maxCont) maxCont = n - 2
      }
    })
    // Later duplicates win in HF's dict; re-set so contToId agrees with tokenToId.
    for (const [tok, id] of this.tokenToId) if (tok.startsWith('##')) this.contToId.set(tok.slice(2), id)
    this.maxTokenCps = maxTok
    this.maxContCps = maxCont
    const where = opts.source ? ` in ${opts.source}` : ''
    const missing = Object.values(this.specialTokens).filter((t) => !this.tokenToId.has(t))
    if (missing.length > 0) throw new VocabError(`special token(s) ${missing.join(', ')} missing from the vocabulary${where}`)
    this.padId = this.tokenToId.get(this.specialTokens.pad)!
    this.unkId = this.tokenToId.get(this.specialTokens.unk)!
    this.clsId = this.tokenToId.get(this.specialTokens.cls)!
    this.sepId = this.tokenToId.get(this.specialTokens.sep)!
    this.maskId = this.tokenToId.get(this.specialTokens.mask)!
    this.basic = new BasicTokenizer({
      lowercase: opts.lowercase,
      stripAccents: opts.stripAccents,
      tokenizeChineseChars: opts.tokenizeChineseChars,
      specialTokens: opts.matchSpecialTokensInText === false ? [] : Object.values(this.specialTokens),
    })
  }

  static fromVocab(tokens: readonly string[], opts: WordPieceTokenizerOptions): WordPieceTokenizer {
    return new WordPieceTokenizer(tokens, opts)
  }

  static fromVocabFile(path: string, opts: WordPieceTokenizerOptions): WordPieceTokenizer {
    return new WordPieceTokenizer(readVocabFile(path), { source: path, ...opts })
  }

  get vocabSize(): number {
    return this.vocab.length
  }

  /** Id of a token, or the [UNK] id when absent (HF convert_tokens_to_ids). */
  idOf(token: string): number {
    return this.tokenToId.get(token) ?? this.unkId
  }

  has(token: string): boolean {
    return this.tokenToId.has(token)
  }

  tokenOf(id: number): string {
    const t = this.vocab[id]
    if (t === undefined) throw new RangeError(`token id ${id} outside the vocabulary (size ${this.vocab.length})`)
    return t
  }

  /**
   * Pieces of `text` without special tokens. With `words` (pre-tokenised text, e.g. CoNLL
   * tokens), each word span is tokenised on its own (HF is_split_into_words) and wordIndex
   * refers to `words`; text outside the spans is ignored. A word that yields no pieces (only
   * control chars) has no piece pointing at it.
   */
  tokenize(text: string, words?: ReadonlyArray<readonly [number, number]>): Tokenization {
    const res: Tokenization = { tokens: [], ids: [], offsets: [], wordIndex: [], wordOffsets: [] }
    const basic: BasicToken[] = []
    if (words === undefined) {
      this.basic.tokenizeInto(text, 0, text.length, basic)
      for (let w = 0; w < basic.length; w++) {
        res.wordOffsets.push([basic[w].start, basic[w].end])
        this.pushPieces(basic[w], w, res)
      }
    } else {
      for (let w = 0; w < words.length; w++) {
        const [s, e] = words[w]
        if (!(s >= 0 && e >= s && e <= text.length)) throw new RangeError(`word ${w} span [${s}, ${e}) outside the text (length ${text.length})`)
        res.wordOffsets.push([s, e])
        basic.length = 0
        this.basic.tokenizeInto(text, s, e, basic)
        for (const b of basic) this.pushPieces(b, w, res)
      }
    }
    return res
  }

  /** tokenize + [CLS] … [SEP] (offsets [0, 0], wordIndex -1). `maxLength` truncates the pieces. */
  encode(
    text: string,
    opts: { addSpecialTokens?: boolean; maxLength?: number; words?: ReadonlyArray<readonly [number, number]> } = {},
  ): Encoding {
    const t = this.tokenize(text, opts.words)
    const add = opts.addSpecialTokens ?? true
    let n = t.ids.length
    if (opts.maxLength !== undefined) n = Math.max(0, Math.min(n, opts.maxLength - (add ? 2 : 0)))
    const enc: Encoding = {
      tokens: [],
      ids: [],
      offsets: [],
      wordIndex: [],
      wordOffsets: t.wordOffsets,
      attentionMask: [],
      tokenTypeIds: [],
      specialTokensMask: [],
    }
    const push = (tok: string, id: number, off: [number, number], w: number, special: number) => {
      enc.tokens.push(tok)
      enc.ids.push(id)
      enc.offsets.push(off)
      enc.wordIndex.push(w)
      enc.attentionMask.push(1)
      enc.tokenTypeIds.push(0)
      enc.specialTokensMask.push(special)
    }
    if (add) push(this.specialTokens.cls, this.clsId, [0, 0], -1, 1)
    for (let k = 0; k < n; k++) push(t.tokens[k], t.ids[k], t.offsets[k], t.wordIndex[k], 0)
    if (add) push(this.specialTokens.sep, this.sepId, [0, 0], -1, 1)
    return enc
  }

  /** HF convert_tokens_to_string for ids: join, glue "##" pieces. */
  decode(ids: ArrayLike<number>, opts: { skipSpecialTokens?: boolean } = {}): string {
    const specials = new Set([this.padId, this.clsId, this.sepId, this.maskId, this.unkId])
    const toks: string[] = []
    for (let k = 0; k < ids.length; k++) {
      if (opts.skipSpecialTokens && specials.has(ids[k])) continue
      toks.push(this.tokenOf(ids[k]))
    }
    return toks.join(' ').replace(/ ##/g, '').trim()
  }

  /** WordPiece pieces of one normalised word as flat [cpFrom, cpTo, id] triples. */
  wordPieces(word: string): Int32Array {
    let cached = this.wordCache.get(word)
    if (cached !== undefined) return cached
    cached = this.computeWordPieces(word)
    if (this.wordCache.size >= WORD_CACHE_LIMIT) this.wordCache.clear()
    this.wordCache.set(word, cached)
    return cached
  }

  private computeWordPieces(word: string): Int32Array {
    // Index by code point; for BMP-only words code units are code points and slice() is exact.
    let chars: string[] | null = null
    for (let k = 0; k < word.length; k++) {
      const c = word.charCodeAt(k)
      if (c >= 0xd800 && c <= 0xdfff) {
        chars = Array.from(word)
        break
      }
    }
    const n = chars ? chars.length : word.length
    if (n > this.maxInputCharsPerWord) return Int32Array.of(0, n, this.unkId)
    const sub = chars ? (a: number, b: number) => chars!.slice(a, b).join('') : (a: number, b: number) => word.slice(a, b)
    const out: number[] = []
    let s = 0
    while (s < n) {
      const map = s === 0 ? this.tokenToId : this.contToId
      let e = Math.min(n, s + (s === 0 ? this.maxTokenCps : this.maxContCps))
      let found = -1
      while (e > s) {
        const id = map.get(sub(s, e))
        if (id !== undefined) {
          found = id
          break
        }
        e--
      }
      if (found < 0) return Int32Array.of(0, n, this.unkId)
      out.push(s, e, found)
      s = e
    }
    return Int32Array.from(out)
  }

  private pushPieces(b: BasicToken, word: number, res: Tokenization): void {
    if (b.special) {
      const id = this.tokenToId.get(b.text)!
      res.tokens.push(this.vocab[id])
      res.ids.push(id)
      res.offsets.push([b.start, b.end])
      res.wordIndex.push(word)
      return
    }
    const p = this.wordPieces(b.text)
    for (let k = 0; k < p.length; k += 3) {
      const from = p[k]
      const to = p[k + 1]
      const id = p[k + 2]
      let start: number
      let end: number
      if (b.cpStarts === null) {
        start = b.start + from
        end = b.start + to
      } else {
        start = b.cpStarts[from]
        end = b.cpEnds![from]
        for (let q = from + 1; q < to; q++) {
          if (b.cpStarts[q] < start) start = b.cpStarts[q]
          if (b.cpEnds![q] > end) end = b.cpEnds![q]
        }
      }
      res.tokens.push(this.vocab[id])
      res.ids.push(id)
      res.offsets.push([start, end])
      res.wordIndex.push(word)
    }
  }
}

function cpLength(s: string): number {
  let n = 0
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k)
    if (!(c >= 0xdc00 && c <= 0xdfff && k > 0 && s.charCodeAt(k - 1) >= 0xd800 && s.charCodeAt(k - 1) <= 0xdbff)) n++
  }
  return n
}
