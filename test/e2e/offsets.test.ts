// The renderer's character-offset ↔ ProseMirror-position mapping, checked exhaustively without a
// browser (the journey checks the same through the UI). An off-by-one here would silently shift
// every saved entity, so every offset of several layouts is round-tripped.
import type { Annotation, Passage } from '@shared/domain'
import { Layout } from '../../src/renderer/src/editor/layout'
import { documentTokens, TokenIndex } from '../../src/renderer/src/editor/tokens'
import { buildDoc, collectEntities, splitOverlapping } from '../../src/renderer/src/editor/entities'
import { diffEntities, type DesiredEntity, type PersistedEntity } from '../../src/renderer/src/editor/sync'

function ann(id: number, start: number, end: number, type = 'Disease'): Annotation {
  return {
    id,
    documentId: 1,
    start,
    end,
    type,
    conceptId: null,
    origin: 'gold',
    confidence: null,
    rule: null,
    state: 'accepted',
    updatedAt: '2024-01-01T00:00:00.000Z',
    updatedBy: 'test',
  }
}

const title = 'Aspirin and migraine'
const abstract = 'Low-dose aspirin reduced migraine days.\nA second sentence follows.'
const pubtator = { text: `${title} ${abstract}`, passages: [
  { type: 'title', offset: 0, length: title.length },
  { type: 'abstract', offset: title.length + 1, length: abstract.length },
] as Passage[] }

const paragraphs = (() => {
  const text = 'Title here\n\n\nFirst paragraph text.\n\nSecond  paragraph, with  spaces.'
  const passages: Passage[] = [
    { type: 'title', offset: 0, length: 10 },
    { type: 'paragraph', offset: text.indexOf('First'), length: 'First paragraph text.'.length },
    { type: 'paragraph', offset: text.indexOf('Second'), length: text.length - text.indexOf('Second') },
  ]
  return { text, passages }
})()

