// Documents: the filtered list with facets, one document with its annotations, review status,
// navigation, export, deletion and its undo, and the document sets sent to the model jobs.
// A deleted document (documents.deleted = 1) is invisible to every read here: each query says
// `deleted = 0`, or goes through Connection.docRow, which does.
import type { DeletedDocument, DocumentDeletion, DocumentListResult } from '@shared/ipc'
import {
  REVIEW_STATUSES,
  type CorpusDocument,
  type DocumentDetail,
  type DocumentSummary,
  type Mention,
  type Passage,
  type ReviewStatus,
} from '@shared/domain'
import type { Connection } from './connection'
import { StoreError } from './errors'
import { suggestionModelId } from './suggestions'
import { now, SUMMARY_COLUMNS, toAnnotation, toSummary, type AnnRow, type DocRow, type SummaryRow } from './rows'
import type { LabelledQuery, ListQuery, WorkspaceSummary } from './types'

const DEFAULT_LIMIT = 100

export function info(c: Connection): WorkspaceSummary {
  c.assertOpen()
  const { n } = c.stmt('SELECT count(*) AS n FROM documents WHERE deleted = 0').get() as { n: number }
  return { path: c.path, documentCount: n, entityTypes: entityTypes(c) }
}

/** Types of all live annotations of live documents, sorted. */
export function entityTypes(c: Connection): string[] {
  c.assertOpen()
  const rows = c
    .stmt(
      `SELECT DISTINCT a.type FROM annotations a JOIN documents d ON d.id = a.document_id
       WHERE a.deleted = 0 AND d.deleted = 0 ORDER BY a.type`,
    )
    .all() as Array<{
    type: string
  }>
  return rows.map((r) => r.type)
}

/**
 * FTS5 query for free text: each whitespace-separated chunk becomes a phrase of its word
 * characters (so "beta-catenin" matches the tokens beta, catenin in sequence), the last chunk a
 * prefix phrase; phrases are ANDed. Quoting keeps user input from being read as FTS syntax.
 */
function ftsQuery(q: string): string | null {
  const chunks = q.split(/\s+/).filter(Boolean)
  const phrases: string[] = []
  chunks.forEach((chunk, i) => {
    const words = chunk.match(/[\p{L}\p{N}\p{M}]+/gu)
    if (!words) return
    phrases.push(`"${words.join(' ')}"${i === chunks.length - 1 ? ' *' : ''}`)
  })
  return phrases.length ? phrases.join(' AND ') : null
}

const escapeLike = (s: string): string => s.replace(/[\\%_]/g, (ch) => `\\${ch}`)

export function listDocuments(c: Connection, q: ListQuery = {}): DocumentListResult {
  c.assertOpen()
  const limit = Math.max(1, Math.min(q.limit ?? DEFAULT_LIMIT, 5000))
  const offset = Math.max(0, q.offset ?? 0)
  const fts = q.query ? ftsQuery(q.query.trim()) : null
  if (fts) {
    c.stmt('DELETE FROM temp.search_hits').run()
    c.stmt('INSERT INTO temp.search_hits (id) SELECT rowid FROM documents_fts WHERE documents_fts MATCH ?').run(fts)
  }
  const all = filters(q, {})
  const rows = c
    .stmt(`SELECT ${SUMMARY_COLUMNS} FROM documents d ${all.where} ORDER BY d.id LIMIT @limit OFFSET @offset`)
    .all({ ...all.params, limit, offset }) as SummaryRow[]
  const { total } = c.stmt(`SELECT count(*) AS total FROM documents d ${all.where}`).get(all.params) as {
    total: number
  }

  // Facets: each count honours every filter except its own, so the UI can show what a click yields.
  const s = filters(q, { skipStatus: true })
  const byStatus = Object.fromEntries(REVIEW_STATUSES.map((st) => [st, 0])) as Record<ReviewStatus, number>
  for (const r of c.stmt(`SELECT d.status, count(*) AS n FROM documents d ${s.where} GROUP BY d.status`).all(
    s.params,
  ) as Array<{ status: ReviewStatus; n: number }>) {
    byStatus[r.status] = r.n
  }
  const t = filters(q, { skipType: true })
  const byType: Record<string, number> = {}
  const typeSql = `SELECT a.type, count(DISTINCT a.document_id) AS n FROM annotations a
       WHERE a.deleted = 0 AND a.document_id IN (SELECT d.id FROM documents d ${t.where}) GROUP BY a.type ORDER BY a.type`
  for (const r of c.stmt(typeSql).all(t.params) as Array<{ type: string; n: number }>) byType[r.type] = r.n

  return { documents: rows.map(toSummary), total, counts: { byStatus, byType } }
}

