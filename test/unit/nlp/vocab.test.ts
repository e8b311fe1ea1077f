// tokenizer.json's WordPiece ids (issue 31 F6): checked, bounded by the number of tokens, the
// errors naming tokenizer.json and the token.
import { vocabFromTokenizerJson, VocabError } from '@core/nlp/vocab'

const FILE = '/models/x/tokenizer.json'
const wordPiece = (vocab: unknown) => ({ model: { type: 'WordPiece', vocab } })

function error(json: Record<string, unknown>): VocabError {
  try {
    vocabFromTokenizerJson(json, FILE)
  } catch (e) {
    expect(e).toBeInstanceOf(VocabError)
    expect((e as Error).message.startsWith(`${FILE}: `)).toBe(true)
    return e as VocabError
  }
  throw new Error('accepted')
}

describe('tokenizer.json WordPiece vocabulary', () => {
  it('orders tokens by id', () => {
    expect(vocabFromTokenizerJson(wordPiece({ '[PAD]': 0, b: 2, '[UNK]': 1, '##c': 3 }), FILE)).toEqual(['[PAD]', '[UNK]', 'b', '##c'])
  })

  it('refuses an id of 2^31-2 at once instead of allocating for it', () => {
    const t0 = performance.now()
    expect(error(wordPiece({ '[PAD]': 0, big: 2 ** 31 - 2 })).message).toMatch(/token "big" has id 2147483646; ids must be integers 0\.\.1/)
    expect(performance.now() - t0).toBeLessThan(100)
  })

  it('refuses missing, negative, fractional, non-numeric and shared ids', () => {
    expect(error(wordPiece({ a: 0, b: 2, c: 3 })).message).toMatch(/"c" has id 3/) // id 1 missing: some id is out of range
    expect(error(wordPiece({ a: 0, b: -1 })).message).toMatch(/"b" has id -1/)
    expect(error(wordPiece({ a: 0, b: 0.5 })).message).toMatch(/"b" has id 0\.5/)
    expect(error(wordPiece({ a: 0, b: '1' })).message).toMatch(/"b" has id "1"/)
    expect(error(wordPiece({ a: 0, b: 0 })).message).toMatch(/tokens "a" and "b" both have id 0/)
  })

  it('names tokenizer.json, not vocab.txt, when it holds no WordPiece vocabulary', () => {
    expect(error({ model: { type: 'BPE', vocab: { a: 0 } } }).message).toMatch(/model type "BPE" is not WordPiece/)
    expect(error({}).message).toMatch(/no "model" object/)
    expect(error(wordPiece([])).message).toMatch(/model\.vocab must be an object/)
    expect(error(wordPiece({})).message).toMatch(/model\.vocab is empty/)
  })
})
