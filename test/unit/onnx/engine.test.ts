// Checkpoint export (atomic write, fingerprint, the cache of our own exports) and the inference engine's choice and
// fallbacks, on a small random checkpoint written to a temp directory.

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OnnxFileError, readOnnxMetadata } from '../../../src/core/onnx/checkpoint'
import { exportCheckpointToOnnx, META_FINGERPRINT } from '../../../src/core/onnx/export'
import { ownOnnxGraph } from '../../../src/core/onnx/graph-cache'
import { openInferenceEngine, type InferenceEngine } from '../../../src/core/onnx/session'
import { useBackend } from '../../../src/core/model/backend'
import { BertTokenClassifier, makeBertConfig } from '../../../src/core/model/bert'
import { saveCheckpoint } from '../../../src/core/model/checkpoint'
import { maxAbsDiff, randomBatch, randomWeights, referenceForward, SMALL_CONFIG, writeTestCheckpoint } from './helpers'

const HEADS = { default: 5, chem: 3 }
const TOL = 1e-4

let root: string
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'fastbioner-onnx-'))
  // The tfjs fallback must not pick a native or wasm backend in tests.
  process.env.FASTBIONER_BACKEND = 'cpu'
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

let n = 0
function writeCheckpoint(seed: number, heads: Record<string, number> = HEADS): { dir: string; weights: ReturnType<typeof randomWeights> } {
  const dir = join(root, `ckpt${++n}`)
  const weights = randomWeights(SMALL_CONFIG, heads, seed)
  writeTestCheckpoint(dir, SMALL_CONFIG, weights, heads)
  return { dir, weights }
}

const batch = randomBatch(SMALL_CONFIG, [8, 5, 2], 8, 5)
const runBatch = { inputIds: batch.inputIds, attentionMask: batch.attentionMask, tokenTypeIds: batch.tokenTypeIds, batch: batch.batch, seq: batch.seq }

function silent(): { lines: string[]; logger: (l: string) => void } {
  const lines: string[] = []
  return { lines, logger: (l) => lines.push(l) }
}

describe('exportCheckpointToOnnx / ownOnnxGraph', () => {
  it('writes model.onnx beside the checkpoint atomically, with the fingerprint in metadata_props', async () => {
    const { dir } = writeCheckpoint(1)
    const r = await exportCheckpointToOnnx(dir)
    expect(r.path).toBe(join(dir, 'model.onnx'))
    expect(r.heads.map((h) => h.output)).toEqual(['logits', 'logits_chem'])
    expect(readdirSync(dir).sort()).toEqual(['config.json', 'model.onnx', 'model.safetensors', 'vocab.txt'])
    const meta = readOnnxMetadata(r.path)
    expect(meta[META_FINGERPRINT]).toBe(r.fingerprint)
    expect(r.fingerprint).toMatch(/^[0-9a-f]{64}$/)
  })

  it('runs our export of the weights as they are now: a change to weights or config is a new graph', async () => {
    const { dir } = writeCheckpoint(2)
    const cacheDir = join(root, 'cache-stale')
    const first = await ownOnnxGraph(dir, { cacheDir })
    expect(first.status).toBe('exported')
    expect((await ownOnnxGraph(dir, { cacheDir })).status).toBe('cached')

    // Same content, new mtime: the content hash decides, nothing is exported again.
    const before = readFileSync(first.path!)
    const later = new Date(Date.now() + 5000)
    utimesSync(join(dir, 'model.safetensors'), later, later)
    const touched = await ownOnnxGraph(dir, { cacheDir })
    expect(touched.status).toBe('cached')
    expect(touched.fingerprint).toBe(first.fingerprint)
    expect(readFileSync(touched.path!).equals(before)).toBe(true)

    // New weights: a new graph, new fingerprint, and the engine computes with the new weights.
    const w2 = randomWeights(SMALL_CONFIG, HEADS, 99)
    writeTestCheckpoint(dir, SMALL_CONFIG, w2, HEADS)
    const again = await ownOnnxGraph(dir, { cacheDir })
    expect(again.status).toBe('exported')
    expect(again.fingerprint).not.toBe(first.fingerprint)
    expect(readOnnxMetadata(again.path!)[META_FINGERPRINT]).toBe(again.fingerprint)

    const engine = await openInferenceEngine(dir, { onnxCache: cacheDir, logger: silent().logger })
    try {
      expect(engine.files).toEqual([again.path])
      const out = await engine.run(runBatch)
      const ref = referenceForward(SMALL_CONFIG, w2, HEADS, batch)
      expect(maxAbsDiff(out.logits.default, ref.logits.default)).toBeLessThan(TOL)
    } finally {
      await engine.dispose()
    }

    // A config change is a change too.
    const cfg = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))
    cfg.layer_norm_eps = 1e-5
    writeFileSync(join(dir, 'config.json'), JSON.stringify(cfg))
    expect((await ownOnnxGraph(dir, { cacheDir })).status).toBe('exported')
  })

  it('exports again for other options', async () => {
    const { dir } = writeCheckpoint(3)
    const cacheDir = join(root, 'cache-options')
    const plain = await ownOnnxGraph(dir, { cacheDir })
    const r = await ownOnnxGraph(dir, { cacheDir, hiddenStates: true })
    expect(r.status).toBe('exported')
    expect(r.path).not.toBe(plain.path)
  })

  it('reports a truncated model.onnx by file name', async () => {
    const { dir } = writeCheckpoint(4)
    const { path } = await exportCheckpointToOnnx(dir)
    truncateSync(path, 5000)
    expect(() => readOnnxMetadata(path)).toThrow(OnnxFileError)
    expect(() => readOnnxMetadata(path)).toThrow(path)
  })

  it('names the checkpoint file that is missing', async () => {
    const dir = join(root, 'empty')
    mkdirSync(dir, { recursive: true })
    await expect(ownOnnxGraph(dir, { cacheDir: join(root, 'cache-empty') })).rejects.toThrow(join(dir, 'config.json'))
  })
})

