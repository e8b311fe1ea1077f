// Mention-replacement augmentation (Dai & Adel 2020, "An analysis of simple data augmentation
// for named entity recognition"): copies of the training documents in which each mention is,
// with probability p, replaced by another mention of the same type drawn from the training set
// itself. The model sees entities in new contexts and contexts with new entities, which helps
// most when labelled data is small. Written here (not a package) because it must keep our
// character offsets, passages and pre-tokenised words (CoNLL) consistent.

import type { CorpusDocument, Mention } from '../../shared/domain'
import { Rng } from '../rng'

export interface MentionReplacementOptions {
  /** Augmented copies per document (default 1); the originals are always kept. */
  copies?: number
  /** Chance that a mention is replaced (default 0.5). */
  probability?: number
  seed: number
}

/** The documents followed by their augmented copies (ids suffixed "#augN"). */
export function augmentByMentionReplacement(docs: readonly CorpusDocument[], opts: MentionReplacementOptions): CorpusDocument[] {
  const copies = opts.copies ?? 1
  const p = opts.probability ?? 0.5
  if (!(Number.isInteger(copies) && copies >= 0)) throw new RangeError(`augmentation copies must be a whole number >= 0, got ${copies}`)
  if (!(p >= 0 && p <= 1)) throw new RangeError(`replacement probability must be in [0, 1], got ${p}`)
  // The pool: every mention text per type, as the training set has them (duplicates kept, so
  // frequent entities are drawn more often, as in the paper).
  const pool = new Map<string, string[]>()
  for (const d of docs) for (const m of d.mentions) (pool.get(m.type) ?? pool.set(m.type, []).get(m.type)!).push(m.text)
  const rng = new Rng(opts.seed)
  const out: CorpusDocument[] = [...docs]
  for (let c = 1; c <= copies; c++) {
    for (const d of docs) out.push(replaceMentions(d, `${d.id}#aug${c}`, pool, p, rng))
  }
  return out
}

function replaceMentions(doc: CorpusDocument, id: string, pool: ReadonlyMap<string, string[]>, p: number, rng: Rng): CorpusDocument {
  const mentions = [...doc.mentions].sort((a, b) => a.start - b.start)
  let text = ''
  let from = 0
  let shift = 0
  const newMentions: Mention[] = []
  /** Old offset → new offset, for passages and tokens outside mentions. */
  const edits: Array<{ start: number; end: number; delta: number }> = []
  for (const m of mentions) {
    if (m.start < from) continue // overlapping mention: kept only the first (the rest are dropped)
    const candidates = pool.get(m.type) ?? []
    const replace = candidates.length > 1 && rng.next() < p
    const replacement = replace ? candidates[Math.floor(rng.next() * candidates.length)]! : m.text
    text += doc.text.slice(from, m.start)
    const start = m.start + shift
    text += replacement
    newMentions.push({ ...m, start, end: start + replacement.length, text: replacement })
    const delta = replacement.length - (m.end - m.start)
    if (delta !== 0) edits.push({ start: m.start, end: m.end, delta })
    shift += delta
    from = m.end
  }
  text += doc.text.slice(from)
  const move = (offset: number): number => {
    let s = 0
    for (const e of edits) if (e.end <= offset) s += e.delta
    return offset + s
  }
  const passages = doc.passages.map((ps) => {
    const start = move(ps.offset)
    return { ...ps, offset: start, length: move(ps.offset + ps.length) - start }
  })
  const out: CorpusDocument = { id, text, passages, mentions: newMentions }
  if (doc.tokens) out.tokens = retokenize(doc, mentions, newMentions, move)
  return out
}

/**
 * Pre-tokenised words (CoNLL): words outside mentions move with the text; a replaced mention's
 * words are its whitespace-separated parts (CoNLL mention texts are words joined by spaces).
 */
function retokenize(
  doc: CorpusDocument,
  oldMentions: readonly Mention[],
  newMentions: readonly Mention[],
  move: (offset: number) => number,
): Array<[number, number]> {
  const tokens: Array<[number, number]> = []
  let k = 0
  for (const [s, e] of doc.tokens!) {
    while (k < oldMentions.length && oldMentions[k]!.end <= s) k++
    const m = oldMentions[k]
    if (m && s >= m.start && e <= m.end) {
      // Emit the new mention's words once, at its first old word.
      if (s === m.start) {
        const nm = newMentions.find((x) => x.start === move(m.start) && x.type === m.type)!
        for (const w of nm.text.matchAll(/\S+/g)) tokens.push([nm.start + w.index!, nm.start + w.index! + w[0].length])
      }
      continue
    }
    tokens.push([move(s), move(e)])
  }
  return tokens
}
