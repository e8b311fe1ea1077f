// review:queue: the tagged documents not done, in the order of the workspace's active-learning
// strategy. The scores come from the last tagging (stored per document); the ranking is
// core/active/strategies' — the same code the simulated annotator (bench:active) measures.
import type { ReviewQueueItem } from '@shared/ipc'
import { ACTIVE_STRATEGIES, REVIEW_STRATEGY_DEFAULT, type ActiveStrategy } from '@shared/recipes'
import { rankPool, tfidfVectors, type Candidate } from '../../core/active/strategies'
import type { ReviewCandidate, Workspace } from '../../core/store'

/** The size of the first batch the diverse strategy spreads over topic clusters. */
export const QUEUE_DIVERSE_BATCH = 20
/** One shuffle per workspace for 'random', so the queue does not reorder on every refresh. */
const QUEUE_RANDOM_SEED = 1

/** The workspace's strategy, or the default when none was chosen (or a stored name is no longer known). */
export function reviewStrategy(ws: Workspace): ActiveStrategy {
  const stored = ws.setting('reviewStrategy')
  return (ACTIVE_STRATEGIES as readonly string[]).includes(stored ?? '') ? (stored as ActiveStrategy) : REVIEW_STRATEGY_DEFAULT
}

/**
 * The candidates as core/active sees them. A document tagged before margin and entropy were stored
 * has no score under those strategies: it ranks after every scored one until it is tagged again.
 */
export function toCandidates(rows: readonly ReviewCandidate[], strategy: ActiveStrategy): Candidate[] {
  return rows.map((r, position) => {
    const missing = (strategy === 'margin' && r.margin === null) || (strategy === 'entropy' && r.entropy === null)
    return {
      position,
      uncertainty: missing ? null : { leastConfidence: r.leastConfidence, margin: r.margin ?? 0, entropy: r.entropy ?? 0 },
    }
  })
}

/** Ranks candidate rows (in document order) by `strategy`; `texts` feeds the diverse strategy's vectors. */
export function rankReviewQueue(
  rows: readonly ReviewCandidate[],
  strategy: ActiveStrategy,
  limit: number,
  texts: (documentIds: number[]) => Map<number, string>,
): ReviewQueueItem[] {
  const order = rankPool(strategy, toCandidates(rows, strategy), {
    seed: QUEUE_RANDOM_SEED,
    batch: Math.min(QUEUE_DIVERSE_BATCH, rows.length),
    vectors: (pool) => {
      const byId = texts(pool.map((c) => rows[c.position]!.documentId))
      return tfidfVectors(pool.map((c) => byId.get(rows[c.position]!.documentId) ?? ''))
    },
  })
  return order.slice(0, limit).map((position) => {
    const r = rows[position]!
    return {
      documentId: r.documentId,
      externalId: r.externalId,
      title: r.title,
      status: r.status,
      uncertainty: r.leastConfidence,
      margin: r.margin,
      entropy: r.entropy,
      suggestions: r.suggestions,
      modelId: r.modelId,
    }
  })
}

export function reviewQueue(ws: Workspace, limit: number): ReviewQueueItem[] {
  return rankReviewQueue(ws.reviewCandidates(), reviewStrategy(ws), limit, (ids) => ws.documentTextsById(ids))
}
