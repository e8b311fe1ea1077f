// The workspace's model registry, model suggestions and review queue (store level, no model).
import { join } from 'node:path'
import Database from '@core/store/sqlite'
import type { Revision } from '@shared/domain'
import type { ModelDistillation } from '@shared/ipc'
import { StoreError, Workspace } from '@core/store'
import { DOC_A, DOC_B, DOC_C, tempDir, tempWorkspace, UNDO_DOCUMENT_DELETION, upgradedFrom } from './helpers'

function thrown(fn: () => unknown): StoreError {
  try {
    fn()
  } catch (e) {
    expect(e).toBeInstanceOf(StoreError)
    return e as StoreError
  }
  throw new Error('expected a StoreError')
}

/** Replays a document's revisions from nothing (as in annotations.test.ts). */
function replay(revisions: Revision[]): Map<number, NonNullable<Revision['after']>> {
  const state = new Map<number, NonNullable<Revision['after']>>()
  for (const r of revisions) {
    if (r.action === 'delete') {
      expect(state.get(r.annotationId)).toEqual(r.before)
      state.delete(r.annotationId)
    } else {
      if (r.action === 'update') expect(state.get(r.annotationId)).toEqual(r.before)
      state.set(r.annotationId, r.after!)
    }
  }
  return state
}

const config = { layers: 2, hidden: 128, heads: 2, parameters: 1000, bytes: 4000 }

describe('model registry', () => {
  let t: ReturnType<typeof tempWorkspace>
  beforeEach(() => {
    t = tempWorkspace()
  })
  afterEach(() => t.done())

  it('registers models with relative paths, unique names and exactly one active ready model', () => {
    const a = t.ws.createModel({ name: 'a', kind: 'teacher', status: 'ready', path: join(t.ws.modelsDir, 'a'), config, entityTypes: ['Disease'] })
    expect(a).toMatchObject({ name: 'a', active: true, candidate: false, status: 'ready', layers: 2, parameters: 1000, entityTypes: ['Disease'] })
    expect(a.path).toBe(join(t.dir, 'models', 'a'))
    const raw = new Database(t.path, { readonly: true })
    expect(raw.prepare('SELECT path FROM models WHERE id = ?').get(a.id)).toEqual({ path: 'models/a' })
    raw.close()

    const distillation: ModelDistillation = { teachers: [{ id: a.id, name: 'a' }], method: 'soft-labels', mode: 'dynamic' }
    const b = t.ws.createModel({ name: 'b', kind: 'student', path: join(t.ws.modelsDir, 'b'), parentId: a.id, distillation })
    expect(b).toMatchObject({ status: 'training', active: false, parentId: a.id, distillation })
    expect(t.ws.listModels().map((m) => m.name)).toEqual(['a'])
    expect(t.ws.listModels({ includeTraining: true }).map((m) => m.name)).toEqual(['a', 'b'])
    expect(thrown(() => t.ws.createModel({ name: 'a', kind: 'teacher', path: '/x' })).code).toBe('conflict')
    expect(t.ws.uniqueModelName('a')).toBe('a (2)')
    expect(t.ws.uniqueModelName('c')).toBe('c')

    // Training models and candidates cannot be activated.
    expect(thrown(() => t.ws.setActiveModel(b.id)).code).toBe('conflict')
    t.ws.updateModel(b.id, { status: 'candidate', devScores: { precision: 1, recall: 0.5, f1: 0.667, types: {} } })
    expect(thrown(() => t.ws.setActiveModel(b.id)).message).toMatch(/retrain candidate/)
    const bReady = t.ws.updateModel(b.id, { status: 'ready' })
    expect(bReady.active).toBe(false) // a is active already
    expect(t.ws.setActiveModel(b.id).active).toBe(true)
    expect(t.ws.getModel(a.id).active).toBe(false)

    // Deleting the active model activates the newest remaining ready one; children keep a null parent.
    const removed = t.ws.deleteModel(b.id)
    expect(removed.name).toBe('b')
    expect(t.ws.activeModel()!.id).toBe(a.id)
    t.ws.deleteModel(a.id)
    expect(t.ws.activeModel()).toBeNull()
    expect(thrown(() => t.ws.getModel(a.id)).code).toBe('not_found')
  })

  it('abandons interrupted jobs: training rows removed, running runs failed, except those still running here', () => {
    const done = t.ws.createModel({ name: 'done', kind: 'teacher', status: 'ready', path: '/m/done' })
    const stale = t.ws.createModel({ name: 'stale', kind: 'teacher', path: '/m/stale', parentId: done.id })
    const live = t.ws.createModel({ name: 'live', kind: 'teacher', path: '/m/live' })
    const staleRun = t.ws.startRun('retrain', stale.id, {})
    const liveRun = t.ws.startRun('train', live.id, {})
    const removed = t.ws.abandonInterruptedModels({ models: new Set([live.id]), runs: new Set([liveRun]) })
    expect(removed.map((m) => m.name)).toEqual(['stale'])
    expect(t.ws.listModels({ includeTraining: true }).map((m) => m.name)).toEqual(['done', 'live'])
    const runs = t.ws.runs()
    expect(runs.find((r) => r.id === staleRun)).toMatchObject({ status: 'failed', modelId: null })
    expect(runs.find((r) => r.id === liveRun)!.status).toBe('running')
    t.ws.finishRun(liveRun, 'done', { f1: 0.9 })
    expect(t.ws.runs().find((r) => r.id === liveRun)).toMatchObject({ status: 'done', metrics: { f1: 0.9 } })
  })
})

