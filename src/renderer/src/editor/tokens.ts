// Tokens drive snapping (selections grow to whole tokens), one-token boundary moves and the
// B/I/O display. Source tokens (CoNLL) are used when present; otherwise, and for any text they
// leave uncovered, a simple word/punctuation split.
import type { Layout } from './layout'

const WORD_OR_PUNCT = /[\p{L}\p{N}\p{M}]+|[^\s\p{L}\p{N}\p{M}]/gu

export function simpleTokens(text: string, from = 0, to = text.length): Array<[number, number]> {
  const out: Array<[number, number]> = []
  const slice = text.slice(from, to)
  for (const m of slice.matchAll(WORD_OR_PUNCT)) out.push([from + m.index!, from + m.index! + m[0].length])
  return out
}

/** Character tokens: the given ones (sorted, overlaps dropped) plus simple tokens for uncovered text. */
export function documentTokens(text: string, given: Array<[number, number]> | null | undefined): Array<[number, number]> {
  if (!given || given.length === 0) return simpleTokens(text)
  const clean = given
    .filter((t) => Array.isArray(t) && Number.isInteger(t[0]) && Number.isInteger(t[1]) && t[0] >= 0 && t[1] > t[0] && t[1] <= text.length)
    .map((t) => [t[0], t[1]] as [number, number])
    .sort((a, b) => a[0] - b[0] || b[1] - a[1])
  const out: Array<[number, number]> = []
  let cursor = 0
  for (const t of clean) {
    if (t[0] < cursor) continue
    if (t[0] > cursor) out.push(...simpleTokens(text, cursor, t[0]))
    out.push(t)
    cursor = t[1]
  }
  if (cursor < text.length) out.push(...simpleTokens(text, cursor, text.length))
  return out
}

/** Why a selection cannot become an entity; `noWord`: it holds no token, only the space between them. */
export interface SnapError {
  error: string
  noWord?: true
}

/** Tokens as ProseMirror ranges, sorted and disjoint; a token never crosses a block boundary. */
export class TokenIndex {
  private constructor(
    readonly from: Int32Array,
    readonly to: Int32Array,
    /** Block index of each token (tokens never span blocks). */
    readonly block: Int32Array,
  ) {}

  static build(layout: Layout, charTokens: Array<[number, number]>): TokenIndex {
    const from: number[] = []
    const to: number[] = []
    const block: number[] = []
    const segs = layout.segments
    let si = 0
    for (const [s, e] of charTokens) {
      while (si < segs.length && segs[si]!.end <= s) si++
      // A token may straddle a separator or block edge: keep each piece inside its block.
      for (let k = si; k < segs.length && segs[k]!.start < e; k++) {
        const seg = segs[k]!
        const a = Math.max(s, seg.start)
        const b = Math.min(e, seg.end)
        if (b > a) {
          from.push(seg.pmStart + (a - seg.start))
          to.push(seg.pmStart + (b - seg.start))
          block.push(k)
        }
      }
    }
    return new TokenIndex(Int32Array.from(from), Int32Array.from(to), Int32Array.from(block))
  }

  get length(): number {
    return this.from.length
  }

  /** First token index whose end is > pos (length when none). */
  firstEndingAfter(pos: number): number {
    let lo = 0
    let hi = this.to.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (this.to[mid]! > pos) hi = mid
      else lo = mid + 1
    }
    return lo
  }

  /** Last token index whose start is < pos (-1 when none). */
  lastStartingBefore(pos: number): number {
    let lo = 0
    let hi = this.from.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (this.from[mid]! < pos) lo = mid + 1
      else hi = mid
    }
    return lo - 1
  }

  /** Tokens overlapping [from, to): index range [i, j] (j < i when none). */
  overlapping(from: number, to: number): [number, number] {
    return [this.firstEndingAfter(from), this.lastStartingBefore(to)]
  }

  /**
   * Grows [from, to) outwards to whole tokens. Null when the range holds no token or its
   * tokens lie in different blocks (an entity never spans title and abstract).
   */
  snap(from: number, to: number): { from: number; to: number } | SnapError {
    const [i, j] = this.overlapping(from, to)
    if (j < i) return { error: 'The selection holds no word to annotate.', noWord: true }
    if (this.block[i] !== this.block[j]) return { error: 'An entity cannot run across two passages (e.g. title and abstract).' }
    return { from: Math.min(from, this.from[i]!), to: Math.max(to, this.to[j]!) }
  }

  /** New [from, to) after moving one edge by one token, or an error a person can act on. */
  adjust(
    from: number,
    to: number,
    edge: 'start' | 'end',
    dir: 'extend' | 'shrink',
  ): { from: number; to: number } | { error: string } {
    if (edge === 'start' && dir === 'extend') {
      const k = this.lastStartingBefore(from)
      if (k < 0 || !this.sameBlock(k, to)) return { error: 'There is no token before this entity in its passage.' }
      return { from: this.from[k]!, to }
    }
    if (edge === 'end' && dir === 'extend') {
      const k = this.firstEndingAfter(to)
      if (k >= this.length || !this.sameBlockPos(k, from)) return { error: 'There is no token after this entity in its passage.' }
      return { from, to: this.to[k]! }
    }
    if (edge === 'start') {
      // First token that starts after `from`: the entity then begins there.
      const k = this.lastStartingBefore(from + 1) + 1
      if (k >= this.length || this.from[k]! >= to) return { error: 'The entity is one token long; delete it instead of shrinking it.' }
      return { from: this.from[k]!, to }
    }
    const k = this.firstEndingAfter(to - 1) - 1
    if (k < 0 || this.to[k]! <= from) return { error: 'The entity is one token long; delete it instead of shrinking it.' }
    return { from, to: this.to[k]! }
  }

  private sameBlock(k: number, to: number): boolean {
    const last = this.lastStartingBefore(to)
    return last >= 0 && this.block[last] === this.block[k]
  }

  private sameBlockPos(k: number, from: number): boolean {
    const first = this.firstEndingAfter(from)
    return first < this.length && this.block[first] === this.block[k]
  }
}
