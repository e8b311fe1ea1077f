// One owner per workspace: `<workspace>.lock` beside the database, created with O_EXCL when the
// workspace opens and removed when it closes. It records who holds it (process id, host, the
// process's start time, user, app) so that a second app instance — another install, another
// user-data folder, the same app twice — is refused with a message naming the holder, and a lock
// left by a crash is recognised as stale: same host, and that process id is gone or now belongs
// to a process started at another time (the id was reused).
// Hand-written rather than proper-lockfile: that library judges staleness by an mtime refreshed
// on a timer and records no owner, so it can neither say who holds a workspace nor tell a crashed
// holder from a slow one without waiting.
// On a network share (NFS, SMB) O_EXCL creation is honoured by current servers, but a lock from
// another host cannot be checked from here: it is never taken over silently, only when the user
// says so (takeOver). SQLite's own locking (and WAL's shared memory) is unreliable there anyway.
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { hostname, userInfo } from 'node:os'
import { randomUUID } from 'node:crypto'
import { processAlive } from '../fs/atomic'
import { StoreError, WorkspaceOpenError } from './errors'

export const LOCK_SUFFIX = '.lock'

/** What a lock file records about its holder. */
export interface LockOwner {
  pid: number
  host: string
  /** The holder process's start time (ms since the epoch); null where it cannot be read. */
  started: number | null
  user: string
  /** When the lock was taken (ISO). */
  since: string
  /** Unique per acquisition: a lock is released only by the acquisition that wrote it. */
  token: string
}

/** A refusal to open a workspace because another instance holds it. */
export class WorkspaceLockedError extends WorkspaceOpenError {
  constructor(
    readonly lockPath: string,
    readonly owner: LockOwner | null,
    canTakeOver: boolean,
  ) {
    super('locked', lockedMessage(lockPath, owner, canTakeOver), canTakeOver)
  }
}

function lockedMessage(lockPath: string, o: LockOwner | null, canTakeOver: boolean): string {
  const ws = lockPath.slice(0, -LOCK_SUFFIX.length)
  if (!o) return `${ws} is being opened by another FastBioNER instance (${lockPath} is being written); try again in a moment`
  const who = `${o.user} on ${o.host} (process ${o.pid}, since ${o.since})`
  return canTakeOver
    ? `${ws} is in use by FastBioNER of ${who}. If that computer no longer uses it (it crashed or lost the share), take over the workspace; otherwise close it there first.`
    : `${ws} is open in another FastBioNER window or instance: ${who}. Close it there first, or open another workspace.`
}

/** Start time (ms since the epoch) of process `pid` where the OS tells it (Linux /proc); else null. */
export function processStartTime(pid: number): number | null {
  if (process.platform !== 'linux') return null
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Field 22 (starttime, clock ticks since boot); the command name (field 2) may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ticks = Number(fields[19])
    const btime = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1])
    if (!Number.isFinite(ticks) || !Number.isFinite(btime)) return null
    // USER_HZ is 100 on every Linux Node supports.
    return btime * 1000 + ticks * 10
  } catch {
    return null
  }
}

/** Stale: taken on this host by a process that no longer runs (or whose id now names another process). */
export function isStale(o: LockOwner): boolean {
  if (o.host !== hostname()) return false
  if (!processAlive(o.pid)) return true
  if (o.started === null) return false
  const now = processStartTime(o.pid)
  return now !== null && Math.abs(now - o.started) > 1000
}

function readOwner(path: string): LockOwner | null {
  try {
    const o = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockOwner>
    if (typeof o.pid === 'number' && typeof o.host === 'string' && typeof o.token === 'string') {
      return { pid: o.pid, host: o.host, started: typeof o.started === 'number' ? o.started : null, user: String(o.user ?? '?'), since: String(o.since ?? '?'), token: o.token }
    }
  } catch {
    // unreadable or half-written: judged by age below
  }
  return null
}

/** A lock file that does not parse: half-written by a holder that is still writing it, or left by a crash. */
function unparsedIsOld(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs > 10_000
  } catch {
    return true
  }
}

export class WorkspaceLock {
  private released = false

  private constructor(
    readonly path: string,
    readonly owner: LockOwner,
  ) {}

  /**
   * Takes the lock of workspace file `file`. A stale lock is taken over; a lock of another host is
   * taken over only with `takeOver`. Throws WorkspaceLockedError when another instance holds it.
   */
  static acquire(file: string, opts: { takeOver?: boolean; user?: string } = {}): WorkspaceLock {
    const path = file + LOCK_SUFFIX
    const owner: LockOwner = {
      pid: process.pid,
      host: hostname(),
      started: processStartTime(process.pid),
      user: opts.user ?? safeUser(),
      since: new Date().toISOString(),
      token: randomUUID(),
    }
    const body = `${JSON.stringify(owner, null, 2)}\n`
    for (let attempt = 0; attempt < 3; attempt++) {
      if (tryCreate(path, body)) return new WorkspaceLock(path, owner)
      const held = readOwner(path)
      const stale = held ? isStale(held) : unparsedIsOld(path)
      const otherHost = held !== null && held.host !== owner.host
      if (!stale && !(otherHost && opts.takeOver)) throw new WorkspaceLockedError(path, held, otherHost)
      removeIfUnchanged(path, held)
    }
    throw new WorkspaceLockedError(path, readOwner(path), false)
  }

  /** True while the lock file on disk is still this acquisition's (nobody took it over). */
  get held(): boolean {
    return !this.released && readOwner(this.path)?.token === this.owner.token
  }

  /** Removes the lock file if it is still ours. */
  release(): void {
    if (this.released) return
    this.released = true
    if (readOwner(this.path)?.token !== this.owner.token) return
    try {
      unlinkSync(this.path)
    } catch {
      // gone already
    }
  }
}

function safeUser(): string {
  try {
    return userInfo().username
  } catch {
    return 'unknown'
  }
}

function tryCreate(path: string, body: string): boolean {
  let fd: number
  try {
    fd = openSync(path, 'wx', 0o644)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw new StoreError('invalid_request', `Cannot create the workspace lock ${path}: ${(e as Error).message}`)
  }
  try {
    writeSync(fd, body)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  return true
}

/**
 * Moves a stale lock aside, then checks that what was moved is the lock judged stale: two
 * instances taking over at once must not remove each other's fresh lock. False when it was not
 * (it is put back if nothing took its place).
 */
function removeIfUnchanged(path: string, judged: LockOwner | null): boolean {
  const aside = `${path}.stale-${process.pid}-${randomUUID()}`
  try {
    renameSync(path, aside)
  } catch {
    return false // removed by someone else meanwhile: try to create again
  }
  const moved = readOwner(aside)
  if ((moved?.token ?? null) === (judged?.token ?? null)) {
    unlinkSync(aside)
    return true
  }
  try {
    linkSync(aside, path)
  } catch {
    // a newer lock is in place already
  }
  unlinkSync(aside)
  return false
}
