import { makeWindows, mergeWindowPredictions, splitSentences, type PieceWindow } from '@core/nlp/windows'

/** wordIndex for words of the given piece counts */
const wordsOf = (...sizes: number[]) => sizes.flatMap((n, w) => new Array(n).fill(w))

function checkInvariants(wordIndex: number[], wins: PieceWindow[], maxLength: number) {
  expect(wins[0].start).toBe(0)
  expect(wins[wins.length - 1].end).toBe(wordIndex.length)
  for (let k = 0; k < wins.length; k++) {
    const w = wins[k]
    expect(w.end - w.start).toBeLessThanOrEqual(maxLength - 2)
    expect(w.end).toBeGreaterThan(w.start)
    if (k > 0) {
      expect(w.start).toBeGreaterThan(wins[k - 1].start)
      expect(w.start).toBeLessThanOrEqual(wins[k - 1].end) // no gap
      expect(w.end).toBeGreaterThan(wins[k - 1].end) // progress
    }
  }
}

describe('makeWindows', () => {
  it('returns one window when everything fits', () => {
    expect(makeWindows(wordsOf(1, 2, 3), { maxLength: 8 })).toEqual([{ start: 0, end: 6 }])
    expect(makeWindows([], { maxLength: 8 })).toEqual([])
  })

  it('never cuts a word and overlaps by the stride', () => {
    // 10 words of 3 pieces = 30 pieces; capacity 10 -> windows end on word edges (9 pieces)
    const wi = wordsOf(...new Array(10).fill(3))
    const wins = makeWindows(wi, { maxLength: 12, stride: 3 })
    checkInvariants(wi, wins, 12)
    for (const w of wins) {
      expect(w.start % 3).toBe(0)
      expect(w.end % 3 === 0 || w.end === wi.length).toBe(true)
    }
    expect(wins[0]).toEqual({ start: 0, end: 9 })
    expect(wins[1].start).toBe(6) // 9 - stride 3
  })

  it('moves a window start back to a word start (more overlap, never less)', () => {
    const wi = wordsOf(2, 2, 2, 2, 2, 2)
    const wins = makeWindows(wi, { maxLength: 8, stride: 1 }) // capacity 6
    checkInvariants(wi, wins, 8)
    expect(wins[0]).toEqual({ start: 0, end: 6 })
    expect(wins[1].start).toBe(4) // 6 - 1 = 5 is inside word 2, back to 4
  })

  it('splits a word longer than a window', () => {
    const wi = wordsOf(1, 12, 1)
    const wins = makeWindows(wi, { maxLength: 7, stride: 0 }) // capacity 5
    checkInvariants(wi, wins, 7)
    expect(wins[0]).toEqual({ start: 0, end: 1 }) // the long word starts a new window
    expect(wins[1]).toEqual({ start: 1, end: 6 }) // hard split inside it
  })

  it('works inside a piece range', () => {
    const wi = wordsOf(1, 1, 1, 1, 1, 1)
    expect(makeWindows(wi, { maxLength: 4, stride: 0 }, 2, 5)).toEqual([
      { start: 2, end: 4 },
      { start: 4, end: 5 },
    ])
  })

  it('validates its options', () => {
    expect(() => makeWindows([0], { maxLength: 2 })).toThrow(RangeError)
    expect(() => makeWindows([0], { maxLength: 6, stride: 4 })).toThrow(/stride/)
  })

  it('keeps invariants on random documents', () => {
    let seed = 3
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed / 0x7fffffff)
    for (let trial = 0; trial < 200; trial++) {
      const sizes = Array.from({ length: 1 + Math.floor(rnd() * 60) }, () => 1 + Math.floor(rnd() * (rnd() < 0.1 ? 20 : 4)))
      const maxLength = 4 + Math.floor(rnd() * 30)
      const stride = Math.floor(rnd() * (maxLength - 2))
      const wi = wordsOf(...sizes)
      const wins = makeWindows(wi, { maxLength, stride })
      checkInvariants(wi, wins, maxLength)
    }
  })
})