describe('model suggestions', () => {
  let t: ReturnType<typeof tempWorkspace>
  let idA: number
  let idB: number
  let idC: number
  const by = 'model:m'
  beforeEach(async () => {
    t = tempWorkspace()
    await t.ws.importDocuments([DOC_A, DOC_B, DOC_C], 'x')
    const ids = t.ws.listDocuments().documents.map((d) => d.id)
    ;[idA, idB, idC] = ids as [number, number, number]
  })
  afterEach(() => t.done())

  it('stores suggestions without touching accepted annotations, replaces earlier ones, records uncertainty', () => {
    const a = t.ws.getDocument(idA)
    const gold = a.annotations[0]! // "Cystic fibrosis" [0, 15)
    const at = (w: string) => a.text.indexOf(w)
    const r = t.ws.replaceSuggestions(
      [
        {
          documentId: idA,
          suggestions: [
            { start: gold.start, end: gold.end, type: 'Disease', confidence: 0.99 }, // overlaps gold: dropped
            { start: at('caused'), end: at('caused') + 6, type: 'Disease', confidence: 0.4 },
            { start: at('caused') + 2, end: at('caused') + 9, type: 'Disease', confidence: 0.3 }, // overlaps the previous one
            { start: 5, end: a.text.length + 5, type: 'Disease', confidence: 0.5 }, // not a span of the text
            { start: at('mutations'), end: at('mutations') + 9, type: 'Variant', confidence: 1.7 }, // clamped
            // Overlaps the Variant, starts earlier, less confident: dropped (a multi-type model's
            // types may overlap; the more confident stays).
            { start: at('mutations') - 3, end: at('mutations') + 2, type: 'Gene', confidence: 0.2 },
          ],
          uncertainty: 0.25,
        },
        { documentId: idC, suggestions: [], uncertainty: 0.75 },
      ],
      { modelId: null, by },
    )
    expect(r).toEqual({ stored: 2, dropped: 4 })
    const sug = t.ws.getDocument(idA).annotations.filter((x) => x.state === 'suggested')
    expect(sug.map((x) => [a.text.slice(x.start, x.end), x.type, x.confidence, x.origin, x.updatedBy])).toEqual([
      ['caused', 'Disease', 0.4, 'model', by],
      ['mutations', 'Variant', 1, 'model', by],
    ])
    expect(t.ws.getDocument(idA).status).toBe('unreviewed') // suggestions are not a review

    // Again: the previous suggestions are deleted (with revisions by the model), the new ones stored.
    t.ws.replaceSuggestions([{ documentId: idA, suggestions: [{ start: at('Patients'), end: at('Patients') + 8, type: 'X', confidence: 0.6 }], uncertainty: 0.1 }], {
      modelId: null,
      by,
    })
    const after = t.ws.getDocument(idA).annotations
    expect(after.filter((x) => x.state === 'suggested').map((x) => x.type)).toEqual(['X'])
    expect(after.filter((x) => x.state === 'accepted').length).toBe(4)
    const hist = t.ws.history(idA)
    expect(hist.filter((h) => h.by === by).map((h) => h.action)).toEqual(['create', 'create', 'delete', 'delete', 'create'])
    replay(hist)

    // Review candidates: tagged documents not done, in document order, with every stored score
    // (margin and entropy unknown when the tagging did not give them).
    t.ws.replaceSuggestions([{ documentId: idB, suggestions: [], uncertainty: 0.5, margin: 0.25, entropy: 1.5 }], { modelId: null, by })
    expect(t.ws.reviewCandidates().map((q) => [q.documentId, q.leastConfidence, q.margin, q.entropy, q.suggestions])).toEqual([
      [idA, 0.1, null, null, 1],
      [idB, 0.5, 0.25, 1, 0],
      [idC, 0.75, null, null, 0],
    ])
    t.ws.setStatus(idC, 'done')
    expect(t.ws.reviewCandidates().map((q) => q.documentId)).toEqual([idA, idB])
    expect(thrown(() => t.ws.replaceSuggestions([{ documentId: 999, suggestions: [], uncertainty: null }], { modelId: null, by })).code).toBe('not_found')
  })

  it("keeps the document rule behind a suggestion, with its source's text read from the document, through accept and an undone reject", () => {
    const c = t.ws.getDocument(idC)
    const span = (w: string) => ({ start: c.text.indexOf(w), end: c.text.indexOf(w) + w.length })
    // The source's text as the caller gave it is not what is stored: the document's is.
    const rule = { rule: 'repeat' as const, from: { ...span('plain'), text: 'something else' } }
    t.ws.replaceSuggestions(
      [{ documentId: idC, suggestions: [{ ...span('abstract'), type: 'T', confidence: 0.5, rule }, { ...span('annotated'), type: 'T', confidence: 0.6, rule: null }], uncertainty: 0.3 }],
      { modelId: null, by },
    )
    const stored = { rule: 'repeat', from: { ...span('plain'), text: 'plain' } }
    const [copy, own] = t.ws.getDocument(idC).annotations
    expect([copy!.rule, own!.rule]).toEqual([stored, null])
    // Accepted, it keeps its reason; rejected and restored (undo), the editor sends it back.
    t.ws.acceptSuggestions([copy!.id])
    expect(t.ws.getDocument(idC).annotations.find((x) => x.id === copy!.id)).toMatchObject({ state: 'accepted', origin: 'person', rule: stored })
    t.ws.rejectSuggestions([own!.id])
    const back = t.ws.createAnnotation({ documentId: idC, ...span('annotated'), type: 'T', origin: 'model', confidence: 0.6, state: 'suggested', rule: { rule: 'abbreviation', from: { ...span('plain'), text: '' } } })
    expect(back.rule).toEqual({ rule: 'abbreviation', from: { ...span('plain'), text: 'plain' } })
    // A rule that is not one, or whose source is not a span of the document, is refused.
    const bad = (r: unknown) => thrown(() => t.ws.createAnnotation({ documentId: idC, ...span('without'), type: 'T', origin: 'model', state: 'suggested', rule: r as typeof rule })).code
    expect(bad({ rule: 'guess', from: span('plain') })).toBe('invalid_request')
    expect(bad({ rule: 'repeat', from: { start: 3, end: c.text.length + 1, text: '' } })).toBe('invalid_request')
    expect(bad({ rule: 'repeat', from: { start: 3, end: 3, text: '' } })).toBe('invalid_request')
    expect(t.ws.getDocument(idC).annotations.some((x) => x.start === span('without').start)).toBe(false)
  })

  it('accepts (person-confirmed), rejects and accepts above a threshold, all or nothing, with revisions', () => {
    const c = t.ws.getDocument(idC)
    const words = ['plain', 'abstract', 'without', 'annotated']
    t.ws.replaceSuggestions(
      [{ documentId: idC, suggestions: words.map((w, i) => ({ start: c.text.indexOf(w), end: c.text.indexOf(w) + w.length, type: 'T', confidence: 0.2 * (i + 1) })), uncertainty: 0.3 }],
      { modelId: null, by },
    )
    const sug = t.ws.getDocument(idC).annotations
    expect(sug.map((s) => s.confidence)).toEqual([0.2, 0.4, 0.6000000000000001, 0.8])

    expect(t.ws.acceptSuggestions([sug[0]!.id, sug[0]!.id])).toBe(1)
    const acc = t.ws.getDocument(idC).annotations.find((x) => x.id === sug[0]!.id)!
    expect(acc).toMatchObject({ state: 'accepted', origin: 'person', confidence: 0.2, updatedBy: 'tester' })
    expect(t.ws.getDocument(idC).status).toBe('in_progress')
    // All or nothing: one bad id refuses the whole call.
    expect(thrown(() => t.ws.acceptSuggestions([sug[1]!.id, sug[0]!.id])).code).toBe('conflict')
    expect(t.ws.getDocument(idC).annotations.find((x) => x.id === sug[1]!.id)!.state).toBe('suggested')
    expect(thrown(() => t.ws.rejectSuggestions([12345])).code).toBe('not_found')

    expect(t.ws.rejectSuggestions([sug[1]!.id])).toBe(1)
    expect(t.ws.acceptSuggestionsAbove(0.7, idC)).toBe(1)
    expect(t.ws.getDocument(idC).annotations.map((x) => [x.state, x.confidence])).toEqual([
      ['accepted', 0.2],
      ['suggested', 0.6000000000000001],
      ['accepted', 0.8],
    ])
    expect(t.ws.acceptSuggestionsAbove(0)).toBe(1)
    expect(thrown(() => t.ws.acceptSuggestionsAbove(1.5)).code).toBe('invalid_request')
    const hist = t.ws.history(idC)
    expect(hist.filter((h) => h.by === 'tester').map((h) => h.action)).toEqual(['update', 'delete', 'update', 'update'])
    replay(hist)
  })

  it('lets a person annotate over a suggestion (it is removed) and confirms a suggestion the person edits', () => {
    const c = t.ws.getDocument(idC)
    const s = (w: string) => ({ start: c.text.indexOf(w), end: c.text.indexOf(w) + w.length })
    t.ws.replaceSuggestions(
      [{ documentId: idC, suggestions: [{ ...s('plain'), type: 'T', confidence: 0.5 }, { ...s('abstract'), type: 'T', confidence: 0.5 }], uncertainty: null }],
      { modelId: null, by },
    )
    const [plain, abstract] = t.ws.getDocument(idC).annotations
    // A suggestion may not overlap anything; a person's annotation replaces the suggestions it covers.
    expect(thrown(() => t.ws.createAnnotation({ documentId: idC, ...s('plain abstract'), type: 'T', state: 'suggested', origin: 'model' })).code).toBe('conflict')
    const mine = t.ws.createAnnotation({ documentId: idC, ...s('plain abstract'), type: 'Thing' })
    expect(t.ws.getDocument(idC).annotations.map((x) => x.id)).toEqual([mine.id])
    expect(t.ws.history(idC).slice(-3).map((h) => [h.action, h.annotationId])).toEqual([
      ['delete', plain!.id],
      ['delete', abstract!.id],
      ['create', mine.id],
    ])

    t.ws.replaceSuggestions([{ documentId: idC, suggestions: [{ ...s('without'), type: 'T', confidence: 0.9 }], uncertainty: null }], { modelId: null, by })
    const w = t.ws.getDocument(idC).annotations.find((x) => x.state === 'suggested')!
    const retyped = t.ws.updateAnnotation({ id: w.id, type: 'Other' })
    expect(retyped).toMatchObject({ state: 'accepted', origin: 'person', confidence: 0.9, type: 'Other' })
    // Re-tagging never removes it now.
    t.ws.replaceSuggestions([{ documentId: idC, suggestions: [{ ...s('without'), type: 'T', confidence: 0.9 }], uncertainty: null }], { modelId: null, by })
    expect(t.ws.getDocument(idC).annotations.filter((x) => x.state === 'suggested')).toEqual([])
    replay(t.ws.history(idC))
  })

  it('gives the model jobs labelled documents (accepted annotations only) and the documents to tag', () => {
    t.ws.replaceSuggestions([{ documentId: idB, suggestions: [{ start: 0, end: 4, type: 'X', confidence: 0.9 }], uncertainty: null }], { modelId: null, by })
    t.ws.setStatus(idC, 'done')
    const labelled = t.ws.labelledDocuments({ statuses: ['done'], includeGold: true })
    expect(labelled.map((d) => d.id)).toEqual([String(idA), String(idB), String(idC)])
    expect(labelled[1]!.mentions.map((m) => m.type)).toEqual(['Disease', 'Disease', 'Chemical']) // no suggestion
    expect(labelled[1]!.mentions[0]!.text).toBe('pilomatricoma')
    expect(t.ws.labelledDocuments({ statuses: ['done'], includeGold: false }).map((d) => d.id)).toEqual([String(idC)])
    expect(t.ws.documentIdsForTagging()).toEqual([idA, idB])
    expect(thrown(() => t.ws.documentIdsForTagging([idA, 777])).code).toBe('not_found')
    const [forTag] = t.ws.documentsForTagging([idA])
    expect(forTag).toMatchObject({ id: String(idA), mentions: [] })
    expect(forTag!.text).toBe(t.ws.getDocument(idA).text)
  })
})

