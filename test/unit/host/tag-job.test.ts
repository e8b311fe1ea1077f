// The host's tag job hands each mention's document rule to the app with its span and confidence
// (the workspace stores it and the editor says why the suggestion is there).
import { describe, expect, it, vi } from 'vitest'
import type { TaggedMention } from '@core/tag/tagger'

const mentions: TaggedMention[] = [
  { start: 0, end: 8, text: 'Quinavor', type: 'Chemical', confidence: 0.9 },
  { start: 10, end: 12, text: 'QV', type: 'Chemical', confidence: 0.9, rule: { rule: 'abbreviation', from: { start: 0, end: 8, text: 'Quinavor' } } },
]

vi.mock('../../../src/host/jobs/taggers', () => ({
  cachedTagger: async () => ({
    engine: { engine: 'onnxruntime-cpu', reason: 'test' },
    tag: async (docs: unknown[]) => docs.map(() => ({ mentions, uncertainty: 0.2, uncertainties: { leastConfidence: 0.2, margin: 0.3, entropy: 0.4 } })),
  }),
}))

describe('tag job', () => {
  it("sends each mention's rule (null for the model's own) with its span, type and confidence", async () => {
    const { tag } = await import('../../../src/host/jobs/tag')
    const out = await tag({ modelDir: '/nowhere', docs: [{ id: '7', text: 'Quinavor (QV)', passages: [], mentions: [] }] } as never, { signal: new AbortController().signal } as never)
    expect(out.docs[0]!.mentions).toEqual([
      { start: 0, end: 8, type: 'Chemical', confidence: 0.9, rule: null },
      { start: 10, end: 12, type: 'Chemical', confidence: 0.9, rule: { rule: 'abbreviation', from: { start: 0, end: 8, text: 'Quinavor' } } },
    ])
  })
})
