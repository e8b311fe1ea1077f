// Import: documents with their gold mentions, all-or-nothing, on a second connection that yields to
// the event loop (progress events, cancel requests) while its one transaction is open.
//
// A document whose id matches a *deleted* document is imported afresh, as the file has it: a
// person deletes a document because it was wrong, and imports the file again to get it right, so
// bringing the deleted copy back instead would undo the fix. The deleted copy keeps its row (its
// annotations' revisions reference it), its external id retired to `<id> (deleted #<row id>)` so
// the id is free; the report lists such ids as `reimported`.
import type { CorpusDocument, Mention } from '@shared/domain'
import { openDatabase, type Connection } from './connection'
import { StoreError } from './errors'
import { normConcept, now, titleOf, type Snapshot } from './rows'
import type { ImportOptions, ImportSummary } from './types'

/** How long an import may hold the event loop before yielding (progress events, cancel requests). */
const IMPORT_SLICE_MS = 25

const cancelled = (why = 'Import cancelled; nothing was imported'): StoreError => new StoreError('cancelled', why)

/** Runs imports one after another: a second import waits for the first to commit or roll back. */
export class ImportQueue {
  private chain: Promise<unknown> = Promise.resolve()

  constructor(private readonly c: Connection) {}

  enqueue(docs: CorpusDocument[], sourceFile: string | null, opts: ImportOptions): Promise<ImportSummary> {
    this.c.assertOpen()
    const run = (): Promise<ImportSummary> => runImport(this.c, docs, sourceFile, opts)
    const result = this.chain.then(run, run)
    this.chain = result.catch(() => undefined)
    return result
  }
}

async function runImport(
  c: Connection,
  docs: CorpusDocument[],
  sourceFile: string | null,
  opts: ImportOptions,
): Promise<ImportSummary> {
  const { onProgress, signal } = opts
  c.assertOpen()
  if (signal?.aborted) throw cancelled()
  const db = openDatabase(c.path)
  c.importDb = db
  try {
    const insertDoc = db.prepare(
      `INSERT INTO documents (external_id, title, text, passages, tokens, source_file, imported_at)
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (external_id) DO NOTHING RETURNING id`,
    )
    const existingText = db.prepare('SELECT text FROM documents WHERE external_id = ?')
    const retireDeleted = db.prepare(
      `UPDATE documents SET external_id = external_id || ' (deleted #' || id || ')' WHERE external_id = ? AND deleted = 1 RETURNING id`,
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
    const by = c.user
    const duplicates: string[] = []
    const conflicts: string[] = []
    const reimported: string[] = []
    let imported = 0
    let sliceStart = performance.now()

    db.exec('BEGIN IMMEDIATE')
    try {
      for (let i = 0; i < docs.length; i++) {
        const doc = docs[i]!
        const externalId = validateImported(doc, i, sourceFile)
        const passages = doc.passages ?? []
        const title = titleOf(doc.text, passages)
        if (retireDeleted.get(externalId)) reimported.push(externalId)
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
          // Same id, other text: a different document (or another version of it), not a repeat.
          const held = existingText.get(externalId) as { text: string }
          ;(held.text === doc.text ? duplicates : conflicts).push(externalId)
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
          if (c.closed) throw cancelled('Import cancelled: the workspace was closed')
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
    return { imported, duplicates, conflicts, reimported }
  } finally {
    if (db.open) db.close()
    c.importDb = null
  }
}

function validateImported(doc: CorpusDocument, index: number, sourceFile: string | null): string {
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
