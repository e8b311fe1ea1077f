// The entries of a zip archive held in memory, as torch.save (since PyTorch 1.6) writes it:
// central directory → local headers → data, ZIP64 when an archive or entry passes 4 GiB.
// Entries are stored (torch writes them so, aligned, for mmap) or deflated (an archive re-packed
// by a zip tool); a stored entry is handed out as a view of the file, without a copy.
//
// Every size and offset comes from the file, so each is checked against the file before use; an
// entry's CRC-32 is checked when it is read; inflating is bounded by the size the directory
// states, itself bounded by deflate's largest ratio, so no header can make us allocate more than
// the file can hold. Errors are ZipFormatError (the caller adds the file name).

import { crc32, inflateRawSync } from 'node:zlib'

export class ZipFormatError extends Error {
  override name = 'ZipFormatError'
}

export interface ZipEntry {
  name: string
  method: number
  crc: number
  compressedSize: number
  size: number
  /** Offset of the entry's data (past its local header). */
  dataStart: number
}

const EOCD = 0x06054b50
const ZIP64_LOCATOR = 0x07064b50
const ZIP64_EOCD = 0x06064b50
const CENTRAL = 0x02014b50
const LOCAL = 0x04034b50
const STORED = 0
const DEFLATED = 8
/** Deflate cannot expand more than about 1032:1. */
const MAX_DEFLATE_RATIO = 1032
const MAX_ENTRIES = 1_000_000

/** True when the bytes start like a zip archive (a local header or an empty archive's end record). */
export function looksLikeZip(buf: Uint8Array): boolean {
  return buf.byteLength >= 4 && buf[0] === 0x50 && buf[1] === 0x4b && ((buf[2] === 3 && buf[3] === 4) || (buf[2] === 5 && buf[3] === 6))
}

export class ZipEntries {
  readonly entries = new Map<string, ZipEntry>()
  private readonly dv: DataView

  constructor(private readonly buf: Uint8Array) {
    this.dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
    this.readDirectory()
  }

  private u16(at: number): number {
    return this.dv.getUint16(at, true)
  }
  private u32(at: number): number {
    return this.dv.getUint32(at, true)
  }
  private u64(at: number, what: string): number {
    const v = this.dv.getBigUint64(at, true)
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new ZipFormatError(`${what} ${v} is implausible`)
    return Number(v)
  }
  private need(at: number, len: number, what: string): void {
    if (at < 0 || len < 0 || at + len > this.buf.byteLength) throw new ZipFormatError(`${what} at byte ${at} runs past the end of the file (${this.buf.byteLength} bytes; truncated?)`)
  }

