// The SQLite workspace: documents, annotations and their append-only revision trail, model
// suggestions, the model registry, settings. This class is the one entry point; each concern lives
// in its own module (documents, annotations, import, models, suggestions, settings) working on the
// Connection.
import { mkdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import type { DeletedDocument, DocumentDeletion, DocumentListResult, LearningCurvePoint } from '@shared/ipc'
import type { Annotation, CorpusDocument, DocumentDetail, DocumentSummary, ReviewStatus, Revision } from '@shared/domain'
import * as annotations from './annotations'
import { Connection, openDatabase, type Db } from './connection'
import * as documents from './documents'
import { WorkspaceOpenError, type WorkspaceOpenReason } from './errors'
import { ImportQueue } from './import'
import { WorkspaceLock } from './lock'
import * as learning from './learning'
import type { NewLearningPoint } from './learning'
import * as models from './models'
import { migrate } from './schema'
import * as settings from './settings'
import * as suggestions from './suggestions'
import type { ReviewCandidate } from './suggestions'
import type {
  CreateAnnotationInput,
  DocumentSuggestions,
  ImportOptions,
  ImportSummary,
  LabelledQuery,
  ListQuery,
  ModelRecord,
  ModelUpdate,
  NewModelInput,
  OpenOptions,
  RunKind,
  RunRecord,
  UpdateAnnotationInput,
  WorkspaceSettings,
  WorkspaceSummary,
} from './types'

export class Workspace {
  private readonly imports: ImportQueue
  /** The main connection; tests inspect its pragmas and constraints through it. */
  private readonly db: Db

  private constructor(
    private readonly c: Connection,
    private readonly lock: WorkspaceLock,
  ) {
    this.imports = new ImportQueue(c)
    this.db = c.db
  }

  /**
   * Opens (creating and migrating as needed) the workspace at `path`, taking its lock
   * (`<path>.lock`, ./lock.ts) until close(). Throws WorkspaceOpenError with the reason: 'locked'
   * (another instance has it open), 'corrupt', 'newer_schema', 'missing' (its folder cannot be
   * made or reached), 'other'.
   */
  static open(path: string, opts: OpenOptions = {}): Workspace {
    const file = resolve(path)
    try {
      mkdirSync(dirname(file), { recursive: true })
    } catch (e) {
      throw new WorkspaceOpenError('missing', `Cannot open workspace ${file}: its folder cannot be reached or created (${(e as Error).message})`)
    }
    const user = opts.user?.trim() || 'annotator'
    const lock = WorkspaceLock.acquire(file, { takeOver: opts.takeOver, user })
    let db: Db | undefined
    try {
      db = openDatabase(file)
      checkIntegrity(db)
      migrate(db, file)
    } catch (e) {
      db?.close()
      lock.release()
      throw new WorkspaceOpenError(openFailure(e), `Cannot open workspace ${file}: ${(e as Error).message}`)
    }
    return new Workspace(new Connection(db, file, user), lock)
  }

  /** Absolute path of the workspace file. */
  get path(): string {
    return this.c.path
  }

  /** Who is recorded on every change. */
  get user(): string {
    return this.c.user
  }

  /** Closes the workspace and releases its lock; an import in flight is rolled back and rejects with 'cancelled'. */
  close(): void {
    this.c.close()
    this.lock.release()
  }

  /**
   * True while this workspace's lock file is still the one it took at open (nobody took the
   * workspace over). Start-up recovery of interrupted jobs runs only then.
   */
  get ownsLock(): boolean {
    return this.lock.held
  }

  get isOpen(): boolean {
    return !this.c.closed
  }

  /** True while an import holds the write lock; edits are refused meanwhile (code 'conflict'). */
  get importing(): boolean {
    return this.c.importDb !== null
  }

  info(): WorkspaceSummary {
    return documents.info(this.c)
  }

  /** Types of all live annotations, sorted. */
  entityTypes(): string[] {
    return documents.entityTypes(this.c)
  }

  // Import

  /**
   * Imports `docs` all-or-nothing in ONE transaction. Documents whose external id already exists
   * (in the workspace or earlier in `docs`) are skipped and reported; one whose id matches a
   * deleted document is imported afresh and reported as reimported (import.ts); gold mentions become accepted
   * annotations of origin 'gold', each with a 'create' revision so history replays to the full state.
   * Concurrent imports are queued. Rejects with StoreError 'cancelled' when `signal` aborts or the
   * workspace closes, 'invalid_request' when a document is malformed; nothing is written then.
   */
  importDocuments(docs: CorpusDocument[], sourceFile: string | null, opts: ImportOptions = {}): Promise<ImportSummary> {
    return this.imports.enqueue(docs, sourceFile, opts)
  }

  // Documents

  /** The files documents were imported from (what an export must never overwrite). */
  sourceFiles(): string[] {
    return documents.sourceFiles(this.c)
  }

  listDocuments(q: ListQuery = {}): DocumentListResult {
    return documents.listDocuments(this.c, q)
  }

  getDocument(id: number): DocumentDetail {
    return documents.getDocument(this.c, id)
  }

  setStatus(id: number, status: ReviewStatus): DocumentSummary {
    return documents.setStatus(this.c, id, status)
  }

  /** What deleting these (live) documents would take away: their annotations and suggestions. */
  deletionImpact(ids: number[]): DocumentDeletion {
    return documents.deletionImpact(this.c, ids)
  }

  /**
   * Soft delete, all or none: every read skips the documents from then on; their annotations are
   * untouched, so restoreDocuments brings them back exactly.
   */
  deleteDocuments(ids: number[]): DocumentDeletion {
    return documents.deleteDocuments(this.c, ids)
  }

  /** Undoes deleteDocuments, all or none; returns the documents as they are again. */
  restoreDocuments(ids: number[]): DocumentSummary[] {
    return documents.restoreDocuments(this.c, ids)
  }

  /** Deleted documents, newest deletion first (the first `limit` of `total`). */
  deletedDocuments(limit?: number): { documents: DeletedDocument[]; total: number } {
    return documents.listDeletedDocuments(this.c, limit)
  }

  /** The next/previous document by id (optionally only unreviewed ones), or null at either end. */
  neighbor(id: number, direction: 'next' | 'previous', unreviewedOnly: boolean): number | null {
    return documents.neighbor(this.c, id, direction, unreviewedOnly)
  }

  /**
   * Documents (all, or `ids` in the given order) with their live *accepted* annotations as mentions;
   * suggestions are left out. The corpus id is the external id.
   */
  exportDocuments(ids?: number[]): CorpusDocument[] {
    return documents.exportDocuments(this.c, ids)
  }

  // Annotations (every change writes a revision in the same transaction)

  createAnnotation(input: CreateAnnotationInput): Annotation {
    return annotations.createAnnotation(this.c, input)
  }

  /**
   * Retype / re-bound / change concept or state. A no-op update writes nothing. A person's edit of
   * a model suggestion confirms it: unless `state: 'suggested'` is given it becomes accepted with
   * origin 'person' (confidence kept), as suggestions:accept does.
   */
  updateAnnotation(input: UpdateAnnotationInput): Annotation {
    return annotations.updateAnnotation(this.c, input)
  }

  /** Soft delete: the row stays (revisions reference it), flagged deleted. */
  deleteAnnotation(id: number): { id: number } {
    return annotations.deleteAnnotation(this.c, id)
  }

  /** Puts an annotation back as it was before its latest revision (see annotations.restoreRevision). */
  restoreRevision(revisionId: number): Annotation | null {
    return annotations.restoreRevision(this.c, revisionId)
  }

  /** Every revision of the document's annotations, oldest first. */
  history(documentId: number): Revision[] {
    return annotations.history(this.c, documentId)
  }

  // Model registry (rows only; the checkpoint folders are the caller's: see src/main/models)

  /** Where this workspace keeps its models: `<workspace folder>/models`. */
  get modelsDir(): string {
    return join(dirname(this.c.path), 'models')
  }

  listModels(opts: { includeTraining?: boolean } = {}): ModelRecord[] {
    return models.listModels(this.c, opts)
  }

  getModel(id: number): ModelRecord {
    return models.getModel(this.c, id)
  }

  activeModel(): ModelRecord | null {
    return models.activeModel(this.c)
  }

  /** `base`, or `base (2)`, `base (3)`, … whichever no model has yet. */
  uniqueModelName(base: string): string {
    return models.uniqueModelName(this.c, base)
  }

  /** Registers a model (default status 'training'); a ready model becomes active when none is. */
  createModel(input: NewModelInput): ModelRecord {
    return models.createModel(this.c, input)
  }

  /** Fills in what a finished job learnt; becoming ready activates the model when none is active. */
  updateModel(id: number, patch: ModelUpdate): ModelRecord {
    return models.updateModel(this.c, id, patch)
  }

  /** Makes `id` the one active tagger. Only a ready model (not a candidate) can be active. */
  setActiveModel(id: number): ModelRecord {
    return models.setActiveModel(this.c, id)
  }

  /**
   * Removes the row (runs and uncertainties forget it; children keep a null parent). When it was
   * the active model, the newest other ready model becomes active. Returns the removed record so
   * the caller can remove its folder.
   */
  deleteModel(id: number): ModelRecord {
    return models.deleteModel(this.c, id)
  }

  /**
   * Start-up recovery: models still 'training' (their job was interrupted: the app quit or
   * crashed) are removed, runs still 'running' are marked failed. `keep` spares models and runs
   * of jobs running in this process. Returns the removed models (the caller removes the folders).
   */
  abandonInterruptedModels(keep: { models?: ReadonlySet<number>; runs?: ReadonlySet<number> } = {}): ModelRecord[] {
    return models.abandonInterruptedModels(this.c, keep)
  }

  startRun(kind: RunKind, modelId: number | null, params: Record<string, unknown>): number {
    return models.startRun(this.c, kind, modelId, params)
  }

  finishRun(id: number, status: 'done' | 'failed' | 'cancelled', metrics: Record<string, unknown> | null, modelId?: number | null): void {
    models.finishRun(this.c, id, status, metrics, modelId)
  }

  runs(): RunRecord[] {
    return models.runs(this.c)
  }

  // Settings (one JSON value per key)

  /** The stored value of `key`, or null when it was never set. */
  setting<K extends keyof WorkspaceSettings>(key: K): WorkspaceSettings[K] | null {
    return settings.getSetting(this.c, key)
  }

  setSetting<K extends keyof WorkspaceSettings>(key: K, value: WorkspaceSettings[K]): void {
    settings.setSetting(this.c, key, value)
  }

  // Model suggestions and the review queue

  /**
   * Stores a tagging batch in ONE transaction: for each document its previous suggestions are
   * deleted (with revisions), the new ones are inserted (origin 'model', state 'suggested', with
   * revisions by `by`) except those overlapping an accepted annotation or a more confident
   * suggestion, and its uncertainty is recorded. Accepted annotations are never touched.
   */
  replaceSuggestions(batch: DocumentSuggestions[], opts: { modelId: number | null; by: string }): { stored: number; dropped: number } {
    return suggestions.replaceSuggestions(this.c, batch, opts)
  }

  /**
   * Accepts suggestions, all or none: each becomes a person-confirmed annotation (state
   * 'accepted', origin 'person', confidence kept) with an 'update' revision by this user, and its
   * document's review starts. An id that is not a live suggestion is refused.
   */
  acceptSuggestions(ids: number[]): number {
    return suggestions.acceptSuggestions(this.c, ids)
  }

  /** Accepts every live suggestion with confidence >= threshold (of one document, or all). */
  acceptSuggestionsAbove(threshold: number, documentId?: number): number {
    return suggestions.acceptSuggestionsAbove(this.c, threshold, documentId)
  }

  /** Rejects suggestions, all or none: each is deleted with a 'delete' revision by this user. */
  rejectSuggestions(ids: number[]): number {
    return suggestions.rejectSuggestions(this.c, ids)
  }

  /** Tagged documents not marked done, in document order, with their scores: what the review queue ranks. */
  reviewCandidates(): ReviewCandidate[] {
    return suggestions.reviewCandidates(this.c)
  }

  /** Documents marked done or in progress. */
  reviewedCount(): number {
    return documents.reviewedCount(this.c)
  }

  /** Ids of the documents with this review status, in import order (Auto-improve re-tags the unreviewed ones). */
  documentIdsWithStatus(status: ReviewStatus): number[] {
    return documents.documentIdsWithStatus(this.c, status)
  }

  /** Texts of the given documents (id → title and abstract), for the queue's diversity-aware strategy. */
  documentTextsById(ids: readonly number[]): Map<number, string> {
    return documents.documentTextsById(this.c, ids)
  }

  // The learning curve (one point per finished retrain)

  addLearningPoint(p: NewLearningPoint): LearningCurvePoint {
    return learning.addLearningPoint(this.c, p)
  }

  learningCurve(): LearningCurvePoint[] {
    return learning.learningCurve(this.c)
  }

  // Documents for the model jobs (sent to the model host; ids are the workspace's document ids)

  /**
   * Documents whose accepted annotations are labels: the given review statuses and, optionally,
   * every document with gold annotations. Mentions are the live accepted annotations; the
   * CorpusDocument id is the workspace document id as a string.
   */
  labelledDocuments(q: LabelledQuery): CorpusDocument[] {
    return documents.labelledDocuments(this.c, q)
  }

  /** The given documents (in order) with their accepted annotations as mentions; ids as above. */
  labelledDocumentsById(ids: number[]): CorpusDocument[] {
    return documents.labelledDocumentsById(this.c, ids)
  }

  /** Ids of the documents to tag: `ids` (checked), or every document not marked done. */
  documentIdsForTagging(ids?: number[]): number[] {
    return documents.documentIdsForTagging(this.c, ids)
  }

  /** Every document's text and passages (no annotations), in import order: text for models:adapt. */
  documentTexts(): Array<Pick<CorpusDocument, 'id' | 'text' | 'passages'>> {
    return documents.documentTexts(this.c)
  }

  /** Text and tokens of documents to tag (no annotations: the model must not see them). */
  documentsForTagging(ids: number[]): CorpusDocument[] {
    return documents.documentsForTagging(this.c, ids)
  }
}

/**
 * SQLite's quick_check (b-trees, page and cell structure; not the slower index-vs-table
 * comparison of integrity_check), so a file damaged mid-way is refused at open with the reason
 * instead of failing later, at whichever query reaches the damaged page.
 */
function checkIntegrity(db: Db): void {
  const result = String(db.pragma('quick_check', { simple: true }))
  if (result !== 'ok') throw Object.assign(new Error(`the file is damaged (SQLite quick_check: ${result}); restore a backup or open another workspace`), { code: 'SQLITE_CORRUPT' })
}

/** Why opening failed, from the SQLite or file-system error. */
function openFailure(e: unknown): WorkspaceOpenReason {
  const code = String((e as { code?: unknown }).code ?? '')
  const message = e instanceof Error ? e.message : String(e)
  if (/newer than this app supports/.test(message)) return 'newer_schema'
  if (/^SQLITE_(NOTADB|CORRUPT)/.test(code) || /not a database|malformed/i.test(message)) return 'corrupt'
  if (/^(ENOENT|EACCES|EPERM|EROFS|ENOTDIR|SQLITE_CANTOPEN|SQLITE_READONLY)/.test(code) || /unable to open database/i.test(message)) return 'missing'
  return 'other'
}
