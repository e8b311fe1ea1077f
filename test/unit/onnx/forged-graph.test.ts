// Issue 31, F9: a model folder's model.onnx is never run. Its metadata fingerprint is a hash of
// the folder's own config.json and weights, which whoever prepared the folder can compute, so a
// forged graph (here: another model's weights) carrying the right fingerprint proves nothing.
// The engine runs our own export of the weights, cached per user under their content hash.

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readCheckpointFiles, readOnnxMetadata } from '../../../src/core/onnx/checkpoint'
import { checkpointFingerprint, DEFAULT_INT8_WEIGHTS, exportOnnx, META_FINGERPRINT } from '../../../src/core/onnx/export'

/** The cache's name for a graph of the default int8 operators, with this CPU's int8 weight form (export.ts Int8Weights). */
const CACHED_AS = `DynamicQuantizeMatMul${DEFAULT_INT8_WEIGHTS === 'uint8' ? '-u8' : ''}`
import { onnxCacheDir, ownOnnxGraph } from '../../../src/core/onnx/graph-cache'
import { openInferenceEngine } from '../../../src/core/onnx/session'
import { maxAbsDiff, randomBatch, randomWeights, referenceForward, SMALL_CONFIG, writeTestCheckpoint } from './helpers'

const HEADS = { default: 5 }
const TOL = 1e-4
const batch = randomBatch(SMALL_CONFIG, [8, 5], 8, 3)
const runBatch = { inputIds: batch.inputIds, attentionMask: batch.attentionMask, tokenTypeIds: batch.tokenTypeIds, batch: batch.batch, seq: batch.seq }

let root: string
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'fastbioner-forged-'))
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** A folder with honest weights and a model.onnx that computes another model, fingerprint forged. */
async function forgedFolder(name: string) {
  const dir = join(root, name)
  const honest = randomWeights(SMALL_CONFIG, HEADS, 1)
  writeTestCheckpoint(dir, SMALL_CONFIG, honest, HEADS)
  const other = randomWeights(SMALL_CONFIG, HEADS, 2)
  const fingerprint = await checkpointFingerprint(dir)
  const forged = exportOnnx(other, readCheckpointFiles(dir).config, { metadata: { [META_FINGERPRINT]: fingerprint } })
  writeFileSync(join(dir, 'model.onnx'), forged)
  // Everything the old check looked at says "fresh".
  expect(readOnnxMetadata(join(dir, 'model.onnx'))[META_FINGERPRINT]).toBe(fingerprint)
  return { dir, forged, honest: referenceForward(SMALL_CONFIG, honest, HEADS, batch), other: referenceForward(SMALL_CONFIG, other, HEADS, batch) }
}

describe('a model.onnx that came with a folder', () => {
  for (const mode of ['auto', 'memory'] as const) {
    it(`is never run, even with a matching fingerprint (export: '${mode}')`, async () => {
      const f = await forgedFolder(`forged-${mode}`)
      const cache = join(root, `cache-${mode}`)
      const engine = await openInferenceEngine(f.dir, { export: mode, onnxCache: cache, env: {}, logger: () => {} })
      try {
        expect(engine.engine).toBe('onnxruntime-cpu')
        const out = await engine.run(runBatch)
        // The honest weights' logits, not the forged graph's.
        expect(maxAbsDiff(out.logits.default, f.honest.logits.default)).toBeLessThan(TOL)
        expect(maxAbsDiff(out.logits.default, f.other.logits.default)).toBeGreaterThan(100 * TOL)
        expect(engine.files).not.toContain(join(f.dir, 'model.onnx'))
      } finally {
        await engine.dispose()
      }
      // The folder is left as it was.
      expect(readFileSync(join(f.dir, 'model.onnx')).equals(Buffer.from(f.forged))).toBe(true)
      if (mode === 'auto') {
        expect(engine.files).toEqual([expect.stringMatching(new RegExp(`^${cache}/[0-9a-f]{64}-[\\w-]+\\.onnx$`))])
      }
    })
  }
})

