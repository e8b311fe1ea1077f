// The SQLite binding wrapper (src/core/store/sqlite.ts): better-sqlite3's semantics where
// libsql's compatibility layer differs. Several of these inputs abort the whole process when
// handed to libsql directly, so each case here would crash the test run if the wrapper regressed.
import { join } from 'node:path'
import Database from '@core/store/sqlite'
import { Workspace } from '@core/store'
import { tempDir } from './helpers'

let cleanup: () => void
let db: Database.Database
let path: string

beforeEach(() => {
  const t = tempDir()
  cleanup = t.cleanup
  path = join(t.dir, 'db.sqlite')
  db = new Database(path, { timeout: 1000 })
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT UNIQUE, b BLOB)')
})

afterEach(() => {
  if (db.open) db.close()
  cleanup()
})

describe('sqlite binding wrapper', () => {
  it('binds a single null or Buffer argument, arrays of values, and named parameters', () => {
    const ins = db.prepare('INSERT INTO t (x) VALUES (?)')
    expect(ins.run(null).changes).toBe(1)
    expect(db.prepare('INSERT INTO t (b) VALUES (?)').run(Buffer.from([1, 2])).lastInsertRowid).toBe(2)
    db.prepare('INSERT INTO t (x, b) VALUES (?, ?)').run(['a', null])
    const row = db.prepare('SELECT x, b FROM t WHERE x = @x').get({ x: 'a' })
    expect(row).toEqual({ x: 'a', b: null })
    const blob = db.prepare('SELECT b FROM t WHERE id = ?').get(2) as { b: Uint8Array }
    expect([...blob.b]).toEqual([1, 2])
  })

  it('throws a TypeError for values SQLite cannot bind instead of aborting the process', () => {
    const ins = db.prepare('INSERT INTO t (x) VALUES (?)')
    expect(() => ins.run(true)).toThrow(TypeError)
    expect(() => ins.run({ x: false })).toThrow(/can only bind/)
    expect(() => ins.run([{}])).toThrow(TypeError)
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 0 })
  })

  it('returns plain rows from get(), all() and iterate() (no timing metadata)', () => {
    db.prepare('INSERT INTO t (x) VALUES (?)').run('a')
    const get = db.prepare('SELECT id, x FROM t').get()
    expect(Object.keys(get as object)).toEqual(['id', 'x'])
    expect(db.prepare('SELECT id, x FROM t').all()).toEqual([{ id: 1, x: 'a' }])
    expect([...db.prepare('SELECT x FROM t').iterate()]).toEqual([{ x: 'a' }])
  })

  it('answers pragma(…, { simple: true }) with the value, otherwise with rows', () => {
    expect(db.pragma('journal_mode = WAL', { simple: true })).toBe('wal')
    db.pragma('synchronous = FULL')
    expect(db.pragma('synchronous', { simple: true })).toBe(2)
    expect(db.pragma('user_version')).toEqual([{ user_version: 0 }])
  })

  it('rolls back a failed transaction and nests transactions as savepoints', () => {
    const ins = db.prepare('INSERT INTO t (x) VALUES (?)')
    const tx = db.transaction((values: string[]) => {
      for (const v of values) ins.run(v)
    })
    expect(() => tx.immediate(['a', 'b', 'a'])).toThrow(/UNIQUE/)
    expect(db.inTransaction).toBe(false)
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 0 })

    const outer = db.transaction(() => {
      ins.run('outer')
      expect(() => tx(['inner', 'inner'])).toThrow(/UNIQUE/)
      ins.run('after')
    })
    outer.immediate()
    expect(db.prepare('SELECT x FROM t ORDER BY id').all()).toEqual([{ x: 'outer' }, { x: 'after' }])
  })

  it('refuses writes through a read-only connection', () => {
    const reader = new Database(path, { readonly: true })
    try {
      expect(() => reader.prepare('INSERT INTO t (x) VALUES (?)').run('z')).toThrow(/readonly|read-only|query_only|attempt to write/i)
      expect(reader.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 0 })
    } finally {
      reader.close()
    }
  })

  it('gives every workspace connection WAL and synchronous = FULL', () => {
    const t = tempDir()
    try {
      const ws = Workspace.open(join(t.dir, 'ws.sqlite'))
      const raw = (ws as unknown as { db: Database.Database }).db
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal')
      expect(raw.pragma('synchronous', { simple: true })).toBe(2)
      expect(raw.pragma('foreign_keys', { simple: true })).toBe(1)
      ws.close()
    } finally {
      t.cleanup()
    }
  })
})
