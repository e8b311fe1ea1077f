// The SQLite workspace: documents, annotations and their append-only revision trail.
// Synchronous better-sqlite3 calls on one connection, except imports, which run on a second
// connection so they can yield to the event loop (progress, cancellation) while holding one
// transaction open; WAL lets the main connection keep reading the last committed state meanwhile.
import { mkdirSync } from 'node:fs'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import Database from 'better-sqlite3'
import type { DistillMode, DocumentListResult, ModelInfo, ModelKind, ReviewQueueItem, Scores } from '@shared/ipc'
import {
  REVIEW_STATUSES,
  type Annotation,
  type AnnotationOrigin,
  type CorpusDocument,
  type DocumentDetail,
  type DocumentSummary,
  type Mention,
  type Passage,
  type ReviewStatus,
  type Revision,
} from '@shared/domain'
import { StoreError } from './errors'
import { migrate } from './schema'

export interface OpenOptions {
  /** Recorded as `updated_by` / revision `by` for every change made through this workspace. */
  user?: string
}

export interface ImportOptions {
  /** Called after every document (done, total); throttle in the caller. Throwing aborts the import. */
  onProgress?: (done: number, total: number) => void
  /** Aborting rolls the whole import back and rejects with StoreError code 'cancelled'. */
  signal?: AbortSignal
}

export interface ImportSummary {
  imported: number
  /** External ids skipped because they already exist in the workspace or earlier in this batch. */
  duplicates: string[]
}

export interface ListQuery {
  /** PMID / external-id prefix, or words searched in title + text (the last word as a prefix). */
  query?: string
  status?: ReviewStatus
  /** Only documents with at least one live annotation of this type. */
  type?: string
  offset?: number
  /** Default 100. */
  limit?: number
}

export interface CreateAnnotationInput {
  documentId: number
  start: number
  end: number
  type: string
  conceptId?: string | null
  /** Default 'person'. */
  origin?: AnnotationOrigin
  confidence?: number | null
  /** Default 'accepted'. */
  state?: 'accepted' | 'suggested'
}

export interface UpdateAnnotationInput {
  id: number
  start?: number
  end?: number
  type?: string
  conceptId?: string | null
  state?: 'accepted' | 'suggested'
}

export interface WorkspaceSummary {
  path: string
  documentCount: number
  entityTypes: string[]
}

export type ModelStatus = 'training' | 'candidate' | 'ready'

/** A registry row: the contract's ModelInfo plus the lifecycle status. */
export interface ModelRecord extends ModelInfo {
  status: ModelStatus
}

/** Architecture summary stored with a model (models.config). */
export interface ModelConfigSummary {
  layers: number
  hidden: number
  heads: number
  parameters: number
  /** Bytes of the weights file (model.safetensors) on disk. */
  bytes: number
}

export interface NewModelInput {
  name: string
  kind: ModelKind
  /** Default 'training' (a job is about to write it). */
  status?: ModelStatus
  /** Checkpoint folder; stored relative to the workspace folder when inside it. */
  path: string
  parentId?: number | null
  config?: ModelConfigSummary
  entityTypes?: string[]
  trainedOn?: string | null
  devScores?: ModelInfo['devScores']
  trainingSummary?: string | null
  distillation?: { teacherId: number; mode: DistillMode } | null
}

export interface ModelUpdate {
  status?: ModelStatus
  kind?: ModelKind
  config?: ModelConfigSummary
  entityTypes?: string[]
  trainedOn?: string | null
  devScores?: ModelInfo['devScores']
  trainingSummary?: string | null
}

export interface SuggestionInput {
  start: number
  end: number
  type: string
  /** In [0, 1]; clamped. */
  confidence: number
}

export interface DocumentSuggestions {
  documentId: number
  suggestions: SuggestionInput[]
  /** Per-document uncertainty for the review queue; null leaves the stored value alone. */
  uncertainty: number | null
}

export interface LabelledQuery {
  /** Documents with these review statuses… */
  statuses: ReviewStatus[]
  /** …and (when true) every document with at least one live gold annotation. */
  includeGold: boolean
}

export type RunKind = 'train' | 'retrain' | 'distill' | 'tag' | 'compare' | 'import'

type Snapshot = NonNullable<Revision['after']>

interface DocRow {
  id: number
  external_id: string
  title: string
  text: string
  passages: string
  tokens: string | null
  source_file: string | null
  imported_at: string
  status: ReviewStatus
}

interface SummaryRow {
  id: number
  external_id: string
  title: string
  status: ReviewStatus
  source_file: string | null
  imported_at: string
  annotation_count: number
  types: string | null
}

interface AnnRow {
  id: number
  document_id: number
  start: number
  end: number
  type: string
  concept_id: string | null
  origin: AnnotationOrigin
  confidence: number | null
  state: 'accepted' | 'suggested'
  deleted: number
  updated_at: string
  updated_by: string
}

interface RevRow {
  id: number
  annotation_id: number
  document_id: number
  action: Revision['action']
  before: string | null
  after: string | null
  at: string
  by: string
}

interface ModelRow {
  id: number
  name: string
  path: string
  config: string
  created_at: string
  kind: ModelKind
  status: ModelStatus
  active: number
  parent_id: number | null
  entity_types: string
  trained_on: string | null
  dev_scores: string | null
  training_summary: string | null
  distillation: string | null
}

const SUMMARY_COLUMNS = `
  d.id, d.external_id, d.title, d.status, d.source_file, d.imported_at,
  (SELECT count(*) FROM annotations a WHERE a.document_id = d.id AND a.deleted = 0) AS annotation_count,
  (SELECT json_group_array(DISTINCT a.type) FROM annotations a WHERE a.document_id = d.id AND a.deleted = 0) AS types`

const DEFAULT_LIMIT = 100
/** How long an import may hold the event loop before yielding (progress events, cancel requests). */
const IMPORT_SLICE_MS = 25

function configure(db: Database.Database, file: string): void {
  const mode = db.pragma('journal_mode = WAL', { simple: true })
  if (String(mode).toLowerCase() !== 'wal') throw new Error(`${file}: cannot switch the workspace to WAL mode`)
  // WAL + NORMAL may lose the last commits on power loss; FULL syncs the WAL on every commit.
  db.pragma('synchronous = FULL')
  db.pragma('foreign_keys = ON')
}

