// Documents: the filtered list with facets, one document with its annotations, review status,
// navigation, export, and the document sets sent to the model jobs.
import type { DocumentListResult } from '@shared/ipc'
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
import { SUMMARY_COLUMNS, toAnnotation, toSummary, type AnnRow, type DocRow, type SummaryRow } from './rows'
import type { LabelledQuery, ListQuery, WorkspaceSummary } from './types'

const DEFAULT_LIMIT = 100

export function info(c: Connection): WorkspaceSummary {
  c.assertOpen()
  const { n } = c.stmt('SELECT count(*) AS n FROM documents').get() as { n: number }
  return { path: c.path, documentCount: n, entityTypes: entityTypes(c) }
}

/** Types of all live annotations, sorted. */
export function entityTypes(c: Connection): string[] {
  c.assertOpen()
  const rows = c.stmt('SELECT DISTINCT type FROM annotations WHERE deleted = 0 ORDER BY type').all() as Array<{
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
  const typeSql = t.where
    ? `SELECT a.type, count(DISTINCT a.document_id) AS n FROM annotations a
       WHERE a.deleted = 0 AND a.document_id IN (SELECT d.id FROM documents d ${t.where}) GROUP BY a.type ORDER BY a.type`
    : `SELECT a.type, count(DISTINCT a.document_id) AS n FROM annotations a WHERE a.deleted = 0 GROUP BY a.type ORDER BY a.type`
  for (const r of c.stmt(typeSql).all(t.params) as Array<{ type: string; n: number }>) byType[r.type] = r.n

  return { documents: rows.map(toSummary), total, counts: { byStatus, byType } }
}

function filters(
  q: ListQuery,
  skip: { skipStatus?: boolean; skipType?: boolean },
): { where: string; params: Record<string, unknown> } {
  const conds: string[] = []
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
  return { where: conds.length ? `WHERE ${conds.join(' AND ')}` : '', params }
}

/** The distinct files documents were imported from (as recorded at import: absolute paths, or a pasted text's name). */
export function sourceFiles(c: Connection): string[] {
  c.assertOpen()
  return (c.stmt('SELECT DISTINCT source_file AS f FROM documents WHERE source_file IS NOT NULL').all() as Array<{ f: string }>).map((r) => r.f)
}

export function summary(c: Connection, id: number): DocumentSummary {
  const row = c.stmt(`SELECT ${SUMMARY_COLUMNS} FROM documents d WHERE d.id = ?`).get(id) as SummaryRow | undefined
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
    const r = c.stmt('UPDATE documents SET status = ? WHERE id = ?').run(status, id)
    if (r.changes === 0) throw new StoreError('not_found', `Document ${id} does not exist`)
  })
  return summary(c, id)
}

/** The next/previous document by id (optionally only unreviewed ones), or null at either end. */
export function neighbor(c: Connection, id: number, direction: 'next' | 'previous', unreviewedOnly: boolean): number | null {
  c.assertOpen()
  const op = direction === 'next' ? '>' : '<'
  const order = direction === 'next' ? 'ASC' : 'DESC'
  const filter = unreviewedOnly ? "AND status = 'unreviewed'" : ''
  const row = c.stmt(`SELECT id FROM documents WHERE id ${op} ? ${filter} ORDER BY id ${order} LIMIT 1`).get(id) as
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
    const rows = unique.map((id) => c.stmt('SELECT * FROM documents WHERE id = ?').get(id) as DocRow | undefined)
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
  const docs = c.stmt('SELECT * FROM documents ORDER BY id').all() as DocRow[]
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
      `SELECT * FROM documents d WHERE d.status IN (SELECT value FROM json_each(?))
       OR (? = 1 AND EXISTS (SELECT 1 FROM annotations a WHERE a.document_id = d.id AND a.deleted = 0 AND a.origin = 'gold'))
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
  if (ids) {
    const unique = [...new Set(ids)]
    const missing = unique.filter((id) => !c.stmt('SELECT 1 FROM documents WHERE id = ?').get(id))
    if (missing.length) throw new StoreError('not_found', `Documents not found: ${missing.join(', ')}`)
    return unique
  }
  return (c.stmt(`SELECT id FROM documents WHERE status <> 'done' ORDER BY id`).all() as Array<{ id: number }>).map((r) => r.id)
}

/**
 * Every document's text and passages, in import order, without annotations: the unlabelled text
 * that models:adapt pretrains on. Ids as in documentsForTagging.
 */
export function documentTexts(c: Connection): Array<Pick<CorpusDocument, 'id' | 'text' | 'passages'>> {
  c.assertOpen()
  const rows = c.stmt('SELECT id, text, passages FROM documents ORDER BY id').iterate() as IterableIterator<Pick<DocRow, 'id' | 'text' | 'passages'>>
  return Array.from(rows, (d) => ({ id: String(d.id), text: d.text, passages: JSON.parse(d.passages) as Passage[] }))
}

/** Documents marked done or in progress: what retraining learns from (Auto-improve counts them after every edit). */
export function reviewedCount(c: Connection): number {
  c.assertOpen()
  return (c.stmt(`SELECT count(*) AS n FROM documents WHERE status IN ('done', 'in_progress')`).get() as { n: number }).n
}

/** Ids of the documents with a review status, in import order. */
export function documentIdsWithStatus(c: Connection, status: ReviewStatus): number[] {
  c.assertOpen()
  return (c.stmt('SELECT id FROM documents WHERE status = ? ORDER BY id').all(status) as Array<{ id: number }>).map((r) => r.id)
}

/** The text of each given document that exists (id → text): what TF-IDF vectors are made of. */
export function documentTextsById(c: Connection, ids: readonly number[]): Map<number, string> {
  c.assertOpen()
  const rows = c.stmt('SELECT id, text FROM documents WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify([...ids])) as Array<{
    id: number
    text: string
  }>
  return new Map(rows.map((r) => [r.id, r.text]))
}

/** Text and tokens of documents to tag (no annotations: the model must not see them). */
export function documentsForTagging(c: Connection, ids: number[]): CorpusDocument[] {
  c.assertOpen()
  return ids.map((id) => {
    const d = c.docRow(id)
    const out: CorpusDocument = { id: String(d.id), text: d.text, passages: [], mentions: [] }
    if (d.tokens) out.tokens = JSON.parse(d.tokens) as Array<[number, number]>
    return out
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
