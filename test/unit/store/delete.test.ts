// Deleting documents: a soft delete every read honours, its exact undo, and importing a deleted id again.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { StoreError } from '@core/store'
import Database from '@core/store/sqlite'
import { DOC_A, DOC_B, DOC_C, tempWorkspace, UNDO_DOCUMENT_DELETION, upgradedFrom } from './helpers'

describe('Workspace.deleteDocuments / restoreDocuments', () => {
  let t: ReturnType<typeof tempWorkspace>
  let ids: Record<string, number>
  beforeEach(async () => {
    t = tempWorkspace()
    await t.ws.importDocuments([DOC_A, DOC_B, DOC_C], 'fixture')
    ids = Object.fromEntries(t.ws.listDocuments({}).documents.map((d) => [d.externalId, d.id]))
  })
  afterEach(() => t.done())

  const a = () => ids['1001']!
  const b = () => ids['1002']!
  const c = () => ids['1003']!
  const listed = () => t.ws.listDocuments({}).documents.map((d) => d.externalId)

  /** B with a person's annotation, a person-accepted suggestion, a pending suggestion and queue scores. */
  function workOnB(): void {
    const text = t.ws.getDocument(b()).text
    const at = (w: string) => ({ start: text.indexOf(w), end: text.indexOf(w) + w.length })
    t.ws.createAnnotation({ documentId: b(), ...at('Beta-catenin'), type: 'Gene' })
    t.ws.replaceSuggestions(
      [
        {
          documentId: b(),
          suggestions: [
            { ...at('human'), type: 'Species', confidence: 0.9 },
            { ...at('Activating'), type: 'Gene', confidence: 0.4 },
          ],
          uncertainty: 0.6,
        },
      ],
      { modelId: null, by: 'model:test' },
    )
    const human = t.ws.getDocument(b()).annotations.find((x) => x.type === 'Species')!
    t.ws.acceptSuggestions([human.id])
  }

  it('says what a delete takes away: accepted annotations, those by a person, suggestions', () => {
    workOnB()
    expect(t.ws.deletionImpact([b(), a(), b()])).toEqual({
      ids: [b(), a()],
      externalIds: ['1002', '1001'],
      annotations: DOC_B.mentions.length + 2 + DOC_A.mentions.length,
      byPerson: 2,
      suggestions: 1,
    })
    expect(listed()).toEqual(['1001', '1002', '1003']) // a preview changes nothing
  })

  it('lists the deleted documents, newest deletion first, until they are restored', async () => {
    expect(t.ws.deletedDocuments()).toEqual({ documents: [], total: 0 })
    t.ws.deleteDocuments([a()])
    await new Promise((r) => setTimeout(r, 5)) // a later deletion time
    t.ws.deleteDocuments([c(), b()])
    const all = t.ws.deletedDocuments()
    expect(all.total).toBe(3)
    expect(all.documents.map((d) => d.externalId)).toEqual(['1003', '1002', '1001'])
    expect(all.documents.at(-1)).toMatchObject({ id: a(), title: 'Cystic fibrosis and the CFTR gene.', annotations: DOC_A.mentions.length, deletedBy: 'tester' })
    expect(t.ws.deletedDocuments(1)).toMatchObject({ total: 3, documents: [{ externalId: '1003' }] })
    t.ws.restoreDocuments([b()])
    expect(t.ws.deletedDocuments().documents.map((d) => d.externalId)).toEqual(['1003', '1001'])
  })

  it('hides deleted documents from every read', async () => {
    workOnB()
    t.ws.setStatus(b(), 'done')
    const impact = t.ws.deleteDocuments([b()])
    expect(impact).toMatchObject({ ids: [b()], annotations: DOC_B.mentions.length + 2, byPerson: 2, suggestions: 1 })

    expect(listed()).toEqual(['1001', '1003'])
    expect(t.ws.listDocuments({}).total).toBe(2)
    const counts = t.ws.listDocuments({}).counts
    expect(counts.byStatus).toEqual({ unreviewed: 2, in_progress: 0, done: 0 })
    // B's Chemical, Gene and Species are gone from the facets and the workspace's types.
    expect(counts.byType).toEqual({ Disease: 1, Gene: 1 })
    expect(t.ws.info()).toMatchObject({ documentCount: 2, entityTypes: ['Disease', 'Gene'] })
    expect(t.ws.listDocuments({ query: 'pilomatricoma' }).documents).toEqual([]) // full-text search
    expect(t.ws.listDocuments({ query: '1002' }).documents).toEqual([]) // id search
    expect(t.ws.listDocuments({ type: 'Chemical' }).total).toBe(0)

    expect(() => t.ws.getDocument(b())).toThrow(StoreError)
    expect(() => t.ws.setStatus(b(), 'in_progress')).toThrow(/does not exist/)
    expect(() => t.ws.history(b())).toThrow(StoreError)
    expect(t.ws.neighbor(a(), 'next', false)).toBe(c())
    expect(t.ws.neighbor(c(), 'previous', false)).toBe(a())

    expect(t.ws.exportDocuments().map((d) => d.id)).toEqual(['1001', '1003'])
    expect(() => t.ws.exportDocuments([b()])).toThrow(/not found/)
    expect(t.ws.labelledDocuments({ statuses: ['done', 'in_progress'], includeGold: true }).map((d) => d.id)).toEqual([String(a())])
    expect(t.ws.reviewedCount()).toBe(0)
    expect(t.ws.documentIdsWithStatus('done')).toEqual([])
    expect(t.ws.documentIdsForTagging()).toEqual([a(), c()])
    expect(() => t.ws.documentIdsForTagging([b()])).toThrow(/not found/)
    expect(t.ws.documentTexts().map((d) => d.id)).toEqual([String(a()), String(c())])
    expect([...t.ws.documentTextsById([a(), b()]).keys()]).toEqual([a()])
    expect(t.ws.documentsForTagging([a(), b()]).map((d) => d.id)).toEqual([String(a())])
    expect(t.ws.reviewCandidates()).toEqual([]) // B was the only tagged document

    // Its annotations and suggestions can no longer be edited, accepted or rejected.
    const before = new Database(t.path, { readonly: true })
    const ann = before.prepare(`SELECT id, state FROM annotations WHERE document_id = ? AND deleted = 0 ORDER BY id`).all(b()) as Array<{ id: number; state: string }>
    before.close()
    const suggestion = ann.find((x) => x.state === 'suggested')!.id
    expect(() => t.ws.acceptSuggestions([suggestion])).toThrow(StoreError)
    expect(() => t.ws.rejectSuggestions([suggestion])).toThrow(StoreError)
    expect(() => t.ws.deleteAnnotation(ann[0]!.id)).toThrow(StoreError)
    expect(t.ws.acceptSuggestionsAbove(0)).toBe(0) // the workspace-wide accept skips it
    // Tagging that listed it before the delete stores nothing for it, and goes on with the others.
    expect(t.ws.replaceSuggestions([{ documentId: b(), suggestions: [], uncertainty: 0.1 }], { modelId: null, by: 'model:test' })).toEqual({ stored: 0, dropped: 0 })
  })

  it('refuses unknown and already deleted documents, all or none', () => {
    expect(() => t.ws.deleteDocuments([a(), 9999])).toThrow(/not found: 9999/)
    expect(listed()).toEqual(['1001', '1002', '1003'])
    t.ws.deleteDocuments([a()])
    expect(() => t.ws.deleteDocuments([a(), b()])).toThrow(/not found/)
    expect(listed()).toEqual(['1002', '1003'])
    expect(() => t.ws.deletionImpact([a()])).toThrow(/not found/)
  })

  it('records when and by whom, and restores the documents exactly', () => {
    workOnB()
    const detail = t.ws.getDocument(b())
    const history = t.ws.history(b())
    const listBefore = t.ws.listDocuments({})
    const queueBefore = t.ws.reviewCandidates()
    t.ws.deleteDocuments([b(), c()])

    const db = new Database(t.path, { readonly: true })
    const row = db.prepare('SELECT deleted, deleted_by, deleted_at FROM documents WHERE id = ?').get(b()) as Record<string, unknown>
    db.close()
    expect(row).toMatchObject({ deleted: 1, deleted_by: 'tester' })
    expect(typeof row['deleted_at']).toBe('string')

    const restored = t.ws.restoreDocuments([b(), c()])
    expect(restored.map((d) => d.externalId)).toEqual(['1002', '1003'])
    expect(t.ws.getDocument(b())).toEqual(detail)
    expect(t.ws.history(b())).toEqual(history) // nothing was rewritten to delete or restore
    expect(t.ws.listDocuments({})).toEqual(listBefore)
    expect(t.ws.reviewCandidates()).toEqual(queueBefore)
    expect(() => t.ws.restoreDocuments([b()])).toThrow(/Not deleted documents/)
  })

  it('imports a deleted document id afresh, from the file, and keeps the deleted copy restorable', async () => {
    workOnB()
    const oldB = b()
    t.ws.deleteDocuments([oldB])
    const fixed = { ...DOC_B, mentions: DOC_B.mentions.slice(0, 1) }
    const r = await t.ws.importDocuments([fixed, DOC_A], 'fixed')
    expect(r).toEqual({ imported: 1, duplicates: ['1001'], conflicts: [], reimported: ['1002'] })
    const fresh = t.ws.listDocuments({ query: '1002' }).documents
    expect(fresh).toHaveLength(1)
    expect(fresh[0]!.id).not.toBe(oldB)
    expect(fresh[0]).toMatchObject({ status: 'unreviewed', annotationCount: 1, suggestionCount: 0 })

    // Importing the same file again: now it is a plain duplicate.
    expect(await t.ws.importDocuments([fixed], 'fixed')).toEqual({ imported: 0, duplicates: ['1002'], conflicts: [], reimported: [] })

    // The deleted copy still comes back, with its work, under its retired id.
    const [back] = t.ws.restoreDocuments([oldB])
    expect(back).toMatchObject({ id: oldB, externalId: `1002 (deleted #${oldB})`, annotationCount: DOC_B.mentions.length + 2 })
  })
})

describe('schema step 9 (deleted documents)', () => {
  it('upgrades a version-8 workspace: its documents stay, live', async () => {
    await upgradedFrom(
      8,
      UNDO_DOCUMENT_DELETION,
      (ws) => {
        const [doc] = ws.listDocuments({}).documents
        expect(doc!.externalId).toBe(DOC_A.id)
        ws.deleteDocuments([doc!.id])
        expect(ws.info().documentCount).toBe(0)
        ws.restoreDocuments([doc!.id])
      },
    )
  })
})
