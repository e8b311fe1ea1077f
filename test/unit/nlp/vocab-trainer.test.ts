import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { WordPieceTokenizer } from '@core/nlp/tokenizer'
import { SPECIAL_TOKENS, countWords, readVocab, trainFromWordCounts, trainWordPieceVocab, trainWordVocab, writeVocab } from '@core/nlp/vocab-trainer'

const CORPUS = [
  'Mutations in BRCA1 and BRCA2 increase the risk of breast cancer.',
  'BRCA1-associated breast cancers are often triple-negative.',
  'The tumour suppressor p53 is mutated in most human cancers; p53-null mice develop tumours.',
  'Cisplatin-induced nephrotoxicity was reduced in treated mice (3.5 mg/kg).',
  'Naïve T cells and β-catenin signalling in colorectal cancer.',
]

describe('trainWordPieceVocab', () => {
  it('merges by pair frequency with deterministic tie-breaks (hand-computed)', () => {
    // words: aab x3, ab x1 -> symbols a ##a ##b / a ##b
    // pairs: (a,##a)=3 -> "aa", (##a,##b)=3 -> "##ab", (a,##b)=1
    // tie at 3: smaller merged token wins, "##ab" < "aa" -> merge ##a ##b first;
    // then (a,##ab)=3 -> "aab"; then only (a,##b)=1 < minFrequency 2 remains.
    const res = trainFromWordCounts(new Map([['aab', 3], ['ab', 1]]), { vocabSize: 100, lowercase: false })
    expect(res.tokens).toEqual([...SPECIAL_TOKENS, 'a', 'b', '##a', '##b', '##ab', 'aab'])
    expect(res.merges).toBe(2)
    // minFrequency 1 allows the last merge
    const res1 = trainFromWordCounts(new Map([['aab', 3], ['ab', 1]]), { vocabSize: 100, lowercase: false, minFrequency: 1 })
    expect(res1.tokens.slice(9)).toEqual(['##ab', 'aab', 'ab'])
    // vocabSize stops merging
    expect(trainFromWordCounts(new Map([['aab', 3], ['ab', 1]]), { vocabSize: 10, lowercase: false }).tokens).toHaveLength(10)
  })

  it('merges repeated symbols left to right without overlap', () => {
    // "aaaa" x5: a ##a ##a ##a; (##a,##a)=10 > (a,##a)=5 -> "##aa", applied once per word
    // (left to right: a ##aa ##a); then (a,##aa)=5 ties (##aa,##a)=5 and "##aaa" < "aaa";
    // then a ##aaa -> "aaaa".
    const res = trainFromWordCounts(new Map([['aaaa', 5]]), { vocabSize: 100, lowercase: false })
    expect(res.tokens.slice(7)).toEqual(['##aa', '##aaa', 'aaaa'])
    const tk = WordPieceTokenizer.fromVocab(res.tokens, { lowercase: false })
    expect(tk.tokenize('aaaa aaa').tokens).toEqual(['aaaa', 'a', '##aa'])
  })

  it('starts with the special tokens at ids 0..4 and keeps every character', () => {
    const { tokens } = trainWordPieceVocab(CORPUS, { vocabSize: 200, lowercase: true })
    expect(tokens.slice(0, 5)).toEqual(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'])
    for (const ch of ['β', 'i', ';', '3']) {
      expect(tokens).toContain(ch)
      expect(tokens).toContain('##' + ch)
    }
    expect(tokens).not.toContain('ï') // uncased training strips accents
    expect(new Set(tokens).size).toBe(tokens.length)
    expect(tokens.length).toBeLessThanOrEqual(200)
  })

  it('never produces [UNK] on its training text and learns frequent words', () => {
    const { tokens } = trainWordPieceVocab(CORPUS, { vocabSize: 300, lowercase: false })
    const tk = WordPieceTokenizer.fromVocab(tokens, { lowercase: false })
    for (const text of CORPUS) expect(tk.tokenize(text).tokens).not.toContain('[UNK]')
    expect(tokens).toContain('BRCA')
    expect(tokens).toContain('cancer')
  })

  it('is deterministic whatever the order of the input', () => {
    const a = trainWordPieceVocab(CORPUS, { vocabSize: 150, lowercase: true }).tokens
    const b = trainWordPieceVocab([...CORPUS].reverse(), { vocabSize: 150, lowercase: true }).tokens
    expect(b).toEqual(a)
  })

  it('keeps the whole alphabet even when vocabSize is smaller', () => {
    const { tokens, merges } = trainWordPieceVocab(['abc xyz'], { vocabSize: 6, lowercase: false })
    expect(tokens).toHaveLength(5 + 12)
    expect(merges).toBe(0)
    expect(() => trainWordPieceVocab(['x'], { vocabSize: 3, lowercase: false })).toThrow(RangeError)
  })

  it('counts normalised basic-tokenizer words', () => {
    const counts = countWords(['Café, café.'], { lowercase: true })
    expect([...counts.entries()].sort()).toEqual([[',', 1], ['.', 1], ['cafe', 2]])
  })
})

describe('vocab.txt IO', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fbn-vt-'))

  it('round-trips one token per line', () => {
    const p = join(dir, 'vocab.txt')
    const tokens = [...SPECIAL_TOKENS, 'a', '##a', 'β']
    writeVocab(p, tokens)
    expect(readFileSync(p, 'utf8')).toBe(tokens.join('\n') + '\n')
    expect(readVocab(p)).toEqual(tokens)
    expect(WordPieceTokenizer.fromVocabFile(p, { lowercase: false }).tokenize('aa β').ids).toEqual([5, 6, 7])
  })

  it('rejects tokens with line breaks and names missing files', () => {
    expect(() => writeVocab(join(dir, 'bad.txt'), ['a\nb'])).toThrow(/line break/)
    expect(() => readVocab(join(dir, 'missing.txt'))).toThrow(/missing\.txt/)
  })
})

