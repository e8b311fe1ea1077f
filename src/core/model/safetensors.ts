// Reader/writer for the safetensors format (https://github.com/huggingface/safetensors):
//   [u64 LE header length N][N bytes of JSON header][data buffer]
//   header: { "__metadata__"?: {string: string}, "<name>": {dtype, shape, data_offsets: [begin, end]} }
//   offsets are relative to the data buffer, must not overlap and must cover it exactly.
//
// Written by hand: npm has no maintained package that reads and writes local safetensors files
// (@huggingface/hub only parses headers of files on the Hub, over HTTP), and the format is a
// page of spec. Half floats: F16 through ./f16, BF16 here (float16 packages lack it).
//
// The readers by path (SafetensorsReader.open aside) also read PyTorch's pytorch_model.bin
// (torch.save's zip format, weights only, through ./torch-checkpoint): every path
// findWeightFiles gives is read here, so each tool that opens a model folder accepts both.
// Files are read as regular files by their fstat size, with a cap (../fs/read-regular).

import { closeSync, readSync } from 'node:fs'
import { constants as bufferConstants } from 'node:buffer'
import { endianness } from 'node:os'
import { writeFileAtomic } from '../fs/atomic'
import { openRegularFile, readRegularFile } from '../fs/read-regular'
import { fromHalf, toHalf } from './f16'
import { TorchCheckpointReader } from './torch-checkpoint'
import { SafetensorsError } from './weight-file-error'

export { SafetensorsError }

export type SafetensorsDtype = 'F64' | 'F32' | 'F16' | 'BF16' | 'I64' | 'I32' | 'I16' | 'I8' | 'U8' | 'BOOL'

const BYTES: Record<SafetensorsDtype, number> = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 }

/** A tensor as read: floats become Float32Array, integers Int32Array. `dtype` is the stored one. */
export interface StoredTensor {
  dtype: SafetensorsDtype
  shape: number[]
  data: Float32Array | Int32Array
}

export interface SafetensorsContents {
  tensors: Map<string, StoredTensor>
  metadata: Record<string, string>
}

/** A tensor to write; Float32Array → F32 unless dtype says F16/BF16, Int32Array → I32 or I64, Int8Array → I8. */
export interface TensorToWrite {
  shape: number[]
  data: Float32Array | Int32Array | Int8Array
  dtype?: 'F32' | 'F16' | 'BF16' | 'I32' | 'I64' | 'I8'
}

/** A tensor to write as it is stored: little-endian bytes of `dtype`, row-major (a conversion keeps fp16/bf16 bits). */
export interface RawTensorToWrite {
  shape: number[]
  dtype: SafetensorsDtype
  bytes: Uint8Array
}

/** One weight file, lazily decoded: a safetensors file or a pytorch_model.bin. */
export interface WeightFileReader {
  readonly file: string
  readonly metadata: Record<string, string>
  names(): string[]
  info(name: string): { dtype: SafetensorsDtype; shape: number[] } | undefined
  read(name: string): StoredTensor
  /** The stored bytes, contiguous, for writing elsewhere without a float round trip. */
  raw(name: string): RawTensorToWrite
}

/** The largest weight file read: what one Buffer can hold. Shard anything bigger. */
const MAX_WEIGHT_FILE = bufferConstants.MAX_LENGTH

/** A weight file's bytes: a regular file, read by its size (no FIFO, no device, no endless file). */
export function readWeightFileBytes(path: string): Buffer {
  return readRegularFile(path, MAX_WEIGHT_FILE, (file, problem) => new SafetensorsError(file, problem))
}

/** PyTorch's weight files (pytorch_model.bin, its shards) go through ./torch-checkpoint. */
export function isTorchWeightFile(path: string): boolean {
  return /\.bin$/i.test(path)
}

// Hard limit from the reference implementation (100 MB of header) against hostile files.
const MAX_HEADER = 100_000_000

