// Merging the mentions of several heads (MT-BioNER: one head per corpus) into one document.
// Policy: a mention found by several heads with the same span and type is kept once (highest
// confidence); overlapping mentions of one type conflict and the higher-confidence one wins
// (ties: the longer span, then the head listed first); mentions of different types may overlap
// ("BRCA1" a Gene inside "BRCA1 deficiency" a Disease), as in PubTator's and HunFlair's output:
// each type is its own layer, and choosing between types cost every corpus some of what its head
// finds (bench:merge-heads: NCBI-disease devel 82.8 → 80.2, BC2GM 77.0 → 75.3). Formats and views
// that cannot hold overlaps say so (the CoNLL writer lists what it cannot write; the editor draws
// one and lists the other under "Overlapping annotations").

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
    if (kept.some((k) => k.type === m.type && k.start < m.end && m.start < k.end)) continue
    kept.push(m)
  }
  return kept.sort((a, b) => a.start - b.start || a.end - b.end).map(({ order: _o, ...m }) => m)
}

