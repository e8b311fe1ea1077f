// Expected numbers are conlleval.pl's (counts worked out by hand with its startOfChunk /
// endOfChunk rules), as fractions instead of percentages.
import { evaluateSpans, evaluateTags } from '@core/eval/metrics'

const counts = (r: { tp: number; fp: number; fn: number }) => [r.tp, r.fp, r.fn]

describe('evaluateTags (conlleval semantics)', () => {
  it('I-X after O starts a chunk (pred without B still matches)', () => {
    const r = evaluateTags([['B-X', 'I-X', 'O']], [['I-X', 'I-X', 'O']])
    expect(counts(r.overall)).toEqual([1, 0, 0])
    expect(r.overall.f1).toBe(1)
    expect(r.token_accuracy).toBeCloseTo(2 / 3, 12)
  })

  it('B-X I-Y is two chunks, neither matching B-X I-X', () => {
    const r = evaluateTags([['B-X', 'I-X']], [['B-X', 'I-Y']])
    expect(counts(r.overall)).toEqual([0, 2, 1])
    expect([r.overall.precision, r.overall.recall, r.overall.f1]).toEqual([0, 0, 0])
    expect(counts(r.types.X)).toEqual([0, 1, 1])
    expect(counts(r.types.Y)).toEqual([0, 1, 0])
  })

  it('I-X right after B-Y starts a new chunk (gold B-Y I-X = pred B-Y B-X)', () => {
    const r = evaluateTags([['B-Y', 'I-X']], [['B-Y', 'B-X']])
    expect(counts(r.overall)).toEqual([2, 0, 0])
    expect(r.token_accuracy).toBe(0.5)
  })

  it('sentence ends close chunks: a trailing entity counts, I-X opening the next sentence is new', () => {
    const gold = [['O', 'B-X'], ['I-X', 'O']]
    const r = evaluateTags(gold, gold)
    expect(counts(r.overall)).toEqual([2, 0, 0]) // concatenated, it would be 1 chunk
    const merged = evaluateTags([['O', 'B-X', 'I-X', 'O']], [['O', 'B-X', 'I-X', 'O']])
    expect(counts(merged.overall)).toEqual([1, 0, 0])
  })

  it('empty predictions: precision 0 by convention', () => {
    const r = evaluateTags([['B-X', 'O']], [['O', 'O']])
    expect(r.overall).toEqual({ precision: 0, recall: 0, f1: 0, tp: 0, fp: 0, fn: 1 })
    expect(r.types.X).toEqual({ precision: 0, recall: 0, f1: 0, tp: 0, fp: 0, fn: 1 })
  })

  it('no entities anywhere: all zero, accuracy 1, no types', () => {
    const r = evaluateTags([['O', 'O']], [['O', 'O']])
    expect(r.overall).toEqual({ precision: 0, recall: 0, f1: 0, tp: 0, fp: 0, fn: 0 })
    expect(r.types).toEqual({})
    expect(r.token_accuracy).toBe(1)
    expect(evaluateTags([], []).token_accuracy).toBe(0)
  })

  it('boundaries must match exactly', () => {
    expect(counts(evaluateTags([['B-X', 'I-X', 'O']], [['B-X', 'O', 'O']]).overall)).toEqual([0, 1, 1])
    // B-X B-X is two chunks, B-X I-X one
    const r = evaluateTags([['B-X', 'B-X']], [['B-X', 'I-X']])
    expect(counts(r.overall)).toEqual([0, 1, 2])
    expect(r.token_accuracy).toBe(0.5)
  })

  it('micro averages over types and reports per type', () => {
    const r = evaluateTags([['B-A', 'I-A', 'O', 'B-B', 'O', 'B-A']], [['B-A', 'I-A', 'O', 'B-A', 'O', 'I-A']])
    expect(counts(r.overall)).toEqual([2, 1, 1])
    expect(r.overall.precision).toBeCloseTo(2 / 3, 12)
    expect(r.overall.recall).toBeCloseTo(2 / 3, 12)
    expect(r.overall.f1).toBeCloseTo(2 / 3, 12)
    expect(r.types.A.precision).toBeCloseTo(2 / 3, 12)
    expect(r.types.A.recall).toBe(1)
    expect(r.types.A.f1).toBeCloseTo(0.8, 12)
    expect(r.types.B).toEqual({ precision: 0, recall: 0, f1: 0, tp: 0, fp: 0, fn: 1 })
    expect(Object.keys(r.types)).toEqual(['A', 'B'])
    expect(r.token_accuracy).toBeCloseTo(4 / 6, 12)
  })

  it('keeps hyphens inside a type', () => {
    const r = evaluateTags([['B-Gene-Protein', 'I-Gene-Protein']], [['B-Gene-Protein', 'I-Gene-Protein']])
    expect(Object.keys(r.types)).toEqual(['Gene-Protein'])
    expect(r.overall.f1).toBe(1)
  })

  it('rejects mismatched shapes', () => {
    expect(() => evaluateTags([['O']], [])).toThrow()
    expect(() => evaluateTags([['O']], [['O', 'O']])).toThrow(/sentence 0/)
  })
})

describe('evaluateSpans', () => {
  const gold = [
    {
      id: 'd1',
      text: 'BRCA1 causes breast cancer.',
      mentions: [
        { start: 0, end: 5, type: 'Gene' },
        { start: 13, end: 26, type: 'Disease' },
      ],
    },
    { id: 'd2', text: 'No entities here.', mentions: [] },
    { id: 'd3', text: 'IL-2 levels', mentions: [{ start: 0, end: 4, type: 'Gene' }], tokens: [[0, 4], [5, 11]] as Array<[number, number]> },
  ]
  const pred = [
    {
      id: 'd1',
      mentions: [
        { start: 0, end: 5, type: 'Gene' },
        { start: 0, end: 5, type: 'Gene' }, // duplicate counts once
        { start: 20, end: 26, type: 'Disease' }, // wrong start
      ],
    },
    // d2 missing: predicts nothing
    { id: 'd3', mentions: [{ start: 0, end: 4, type: 'Disease' }] }, // wrong type
    { id: 'dX', mentions: [{ start: 0, end: 1, type: 'Gene' }] }, // unknown document
  ]

  it('matches exact spans and types per document', () => {
    const r = evaluateSpans(gold, pred)
    expect(counts(r.overall)).toEqual([1, 3, 2])
    expect(r.overall.precision).toBe(0.25)
    expect(r.overall.recall).toBeCloseTo(1 / 3, 12)
    expect(r.overall.f1).toBeCloseTo(2 / 7, 12)
    expect(r.types.Gene).toEqual({ precision: 0.5, recall: 0.5, f1: 0.5, tp: 1, fp: 1, fn: 1 })
    expect(counts(r.types.Disease)).toEqual([0, 2, 1])
    // words: d1 BRCA1 causes breast cancer . (3/5 tags equal), d2 4/4, d3 (own tokens) 1/2
    expect(r.token_accuracy).toBeCloseTo(8 / 11, 12)
  })

  it('perfect predictions score 1', () => {
    const r = evaluateSpans(gold, gold)
    expect(r.overall.f1).toBe(1)
    expect(r.token_accuracy).toBe(1)
  })

  it('rejects duplicate document ids', () => {
    expect(() => evaluateSpans([gold[0], gold[0]], [])).toThrow(/d1/)
    expect(() => evaluateSpans(gold, [pred[0], pred[0]])).toThrow(/d1/)
  })
})