describe('migration to the model registry (schema 2)', () => {
  it('upgrades a version-1 workspace in place and keeps its data', async () => {
    const v1 = `
      DROP TABLE learning_curve;
      ALTER TABLE models DROP COLUMN adaptation;
      DROP TABLE settings; ALTER TABLE models DROP COLUMN shipped;
      DROP TABLE document_uncertainty;
      DROP INDEX models_one_active; DROP INDEX runs_status; DROP INDEX annotations_state;
      ALTER TABLE models DROP COLUMN kind; ALTER TABLE models DROP COLUMN status; ALTER TABLE models DROP COLUMN active;
      ALTER TABLE models DROP COLUMN parent_id; ALTER TABLE models DROP COLUMN entity_types; ALTER TABLE models DROP COLUMN trained_on;
      DROP TABLE model_teachers; ALTER TABLE annotations DROP COLUMN rule; ALTER TABLE models DROP COLUMN benchmark;
      ALTER TABLE models DROP COLUMN dev_scores; ALTER TABLE models DROP COLUMN training_summary; ALTER TABLE models DROP COLUMN distillation;
      ${UNDO_DOCUMENT_DELETION}
      INSERT INTO models (name, path, config, created_at) VALUES ('legacy', '/old/legacy', '{}', '2024-01-01T00:00:00Z');`
    await upgradedFrom(1, v1, (ws) => {
      expect(ws.listModels()).toMatchObject([{ name: 'legacy', kind: 'imported', status: 'ready', active: false, entityTypes: [], shipped: false, adaptation: null }])
    })
  })
})

