import { describe, expect, it } from 'vitest'
import { mergeHeadMentions } from '@core/tag/merge'

const m = (start: number, end: number, type: string, confidence: number) => ({ start, end, text: 'x'.repeat(end - start), type, confidence })

describe('merging the mentions of several heads', () => {
  it('keeps non-overlapping mentions of every head, sorted by position', () => {
    const out = mergeHeadMentions([
      { head: 'disease', mentions: [m(10, 20, 'Disease', 0.9)] },
      { head: 'chem', mentions: [m(0, 5, 'Chemical', 0.6), m(25, 30, 'Chemical', 0.7)] },
    ])
    expect(out.map((x) => [x.start, x.type, x.head])).toEqual([
      [0, 'Chemical', 'chem'],
      [10, 'Disease', 'disease'],
      [25, 'Chemical', 'chem'],
    ])
  })
  it('on an overlap of one type keeps the higher-confidence span; the same span from two heads once', () => {
    const out = mergeHeadMentions([
      { head: 'a', mentions: [m(0, 10, 'Disease', 0.55), m(20, 30, 'Disease', 0.8)] },
      { head: 'b', mentions: [m(5, 12, 'Disease', 0.9), m(20, 30, 'Disease', 0.7)] },
    ])
    expect(out).toEqual([
      { start: 5, end: 12, text: 'x'.repeat(7), type: 'Disease', confidence: 0.9, head: 'b' },
      { start: 20, end: 30, text: 'x'.repeat(10), type: 'Disease', confidence: 0.8, head: 'a' },
    ])
  })
  it('keeps overlapping mentions of different types, each type merged on its own', () => {
    const out = mergeHeadMentions([
      { head: 'disease', mentions: [m(0, 16, 'Disease', 0.7)] },
      { head: 'gene', mentions: [m(0, 5, 'Gene', 0.9), m(3, 8, 'Gene', 0.6)] },
    ])
    expect(out.map((x) => [x.start, x.end, x.type])).toEqual([
      [0, 5, 'Gene'],
      [0, 16, 'Disease'],
    ])
  })
  it('breaks confidence ties by the longer span, then by head order', () => {
    const longer = mergeHeadMentions([
      { head: 'a', mentions: [m(0, 4, 'A', 0.7)] },
      { head: 'b', mentions: [m(0, 9, 'A', 0.7)] },
    ])
    expect(longer.map((x) => x.head)).toEqual(['b'])
    const first = mergeHeadMentions([
      { head: 'a', mentions: [m(0, 4, 'A', 0.7)] },
      { head: 'b', mentions: [m(2, 6, 'A', 0.7)] },
    ])
    expect(first.map((x) => x.head)).toEqual(['a'])
    // Touching spans ([0,4) and [4,8)) do not overlap.
    expect(mergeHeadMentions([{ head: 'a', mentions: [m(0, 4, 'A', 0.9), m(4, 8, 'A', 0.8)] }]).length).toBe(2)
  })
})
