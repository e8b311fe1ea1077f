// ONNX export: onnxruntime on the exported graph against an independent float64 reference and
// against the tfjs model, on padded batches with both token types.

import * as ort from 'onnxruntime-node'
import { onnx } from 'onnx-proto'
import { describe, expect, it } from 'vitest'
import { exportOnnx, findHeads, OnnxExportError, type WeightsMap } from '../../../src/core/onnx/export'
import { useCpuBackend } from '../train/tfSetup'
import { hfConfigJson, maxAbsDiff, randomBatch, randomWeights, referenceForward, SMALL_CONFIG, tfjsModelFromWeights, type Batch } from './helpers'

const TOL = 1e-4
const HEADS = { default: 5 }
const MULTI = { default: 5, chem: 3, disease: 4 }
// Last row is a single real token: every other key of that row is padding.
const LENGTHS = [9, 6, 3, 1]
const SEQ = 9

async function runOrt(bytes: Uint8Array, x: Batch): Promise<Record<string, ort.Tensor>> {
  const session = await ort.InferenceSession.create(bytes, { graphOptimizationLevel: 'all', logSeverityLevel: 3, intraOpNumThreads: 1 })
  try {
    return await session.run({
      input_ids: new ort.Tensor('int64', x.inputIds, [x.batch, x.seq]),
      attention_mask: new ort.Tensor('int64', x.attentionMask, [x.batch, x.seq]),
      token_type_ids: new ort.Tensor('int64', x.tokenTypeIds, [x.batch, x.seq]),
    })
  } finally {
    await session.release()
  }
}

function transposeLinears(w: WeightsMap): WeightsMap {
  const out: WeightsMap = new Map()
  for (const [name, t] of w) {
    const linear = name.endsWith('.weight') && !name.includes('embeddings') && !name.includes('LayerNorm')
    if (!linear) {
      out.set(name, t)
      continue
    }
    const [r, c] = t.shape
    const d = new Float32Array(r * c)
    for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) d[j * r + i] = t.data[i * c + j]
    out.set(name, { shape: [c, r], data: d })
  }
  return out
}