describe("suggestions' rules (schema 7)", () => {
  it('upgrades a version-6 workspace: its annotations and suggestions stay, with no rule', async () => {
    await upgradedFrom(
      6,
      `ALTER TABLE annotations DROP COLUMN rule; ALTER TABLE models DROP COLUMN benchmark; ${UNDO_DOCUMENT_DELETION}`,
      (ws) => {
        const [doc] = ws.listDocuments().documents
        const anns = ws.getDocument(doc!.id).annotations
        expect(anns.length).toBeGreaterThan(1)
        expect(anns.map((x) => x.rule)).toEqual(anns.map(() => null))
        expect(anns.find((x) => x.state === 'suggested')).toMatchObject({ origin: 'model', confidence: 0.5 })
      },
      (ws) => {
        const [doc] = ws.listDocuments().documents
        ws.replaceSuggestions([{ documentId: doc!.id, suggestions: [{ start: 16, end: 22, type: 'T', confidence: 0.5 }], uncertainty: 0.2 }], { modelId: null, by: 'model:m' })
      },
    )
  })
})

describe("a student's teachers (schema 6)", () => {
  it('keeps every teacher in order, and the name of one deleted since', () => {
    const t = tempWorkspace()
    try {
      const bert = t.ws.createModel({ name: 'bert', kind: 'teacher', status: 'ready', path: join(t.ws.modelsDir, 'bert') })
      const words = t.ws.createModel({ name: 'words', kind: 'teacher', status: 'ready', path: join(t.ws.modelsDir, 'words') })
      const distillation: ModelDistillation = { teachers: [{ id: bert.id, name: 'bert' }, { id: words.id, name: 'words' }], method: 'teacher-tags', mode: null }
      const s = t.ws.createModel({ name: 's', kind: 'student', status: 'ready', path: join(t.ws.modelsDir, 's'), parentId: bert.id, distillation })
      // A retrain (or int8 version) copies its base's record, deleted teachers included.
      const copy = t.ws.createModel({ name: 's2', kind: 'student', status: 'ready', path: join(t.ws.modelsDir, 's2'), parentId: s.id, distillation: s.distillation })
      expect(t.ws.getModel(s.id).distillation).toEqual(distillation)
      t.ws.deleteModel(words.id)
      const gone = { teachers: [{ id: bert.id, name: 'bert' }, { id: null, name: 'words' }], method: 'teacher-tags', mode: null }
      expect(t.ws.getModel(s.id).distillation).toEqual(gone)
      expect(t.ws.getModel(copy.id).distillation).toEqual(gone)
      // Deleting the student deletes its teacher rows, not the teachers.
      t.ws.deleteModel(s.id)
      expect(t.ws.getModel(bert.id).name).toBe('bert')
      const raw = new Database(t.path, { readonly: true })
      expect(raw.prepare('SELECT count(*) AS n FROM model_teachers WHERE model_id = ?').get(s.id)).toEqual({ n: 0 })
      raw.close()
    } finally {
      t.done()
    }
  })

  it('upgrades a version-5 workspace: each student keeps its one teacher (deleted or not), its mode and soft labels', async () => {
    // The rows as version 5 wrote them: distillation held {teacherId, mode}.
    const v5 = `
      DROP TABLE model_teachers; ALTER TABLE annotations DROP COLUMN rule; ALTER TABLE models DROP COLUMN benchmark;
      ${UNDO_DOCUMENT_DELETION}
      INSERT INTO models (id, name, path, config, created_at, kind, status, entity_types) VALUES (1, 'teacher', '/m/t', '{}', '2025-01-01T00:00:00Z', 'teacher', 'ready', '["Disease"]');
      INSERT INTO models (id, name, path, config, created_at, kind, status, parent_id, distillation)
        VALUES (2, 'teacher → 1 layers', '/m/s', '{}', '2025-01-02T00:00:00Z', 'student', 'ready', 1, '{"teacherId":1,"mode":"fixed"}'),
               (3, 'orphan → 2 layers', '/m/o', '{}', '2025-01-03T00:00:00Z', 'student', 'ready', NULL, '{"teacherId":9,"mode":"dynamic"}'),
               (4, 'plain', '/m/p', '{}', '2025-01-04T00:00:00Z', 'teacher', 'ready', NULL, NULL);`
    await upgradedFrom(5, v5, (ws) => {
      const byName = Object.fromEntries(ws.listModels().map((m) => [m.name, m]))
      expect(byName['teacher → 1 layers']!.distillation).toEqual({ teachers: [{ id: 1, name: 'teacher' }], method: 'soft-labels', mode: 'fixed' })
      expect(byName['orphan → 2 layers']!.distillation).toEqual({ teachers: [{ id: null, name: 'model 9' }], method: 'soft-labels', mode: 'dynamic' })
      expect(byName['plain']!.distillation).toBeNull()
      expect(byName['teacher']!.entityTypes).toEqual(['Disease'])
    })
  })
})