if (endianness() !== 'LE') {
  // Typed-array views below assume the file's little-endian layout is the host's.
  throw new Error('safetensors: big-endian hosts are not supported')
}

interface HeaderEntry {
  dtype: SafetensorsDtype
  shape: number[]
  data_offsets: [number, number]
}

/** Parses and validates only the header; `dataStart` is the byte offset of the data buffer. */
export function parseSafetensorsHeader(
  buf: Uint8Array,
  file = '<buffer>',
): { entries: Map<string, HeaderEntry>; metadata: Record<string, string>; dataStart: number } {
  if (buf.byteLength < 8) throw new SafetensorsError(file, `not a safetensors file: ${buf.byteLength} bytes, shorter than the 8-byte header length`)
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
  const n = dv.getBigUint64(0, true)
  if (n > BigInt(MAX_HEADER)) throw new SafetensorsError(file, `header length ${n} is implausible (corrupt file?)`)
  const headerLen = Number(n)
  if (8 + headerLen > buf.byteLength) {
    throw new SafetensorsError(file, `header length ${headerLen} runs past the end of the file (${buf.byteLength} bytes; truncated or corrupt)`)
  }
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(buf.subarray(8, 8 + headerLen))
  } catch {
    throw new SafetensorsError(file, 'header is not valid UTF-8 (corrupt file?)')
  }
  let header: unknown
  try {
    header = JSON.parse(text)
  } catch (e) {
    throw new SafetensorsError(file, `header is not valid JSON (${(e as Error).message})`)
  }
  if (header == null || typeof header !== 'object' || Array.isArray(header)) throw new SafetensorsError(file, 'header is not a JSON object')
  const dataStart = 8 + headerLen
  const dataLen = buf.byteLength - dataStart
  const entries = new Map<string, HeaderEntry>()
  let metadata: Record<string, string> = {}
  for (const [name, raw] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (raw == null || typeof raw !== 'object' || Array.isArray(raw)) throw new SafetensorsError(file, '__metadata__ is not an object')
      for (const [k, v] of Object.entries(raw)) {
        if (typeof v !== 'string') throw new SafetensorsError(file, `__metadata__.${k} is not a string`)
      }
      metadata = raw as Record<string, string>
      continue
    }
    const e = raw as Partial<HeaderEntry>
    if (e == null || typeof e !== 'object') throw new SafetensorsError(file, `tensor ${name}: entry is not an object`)
    if (typeof e.dtype !== 'string' || !(e.dtype in BYTES)) {
      throw new SafetensorsError(file, `tensor ${name}: dtype ${JSON.stringify(e.dtype)} is not supported (F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL)`)
    }
    if (!Array.isArray(e.shape) || !e.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw new SafetensorsError(file, `tensor ${name}: shape ${JSON.stringify(e.shape)} is not a list of non-negative integers`)
    }
    const off = e.data_offsets
    if (!Array.isArray(off) || off.length !== 2 || !off.every((o) => Number.isSafeInteger(o) && o >= 0) || off[1] < off[0]) {
      throw new SafetensorsError(file, `tensor ${name}: data_offsets ${JSON.stringify(off)} are invalid`)
    }
    const count = e.shape.reduce((a, b) => a * b, 1)
    const expected = count * BYTES[e.dtype]
    if (off[1] - off[0] !== expected) {
      throw new SafetensorsError(file, `tensor ${name}: data_offsets [${off}] span ${off[1] - off[0]} bytes, but ${e.dtype}[${e.shape}] needs ${expected}`)
    }
    if (off[1] > dataLen) {
      throw new SafetensorsError(file, `tensor ${name}: data_offsets [${off}] run past the end of the data (${dataLen} bytes; truncated file?)`)
    }
    entries.set(name, { dtype: e.dtype, shape: e.shape, data_offsets: [off[0], off[1]] })
  }
  // Offsets must tile the data buffer: no overlap, no gap, nothing unaccounted for at the end.
  const spans = [...entries].map(([name, e]) => ({ name, begin: e.data_offsets[0], end: e.data_offsets[1] })).sort((a, b) => a.begin - b.begin || a.end - b.end)
  let pos = 0
  for (const s of spans) {
    if (s.begin < pos) throw new SafetensorsError(file, `tensor ${s.name}: data_offsets [${s.begin}, ${s.end}] overlap the previous tensor`)
    if (s.begin > pos) throw new SafetensorsError(file, `tensor ${s.name}: ${s.begin - pos} bytes of unaccounted data before it`)
    pos = s.end
  }
  if (pos !== dataLen) throw new SafetensorsError(file, `data buffer is ${dataLen} bytes but the tensors cover ${pos} (corrupt or truncated file)`)
  return { entries, metadata, dataStart }
}

