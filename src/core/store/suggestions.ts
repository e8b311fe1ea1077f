// Model suggestions (annotations of origin 'model', state 'suggested') and the review queue.
import type { ReviewStatus } from '@shared/domain'
import { checkOverlap, liveAnnotation, revise, touch } from './annotations'
import type { Connection } from './connection'
import { StoreError } from './errors'
import { normType, now, ruleOf, snapshot, type AnnRow } from './rows'
import type { DocumentSuggestions } from './types'

/**
 * Stores a tagging batch in ONE transaction: for each document its previous suggestions are
 * deleted (with revisions), the new ones are inserted (origin 'model', state 'suggested', with
 * revisions by `by`) except those overlapping an accepted annotation or a more confident
 * suggestion (ties: the longer, then the earlier), and its uncertainty is recorded. Accepted
 * annotations are never touched. A multi-type model's output may overlap across types (core/tag/
 * merge); entities here may not, so the more confident stays, as `tag` once merged them.
 */
export function replaceSuggestions(
  c: Connection,
  batch: DocumentSuggestions[],
  opts: { modelId: number | null; by: string },
): { stored: number; dropped: number } {
  return c.write(() => {
    const at = now()
    let stored = 0
    let dropped = 0
    for (const item of batch) {
      // Deleted while the batch was being tagged: its suggestions are not wanted any more.
      if (c.isDeletedDocument(item.documentId)) continue
      const doc = c.docRow(item.documentId)
      for (const old of c
        .stmt(`SELECT * FROM annotations WHERE document_id = ? AND deleted = 0 AND state = 'suggested'`)
        .all(doc.id) as AnnRow[]) {
        const row = c
          .stmt('UPDATE annotations SET deleted = 1, updated_at = ?, updated_by = ? WHERE id = ? RETURNING *')
          .get(at, opts.by, old.id) as AnnRow
        revise(c, row, 'delete', snapshot(old), null, at, opts.by)
      }
      const taken = (
        c.stmt(`SELECT start, "end" FROM annotations WHERE document_id = ? AND deleted = 0 AND state = 'accepted'`).all(doc.id) as Array<{
          start: number
          end: number
        }>
      ).slice()
      // Which to keep: the most confident first; then stored in text order.
      const byConfidence = [...item.suggestions].sort((a, b) => (b.confidence || 0) - (a.confidence || 0) || b.end - b.start - (a.end - a.start) || a.start - b.start)
      const kept: typeof byConfidence = []
      for (const sug of byConfidence) {
        const valid =
          Number.isInteger(sug.start) && Number.isInteger(sug.end) && sug.start >= 0 && sug.end > sug.start && sug.end <= doc.text.length
        if (!valid || taken.some((t) => t.start < sug.end && t.end > sug.start)) {
          dropped++
          continue
        }
        taken.push({ start: sug.start, end: sug.end })
        kept.push(sug)
      }
      for (const sug of kept.sort((a, b) => a.start - b.start)) {
        const type = normType(sug.type)
        const confidence = Math.min(1, Math.max(0, Number.isFinite(sug.confidence) ? sug.confidence : 0))
        const row = c
          .stmt(
            `INSERT INTO annotations (document_id, start, "end", type, concept_id, origin, confidence, rule, state, updated_at, updated_by)
             VALUES (?, ?, ?, ?, NULL, 'model', ?, ?, 'suggested', ?, ?) RETURNING *`,
          )
          .get(doc.id, sug.start, sug.end, type, confidence, ruleOf(sug.rule, doc), at, opts.by) as AnnRow
        revise(c, row, 'create', null, snapshot(row), at, opts.by)
        stored++
      }
      if (item.uncertainty !== null) {
        const score = (x: number | null | undefined, missing: number | null) =>
          x === null || x === undefined ? missing : Math.min(1, Math.max(0, Number.isFinite(x) ? x : 1))
        c.stmt(
          `INSERT INTO document_uncertainty (document_id, model_id, uncertainty, margin, entropy, tagged_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (document_id) DO UPDATE SET model_id = excluded.model_id, uncertainty = excluded.uncertainty,
           margin = excluded.margin, entropy = excluded.entropy, tagged_at = excluded.tagged_at`,
        ).run(doc.id, opts.modelId, score(item.uncertainty, 1), score(item.margin, null), score(item.entropy, null), at)
      } else {
        // No words to score, but the suggestions (none) are still this model's: the version is kept.
        c.stmt('UPDATE document_uncertainty SET model_id = ?, tagged_at = ? WHERE document_id = ?').run(opts.modelId, at, doc.id)
      }
    }
    return { stored, dropped }
  })
}

/**
 * Accepts suggestions, all or none: each becomes a person-confirmed annotation (state
 * 'accepted', origin 'person', confidence kept) with an 'update' revision by this user, and its
 * document's review starts. An id that is not a live suggestion is refused.
 */
