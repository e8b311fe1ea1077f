// Bounded fuzzing of the pytorch_model.bin reader: every mutated archive either reads consistently
// or is refused with a SafetensorsError naming the file — never another exception, never a hang.
// The seed is printed; rerun with TORCH_FUZZ_SEED=<seed> and more cases with TORCH_FUZZ_CASES=<n>.

import { Rng } from '@core/rng'
import { SafetensorsError } from '@core/model/safetensors'
import { TorchCheckpointReader } from '@core/model/torch-checkpoint'
import { fixtureBytes, makeZip, pickleWith, torchZip, zipEntries } from './torch-zip'

const SEED = Number(process.env.TORCH_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 32))
const CASES = Number(process.env.TORCH_FUZZ_CASES ?? 300)
const FILE = 'fuzz/pytorch_model.bin'
const ELEMENT: Record<string, number> = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 }

const BASES: Buffer[] = [
  fixtureBytes('fp32/pytorch_model.bin'),
  fixtureBytes('fp16/pytorch_model.bin'),
  fixtureBytes('bf16/pytorch_model.bin'),
  fixtureBytes('deflated/pytorch_model.bin'),
  fixtureBytes('sharded/pytorch_model-00002-of-00002.bin'),
  fixtureBytes('evil.bin'),
  torchZip(pickleWith()),
]
const BOUNDARY = [0, 1, 0x7f, 0xff, 0xffff, 0x7fffffff, 0x80000000, 0xfffffff0, 0xffffffff]

type Mutation = (buf: Buffer, r: Rng) => Buffer

const pick = <T>(r: Rng, items: readonly T[]): T => items[Math.floor(r.next() * items.length)]!
const at = (r: Rng, len: number): number => Math.floor(r.next() * len)

function mutateBytes(b: Buffer, r: Rng): Buffer {
  const out = Buffer.from(b)
  const kind = Math.floor(r.next() * 5)
  if (kind === 0 && out.length) out[at(r, out.length)] ^= 1 << Math.floor(r.next() * 8)
  else if (kind === 1 && out.length >= 4) out.writeUInt32LE(pick(r, BOUNDARY), at(r, out.length - 3))
  else if (kind === 2) {
    // insert any byte: opcodes outside the allow-list included
    const i = at(r, out.length + 1)
    return Buffer.concat([out.subarray(0, i), Buffer.from([at(r, 256)]), out.subarray(i)])
  } else if (kind === 3) {
    const i = at(r, out.length + 1)
    return Buffer.concat([out.subarray(0, i), out.subarray(i + 1 + at(r, 16))])
  } else if (kind === 4) {
    const i = at(r, out.length + 1)
    const j = Math.min(out.length, i + at(r, 64))
    return Buffer.concat([out.subarray(0, j), out.subarray(i, j), out.subarray(j)])
  }
  return out
}

const MUTATIONS: Mutation[] = [
  // truncated
  (b, r) => b.subarray(0, at(r, b.length)),
  // raw damage: CRCs, headers, sizes, offsets
  (b, r) => mutateBytes(b, r),
  (b, r) => {
    const out = Buffer.from(b)
    for (let k = 0; k < 4; k++) out.writeUInt32LE(pick(r, BOUNDARY), at(r, out.length - 3))
    return out
  },
  // a damaged pickle in a well-formed archive (CRCs recomputed)
  (b, r) => {
    const entries = zipEntries(b)
    const i = entries.findIndex(([n]) => n.endsWith('data.pkl'))
    let pkl: Buffer = Buffer.from(entries[i][1])
    for (let k = 1 + at(r, 3); k > 0; k--) pkl = mutateBytes(pkl, r)
    entries[i] = [entries[i][0], pkl]
    return makeZip(entries)
  },
  // a storage record of the wrong length, or a record dropped
  (b, r) => {
    const entries = zipEntries(b)
    const i = at(r, entries.length)
    if (r.next() < 0.5) entries.splice(i, 1)
    else entries[i] = [entries[i][0], entries[i][1].subarray(0, at(r, entries[i][1].length + 1))]
    return makeZip(entries)
  },
]

function check(buf: Buffer): 'read' | 'refused' {
  try {
    const reader = new TorchCheckpointReader(buf, FILE)
    for (const name of reader.names()) {
      const t = reader.read(name)
      const numel = t.shape.reduce((a, b) => a * b, 1)
      if (t.bytes.byteLength !== numel * ELEMENT[t.dtype]) throw new Error(`inconsistent tensor ${name}: ${t.bytes.byteLength} bytes for ${t.dtype}[${t.shape}]`)
    }
    return 'read'
  } catch (e) {
    if (e instanceof SafetensorsError && e.message.startsWith(`${FILE}: `)) return 'refused'
    throw e
  }
}

test(`fuzz: ${CASES} mutated archives (seed ${SEED}) read consistently or are refused cleanly`, () => {
  console.log(`torch fuzz seed ${SEED}, ${CASES} cases (TORCH_FUZZ_SEED / TORCH_FUZZ_CASES)`)
  const r = new Rng(SEED)
  const counts = { read: 0, refused: 0 }
  let slowest = 0
  for (let c = 0; c < CASES; c++) {
    const base = pick(r, BASES)
    const m = Math.floor(r.next() * MUTATIONS.length)
    const buf = MUTATIONS[m](base, r)
    const t0 = performance.now()
    let outcome: 'read' | 'refused'
    try {
      outcome = check(buf)
    } catch (e) {
      throw new Error(`case ${c} (mutation ${m}, seed ${SEED}): ${(e as Error).name}: ${(e as Error).message}`)
    }
    const ms = performance.now() - t0
    slowest = Math.max(slowest, ms)
    if (ms > 5000) throw new Error(`case ${c} (mutation ${m}, seed ${SEED}) took ${ms.toFixed(0)} ms`)
    counts[outcome]++
  }
  console.log(`torch fuzz: ${counts.read} read, ${counts.refused} refused, slowest case ${slowest.toFixed(1)} ms`)
  expect(counts.read + counts.refused).toBe(CASES)
  // The mutations must reach the checks: most cases are refused, yet not all.
  if (CASES >= 100) expect(counts.refused).toBeGreaterThan(CASES / 2)
})
