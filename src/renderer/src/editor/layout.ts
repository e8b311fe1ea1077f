// Exact mapping between character offsets in DocumentDetail.text and ProseMirror positions.
// Each passage is one textblock whose text is exactly text.slice(start, end); the characters
// between passages (PubTator's " " between title and abstract) are separators that have no
// position. A gap that holds anything but whitespace becomes a block of its own so no text is hidden.
import type { Passage } from '@shared/domain'

export interface Segment {
  /** Character range [start, end) of `text`. */
  start: number
  end: number
  kind: 'title' | 'passage'
  label: string
  /** ProseMirror position of the segment's first character (inside its block). */
  pmStart: number
}

const HIDDEN_LABELS = new Set(['', 'title', 'abstract', 'text', 'paragraph', 'front'])

export class Layout {
  private constructor(
    readonly text: string,
    readonly segments: Segment[],
  ) {}

  static build(text: string, passages: Passage[]): Layout {
    const n = text.length
    const parts: Array<Omit<Segment, 'pmStart'>> = []
    const sorted = [...passages]
      .filter((p) => Number.isFinite(p.offset) && Number.isFinite(p.length))
      .map((p) => ({ type: p.type ?? '', start: Math.max(0, Math.min(n, p.offset)), end: Math.max(0, Math.min(n, p.offset + p.length)) }))
      .sort((a, b) => a.start - b.start || b.end - a.end)
    let cursor = 0
    const pushGap = (from: number, to: number) => {
      if (to > from && /\S/.test(text.slice(from, to))) parts.push({ start: from, end: to, kind: 'passage', label: '' })
    }
    for (const p of sorted) {
      const start = Math.max(p.start, cursor)
      if (p.end <= start) continue
      pushGap(cursor, start)
      const isTitle = p.type.toLowerCase() === 'title' && parts.length === 0
      const label = HIDDEN_LABELS.has(p.type.toLowerCase()) ? '' : p.type
      parts.push({ start, end: p.end, kind: isTitle ? 'title' : 'passage', label })
      cursor = p.end
    }
    pushGap(cursor, n)
    if (parts.length === 0) parts.push({ start: 0, end: n, kind: 'passage', label: '' })
    let pos = 1
    const segments = parts.map((p) => {
      const s: Segment = { ...p, pmStart: pos }
      pos += p.end - p.start + 2
      return s
    })
    return new Layout(text, segments)
  }

  /** Index of the last segment whose character start is <= c (0 when c precedes all). */
  private segAtChar(c: number): number {
    return lastAtOrBefore(this.segments, (s) => s.start, c)
  }

  /**
   * Position of character offset `c`. `side` matters only on a boundary or in a separator:
   * a start offset moves forward into the next block, an end offset stays at the previous block's end.
   */
  charToPos(c: number, side: 'start' | 'end'): number {
    const segs = this.segments
    let i = this.segAtChar(c)
    let seg = segs[i]!
    if (c < seg.start) return seg.pmStart
    if (side === 'end' && c === seg.start && i > 0 && segs[i - 1]!.end >= c) {
      i -= 1
      seg = segs[i]!
    }
    if (c <= seg.end) return seg.pmStart + (c - seg.start)
    // In a separator after `seg`.
    if (side === 'end' || i === segs.length - 1) return seg.pmStart + (seg.end - seg.start)
    return segs[i + 1]!.pmStart
  }

  /** Character offset of position `pos` (clamped into the block it lies in or before). */
  posToChar(pos: number): number {
    const seg = this.segments[this.blockAt(pos)]!
    const off = Math.max(0, Math.min(seg.end - seg.start, pos - seg.pmStart))
    return seg.start + off
  }

  /** Index of the block holding position `pos`. */
  blockAt(pos: number): number {
    return lastAtOrBefore(this.segments, (s) => s.pmStart, pos)
  }

  /** Block index of character offset c, or -1 when c lies in a separator. */
  blockOfChar(c: number): number {
    const i = this.segAtChar(c)
    const seg = this.segments[i]!
    return c >= seg.start && c < seg.end ? i : -1
  }
}

/** Index of the last item whose key is <= value in items sorted by key (0 when none is). */
function lastAtOrBefore<T>(items: readonly T[], key: (item: T) => number, value: number): number {
  let lo = 0
  let hi = items.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (key(items[mid]!) <= value) lo = mid
    else hi = mid - 1
  }
  return lo
}