describe('core/model checkpoint → ONNX', () => {
  it('a checkpoint saved by saveCheckpoint exports and runs with the logits of the tfjs model', async () => {
    await useBackend('cpu')
    const tf = await import('@tensorflow/tfjs-core')
    const config = makeBertConfig({ vocabSize: 60, hiddenSize: 32, numHiddenLayers: 2, numAttentionHeads: 4, intermediateSize: 48, maxPositionEmbeddings: 24 })
    const model = BertTokenClassifier.random(config, 7, { default: ['O', 'B-Chem', 'I-Chem'], disease: ['O', 'B-Dis', 'I-Dis', 'X'] })
    const dir = join(root, 'saved')
    const engines: InferenceEngine[] = []
    try {
      await saveCheckpoint(dir, model, Array.from({ length: 60 }, (_, i) => `t${i}`))
      const x = randomBatch({ ...SMALL_CONFIG, vocabSize: 60 }, [10, 7, 2], 10, 41)
      const i32 = (a: BigInt64Array) => tf.tensor2d(Int32Array.from(a, Number), [x.batch, x.seq], 'int32')
      const ref = model.forward({ inputIds: i32(x.inputIds), attentionMask: i32(x.attentionMask), tokenTypeIds: i32(x.tokenTypeIds) })
      const b = { inputIds: x.inputIds, attentionMask: x.attentionMask, tokenTypeIds: x.tokenTypeIds, batch: x.batch, seq: x.seq }
      engines.push(await openInferenceEngine(dir, { env: {}, logger: silent().logger, onnxCache: join(root, 'cache-saved') }))
      engines.push(await openInferenceEngine(dir, { env: {}, prefer: 'tfjs' }))
      expect(engines.map((e) => e.engine)).toEqual(['onnxruntime-cpu', 'tfjs-cpu'])
      for (const e of engines) {
        const out = await e.run(b)
        expect(Object.keys(out.logits).sort()).toEqual(['default', 'disease'])
        for (const head of ['default', 'disease']) {
          expect(maxAbsDiff(out.logits[head], ref.logits[head].dataSync() as Float32Array)).toBeLessThan(TOL)
        }
      }
      for (const t of Object.values(ref.logits)) t.dispose()
    } finally {
      model.dispose()
      for (const e of engines) await e.dispose()
    }
  })
})