const now = (): string => new Date().toISOString()

function titleOf(text: string, passages: Passage[]): string {
  const p = passages.find((x) => x.type.toLowerCase() === 'title') ?? passages[0]
  const raw = p ? text.slice(p.offset, p.offset + p.length) : (text.split('\n', 1)[0] ?? '')
  const title = raw.trim().replace(/\s+/g, ' ')
  return title.length > 300 ? `${title.slice(0, 299)}…` : title
}

function snapshot(r: AnnRow): Snapshot {
  return {
    start: r.start,
    end: r.end,
    type: r.type,
    conceptId: r.concept_id,
    origin: r.origin,
    confidence: r.confidence,
    state: r.state,
  }
}

function toAnnotation(r: AnnRow): Annotation {
  return {
    id: r.id,
    documentId: r.document_id,
    start: r.start,
    end: r.end,
    type: r.type,
    conceptId: r.concept_id,
    origin: r.origin,
    confidence: r.confidence,
    state: r.state,
    updatedAt: r.updated_at,
    updatedBy: r.updated_by,
  }
}

function toSummary(r: SummaryRow): DocumentSummary {
  const types = r.types ? (JSON.parse(r.types) as string[]).sort() : []
  return {
    id: r.id,
    externalId: r.external_id,
    title: r.title,
    status: r.status,
    annotationCount: r.annotation_count,
    types,
    sourceFile: r.source_file,
    importedAt: r.imported_at,
  }
}

function normType(type: string): string {
  const t = typeof type === 'string' ? type.trim() : ''
  if (!t || t.length > 64) throw new StoreError('invalid_request', 'Entity type must be 1 to 64 characters')
  return t
}

function normConcept(c: string | null | undefined): string | null {
  if (c === undefined || c === null) return null
  const t = c.trim()
  return t ? t : null
}