/** Tensor names from a file's header alone (8-byte length + JSON), without reading the weights. */
export function readSafetensorsNames(path: string): string[] {
  // A pickle has no header to read alone; the file is read whole (weights stay undecoded).
  if (isTorchWeightFile(path)) return openWeightFile(path).names()
  const { fd } = openRegularFile(path, (file, problem) => new SafetensorsError(file, problem))
  try {
    const lead = Buffer.alloc(8)
    if (readSync(fd, lead, 0, 8, 0) < 8) throw new SafetensorsError(path, 'not a safetensors file: shorter than the 8-byte header length')
    const n = lead.readBigUInt64LE(0)
    if (n > BigInt(MAX_HEADER)) throw new SafetensorsError(path, `header length ${n} is implausible (corrupt file?)`)
    const header = Buffer.alloc(Number(n))
    if (readSync(fd, header, 0, header.length, 8) < header.length) throw new SafetensorsError(path, `header length ${n} runs past the end of the file (truncated or corrupt)`)
    let parsed: unknown
    try {
      parsed = JSON.parse(header.toString('utf8'))
    } catch (e) {
      throw new SafetensorsError(path, `header is not valid JSON (${(e as Error).message})`)
    }
    if (parsed == null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new SafetensorsError(path, 'header is not a JSON object')
    return Object.keys(parsed).filter((k) => k !== '__metadata__')
  } finally {
    closeSync(fd)
  }
}

/**
 * A validated file held in memory whose tensors are decoded one at a time, so that loading a
 * BERT-base checkpoint (440 MB) does not also hold a decoded copy of every tensor at once.
 */
export class SafetensorsReader implements WeightFileReader {
  readonly metadata: Record<string, string>
  private readonly entries: Map<string, HeaderEntry>
  private readonly dataStart: number

  constructor(
    private readonly buf: Uint8Array,
    readonly file = '<buffer>',
  ) {
    const h = parseSafetensorsHeader(buf, file)
    this.entries = h.entries
    this.metadata = h.metadata
    this.dataStart = h.dataStart
  }

  static open(path: string): SafetensorsReader {
    return new SafetensorsReader(readWeightFileBytes(path), path)
  }

  names(): string[] {
    return [...this.entries.keys()]
  }

  info(name: string): { dtype: SafetensorsDtype; shape: number[] } | undefined {
    const e = this.entries.get(name)
    return e && { dtype: e.dtype, shape: [...e.shape] }
  }

  read(name: string): StoredTensor {
    const e = this.entries.get(name)
    if (!e) throw new SafetensorsError(this.file, `no tensor named ${name}`)
    const bytes = this.buf.subarray(this.dataStart + e.data_offsets[0], this.dataStart + e.data_offsets[1])
    try {
      return { dtype: e.dtype, shape: [...e.shape], data: decode(e.dtype, bytes) }
    } catch (err) {
      throw new SafetensorsError(this.file, `tensor ${name}: ${(err as Error).message}`)
    }
  }

  raw(name: string): RawTensorToWrite {
    const e = this.entries.get(name)
    if (!e) throw new SafetensorsError(this.file, `no tensor named ${name}`)
    return { dtype: e.dtype, shape: [...e.shape], bytes: this.buf.subarray(this.dataStart + e.data_offsets[0], this.dataStart + e.data_offsets[1]) }
  }
}

/** A pytorch_model.bin seen as a weight file (./torch-checkpoint reads it, weights only). */
class TorchWeightFileReader implements WeightFileReader {
  readonly metadata: Record<string, string> = { format: 'pt' }
  private readonly torch: TorchCheckpointReader

  constructor(
    buf: Uint8Array,
    readonly file: string,
  ) {
    this.torch = new TorchCheckpointReader(buf, file)
  }

  names(): string[] {
    return this.torch.names()
  }

  info(name: string): { dtype: SafetensorsDtype; shape: number[] } | undefined {
    return this.torch.info(name)
  }

  raw(name: string): RawTensorToWrite {
    return this.torch.read(name)
  }

  read(name: string): StoredTensor {
    const t = this.torch.read(name)
    try {
      return { dtype: t.dtype, shape: t.shape, data: decode(t.dtype, t.bytes) }
    } catch (err) {
      throw new SafetensorsError(this.file, `tensor ${name}: ${(err as Error).message}`)
    }
  }
}

/**
 * Opens a weight file by its kind: pytorch_model.bin (and shards) or safetensors. `buf`: its
 * bytes when the caller has read them already (to hash exactly what is decoded).
 */
export function openWeightFile(path: string, buf: Buffer = readWeightFileBytes(path)): WeightFileReader {
  return isTorchWeightFile(path) ? new TorchWeightFileReader(buf, path) : new SafetensorsReader(buf, path)
}

function decodeAll(r: WeightFileReader, only?: (name: string) => boolean): SafetensorsContents {
  const tensors = new Map<string, StoredTensor>()
  for (const name of r.names()) if (!only || only(name)) tensors.set(name, r.read(name))
  return { tensors, metadata: r.metadata }
}

/** Decodes a whole file held in memory. */
export function parseSafetensors(buf: Uint8Array, file = '<buffer>', only?: (name: string) => boolean): SafetensorsContents {
  return decodeAll(new SafetensorsReader(buf, file), only)
}

/** Decodes a whole weight file: safetensors, or a pytorch_model.bin (see openWeightFile). */
export function readSafetensors(path: string, only?: (name: string) => boolean, buf?: Buffer): SafetensorsContents {
  return decodeAll(openWeightFile(path, buf), only)
}

/** Copies into a fresh, aligned ArrayBuffer (file offsets need not be aligned). */
function aligned(bytes: Uint8Array): ArrayBuffer {
  const copy = new Uint8Array(bytes.byteLength)
  copy.set(bytes)
  return copy.buffer
}

function decode(dtype: SafetensorsDtype, bytes: Uint8Array): Float32Array | Int32Array {
  const n = bytes.byteLength / BYTES[dtype]
  switch (dtype) {
    case 'F32':
      return new Float32Array(aligned(bytes))
    case 'F64':
      return Float32Array.from(new Float64Array(aligned(bytes)))
    case 'F16': {
      const h = new Uint16Array(aligned(bytes))
      const out = new Float32Array(n)
      for (let i = 0; i < n; i++) out[i] = fromHalf(h[i])
      return out
    }
    case 'BF16': {
      // bfloat16 is the top half of a float32.
      const h = new Uint16Array(aligned(bytes))
      const u = new Uint32Array(n)
      for (let i = 0; i < n; i++) u[i] = h[i] << 16
      return new Float32Array(u.buffer)
    }
    case 'I32':
      return new Int32Array(aligned(bytes))
    case 'I64': {
      const b = new BigInt64Array(aligned(bytes))
      const out = new Int32Array(n)
      for (let i = 0; i < n; i++) {
        const v = b[i]
        if (v > 2147483647n || v < -2147483648n) throw new Error(`I64 value ${v} does not fit in int32`)
        out[i] = Number(v)
      }
      return out
    }
    case 'I16':
      return Int32Array.from(new Int16Array(aligned(bytes)))
    case 'I8':
      return Int32Array.from(new Int8Array(aligned(bytes)))
    case 'U8':
    case 'BOOL':
      return Int32Array.from(bytes)
  }
}

function encode(t: TensorToWrite | RawTensorToWrite): { dtype: SafetensorsDtype; bytes: Uint8Array } {
  if ('bytes' in t) return { dtype: t.dtype, bytes: t.bytes }
  const dtype = t.dtype ?? (t.data instanceof Float32Array ? 'F32' : t.data instanceof Int8Array ? 'I8' : 'I32')
  const d = t.data
  switch (dtype) {
    case 'I8': {
      const b = Int8Array.from(d)
      if (!(d instanceof Int8Array) && d.some((v, i) => v !== b[i])) throw new Error('safetensors: I8 tensor has values outside -128…127')
      return { dtype, bytes: new Uint8Array(b.buffer) }
    }
    case 'F32':
      return { dtype, bytes: new Uint8Array(Float32Array.from(d).buffer) }
    case 'I32':
      return { dtype, bytes: new Uint8Array(Int32Array.from(d).buffer) }
    case 'I64': {
      const b = new BigInt64Array(d.length)
      for (let i = 0; i < d.length; i++) b[i] = BigInt(Math.trunc(d[i]))
      return { dtype, bytes: new Uint8Array(b.buffer) }
    }
    case 'F16': {
      const h = new Uint16Array(d.length)
      for (let i = 0; i < d.length; i++) h[i] = toHalf(d[i])
      return { dtype, bytes: new Uint8Array(h.buffer) }
    }
    case 'BF16': {
      const u = new Uint32Array(Float32Array.from(d).buffer)
      const h = new Uint16Array(d.length)
      for (let i = 0; i < d.length; i++) {
        const x = u[i]
        // round to nearest even on the dropped 16 bits; NaN stays NaN
        h[i] = (x & 0x7fffffff) > 0x7f800000 ? (x >>> 16) | 0x40 : (x + 0x7fff + ((x >>> 16) & 1)) >>> 16
      }
      return { dtype, bytes: new Uint8Array(h.buffer) }
    }
  }
}

/**
 * Serialises tensors (sorted by name) as chunks: header then each tensor's bytes. The header is
 * padded with spaces to a multiple of 8 so the data buffer starts aligned, as the reference
 * writer does.
 */
export function serializeSafetensors(tensors: Map<string, TensorToWrite | RawTensorToWrite>, metadata: Record<string, string> = {}): Uint8Array[] {
  const names = [...tensors.keys()].sort()
  const header: Record<string, unknown> = {}
  if (Object.keys(metadata).length) header.__metadata__ = metadata
  const chunks: Uint8Array[] = []
  let offset = 0
  for (const name of names) {
    const t = tensors.get(name)!
    const count = t.shape.reduce((a, b) => a * b, 1)
    const values = 'bytes' in t ? t.bytes.byteLength / BYTES[t.dtype] : t.data.length
    if (count !== values) throw new Error(`safetensors: tensor ${name} has ${values} values for shape [${t.shape}]`)
    const { dtype, bytes } = encode(t)
    header[name] = { dtype, shape: t.shape, data_offsets: [offset, offset + bytes.byteLength] }
    offset += bytes.byteLength
    chunks.push(bytes)
  }
  let json = JSON.stringify(header)
  const pad = (8 - ((8 + Buffer.byteLength(json)) % 8)) % 8
  json += ' '.repeat(pad)
  const headerBytes = Buffer.from(json, 'utf8')
  const lead = new Uint8Array(8)
  new DataView(lead.buffer).setBigUint64(0, BigInt(headerBytes.byteLength), true)
  return [lead, headerBytes, ...chunks]
}

export function writeSafetensors(path: string, tensors: Map<string, TensorToWrite | RawTensorToWrite>, metadata: Record<string, string> = {}): void {
  writeFileAtomic(path, serializeSafetensors(tensors, metadata))
}
