// Edit counting for the simulated annotator: hand-made suggestion / gold pairs, each counted by hand.
import { describe, expect, it } from 'vitest'
import { addEdits, correctionsOf, countEdits, NO_EDITS } from '@core/eval/edits'

const m = (start: number, end: number, type = 'Disease') => ({ start, end, type })

describe('countEdits', () => {
  it('accepts exact matches and counts nothing else', () => {
    const c = countEdits([m(0, 5), m(10, 20, 'Chemical')], [m(10, 20, 'Chemical'), m(0, 5)])
    expect(c).toEqual({ accepted: 2, rejected: 0, added: 0, retyped: 0, rebounded: 0 })
    expect(correctionsOf(c)).toBe(0)
  })

  it('rejects suggestions that overlap no gold mention and adds gold mentions no suggestion overlaps', () => {
    const c = countEdits([m(0, 5), m(30, 35)], [m(0, 5), m(50, 60), m(70, 80)])
    expect(c).toEqual({ accepted: 1, rejected: 1, added: 2, retyped: 0, rebounded: 0 })
    expect(correctionsOf(c)).toBe(3)
  })

  it('counts a type change on the same span as one retype, a shifted span as one re-bound, both as two', () => {
    const c = countEdits([m(0, 5, 'Chemical'), m(10, 22), m(40, 45, 'Gene')], [m(0, 5), m(10, 20), m(40, 50)])
    expect(c).toEqual({ accepted: 0, rejected: 0, added: 0, retyped: 2, rebounded: 2 })
    expect(correctionsOf(c)).toBe(4)
  })

  it('pairs one suggestion with one gold mention: a long suggestion over two gold mentions is one re-bound and one addition', () => {
    // "breast and ovarian cancer" suggested whole; gold has "breast" [0,6) and "ovarian cancer" [11,25).
    const c = countEdits([m(0, 25)], [m(0, 6), m(11, 25)])
    expect(c).toEqual({ accepted: 0, rejected: 0, added: 1, retyped: 0, rebounded: 1 })
  })

  it('keeps an exact match for its own gold mention rather than spending it on a neighbour it overlaps', () => {
    // Suggestion B matches gold [5,10) exactly; A overlaps both gold mentions. Greedy by input
    // order could pair A with [5,10) and leave B rejected.
    const c = countEdits([m(0, 8), m(5, 10)], [m(0, 4), m(5, 10)])
    expect(c).toEqual({ accepted: 1, rejected: 0, added: 0, retyped: 0, rebounded: 1 })
  })

  it('does not depend on the order of the lists', () => {
    const s = [m(0, 8), m(5, 10), m(30, 35, 'Gene'), m(60, 61)]
    const g = [m(0, 4), m(5, 10), m(31, 35), m(80, 90)]
    expect(countEdits([...s].reverse(), [...g].reverse())).toEqual(countEdits(s, g))
  })

  it('an empty suggestion list means typing every gold mention in', () => {
    expect(countEdits([], [m(0, 1), m(2, 3)])).toEqual({ ...NO_EDITS, added: 2 })
    expect(addEdits({ ...NO_EDITS, added: 2 }, { ...NO_EDITS, added: 1, rejected: 4 })).toEqual({ ...NO_EDITS, added: 3, rejected: 4 })
  })
})
