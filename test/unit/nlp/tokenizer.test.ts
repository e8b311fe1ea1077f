// Reference cases for BERT tokenisation. Expected tokens follow HuggingFace's Python
// BertTokenizer (tokenization_bert.py) applied to test/fixtures/nlp/vocab.txt; each case says
// which rule of that implementation it exercises.
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BasicTokenizer, isBertPunctuation } from '@core/nlp/basic-tokenizer'
import { WordPieceTokenizer } from '@core/nlp/tokenizer'
import { parseVocabText, VocabError } from '@core/nlp/vocab'

const VOCAB_PATH = join(__dirname, '../../fixtures/nlp/vocab.txt')
const VOCAB = parseVocabText(readFileSync(VOCAB_PATH, 'utf8'))
const cased = WordPieceTokenizer.fromVocabFile(VOCAB_PATH, { lowercase: false })
const uncased = WordPieceTokenizer.fromVocabFile(VOCAB_PATH, { lowercase: true })

type Case = [name: string, text: string, lowercase: boolean, tokens: string[], offsets: Array<[number, number]>]

const CASES: Case[] = [
  // apostrophe is punctuation; "Don" is not in the cased vocab -> [UNK] covering the word
  ["don't, cased", "Don't", false, ['[UNK]', "'", 't'], [[0, 3], [3, 4], [4, 5]]],
  ["don't, uncased", "Don't", true, ['don', "'", 't'], [[0, 3], [3, 4], [4, 5]]],
  // "." and "/" split; "5mg" is one basic token that WordPiece cannot build (no "##mg") -> [UNK]
  ['dose', '3.5mg/kg', true, ['3', '.', '[UNK]', '/', 'kg'], [[0, 1], [1, 2], [2, 5], [5, 6], [6, 8]]],
  ['hyphen, cased', 'IL-2', false, ['IL', '-', '2'], [[0, 2], [2, 3], [3, 4]]],
  ['hyphen, uncased', 'IL-2', true, ['il', '-', '2'], [[0, 2], [2, 3], [3, 4]]],
  ['greek letter', 'β-catenin', true, ['β', '-', 'catenin'], [[0, 1], [1, 2], [2, 9]]],
  // uncased: lower() then NFD and Mn removed; offsets still index the original text
  ['accents uncased', 'CAFÉ NAÏVE', true, ['cafe', 'naive'], [[0, 4], [5, 10]]],
  ['accents cased', 'Café naïve', false, ['[UNK]', 'naïve'], [[0, 4], [5, 10]]],
  // decomposed input: NFC first, so cased "e + U+0301" finds "café"; the mark belongs to "e"
  ['combining mark cased', 'cafe\u0301', false, ['café'], [[0, 5]]],
  ['combining mark uncased', 'cafe\u0301 x', true, ['cafe', 'x'], [[0, 5], [6, 7]]],
  ['stacked marks', 'e\u0308\u0304', true, ['e'], [[0, 3]]],
  ['leading mark', '\u0301abc', true, ['a', '##b', '##c'], [[1, 2], [2, 3], [3, 4]]],
  // CJK ideographs are words of their own, also inside a word
  ['chinese', '中国人', false, ['中', '国', '人'], [[0, 1], [1, 2], [2, 3]]],
  ['chinese inside word', 'ab中cd', false, ['a', '##b', '中', 'c', '##d'], [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5]]],
  // \t \n \r are whitespace, not control; NBSP and EM SPACE (Zs) are whitespace
  ['tabs and newlines', 'a\tb\nc\r\nd', false, ['a', 'b', 'c', 'd'], [[0, 1], [2, 3], [4, 5], [7, 8]]],
  ['unicode spaces', 'The  patients\u00a0were\u2003treated', true, ['the', 'patients', 'were', 'treated'], [[0, 3], [5, 13], [14, 18], [19, 26]]],
  ['line/paragraph separators', '\u2028a\u2029b', false, ['a', 'b'], [[1, 2], [3, 4]]],
  // NUL, U+FFFD and Cf/Cc chars are deleted without separating words
  ['removed chars', '\u0000a\ufffdb', false, ['a', '##b'], [[1, 2], [3, 4]]],
  ['zero-width space joins', 'tum\u200bor', false, ['tumor'], [[0, 6]]],
  ['soft hyphen joins', 'tu\u00admor', false, ['tumor'], [[0, 6]]],
  ['lone surrogate removed', '\ud800x', false, ['x'], [[1, 2]]],
  // ASCII symbols count as punctuation (_is_punctuation), so do Unicode P* (quotes)
  ['symbols', '10.0%', false, ['10', '.', '0', '%'], [[0, 2], [2, 3], [3, 4], [4, 5]]],
  ['curly quotes', '\u201ctumor\u201d', false, ['\u201c', 'tumor', '\u201d'], [[0, 1], [1, 6], [6, 7]]],
  ['gene with digits', 'BRCA1/2', true, ['brca', '##1', '/', '2'], [[0, 4], [4, 5], [5, 6], [6, 7]]],
  ['p53', 'p53-dependent', false, ['p', '##53', '-', '[UNK]'], [[0, 1], [1, 3], [3, 4], [4, 13]]],
  // special-token literals are kept whole (HF splits them out first); other case is plain text
  ['special tokens', '[CLS] hello [SEP]', true, ['[CLS]', 'hello', '[SEP]'], [[0, 5], [6, 11], [12, 17]]],
  ['special inside word', 'hello[MASK]world', false, ['hello', '[MASK]', 'world'], [[0, 5], [5, 11], [11, 16]]],
  ['not special', '[cls]', false, ['[', 'c', '##l', '##s', ']'], [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5]]],
  // lower() can lengthen: U+0130 -> "i" + U+0307, whose mark is then stripped
  ['dotted capital I', '\u0130', true, ['i'], [[0, 1]]],
  // astral chars count as one char; unknown -> [UNK] spanning both code units
  ['emoji', '\ud83d\ude00 tumor', false, ['[UNK]', 'tumor'], [[0, 2], [3, 8]]],
  ['astral CJK', '\ud840\udc00x', false, ['[UNK]', 'x'], [[0, 2], [2, 3]]],
  // more than 100 chars -> one [UNK]; exactly 100 is tokenised
  ['101 chars', 'x'.repeat(101), false, ['[UNK]'], [[0, 101]]],
  ['empty', '', false, [], []],
  ['only spaces', ' \t\n ', false, [], []],
]

