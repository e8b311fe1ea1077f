// Child process of folder-fuzz.test.ts (run with `node --import tsx`): builds mutated model
// folders and reads each one as the product does, answering one line per case. It runs apart so
// that the parent can bound each case's time (kill) and memory (RSS), and recycle the process.
//
// Protocol (process.send / 'message'): { seed, index } → { index, outcome, name?, message?, ms, rss }.
// outcome: 'ok' (read and tagged), 'refused' (a project error whose message names the folder's
// file), or 'bad' (any other exception: a bare TypeError, a project error naming no file, …).

import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { useBackend } from '../../../src/core/model/backend'
import { loadCheckpoint } from '../../../src/core/model/checkpoint'
import { findWeightFiles, readCheckpointInfo } from '../../../src/core/model/checkpoint-files'
import { exportCheckpointToOnnx, readCheckpointWeights } from '../../../src/core/onnx'
import { deriveSeed, Rng } from '../../../src/core/rng'
import { checkTaggingHeads, openTagger } from '../../../src/core/tag/open'

const ROOT = resolve(__dirname, '../../..')
const FIXTURES = join(ROOT, 'test/fixtures/torch')

/** The errors a user can act on (as the model host and the CLI classify them). */
const PROJECT_ERRORS = new Set(['CheckpointError', 'SafetensorsError', 'VocabError', 'OnnxFileError', 'OnnxExportError', 'TaggingError', 'InferenceEngineError', 'FileError'])

const BASE = {
  config: JSON.parse(readFileSync(join(FIXTURES, 'fp32/config.json'), 'utf8')) as Record<string, unknown>,
  vocab: readFileSync(join(FIXTURES, 'fp32/vocab.txt'), 'utf8'),
  weights: readFileSync(join(FIXTURES, 'expected/fp32.safetensors')),
}
const TOKENS = BASE.vocab.trimEnd().split('\n')

type Files = Map<string, Buffer | { link: string } | 'dir'>

const WEIRD: unknown[] = [
  null, true, false, -1, 0, 1, 2, 3, 0.5, -0.5, 7, 64, 511, 2 ** 31 - 2, 2 ** 32, 2 ** 53, 1e308, -1e308, '', 'x', '1', 'NaN',
  '../../outside', '/dev/zero', [], {}, [1, 2], ['O'], { a: 1 }, 'ü'.repeat(3), 'x'.repeat(5000),
]

const pick = <T>(r: Rng, items: readonly T[]): T => items[Math.floor(r.next() * items.length)]!
const at = (r: Rng, n: number): number => Math.floor(r.next() * n)

/** A value somewhere inside `v` replaced (or removed) at random. */
function mutateJson(v: unknown, r: Rng, depth = 0): unknown {
  if (v !== null && typeof v === 'object' && depth < 4 && r.next() < 0.75) {
    if (Array.isArray(v)) {
      if (!v.length) return [pick(r, WEIRD)]
      const out = [...v]
      const i = at(r, out.length)
      if (r.next() < 0.15) out.splice(i, 1)
      else out[i] = mutateJson(out[i], r, depth + 1)
      return out
    }
    const out: Record<string, unknown> = { ...(v as Record<string, unknown>) }
    const keys = Object.keys(out)
    if (!keys.length || r.next() < 0.1) {
      out[pick(r, ['x', '__proto__', 'constructor', '0', ...keys])] = pick(r, WEIRD)
      return out
    }
    const k = pick(r, keys)
    if (r.next() < 0.15) delete out[k]
    else out[k] = mutateJson(out[k], r, depth + 1)
    return out
  }
  if (typeof v === 'number' && r.next() < 0.5) return pick(r, [v + 1, v - 1, v * 2, -v, v * 1000, Math.floor(v / 2)])
  return pick(r, WEIRD)
}

function mutateBytes(b: Buffer, r: Rng): Buffer {
  const out = Buffer.from(b)
  const kind = at(r, 6)
  if (kind === 0 && out.length) out[at(r, out.length)] ^= 1 << at(r, 8)
  else if (kind === 1) return out.subarray(0, at(r, out.length + 1))
  else if (kind === 2 && out.length >= 4) out.writeUInt32LE(pick(r, [0, 1, 0x7f, 0xff, 0xffff, 0x7fffffff, 0xffffffff]), at(r, out.length - 3))
  else if (kind === 3) {
    const i = at(r, out.length + 1)
    return Buffer.concat([out.subarray(0, i), Buffer.from([pick(r, [0x00, 0x22, 0x7b, 0x80, 0xc3, 0xe2, 0xed, 0xff])]), out.subarray(i)])
  } else if (kind === 4) {
    const i = at(r, out.length + 1)
    return Buffer.concat([out.subarray(0, i), out.subarray(i + 1 + at(r, 16))])
  } else if (out.length) out[at(r, out.length)] = at(r, 256)
  return out
}

