// Atomic writes: temp file (or folder) in the same directory, fsync, rename.

import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, unlinkSync, writeFileSync, writeSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

export const TEMP_PREFIX = '.fastbioner-tmp-'

function tempSibling(path: string): string {
  return join(dirname(path), `${TEMP_PREFIX}${process.pid}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}-${basename(path)}`)
}

/**
 * Temp files and folders of the streaming writers, while they are being filled. Ctrl-C (SIGINT)
 * or SIGTERM ends a process without unwinding, so no writer's failure path runs and a
 * half-written temp (tens of MB for a large conversion) would stay behind; while one is in
 * flight, a signal that nothing else in the process handles removes them, then ends the process
 * by that signal as it would have. A command that handles the signal itself (cancelling a
 * training run) ends its writers through their failure paths, which remove the temps.
 */
const inFlight = new Set<string>()
const SIGNALS = ['SIGINT', 'SIGTERM'] as const

function onSignal(signal: NodeJS.Signals): void {
  if (process.listenerCount(signal) > 1) return
  for (const tmp of inFlight) rmSync(tmp, { recursive: true, force: true })
  inFlight.clear()
  for (const s of SIGNALS) process.off(s, onSignal)
  process.kill(process.pid, signal)
}

function track(tmp: string): void {
  if (inFlight.size === 0) for (const s of SIGNALS) process.on(s, onSignal)
  inFlight.add(tmp)
}

function untrack(tmp: string): void {
  inFlight.delete(tmp)
  if (inFlight.size === 0) for (const s of SIGNALS) process.off(s, onSignal)
}

/**
 * Writes a file atomically: the data goes to a temp file in the same directory, is fsynced, then
 * renamed over the target. A failure at any point leaves the previous file untouched and
 * removes the temp file. A hard crash can leave a temp file (named `.fastbioner-tmp-<pid>-…`)
 * but never a half-written target; see removeStaleTempFiles.
 */
export function writeFileAtomic(path: string, chunks: Iterable<Uint8Array | string>): void {
  const dir = dirname(path)
  const tmp = tempSibling(path)
  let fd: number | null = openSync(tmp, 'wx', 0o644)
  try {
    for (const chunk of chunks) {
      const b = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk
      let written = 0
      while (written < b.byteLength) written += writeSync(fd, b, written, b.byteLength - written)
    }
    fsyncSync(fd)
    closeSync(fd)
    fd = null
    renameSync(tmp, path)
  } catch (e) {
    if (fd != null) {
      try {
        closeSync(fd)
      } catch {
        // already failing
      }
    }
    try {
      unlinkSync(tmp)
    } catch {
      // never created or already gone
    }
    throw e
  }
  syncDirectory(dir)
}

/**
 * writeFileAtomic for data produced asynchronously (a streaming conversion): the chunks go to the
 * temp file as they come, so memory stays flat; the target appears only once all are written.
 * If the iterable throws (bad input found half way), the temp file is removed and the target
 * is left as it was.
 */
export async function writeFileAtomicStream(path: string, chunks: AsyncIterable<Uint8Array | string>): Promise<void> {
  const tmp = tempSibling(path)
  const handle = await open(tmp, 'wx', 0o644)
  track(tmp)
  let closed = false
  try {
    let pending: Buffer[] = []
    let pendingBytes = 0
    // Small chunks (one document each) are gathered into ~1 MiB writes.
    const drain = async (): Promise<void> => {
      if (pendingBytes === 0) return
      const b = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes)
      pending = []
      pendingBytes = 0
      let written = 0
      while (written < b.byteLength) written += (await handle.write(b, written, b.byteLength - written)).bytesWritten
    }
    for await (const chunk of chunks) {
      const b = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
      pending.push(b)
      pendingBytes += b.byteLength
      if (pendingBytes >= 1 << 20) await drain()
    }
    await drain()
    await handle.sync()
    await handle.close()
    closed = true
    renameSync(tmp, path)
  } catch (e) {
    if (!closed) await handle.close().catch(() => {})
    try {
      unlinkSync(tmp)
    } catch {
      // never created or already gone
    }
    throw e
  } finally {
    untrack(tmp)
  }
  syncDirectory(dirname(path))
}

