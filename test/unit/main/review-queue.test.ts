// The review queue's strategy wiring: stored scores → core/active/strategies → the queue's order,
// the strategy persisted per workspace, and through the handler table (review:queue, learning:*).
import { describe, expect, it } from 'vitest'
import { REVIEW_STRATEGY_DEFAULT } from '@shared/recipes'
import type { ReviewCandidate } from '@core/store'
import { rankPool } from '@core/active/strategies'
import { rankReviewQueue, reviewStrategy, toCandidates } from '../../../src/main/models/review-queue'
import { createHandlers, dispatch, type HandlerContext } from '../../../src/main/api'
import { makeDoc, tempWorkspace } from '../store/helpers'

const row = (documentId: number, leastConfidence: number, margin: number | null, entropy: number | null): ReviewCandidate => ({
  documentId,
  externalId: `pmid-${documentId}`,
  title: `Document ${documentId}`,
  status: 'unreviewed',
  leastConfidence,
  margin,
  entropy,
  modelId: 1,
  suggestions: 0,
})

// In document order; each score puts a different document first.
const ROWS = [row(1, 0.1, 0.9, 0.2), row(2, 0.5, 0.2, 0.3), row(3, 0.3, 0.5, 0.8), row(4, 0.2, null, null)]
const noTexts = () => new Map<number, string>()
const order = (strategy: Parameters<typeof rankReviewQueue>[1], rows = ROWS) => rankReviewQueue(rows, strategy, 100, noTexts).map((q) => q.documentId)

describe('rankReviewQueue', () => {
  it('orders by the strategy score, most uncertain first; a document without that score last', () => {
    expect(order('least-confidence')).toEqual([2, 3, 4, 1])
    expect(order('margin')).toEqual([1, 3, 2, 4])
    expect(order('entropy')).toEqual([3, 2, 1, 4])
    expect(order('order')).toEqual([1, 2, 3, 4])
  })

  it('gives the same as core/active on the same candidates (no score of its own)', () => {
    for (const s of ['least-confidence', 'margin', 'entropy', 'order', 'random'] as const) {
      const positions = rankPool(s, toCandidates(ROWS, s), { seed: 1, batch: 4 })
      expect(order(s)).toEqual(positions.map((p) => ROWS[p]!.documentId))
    }
  })

  it('random: a fixed shuffle of every candidate (the queue does not reorder on each refresh)', () => {
    const rows = Array.from({ length: 40 }, (_, i) => row(i + 1, Math.random(), Math.random(), Math.random()))
    const a = order('random', rows)
    expect([...a].sort((x, y) => x - y)).toEqual(rows.map((r) => r.documentId))
    expect(order('random', rows)).toEqual(a)
    expect(a).not.toEqual(rows.map((r) => r.documentId))
  })

  it('diverse: one document per topic first, from the texts of the most uncertain ones', () => {
    // Two topics; the four most uncertain documents are all about the first.
    const topics = ['cystic fibrosis transmembrane conductance regulator mutation lung', 'breast cancer tamoxifen estrogen receptor tumour']
    const rows = Array.from({ length: 30 }, (_, i) => row(i + 1, i < 4 ? 0.9 - i * 0.01 : 0.5 - i * 0.01, 0, 0))
    const texts = (ids: number[]) => new Map(ids.map((id) => [id, `${topics[id <= 15 ? 0 : 1]} study ${id}`]))
    const asked: number[][] = []
    const q = rankReviewQueue(rows, 'diverse', 100, (ids) => (asked.push(ids), texts(ids))).map((x) => x.documentId)
    expect([...q].sort((a, b) => a - b)).toEqual(rows.map((r) => r.documentId))
    // Least confidence alone would put documents 1-4 (topic one) first; diverse reaches topic two within the first batch.
    expect(q.slice(0, 2)).toContain(1)
    expect(q.slice(0, 20).some((id) => id > 15)).toBe(true)
    expect(asked).toHaveLength(1)
  })

  it('keeps the stored scores on each item and cuts at the limit', () => {
    const q = rankReviewQueue(ROWS, 'margin', 2, noTexts)
    expect(q).toEqual([
      { documentId: 1, externalId: 'pmid-1', title: 'Document 1', status: 'unreviewed', uncertainty: 0.1, margin: 0.9, entropy: 0.2, suggestions: 0, modelId: 1 },
      { documentId: 3, externalId: 'pmid-3', title: 'Document 3', status: 'unreviewed', uncertainty: 0.3, margin: 0.5, entropy: 0.8, suggestions: 0, modelId: 1 },
    ])
  })
})

describe('the strategy per workspace, through the handler table', () => {
  it('defaults to REVIEW_STRATEGY_DEFAULT, persists a choice, and review:queue follows it', async () => {
    const t = tempWorkspace()
    try {
      const docs = [1, 2, 3].map((i) => makeDoc(`d${i}`, `Title ${i}`, `Abstract number ${i} about a disease.`))
      await t.ws.importDocuments(docs, 'x')
      const ids = t.ws.listDocuments().documents.map((d) => d.id)
      t.ws.replaceSuggestions(
        [
          { documentId: ids[0]!, suggestions: [], uncertainty: 0.2, margin: 0.9, entropy: 0.1 },
          { documentId: ids[1]!, suggestions: [], uncertainty: 0.6, margin: 0.1, entropy: 0.2 },
          { documentId: ids[2]!, suggestions: [], uncertainty: 0.4, margin: 0.5, entropy: 0.9 },
        ],
        { modelId: null, by: 'model:test' },
      )
      const ctx: HandlerContext = {
        user: 'tester',
        defaultWorkspacePath: t.path,
        workspace: () => t.ws,
        openWorkspace: () => t.ws,
        emit: () => undefined,
        dialogs: { openCorpusFiles: async () => [], saveExport: async () => null },
      }
      const handlers = createHandlers(ctx)
      const call = async <C extends 'learning:get' | 'learning:set' | 'review:queue'>(c: C, req: unknown) => {
        const r = await dispatch(handlers, c, req)
        if (!r.ok) throw new Error(r.error.message)
        return r.value
      }
      expect(reviewStrategy(t.ws)).toBe(REVIEW_STRATEGY_DEFAULT)
      expect((await call('learning:get', {})).strategy).toBe(REVIEW_STRATEGY_DEFAULT)
      expect((await call('review:queue', {})).map((q) => q.documentId)).toEqual([ids[1], ids[2], ids[0]])
      expect((await call('learning:set', { strategy: 'margin' })).strategy).toBe('margin')
      expect(t.ws.setting('reviewStrategy')).toBe('margin')
      expect((await call('review:queue', {})).map((q) => q.documentId)).toEqual([ids[0], ids[2], ids[1]])
      expect((await dispatch(handlers, 'learning:set', { strategy: 'alphabetical' })).ok).toBe(false)
      // Auto-improve: off by default, N persisted.
      const off = await call('learning:get', {})
      expect(off.autoImprove).toMatchObject({ enabled: false, running: false, queued: false })
      const on = await call('learning:set', { autoImprove: { enabled: true, every: 7 } })
      expect(on.autoImprove).toMatchObject({ enabled: true, every: 7, reviewedSince: 0 })
      expect(t.ws.setting('autoImprove')).toEqual({ enabled: true, every: 7, baseline: 0 })
      // A review counts towards the next automatic retrain.
      await call('learning:get', {})
      const r = await dispatch(handlers, 'documents:setStatus', { id: ids[0], status: 'done' })
      expect(r.ok).toBe(true)
      expect((await call('learning:get', {})).autoImprove.reviewedSince).toBe(1)
    } finally {
      t.done()
    }
  })
})
