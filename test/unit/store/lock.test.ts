// One owner per workspace (store/lock.ts): the lock taken at open and released at close, a
// second opener refused with the holder named, stale locks (dead process, reused process id,
// half-written file left long ago) taken over, another host's lock only when the user says so;
// and the other reasons a workspace cannot be opened, damage found by quick_check among them.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { LOCK_SUFFIX, Workspace, WorkspaceOpenError, type LockOwner } from '@core/store'
import { processStartTime } from '../../../src/core/store/lock'
import Database from '@core/store/sqlite'
import { tempDir } from './helpers'

function openError(path: string, opts: { takeOver?: boolean } = {}): WorkspaceOpenError {
  try {
    Workspace.open(path, { user: 'second', ...opts }).close()
  } catch (e) {
    expect(e).toBeInstanceOf(WorkspaceOpenError)
    return e as WorkspaceOpenError
  }
  throw new Error('the workspace opened')
}

function writeLock(path: string, o: Partial<LockOwner>): void {
  const owner: LockOwner = { pid: process.pid, host: hostname(), started: processStartTime(process.pid), user: 'someone', since: '2024-01-01T00:00:00.000Z', token: 'old', ...o }
  writeFileSync(path + LOCK_SUFFIX, JSON.stringify(owner))
}

/** The id of a process that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' })
  return Number(r.stdout)
}

describe('workspace lock', () => {
  it('is taken at open and released at close; a second opener is refused with the holder named', () => {
    const { dir, cleanup } = tempDir()
    try {
      const path = join(dir, 'ws.sqlite')
      const first = Workspace.open(path, { user: 'first' })
      expect(first.ownsLock).toBe(true)
      const lock = JSON.parse(readFileSync(path + LOCK_SUFFIX, 'utf8')) as LockOwner
      expect(lock).toMatchObject({ pid: process.pid, host: hostname(), user: 'first' })
      const err = openError(path)
      expect(err.reason).toBe('locked')
      expect(err.code).toBe('conflict')
      expect(err.canTakeOver).toBe(false)
      expect(err.message).toContain(`process ${process.pid}`)
      expect(err.message).toMatch(/open in another FastBioNER/)
      // Even "take over" does not take a workspace from a live process on this host.
      expect(openError(path, { takeOver: true }).reason).toBe('locked')
      expect(first.ownsLock).toBe(true)
      first.close()
      expect(existsSync(path + LOCK_SUFFIX)).toBe(false)
      const again = Workspace.open(path, { user: 'second' })
      expect(again.ownsLock).toBe(true)
      again.close()
    } finally {
      cleanup()
    }
  })

  it('takes over a lock left by a process that is gone, or whose id now names another process', () => {
    const { dir, cleanup } = tempDir()
    try {
      const path = join(dir, 'ws.sqlite')
      writeLock(path, { pid: deadPid() })
      const ws = Workspace.open(path)
      expect(ws.ownsLock).toBe(true)
      ws.close()
      if (processStartTime(process.pid) !== null) {
        // Our own id, but recorded with another start time: a crashed holder whose id was reused.
        writeLock(path, { started: processStartTime(process.pid)! - 3_600_000 })
        const reused = Workspace.open(path)
        expect(reused.ownsLock).toBe(true)
        reused.close()
      }
    } finally {
      cleanup()
    }
  })

  it('refuses a lock of another host unless the user takes over; the old holder then no longer owns it', () => {
    const { dir, cleanup } = tempDir()
    try {
      const path = join(dir, 'ws.sqlite')
      writeLock(path, { host: 'other-machine.example', pid: 4242 })
      const err = openError(path)
      expect(err.reason).toBe('locked')
      expect(err.canTakeOver).toBe(true)
      expect(err.message).toMatch(/someone on other-machine\.example/)
      const ws = Workspace.open(path, { takeOver: true })
      expect(ws.ownsLock).toBe(true)
      // Taken over again from here by another host: this instance must notice and keep its hands off.
      writeLock(path, { host: 'other-machine.example', token: 'theirs' })
      expect(ws.ownsLock).toBe(false)
      ws.close()
      // Closing does not remove the new holder's lock.
      expect((JSON.parse(readFileSync(path + LOCK_SUFFIX, 'utf8')) as LockOwner).token).toBe('theirs')
    } finally {
      cleanup()
    }
  })

  it('waits for a lock file being written; takes over one left half-written long ago', () => {
    const { dir, cleanup } = tempDir()
    try {
      const path = join(dir, 'ws.sqlite')
      writeFileSync(path + LOCK_SUFFIX, '')
      expect(openError(path).message).toMatch(/being opened by another FastBioNER instance/)
      const old = new Date(Date.now() - 60_000)
      utimesSync(path + LOCK_SUFFIX, old, old)
      const ws = Workspace.open(path)
      expect(ws.ownsLock).toBe(true)
      ws.close()
    } finally {
      cleanup()
    }
  })

  it('says why a workspace cannot be opened and leaves no lock behind', () => {
    const { dir, cleanup } = tempDir()
    try {
      const path = join(dir, 'bad.sqlite')
      writeFileSync(path, 'this is not sqlite, just text that is long enough to look like a header '.repeat(20))
      expect(openError(path).reason).toBe('corrupt')
      expect(existsSync(path + LOCK_SUFFIX)).toBe(false)
      writeFileSync(join(dir, 'file'), 'x')
      expect(openError(join(dir, 'file', 'ws.sqlite')).reason).toBe('missing')
    } finally {
      cleanup()
    }
  })
})

describe('damage found at open (issue 31 F12)', () => {
  it('refuses a workspace damaged mid-file with the reason, instead of failing at the first query that reaches it', async () => {
    const { dir, cleanup } = tempDir()
    try {
      const path = join(dir, 'ws.sqlite')
      const ws = Workspace.open(path)
      const text = 'Cystic fibrosis in siblings treated with aspirin. '.repeat(40)
      await ws.importDocuments(
        Array.from({ length: 300 }, (_, i) => ({ id: `d${i}`, text, passages: [{ type: 'abstract', offset: 0, length: text.length }], mentions: [] })),
        'big',
      )
      ws.close()
      // Everything into the main file (no WAL left), then overwrite most of one page in the middle
      // of the file (page size 4096), leaving the header intact.
      const db = new Database(path)
      db.pragma('wal_checkpoint(TRUNCATE)')
      db.close()
      const bytes = readFileSync(path)
      const page = Math.floor(bytes.length / 4096 / 2)
      expect(page).toBeGreaterThan(10)
      bytes.fill(0xa5, page * 4096 + 8, page * 4096 + 4000)
      writeFileSync(path, bytes)
      const err = openError(path)
      expect(err.reason).toBe('corrupt')
      expect(err.message).toMatch(new RegExp(`Cannot open workspace ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*(damaged|malformed)`))
      expect(existsSync(path + LOCK_SUFFIX)).toBe(false)
    } finally {
      cleanup()
    }
  })
})
