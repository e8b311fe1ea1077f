// The correction loop in the store: the learning curve, the queue's other scores, the suggestions' model.
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import Database from '@core/store/sqlite'
import { SCHEMA_VERSION, Workspace } from '@core/store'
import { DOC_A, DOC_B, tempDir, tempWorkspace, UNDO_DOCUMENT_DELETION } from './helpers'

describe('learning curve and suggestion versions', () => {
  it('keeps one point per retrain, oldest first, and survives the model being deleted', () => {
    const t = tempWorkspace()
    try {
      const m = t.ws.createModel({ name: 'm', kind: 'teacher', status: 'ready', path: t.dir })
      const p1 = t.ws.addLearningPoint({ modelId: m.id, baseModelId: null, trigger: 'manual', reviewed: 10, heldOut: 3, f1Before: 0.4, f1After: 0.5 })
      t.ws.addLearningPoint({ modelId: null, baseModelId: m.id, trigger: 'auto', reviewed: 20, heldOut: 4, f1Before: 0.5, f1After: 1.2 })
      expect(p1).toMatchObject({ modelId: m.id, trigger: 'manual', reviewed: 10, heldOut: 3, f1Before: 0.4, f1After: 0.5 })
      expect(t.ws.learningCurve().map((p) => [p.reviewed, p.trigger, p.f1After])).toEqual([
        [10, 'manual', 0.5],
        [20, 'auto', 1], // clamped to [0, 1]
      ])
      t.ws.deleteModel(m.id)
      expect(t.ws.learningCurve().map((p) => [p.modelId, p.baseModelId])).toEqual([
        [null, null],
        [null, null],
      ])
    } finally {
      t.done()
    }
  })

  it("records which model made a document's suggestions, also when the document had no words to score", async () => {
    const t = tempWorkspace()
    try {
      await t.ws.importDocuments([DOC_A, DOC_B], 'x')
      const [a, b] = t.ws.listDocuments().documents.map((d) => d.id) as [number, number]
      const m1 = t.ws.createModel({ name: 'one', kind: 'teacher', status: 'ready', path: t.dir })
      const m2 = t.ws.createModel({ name: 'two', kind: 'teacher', status: 'ready', path: t.dir })
      expect(t.ws.getDocument(a).suggestionModelId).toBeNull()
      t.ws.replaceSuggestions([{ documentId: a, suggestions: [], uncertainty: 0.3, margin: 0.2, entropy: 0.1 }], { modelId: m1.id, by: 'model:one' })
      expect(t.ws.getDocument(a).suggestionModelId).toBe(m1.id)
      t.ws.replaceSuggestions([{ documentId: a, suggestions: [], uncertainty: null }], { modelId: m2.id, by: 'model:two' })
      expect(t.ws.getDocument(a).suggestionModelId).toBe(m2.id)
      expect(t.ws.getDocument(b).suggestionModelId).toBeNull()
      expect(t.ws.reviewCandidates()).toMatchObject([{ documentId: a, leastConfidence: 0.3, margin: 0.2, entropy: 0.1, modelId: m2.id }])
      t.ws.deleteModel(m2.id)
      expect(t.ws.getDocument(a).suggestionModelId).toBeNull()
      // Reviewed = done or in progress (what retraining learns from and Auto-improve counts).
      expect(t.ws.reviewedCount()).toBe(0)
      t.ws.setStatus(a, 'done')
      t.ws.setStatus(b, 'in_progress')
      expect(t.ws.reviewedCount()).toBe(2)
      expect(t.ws.documentIdsWithStatus('done')).toEqual([a])
      t.ws.setStatus(b, 'unreviewed')
      expect(t.ws.reviewedCount()).toBe(1)
    } finally {
      t.done()
    }
  })

  it('upgrades a version-4 workspace: earlier taggings keep their least confidence, without margin and entropy', async () => {
    const { dir, cleanup } = tempDir()
    try {
      const path = join(dir, 'v4.sqlite')
      const ws = Workspace.open(path, { user: 'u' })
      await ws.importDocuments([DOC_A], 'a')
      const [a] = ws.listDocuments().documents.map((d) => d.id) as [number]
      ws.replaceSuggestions([{ documentId: a, suggestions: [], uncertainty: 0.4, margin: 0.3, entropy: 0.2 }], { modelId: null, by: 'model:x' })
      ws.close()
      const db = new Database(path)
      db.exec(`
        DROP TABLE model_teachers; DROP TABLE learning_curve; ALTER TABLE annotations DROP COLUMN rule; ALTER TABLE models DROP COLUMN benchmark;
        ALTER TABLE document_uncertainty DROP COLUMN margin; ALTER TABLE document_uncertainty DROP COLUMN entropy;
        ${UNDO_DOCUMENT_DELETION}
        DELETE FROM schema_migrations WHERE version > 4;
      `)
      db.pragma('user_version = 4')
      db.close()
      const again = Workspace.open(path, { user: 'u' })
      try {
        expect(again.reviewCandidates()).toMatchObject([{ documentId: a, leastConfidence: 0.4, margin: null, entropy: null }])
        expect(again.learningCurve()).toEqual([])
      } finally {
        again.close()
      }
      const check = new Database(path, { readonly: true })
      expect(check.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION)
      check.close()
    } finally {
      cleanup()
    }
  })
})