describe('renderer offset mapping', () => {
  const layouts: Array<[string, { text: string; passages: Passage[] }]> = [
    ['PubTator title + abstract', pubtator],
    ['paragraphs with multi-character gaps', paragraphs],
    ['no passages', { text: 'Just text, no passages.', passages: [] }],
    [
      'a gap holding text',
      {
        text: 'Head. Orphan text. Tail.',
        passages: [
          { type: 'title', offset: 0, length: 5 },
          { type: 'abstract', offset: 19, length: 5 },
        ],
      },
    ],
  ]
  for (const [name, doc] of layouts) {
    it(`round-trips every character offset: ${name}`, () => {
      const layout = Layout.build(doc.text, doc.passages)
      const pmDoc = buildDoc(layout, [])
      // Nothing is lost: the blocks hold every non-separator character, in order.
      const shown = layout.segments.map((s) => doc.text.slice(s.start, s.end)).join('')
      expect(pmDoc.textContent).toBe(shown)
      expect(shown.replace(/\s/g, '')).toBe(doc.text.replace(/\s/g, ''))
      for (const seg of layout.segments) {
        for (let c = seg.start; c <= seg.end; c++) {
          const side = c === seg.end ? 'end' : 'start'
          expect(layout.posToChar(layout.charToPos(c, side))).toBe(c)
        }
      }
      // Every span inside one segment maps to exactly its text.
      for (const seg of layout.segments) {
        for (let a = seg.start; a < seg.end; a++) {
          for (let b = a + 1; b <= Math.min(seg.end, a + 12); b++) {
            const from = layout.charToPos(a, 'start')
            const to = layout.charToPos(b, 'end')
            expect(pmDoc.textBetween(from, to)).toBe(doc.text.slice(a, b))
          }
        }
      }
    })
  }

  it('draws annotations as marks and reads them back at the same offsets', () => {
    const { text, passages } = paragraphs
    const at = (s: string) => [text.indexOf(s), text.indexOf(s) + s.length] as const
    const anns = [ann(1, ...at('Title')), ann(2, ...at('First paragraph')), ann(3, ...at('paragraph, with'), 'Chemical')]
    const layout = Layout.build(text, passages)
    const pmDoc = buildDoc(layout, anns)
    const back = [...collectEntities(pmDoc).values()].map((e) => [e.key, layout.posToChar(e.from), layout.posToChar(e.to), e.type])
    expect(back).toEqual(anns.map((a) => [`a${a.id}`, a.start, a.end, a.type]))
  })

  it('sets overlapping imported annotations aside instead of dropping them', () => {
    const { shown, hidden } = splitOverlapping([ann(1, 10, 30), ann(2, 20, 30), ann(3, 40, 45), ann(4, 0, 5)])
    expect(shown.map((a) => a.id)).toEqual([4, 1, 3])
    expect(hidden.map((a) => a.id)).toEqual([2])
  })

  it('snaps selections outwards to tokens and moves edges one token at a time', () => {
    const layout = Layout.build(pubtator.text, pubtator.passages)
    const tokens = TokenIndex.build(layout, documentTokens(pubtator.text, null))
    const pos = (s: string, end = false) => {
      const c = pubtator.text.indexOf(s) + (end ? s.length : 0)
      return layout.charToPos(c, end ? 'end' : 'start')
    }
    const text = (r: { from: number; to: number } | { error: string }) => {
      if ('error' in r) return r.error
      return pubtator.text.slice(layout.posToChar(r.from), layout.posToChar(r.to))
    }
    // "ow-dose aspi" grows to whole tokens.
    expect(text(tokens.snap(pos('ow-dose'), pos('aspi', true)))).toBe('Low-dose aspirin')
    // Across title and abstract: refused.
    expect(text(tokens.snap(pos('migraine'), pos('Low', true)))).toMatch(/two passages/)
    const span = { from: pos('aspirin reduced'), to: pos('aspirin reduced', true) }
    expect(text(tokens.adjust(span.from, span.to, 'start', 'extend'))).toBe('dose aspirin reduced')
    expect(text(tokens.adjust(span.from, span.to, 'end', 'extend'))).toBe('aspirin reduced migraine')
    expect(text(tokens.adjust(span.from, span.to, 'start', 'shrink'))).toBe('reduced')
    expect(text(tokens.adjust(span.from, span.to, 'end', 'shrink'))).toBe('aspirin')
    const one = { from: pos('aspirin reduced'), to: pos('aspirin', true) }
    expect(text(tokens.adjust(one.from, one.to, 'end', 'shrink'))).toMatch(/one token long/)
    // The first abstract token cannot extend into the title.
    expect(text(tokens.adjust(pos('Low'), pos('Low', true), 'start', 'extend'))).toMatch(/no token before/)
  })

  it('orders saves so no intermediate state overlaps: deletes, shrinks, moves, creates', () => {
    const acc = { state: 'accepted' as const, confidence: null, rule: null }
    const persisted = new Map([
      ['a1', { id: 1, start: 0, end: 10, type: 'Disease', ...acc }],
      ['a2', { id: 2, start: 20, end: 30, type: 'Disease', ...acc }],
      ['a3', { id: 3, start: 40, end: 50, type: 'Disease', ...acc }],
    ])
    const desired = new Map([
      ['a2', { start: 12, end: 30, type: 'Disease', ...acc }], // grows into the space a1 leaves
      ['a3', { start: 45, end: 50, type: 'Disease', ...acc }], // shrinks
      ['n1', { start: 0, end: 5, type: 'Chemical', ...acc }],
    ])
    expect(diffEntities(desired, persisted).map((o) => `${o.kind}:${'key' in o ? o.key : o.keys.join(',')}`)).toEqual([
      'delete:a1',
      'update:a3',
      'update:a2',
      'create:n1',
    ])
  })

  it('turns suggestion changes into batched accept / reject calls, state before extent', () => {
    const sug = (id: number, start: number, end: number, confidence: number): PersistedEntity =>
      ({ id, start, end, type: 'Disease', state: 'suggested', confidence, rule: null })
    const persisted = new Map<string, PersistedEntity>([
      ['a1', sug(1, 0, 5, 0.9)],
      ['a2', sug(2, 10, 15, 0.8)],
      ['a3', sug(3, 20, 25, 0.7)],
      ['a4', sug(4, 30, 35, 0.6)],
      ['a5', { ...sug(5, 40, 45, 0.95), state: 'accepted' as const }],
    ])
    const as = (key: string, patch: Partial<DesiredEntity>): [string, DesiredEntity] => {
      const { id: _id, ...rest } = persisted.get(key)!
      return [key, { ...rest, ...patch }]
    }
    const desired = new Map<string, DesiredEntity>([
      as('a1', { state: 'accepted' }), // accepted
      as('a2', { state: 'accepted', end: 17 }), // accepted and extended
      // a3, a4 rejected (gone)
      as('a5', { state: 'suggested' }), // undo of accept
    ])
    const ops = diffEntities(desired, persisted)
    expect(ops.map((o) => `${o.kind}:${'key' in o ? o.key : o.keys.join(',')}`)).toEqual(['reject:a3,a4', 'accept:a1,a2', 'unaccept:a5'])
    // After the accept is saved, the extension of a2 is the only difference left.
    persisted.set('a1', { ...persisted.get('a1')!, state: 'accepted' })
    persisted.set('a2', { ...persisted.get('a2')!, state: 'accepted' })
    persisted.delete('a3')
    persisted.delete('a4')
    persisted.set('a5', { ...persisted.get('a5')!, state: 'suggested' })
    expect(diffEntities(desired, persisted).map((o) => `${o.kind}:${'key' in o ? o.key : ''}`)).toEqual(['update:a2'])
    // An undone reject brings a suggestion back: created as a suggestion, with its confidence and rule.
    const rule = { rule: 'repeat' as const, from: { start: 0, end: 5, text: 'lead.' } }
    desired.set('a3', { start: 20, end: 25, type: 'Disease', state: 'suggested', confidence: 0.7, rule })
    const back = diffEntities(desired, persisted).find((o) => o.kind === 'create')
    expect(back).toMatchObject({ kind: 'create', key: 'a3', next: { state: 'suggested', confidence: 0.7, rule } })
  })
})
