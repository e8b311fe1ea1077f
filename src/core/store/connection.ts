// The workspace's SQLite connection: opening (WAL, synchronous FULL), the statement cache, the
// write transaction and the open/closed and importing state every store module checks.
// Synchronous SQLite calls (./sqlite: the binding) on one connection, except imports, which run on a second
// connection (import.ts) so they can yield to the event loop (progress, cancellation) while holding
// one transaction open; WAL lets the main connection keep reading the last committed state meanwhile.
import Database from './sqlite'
import { StoreError } from './errors'
import type { DocRow } from './rows'

export type Db = Database.Database
export type Statement = Database.Statement

/** Opens `file` (created when missing) in WAL mode with full syncs and foreign keys on. */
export function openDatabase(file: string): Db {
  const db = new Database(file, { timeout: 5000 })
  try {
    const mode = db.pragma('journal_mode = WAL', { simple: true })
    if (String(mode).toLowerCase() !== 'wal') throw new Error(`${file}: cannot switch the workspace to WAL mode`)
    // WAL + NORMAL may lose the last commits on power loss; FULL syncs the WAL on every commit.
    db.pragma('synchronous = FULL')
    db.pragma('foreign_keys = ON')
  } catch (e) {
    db.close()
    throw e
  }
  return db
}

export class Connection {
  private readonly statements = new Map<string, Statement>()
  private readonly tx: Database.Transaction<(fn: () => unknown) => unknown>
  /** The import's own connection while one runs (import.ts); edits are refused meanwhile. */
  importDb: Db | null = null
  closed = false

  constructor(
    readonly db: Db,
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

  /** Closes both connections; an import in flight is rolled back. */
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

  assertOpen(): void {
    if (this.closed) throw new StoreError('invalid_request', 'The workspace is closed')
  }

  /** Runs `fn` in one IMMEDIATE transaction; refused while an import holds the write lock. */
  write<T>(fn: () => T): T {
    this.assertOpen()
    if (this.importDb) {
      throw new StoreError('conflict', 'An import is in progress; edits are possible again when it has finished')
    }
    return this.tx.immediate(fn) as T
  }

  /** A prepared statement, cached by its SQL text. */
  stmt(sql: string): Statement {
    let s = this.statements.get(sql)
    if (!s) {
      s = this.db.prepare(sql)
      this.statements.set(sql, s)
    }
    return s
  }

  /** The document, unless it does not exist or was deleted. */
  liveDocRow(id: number): DocRow | undefined {
    return this.stmt('SELECT * FROM documents WHERE id = ? AND deleted = 0').get(id) as DocRow | undefined
  }

  /** True for a document that exists and was deleted (documents:delete). */
  isDeletedDocument(id: number): boolean {
    return !!this.stmt('SELECT 1 FROM documents WHERE id = ? AND deleted = 1').get(id)
  }

  /** The document; a deleted one is refused like one that never existed. */
  docRow(id: number): DocRow {
    const row = this.liveDocRow(id)
    if (!row) throw new StoreError('not_found', `Document ${id} does not exist`)
    return row
  }
}