describe('WordPieceTokenizer reference cases (HF BertTokenizer semantics)', () => {
  it.each(CASES)('%s', (_name, text, lowercase, tokens, offsets) => {
    const tk = lowercase ? uncased : cased
    const r = tk.tokenize(text)
    expect(r.tokens).toEqual(tokens)
    expect(r.offsets).toEqual(offsets)
    // ids are vocab line numbers
    expect(r.ids).toEqual(tokens.map((t) => VOCAB.lastIndexOf(t)))
  })

  it('tokenises a 100-char word and counts astral chars as one', () => {
    const r = cased.tokenize('a'.repeat(100))
    expect(r.tokens).toEqual(['a', ...new Array(99).fill('##a')])
    const astral = '\ud835\udec2' // MATHEMATICAL BOLD SMALL ALPHA, 2 code units
    const tk = WordPieceTokenizer.fromVocab(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', astral, '##' + astral], { lowercase: false })
    expect(tk.tokenize(astral.repeat(100)).tokens).toHaveLength(100)
    expect(tk.tokenize(astral.repeat(101)).tokens).toEqual(['[UNK]'])
    expect(tk.tokenize(astral.repeat(2)).offsets).toEqual([[0, 2], [2, 4]])
  })

  it('uses greedy longest-match-first, not the best segmentation', () => {
    // "tumor" + "##igenesis" exists, but greedy takes the longest prefix first
    expect(cased.tokenize('tumorigenesis').tokens).toEqual(['tumor', '##igenesis'])
    // longest prefix "tumor" leaves "s" -> "##s"
    expect(cased.tokenize('tumors').tokens).toEqual(['tumor', '##s'])
    // longest prefix "na" would leave "##ive": fine; "naive" itself is preferred as longer
    expect(cased.tokenize('naive').tokens).toEqual(['naive'])
    // once greedy commits, a dead end makes the WHOLE word [UNK] (no backtracking), although
    // "a" + "##bc" would have worked
    const tk = WordPieceTokenizer.fromVocab(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'a', 'ab', '##bc'], { lowercase: false })
    expect(tk.tokenize('abc abc').tokens).toEqual(['[UNK]', '[UNK]'])
    expect(tk.tokenize('abc').offsets).toEqual([[0, 3]])
  })

  it('maps every piece back to the original text', () => {
    const text = 'The BRCA1/2 patients (n = 10) were treated with 3.5 mg/kg of IL-2.'
    const r = cased.tokenize(text)
    r.tokens.forEach((t, k) => {
      if (t === '[UNK]') return
      expect(text.slice(r.offsets[k][0], r.offsets[k][1])).toBe(t.replace(/^##/, ''))
    })
    // pieces of one word share the word index, words increase
    expect(r.wordIndex[0]).toBe(0)
    for (let k = 1; k < r.wordIndex.length; k++) expect(r.wordIndex[k] - r.wordIndex[k - 1]).toBeGreaterThanOrEqual(0)
    expect(r.wordOffsets[r.wordIndex[r.tokens.indexOf('BRCA')]]).toEqual([4, 9]) // BRCA + ##1
  })

  it('exposes vocab, ids of special tokens and idOf', () => {
    expect([cased.padId, cased.unkId, cased.clsId, cased.sepId, cased.maskId]).toEqual([0, 1, 2, 3, 4])
    expect(cased.vocab).toEqual(VOCAB)
    expect(cased.vocabSize).toBe(VOCAB.length)
    expect(cased.idOf('tumor')).toBe(VOCAB.indexOf('tumor'))
    expect(cased.idOf('no-such-token')).toBe(cased.unkId)
  })

  it('encode adds [CLS]/[SEP] and truncates', () => {
    const e = cased.encode('IL-2 tumor')
    expect(e.tokens).toEqual(['[CLS]', 'IL', '-', '2', 'tumor', '[SEP]'])
    expect(e.ids[0]).toBe(2)
    expect(e.ids[e.ids.length - 1]).toBe(3)
    expect(e.wordIndex).toEqual([-1, 0, 1, 2, 3, -1])
    expect(e.offsets[0]).toEqual([0, 0])
    expect(e.attentionMask).toEqual([1, 1, 1, 1, 1, 1])
    expect(e.specialTokensMask).toEqual([1, 0, 0, 0, 0, 1])
    expect(cased.encode('IL-2 tumor', { maxLength: 4 }).tokens).toEqual(['[CLS]', 'IL', '-', '[SEP]'])
    expect(cased.decode(e.ids, { skipSpecialTokens: true })).toBe('IL - 2 tumor')
    expect(cased.decode(cased.tokenize('tumors').ids)).toBe('tumors')
  })

  it('tokenises caller-given words separately (is_split_into_words)', () => {
    const text = 'IL-2 receptor\ntumors'
    const words: Array<[number, number]> = [[0, 4], [5, 13], [14, 20]]
    const r = uncased.tokenize(text, words)
    expect(r.tokens).toEqual(['il', '-', '2', 'receptor', 'tumor', '##s'])
    expect(r.wordIndex).toEqual([0, 0, 0, 1, 2, 2])
    expect(r.wordOffsets).toEqual(words)
    expect(() => uncased.tokenize(text, [[0, 99]])).toThrow(/outside the text/)
  })

  it('can treat special-token literals as text', () => {
    const tk = WordPieceTokenizer.fromVocab(VOCAB, { lowercase: false, matchSpecialTokensInText: false })
    expect(tk.tokenize('[SEP]').tokens).toEqual(['[', '[UNK]', ']'])
  })

  it('keeps accents when cased unless stripAccents is set', () => {
    const tk = WordPieceTokenizer.fromVocab(VOCAB, { lowercase: false, stripAccents: true })
    expect(tk.tokenize('naïve Café').tokens).toEqual(['naive', '[UNK]'])
    const basic = new BasicTokenizer({ lowercase: true, stripAccents: false })
    expect(basic.words('Café')).toEqual(['café'])
  })

  it('final sigma follows whole-word lower-casing', () => {
    const basic = new BasicTokenizer({ lowercase: true })
    const [t] = basic.tokenize('ΟΔΟΣ')
    expect(t.text).toBe('οδος') // NFD+strip keeps ς; lower() gives final sigma at word end
    expect([t.start, t.end]).toEqual([0, 4])
  })

  it('classifies punctuation like BERT', () => {
    for (const c of '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~') expect(isBertPunctuation(c.charCodeAt(0))).toBe(true)
    expect(isBertPunctuation('\u00b7'.charCodeAt(0))).toBe(true) // Po
    expect(isBertPunctuation('\u2013'.charCodeAt(0))).toBe(true) // Pd
    expect(isBertPunctuation('a'.charCodeAt(0))).toBe(false)
    expect(isBertPunctuation('\u00b1'.charCodeAt(0))).toBe(false) // ± is Sm, not punctuation
  })
})

describe('vocabulary files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fbn-vocab-'))

  it('reads CRLF files and a BOM like Python universal newlines', () => {
    const p = join(dir, 'crlf.txt')
    writeFileSync(p, '\ufeff[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\n[MASK]\r\nx\r\n')
    const tk = WordPieceTokenizer.fromVocabFile(p, { lowercase: false })
    expect(tk.vocab).toEqual(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'x'])
    expect(tk.tokenize('x').ids).toEqual([5])
  })

  it('gives a repeated token its last id, like HF load_vocab', () => {
    const tk = WordPieceTokenizer.fromVocab(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'a', '##b', 'a', '##b'], { lowercase: false })
    expect(tk.tokenize('ab').ids).toEqual([7, 8])
    expect(tk.vocabSize).toBe(9)
  })

  it('names the missing file or the missing special tokens', () => {
    expect(() => WordPieceTokenizer.fromVocabFile(join(dir, 'nope.txt'), { lowercase: true })).toThrow(VocabError)
    expect(() => WordPieceTokenizer.fromVocabFile(join(dir, 'nope.txt'), { lowercase: true })).toThrow(/nope\.txt/)
    const p = join(dir, 'nospecial.txt')
    writeFileSync(p, '[PAD]\n[UNK]\nx\n')
    expect(() => WordPieceTokenizer.fromVocabFile(p, { lowercase: true })).toThrow(/\[CLS\], \[SEP\], \[MASK\].*nospecial\.txt/)
  })
})