describe('ownOnnxGraph: the per-user cache of our exports', () => {
  it('exports once, then serves the cache; new content gets a new graph; the folder is never written', async () => {
    const dir = join(root, 'cached')
    const cache = join(root, 'cache-own')
    writeTestCheckpoint(dir, SMALL_CONFIG, randomWeights(SMALL_CONFIG, HEADS, 5), HEADS)
    const before = readdirSync(dir).sort()
    const first = await ownOnnxGraph(dir, { cacheDir: cache })
    expect(first.status).toBe('exported')
    expect(first.path).toBe(join(cache, `${first.fingerprint}-${CACHED_AS}.onnx`))
    expect(readOnnxMetadata(first.path!)[META_FINGERPRINT]).toBe(first.fingerprint)
    expect(first.fingerprint).toBe(await checkpointFingerprint(dir))
    const again = await ownOnnxGraph(dir, { cacheDir: cache })
    expect(again).toMatchObject({ status: 'cached', path: first.path, fingerprint: first.fingerprint })
    // Same content in another folder: the same graph, found by its hash.
    const copy = join(root, 'cached-copy')
    writeTestCheckpoint(copy, SMALL_CONFIG, randomWeights(SMALL_CONFIG, HEADS, 5), HEADS)
    expect(await ownOnnxGraph(copy, { cacheDir: cache })).toMatchObject({ status: 'cached', path: first.path, reason: 'checkpoint content exported before' })
    // New weights: a new export under a new name; the old one stays for whoever has that content.
    writeTestCheckpoint(dir, SMALL_CONFIG, randomWeights(SMALL_CONFIG, HEADS, 6), HEADS)
    const changed = await ownOnnxGraph(dir, { cacheDir: cache })
    expect(changed.status).toBe('exported')
    expect(changed.fingerprint).not.toBe(first.fingerprint)
    expect(readdirSync(cache).filter((f) => f.endsWith('.onnx')).sort()).toEqual([`${first.fingerprint}-${CACHED_AS}.onnx`, `${changed.fingerprint}-${CACHED_AS}.onnx`].sort())
    // Other options are another graph.
    expect((await ownOnnxGraph(dir, { cacheDir: cache, hiddenStates: true })).fingerprint).not.toBe(changed.fingerprint)
    expect(readdirSync(dir).sort()).toEqual(before)
  })

  it('exports into memory when the cache cannot be written, and says why', async () => {
    const dir = join(root, 'no-cache')
    writeTestCheckpoint(dir, SMALL_CONFIG, randomWeights(SMALL_CONFIG, HEADS, 7), HEADS)
    // A file where the cache folder should be.
    const blocked = join(root, 'blocked')
    writeFileSync(blocked, 'not a folder')
    const g = await ownOnnxGraph(dir, { cacheDir: join(blocked, 'onnx') })
    expect(g.path).toBeNull()
    expect(g.model!.length).toBeGreaterThan(1000)
    expect(g.reason).toMatch(/exported into memory: cannot write .*blocked/)
  })

  it('lives in the platform cache folder, or where FASTBIONER_ONNX_CACHE says', () => {
    expect(onnxCacheDir({}, '/home/ann', 'linux')).toBe('/home/ann/.cache/fastbioner/onnx')
    expect(onnxCacheDir({ XDG_CACHE_HOME: '/xdg' }, '/home/ann', 'linux')).toBe('/xdg/fastbioner/onnx')
    expect(onnxCacheDir({}, '/Users/ann', 'darwin')).toBe('/Users/ann/Library/Caches/fastbioner/onnx')
    expect(onnxCacheDir({ LOCALAPPDATA: 'C:\\Users\\ann\\AppData\\Local' }, 'C:\\Users\\ann', 'win32')).toContain(join('fastbioner', 'Cache', 'onnx'))
    expect(onnxCacheDir({ FASTBIONER_ONNX_CACHE: '/tmp/x' }, '/home/ann', 'linux')).toBe('/tmp/x')
  })
})
