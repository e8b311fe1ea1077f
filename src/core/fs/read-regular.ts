// Reading a file a user handed us (a model folder's weights, JSON, vocabulary) without trusting
// what its name points at: it must be a regular file (a FIFO would block, /dev/zero or
// /dev/urandom would never end), and it is read by the size fstat gives, up to a cap.

import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs'

function kind(st: Stats): string {
  if (st.isDirectory()) return 'a folder'
  if (st.isFIFO()) return 'a FIFO (named pipe)'
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device'
  if (st.isSocket()) return 'a socket'
  return 'not a regular file'
}

/**
 * Opens `path` for reading if it is a regular file, non-blocking so that a FIFO is refused
 * instead of waiting for a writer; the caller closes the descriptor. Problems become
 * makeError(path, problem).
 */
export function openRegularFile(path: string, makeError: (file: string, problem: string) => Error): { fd: number; size: number } {
  let fd: number
  try {
    // O_NONBLOCK is undefined on Windows, which has no FIFOs in the file system.
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0))
  } catch (e) {
    throw makeError(path, `cannot open (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`)
  }
  const st = fstatSync(fd)
  if (!st.isFile()) {
    closeSync(fd)
    throw makeError(path, `is ${kind(st)}, not a regular file`)
  }
  return { fd, size: st.size }
}

/** The whole content of `path`, which must be a regular file (see openRegularFile) of at most maxBytes, read by its fstat size. */
export function readRegularFile(path: string, maxBytes: number, makeError: (file: string, problem: string) => Error): Buffer {
  const { fd, size } = openRegularFile(path, makeError)
  try {
    if (size > maxBytes) throw makeError(path, `is ${size} bytes, more than the ${maxBytes} accepted here`)
    const buf = Buffer.allocUnsafe(size)
    let got = 0
    while (got < size) {
      const n = readSync(fd, buf, got, size - got, got)
      if (n === 0) break
      got += n
    }
    if (got < size) throw makeError(path, `shrank from ${size} to ${got} bytes while being read`)
    return buf
  } finally {
    closeSync(fd)
  }
}