function filters(
  q: ListQuery,
  skip: { skipStatus?: boolean; skipType?: boolean },
): { where: string; params: Record<string, unknown> } {
  const conds: string[] = ['d.deleted = 0']
  const params: Record<string, unknown> = {}
  const text = q.query?.trim()
  if (text) {
    const alts: string[] = []
    if (!/\s/.test(text)) {
      alts.push(`d.external_id LIKE @idLike ESCAPE '\\'`)
      params['idLike'] = `${escapeLike(text)}%`
    }
    // listDocuments has put the full-text hits in temp.search_hits.
    if (ftsQuery(text)) alts.push('d.id IN (SELECT id FROM temp.search_hits)')
    conds.push(alts.length ? `(${alts.join(' OR ')})` : '0')
  }
  if (q.status && !skip.skipStatus) {
    conds.push('d.status = @status')
    params['status'] = q.status
  }
  if (q.type && !skip.skipType) {
    conds.push('EXISTS (SELECT 1 FROM annotations a WHERE a.document_id = d.id AND a.deleted = 0 AND a.type = @type)')
    params['type'] = q.type.trim()
  }
  return { where: `WHERE ${conds.join(' AND ')}`, params }
}

/**
 * The distinct files documents were imported from (as recorded at import: absolute paths, or a
 * pasted text's name). Deleted documents' files included: they are still the user's files, which
 * an export must not overwrite.
 */
export function sourceFiles(c: Connection): string[] {
  c.assertOpen()
  return (c.stmt('SELECT DISTINCT source_file AS f FROM documents WHERE source_file IS NOT NULL').all() as Array<{ f: string }>).map((r) => r.f)
}

export function summary(c: Connection, id: number): DocumentSummary {
  const row = c.stmt(`SELECT ${SUMMARY_COLUMNS} FROM documents d WHERE d.id = ? AND d.deleted = 0`).get(id) as SummaryRow | undefined
  if (!row) throw new StoreError('not_found', `Document ${id} does not exist`)
  return toSummary(row)
}

export function getDocument(c: Connection, id: number): DocumentDetail {
  c.assertOpen()
  const doc = c.docRow(id)
  const anns = c
    .stmt('SELECT * FROM annotations WHERE document_id = ? AND deleted = 0 ORDER BY start, "end", id')
    .all(id) as AnnRow[]
  return {
    ...summary(c, id),
    text: doc.text,
    passages: JSON.parse(doc.passages) as Passage[],
    tokens: doc.tokens ? (JSON.parse(doc.tokens) as Array<[number, number]>) : null,
    annotations: anns.map(toAnnotation),
    suggestionModelId: suggestionModelId(c, id),
  }
}

export function setStatus(c: Connection, id: number, status: ReviewStatus): DocumentSummary {
  if (!REVIEW_STATUSES.includes(status)) throw new StoreError('invalid_request', `Unknown review status "${status}"`)
  c.write(() => {
    const r = c.stmt('UPDATE documents SET status = ? WHERE id = ? AND deleted = 0').run(status, id)
    if (r.changes === 0) throw new StoreError('not_found', `Document ${id} does not exist`)
  })
  return summary(c, id)
}

