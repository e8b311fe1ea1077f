// Atomic file writes for checkpoints: temp file in the same directory, fsync, rename.

import { closeSync, fsyncSync, openSync, readdirSync, renameSync, unlinkSync, writeSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'

export const TEMP_PREFIX = '.fastbioner-tmp-'

/**
 * Writes a file atomically: the data goes to a temp file in the same directory, is fsynced, then
 * renamed over the target. A failure at any point leaves the previous file untouched and
 * removes the temp file. A hard crash can leave a temp file (named `.fastbioner-tmp-<pid>-…`)
 * but never a half-written target; see removeStaleTempFiles.
 */
export function writeFileAtomic(path: string, chunks: Iterable<Uint8Array | string>): void {
  const dir = dirname(path)
  const tmp = join(dir, `${TEMP_PREFIX}${process.pid}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}-${basename(path)}`)
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

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}