  private readDirectory(): void {
    const len = this.buf.byteLength
    // The end record is the last 22 bytes plus a comment of at most 65535 bytes.
    let eocd = -1
    for (let at = len - 22; at >= Math.max(0, len - 22 - 0xffff); at--) {
      if (this.u32(at) === EOCD && at + 22 + this.u16(at + 20) === len) {
        eocd = at
        break
      }
    }
    if (eocd < 0) throw new ZipFormatError('no zip end-of-central-directory record (truncated or not a zip archive)')
    let count = this.u16(eocd + 10)
    let cdSize = this.u32(eocd + 12)
    let cdOffset = this.u32(eocd + 16)
    if (eocd >= 20 && this.u32(eocd - 20) === ZIP64_LOCATOR) {
      const at = this.u64(eocd - 20 + 8, 'ZIP64 end record offset')
      this.need(at, 56, 'ZIP64 end record')
      if (this.u32(at) !== ZIP64_EOCD) throw new ZipFormatError(`no ZIP64 end record at byte ${at}`)
      count = this.u64(at + 32, 'entry count')
      cdSize = this.u64(at + 40, 'central directory size')
      cdOffset = this.u64(at + 48, 'central directory offset')
    }
    this.need(cdOffset, cdSize, 'central directory')
    if (count > MAX_ENTRIES || count * 46 > cdSize) throw new ZipFormatError(`${count} entries cannot fit a central directory of ${cdSize} bytes`)
    let at = cdOffset
    const end = cdOffset + cdSize
    const names = new TextDecoder('utf-8', { fatal: false })
    for (let i = 0; i < count; i++) {
      if (at + 46 > end) throw new ZipFormatError(`central directory entry ${i + 1} runs past the directory's end`)
      if (this.u32(at) !== CENTRAL) throw new ZipFormatError(`central directory entry ${i + 1} at byte ${at} has a bad signature`)
      const flags = this.u16(at + 8)
      const method = this.u16(at + 10)
      const crc = this.u32(at + 16)
      let compressedSize = this.u32(at + 20)
      let size = this.u32(at + 24)
      const nameLen = this.u16(at + 28)
      const extraLen = this.u16(at + 30)
      const commentLen = this.u16(at + 32)
      let localOffset = this.u32(at + 42)
      if (at + 46 + nameLen + extraLen + commentLen > end) throw new ZipFormatError(`central directory entry ${i + 1} runs past the directory's end`)
      const name = names.decode(this.buf.subarray(at + 46, at + 46 + nameLen))
      // ZIP64 extra field: 64-bit values for exactly those fields that hold 0xFFFFFFFF, in order.
      for (let x = at + 46 + nameLen; x + 4 <= at + 46 + nameLen + extraLen; ) {
        const id = this.u16(x)
        const xlen = this.u16(x + 2)
        if (x + 4 + xlen > at + 46 + nameLen + extraLen) throw new ZipFormatError(`${name}: extra field runs past its entry`)
        if (id === 1) {
          let p = x + 4
          const take = (what: string): number => {
            if (p + 8 > x + 4 + xlen) throw new ZipFormatError(`${name}: ZIP64 extra field too short for the ${what}`)
            const v = this.u64(p, `${name}: ${what}`)
            p += 8
            return v
          }
          if (size === 0xffffffff) size = take('size')
          if (compressedSize === 0xffffffff) compressedSize = take('compressed size')
          if (localOffset === 0xffffffff) localOffset = take('local header offset')
        }
        x += 4 + xlen
      }
      at += 46 + nameLen + extraLen + commentLen
      if (flags & 1) throw new ZipFormatError(`${name}: encrypted entries are not supported`)
      if (method !== STORED && method !== DEFLATED) throw new ZipFormatError(`${name}: compression method ${method} is not supported (stored or deflate only)`)
      if (method === STORED && compressedSize !== size) throw new ZipFormatError(`${name}: stored entry has compressed size ${compressedSize} but size ${size}`)
      if (method === DEFLATED && size > compressedSize * MAX_DEFLATE_RATIO + 64) {
        throw new ZipFormatError(`${name}: states ${size} bytes from ${compressedSize} compressed, more than deflate can produce`)
      }
      this.need(localOffset, 30, `${name}: local header`)
      if (this.u32(localOffset) !== LOCAL) throw new ZipFormatError(`${name}: no local header at byte ${localOffset}`)
      const dataStart = localOffset + 30 + this.u16(localOffset + 26) + this.u16(localOffset + 28)
      this.need(dataStart, compressedSize, `${name}: data`)
      if (this.entries.has(name)) throw new ZipFormatError(`${name}: appears twice in the archive`)
      this.entries.set(name, { name, method, crc, compressedSize, size, dataStart })
    }
  }

  /** The entry's bytes, CRC-checked: a view of the file for stored entries, inflated otherwise. */
  read(name: string): Uint8Array {
    const e = this.entries.get(name)
    if (!e) throw new ZipFormatError(`${name}: not in the archive`)
    const raw = this.buf.subarray(e.dataStart, e.dataStart + e.compressedSize)
    let data: Uint8Array
    if (e.method === STORED) data = raw
    else {
      try {
        data = inflateRawSync(raw, { maxOutputLength: Math.max(1, e.size) })
      } catch (err) {
        throw new ZipFormatError(`${name}: cannot inflate (${(err as Error).message})`)
      }
      if (data.byteLength !== e.size) throw new ZipFormatError(`${name}: inflates to ${data.byteLength} bytes, the directory says ${e.size}`)
    }
    const crc = crc32(data)
    if (crc !== e.crc) throw new ZipFormatError(`${name}: CRC-32 mismatch (stored ${e.crc.toString(16)}, computed ${crc.toString(16)}; corrupt file)`)
    return data
  }
}
