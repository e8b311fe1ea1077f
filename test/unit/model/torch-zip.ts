// Test helpers for torch.save checkpoints: a stored zip writer (CRC-32 computed) and a reader of
// the fixtures' entries, so tests can rewrite data.pkl and re-pack it as torch.save would.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { crc32 } from 'node:zlib'
import { ZipEntries } from '@core/model/zip-entries'

export const TORCH_FIXTURES = join(__dirname, '../../fixtures/torch')

export function fixtureBytes(rel: string): Buffer {
  return readFileSync(join(TORCH_FIXTURES, rel))
}

/** The entries of a zip in archive order. */
export function zipEntries(buf: Uint8Array): Array<[string, Uint8Array]> {
  const z = new ZipEntries(buf)
  return [...z.entries.keys()].map((n) => [n, z.read(n)])
}

/** A zip with every entry stored, as torch.save writes it (without its 64-byte alignment). */
export function makeZip(entries: Array<[string, Uint8Array]>): Buffer {
  const locals: Buffer[] = []
  const centrals: Buffer[] = []
  let offset = 0
  for (const [name, data] of entries) {
    const n = Buffer.from(name, 'utf8')
    const crc = crc32(data)
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(data.byteLength, 18)
    local.writeUInt32LE(data.byteLength, 22)
    local.writeUInt16LE(n.length, 26)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0)
    central.writeUInt16LE(20, 4)
    central.writeUInt16LE(20, 6)
    central.writeUInt32LE(crc, 16)
    central.writeUInt32LE(data.byteLength, 20)
    central.writeUInt32LE(data.byteLength, 24)
    central.writeUInt16LE(n.length, 28)
    central.writeUInt32LE(offset, 42)
    locals.push(local, n, Buffer.from(data))
    centrals.push(central, n)
    offset += 30 + n.length + data.byteLength
  }
  const cd = Buffer.concat(centrals)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(entries.length, 8)
  end.writeUInt16LE(entries.length, 10)
  end.writeUInt32LE(cd.length, 12)
  end.writeUInt32LE(offset, 16)
  return Buffer.concat([...locals, cd, end])
}

/** A pickle of a state dict {'w': float32 tensor [2] on storage '0'} whose tail can be replaced. */
export function pickleWith(tail: Buffer = Buffer.alloc(0)): Buffer {
  const s = (t: string) => Buffer.concat([Buffer.from([0x58]), u32(Buffer.byteLength(t)), Buffer.from(t)])
  return Buffer.concat([
    Buffer.from([0x80, 2, 0x7d, 0x28]), // PROTO 2, EMPTY_DICT, MARK
    s('w'),
    Buffer.from('ctorch._utils\n_rebuild_tensor_v2\n('),
    Buffer.from('('), s('storage'), Buffer.from('ctorch\nFloatStorage\n'), s('0'), s('cpu'), Buffer.from([0x4b, 2, 0x74, 0x51]), // (…) TUPLE, BINPERSID
    Buffer.from([0x4b, 0, 0x4b, 2, 0x85, 0x4b, 1, 0x85, 0x89]), // offset 0, (2,), (1,), False
    Buffer.from('ccollections\nOrderedDict\n)R'),
    Buffer.from('tR'), // TUPLE, REDUCE
    tail,
    Buffer.from('u.'), // SETITEMS, STOP
  ])
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4)
  b.writeUInt32LE(n)
  return b
}

/** A torch.save-like archive of one data.pkl and storages. */
export function torchZip(pkl: Uint8Array, storages: Record<string, Uint8Array> = { '0': new Uint8Array(new Float32Array([1.5, -2]).buffer) }): Buffer {
  return makeZip([['archive/data.pkl', pkl], ...Object.entries(storages).map(([k, v]) => [`archive/data/${k}`, v] as [string, Uint8Array]), ['archive/version', Buffer.from('3\n')]])
}