const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v))

/** A safetensors file from a header object and the base file's data buffer (length recomputed). */
function safetensors(header: unknown, data: Buffer, extraHeaderBytes?: Buffer): Buffer {
  const h = Buffer.concat([json(header), extraHeaderBytes ?? Buffer.alloc(0)])
  const len = Buffer.alloc(8)
  len.writeBigUInt64LE(BigInt(h.length))
  return Buffer.concat([len, h, data])
}

function baseParts(): { header: Record<string, unknown>; data: Buffer } {
  const n = Number(BASE.weights.readBigUInt64LE(0))
  return { header: JSON.parse(BASE.weights.subarray(8, 8 + n).toString('utf8')), data: BASE.weights.subarray(8 + n) }
}

/** The case's folder: the fp32 fixture (a 2-layer token classifier) in one of its layouts, then mutated. */
function makeCase(r: Rng): { files: Files; mutated: string[] } {
  const files: Files = new Map()
  files.set('config.json', json(BASE.config))
  files.set('tokenizer_config.json', json({ do_lower_case: true }))
  files.set('fastbioner.json', json({ training: { head: 'default', labels: ['O', 'B-Disease', 'I-Disease'], maxLength: 8, stride: 2, sentenceLevel: false, epoch: 1, step: 1 } }))
  if (r.next() < 0.7) files.set('vocab.txt', Buffer.from(BASE.vocab))
  else {
    files.set('tokenizer.json', json({ model: { type: 'WordPiece', vocab: Object.fromEntries(TOKENS.map((t, i) => [t, i])) }, normalizer: { type: 'BertNormalizer', lowercase: true } }))
    files.delete('tokenizer_config.json')
  }
  const { header, data } = baseParts()
  if (r.next() < 0.7) files.set('model.safetensors', BASE.weights)
  else {
    // Two shards and an index naming them.
    const names = Object.keys(header).filter((k) => k !== '__metadata__')
    const half = Math.ceil(names.length / 2)
    const shard = (part: string[]): Buffer => {
      const h: Record<string, unknown> = {}
      const chunks: Buffer[] = []
      let off = 0
      for (const name of part) {
        const e = header[name] as { dtype: string; shape: number[]; data_offsets: [number, number] }
        const bytes = data.subarray(e.data_offsets[0], e.data_offsets[1])
        h[name] = { dtype: e.dtype, shape: e.shape, data_offsets: [off, off + bytes.length] }
        chunks.push(bytes)
        off += bytes.length
      }
      return safetensors(h, Buffer.concat(chunks))
    }
    files.set('model-00001-of-00002.safetensors', shard(names.slice(0, half)))
    files.set('model-00002-of-00002.safetensors', shard(names.slice(half)))
    const weightMap = Object.fromEntries(names.map((n, i) => [n, i < half ? 'model-00001-of-00002.safetensors' : 'model-00002-of-00002.safetensors']))
    files.set('model.safetensors.index.json', json({ metadata: { total_size: data.length }, weight_map: weightMap }))
  }

  const mutated: string[] = []
  for (let k = 1 + at(r, 2); k > 0; k--) {
    const name = pick(r, [...files.keys()])
    mutated.push(name)
    const cur = files.get(name)!
    if (!Buffer.isBuffer(cur)) continue
    const how = at(r, 10)
    if (how === 0) files.delete(name)
    else if (how === 1) files.set(name, pick(r, ['dir', { link: '/dev/zero' }, { link: '../../outside' }, { link: name }] as const))
    else if (how <= 3) files.set(name, mutateBytes(cur, r))
    else if (name.endsWith('.safetensors')) {
      // The header as JSON: a field changed, the length recomputed (so the change reaches the checks).
      const n = Number(cur.readBigUInt64LE(0))
      let h: unknown
      try {
        h = JSON.parse(cur.subarray(8, 8 + n).toString('utf8'))
      } catch {
        files.set(name, mutateBytes(cur, r))
        continue
      }
      const body = cur.subarray(8 + n)
      if (how === 4) files.set(name, safetensors(h, body, Buffer.from([0xff, 0xfe]))) // not UTF-8
      else files.set(name, safetensors(mutateJson(h, r), r.next() < 0.2 ? body.subarray(0, at(r, body.length)) : body))
    } else if (name.endsWith('.json')) {
      let v: unknown
      try {
        v = JSON.parse(cur.toString('utf8'))
      } catch {
        files.set(name, mutateBytes(cur, r))
        continue
      }
      files.set(name, json(mutateJson(v, r)))
    } else {
      // vocab.txt: lines dropped, repeated or changed
      const lines = cur.toString('utf8').split('\n')
      const i = at(r, lines.length)
      if (how === 4) lines.splice(i, 1 + at(r, 30))
      else if (how === 5) lines.splice(i, 0, ...Array.from({ length: 1 + at(r, 30) }, () => lines[i] ?? ''))
      else if (how === 6) lines[i] = String(pick(r, WEIRD))
      else files.set(name, Buffer.concat([Buffer.from(lines.join('\n')), Buffer.from([0xff, 0x0d, 0x00])]))
      if (how <= 6) files.set(name, Buffer.from(lines.join('\n')))
    }
  }
  return { files, mutated }
}