/** The given documents (each must be live) and what deleting them takes away; see DocumentDeletion. */
export function deletionImpact(c: Connection, ids: number[]): DocumentDeletion {
  c.assertOpen()
  const unique = liveIds(c, ids)
  const counts = c
    .stmt(
      `SELECT count(*) FILTER (WHERE state = 'accepted') AS annotations,
              count(*) FILTER (WHERE state = 'accepted' AND origin = 'person') AS by_person,
              count(*) FILTER (WHERE state = 'suggested') AS suggestions
       FROM annotations WHERE deleted = 0 AND document_id IN (SELECT value FROM json_each(?))`,
    )
    .get(JSON.stringify(unique)) as { annotations: number; by_person: number; suggestions: number }
  return {
    ids: unique,
    externalIds: unique.map((id) => c.docRow(id).external_id),
    annotations: counts.annotations,
    byPerson: counts.by_person,
    suggestions: counts.suggestions,
  }
}

/**
 * Soft delete, all or none: the rows stay with their annotations untouched (revisions reference
 * them), flagged deleted, so restoreDocuments brings them back exactly. Unknown or already deleted
 * ids are refused.
 */
export function deleteDocuments(c: Connection, ids: number[]): DocumentDeletion {
  return c.write(() => {
    const impact = deletionImpact(c, ids)
    c.stmt('UPDATE documents SET deleted = 1, deleted_at = ?, deleted_by = ? WHERE id IN (SELECT value FROM json_each(?))').run(
      now(),
      c.user,
      JSON.stringify(impact.ids),
    )
    return impact
  })
}

/**
 * Undoes deleteDocuments, all or none: the documents come back as they were (status, annotations,
 * suggestions, review-queue scores). One whose external id was imported afresh since comes back
 * under the name its deletion was retired to (import.ts). Ids that are not deleted documents are refused.
 */
export function restoreDocuments(c: Connection, ids: number[]): DocumentSummary[] {
  return c.write(() => {
    const unique = [...new Set(ids)]
    const notDeleted = unique.filter((id) => !c.isDeletedDocument(id))
    if (notDeleted.length) throw new StoreError('not_found', `Not deleted documents: ${notDeleted.join(', ')}`)
    c.stmt('UPDATE documents SET deleted = 0, deleted_at = NULL, deleted_by = NULL WHERE id IN (SELECT value FROM json_each(?))').run(
      JSON.stringify(unique),
    )
    return unique.map((id) => summary(c, id))
  })
}

/** Deleted documents, newest deletion first, the first `limit` of `total`: what restoreDocuments can bring back. */
export function listDeletedDocuments(c: Connection, limit = 500): { documents: DeletedDocument[]; total: number } {
  c.assertOpen()
  const rows = c
    .stmt(
      `SELECT d.id, d.external_id, d.title, d.deleted_at, d.deleted_by,
         (SELECT count(*) FROM annotations a WHERE a.document_id = d.id AND a.deleted = 0 AND a.state = 'accepted') AS annotations
       FROM documents d WHERE d.deleted = 1 ORDER BY d.deleted_at DESC, d.id DESC LIMIT ?`,
    )
    .all(limit) as Array<{ id: number; external_id: string; title: string; deleted_at: string; deleted_by: string; annotations: number }>
  const { total } = c.stmt('SELECT count(*) AS total FROM documents WHERE deleted = 1').get() as { total: number }
  return {
    documents: rows.map((r) => ({ id: r.id, externalId: r.external_id, title: r.title, annotations: r.annotations, deletedAt: r.deleted_at, deletedBy: r.deleted_by })),
    total,
  }
}

/** `ids` without repeats, each a live document (else not_found naming the others). */
function liveIds(c: Connection, ids: number[]): number[] {
  const unique = [...new Set(ids)]
  const missing = unique.filter((id) => !c.liveDocRow(id))
  if (missing.length) throw new StoreError('not_found', `Documents not found: ${missing.join(', ')}`)
  return unique
}