describe('mergeWindowPredictions', () => {
  it('takes each word from the window where it is farthest from an edge', () => {
    // 6 one-piece words, windows [0,4) and [2,6); 2 labels; score = window id marker
    const wi = [0, 1, 2, 3, 4, 5]
    const wins = [
      { start: 0, end: 4 },
      { start: 2, end: 6 },
    ]
    const rows = (n: number, v: number) => Float32Array.from({ length: (n + 2) * 2 }, (_, i) => (i % 2 === 0 ? v : 0))
    const m = mergeWindowPredictions(wins, [rows(4, 10), rows(4, 20)], wi, 6, 2)
    const fromWin = Array.from({ length: 6 }, (_, w) => m.scores[w * 2])
    // word 2: dist 1 in win0 (edge end 3), dist 0 in win1 -> win0; word 3: dist 0 vs 1 -> win1
    expect(fromWin).toEqual([10, 10, 10, 20, 20, 20])
    expect(Array.from(m.covered)).toEqual([1, 1, 1, 1, 1, 1])
  })

  it('reads a multi-piece word at its first piece and accepts padded rows', () => {
    const wi = [0, 0, 1]
    const scores = Float32Array.from([/* CLS */ 9, 9, /* w0p0 */ 1, 2, /* w0p1 */ 3, 4, /* w1 */ 5, 6, /* SEP */ 9, 9, /* pad */ 0, 0])
    const m = mergeWindowPredictions([{ start: 0, end: 3 }], [scores], wi, 3, 2)
    expect(Array.from(m.scores)).toEqual([1, 2, 5, 6, 0, 0])
    expect(Array.from(m.covered)).toEqual([1, 1, 0])
    expect(() => mergeWindowPredictions([{ start: 0, end: 3 }], [new Float32Array(4)], wi, 2, 2)).toThrow(/scores/)
  })
})

describe('splitSentences', () => {
  const sents = (text: string, ...rest: Parameters<typeof splitSentences> extends [string, ...infer R] ? R : never) =>
    splitSentences(text, ...rest).map(([s, e]) => text.slice(s, e))

  it('splits at sentence ends followed by a capital or digit', () => {
    expect(sents('Cells died. The dose was 3.5 mg/kg! Was it? 12 mice survived.')).toEqual([
      'Cells died.',
      'The dose was 3.5 mg/kg!',
      'Was it?',
      '12 mice survived.',
    ])
  })

  it('does not split after abbreviations or before lower case', () => {
    expect(sents('Bacteria (e.g. E. coli) grew, as in Fig. 2 and Smith et al. Results differ vs. controls. Done.')).toEqual([
      'Bacteria (e.g. E. coli) grew, as in Fig. 2 and Smith et al. Results differ vs. controls.',
      'Done.',
    ])
    expect(sents('It binds p53. p53 is mutated.')).toEqual(['It binds p53. p53 is mutated.'])
  })

  it('splits after closing brackets and quotes and at line breaks', () => {
    expect(sents('It was lower (p < 0.05). Next "quoted." Then\nnew line\r\nlast')).toEqual([
      'It was lower (p < 0.05).',
      'Next "quoted."',
      'Then',
      'new line',
      'last',
    ])
  })

  it('never cuts a protected span or a token', () => {
    const text = 'Type A. Hepatitis is common.'
    expect(sents(text)).toEqual(['Type A.', 'Hepatitis is common.'])
    expect(sents(text, undefined, { protect: [{ start: 5, end: 17 }] })).toEqual([text])
    expect(sents('a\nb', [[0, 3]])).toEqual(['a\nb'])
  })

  it('returns trimmed, non-empty spans', () => {
    expect(splitSentences('  \n One.  Two. \n\n')).toEqual([[4, 8], [10, 14]])
    expect(splitSentences('')).toEqual([])
  })
})