describe('exportOnnx', () => {
  const weights = randomWeights(SMALL_CONFIG, HEADS, 11)
  const x = randomBatch(SMALL_CONFIG, LENGTHS, SEQ, 12)
  const ref = referenceForward(SMALL_CONFIG, weights, HEADS, x)

  it('matches the float64 reference on padded batches with both token types', async () => {
    // The batch really has padding and type-1 tokens, and attention is far from uniform.
    expect(Array.from(x.attentionMask).filter((m) => m === 0n).length).toBeGreaterThan(10)
    expect(Array.from(x.tokenTypeIds).filter((t) => t === 1n).length).toBeGreaterThan(5)
    const out = await runOrt(exportOnnx(weights, SMALL_CONFIG), x)
    expect(Object.keys(out)).toEqual(['logits'])
    expect(out.logits.dims).toEqual([4, SEQ, 5])
    expect(maxAbsDiff(out.logits.data as Float32Array, ref.logits.default)).toBeLessThan(TOL)
    // Sanity: the reference is not trivially small.
    expect(Math.max(...Array.from(ref.logits.default, Math.abs))).toBeGreaterThan(1)
  })

  it('padding does not change the logits of real tokens', async () => {
    const bytes = exportOnnx(weights, SMALL_CONFIG)
    const full = await runOrt(bytes, x)
    // Same rows, different junk in the padded positions.
    const y: Batch = { ...x, inputIds: x.inputIds.slice(), tokenTypeIds: x.tokenTypeIds.slice() }
    for (let i = 0; i < y.inputIds.length; i++) {
      if (y.attentionMask[i] === 0n) {
        y.inputIds[i] = 7n
        y.tokenTypeIds[i] = 1n
      }
    }
    const junk = await runOrt(bytes, y)
    const a = full.logits.data as Float32Array
    const b = junk.logits.data as Float32Array
    for (let i = 0; i < x.batch * SEQ; i++) {
      if (x.attentionMask[i] === 0n) continue
      for (let k = 0; k < 5; k++) expect(Math.abs(a[i * 5 + k] - b[i * 5 + k])).toBeLessThan(1e-5)
    }
  })

  it('accepts HF config.json (snake_case) and [in, out] weights alike', async () => {
    const a = await runOrt(exportOnnx(weights, hfConfigJson(SMALL_CONFIG)), x)
    const b = await runOrt(exportOnnx(transposeLinears(weights), SMALL_CONFIG, { linearLayout: 'in_out' }), x)
    expect(maxAbsDiff(a.logits.data as Float32Array, ref.logits.default)).toBeLessThan(TOL)
    expect(maxAbsDiff(b.logits.data as Float32Array, ref.logits.default)).toBeLessThan(TOL)
  })

  it('writes a pure opset-17 ONNX graph with int64 dynamic inputs by default', () => {
    const m = onnx.ModelProto.decode(exportOnnx(weights, SMALL_CONFIG))
    const graph = m.graph as onnx.GraphProto
    const nodes = graph.node as onnx.NodeProto[]
    expect(m.opsetImport.map((o) => [o.domain, Number(o.version)])).toEqual([['', 17]])
    expect(nodes.every((n) => !n.domain)).toBe(true)
    const ops = new Set(nodes.map((n) => n.opType))
    for (const op of ['Gather', 'Range', 'LayerNormalization', 'Softmax', 'Erf', 'MatMul']) expect(ops.has(op)).toBe(true)
    for (const input of graph.input) {
      expect(input.type!.tensorType!.elemType).toBe(onnx.TensorProto.DataType.INT64)
      expect(input.type!.tensorType!.shape!.dim!.map((d) => d.dimParam)).toEqual(['batch', 'sequence'])
    }
    expect(graph.input.map((i) => i.name)).toEqual(['input_ids', 'attention_mask', 'token_type_ids'])
    const eps = nodes.filter((n) => n.opType === 'LayerNormalization').map((n) => n.attribute.find((a) => a.name === 'epsilon')!.f)
    expect(eps).toHaveLength(1 + 2 * SMALL_CONFIG.numHiddenLayers)
    for (const e of eps) expect(e).toBeCloseTo(1e-12, 20)
  })

  it('exports one output per head for a multi-task model', async () => {
    const w = randomWeights(SMALL_CONFIG, MULTI, 21)
    const r = referenceForward(SMALL_CONFIG, w, MULTI, x)
    const out = await runOrt(exportOnnx(w, SMALL_CONFIG), x)
    expect(Object.keys(out).sort()).toEqual(['logits', 'logits_chem', 'logits_disease'])
    expect(out.logits_chem.dims).toEqual([4, SEQ, 3])
    expect(out.logits_disease.dims).toEqual([4, SEQ, 4])
    expect(maxAbsDiff(out.logits.data as Float32Array, r.logits.default)).toBeLessThan(TOL)
    expect(maxAbsDiff(out.logits_chem.data as Float32Array, r.logits.chem)).toBeLessThan(TOL)
    expect(maxAbsDiff(out.logits_disease.data as Float32Array, r.logits.disease)).toBeLessThan(TOL)
    expect(findHeads(w, SMALL_CONFIG.hiddenSize).map((h) => h.output)).toEqual(['logits', 'logits_chem', 'logits_disease'])
  })

  it('exports a multi-task model without a default head', async () => {
    const w = randomWeights(SMALL_CONFIG, { chem: 3, gene: 2 }, 22)
    const out = await runOrt(exportOnnx(w, SMALL_CONFIG), x)
    expect(Object.keys(out).sort()).toEqual(['logits_chem', 'logits_gene'])
  })

  it('outputs every hidden state on request, matching the reference', async () => {
    const out = await runOrt(exportOnnx(weights, SMALL_CONFIG, { hiddenStates: true }), x)
    const L = SMALL_CONFIG.numHiddenLayers
    for (let i = 0; i <= L; i++) {
      const h = out[`hidden_state_${i}`]
      expect(h.dims).toEqual([4, SEQ, SMALL_CONFIG.hiddenSize])
      expect(maxAbsDiff(h.data as Float32Array, ref.hidden[i])).toBeLessThan(TOL)
    }
    expect(out[`hidden_state_${L + 1}`]).toBeUndefined()
  })

  it('the com.microsoft fused variants compute the same logits', async () => {
    for (const fused of [{ attention: true }, { skipLayerNorm: true }, { biasGelu: true }]) {
      const out = await runOrt(exportOnnx(weights, SMALL_CONFIG, { fused }), x)
      expect(maxAbsDiff(out.logits.data as Float32Array, ref.logits.default)).toBeLessThan(TOL)
    }
    const bytes = exportOnnx(weights, SMALL_CONFIG, { fused: true, hiddenStates: true })
    const m = onnx.ModelProto.decode(bytes)
    const msOps = new Set((m.graph as onnx.GraphProto).node.filter((n) => n.domain === 'com.microsoft').map((n) => n.opType))
    expect([...msOps].sort()).toEqual(['Attention', 'BiasGelu', 'SkipLayerNormalization'])
    const out = await runOrt(bytes, x)
    expect(maxAbsDiff(out.logits.data as Float32Array, ref.logits.default)).toBeLessThan(TOL)
    expect(maxAbsDiff(out.hidden_state_2.data as Float32Array, ref.hidden[2])).toBeLessThan(TOL)
  })

  it('names the missing or misshapen parameter', () => {
    const missing = new Map(weights)
    missing.delete('bert.encoder.layer.1.intermediate.dense.bias')
    expect(() => exportOnnx(missing, SMALL_CONFIG)).toThrow(/bert\.encoder\.layer\.1\.intermediate\.dense\.bias is missing/)
    const bad = new Map(weights)
    bad.set('bert.encoder.layer.0.attention.self.key.weight', { shape: [32, 16], data: new Float32Array(512) })
    expect(() => exportOnnx(bad, SMALL_CONFIG)).toThrow(/key\.weight has shape \[32,16\], expected \[32,32\]/)
    expect(() => exportOnnx(weights, { ...SMALL_CONFIG, hiddenAct: 'relu' })).toThrow(OnnxExportError)
    const headless = new Map([...weights].filter(([k]) => !k.startsWith('classifier')))
    expect(() => exportOnnx(headless, SMALL_CONFIG)).toThrow(/no classification head/)
  })
})

describe('onnxruntime vs the tfjs model', () => {
  it('gives the same logits as BertTokenClassifier.forward for every head', async () => {
    const tf = await useCpuBackend()
    const w = randomWeights(SMALL_CONFIG, MULTI, 31)
    const x = randomBatch(SMALL_CONFIG, LENGTHS, SEQ, 32)
    const out = await runOrt(exportOnnx(w, SMALL_CONFIG), x)
    const model = tfjsModelFromWeights(SMALL_CONFIG, w, MULTI)
    try {
      const toI32 = (a: BigInt64Array) => tf.tensor2d(Int32Array.from(a, Number), [x.batch, x.seq], 'int32')
      const res = model.forward({ inputIds: toI32(x.inputIds), attentionMask: toI32(x.attentionMask), tokenTypeIds: toI32(x.tokenTypeIds) })
      for (const [head, output] of [['default', 'logits'], ['chem', 'logits_chem'], ['disease', 'logits_disease']]) {
        const t = res.logits[head]
        expect(t.shape).toEqual(out[output].dims)
        expect(maxAbsDiff(t.dataSync() as Float32Array, out[output].data as Float32Array)).toBeLessThan(TOL)
        t.dispose()
      }
    } finally {
      model.dispose()
    }
  })
})