describe('settings and the shipped flag (schema 3)', () => {
  it('keeps one JSON value per key: absent → null, set, replaced; survives reopening', () => {
    const { dir, cleanup } = tempDir()
    try {
      const path = join(dir, 's.sqlite')
      const ws = Workspace.open(path, { user: 'u' })
      expect(ws.setting('defaultModel')).toBeNull()
      ws.setSetting('defaultModel', { decision: 'declined', reason: 'had a model' })
      ws.setSetting('defaultModel', { decision: 'installed', modelId: 3, source: '/opt/app/resources/models/default' })
      ws.close()
      const again = Workspace.open(path, { user: 'u' })
      try {
        expect(again.setting('defaultModel')).toEqual({ decision: 'installed', modelId: 3, source: '/opt/app/resources/models/default' })
      } finally {
        again.close()
      }
    } finally {
      cleanup()
    }
  })

  it('marks copies of the default model as shipped, nothing else', () => {
    const t = tempWorkspace()
    try {
      const own = t.ws.createModel({ name: 'own', kind: 'teacher', status: 'ready', path: join(t.dir, 'models', 'own'), config })
      const shipped = t.ws.createModel({ name: 'Default model (Disease)', kind: 'imported', status: 'ready', path: join(t.dir, 'models', 'd'), config, shipped: true })
      expect(own.shipped).toBe(false)
      expect(shipped.shipped).toBe(true)
      expect(t.ws.listModels().map((m) => [m.name, m.shipped])).toEqual([
        ['own', false],
        ['Default model (Disease)', true],
      ])
    } finally {
      t.done()
    }
  })
})

