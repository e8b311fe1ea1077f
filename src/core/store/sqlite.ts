// The one module that knows which SQLite binding the store uses.
//
// libsql is an N-API addon (napi_register_module_v1, no V8 symbols) with prebuilt binaries in
// per-platform npm packages (@libsql/linux-x64-gnu, @libsql/win32-x64-msvc, …): the same
// installed file loads under the installing Node (CLI, tests, benchmarks) and under Electron's
// own Node (app, model host) without a rebuild, a compiler or a second binary.
// better-sqlite3, used before, is a V8-API addon compiled for one NODE_MODULE_VERSION, so
// `npm ci && npm start` failed at start-up in Electron.
//
// libsql's better-sqlite3-compatible layer differs where the store depends on it, so this
// wrapper keeps better-sqlite3's semantics (the subset the store uses):
// - parameters are checked and handed over as one array (or one object of named parameters):
//   libsql reads any single object argument as named parameters, and a single null or Buffer
//   argument, or a boolean anywhere, aborts the whole process (Rust panic) instead of throwing;
// - `get()` rows carry an enumerable `_metadata` timing field: removed;
// - `pragma(…, { simple: true })` returns the whole row: returns the first column's value;
// - `transaction()` cannot nest: nested calls use a savepoint, as better-sqlite3 does, and the
//   rollback only runs when SQLite has not already ended the transaction;
// - `readonly` is ignored by libsql's open: enforced with `PRAGMA query_only`.
import Libsql from 'libsql'

type Row = Record<string, unknown>

export interface OpenOptions {
  /** Milliseconds to wait for a lock held by another connection before SQLITE_BUSY. */
  timeout?: number
  /** Refuse every write through this connection. */
  readonly?: boolean
}

export interface RunResult {
  changes: number
  lastInsertRowid: number | bigint
}

export interface Statement {
  run(...params: unknown[]): RunResult
  get(...params: unknown[]): unknown
  all(...params: unknown[]): unknown[]
  iterate(...params: unknown[]): IterableIterator<unknown>
}

type AnyFn = (...args: never[]) => unknown

export interface Transaction<F extends AnyFn> {
  (...args: Parameters<F>): ReturnType<F>
  deferred(...args: Parameters<F>): ReturnType<F>
  immediate(...args: Parameters<F>): ReturnType<F>
  exclusive(...args: Parameters<F>): ReturnType<F>
}

const isNamed = (v: unknown): v is Row =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v)

function checkValue(v: unknown): void {
  switch (typeof v) {
    case 'number':
    case 'string':
    case 'bigint':
    case 'undefined': // binds NULL, as in libsql
      return
    case 'object':
      if (v === null || ArrayBuffer.isView(v)) return
  }
  // Anything else (booleans, objects, functions) would make libsql panic.
  throw new TypeError(`SQLite3 can only bind numbers, strings, bigints, buffers, and null (got ${typeof v})`)
}

/** better-sqlite3's argument forms: values and arrays of values, or one object of named values. */
function bindArgs(params: unknown[]): unknown[] | Row {
  if (params.length === 1 && isNamed(params[0])) {
    for (const v of Object.values(params[0])) checkValue(v)
    return params[0]
  }
  let nested = false
  for (const v of params) {
    if (Array.isArray(v)) nested = true
    else if (isNamed(v)) throw new TypeError('Named parameters (an object) must be the only argument')
    else checkValue(v)
  }
  if (!nested) return params
  const values = params.flat()
  for (const v of values) if (isNamed(v) || Array.isArray(v)) throw new TypeError('Parameters nest at most one array deep')
  for (const v of values) checkValue(v)
  return values
}

class WrappedStatement implements Statement {
  constructor(private readonly stmt: ReturnType<Libsql.Database['prepare']>) {}

  run(...params: unknown[]): RunResult {
    const { changes, lastInsertRowid } = this.stmt.run(bindArgs(params))
    return { changes, lastInsertRowid }
  }

  get(...params: unknown[]): unknown {
    const row = this.stmt.get(bindArgs(params)) as Row | undefined
    if (row) delete row._metadata
    return row
  }

  all(...params: unknown[]): unknown[] {
    return this.stmt.all(bindArgs(params))
  }

  iterate(...params: unknown[]): IterableIterator<unknown> {
    return this.stmt.iterate(bindArgs(params))
  }
}

let savepoints = 0

class Database {
  private readonly db: Libsql.Database

  constructor(file: string, opts: OpenOptions = {}) {
    this.db = new Libsql(file, { timeout: opts.timeout })
    if (opts.readonly) this.db.exec('PRAGMA query_only = ON')
  }

  get open(): boolean {
    return this.db.open
  }

  get inTransaction(): boolean {
    return this.db.inTransaction
  }

  prepare(sql: string): Statement {
    return new WrappedStatement(this.db.prepare(sql))
  }

  exec(sql: string): this {
    this.db.exec(sql)
    return this
  }

  pragma(source: string, opts: { simple?: boolean } = {}): unknown {
    const rows = this.db.prepare(`PRAGMA ${source}`).all([]) as Row[]
    if (!opts.simple) return rows
    const first = rows[0]
    return first === undefined ? undefined : Object.values(first)[0]
  }

  transaction<F extends AnyFn>(fn: F): Transaction<F> {
    const wrap =
      (begin: string) =>
      (...args: Parameters<F>): ReturnType<F> => {
        if (this.db.inTransaction) {
          // Nested: a savepoint, so an inner failure undoes only the inner work.
          const name = `nested_${++savepoints}`
          this.db.exec(`SAVEPOINT ${name}`)
          try {
            const result = fn(...args) as ReturnType<F>
            this.db.exec(`RELEASE ${name}`)
            return result
          } catch (e) {
            if (this.db.inTransaction) this.db.exec(`ROLLBACK TO ${name}; RELEASE ${name}`)
            throw e
          }
        }
        this.db.exec(begin)
        try {
          const result = fn(...args) as ReturnType<F>
          this.db.exec('COMMIT')
          return result
        } catch (e) {
          // Some errors (SQLITE_FULL, SQLITE_IOERR, …) make SQLite roll back by itself.
          if (this.db.inTransaction) this.db.exec('ROLLBACK')
          throw e
        }
      }
    return Object.assign(wrap('BEGIN'), {
      deferred: wrap('BEGIN DEFERRED'),
      immediate: wrap('BEGIN IMMEDIATE'),
      exclusive: wrap('BEGIN EXCLUSIVE'),
    })
  }

  close(): void {
    this.db.close()
  }
}

// Type names as better-sqlite3 spells them (Database.Database, Database.Statement, …), so
// callers read the same.
type Connection = Database
type Tx<F extends AnyFn> = Transaction<F>
type Stmt = Statement
// eslint-disable-next-line @typescript-eslint/no-namespace
declare namespace Database {
  export type Database = Connection
  export type Statement = Stmt
  export type Transaction<F extends AnyFn> = Tx<F>
}

export default Database
