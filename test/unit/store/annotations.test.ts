import type { Annotation, Revision } from '@shared/domain'
import { StoreError } from '@core/store'
import { DOC_A, DOC_B, DOC_C, tempWorkspace } from './helpers'

function thrown(fn: () => unknown): StoreError {
  try {
    fn()
  } catch (e) {
    expect(e).toBeInstanceOf(StoreError)
    return e as StoreError
  }
  throw new Error('expected a StoreError')
}

type State = Map<number, NonNullable<Revision['after']>>

/** Replays a document's revisions from nothing. */
function replay(revisions: Revision[]): State {
  const state: State = new Map()
  for (const r of revisions) {
    if (r.action === 'delete') {
      expect(state.get(r.annotationId)).toEqual(r.before)
      state.delete(r.annotationId)
    } else {
      if (r.action === 'update') expect(state.get(r.annotationId)).toEqual(r.before)
      else expect(state.has(r.annotationId)).toBe(false)
      state.set(r.annotationId, r.after!)
    }
  }
  return state
}

const live = (anns: Annotation[]): State =>
  new Map(
    anns.map((a) => [
      a.id,
      { start: a.start, end: a.end, type: a.type, conceptId: a.conceptId, origin: a.origin, confidence: a.confidence, state: a.state },
    ]),
  )