describe("the default model's benchmark scores (schema 8)", () => {
  const benchmark = { split: 'test' as const, tagging: 'every head merged', scores: [{ corpus: 'BC2GM', type: 'Gene', f1: 0.788 }] }

  it('are stored with the model, kept by other updates, cleared by null, and survive reopening', () => {
    const t = tempWorkspace()
    try {
      const rec = t.ws.createModel({ name: 'Default model (Gene)', kind: 'imported', path: join(t.dir, 'models', 'd'), config, shipped: true })
      expect(rec.benchmark).toBeNull()
      t.ws.updateModel(rec.id, { status: 'ready', benchmark })
      t.ws.updateModel(rec.id, { trainingSummary: 'later note' })
      const other = t.ws.createModel({ name: 'other', kind: 'teacher', status: 'ready', path: join(t.dir, 'models', 'o'), config, benchmark })
      t.ws.updateModel(other.id, { benchmark: null })
      t.ws.close()
      const again = Workspace.open(t.path, { user: 'u' })
      try {
        expect(again.listModels().map((m) => [m.name, m.benchmark])).toEqual([
          ['Default model (Gene)', benchmark],
          ['other', null],
        ])
      } finally {
        again.close()
      }
    } finally {
      t.done()
    }
  })

  it('upgrades a version-7 workspace: its models stay, with none', async () => {
    await upgradedFrom(
      7,
      `ALTER TABLE models DROP COLUMN benchmark; ${UNDO_DOCUMENT_DELETION}`,
      (ws) => expect(ws.listModels().map((m) => [m.name, m.shipped, m.benchmark])).toEqual([['Default model (Disease)', true, null]]),
      (ws) => void ws.createModel({ name: 'Default model (Disease)', kind: 'imported', status: 'ready', path: join(ws.modelsDir, 'd'), config, shipped: true }),
    )
  })
})

