// Annotations: create, update, soft-delete, each with a revision in the same transaction, and the
// append-only revision trail itself. Also the span and overlap rules suggestions.ts shares.
import type { Annotation, AnnotationOrigin, Revision } from '@shared/domain'
import type { Connection } from './connection'
import { StoreError } from './errors'
import { normConcept, normType, now, ruleOf, snapshot, toAnnotation, type AnnRow, type DocRow, type RevRow, type Snapshot } from './rows'
import type { CreateAnnotationInput, UpdateAnnotationInput } from './types'

export function createAnnotation(c: Connection, input: CreateAnnotationInput): Annotation {
  return c.write(() => {
    const doc = c.docRow(input.documentId)
    const type = normType(input.type)
    checkSpan(doc, input.start, input.end)
    const state = input.state ?? 'accepted'
    // An accepted annotation wins over model suggestions it overlaps (they are removed, with
    // revisions); a suggestion may overlap nothing.
    checkOverlap(c, doc, input.start, input.end, null, state === 'accepted' ? 'accepted' : 'any')
    const confidence = input.confidence ?? null
    if (confidence !== null && !(confidence >= 0 && confidence <= 1)) {
      throw new StoreError('invalid_request', `Confidence must lie in [0, 1], got ${confidence}`)
    }
    const rule = ruleOf(input.rule, doc)
    const at = now()
    if (state === 'accepted') dropOverlappingSuggestions(c, doc.id, input.start, input.end, null, at)
    const row = c
      .stmt(
        `INSERT INTO annotations (document_id, start, "end", type, concept_id, origin, confidence, rule, state, updated_at, updated_by)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      )
      .get(
        doc.id,
        input.start,
        input.end,
        type,
        normConcept(input.conceptId),
        input.origin ?? 'person',
        confidence,
        rule,
        state,
        at,
        c.user,
      ) as AnnRow
    revise(c, row, 'create', null, snapshot(row), at)
    touch(c, doc)
    return toAnnotation(row)
  })
}

/**
 * Retype / re-bound / change concept or state. A no-op update writes nothing. A person's edit of
 * a model suggestion confirms it: unless `state: 'suggested'` is given it becomes accepted with
 * origin 'person' (confidence kept), as suggestions:accept does.
 */
export function updateAnnotation(c: Connection, input: UpdateAnnotationInput): Annotation {
  return c.write(() => {
    const cur = liveAnnotation(c, input.id)
    const doc = c.docRow(cur.document_id)
    const start = input.start ?? cur.start
    const end = input.end ?? cur.end
    const type = input.type !== undefined ? normType(input.type) : cur.type
    const conceptId = input.conceptId !== undefined ? normConcept(input.conceptId) : cur.concept_id
    checkSpan(doc, start, end)
    const spanChanged = start !== cur.start || end !== cur.end
    const edited = spanChanged || type !== cur.type || conceptId !== cur.concept_id
    const state = input.state ?? (cur.state === 'suggested' && edited ? 'accepted' : cur.state)
    const confirmed = cur.state === 'suggested' && state === 'accepted'
    // Undo of an accept puts the suggestion back as the model's.
    const unconfirmed = cur.state === 'accepted' && state === 'suggested'
    const origin: AnnotationOrigin = confirmed ? 'person' : unconfirmed ? 'model' : cur.origin
    // Only a new span (or a newly accepted one) can create an overlap; retyping an (imported)
    // overlapping gold span stays allowed.
    if (spanChanged || confirmed) checkOverlap(c, doc, start, end, cur.id, state === 'accepted' ? 'accepted' : 'any')
    if (!edited && state === cur.state) return toAnnotation(cur)
    const at = now()
    if (state === 'accepted' && (spanChanged || confirmed)) dropOverlappingSuggestions(c, doc.id, start, end, cur.id, at)
    const row = c
      .stmt(
        `UPDATE annotations SET start = ?, "end" = ?, type = ?, concept_id = ?, origin = ?, state = ?, updated_at = ?, updated_by = ?
         WHERE id = ? RETURNING *`,
      )
      .get(start, end, type, conceptId, origin, state, at, c.user, cur.id) as AnnRow
    revise(c, row, 'update', snapshot(cur), snapshot(row), at)
    touch(c, doc)
    return toAnnotation(row)
  })
}

/** Soft delete: the row stays (revisions reference it), flagged deleted. */
export function deleteAnnotation(c: Connection, id: number): { id: number } {
  return c.write(() => {
    const cur = liveAnnotation(c, id)
    const doc = c.docRow(cur.document_id)
    const at = now()
    const row = c
      .stmt('UPDATE annotations SET deleted = 1, updated_at = ?, updated_by = ? WHERE id = ? RETURNING *')
      .get(at, c.user, id) as AnnRow
    revise(c, row, 'delete', snapshot(cur), null, at)
    touch(c, doc)
    return { id }
  })
}

/**
 * Puts an annotation back as it was before revision `revisionId`, from the history (undo in the
 * editor ends with the document's session): an added one is deleted, a deleted or rejected one
 * comes back with its id, a changed one takes back its span, type, origin, confidence and state.
 * Only an annotation's latest revision can be restored, so no later change is lost unseen; the
 * restore is itself a revision. Returns the annotation, or null when the restore deleted it.
 */
export function restoreRevision(c: Connection, revisionId: number): Annotation | null {
  return c.write(() => {
    const rev = c.stmt('SELECT * FROM revisions WHERE id = ?').get(revisionId) as RevRow | undefined
    if (!rev) throw new StoreError('not_found', `Revision ${revisionId} does not exist`)
    const latest = c.stmt('SELECT max(id) AS id FROM revisions WHERE annotation_id = ?').get(rev.annotation_id) as { id: number }
    if (latest.id !== rev.id) {
      throw new StoreError('conflict', 'This annotation was changed again afterwards: restore its later changes first (the list is newest first)')
    }
    const before = rev.before ? (JSON.parse(rev.before) as Snapshot) : null
    if (!before) {
      deleteAnnotation(c, rev.annotation_id)
      return null
    }
    const cur = c.stmt('SELECT * FROM annotations WHERE id = ?').get(rev.annotation_id) as AnnRow
    const doc = c.docRow(cur.document_id)
    checkSpan(doc, before.start, before.end)
    checkOverlap(c, doc, before.start, before.end, cur.id, before.state === 'accepted' ? 'accepted' : 'any')
    const at = now()
    if (before.state === 'accepted') dropOverlappingSuggestions(c, doc.id, before.start, before.end, cur.id, at)
    const row = c
      .stmt(
        `UPDATE annotations SET deleted = 0, start = ?, "end" = ?, type = ?, concept_id = ?, origin = ?, confidence = ?, state = ?,
         updated_at = ?, updated_by = ? WHERE id = ? RETURNING *`,
      )
      .get(before.start, before.end, before.type, before.conceptId, before.origin, before.confidence, before.state, at, c.user, cur.id) as AnnRow
    // A deleted annotation comes back as a creation, so the history reads "Added" / "Suggested".
    if (cur.deleted) revise(c, row, 'create', null, snapshot(row), at)
    else revise(c, row, 'update', snapshot(cur), snapshot(row), at)
    touch(c, doc)
    return toAnnotation(row)
  })
}

/** Every revision of the document's annotations, oldest first. */
export function history(c: Connection, documentId: number): Revision[] {
  c.assertOpen()
  c.docRow(documentId)
  const rows = c.stmt('SELECT * FROM revisions WHERE document_id = ? ORDER BY id').all(documentId) as RevRow[]
  return rows.map((r) => ({
    id: r.id,
    annotationId: r.annotation_id,
    documentId: r.document_id,
    action: r.action,
    before: r.before ? (JSON.parse(r.before) as Snapshot) : null,
    after: r.after ? (JSON.parse(r.after) as Snapshot) : null,
    at: r.at,
    by: r.by,
  }))
}

export function liveAnnotation(c: Connection, id: number): AnnRow {
  const row = c.stmt('SELECT * FROM annotations WHERE id = ? AND deleted = 0').get(id) as AnnRow | undefined
  if (!row) throw new StoreError('not_found', `Annotation ${id} does not exist or was deleted`)
  return row
}

function checkSpan(doc: DocRow, start: number, end: number): void {
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end <= start || end > doc.text.length) {
    throw new StoreError(
      'invalid_request',
      `Span [${start}, ${end}) is not valid for document ${doc.external_id}: need 0 <= start < end <= ${doc.text.length}`,
    )
  }
}

function quote(text: string, start: number, end: number): string {
  const s = text.slice(start, end).replace(/\s+/g, ' ')
  return s.length > 60 ? `${s.slice(0, 59)}…` : s
}

/** `against`: 'accepted' ignores suggestions (an accepted annotation replaces them). */
export function checkOverlap(
  c: Connection,
  doc: DocRow,
  start: number,
  end: number,
  except: number | null,
  against: 'any' | 'accepted' = 'any',
): void {
  const other = c
    .stmt(
      `SELECT * FROM annotations WHERE document_id = ? AND deleted = 0 AND start < ? AND "end" > ? AND id <> ?
       AND (? = 'any' OR state = 'accepted') ORDER BY start LIMIT 1`,
    )
    .get(doc.id, end, start, except ?? -1, against) as AnnRow | undefined
  if (other) {
    throw new StoreError(
      'conflict',
      `"${quote(doc.text, start, end)}" [${start}, ${end}) overlaps the ${other.type} annotation ` +
        `"${quote(doc.text, other.start, other.end)}" [${other.start}, ${other.end}) in document ${doc.external_id}; ` +
        'delete or shrink that annotation first',
    )
  }
}

/** Appends one revision of `row`, by this workspace's user unless `by` is given. */
export function revise(
  c: Connection,
  row: AnnRow,
  action: Revision['action'],
  before: Snapshot | null,
  after: Snapshot | null,
  at: string,
  by = c.user,
): void {
  c.stmt('INSERT INTO revisions (annotation_id, document_id, action, before, after, at, by) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
    row.id,
    row.document_id,
    action,
    before && JSON.stringify(before),
    after && JSON.stringify(after),
    at,
    by,
  )
}

/** Deletes live suggestions overlapping [start, end) (except `except`), with revisions. */
function dropOverlappingSuggestions(c: Connection, documentId: number, start: number, end: number, except: number | null, at: string): void {
  const rows = c
    .stmt(
      `SELECT * FROM annotations WHERE document_id = ? AND deleted = 0 AND state = 'suggested' AND start < ? AND "end" > ? AND id <> ?`,
    )
    .all(documentId, end, start, except ?? -1) as AnnRow[]
  for (const cur of rows) {
    const row = c
      .stmt('UPDATE annotations SET deleted = 1, updated_at = ?, updated_by = ? WHERE id = ? RETURNING *')
      .get(at, c.user, cur.id) as AnnRow
    revise(c, row, 'delete', snapshot(cur), null, at)
  }
}

/** Editing an unreviewed document starts its review. */
export function touch(c: Connection, doc: DocRow): void {
  if (doc.status === 'unreviewed') c.stmt("UPDATE documents SET status = 'in_progress' WHERE id = ?").run(doc.id)
}
