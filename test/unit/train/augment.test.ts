import { describe, expect, it } from 'vitest'
import { augmentByMentionReplacement } from '@core/train/augment'
import type { CorpusDocument } from '../../../src/shared/domain'

/** A CoNLL-like document: words joined by spaces, mentions on word boundaries, tokens given. */
function conllDoc(id: string, words: string[], spans: Array<[number, number, string]>): CorpusDocument {
  const text = words.join(' ')
  const tokens: Array<[number, number]> = []
  let at = 0
  for (const w of words) {
    tokens.push([at, at + w.length])
    at += w.length + 1
  }
  const mentions = spans.map(([a, b, type]) => ({ start: tokens[a]![0], end: tokens[b]![1], text: text.slice(tokens[a]![0], tokens[b]![1]), type }))
  return { id, text, passages: [{ type: 'abstract', offset: 0, length: text.length }], mentions, tokens }
}

const DOCS = [
  conllDoc('a', ['Kelp', 'fever', 'follows', 'zorblin', 'use', '.'], [[0, 1, 'Disease'], [3, 3, 'Chemical']]),
  conllDoc('b', ['No', 'acute', 'renal', 'failure', 'after', 'fenoxamil', '.'], [[1, 3, 'Disease'], [5, 5, 'Chemical']]),
  conllDoc('c', ['Brunoma', 'was', 'rare', '.'], [[0, 0, 'Disease']]),
]

describe('mention-replacement augmentation', () => {
  it('keeps the originals and adds copies whose mentions come from the same type, offsets and words valid', () => {
    const out = augmentByMentionReplacement(DOCS, { copies: 3, probability: 1, seed: 7 })
    expect(out.slice(0, 3)).toEqual(DOCS)
    expect(out.map((d) => d.id).slice(3, 6)).toEqual(['a#aug1', 'b#aug1', 'c#aug1'])
    expect(out).toHaveLength(12)
    const pool = { Disease: new Set(['Kelp fever', 'acute renal failure', 'Brunoma']), Chemical: new Set(['zorblin', 'fenoxamil']) }
    let replaced = 0
    for (const [i, d] of out.slice(3).entries()) {
      const orig = DOCS[i % 3]!
      expect(d.mentions.map((m) => m.type)).toEqual(orig.mentions.map((m) => m.type))
      for (const [k, m] of d.mentions.entries()) {
        expect(d.text.slice(m.start, m.end)).toBe(m.text)
        expect(pool[m.type as 'Disease' | 'Chemical'].has(m.text)).toBe(true)
        if (m.text !== orig.mentions[k]!.text) replaced++
      }
      // The words: contiguous, no spaces inside, every mention boundary a word boundary, the
      // context words unchanged.
      expect(d.tokens!.map(([s, e]) => d.text.slice(s, e)).join(' ')).toBe(d.text)
      const starts = new Set(d.tokens!.map((t) => t[0]))
      const ends = new Set(d.tokens!.map((t) => t[1]))
      for (const m of d.mentions) expect(starts.has(m.start) && ends.has(m.end)).toBe(true)
      expect(d.passages).toEqual([{ type: 'abstract', offset: 0, length: d.text.length }])
      const context = (x: CorpusDocument) => x.mentions.reduceRight((t, m) => t.slice(0, m.start) + '@' + t.slice(m.end), x.text)
      expect(context(d)).toBe(context(orig))
    }
    expect(replaced).toBeGreaterThan(0)
  })

  it('is deterministic per seed, keeps everything with probability 0, and checks its options', () => {
    expect(augmentByMentionReplacement(DOCS, { seed: 3 })).toEqual(augmentByMentionReplacement(DOCS, { seed: 3 }))
    expect(augmentByMentionReplacement(DOCS, { seed: 3, probability: 1, copies: 4 })).not.toEqual(augmentByMentionReplacement(DOCS, { seed: 4, probability: 1, copies: 4 }))
    const kept = augmentByMentionReplacement(DOCS, { seed: 3, probability: 0 })
    expect(kept.slice(3).map((d) => d.text)).toEqual(DOCS.map((d) => d.text))
    expect(() => augmentByMentionReplacement(DOCS, { seed: 1, probability: 2 })).toThrow(/probability/)
    expect(() => augmentByMentionReplacement(DOCS, { seed: 1, copies: -1 })).toThrow(/copies/)
  })
})
