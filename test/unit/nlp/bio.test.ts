import { join } from 'node:path'
import {
  IGNORE_INDEX,
  alignLabels,
  buildLabelMap,
  decodeSpans,
  labelMapFromLabels,
  spansToWordTags,
  tagsToChunks,
  wordTagsFromPieces,
} from '@core/nlp/bio'
import { WordPieceTokenizer } from '@core/nlp/tokenizer'

const tk = WordPieceTokenizer.fromVocabFile(join(__dirname, '../../fixtures/nlp/vocab.txt'), { lowercase: true })

describe('buildLabelMap', () => {
  it('orders O, then B-/I- per type in sorted order', () => {
    const m = buildLabelMap(['Disease', 'Chemical', 'Disease'])
    expect(m.labels).toEqual(['O', 'B-Chemical', 'I-Chemical', 'B-Disease', 'I-Disease'])
    expect(m.label2id).toEqual({ O: 0, 'B-Chemical': 1, 'I-Chemical': 2, 'B-Disease': 3, 'I-Disease': 4 })
    expect(m.id2label[3]).toBe('B-Disease')
    expect(m.types).toEqual(['Chemical', 'Disease'])
    expect(buildLabelMap([]).labels).toEqual(['O'])
    expect(() => buildLabelMap(['Gene product'])).toThrow(/whitespace/)
  })

  it('rebuilds a map from a checkpoint label list and validates it', () => {
    expect(labelMapFromLabels(['B-Gene', 'I-Gene', 'O']).label2id.O).toBe(2)
    expect(() => labelMapFromLabels(['O', 'B-Gene'])).toThrow(/I-Gene/)
    expect(() => labelMapFromLabels(['O', 'X-Gene'])).toThrow(/not "O"/)
  })
})

describe('spansToWordTags', () => {
  const words: Array<[number, number]> = [[0, 4], [5, 9], [10, 14], [15, 19]]
  it('tags B on the first overlapping word, I on the rest', () => {
    expect(spansToWordTags([{ start: 5, end: 14, type: 'X' }], words).tags).toEqual(['O', 'B-X', 'I-X', 'O'])
  })
  it('takes a whole word when a mention starts or ends inside it', () => {
    expect(spansToWordTags([{ start: 7, end: 12, type: 'X' }], words).tags).toEqual(['O', 'B-X', 'I-X', 'O'])
  })
  it('keeps adjacent mentions apart with B', () => {
    const r = spansToWordTags([{ start: 10, end: 14, type: 'X' }, { start: 0, end: 9, type: 'X' }], words)
    expect(r.tags).toEqual(['B-X', 'I-X', 'B-X', 'O'])
  })
  it('keeps the longer of overlapping mentions and reports the other', () => {
    const inner = { start: 5, end: 9, type: 'Y' }
    const r = spansToWordTags([inner, { start: 0, end: 14, type: 'X' }], words)
    expect(r.tags).toEqual(['B-X', 'I-X', 'I-X', 'O'])
    expect(r.skipped).toEqual([inner])
  })
  it('reports mentions that cover no word', () => {
    expect(spansToWordTags([{ start: 4, end: 5, type: 'X' }], words).skipped).toHaveLength(1)
  })
})

describe('alignLabels', () => {
  const labelMap = buildLabelMap(['Disease', 'Gene'])
  it('labels first pieces and ignores the others and specials', () => {
    const text = 'BRCA1 tumors'
    const enc = tk.encode(text)
    expect(enc.tokens).toEqual(['[CLS]', 'brca', '##1', 'tumor', '##s', '[SEP]'])
    const labels = alignLabels(
      [
        { start: 0, end: 5, type: 'Gene' },
        { start: 6, end: 12, type: 'Disease' },
      ],
      enc.offsets,
      enc.wordIndex,
      labelMap,
    )
    expect(Array.from(labels)).toEqual([IGNORE_INDEX, labelMap.label2id['B-Gene'], IGNORE_INDEX, labelMap.label2id['B-Disease'], IGNORE_INDEX, IGNORE_INDEX])
  })

  it('spreads a mention over the basic-token words inside it', () => {
    const enc = tk.tokenize('the IL-2 receptor')
    const labels = alignLabels([{ start: 4, end: 17, type: 'Gene' }], enc.offsets, enc.wordIndex, labelMap)
    const B = labelMap.label2id['B-Gene']
    const I = labelMap.label2id['I-Gene']
    expect(enc.tokens).toEqual(['the', 'il', '-', '2', 'receptor'])
    expect(Array.from(labels)).toEqual([0, B, I, I, I])
  })

  it('ignores or rejects unknown types', () => {
    const enc = tk.tokenize('tumor')
    expect(Array.from(alignLabels([{ start: 0, end: 5, type: 'Chemical' }], enc.offsets, enc.wordIndex, labelMap))).toEqual([0])
    expect(() => alignLabels([{ start: 0, end: 5, type: 'Chemical' }], enc.offsets, enc.wordIndex, labelMap, { unknownType: 'error' })).toThrow(/Chemical/)
  })
})

describe('decodeSpans (conlleval chunk rules)', () => {
  const offs = (n: number): Array<[number, number]> => Array.from({ length: n }, (_, i) => [i * 2, i * 2 + 1] as [number, number])
  it('starts an entity at I-X after O', () => {
    expect(decodeSpans(['O', 'I-X', 'I-X'], offs(3))).toEqual([{ start: 2, end: 5, type: 'X' }])
  })
  it('starts an entity at I-X at the start of the sentence', () => {
    expect(decodeSpans(['I-X', 'O'], offs(2))).toEqual([{ start: 0, end: 1, type: 'X' }])
  })
  it('splits at a type change and at every B', () => {
    expect(decodeSpans(['B-X', 'I-Y', 'B-Y', 'B-Y', 'I-Y'], offs(5))).toEqual([
      { start: 0, end: 1, type: 'X' },
      { start: 2, end: 3, type: 'Y' },
      { start: 4, end: 5, type: 'Y' },
      { start: 6, end: 9, type: 'Y' },
    ])
  })
  it('closes an entity at the end of the sequence', () => {
    expect(tagsToChunks(['O', 'B-X', 'I-X'])).toEqual([{ type: 'X', start: 1, end: 3 }])
  })
  it('checks lengths', () => {
    expect(() => decodeSpans(['O'], offs(2))).toThrow()
  })
})

describe('wordTagsFromPieces', () => {
  it('takes the first piece of each word; words without pieces are O', () => {
    const m = buildLabelMap(['X'])
    // pieces: [CLS] w0 w0 w1 [SEP]; word 2 has no piece
    expect(wordTagsFromPieces([0, 1, 2, 2, 0], [-1, 0, 0, 1, -1], 3, m)).toEqual(['B-X', 'I-X', 'O'])
  })
})
