// What an annotator has to do to turn a model's suggestions for one document into its gold
// annotations: the effort behind "documents reviewed" in the active-learning measurement
// (core/active/simulate). Each gold mention is paired with at most one suggestion, exact spans
// first, then the largest overlap, so a suggestion that is off by a word counts as one boundary
// drag rather than a rejection plus an addition.

import type { Mention } from '../../shared/domain'

export interface EditCounts {
  /** Same span and type as a gold mention: one click, no correction. */
  accepted: number
  /** A suggestion that overlaps no unpaired gold mention: deleted. */
  rejected: number
  /** A gold mention no suggestion overlaps: typed in. */
  added: number
  /** Paired with a gold mention of another type (alone or with a boundary change). */
  retyped: number
  /** Paired with an overlapping gold mention whose span differs. */
  rebounded: number
}

export const NO_EDITS: Readonly<EditCounts> = Object.freeze({ accepted: 0, rejected: 0, added: 0, retyped: 0, rebounded: 0 })

/** Corrections a person makes (acceptances are not corrections). */
export function correctionsOf(c: EditCounts): number {
  return c.rejected + c.added + c.retyped + c.rebounded
}

export function addEdits(a: EditCounts, b: EditCounts): EditCounts {
  return { accepted: a.accepted + b.accepted, rejected: a.rejected + b.rejected, added: a.added + b.added, retyped: a.retyped + b.retyped, rebounded: a.rebounded + b.rebounded }
}

type Span = Pick<Mention, 'start' | 'end' | 'type'>

/** The edits that turn `suggested` into `gold` (one document; character offsets). */
export function countEdits(suggested: readonly Span[], gold: readonly Span[]): EditCounts {
  const c: EditCounts = { ...NO_EDITS }
  const usedS = new Set<number>()
  const usedG = new Set<number>()
  const pair = (s: number, g: number) => {
    usedS.add(s)
    usedG.add(g)
    const a = suggested[s]
    const b = gold[g]
    const sameSpan = a.start === b.start && a.end === b.end
    if (sameSpan && a.type === b.type) c.accepted++
    if (!sameSpan) c.rebounded++
    if (a.type !== b.type) c.retyped++
  }
  // Exact spans first, preferring the same type: a correct suggestion is never used up by a
  // neighbouring gold mention it merely overlaps.
  for (const sameType of [true, false]) {
    suggested.forEach((s, i) => {
      if (usedS.has(i)) return
      const g = gold.findIndex((x, j) => !usedG.has(j) && x.start === s.start && x.end === s.end && (!sameType || x.type === s.type))
      if (g >= 0) pair(i, g)
    })
  }
  // Then overlaps, the largest first; ties by position so the count does not depend on input order.
  const overlaps: Array<{ s: number; g: number; len: number }> = []
  suggested.forEach((s, i) => {
    if (usedS.has(i)) return
    gold.forEach((g, j) => {
      if (usedG.has(j)) return
      const len = Math.min(s.end, g.end) - Math.max(s.start, g.start)
      if (len > 0) overlaps.push({ s: i, g: j, len })
    })
  })
  overlaps.sort((x, y) => y.len - x.len || gold[x.g].start - gold[y.g].start || suggested[x.s].start - suggested[y.s].start)
  for (const o of overlaps) if (!usedS.has(o.s) && !usedG.has(o.g)) pair(o.s, o.g)
  c.rejected = suggested.length - usedS.size
  c.added = gold.length - usedG.size
  return c
}