/** The next/previous document by id (optionally only unreviewed ones), or null at either end. */
export function neighbor(c: Connection, id: number, direction: 'next' | 'previous', unreviewedOnly: boolean): number | null {
  c.assertOpen()
  const op = direction === 'next' ? '>' : '<'
  const order = direction === 'next' ? 'ASC' : 'DESC'
  const filter = unreviewedOnly ? "AND status = 'unreviewed'" : ''
  const row = c.stmt(`SELECT id FROM documents WHERE id ${op} ? AND deleted = 0 ${filter} ORDER BY id ${order} LIMIT 1`).get(id) as
    | { id: number }
    | undefined
  return row?.id ?? null
}

/**
 * Documents (all, or `ids` in the given order) with their live *accepted* annotations as mentions;
 * suggestions are left out. The corpus id is the external id.
 */
export function exportDocuments(c: Connection, ids?: number[]): CorpusDocument[] {
  c.assertOpen()
  const toDoc = (d: DocRow, anns: AnnRow[]): CorpusDocument => {
    const out: CorpusDocument = {
      id: d.external_id,
      text: d.text,
      passages: JSON.parse(d.passages) as Passage[],
      mentions: anns.map((a) => {
        const m: Mention = { start: a.start, end: a.end, text: d.text.slice(a.start, a.end), type: a.type }
        if (a.concept_id !== null) m.conceptId = a.concept_id
        return m
      }),
    }
    if (d.tokens) out.tokens = JSON.parse(d.tokens) as Array<[number, number]>
    return out
  }
  const accepted = c.stmt(
    `SELECT * FROM annotations WHERE document_id = ? AND deleted = 0 AND state = 'accepted' ORDER BY start, "end", id`,
  )
  if (ids) {
    const unique = [...new Set(ids)]
    const rows = unique.map((id) => c.stmt('SELECT * FROM documents WHERE id = ? AND deleted = 0').get(id) as DocRow | undefined)
    const missing = unique.filter((_, i) => !rows[i])
    if (missing.length) throw new StoreError('not_found', `Documents not found: ${missing.join(', ')}`)
    return (rows as DocRow[]).map((d) => toDoc(d, accepted.all(d.id) as AnnRow[]))
  }
  // Whole workspace: one ordered pass over each table instead of a query per document.
  const byDoc = new Map<number, AnnRow[]>()
  for (const a of c
    .stmt(`SELECT * FROM annotations WHERE deleted = 0 AND state = 'accepted' ORDER BY document_id, start, "end", id`)
    .iterate() as IterableIterator<AnnRow>) {
    let list = byDoc.get(a.document_id)
    if (!list) byDoc.set(a.document_id, (list = []))
    list.push(a)
  }
  const docs = c.stmt('SELECT * FROM documents WHERE deleted = 0 ORDER BY id').all() as DocRow[]
  return docs.map((d) => toDoc(d, byDoc.get(d.id) ?? []))
}

// Documents for the model jobs (sent to the model host; ids are the workspace's document ids)

/**
 * Documents whose accepted annotations are labels: the given review statuses and, optionally,
 * every document with gold annotations. Mentions are the live accepted annotations; the
 * CorpusDocument id is the workspace document id as a string.
 */
export function labelledDocuments(c: Connection, q: LabelledQuery): CorpusDocument[] {
  c.assertOpen()
  const statuses = q.statuses.filter((st) => REVIEW_STATUSES.includes(st))
  const rows = c
    .stmt(
      `SELECT * FROM documents d WHERE d.deleted = 0 AND (d.status IN (SELECT value FROM json_each(?))
       OR (? = 1 AND EXISTS (SELECT 1 FROM annotations a WHERE a.document_id = d.id AND a.deleted = 0 AND a.origin = 'gold')))
       ORDER BY d.id`,
    )
    .all(JSON.stringify(statuses), q.includeGold ? 1 : 0) as DocRow[]
  return rows.map((d) => labelled(c, d))
}