describe('adapted models (schema 4)', () => {
  it('records how a model was adapted when its job finishes; other updates keep it; survives reopening', () => {
    const t = tempWorkspace()
    try {
      const base = t.ws.createModel({ name: 'base', kind: 'imported', status: 'ready', path: join(t.dir, 'models', 'base'), config })
      const rec = t.ws.createModel({ name: 'base adapted to ws', kind: 'teacher', parentId: base.id, path: join(t.dir, 'models', 'adapted') })
      expect(rec.adaptation).toBeNull()
      const adaptation = { documents: 40, words: 5210, epochs: 3, steps: 27, heldOutAccuracy: 0.125 }
      t.ws.updateModel(rec.id, { status: 'ready', adaptation })
      t.ws.updateModel(rec.id, { trainingSummary: 'later note' })
      expect(t.ws.getModel(rec.id)).toMatchObject({ adaptation, parentId: base.id, trainingSummary: 'later note' })
      expect(t.ws.getModel(base.id).adaptation).toBeNull()
      const path = t.ws.path
      t.ws.close()
      const again = Workspace.open(path, { user: 'u' })
      try {
        expect(again.getModel(rec.id).adaptation).toEqual(adaptation)
      } finally {
        again.close()
      }
    } finally {
      t.done()
    }
  })
})