describe('openInferenceEngine', () => {
  it('runs onnxruntime on the CPU by default and reports it', async () => {
    const { dir, weights } = writeCheckpoint(10)
    const log = silent()
    const engine = await openInferenceEngine(dir, { logger: log.logger, env: {}, onnxCache: join(root, 'cache-default') })
    try {
      expect(engine.engine).toBe('onnxruntime-cpu')
      expect(engine.reason).toMatch(/onnxruntime-node .*CPU execution provider, \d+ intra-op thread/)
      expect(engine.reason).toMatch(/exported the ONNX graph into the cache/)
      const out = await engine.run(runBatch)
      const ref = referenceForward(SMALL_CONFIG, weights, HEADS, batch)
      expect(Object.keys(out.logits).sort()).toEqual(['chem', 'default'])
      expect(out.logits.default.length).toBe(3 * 8 * 5)
      expect(maxAbsDiff(out.logits.default, ref.logits.default)).toBeLessThan(TOL)
      expect(maxAbsDiff(out.logits.chem, ref.logits.chem)).toBeLessThan(TOL)
      // int32 inputs and absent token types work too.
      const i32 = await engine.run({ inputIds: Int32Array.from(batch.inputIds, Number), attentionMask: Int32Array.from(batch.attentionMask, Number), batch: 3, seq: 8 })
      expect(i32.logits.default.length).toBe(3 * 8 * 5)
      // Longer than max_position_embeddings (40): a clear error naming the model file.
      const long = randomBatch(SMALL_CONFIG, [41], 41, 6)
      await expect(engine.run({ ...long, batch: 1, seq: 41 })).rejects.toThrow(/1 × 41 tokens with .*cache-default.*\.onnx/)
      await expect(engine.run({ ...runBatch, seq: 7 })).rejects.toThrow(/expected batch × seq = 21/)
      expect(log.lines).toEqual([])
    } finally {
      await engine.dispose()
    }
  })

  it('ignores a corrupt model.onnx in the folder: it runs our export of the weights', async () => {
    const { dir, weights } = writeCheckpoint(11)
    writeFileSync(join(dir, 'model.onnx'), Buffer.from('this is not a protobuf model at all'))
    const log = silent()
    const engine = await openInferenceEngine(dir, { logger: log.logger, env: {}, onnxCache: join(root, 'cache-corrupt') })
    try {
      expect(engine.engine).toBe('onnxruntime-cpu')
      expect(engine.warnings).toEqual([])
      const out = await engine.run(runBatch)
      const ref = referenceForward(SMALL_CONFIG, weights, HEADS, batch)
      expect(maxAbsDiff(out.logits.default, ref.logits.default)).toBeLessThan(TOL)
      expect(maxAbsDiff(out.logits.chem, ref.logits.chem)).toBeLessThan(TOL)
    } finally {
      await engine.dispose()
    }
  })

  it('exports again a cached graph damaged on disk and stays on onnxruntime', async () => {
    const { dir } = writeCheckpoint(12)
    const cacheDir = join(root, 'cache-damaged')
    const { path } = await ownOnnxGraph(dir, { cacheDir })
    const bytes = readFileSync(path!)
    // Overwrite the first node of the graph with junk, keeping the file's length framing:
    // onnxruntime's protobuf parser rejects it.
    const g = bytes.indexOf(Buffer.from('embeddings/word'))
    expect(g).toBeGreaterThan(0)
    bytes.fill(0xff, g, g + 40)
    writeFileSync(path!, bytes)
    const log = silent()
    const engine = await openInferenceEngine(dir, { logger: log.logger, env: {}, onnxCache: cacheDir })
    try {
      expect(engine.engine).toBe('onnxruntime-cpu')
      expect(engine.warnings.join('\n')).toContain(path)
      expect(engine.reason).toMatch(/exported the ONNX graph into the cache after a load failure/)
    } finally {
      await engine.dispose()
    }
    const again = await openInferenceEngine(dir, { logger: log.logger, env: {}, onnxCache: cacheDir })
    try {
      expect(again.warnings).toEqual([])
    } finally {
      await again.dispose()
    }
  })

  it('falls back to tfjs when onnxruntime-node cannot load', async () => {
    const { dir } = writeCheckpoint(14)
    const log = silent()
    const engine = await openInferenceEngine(dir, {
      logger: log.logger,
      env: {},
      loadOrt: async () => {
        throw new Error('libonnxruntime.so.1: cannot open shared object file')
      },
    })
    try {
      expect(engine.engine).toBe('tfjs-cpu')
      expect(engine.reason).toMatch(/onnxruntime-node cannot load \(libonnxruntime\.so\.1/)
      expect(log.lines).toHaveLength(1)
    } finally {
      await engine.dispose()
    }
  })

  it('honours prefer / FASTBIONER_INFERENCE and a provider list', async () => {
    const { dir } = writeCheckpoint(15)
    const engines: InferenceEngine[] = []
    try {
      engines.push(await openInferenceEngine(dir, { prefer: 'tfjs', env: {} }))
      expect(engines[0].engine).toBe('tfjs-cpu')
      engines.push(await openInferenceEngine(dir, { env: { FASTBIONER_INFERENCE: 'tfjs' } }))
      expect(engines[1].reason).toMatch(/FASTBIONER_INFERENCE/)
      // A provider that is not in this build fails over to the next in the list.
      const log = silent()
      engines.push(await openInferenceEngine(dir, { executionProviders: ['dml', 'cpu'], logger: log.logger, env: {}, onnxCache: join(root, 'cache-providers') }))
      expect(engines[2].engine).toBe('onnxruntime-cpu')
      expect(engines[2].reason).toMatch(/dml failed/)
      await expect(openInferenceEngine(dir, { env: { FASTBIONER_ORT_EP: 'tpu' } })).rejects.toThrow(/FASTBIONER_ORT_EP=tpu/)
    } finally {
      for (const e of engines) await e.dispose()
    }
  })
})
