// Merging the mentions of several heads (MT-BioNER: one head per corpus) into one document.
// Policy: a mention found by several heads with the same span and type is kept once (highest
// confidence); overlapping mentions conflict and the higher-confidence one wins (ties: the
// longer span, then the head listed first); mentions that do not overlap are all kept.

import type { ScoredMention } from '../nlp/examples'

/** A mention tagged with the head that found it. */
export interface HeadMention extends ScoredMention {
  head: string
}

/** Merges per-head mentions of one document (policy in the file comment). Sorted by start. */
export function mergeHeadMentions(perHead: ReadonlyArray<{ head: string; mentions: readonly ScoredMention[] }>): HeadMention[] {
  const all: Array<HeadMention & { order: number }> = []
  perHead.forEach(({ head, mentions }, order) => mentions.forEach((m) => all.push({ ...m, head, order })))
  all.sort((a, b) => b.confidence - a.confidence || b.end - b.start - (a.end - a.start) || a.order - b.order || a.start - b.start)
  const kept: Array<HeadMention & { order: number }> = []
  for (const m of all) {
    if (kept.some((k) => k.start < m.end && m.start < k.end)) continue
    kept.push(m)
  }
  return kept.sort((a, b) => a.start - b.start || a.end - b.end).map(({ order: _o, ...m }) => m)
}