/** The given documents (in order) with their accepted annotations as mentions; ids as above. */
export function labelledDocumentsById(c: Connection, ids: number[]): CorpusDocument[] {
  c.assertOpen()
  return [...new Set(ids)].map((id) => labelled(c, c.docRow(id)))
}

/** Ids of the documents to tag: `ids` (checked), or every document not marked done. */
export function documentIdsForTagging(c: Connection, ids?: number[]): number[] {
  c.assertOpen()
  if (ids) return liveIds(c, ids)
  return (c.stmt(`SELECT id FROM documents WHERE status <> 'done' AND deleted = 0 ORDER BY id`).all() as Array<{ id: number }>).map((r) => r.id)
}

/**
 * Every document's text and passages, in import order, without annotations: the unlabelled text
 * that models:adapt pretrains on. Ids as in documentsForTagging.
 */
export function documentTexts(c: Connection): Array<Pick<CorpusDocument, 'id' | 'text' | 'passages'>> {
  c.assertOpen()
  const rows = c.stmt('SELECT id, text, passages FROM documents WHERE deleted = 0 ORDER BY id').iterate() as IterableIterator<Pick<DocRow, 'id' | 'text' | 'passages'>>
  return Array.from(rows, (d) => ({ id: String(d.id), text: d.text, passages: JSON.parse(d.passages) as Passage[] }))
}

/** Documents marked done or in progress: what retraining learns from (Auto-improve counts them after every edit). */
export function reviewedCount(c: Connection): number {
  c.assertOpen()
  return (c.stmt(`SELECT count(*) AS n FROM documents WHERE status IN ('done', 'in_progress') AND deleted = 0`).get() as { n: number }).n
}

/** Ids of the documents with a review status, in import order. */
export function documentIdsWithStatus(c: Connection, status: ReviewStatus): number[] {
  c.assertOpen()
  return (c.stmt('SELECT id FROM documents WHERE status = ? AND deleted = 0 ORDER BY id').all(status) as Array<{ id: number }>).map((r) => r.id)
}

/** The text of each given document that exists (id → text): what TF-IDF vectors are made of. */
export function documentTextsById(c: Connection, ids: readonly number[]): Map<number, string> {
  c.assertOpen()
  const rows = c.stmt('SELECT id, text FROM documents WHERE deleted = 0 AND id IN (SELECT value FROM json_each(?))').all(JSON.stringify([...ids])) as Array<{
    id: number
    text: string
  }>
  return new Map(rows.map((r) => [r.id, r.text]))
}

/**
 * Text and tokens of documents to tag (no annotations: the model must not see them). A document
 * deleted since the job listed it is left out: tagging goes on with the others.
 */
export function documentsForTagging(c: Connection, ids: number[]): CorpusDocument[] {
  c.assertOpen()
  return ids.flatMap((id) => {
    const d = c.liveDocRow(id)
    if (!d) return []
    const out: CorpusDocument = { id: String(d.id), text: d.text, passages: [], mentions: [] }
    if (d.tokens) out.tokens = JSON.parse(d.tokens) as Array<[number, number]>
    return [out]
  })
}

function labelled(c: Connection, d: DocRow): CorpusDocument {
  const anns = c
    .stmt(`SELECT * FROM annotations WHERE document_id = ? AND deleted = 0 AND state = 'accepted' ORDER BY start, "end", id`)
    .all(d.id) as AnnRow[]
  const out: CorpusDocument = {
    id: String(d.id),
    text: d.text,
    passages: JSON.parse(d.passages) as Passage[],
    mentions: anns.map((a) => ({ start: a.start, end: a.end, text: d.text.slice(a.start, a.end), type: a.type })),
  }
  if (d.tokens) out.tokens = JSON.parse(d.tokens) as Array<[number, number]>
  return out
}