describe('trainWordVocab (train --word-level)', () => {
  it('keeps the most frequent whole words, ties by code units, capped by vocabSize', () => {
    const v = trainWordVocab(['b a b c', 'a b d', '[MASK] b'], { vocabSize: 8, lowercase: true })
    // counts: b 4, a 2, then c, d, 'mask' 1 each — '[mask]' is split into [ mask ] by the basic tokenizer
    expect(v.tokens.slice(0, SPECIAL_TOKENS.length)).toEqual([...SPECIAL_TOKENS])
    expect(v.tokens.slice(SPECIAL_TOKENS.length)).toEqual(['b', 'a', '[']) // '[' < ']' < 'c' < 'd' < 'mask'
    expect(v.tokens.some((t) => t.startsWith('##'))).toBe(false)
    expect(trainWordVocab(['b a b c', 'a b d'], { vocabSize: 100, lowercase: true, minFrequency: 2 }).tokens.slice(5)).toEqual(['b', 'a'])
    expect(() => trainWordVocab(['a'], { vocabSize: 3, lowercase: true })).toThrow(/vocabSize/)
  })

  it('gives the WordPiece tokenizer one piece per word: a listed word, else one [UNK]', () => {
    const v = trainWordVocab(CORPUS, { vocabSize: 40, lowercase: true })
    expect(v.tokens).toContain('cancer')
    expect(v.tokens).toContain('brca1')
    const tok = new WordPieceTokenizer(v.tokens, { lowercase: true })
    const enc = tok.tokenize('Breast cancer in BRCA1 mice: cancerous tumours.')
    // one position per word; 'cancerous' is not split into cancer + ##ous
    expect(enc.wordIndex).toEqual(enc.ids.map((_, i) => i))
    expect(enc.tokens).toEqual(['breast', 'cancer', 'in', 'brca1', 'mice', ':', '[UNK]', 'tumours', '.'].map((t) => (v.tokens.includes(t) ? t : '[UNK]')))
    expect(enc.tokens[6]).toBe('[UNK]')

  })
})