describe('Workspace annotations', () => {
  let t: ReturnType<typeof tempWorkspace>
  let idA: number
  let idC: number
  beforeEach(async () => {
    t = tempWorkspace('alice')
    await t.ws.importDocuments([DOC_A, DOC_B, DOC_C], 'fixture')
    const docs = t.ws.listDocuments({}).documents
    idA = docs.find((d) => d.externalId === '1001')!.id
    idC = docs.find((d) => d.externalId === '1003')!.id
  })
  afterEach(() => t.done())

  it('creates a person annotation, records a create revision and starts the review', () => {
    const text = t.ws.getDocument(idC).text
    const start = text.indexOf('plain')
    const a = t.ws.createAnnotation({ documentId: idC, start, end: start + 5, type: ' Disease ', conceptId: 'D1' })
    expect(a).toMatchObject({ documentId: idC, start, end: start + 5, type: 'Disease', conceptId: 'D1', origin: 'person', confidence: null, state: 'accepted', updatedBy: 'alice' })
    expect(t.ws.getDocument(idC).status).toBe('in_progress')
    const h = t.ws.history(idC)
    expect(h).toHaveLength(1)
    expect(h[0]).toMatchObject({ annotationId: a.id, documentId: idC, action: 'create', before: null, by: 'alice' })
    expect(h[0]!.after).toEqual({ start, end: start + 5, type: 'Disease', conceptId: 'D1', origin: 'person', confidence: null, state: 'accepted' })
  })

  it('does not move a finished document back to in_progress', () => {
    t.ws.setStatus(idC, 'done')
    t.ws.createAnnotation({ documentId: idC, start: 0, end: 2, type: 'X' })
    expect(t.ws.getDocument(idC).status).toBe('done')
  })

  it('refuses overlapping annotations with a conflict naming the other annotation', () => {
    const doc = t.ws.getDocument(idA)
    const cf = doc.annotations[0]! // "Cystic fibrosis" [0, 15)
    for (const [s, e] of [[0, 15], [3, 8], [10, 20], [0, 40]] as const) {
      const err = thrown(() => t.ws.createAnnotation({ documentId: idA, start: s, end: e, type: 'Disease' }))
      expect(err.code).toBe('conflict')
      expect(err.message).toContain('overlaps the Disease annotation "Cystic fibrosis" [0, 15)')
    }
    // Touching spans do not overlap (half-open intervals).
    const after = t.ws.createAnnotation({ documentId: idA, start: cf.end, end: cf.end + 4, type: 'X' })
    expect(after.start).toBe(15)
    // Deleted annotations no longer block.
    t.ws.deleteAnnotation(cf.id)
    expect(t.ws.createAnnotation({ documentId: idA, start: 0, end: 6, type: 'Disease' }).end).toBe(6)
  })

  it('validates spans and ids', () => {
    const len = t.ws.getDocument(idC).text.length
    expect(thrown(() => t.ws.createAnnotation({ documentId: idC, start: 5, end: 5, type: 'X' })).code).toBe('invalid_request')
    expect(thrown(() => t.ws.createAnnotation({ documentId: idC, start: -1, end: 5, type: 'X' })).code).toBe('invalid_request')
    const err = thrown(() => t.ws.createAnnotation({ documentId: idC, start: len - 2, end: len + 1, type: 'X' }))
    expect(err.code).toBe('invalid_request')
    expect(err.message).toContain(`<= ${len}`)
    expect(thrown(() => t.ws.createAnnotation({ documentId: idC, start: 0, end: 2, type: '  ' })).code).toBe('invalid_request')
    expect(thrown(() => t.ws.createAnnotation({ documentId: 9999, start: 0, end: 2, type: 'X' })).code).toBe('not_found')
    expect(thrown(() => t.ws.updateAnnotation({ id: 9999, type: 'X' })).code).toBe('not_found')
    expect(thrown(() => t.ws.deleteAnnotation(9999)).code).toBe('not_found')
    expect(thrown(() => t.ws.history(9999)).code).toBe('not_found')
    expect(t.ws.history(idC)).toEqual([]) // nothing written by the refused calls
  })

  it('updates (retype, re-bound) with before/after revisions and the same checks', () => {
    const doc = t.ws.getDocument(idA)
    const [cf1, cf2, cftr] = doc.annotations
    const retyped = t.ws.updateAnnotation({ id: cftr!.id, type: 'Gene', conceptId: 'HGNC:1884' })
    expect(retyped).toMatchObject({ type: 'Gene', conceptId: 'HGNC:1884', origin: 'gold', updatedBy: 'alice' })
    // Re-bound onto the neighbour: refused, and nothing changed.
    const err = thrown(() => t.ws.updateAnnotation({ id: cf2!.id, start: cf1!.end - 2 }))
    expect(err.code).toBe('conflict')
    expect(thrown(() => t.ws.updateAnnotation({ id: cf2!.id, end: doc.text.length + 1 })).code).toBe('invalid_request')
    expect(thrown(() => t.ws.updateAnnotation({ id: cf2!.id, start: cf2!.end })).code).toBe('invalid_request')
    const shrunk = t.ws.updateAnnotation({ id: cf1!.id, start: 7 })
    expect(doc.text.slice(shrunk.start, shrunk.end)).toBe('fibrosis')
    // A no-op update writes no revision.
    const n = t.ws.history(idA).length
    t.ws.updateAnnotation({ id: cf1!.id, start: 7, type: 'Disease' })
    expect(t.ws.history(idA)).toHaveLength(n)

    const updates = t.ws.history(idA).filter((r) => r.action === 'update')
    expect(updates).toHaveLength(2)
    expect(updates[0]).toMatchObject({ annotationId: cftr!.id, before: { type: 'Gene', conceptId: null }, after: { type: 'Gene', conceptId: 'HGNC:1884' } })
    expect(updates[1]).toMatchObject({ annotationId: cf1!.id, before: { start: 0, end: 15 }, after: { start: 7, end: 15 } })
    expect(t.ws.getDocument(idA).status).toBe('in_progress')
  })

  it('soft-deletes with a delete revision; a deleted annotation cannot be edited again', () => {
    const asthma = t.ws.getDocument(idA).annotations.find((a) => a.conceptId === 'D001249')!
    expect(t.ws.deleteAnnotation(asthma.id)).toEqual({ id: asthma.id })
    expect(t.ws.getDocument(idA).annotations.map((a) => a.id)).not.toContain(asthma.id)
    const del = t.ws.history(idA).at(-1)!
    expect(del).toMatchObject({ annotationId: asthma.id, action: 'delete', after: null, by: 'alice' })
    expect(del.before).toMatchObject({ start: asthma.start, end: asthma.end, type: 'Disease', origin: 'gold' })
    expect(thrown(() => t.ws.deleteAnnotation(asthma.id)).code).toBe('not_found')
    expect(thrown(() => t.ws.updateAnnotation({ id: asthma.id, type: 'X' })).code).toBe('not_found')
    expect(t.ws.exportDocuments([idA])[0]!.mentions.map((m) => m.text)).toEqual(['Cystic fibrosis', 'Cystic fibrosis', 'CFTR'])
  })

  it('history replays to exactly the current annotations, after any sequence of edits', () => {
    const doc = t.ws.getDocument(idA)
    const a = t.ws.createAnnotation({ documentId: idA, start: doc.text.indexOf('mutations'), end: doc.text.indexOf('mutations') + 9, type: 'Var' })
    t.ws.updateAnnotation({ id: a.id, type: 'Variant' })
    t.ws.deleteAnnotation(doc.annotations[1]!.id)
    t.ws.updateAnnotation({ id: doc.annotations[0]!.id, end: 6, conceptId: null })
    const b = t.ws.createAnnotation({ documentId: idA, start: 7, end: 15, type: 'Disease' })
    t.ws.deleteAnnotation(b.id)
    t.ws.createAnnotation({ documentId: idA, start: 7, end: 15, type: 'Anatomy', origin: 'model', confidence: 0.75, state: 'suggested' })
    const history = t.ws.history(idA)
    expect(history.map((r) => r.id)).toEqual([...history.map((r) => r.id)].sort((x, y) => x - y))
    expect(replay(history)).toEqual(live(t.ws.getDocument(idA).annotations))
    // Other documents' revisions are not mixed in.
    expect(history.every((r) => r.documentId === idA)).toBe(true)
  })

  it('restores an annotation as it was before its latest revision: delete, reject, edit and add undone, exactly', () => {
    const doc = t.ws.getDocument(idA)
    const latest = () => t.ws.history(idA).at(-1)!
    const snap = (a: Annotation) => live([a]).get(a.id)
    // A deleted gold annotation comes back with its id, origin and concept.
    const gold = doc.annotations[1]!
    t.ws.deleteAnnotation(gold.id)
    expect(t.ws.restoreRevision(latest().id)).toMatchObject({ id: gold.id, origin: 'gold', conceptId: gold.conceptId, state: 'accepted' })
    expect(latest()).toMatchObject({ annotationId: gold.id, action: 'create', before: null })
    // A rejected suggestion comes back as the model's suggestion, with its confidence.
    const start = doc.text.indexOf('mutations')
    const sug = t.ws.createAnnotation({ documentId: idA, start, end: start + 9, type: 'Variant', origin: 'model', confidence: 0.62, state: 'suggested' })
    t.ws.rejectSuggestions([sug.id])
    expect(snap(t.ws.restoreRevision(latest().id)!)).toEqual(snap(sug))
    // A retype that accepted it is undone to the suggestion, not left accepted.
    t.ws.updateAnnotation({ id: sug.id, type: 'Gene' })
    expect(t.ws.getDocument(idA).annotations.find((a) => a.id === sug.id)).toMatchObject({ type: 'Gene', state: 'accepted', origin: 'person' })
    expect(snap(t.ws.restoreRevision(latest().id)!)).toEqual(snap(sug))
    // An addition is undone by deleting it.
    const p = doc.text.indexOf('Patients')
    const added = t.ws.createAnnotation({ documentId: idA, start: p, end: p + 8, type: 'Species' })
    expect(t.ws.restoreRevision(latest().id)).toBeNull()
    expect(t.ws.getDocument(idA).annotations.some((a) => a.id === added.id)).toBe(false)
    // History still replays to what the workspace holds.
    expect(replay(t.ws.history(idA))).toEqual(live(t.ws.getDocument(idA).annotations))
  })

  it('restores only the latest revision of an annotation, and refuses a restore that would overlap', () => {
    const doc = t.ws.getDocument(idA)
    const first = doc.annotations[0]!
    t.ws.updateAnnotation({ id: first.id, type: 'One' })
    const older = t.ws.history(idA).at(-1)!
    t.ws.updateAnnotation({ id: first.id, type: 'Two' })
    expect(thrown(() => t.ws.restoreRevision(older.id)).code).toBe('conflict')
    expect(thrown(() => t.ws.restoreRevision(999_999)).code).toBe('not_found')
    // Deleted, then its place taken: bringing it back would overlap, so nothing changes.
    t.ws.deleteAnnotation(first.id)
    const del = t.ws.history(idA).at(-1)!
    t.ws.createAnnotation({ documentId: idA, start: first.start, end: first.end, type: 'Other' })
    const before = t.ws.history(idA).length
    expect(thrown(() => t.ws.restoreRevision(del.id)).code).toBe('conflict')
    expect(t.ws.history(idA)).toHaveLength(before)
  })

  it('exports accepted annotations only, as mentions with their covered text', () => {
    const doc = t.ws.getDocument(idC)
    t.ws.createAnnotation({ documentId: idC, start: 2, end: 7, type: 'X', conceptId: 'C1' })
    t.ws.createAnnotation({ documentId: idC, start: 8, end: 16, type: 'Y', origin: 'model', confidence: 0.4, state: 'suggested' })
    const [out] = t.ws.exportDocuments([idC])
    expect(out).toEqual({
      id: '1003',
      text: doc.text,
      passages: doc.passages,
      mentions: [{ start: 2, end: 7, text: doc.text.slice(2, 7), type: 'X', conceptId: 'C1' }],
    })
    expect(thrown(() => t.ws.exportDocuments([idC, 4242])).message).toContain('4242')
  })
})