function writeCase(dir: string, files: Files): void {
  mkdirSync(dir, { recursive: true })
  for (const [name, f] of files) {
    const p = join(dir, name)
    if (f === 'dir') mkdirSync(p)
    else if (Buffer.isBuffer(f)) writeFileSync(p, f)
    else symlinkSync(f.link, p)
  }
}

const DOCS = [{ id: '1', text: 'a b c d e f g h i j k l m n o p q r s t. u v w x y z', passages: [], mentions: [] }]

/**
 * Everything the product does with a folder it is given, each step on its own (a step that
 * refuses must not hide what a later reader would do with the same file): read its small files,
 * check its heads, read the weights as the ONNX exporter does and export, load on tfjs, tag.
 */
const STEPS: Array<(dir: string) => unknown> = [
  (dir) => readCheckpointInfo(dir),
  (dir) => checkTaggingHeads(dir),
  (dir) => readCheckpointWeights(findWeightFiles(dir)),
  (dir) => exportCheckpointToOnnx(dir, { write: false }),
  async (dir) => (await loadCheckpoint(dir)).model.dispose(),
  async (dir) => {
    // As the CLI opens a tagger (checkTaggingModel, then openTagger).
    checkTaggingHeads(dir)
    const tagger = await openTagger(dir, { engine: 'tfjs', logger: () => {} })
    try {
      await tagger.tag(DOCS)
    } finally {
      await tagger.dispose()
    }
  },
]

const work = mkdtempSync(join(tmpdir(), 'fastbioner-folder-fuzz-'))
process.on('exit', () => process.env.MODEL_FUZZ_TRACE || rmSync(work, { recursive: true, force: true }))
// `outside`, where the symlinks and index values that leave the folder point.
writeFileSync(join(work, 'outside'), BASE.weights)

async function runCase(seed: number, index: number): Promise<{ outcome: 'ok' | 'refused' | 'bad'; name?: string; message?: string; mutated: string[] }> {
  const r = new Rng(deriveSeed(seed, 0xf01d, index))
  const { files, mutated } = makeCase(r)
  const dir = join(work, 'cases', `c${index}`)
  writeCase(dir, files)
  let refused: { name: string; message: string } | null = null
  try {
    for (const [i, step] of STEPS.entries()) {
      // MODEL_FUZZ_TRACE=1: which step a case is in, on stderr (to find where one hangs).
      if (process.env.MODEL_FUZZ_TRACE) process.stderr.write(`case ${index} step ${i} ${dir}\n`)
      try {
        await step(dir)
      } catch (e) {
        const err = e instanceof Error ? e : new Error(String(e))
        const message = err.message.slice(0, 2000)
        // The message must name a file of the folder (or the folder itself, for a problem between files).
        if (!PROJECT_ERRORS.has(err.name) || !message.includes(dir)) return { outcome: 'bad', name: err.name, message, mutated }
        refused ??= { name: err.name, message }
      }
    }
    return refused ? { outcome: 'refused', ...refused, mutated } : { outcome: 'ok', mutated }
  } finally {
    if (!process.env.MODEL_FUZZ_TRACE) rmSync(dir, { recursive: true, force: true })
  }
}

async function main(): Promise<void> {
  await useBackend('cpu')
  process.on('message', (m: { seed: number; index: number }) => {
    const t0 = performance.now()
    runCase(m.seed, m.index).then(
      (res) => process.send!({ index: m.index, ...res, ms: performance.now() - t0, rss: process.memoryUsage().rss }),
      (e) => process.send!({ index: m.index, outcome: 'bad', name: 'WorkerError', message: String(e), mutated: [], ms: performance.now() - t0, rss: process.memoryUsage().rss }),
    )
  })
  process.send!({ ready: true })
}

void main()