export function acceptSuggestions(c: Connection, ids: number[]): number {
  return c.write(() => acceptMany(c, [...new Set(ids)]))
}

/** Accepts every live suggestion with confidence >= threshold (of one document, or all). */
export function acceptSuggestionsAbove(c: Connection, threshold: number, documentId?: number): number {
  if (!(threshold >= 0 && threshold <= 1)) throw new StoreError('invalid_request', `Threshold must lie in [0, 1], got ${threshold}`)
  return c.write(() => {
    if (documentId !== undefined) c.docRow(documentId)
    const ids = (
      c
        .stmt(
          `SELECT a.id FROM annotations a JOIN documents d ON d.id = a.document_id
           WHERE a.deleted = 0 AND d.deleted = 0 AND a.state = 'suggested' AND a.confidence >= ?
           AND (? IS NULL OR a.document_id = ?) ORDER BY a.document_id, a.start`,
        )
        .all(threshold, documentId ?? null, documentId ?? null) as Array<{ id: number }>
    ).map((r) => r.id)
    return acceptMany(c, ids)
  })
}

/** Rejects suggestions, all or none: each is deleted with a 'delete' revision by this user. */
export function rejectSuggestions(c: Connection, ids: number[]): number {
  return c.write(() => {
    const at = now()
    let n = 0
    for (const id of new Set(ids)) {
      const cur = liveSuggestion(c, id)
      const row = c
        .stmt('UPDATE annotations SET deleted = 1, updated_at = ?, updated_by = ? WHERE id = ? RETURNING *')
        .get(at, c.user, id) as AnnRow
      revise(c, row, 'delete', snapshot(cur), null, at)
      touch(c, c.docRow(cur.document_id))
      n++
    }
    return n
  })
}

/** A tagged document not marked done, with what its last tagging said: what the review queue ranks. */
export interface ReviewCandidate {
  documentId: number
  externalId: string
  title: string
  status: ReviewStatus
  /** Least confidence, margin and entropy of the last tagging (margin / entropy null when not stored). */
  leastConfidence: number
  margin: number | null
  entropy: number | null
  /** The model whose suggestions the document holds (null: unknown, or since deleted). */
  modelId: number | null
  /** Live suggestions in the document. */
  suggestions: number
}

/**
 * Every tagged document not marked done, in document order (the order strategies call "position");
 * ranking them is the review queue's strategy's job (src/main/models/review-queue.ts).
 */
export function reviewCandidates(c: Connection): ReviewCandidate[] {
  c.assertOpen()
  const rows = c
    .stmt(
      `SELECT d.id, d.external_id, d.title, d.status, u.uncertainty, u.margin, u.entropy, u.model_id,
              (SELECT count(*) FROM annotations a WHERE a.document_id = d.id AND a.deleted = 0 AND a.state = 'suggested') AS suggestions
       FROM document_uncertainty u JOIN documents d ON d.id = u.document_id
       WHERE d.status <> 'done' AND d.deleted = 0 ORDER BY d.id`,
    )
    .all() as Array<{
    id: number
    external_id: string
    title: string
    status: ReviewStatus
    uncertainty: number
    margin: number | null
    entropy: number | null
    model_id: number | null
    suggestions: number
  }>
  return rows.map((r) => ({
    documentId: r.id,
    externalId: r.external_id,
    title: r.title,
    status: r.status,
    leastConfidence: r.uncertainty,
    margin: r.margin,
    entropy: r.entropy,
    modelId: r.model_id,
    suggestions: r.suggestions,
  }))
}

/** The model whose tagging made the document's suggestions (one pass replaces them all); null when unknown. */
export function suggestionModelId(c: Connection, documentId: number): number | null {
  c.assertOpen()
  const row = c.stmt('SELECT model_id FROM document_uncertainty WHERE document_id = ?').get(documentId) as { model_id: number | null } | undefined
  return row?.model_id ?? null
}

function liveSuggestion(c: Connection, id: number): AnnRow {
  const cur = liveAnnotation(c, id)
  if (cur.state !== 'suggested') throw new StoreError('conflict', `Annotation ${id} is not a suggestion (it is already accepted)`)
  return cur
}

function acceptMany(c: Connection, ids: number[]): number {
  const at = now()
  for (const id of ids) {
    const cur = liveSuggestion(c, id)
    const doc = c.docRow(cur.document_id)
    checkOverlap(c, doc, cur.start, cur.end, cur.id, 'accepted')
    const row = c
      .stmt(`UPDATE annotations SET state = 'accepted', origin = 'person', updated_at = ?, updated_by = ? WHERE id = ? RETURNING *`)
      .get(at, c.user, id) as AnnRow
    revise(c, row, 'update', snapshot(cur), snapshot(row), at)
    touch(c, doc)
  }
  return ids.length
}