/**
 * Writes a folder of files atomically: they go to a temp folder beside `path`, which then takes
 * its place. An existing `path` (the caller has checked it may go) is moved aside first and
 * removed only after the new folder is in place, so a failure leaves it untouched.
 */
export function writeFolderAtomic(path: string, files: Iterable<{ name: string; content: Uint8Array | string }>): void {
  const tmp = tempSibling(path)
  mkdirSync(tmp)
  try {
    // Plain writes inside: the folder as a whole is what appears atomically.
    for (const f of files) writeFileSync(join(tmp, f.name), f.content)
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true })
    throw e
  }
  publishFolder(tmp, path)
}

/**
 * writeFolderAtomic for files that come one by one (a corpus converted document by document):
 * each is written into the temporary folder as it arrives, so memory does not grow with the
 * corpus; the folder appears under `path` only once the last file is written. Returns the count.
 */
export async function writeFolderAtomicStream(path: string, files: AsyncIterable<{ name: string; content: Uint8Array | string }>): Promise<number> {
  const tmp = tempSibling(path)
  mkdirSync(tmp)
  track(tmp)
  let count = 0
  try {
    for await (const f of files) {
      writeFileSync(join(tmp, f.name), f.content)
      count++
    }
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true })
    throw e
  } finally {
    untrack(tmp)
  }
  publishFolder(tmp, path)
  return count
}

/**
 * writeFolderAtomic for a writer that wants a folder path (a checkpoint saver): `fill` writes into
 * a temporary folder beside `path`, which takes `path`'s place only once `fill` has finished; if
 * it throws, the temporary folder is removed and `path` is left as it was.
 */
export async function populateFolderAtomic(path: string, fill: (dir: string) => Promise<void>): Promise<void> {
  const tmp = tempSibling(path)
  mkdirSync(tmp)
  try {
    await fill(tmp)
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true })
    throw e
  }
  publishFolder(tmp, path)
}

/** Moves the finished temporary folder to `path`, replacing what is there only once it is complete. */
function publishFolder(tmp: string, path: string): void {
  let old: string | undefined
  try {
    try {
      renameSync(tmp, path)
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'EPERM' && code !== 'EISDIR') throw e
      old = tempSibling(path)
      renameSync(path, old)
      renameSync(tmp, path)
    }
  } catch (e) {
    if (old !== undefined) {
      try {
        renameSync(old, path)
      } catch {
        // leave it where it is rather than lose it
      }
    }
    rmSync(tmp, { recursive: true, force: true })
    throw e
  }
  if (old !== undefined) rmSync(old, { recursive: true, force: true })
  syncDirectory(dirname(path))
}

function syncDirectory(dir: string): void {
  // Make the rename itself durable (POSIX; directories cannot be opened for fsync on Windows).
  if (process.platform !== 'win32') {
    try {
      const dfd = openSync(dir, 'r')
      try {
        fsyncSync(dfd)
      } finally {
        closeSync(dfd)
      }
    } catch {
      // best effort
    }
  }
}

/** Removes temp files left in `dir` by writers that crashed (their process no longer exists). */
export function removeStaleTempFiles(dir: string): string[] {
  const removed: string[] = []
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return removed
  }
  for (const name of names) {
    if (!name.startsWith(TEMP_PREFIX)) continue
    const pid = Number(name.slice(TEMP_PREFIX.length).split('-')[0])
    if (Number.isInteger(pid) && pid !== process.pid && processAlive(pid)) continue
    if (pid === process.pid) continue
    try {
      unlinkSync(join(dir, name))
      removed.push(name)
    } catch {
      // raced with another cleaner
    }
  }
  return removed
}

/** True when a process with this id exists (EPERM: it exists, owned by another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}
