import { join } from 'node:path'
import Database from '@core/store/sqlite'
import { SCHEMA_VERSION, StoreError, Workspace } from '@core/store'
import { DOC_A, tempDir, tempWorkspace } from './helpers'

describe('workspace schema', () => {
  it('creates the schema with WAL, synchronous=FULL and foreign keys', () => {
    const t = tempWorkspace()
    try {
      t.ws.close()
      const db = new Database(t.path)
      try {
        expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
        expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION)
        const names = (db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')").all() as Array<{ name: string }>).map(
          (r) => r.name,
        )
        for (const n of ['documents', 'annotations', 'revisions', 'documents_fts', 'schema_migrations', 'models', 'runs']) {
          expect(names).toContain(n)
        }
        expect(names).toEqual(expect.arrayContaining(['revisions_no_update', 'revisions_no_delete']))
        // Every step ran once, in order.
        expect(db.prepare('SELECT version FROM schema_migrations ORDER BY version').all()).toEqual(
          Array.from({ length: SCHEMA_VERSION }, (_, i) => ({ version: i + 1 })),
        )
      } finally {
        db.close()
      }
    } finally {
      t.done()
    }
  })

  it('sets synchronous=FULL and foreign_keys on its own connection', () => {
    const t = tempWorkspace()
    try {
      // Per-connection pragmas are not persisted; read them through the workspace's connection.
      const db = (t.ws as unknown as { db: Database.Database }).db
      expect(db.pragma('synchronous', { simple: true })).toBe(2) // 2 = FULL
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1)
    } finally {
      t.done()
    }
  })

  it('reopens an existing workspace without re-running migrations and keeps its data', async () => {
    const t = tempWorkspace()
    try {
      await t.ws.importDocuments([DOC_A], 'a.pubtator')
      t.ws.close()
      const again = Workspace.open(t.path, { user: 'someone' })
      expect(again.info().documentCount).toBe(1)
      again.close()
    } finally {
      t.done()
    }
  })

  it('refuses a workspace written by a newer schema', () => {
    const { dir, cleanup } = tempDir()
    try {
      const path = join(dir, 'future.sqlite')
      const db = new Database(path)
      db.pragma(`user_version = ${SCHEMA_VERSION + 1}`)
      db.close()
      expect(() => Workspace.open(path)).toThrow(/newer than this app supports/)
    } finally {
      cleanup()
    }
  })

  it('refuses a file that is not a workspace with a StoreError naming the file', async () => {
    const { dir, cleanup } = tempDir()
    try {
      const path = join(dir, 'not-a-db.sqlite')
      const { writeFileSync } = await import('node:fs')
      writeFileSync(path, 'this is not sqlite, just text that is long enough to look like a header '.repeat(20))
      let err: unknown
      try {
        Workspace.open(path)
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(StoreError)
      expect((err as Error).message).toContain(path)
    } finally {
      cleanup()
    }
  })

  it('makes revisions append-only: UPDATE and DELETE raise', async () => {
    const t = tempWorkspace()
    try {
      await t.ws.importDocuments([DOC_A], 'a.pubtator')
      t.ws.close()
      const db = new Database(t.path)
      try {
        const n = (db.prepare('SELECT count(*) AS n FROM revisions').get() as { n: number }).n
        expect(n).toBe(DOC_A.mentions.length)
        expect(() => db.prepare("UPDATE revisions SET by = 'mallory'").run()).toThrow(/append-only/)
        expect(() => db.prepare('DELETE FROM revisions').run()).toThrow(/append-only/)
        expect(() => db.prepare('DELETE FROM revisions WHERE id = 1').run()).toThrow(/append-only/)
        expect((db.prepare('SELECT count(*) AS n FROM revisions').get() as { n: number }).n).toBe(n)
        expect(db.prepare("SELECT count(*) AS n FROM revisions WHERE by = 'mallory'").get()).toEqual({ n: 0 })
      } finally {
        db.close()
      }
    } finally {
      t.done()
    }
  })

  it('enforces foreign keys', () => {
    const t = tempWorkspace()
    try {
      const db = (t.ws as unknown as { db: Database.Database }).db
      expect(() =>
        db
          .prepare(
            `INSERT INTO annotations (document_id, start, "end", type, origin, state, updated_at, updated_by)
             VALUES (999, 0, 1, 'X', 'person', 'accepted', 'now', 'me')`,
          )
          .run(),
      ).toThrow(/FOREIGN KEY/)
    } finally {
      t.done()
    }
  })
})