function quote(text: string, start: number, end: number): string {
  const s = text.slice(start, end).replace(/\s+/g, ' ')
  return s.length > 60 ? `${s.slice(0, 59)}…` : s
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

const escapeLike = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`)

const cancelled = (why = 'Import cancelled; nothing was imported'): StoreError => new StoreError('cancelled', why)

export class Workspace {
  private readonly statements = new Map<string, Database.Statement>()
  private readonly tx: Database.Transaction<(fn: () => unknown) => unknown>
  private importDb: Database.Database | null = null
  private importChain: Promise<unknown> = Promise.resolve()
  private closed = false

  private constructor(
    private readonly db: Database.Database,
    /** Absolute path of the workspace file. */
    readonly path: string,
    /** Who is recorded on every change. */
    readonly user: string,
  ) {
    this.tx = db.transaction((fn: () => unknown) => fn())
    // Full-text hits of the current list query, computed once and shared by the page, total and facets.
    db.pragma('temp_store = MEMORY')
    db.exec('CREATE TEMP TABLE IF NOT EXISTS search_hits (id INTEGER PRIMARY KEY)')
  }

  /** Opens (creating and migrating as needed) the workspace at `path`. */
  static open(path: string, opts: OpenOptions = {}): Workspace {
    const file = resolve(path)
    mkdirSync(dirname(file), { recursive: true })
    let db: Database.Database | undefined
    try {
      db = new Database(file, { timeout: 5000 })
      configure(db, file)
      migrate(db, file)
    } catch (e) {
      db?.close()
      throw new StoreError('invalid_request', `Cannot open workspace ${file}: ${(e as Error).message}`)
    }
    return new Workspace(db, file, opts.user?.trim() || 'annotator')
  }

  /** Closes the workspace; an import in flight is rolled back and rejects with 'cancelled'. */
  close(): void {
    if (this.closed) return
    this.closed = true
    const idb = this.importDb
    if (idb?.open) {
      if (idb.inTransaction) idb.exec('ROLLBACK')
      idb.close()
    }
    this.db.close()
  }

  get isOpen(): boolean {
    return !this.closed
  }

  /** True while an import holds the write lock; edits are refused meanwhile (code 'conflict'). */
  get importing(): boolean {
    return this.importDb !== null
  }

  info(): WorkspaceSummary {
    this.assertOpen()
    const { n } = this.stmt('SELECT count(*) AS n FROM documents').get() as { n: number }
    return { path: this.path, documentCount: n, entityTypes: this.entityTypes() }
  }

  /** Types of all live annotations, sorted. */
  entityTypes(): string[] {
    this.assertOpen()
    const rows = this.stmt('SELECT DISTINCT type FROM annotations WHERE deleted = 0 ORDER BY type').all() as Array<{
      type: string
    }>
    return rows.map((r) => r.type)
  }

  // ---------------------------------------------------------------------------------------------
  // Import

  /**
   * Imports `docs` all-or-nothing in ONE transaction. Documents whose external id already exists
   * (in the workspace or earlier in `docs`) are skipped and reported; gold mentions become accepted
   * annotations of origin 'gold', each with a 'create' revision so history replays to the full state.
   * Concurrent imports are queued. Rejects with StoreError 'cancelled' when `signal` aborts or the
   * workspace closes, 'invalid_request' when a document is malformed; nothing is written then.
   */
  importDocuments(docs: CorpusDocument[], sourceFile: string | null, opts: ImportOptions = {}): Promise<ImportSummary> {
    this.assertOpen()
    const run = (): Promise<ImportSummary> => this.runImport(docs, sourceFile, opts)
    const result = this.importChain.then(run, run)
    this.importChain = result.catch(() => undefined)
    return result
  }

  private async runImport(docs: CorpusDocument[], sourceFile: string | null, opts: ImportOptions): Promise<ImportSummary> {
    const { onProgress, signal } = opts
    this.assertOpen()
    if (signal?.aborted) throw cancelled()
    const db = new Database(this.path, { timeout: 5000 })
    this.importDb = db
    try {
      configure(db, this.path)
      const insertDoc = db.prepare(
        `INSERT INTO documents (external_id, title, text, passages, tokens, source_file, imported_at)
         VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (external_id) DO NOTHING RETURNING id`,
      )
      const insertFts = db.prepare('INSERT INTO documents_fts (rowid, title, text) VALUES (?, ?, ?)')
      const insertAnn = db.prepare(
        `INSERT INTO annotations (document_id, start, "end", type, concept_id, origin, confidence, state, updated_at, updated_by)
         VALUES (?, ?, ?, ?, ?, 'gold', NULL, 'accepted', ?, ?)`,
      )
      const insertRev = db.prepare(
        `INSERT INTO revisions (annotation_id, document_id, action, before, after, at, by)
         VALUES (?, ?, 'create', NULL, ?, ?, ?)`,
      )
      const at = now()
      const by = this.user
      const duplicates: string[] = []
      let imported = 0
      let sliceStart = performance.now()

      db.exec('BEGIN IMMEDIATE')
      try {
        for (let i = 0; i < docs.length; i++) {
          const doc = docs[i]!
          const externalId = this.validateImported(doc, i, sourceFile)
          const passages = doc.passages ?? []
          const title = titleOf(doc.text, passages)
          const row = insertDoc.get(
            externalId,
            title,
            doc.text,
            JSON.stringify(passages),
            doc.tokens ? JSON.stringify(doc.tokens) : null,
            sourceFile,
            at,
          ) as { id: number } | undefined
          if (!row) {
            duplicates.push(externalId)
          } else {
            imported++
            insertFts.run(row.id, title, doc.text)
            for (const m of doc.mentions ?? []) {
              const type = m.type.trim()
              const conceptId = normConcept(m.conceptId)
              const annId = Number(insertAnn.run(row.id, m.start, m.end, type, conceptId, at, by).lastInsertRowid)
              const after: Snapshot = {
                start: m.start,
                end: m.end,
                type,
                conceptId,
                origin: 'gold',
                confidence: null,
                state: 'accepted',
              }
              insertRev.run(annId, row.id, JSON.stringify(after), at, by)
            }
          }
          onProgress?.(i + 1, docs.length)
          if ((i & 31) === 31 && performance.now() - sliceStart > IMPORT_SLICE_MS) {
            await new Promise<void>((r) => setImmediate(r))
            if (this.closed) throw cancelled('Import cancelled: the workspace was closed')
            if (signal?.aborted) throw cancelled()
            sliceStart = performance.now()
          }
        }
        if (signal?.aborted) throw cancelled()
        db.exec('COMMIT')
      } catch (e) {
        if (db.open && db.inTransaction) db.exec('ROLLBACK')
        throw e
      }
      return { imported, duplicates }
    } finally {
      if (db.open) db.close()
      this.importDb = null
    }
  }

  private validateImported(doc: CorpusDocument, index: number, sourceFile: string | null): string {
    const where = `document ${index + 1}${sourceFile ? ` of ${sourceFile}` : ''}`
    const id = typeof doc?.id === 'string' ? doc.id.trim() : ''
    if (!id) throw new StoreError('invalid_request', `Cannot import ${where}: it has no id`)
    if (typeof doc.text !== 'string') throw new StoreError('invalid_request', `Cannot import ${where} (${id}): no text`)
    const mentions: Mention[] = doc.mentions ?? []
    for (let j = 0; j < mentions.length; j++) {
      const m = mentions[j]!
      if (!Number.isInteger(m.start) || !Number.isInteger(m.end) || m.start < 0 || m.end <= m.start || m.end > doc.text.length) {
        throw new StoreError(
          'invalid_request',
          `Cannot import ${where} (${id}): mention ${j + 1} [${m.start}, ${m.end}) is not a span of its text (length ${doc.text.length})`,
        )
      }
      if (typeof m.type !== 'string' || !m.type.trim()) {
        throw new StoreError('invalid_request', `Cannot import ${where} (${id}): mention ${j + 1} has no type`)
      }
    }
    return id
  }

  // ---------------------------------------------------------------------------------------------
  // Documents

  listDocuments(q: ListQuery = {}): DocumentListResult {
    this.assertOpen()
    const limit = Math.max(1, Math.min(q.limit ?? DEFAULT_LIMIT, 5000))
    const offset = Math.max(0, q.offset ?? 0)
    const fts = q.query ? ftsQuery(q.query.trim()) : null
    if (fts) {
      this.stmt('DELETE FROM temp.search_hits').run()
      this.stmt('INSERT INTO temp.search_hits (id) SELECT rowid FROM documents_fts WHERE documents_fts MATCH ?').run(fts)
    }
    const all = this.filters(q, {})
    const rows = this.stmt(
      `SELECT ${SUMMARY_COLUMNS} FROM documents d ${all.where} ORDER BY d.id LIMIT @limit OFFSET @offset`,
    ).all({ ...all.params, limit, offset }) as SummaryRow[]
    const { total } = this.stmt(`SELECT count(*) AS total FROM documents d ${all.where}`).get(all.params) as {
      total: number
    }

    // Facets: each count honours every filter except its own, so the UI can show what a click yields.
    const s = this.filters(q, { skipStatus: true })
    const byStatus = Object.fromEntries(REVIEW_STATUSES.map((st) => [st, 0])) as Record<ReviewStatus, number>
    for (const r of this.stmt(`SELECT d.status, count(*) AS n FROM documents d ${s.where} GROUP BY d.status`).all(
      s.params,
    ) as Array<{ status: ReviewStatus; n: number }>) {
      byStatus[r.status] = r.n
    }
    const t = this.filters(q, { skipType: true })
    const byType: Record<string, number> = {}
    const typeSql = t.where
      ? `SELECT a.type, count(DISTINCT a.document_id) AS n FROM annotations a
         WHERE a.deleted = 0 AND a.document_id IN (SELECT d.id FROM documents d ${t.where}) GROUP BY a.type ORDER BY a.type`
      : `SELECT a.type, count(DISTINCT a.document_id) AS n FROM annotations a WHERE a.deleted = 0 GROUP BY a.type ORDER BY a.type`
    for (const r of this.stmt(typeSql).all(t.params) as Array<{ type: string; n: number }>) byType[r.type] = r.n

    return { documents: rows.map(toSummary), total, counts: { byStatus, byType } }
  }

  private filters(
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

  getDocument(id: number): DocumentDetail {
    this.assertOpen()
    const doc = this.docRow(id)
    const anns = this.stmt(
      'SELECT * FROM annotations WHERE document_id = ? AND deleted = 0 ORDER BY start, "end", id',
    ).all(id) as AnnRow[]
    return {
      ...this.summary(id),
      text: doc.text,
      passages: JSON.parse(doc.passages) as Passage[],
      tokens: doc.tokens ? (JSON.parse(doc.tokens) as Array<[number, number]>) : null,
      annotations: anns.map(toAnnotation),
    }
  }

  setStatus(id: number, status: ReviewStatus): DocumentSummary {
    if (!REVIEW_STATUSES.includes(status)) throw new StoreError('invalid_request', `Unknown review status "${status}"`)
    this.write(() => {
      const r = this.stmt('UPDATE documents SET status = ? WHERE id = ?').run(status, id)
      if (r.changes === 0) throw new StoreError('not_found', `Document ${id} does not exist`)
    })
    return this.summary(id)
  }

  /** The next/previous document by id (optionally only unreviewed ones), or null at either end. */
  neighbor(id: number, direction: 'next' | 'previous', unreviewedOnly: boolean): number | null {
    this.assertOpen()
    const op = direction === 'next' ? '>' : '<'
    const order = direction === 'next' ? 'ASC' : 'DESC'
    const filter = unreviewedOnly ? "AND status = 'unreviewed'" : ''
    const row = this.stmt(`SELECT id FROM documents WHERE id ${op} ? ${filter} ORDER BY id ${order} LIMIT 1`).get(id) as
      | { id: number }
      | undefined
    return row?.id ?? null
  }

  // ---------------------------------------------------------------------------------------------
  // Annotations (every change writes a revision in the same transaction)

  createAnnotation(input: CreateAnnotationInput): Annotation {
    return this.write(() => {
      const doc = this.docRow(input.documentId)
      const type = normType(input.type)
      this.checkSpan(doc, input.start, input.end)
      const state = input.state ?? 'accepted'
      // An accepted annotation wins over model suggestions it overlaps (they are removed, with
      // revisions); a suggestion may overlap nothing.
      this.checkOverlap(doc, input.start, input.end, null, state === 'accepted' ? 'accepted' : 'any')
      const confidence = input.confidence ?? null
      if (confidence !== null && !(confidence >= 0 && confidence <= 1)) {
        throw new StoreError('invalid_request', `Confidence must lie in [0, 1], got ${confidence}`)
      }
      const at = now()
      if (state === 'accepted') this.dropOverlappingSuggestions(doc.id, input.start, input.end, null, at)
      const row = this.stmt(
        `INSERT INTO annotations (document_id, start, "end", type, concept_id, origin, confidence, state, updated_at, updated_by)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      ).get(
        doc.id,
        input.start,
        input.end,
        type,
        normConcept(input.conceptId),
        input.origin ?? 'person',
        confidence,
        state,
        at,
        this.user,
      ) as AnnRow
      this.revise(row, 'create', null, snapshot(row), at)
      this.touch(doc)
      return toAnnotation(row)
    })
  }

  /**
   * Retype / re-bound / change concept or state. A no-op update writes nothing. A person's edit of
   * a model suggestion confirms it: unless `state: 'suggested'` is given it becomes accepted with
   * origin 'person' (confidence kept), as suggestions:accept does.
   */
  updateAnnotation(input: UpdateAnnotationInput): Annotation {
    return this.write(() => {
      const cur = this.liveAnnotation(input.id)
      const doc = this.docRow(cur.document_id)
      const start = input.start ?? cur.start
      const end = input.end ?? cur.end
      const type = input.type !== undefined ? normType(input.type) : cur.type
      const conceptId = input.conceptId !== undefined ? normConcept(input.conceptId) : cur.concept_id
      this.checkSpan(doc, start, end)
      const spanChanged = start !== cur.start || end !== cur.end
      const edited = spanChanged || type !== cur.type || conceptId !== cur.concept_id
      const state = input.state ?? (cur.state === 'suggested' && edited ? 'accepted' : cur.state)
      const confirmed = cur.state === 'suggested' && state === 'accepted'
      // Undo of an accept puts the suggestion back as the model's.
      const unconfirmed = cur.state === 'accepted' && state === 'suggested'
      const origin: AnnotationOrigin = confirmed ? 'person' : unconfirmed ? 'model' : cur.origin
      // Only a new span (or a newly accepted one) can create an overlap; retyping an (imported)
      // overlapping gold span stays allowed.
      if (spanChanged || confirmed) this.checkOverlap(doc, start, end, cur.id, state === 'accepted' ? 'accepted' : 'any')
      if (!edited && state === cur.state) return toAnnotation(cur)
      const at = now()
      if (state === 'accepted' && (spanChanged || confirmed)) this.dropOverlappingSuggestions(doc.id, start, end, cur.id, at)
      const row = this.stmt(
        `UPDATE annotations SET start = ?, "end" = ?, type = ?, concept_id = ?, origin = ?, state = ?, updated_at = ?, updated_by = ?
         WHERE id = ? RETURNING *`,
      ).get(start, end, type, conceptId, origin, state, at, this.user, cur.id) as AnnRow
      this.revise(row, 'update', snapshot(cur), snapshot(row), at)
      this.touch(doc)
      return toAnnotation(row)
    })
  }

  /** Soft delete: the row stays (revisions reference it), flagged deleted. */
  deleteAnnotation(id: number): { id: number } {
    return this.write(() => {
      const cur = this.liveAnnotation(id)
      const doc = this.docRow(cur.document_id)
      const at = now()
      const row = this.stmt(
        'UPDATE annotations SET deleted = 1, updated_at = ?, updated_by = ? WHERE id = ? RETURNING *',
      ).get(at, this.user, id) as AnnRow
      this.revise(row, 'delete', snapshot(cur), null, at)
      this.touch(doc)
      return { id }
    })
  }

  /** Every revision of the document's annotations, oldest first. */
  history(documentId: number): Revision[] {
    this.assertOpen()
    this.docRow(documentId)
    const rows = this.stmt('SELECT * FROM revisions WHERE document_id = ? ORDER BY id').all(documentId) as RevRow[]
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

  // ---------------------------------------------------------------------------------------------
  // Export

  /**
   * Documents (all, or `ids` in the given order) with their live *accepted* annotations as mentions;
   * suggestions are left out. The corpus id is the external id.
   */
  exportDocuments(ids?: number[]): CorpusDocument[] {
    this.assertOpen()
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
    const accepted = this.stmt(
      `SELECT * FROM annotations WHERE document_id = ? AND deleted = 0 AND state = 'accepted' ORDER BY start, "end", id`,
    )
    if (ids) {
      const unique = [...new Set(ids)]
      const rows = unique.map((id) => this.stmt('SELECT * FROM documents WHERE id = ?').get(id) as DocRow | undefined)
      const missing = unique.filter((_, i) => !rows[i])
      if (missing.length) throw new StoreError('not_found', `Documents not found: ${missing.join(', ')}`)
      return (rows as DocRow[]).map((d) => toDoc(d, accepted.all(d.id) as AnnRow[]))
    }
    // Whole workspace: one ordered pass over each table instead of a query per document.
    const byDoc = new Map<number, AnnRow[]>()
    for (const a of this.stmt(
      `SELECT * FROM annotations WHERE deleted = 0 AND state = 'accepted' ORDER BY document_id, start, "end", id`,
    ).iterate() as IterableIterator<AnnRow>) {
      let list = byDoc.get(a.document_id)
      if (!list) byDoc.set(a.document_id, (list = []))
      list.push(a)
    }
    const docs = this.stmt('SELECT * FROM documents ORDER BY id').all() as DocRow[]
    return docs.map((d) => toDoc(d, byDoc.get(d.id) ?? []))
  }

  // ---------------------------------------------------------------------------------------------
  // Model registry (rows only; the checkpoint folders are the caller's: see src/main/models.ts)

  /** Where this workspace keeps its models: `<workspace folder>/models`. */
  get modelsDir(): string {
    return join(dirname(this.path), 'models')
  }

  listModels(opts: { includeTraining?: boolean } = {}): ModelRecord[] {
    this.assertOpen()
    const rows = this.stmt(
      `SELECT * FROM models WHERE (? = 1 OR status <> 'training') ORDER BY created_at, id`,
    ).all(opts.includeTraining ? 1 : 0) as ModelRow[]
    return rows.map((r) => this.toModel(r))
  }

  getModel(id: number): ModelRecord {
    this.assertOpen()
    return this.toModel(this.modelRow(id))
  }

  activeModel(): ModelRecord | null {
    this.assertOpen()
    const row = this.stmt('SELECT * FROM models WHERE active = 1').get() as ModelRow | undefined
    return row ? this.toModel(row) : null
  }

  /** `base`, or `base (2)`, `base (3)`, … whichever no model has yet. */
  uniqueModelName(base: string): string {
    this.assertOpen()
    const taken = (n: string) => this.stmt('SELECT 1 FROM models WHERE name = ?').get(n) !== undefined
    if (!taken(base)) return base
    for (let k = 2; ; k++) if (!taken(`${base} (${k})`)) return `${base} (${k})`
  }

  /** Registers a model (default status 'training'); a ready model becomes active when none is. */
  createModel(input: NewModelInput): ModelRecord {
    const name = input.name.trim()
    if (!name || name.length > 100) throw new StoreError('invalid_request', 'A model name must be 1 to 100 characters')
    return this.write(() => {
      if (this.stmt('SELECT 1 FROM models WHERE name = ?').get(name)) {
        throw new StoreError('conflict', `A model named "${name}" already exists; choose another name`)
      }
      if (input.parentId != null) this.modelRow(input.parentId)
      const status = input.status ?? 'training'
      const row = this.stmt(
        `INSERT INTO models (name, path, config, created_at, kind, status, active, parent_id, entity_types, trained_on,
                             dev_scores, training_summary, distillation)
         VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?) RETURNING *`,
      ).get(
        name,
        this.storedPath(input.path),
        JSON.stringify(input.config ?? {}),
        now(),
        input.kind,
        status,
        input.parentId ?? null,
        JSON.stringify(input.entityTypes ?? []),
        input.trainedOn ?? null,
        input.devScores ? JSON.stringify(input.devScores) : null,
        input.trainingSummary ?? null,
        input.distillation ? JSON.stringify(input.distillation) : null,
      ) as ModelRow
      if (status === 'ready') this.activateIfNone(row.id)
      return this.toModel(this.modelRow(row.id))
    })
  }

  /** Fills in what a finished job learnt; becoming ready activates the model when none is active. */
  updateModel(id: number, patch: ModelUpdate): ModelRecord {
    return this.write(() => {
      const cur = this.modelRow(id)
      this.stmt(
        `UPDATE models SET status = ?, kind = ?, config = ?, entity_types = ?, trained_on = ?, dev_scores = ?, training_summary = ?
         WHERE id = ?`,
      ).run(
        patch.status ?? cur.status,
        patch.kind ?? cur.kind,
        patch.config ? JSON.stringify(patch.config) : cur.config,
        patch.entityTypes ? JSON.stringify(patch.entityTypes) : cur.entity_types,
        patch.trainedOn !== undefined ? patch.trainedOn : cur.trained_on,
        patch.devScores !== undefined ? (patch.devScores ? JSON.stringify(patch.devScores) : null) : cur.dev_scores,
        patch.trainingSummary !== undefined ? patch.trainingSummary : cur.training_summary,
        id,
      )
      if ((patch.status ?? cur.status) === 'ready') this.activateIfNone(id)
      return this.toModel(this.modelRow(id))
    })
  }

  /** Makes `id` the one active tagger. Only a ready model (not a candidate) can be active. */
  setActiveModel(id: number): ModelRecord {
    return this.write(() => {
      const row = this.modelRow(id)
      if (row.status !== 'ready') {
        throw new StoreError(
          'conflict',
          row.status === 'candidate'
            ? `Model "${row.name}" is a retrain candidate: keep it (retrain:decide) to make it active`
            : `Model "${row.name}" is still being trained`,
        )
      }
      this.stmt('UPDATE models SET active = 0 WHERE active = 1 AND id <> ?').run(id)
      this.stmt('UPDATE models SET active = 1 WHERE id = ?').run(id)
      return this.toModel(this.modelRow(id))
    })
  }

  /**
   * Removes the row (runs and uncertainties forget it; children keep a null parent). When it was
   * the active model, the newest other ready model becomes active. Returns the removed record so
   * the caller can remove its folder.
   */
  deleteModel(id: number): ModelRecord {
    return this.write(() => this.deleteModelRow(id))
  }

  /**
   * Start-up recovery: models still 'training' (their job was interrupted: the app quit or
   * crashed) are removed, runs still 'running' are marked failed. `keep` spares models and runs
   * of jobs running in this process. Returns the removed models (the caller removes the folders).
   */
  abandonInterruptedModels(keep: { models?: ReadonlySet<number>; runs?: ReadonlySet<number> } = {}): ModelRecord[] {
    return this.write(() => {
      const rows = this.stmt(`SELECT * FROM models WHERE status = 'training'`).all() as ModelRow[]
      const removed = rows.filter((r) => !keep.models?.has(r.id)).map((r) => this.deleteModelRow(r.id))
      const at = now()
      for (const r of this.stmt(`SELECT id FROM runs WHERE status = 'running'`).all() as Array<{ id: number }>) {
        if (keep.runs?.has(r.id)) continue
        this.stmt(`UPDATE runs SET status = 'failed', finished_at = ?, metrics = ? WHERE id = ?`).run(
          at,
          JSON.stringify({ error: 'interrupted: the app stopped while the job ran' }),
          r.id,
        )
      }
      return removed
    })
  }

  startRun(kind: RunKind, modelId: number | null, params: Record<string, unknown>): number {
    return this.write(
      () =>
        (
          this.stmt(`INSERT INTO runs (kind, model_id, params, status, started_at) VALUES (?, ?, ?, 'running', ?) RETURNING id`).get(
            kind,
            modelId,
            JSON.stringify(params),
            now(),
          ) as { id: number }
        ).id,
    )
  }

  finishRun(id: number, status: 'done' | 'failed' | 'cancelled', metrics: Record<string, unknown> | null, modelId?: number | null): void {
    this.write(() => {
      this.stmt(
        `UPDATE runs SET status = ?, metrics = ?, finished_at = ?, model_id = coalesce(?, model_id) WHERE id = ?`,
      ).run(status, metrics ? JSON.stringify(metrics) : null, now(), modelId ?? null, id)
    })
  }

  runs(): Array<{ id: number; kind: string; modelId: number | null; status: string; params: unknown; metrics: unknown }> {
    this.assertOpen()
    const rows = this.stmt('SELECT * FROM runs ORDER BY id').all() as Array<{
      id: number
      kind: string
      model_id: number | null
      status: string
      params: string
      metrics: string | null
    }>
    return rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      modelId: r.model_id,
      status: r.status,
      params: JSON.parse(r.params),
      metrics: r.metrics ? JSON.parse(r.metrics) : null,
    }))
  }

  // ---------------------------------------------------------------------------------------------
  // Model suggestions and the review queue

  /**
   * Stores a tagging batch in ONE transaction: for each document its previous suggestions are
   * deleted (with revisions), the new ones are inserted (origin 'model', state 'suggested', with
   * revisions by `by`) except those overlapping an accepted annotation or an earlier suggestion,
   * and its uncertainty is recorded. Accepted annotations are never touched.
   */
  replaceSuggestions(batch: DocumentSuggestions[], opts: { modelId: number | null; by: string }): { stored: number; dropped: number } {
    return this.write(() => {
      const at = now()
      let stored = 0
      let dropped = 0
      for (const item of batch) {
        const doc = this.docRow(item.documentId)
        for (const old of this.stmt(
          `SELECT * FROM annotations WHERE document_id = ? AND deleted = 0 AND state = 'suggested'`,
        ).all(doc.id) as AnnRow[]) {
          const row = this.stmt('UPDATE annotations SET deleted = 1, updated_at = ?, updated_by = ? WHERE id = ? RETURNING *').get(
            at,
            opts.by,
            old.id,
          ) as AnnRow
          this.revise(row, 'delete', snapshot(old), null, at, opts.by)
        }
        const taken = (
          this.stmt(`SELECT start, "end" FROM annotations WHERE document_id = ? AND deleted = 0 AND state = 'accepted'`).all(doc.id) as Array<{
            start: number
            end: number
          }>
        ).slice()
        const sorted = [...item.suggestions].sort((a, b) => a.start - b.start || b.end - a.end)
        for (const sug of sorted) {
          const valid =
            Number.isInteger(sug.start) && Number.isInteger(sug.end) && sug.start >= 0 && sug.end > sug.start && sug.end <= doc.text.length
          if (!valid || taken.some((t) => t.start < sug.end && t.end > sug.start)) {
            dropped++
            continue
          }
          const type = normType(sug.type)
          const confidence = Math.min(1, Math.max(0, Number.isFinite(sug.confidence) ? sug.confidence : 0))
          const row = this.stmt(
            `INSERT INTO annotations (document_id, start, "end", type, concept_id, origin, confidence, state, updated_at, updated_by)
             VALUES (?, ?, ?, ?, NULL, 'model', ?, 'suggested', ?, ?) RETURNING *`,
          ).get(doc.id, sug.start, sug.end, type, confidence, at, opts.by) as AnnRow
          this.revise(row, 'create', null, snapshot(row), at, opts.by)
          taken.push({ start: sug.start, end: sug.end })
          stored++
        }
        if (item.uncertainty !== null) {
          const u = Math.min(1, Math.max(0, Number.isFinite(item.uncertainty) ? item.uncertainty : 1))
          this.stmt(
            `INSERT INTO document_uncertainty (document_id, model_id, uncertainty, tagged_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (document_id) DO UPDATE SET model_id = excluded.model_id, uncertainty = excluded.uncertainty,
             tagged_at = excluded.tagged_at`,
          ).run(doc.id, opts.modelId, u, at)
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
  acceptSuggestions(ids: number[]): number {
    return this.write(() => this.acceptMany([...new Set(ids)]))
  }

  /** Accepts every live suggestion with confidence >= threshold (of one document, or all). */
  acceptSuggestionsAbove(threshold: number, documentId?: number): number {
    if (!(threshold >= 0 && threshold <= 1)) throw new StoreError('invalid_request', `Threshold must lie in [0, 1], got ${threshold}`)
    return this.write(() => {
      if (documentId !== undefined) this.docRow(documentId)
      const ids = (
        this.stmt(
          `SELECT id FROM annotations WHERE deleted = 0 AND state = 'suggested' AND confidence >= ?
           AND (? IS NULL OR document_id = ?) ORDER BY document_id, start`,
        ).all(threshold, documentId ?? null, documentId ?? null) as Array<{ id: number }>
      ).map((r) => r.id)
      return this.acceptMany(ids)
    })
  }

  /** Rejects suggestions, all or none: each is deleted with a 'delete' revision by this user. */
  rejectSuggestions(ids: number[]): number {
    return this.write(() => {
      const at = now()
      let n = 0
      for (const id of new Set(ids)) {
        const cur = this.liveSuggestion(id)
        const row = this.stmt('UPDATE annotations SET deleted = 1, updated_at = ?, updated_by = ? WHERE id = ? RETURNING *').get(
          at,
          this.user,
          id,
        ) as AnnRow
        this.revise(row, 'delete', snapshot(cur), null, at)
        this.touch(this.docRow(cur.document_id))
        n++
      }
      return n
    })
  }

  /** Tagged documents not marked done, most uncertain first. */
  reviewQueue(limit = 50): ReviewQueueItem[] {
    this.assertOpen()
    const rows = this.stmt(
      `SELECT d.id, d.external_id, d.title, d.status, u.uncertainty,
              (SELECT count(*) FROM annotations a WHERE a.document_id = d.id AND a.deleted = 0 AND a.state = 'suggested') AS suggestions
       FROM document_uncertainty u JOIN documents d ON d.id = u.document_id
       WHERE d.status <> 'done' ORDER BY u.uncertainty DESC, d.id LIMIT ?`,
    ).all(Math.max(1, Math.min(limit, 5000))) as Array<{
      id: number
      external_id: string
      title: string
      status: ReviewStatus
      uncertainty: number
      suggestions: number
    }>
    return rows.map((r) => ({
      documentId: r.id,
      externalId: r.external_id,
      title: r.title,
      status: r.status,
      uncertainty: r.uncertainty,
      suggestions: r.suggestions,
    }))
  }

  // ---------------------------------------------------------------------------------------------
  // Documents for the model jobs (sent to the model host; ids are the workspace's document ids)

  /**
   * Documents whose accepted annotations are labels: the given review statuses and, optionally,
   * every document with gold annotations. Mentions are the live accepted annotations; the
   * CorpusDocument id is the workspace document id as a string.
   */
  labelledDocuments(q: LabelledQuery): CorpusDocument[] {
    this.assertOpen()
    const statuses = q.statuses.filter((st) => REVIEW_STATUSES.includes(st))
    const rows = this.stmt(
      `SELECT * FROM documents d WHERE d.status IN (SELECT value FROM json_each(?))
       OR (? = 1 AND EXISTS (SELECT 1 FROM annotations a WHERE a.document_id = d.id AND a.deleted = 0 AND a.origin = 'gold'))
       ORDER BY d.id`,
    ).all(JSON.stringify(statuses), q.includeGold ? 1 : 0) as DocRow[]
    return rows.map((d) => this.labelled(d))
  }

  /** The given documents (in order) with their accepted annotations as mentions; ids as above. */
  labelledDocumentsById(ids: number[]): CorpusDocument[] {
    this.assertOpen()
    return [...new Set(ids)].map((id) => this.labelled(this.docRow(id)))
  }

  /** Ids of the documents to tag: `ids` (checked), or every document not marked done. */
  documentIdsForTagging(ids?: number[]): number[] {
    this.assertOpen()
    if (ids) {
      const unique = [...new Set(ids)]
      const missing = unique.filter((id) => !this.stmt('SELECT 1 FROM documents WHERE id = ?').get(id))
      if (missing.length) throw new StoreError('not_found', `Documents not found: ${missing.join(', ')}`)
      return unique
    }
    return (this.stmt(`SELECT id FROM documents WHERE status <> 'done' ORDER BY id`).all() as Array<{ id: number }>).map((r) => r.id)
  }

  /** Text and tokens of documents to tag (no annotations: the model must not see them). */
  documentsForTagging(ids: number[]): CorpusDocument[] {
    this.assertOpen()
    return ids.map((id) => {
      const d = this.docRow(id)
      const out: CorpusDocument = { id: String(d.id), text: d.text, passages: [], mentions: [] }
      if (d.tokens) out.tokens = JSON.parse(d.tokens) as Array<[number, number]>
      return out
    })
  }

  // ---------------------------------------------------------------------------------------------
  // Internals

  private assertOpen(): void {
    if (this.closed) throw new StoreError('invalid_request', 'The workspace is closed')
  }

  private write<T>(fn: () => T): T {
    this.assertOpen()
    if (this.importDb) {
      throw new StoreError('conflict', 'An import is in progress; edits are possible again when it has finished')
    }
    return this.tx.immediate(fn) as T
  }

  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql)
    if (!s) {
      s = this.db.prepare(sql)
      this.statements.set(sql, s)
    }
    return s
  }

  private summary(id: number): DocumentSummary {
    const row = this.stmt(`SELECT ${SUMMARY_COLUMNS} FROM documents d WHERE d.id = ?`).get(id) as SummaryRow | undefined
    if (!row) throw new StoreError('not_found', `Document ${id} does not exist`)
    return toSummary(row)
  }

  private docRow(id: number): DocRow {
    const row = this.stmt('SELECT * FROM documents WHERE id = ?').get(id) as DocRow | undefined
    if (!row) throw new StoreError('not_found', `Document ${id} does not exist`)
    return row
  }

  private liveAnnotation(id: number): AnnRow {
    const row = this.stmt('SELECT * FROM annotations WHERE id = ? AND deleted = 0').get(id) as AnnRow | undefined
    if (!row) throw new StoreError('not_found', `Annotation ${id} does not exist or was deleted`)
    return row
  }

  private checkSpan(doc: DocRow, start: number, end: number): void {
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end <= start || end > doc.text.length) {
      throw new StoreError(
        'invalid_request',
        `Span [${start}, ${end}) is not valid for document ${doc.external_id}: need 0 <= start < end <= ${doc.text.length}`,
      )
    }
  }

  /** `against`: 'accepted' ignores suggestions (an accepted annotation replaces them). */
  private checkOverlap(doc: DocRow, start: number, end: number, except: number | null, against: 'any' | 'accepted' = 'any'): void {
    const other = this.stmt(
      `SELECT * FROM annotations WHERE document_id = ? AND deleted = 0 AND start < ? AND "end" > ? AND id <> ?
       AND (? = 'any' OR state = 'accepted') ORDER BY start LIMIT 1`,
    ).get(doc.id, end, start, except ?? -1, against) as AnnRow | undefined
    if (other) {
      throw new StoreError(
        'conflict',
        `"${quote(doc.text, start, end)}" [${start}, ${end}) overlaps the ${other.type} annotation ` +
          `"${quote(doc.text, other.start, other.end)}" [${other.start}, ${other.end}) in document ${doc.external_id}; ` +
          'delete or shrink that annotation first',
      )
    }
  }

  private revise(
    row: AnnRow,
    action: Revision['action'],
    before: Snapshot | null,
    after: Snapshot | null,
    at: string,
    by = this.user,
  ): void {
    this.stmt(
      'INSERT INTO revisions (annotation_id, document_id, action, before, after, at, by) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ).run(row.id, row.document_id, action, before && JSON.stringify(before), after && JSON.stringify(after), at, by)
  }

  private modelRow(id: number): ModelRow {
    const row = this.stmt('SELECT * FROM models WHERE id = ?').get(id) as ModelRow | undefined
    if (!row) throw new StoreError('not_found', `Model ${id} does not exist`)
    return row
  }

  private toModel(r: ModelRow): ModelRecord {
    const c = JSON.parse(r.config) as Partial<ModelConfigSummary>
    return {
      id: r.id,
      name: r.name,
      kind: r.kind,
      status: r.status,
      candidate: r.status === 'candidate',
      path: isAbsolute(r.path) ? r.path : resolve(dirname(this.path), r.path),
      layers: c.layers ?? 0,
      hidden: c.hidden ?? 0,
      heads: c.heads ?? 0,
      parameters: c.parameters ?? 0,
      bytes: c.bytes ?? 0,
      entityTypes: JSON.parse(r.entity_types) as string[],
      createdAt: r.created_at,
      active: r.active === 1,
      parentId: r.parent_id,
      trainedOn: r.trained_on,
      devScores: r.dev_scores ? (JSON.parse(r.dev_scores) as Scores & { types: Record<string, Scores> }) : null,
      trainingSummary: r.training_summary,
      distillation: r.distillation ? (JSON.parse(r.distillation) as { teacherId: number; mode: DistillMode }) : null,
    }
  }

  /** Inside the workspace folder: relative with '/', so the folder can move; else absolute. */
  private storedPath(p: string): string {
    const full = resolve(p)
    const rel = relative(dirname(this.path), full)
    if (rel && !rel.startsWith('..') && !isAbsolute(rel)) return rel.split(sep).join('/')
    return full
  }

  private activateIfNone(id: number): void {
    if (!this.stmt('SELECT 1 FROM models WHERE active = 1').get()) {
      this.stmt(`UPDATE models SET active = 1 WHERE id = ? AND status = 'ready'`).run(id)
    }
  }

  private deleteModelRow(id: number): ModelRecord {
    const row = this.modelRow(id)
    const rec = this.toModel(row)
    this.stmt('UPDATE runs SET model_id = NULL WHERE model_id = ?').run(id)
    this.stmt('DELETE FROM models WHERE id = ?').run(id)
    if (row.active === 1) {
      const next = this.stmt(`SELECT id FROM models WHERE status = 'ready' ORDER BY created_at DESC, id DESC LIMIT 1`).get() as
        | { id: number }
        | undefined
      if (next) this.stmt('UPDATE models SET active = 1 WHERE id = ?').run(next.id)
    }
    return rec
  }

  private liveSuggestion(id: number): AnnRow {
    const cur = this.liveAnnotation(id)
    if (cur.state !== 'suggested') throw new StoreError('conflict', `Annotation ${id} is not a suggestion (it is already accepted)`)
    return cur
  }

  private acceptMany(ids: number[]): number {
    const at = now()
    for (const id of ids) {
      const cur = this.liveSuggestion(id)
      const doc = this.docRow(cur.document_id)
      this.checkOverlap(doc, cur.start, cur.end, cur.id, 'accepted')
      const row = this.stmt(
        `UPDATE annotations SET state = 'accepted', origin = 'person', updated_at = ?, updated_by = ? WHERE id = ? RETURNING *`,
      ).get(at, this.user, id) as AnnRow
      this.revise(row, 'update', snapshot(cur), snapshot(row), at)
      this.touch(doc)
    }
    return ids.length
  }

  private labelled(d: DocRow): CorpusDocument {
    const anns = this.stmt(
      `SELECT * FROM annotations WHERE document_id = ? AND deleted = 0 AND state = 'accepted' ORDER BY start, "end", id`,
    ).all(d.id) as AnnRow[]
    const out: CorpusDocument = {
      id: String(d.id),
      text: d.text,
      passages: JSON.parse(d.passages) as Passage[],
      mentions: anns.map((a) => ({ start: a.start, end: a.end, text: d.text.slice(a.start, a.end), type: a.type })),
    }
    if (d.tokens) out.tokens = JSON.parse(d.tokens) as Array<[number, number]>
    return out
  }

  /** Deletes live suggestions overlapping [start, end) (except `except`), with revisions. */
  private dropOverlappingSuggestions(documentId: number, start: number, end: number, except: number | null, at: string): void {
    const rows = this.stmt(
      `SELECT * FROM annotations WHERE document_id = ? AND deleted = 0 AND state = 'suggested' AND start < ? AND "end" > ? AND id <> ?`,
    ).all(documentId, end, start, except ?? -1) as AnnRow[]
    for (const cur of rows) {
      const row = this.stmt('UPDATE annotations SET deleted = 1, updated_at = ?, updated_by = ? WHERE id = ? RETURNING *').get(
        at,
        this.user,
        cur.id,
      ) as AnnRow
      this.revise(row, 'delete', snapshot(cur), null, at)
    }
  }

  /** Editing an unreviewed document starts its review. */
  private touch(doc: DocRow): void {
    if (doc.status === 'unreviewed') this.stmt("UPDATE documents SET status = 'in_progress' WHERE id = ?").run(doc.id)
  }
}
