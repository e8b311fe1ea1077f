// Exports a BERT token classifier (HuggingFace semantics and parameter names) to an ONNX graph
// that onnxruntime runs. Depends only on a plain weights map + config, not on tfjs.
//
// Graph semantics, identical to transformers' BertForTokenClassification in eval mode:
//   h0 = LN(word[ids] + position[Range(S)] + token_type[types]), eps = layer_norm_eps
//   per layer (post-LN):
//     scores = (Q·Kᵀ)/√d + (1 − mask)·float32_min    [B, heads, S, S], mask on keys
//     a = LN(x + (softmax(scores)·V)·Wo + bo)
//     x' = LN(a + gelu(a·Wi + bi)·Wo2 + bo2), gelu = 0.5·x·(1 + erf(x/√2))
//   logits = x_L·Wc + bc per head
//
// Speed: every Linear is MatMul with a pre-transposed [in, out] weight (prepacked by ORT at load)
// + Add. ORT's CPU optimiser turns the erf GELU with its bias into BiasGelu and folds the 1/√d
// Div into the QK MatMul; its Attention and SkipLayerNormalization fusions do not fire on a
// dynamic sequence axis (they want static dims), so `fused` can write those com.microsoft ops
// (and BiasGelu) itself: same maths, ORT-only model. On the CPU the pure graph measured as fast
// or faster (bench/infer.ts), so it stays the default.

import { createHash } from 'node:crypto'
import { createReadStream, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { removeStaleTempFiles, writeFileAtomic } from '../fs/atomic'
import { bertConfigFromHf, transpose2d } from '../model/checkpoint-files'
import { DEFAULT_HEAD, makeBertConfig } from '../model/config'
import { ONNX_FILE, OnnxFileError, readCheckpointFiles, readCheckpointWeights, type CheckpointFiles } from './checkpoint'
import { GraphBuilder, attr } from './graph'
import { charCnnLayer } from './char-cnn'
import { charCnnParamNames, type CharCnnConfig } from '../model/char-cnn'
import type { WeightsMap, WeightTensor } from './weights'

export type { WeightsMap, WeightTensor } from './weights'

/** The BERT hyper-parameters the graph needs (camelCase; see onnxConfigOf). */
export interface OnnxBertConfig {
  vocabSize: number
  hiddenSize: number
  numHiddenLayers: number
  numAttentionHeads: number
  intermediateSize: number
  maxPositionEmbeddings: number
  typeVocabSize: number
  layerNormEps: number
  hiddenAct: string
  /** The character channel (core/model/char-cnn.ts); absent: pieces only. */
  charCnn?: CharCnnConfig
}

export interface ExportOptions {
  /** Also output every hidden state: hidden_state_0 (embeddings) … hidden_state_L. */
  hiddenStates?: boolean
  /**
   * Layout of Linear weights in the map: 'out_in' = torch / safetensors / HF checkpoint
   * (default); 'in_out' = already transposed (the tfjs model's variables()).
   */
  linearLayout?: 'out_in' | 'in_out'
  /**
   * Write onnxruntime's com.microsoft fused operators (an ORT-only model): true = all of them,
   * or pick. Default: pure ONNX.
   */
  fused?: boolean | FusedOps
  /** Extra metadata_props entries (e.g. the checkpoint fingerprint). */
  metadata?: Record<string, string>
  /**
   * Operators for the int8 Linear weights of a quantized model (weights with `int8`); default
   * DEFAULT_INT8_MATMUL. Ignored by float models.
   */
  int8MatMul?: Int8MatMul
  /** How the int8 weights enter the graph; default DEFAULT_INT8_WEIGHTS (this CPU's). */
  int8Weights?: Int8Weights
}

/**
 * How an int8 model's weights enter the graph. 'int8': as stored, u8 × s8 products. 'uint8': each
 * weight + 128 with zero point 128, u8 × u8 products, the same values. On x86 CPUs without VNNI,
 * onnxruntime multiplies u8 × s8 with VPMADDUBSW, which adds pairs of products into 16 bits with
 * saturation: on an AMD EPYC (AVX2) the int8 test model's logits moved 8–10 % of their range
 * against 1 % with VNNI (test/unit/onnx/quantize.test.ts). Its u8 × u8 kernel widens to 16 bits
 * first and does not saturate.
 */
export type Int8Weights = 'int8' | 'uint8'

/** Whether this CPU has VNNI (x86 avx512_vnni / avx_vnni), from /proc/cpuinfo; null where that cannot be read (not Linux). */
export function cpuHasVnni(cpuinfo: () => string = () => readFileSync('/proc/cpuinfo', 'utf8')): boolean | null {
  let text: string
  try {
    text = cpuinfo()
  } catch {
    return null
  }
  const flags = /^flags\s*:(.*)$/m.exec(text)?.[1]
  if (flags === undefined) return null
  return /\b(?:avx512_vnni|avx_vnni)\b/.test(flags)
}

/** u8 × s8 only where VNNI is known to be there (its fastest kernel); u8 × u8 elsewhere, which is exact everywhere. */
export const DEFAULT_INT8_WEIGHTS: Int8Weights = cpuHasVnni() === true ? 'int8' : 'uint8'

/**
 * How an int8 Linear runs, activations quantized per call (dynamic, asymmetric uint8) against
 * per-output-channel int8 weights:
 *  - DynamicQuantizeMatMul: one com.microsoft operator (quantize A, int8 GEMM, scale, bias);
 *  - MatMulInteger: the standard-ONNX chain DynamicQuantizeLinear → MatMulInteger → Cast →
 *    Mul(a_scale·b_scale) → Add(bias), which ORT's optimiser may fuse itself;
 *  - MatMulIntegerToFloat: DynamicQuantizeLinear → com.microsoft.MatMulIntegerToFloat.
 */
export type Int8MatMul = 'DynamicQuantizeMatMul' | 'MatMulInteger' | 'MatMulIntegerToFloat'
export const INT8_MATMULS: readonly Int8MatMul[] = ['DynamicQuantizeMatMul', 'MatMulInteger', 'MatMulIntegerToFloat']
/** Measured fastest on the CPU provider with the same accuracy (bench/infer.ts --int8). */
export const DEFAULT_INT8_MATMUL: Int8MatMul = 'DynamicQuantizeMatMul'

/** onnxruntime contrib operators the export can write instead of their ONNX subgraphs. */
export interface FusedOps {
  /** com.microsoft.Attention: packed QKV projection + masked softmax attention. */
  attention?: boolean
  /** com.microsoft.SkipLayerNormalization: LN(x + residual + bias). */
  skipLayerNorm?: boolean
  /** com.microsoft.BiasGelu: exact erf GELU of x + bias. */
  biasGelu?: boolean
}

export function resolveFusion(f: boolean | FusedOps | undefined): Required<FusedOps> {
  if (f === true) return { attention: true, skipLayerNorm: true, biasGelu: true }
  if (!f) return { attention: false, skipLayerNorm: false, biasGelu: false }
  return { attention: !!f.attention, skipLayerNorm: !!f.skipLayerNorm, biasGelu: !!f.biasGelu }
}

/** Stable text for metadata and fingerprints: 'none' or e.g. 'attention+skipLayerNorm'. */
export function fusionKey(f: Required<FusedOps>): string {
  const on = (Object.keys(f) as Array<keyof FusedOps>).filter((k) => f[k])
  return on.length ? on.join('+') : 'none'
}

/** One classification head of the exported model. */
export interface OnnxHead {
  /** 'default' for classifier.*, else the <name> of classifiers.<name>.* */
  name: string
  /** Graph output: 'logits' for the default head, 'logits_<name>' for the others. */
  output: string
  numLabels: number
}

export const ONNX_OPSET = 17
/** Bump when the graph changes, so exports by an older build are regenerated. */
export const EXPORTER_VERSION = '1'
export const META_FINGERPRINT = 'fastbioner.fingerprint'
export const META_HEADS = 'fastbioner.heads'
export const META_EXPORTER = 'fastbioner.exporter_version'
export const META_HIDDEN_STATES = 'fastbioner.hidden_states'
export const META_FUSED = 'fastbioner.fused'
/** 'none' for a float graph, else the Int8MatMul the int8 Linears use. */
export const META_INT8 = 'fastbioner.int8'

/** torch.finfo(torch.float32).min, HF's additive mask value. */
const FLOAT32_MIN = -3.4028234663852886e38

export class OnnxExportError extends Error {
  override name = 'OnnxExportError'
}

/**
 * Accepts HF config.json (snake_case) or the tfjs model's config (camelCase) and returns the
 * fields the exporter needs, checked.
 */
/**
 * The hyper-parameters the graph needs, from a HuggingFace config.json object (read by the one HF
 * config parser, bertConfigFromHf) or from a camelCase config (BertConfig, test configs).
 * Throws OnnxExportError naming the problem.
 */
export function onnxConfigOf(config: OnnxBertConfig | Record<string, unknown>): OnnxBertConfig {
  try {
    if ('hidden_size' in config || 'model_type' in config) return bertConfigFromHf(config as Record<string, unknown>)
    const c = config as OnnxBertConfig
    if (c.hiddenAct !== 'gelu') throw new Error(`BERT config: hidden_act '${c.hiddenAct}' is not supported by the ONNX export (only 'gelu', exact erf)`)
    return makeBertConfig({ ...c, hiddenAct: 'gelu' }) // validated, HF's defaults for what is left out
  } catch (e) {
    throw e instanceof OnnxExportError ? e : new OnnxExportError((e as Error).message)
  }
}

/** Heads present in the weights: classifier.* → 'default', classifiers.<name>.* → <name>. */
export function findHeads(weights: WeightsMap, hiddenSize: number, layout: 'out_in' | 'in_out' = 'out_in'): OnnxHead[] {
  const heads: OnnxHead[] = []
  const add = (name: string, prefix: string) => {
    const w = weights.get(`${prefix}.weight`)!
    if (w.shape.length !== 2) throw new OnnxExportError(`${prefix}.weight must be 2-D, got [${w.shape}]`)
    const numLabels = layout === 'out_in' ? w.shape[0] : w.shape[1]
    const inDim = layout === 'out_in' ? w.shape[1] : w.shape[0]
    if (inDim !== hiddenSize) throw new OnnxExportError(`${prefix}.weight has shape [${w.shape}], which does not take hidden size ${hiddenSize}`)
    heads.push({ name, output: name === DEFAULT_HEAD ? 'logits' : `logits_${name}`, numLabels })
  }
  if (weights.has('classifier.weight')) add(DEFAULT_HEAD, 'classifier')
  const named = [...weights.keys()]
    .map((k) => /^classifiers\.([^.]+)\.weight$/.exec(k)?.[1])
    .filter((n): n is string => n != null)
    .sort()
  for (const n of named) {
    if (n === DEFAULT_HEAD) throw new OnnxExportError(`head name '${DEFAULT_HEAD}' is reserved for classifier.*`)
    if (!/^[A-Za-z0-9_-]+$/.test(n)) throw new OnnxExportError(`head name '${n}' must be letters, digits, '_' or '-'`)
    add(n, `classifiers.${n}`)
  }
  return heads
}

class Weights {
  private readonly prefix: string
  constructor(
    private readonly map: WeightsMap,
    private readonly layout: 'out_in' | 'in_out',
  ) {
    // HF BertForTokenClassification prefixes the encoder with 'bert.'; a bare BertModel does not.
    this.prefix = map.has('bert.embeddings.word_embeddings.weight') ? 'bert.' : ''
  }

  get(name: string, shape: number[], encoder = true): WeightTensor {
    const full = encoder ? this.prefix + name : name
    const w = this.map.get(full)
    if (!w) throw new OnnxExportError(`model parameter ${full} is missing`)
    const size = shape.reduce((a, b) => a * b, 1)
    if (w.shape.length !== shape.length || w.shape.some((d, i) => d !== shape[i]) || w.data.length !== size) {
      throw new OnnxExportError(`model parameter ${full} has shape [${w.shape}], expected [${shape}]`)
    }
    if (!(w.data instanceof Float32Array)) throw new OnnxExportError(`model parameter ${full} is not float32`)
    return w
  }

  /** True when the checkpoint stores this parameter as int8 rows. */
  isInt8(name: string, encoder = true): boolean {
    return !!this.map.get(encoder ? this.prefix + name : name)?.int8
  }

  /** A Linear weight as [in, out] for MatMul, whatever the stored layout. */
  linear(name: string, inDim: number, outDim: number, encoder = true): Float32Array {
    if (this.layout === 'in_out') return this.get(name, [inDim, outDim], encoder).data
    return transpose2d(this.get(name, [outDim, inDim], encoder).data, outDim, inDim)
  }
}

/** Builds the ONNX model; returns the serialised protobuf. */
export function exportOnnx(weights: WeightsMap, config: OnnxBertConfig | Record<string, unknown>, opts: ExportOptions = {}): Uint8Array {
  const c = onnxConfigOf(config)
  const layout = opts.linearLayout ?? 'out_in'
  const heads = findHeads(weights, c.hiddenSize, layout)
  if (heads.length === 0 && !opts.hiddenStates) {
    throw new OnnxExportError('the model has no classification head (classifier.weight or classifiers.<name>.weight); nothing to output')
  }
  const W = new Weights(weights, layout)
  const H = c.hiddenSize
  const I = c.intermediateSize
  const nH = c.numAttentionHeads
  const d = H / nH
  const eps = c.layerNormEps
  const fuse = resolveFusion(opts.fused)
  const anyFused = fuse.attention || fuse.skipLayerNorm || fuse.biasGelu
  const int8 = [...weights.values()].some((w) => w.int8)
  const int8Op = opts.int8MatMul ?? DEFAULT_INT8_MATMUL
  const unsignedWeights = (opts.int8Weights ?? DEFAULT_INT8_WEIGHTS) === 'uint8'
  if (int8 && anyFused) throw new OnnxExportError(`the fused operators (${fusionKey(fuse)}) are not written for an int8 model; export it unfused`)
  if (int8 && layout !== 'out_in') throw new OnnxExportError("int8 weights are read in the checkpoint's [out, in] layout only")
  if (!INT8_MATMULS.includes(int8Op)) throw new OnnxExportError(`int8 matmul '${int8Op}' is not one of ${INT8_MATMULS.join(', ')}`)
  const g = new GraphBuilder('fastbioner_bert_token_classifier')

  const inputIds = g.input('input_ids', 'int64', ['batch', 'sequence'])
  const attentionMask = g.input('attention_mask', 'int64', ['batch', 'sequence'])
  const tokenTypeIds = g.input('token_type_ids', 'int64', ['batch', 'sequence'])

  const vec = (name: string, n: number) => g.initializer(name, { dims: [n], data: W.get(name, [n]).data })
  const MS = 'com.microsoft'
  const linear = (name: string, x: string, inDim: number, outDim: number, encoder = true): string => {
    if (W.isInt8(`${name}.weight`, encoder)) return int8Linear(name, x, inDim, outDim, encoder)
    const w = g.initializer(`${name}.weight`, { dims: [inDim, outDim], data: W.linear(`${name}.weight`, inDim, outDim, encoder) })
    const b = g.initializer(`${name}.bias`, { dims: [outDim], data: W.get(`${name}.bias`, [outDim], encoder).data })
    return g.node('Add', [g.node('MatMul', [x, w], {}, { name: `${name}/MatMul` }), b], {}, { name: `${name}/Add` })
  }
  // x·W + b with int8 W [in, out] (per-output-channel scales [out]) and x quantized per call.
  const int8Linear = (name: string, x: string, inDim: number, outDim: number, encoder: boolean): string => {
    const rows = W.get(`${name}.weight`, [outDim, inDim], encoder).int8!
    const signed = transposeInt8(rows.values, outDim, inDim)
    const wq = g.initializer(`${name}.weight_int8`, { dims: [inDim, outDim], data: unsignedWeights ? Uint8Array.from(signed, (v) => v + 128) : signed })
    // With uint8 weights: their zero point, 128 (Int8Weights).
    const wzp = unsignedWeights ? g.initializer(`${name}.weight_zero_point`, { dims: [], data: Uint8Array.of(128) }) : ''
    const ws = g.initializer(`${name}.weight_scale`, { dims: [outDim], data: rows.scale })
    const b = g.initializer(`${name}.bias`, { dims: [outDim], data: W.get(`${name}.bias`, [outDim], encoder).data })
    if (int8Op === 'DynamicQuantizeMatMul') {
      return g.node('DynamicQuantizeMatMul', [x, wq, ws, wzp, b], {}, { name: `${name}/DynamicQuantizeMatMul`, domain: MS })
    }
    const [xq, xs, xzp] = g.nodeOutputs('DynamicQuantizeLinear', [x], {}, { name: `${name}/DynamicQuantizeLinear`, outputs: 3 }) // uint8 [B, S, in], scalar, scalar
    if (int8Op === 'MatMulIntegerToFloat') {
      return g.node('MatMulIntegerToFloat', [xq, wq, xs, ws, xzp, wzp, b], {}, { name: `${name}/MatMulIntegerToFloat`, domain: MS })
    }
    const acc = g.node('MatMulInteger', [xq, wq, xzp, ...(wzp ? [wzp] : [])], {}, { name: `${name}/MatMulInteger` }) // int32 [B, S, out]
    const scale = g.node('Mul', [xs, ws], {}, { name: `${name}/scale` }) // [out]
    const y = g.node('Mul', [g.node('Cast', [acc], { to: attr.int(1) }, { name: `${name}/Cast` }), scale], {}, { name: `${name}/dequantize` })
    return g.node('Add', [y, b], {}, { name: `${name}/Add` })
  }
  const layerNorm = (name: string, x: string): string =>
    g.node('LayerNormalization', [x, vec(`${name}.weight`, H), vec(`${name}.bias`, H)], { axis: attr.int(-1), epsilon: attr.float(eps) }, { name })

  // ---- embeddings ------------------------------------------------------------------------
  // An embedding lookup; an int8 table gathers int8 rows and their scales, then dequantizes
  // the few rows it took: row·scale[id], so the sums and LayerNorm stay float32.
  const embed = (name: string, rows: number, ids: string, what: string): string => {
    const t = W.get(name, [rows, H])
    if (!t.int8) return g.node('Gather', [g.initializer(name, { dims: [rows, H], data: t.data }), ids], {}, { name: `embeddings/${what}` })
    const q = g.node('Gather', [g.initializer(`${name}_int8`, { dims: [rows, H], data: t.int8.values }), ids], {}, { name: `embeddings/${what}` }) // int8 [..., H]
    const s = g.node('Gather', [g.initializer(`${name}_scale`, { dims: [rows, 1], data: t.int8.scale }), ids], {}, { name: `embeddings/${what}_scale` }) // [..., 1]
    return g.node('Mul', [g.node('Cast', [q], { to: attr.int(1) }, { name: `embeddings/${what}_cast` }), s], {}, { name: `embeddings/${what}_dequantize` })
  }
  const words = embed('embeddings.word_embeddings.weight', c.vocabSize, inputIds, 'word') // [B, S, H]
  const types = embed('embeddings.token_type_embeddings.weight', c.typeVocabSize, tokenTypeIds, 'token_type') // [B, S, H]
  const seqLen = g.node('Gather', [g.node('Shape', [inputIds], {}, { name: 'embeddings/shape' }), g.int64s([1], [])], { axis: attr.int(0) }, { name: 'embeddings/seq_len' }) // scalar
  const positionIds = g.node('Range', [g.int64s([0], []), seqLen, g.int64s([1], [])], {}, { name: 'embeddings/position_ids' }) // [S]
  const positions = embed('embeddings.position_embeddings.weight', c.maxPositionEmbeddings, positionIds, 'position') // [S, H]
  let embSum = g.node('Add', [g.node('Add', [words, types], {}, { name: 'embeddings/add_types' }), positions], {}, { name: 'embeddings/add_positions' })
  if (c.charCnn) {
    // The character channel (core/model/char-cnn.ts): the CNN of core/onnx/char-cnn.ts over
    // initializers, its projection zero where a row has no characters. Its tensors stay float32
    // in an int8 model (a few thousand values).
    const cc = c.charCnn
    const n = charCnnParamNames('')
    const param = (name: string, shape: number[]) =>
      g.initializer(name, { dims: shape, data: name === `${n.conv}.weight` ? W.linear(name, shape[0], shape[1]) : W.get(name, shape).data })
    const layer = charCnnLayer(g, param, cc, { embeddings: n.embeddings, conv: n.conv }, 'sequence')
    const scaled = g.node('Mul', [layer.features, g.float(cc.featureScale ?? 1)], {}, { name: 'embeddings/char_cnn/feature_scale' }) // [B, S, F + F_s]
    const projected = linear(n.projection, scaled, cc.charFilters + cc.shapeFlags, H) // [B, S, H]
    const first = g.node('Slice', [layer.charIds, g.int64s([0]), g.int64s([1]), g.int64s([2])], {}, { name: 'embeddings/char_cnn/first_char' }) // [B, S, 1]
    const hasChars = g.node('Cast', [g.node('Not', [g.node('Equal', [first, g.int64s([0], [])])])], { to: attr.int(1) }, { name: 'embeddings/char_cnn/has_chars' })
    embSum = g.node('Add', [embSum, g.node('Mul', [projected, hasChars], {}, { name: 'embeddings/char_cnn/mask' })], {}, { name: 'embeddings/add_chars' })
  }
  let x = layerNorm('embeddings.LayerNorm', embSum) // [B, S, H]
  const hidden: string[] = [x]

  // ---- additive key mask, shared by all layers: (1 − mask)·float32_min  [B, 1, 1, S] --------
  let maskBias = ''
  let maskInt32 = ''
  if (fuse.attention) {
    // com.microsoft.Attention takes the raw [B, S] 1/0 mask as int32 and adds
    // (1 − mask)·mask_filter_value itself; mask_filter_value = float32 min as HF.
    maskInt32 = g.node('Cast', [attentionMask], { to: attr.int(6) }, { name: 'mask/int32' })
  } else {
    const maskF = g.node('Cast', [attentionMask], { to: attr.int(1) }, { name: 'mask/float' })
    const inv = g.node('Sub', [g.float(1), maskF], {}, { name: 'mask/invert' })
    const bias = g.node('Mul', [inv, g.float(FLOAT32_MIN)], {}, { name: 'mask/scale' })
    maskBias = g.node('Unsqueeze', [bias, g.int64s([1, 2])], {}, { name: 'mask/unsqueeze' }) // [B, 1, 1, S]
  }

  /** LN(residual + x·W + b): SkipLayerNormalization or MatMul, Add, Add, LayerNormalization. */
  const denseResidualNorm = (dense: string, norm: string, inp: string, inDim: number, residual: string): string => {
    if (fuse.skipLayerNorm) {
      const w = g.initializer(`${dense}.weight`, { dims: [inDim, H], data: W.linear(`${dense}.weight`, inDim, H) })
      const y = g.node('MatMul', [inp, w], {}, { name: `${dense}/MatMul` })
      const inputs = [y, residual, vec(`${norm}.weight`, H), vec(`${norm}.bias`, H), vec(`${dense}.bias`, H)]
      return g.node('SkipLayerNormalization', inputs, { epsilon: attr.float(eps) }, { name: `${norm}/SkipLayerNorm`, domain: MS })
    }
    const y = linear(dense, inp, inDim, H)
    return layerNorm(norm, g.node('Add', [y, residual], {}, { name: `${norm}/residual` }))
  }

  for (let l = 0; l < c.numHiddenLayers; l++) {
    const p = `encoder.layer.${l}`
    let ctx: string // [B, S, H]
    if (fuse.attention) {
      ctx = fusedAttention(g, W, p, x, maskInt32, H, nH)
    } else {
      // Constants are cached by value in the builder: one initializer each for the whole graph.
      const headShape = g.int64s([0, 0, nH, d])
      const mergedShape = g.int64s([0, 0, H])
      const sqrtD = g.float(Math.sqrt(d))
      const split = (name: string, perm: number[]) => {
        const y = linear(`${p}.attention.self.${name}`, x, H, H)
        const r = g.node('Reshape', [y, headShape], {}, { name: `${p}.attention.self.${name}/Reshape` }) // [B, S, h, d]
        return g.node('Transpose', [r], { perm: attr.ints(perm) }, { name: `${p}.attention.self.${name}/Transpose` })
      }
      const q = split('query', [0, 2, 1, 3]) // [B, h, S, d]
      const kT = split('key', [0, 2, 3, 1]) // [B, h, d, S]
      const v = split('value', [0, 2, 1, 3]) // [B, h, S, d]
      const qk = g.node('MatMul', [q, kT], {}, { name: `${p}.attention.self/QK` }) // [B, h, S, S]
      const scaled = g.node('Div', [qk, sqrtD], {}, { name: `${p}.attention.self/scale` })
      const masked = g.node('Add', [scaled, maskBias], {}, { name: `${p}.attention.self/mask` })
      const probs = g.node('Softmax', [masked], { axis: attr.int(-1) }, { name: `${p}.attention.self/Softmax` })
      const ctx4 = g.node('MatMul', [probs, v], {}, { name: `${p}.attention.self/PV` }) // [B, h, S, d]
      const ctxT = g.node('Transpose', [ctx4], { perm: attr.ints([0, 2, 1, 3]) }, { name: `${p}.attention.self/merge_transpose` })
      ctx = g.node('Reshape', [ctxT, mergedShape], {}, { name: `${p}.attention.self/merge_reshape` })
    }
    const a = denseResidualNorm(`${p}.attention.output.dense`, `${p}.attention.output.LayerNorm`, ctx, H, x)

    let act: string // [B, S, I]
    if (fuse.biasGelu) {
      const wi = g.initializer(`${p}.intermediate.dense.weight`, { dims: [H, I], data: W.linear(`${p}.intermediate.dense.weight`, H, I) })
      const pre = g.node('MatMul', [a, wi], {}, { name: `${p}.intermediate.dense/MatMul` })
      act = g.node('BiasGelu', [pre, vec(`${p}.intermediate.dense.bias`, I)], {}, { name: `${p}.intermediate/BiasGelu`, domain: MS }) // exact erf GELU
    } else {
      const inter = linear(`${p}.intermediate.dense`, a, H, I)
      // 0.5·x·(1 + erf(x/√2)) in the order torch.onnx emits it, which ORT's GeluFusion matches.
      const erf = g.node('Erf', [g.node('Div', [inter, g.float(Math.SQRT2)], {}, { name: `${p}.intermediate/gelu_div` })], {}, { name: `${p}.intermediate/gelu_erf` })
      const onePlus = g.node('Add', [erf, g.float(1)], {}, { name: `${p}.intermediate/gelu_add` })
      act = g.node('Mul', [g.node('Mul', [inter, onePlus], {}, { name: `${p}.intermediate/gelu_mul` }), g.float(0.5)], {}, { name: `${p}.intermediate/gelu_half` })
    }
    x = denseResidualNorm(`${p}.output.dense`, `${p}.output.LayerNorm`, act, I, a)
    hidden.push(x)
  }

  for (const h of heads) {
    const prefix = h.name === DEFAULT_HEAD ? 'classifier' : `classifiers.${h.name}`
    const logits = linear(prefix, x, H, h.numLabels, false)
    g.output(h.output, logits, 'float32', ['batch', 'sequence', h.numLabels])
  }
  if (opts.hiddenStates) {
    hidden.forEach((hs, i) => g.output(`hidden_state_${i}`, hs, 'float32', ['batch', 'sequence', H]))
  }

  const metadata: Record<string, string> = {
    [META_EXPORTER]: EXPORTER_VERSION,
    [META_HEADS]: JSON.stringify(heads),
    [META_HIDDEN_STATES]: String(!!opts.hiddenStates),
    [META_FUSED]: fusionKey(fuse),
    [META_INT8]: int8 ? `${int8Op}${unsignedWeights ? ' (uint8 weights)' : ''}` : 'none',
    ...opts.metadata,
  }
  return g.encode({
    opset: ONNX_OPSET,
    extraOpsets: anyFused || (int8 && int8Op !== 'MatMulInteger') ? { 'com.microsoft': 1 } : undefined,
    producerName: 'fastbioner',
    producerVersion: EXPORTER_VERSION,
    docString: `BERT token classifier${int8 ? ` (int8 weights, ${int8Op})` : ''}: ${c.numHiddenLayers} layers × ${H}, ${nH} heads; heads ${heads.map((h) => h.name).join(', ') || '(none)'}`,
    metadata,
  })
}

/** Transposes a row-major [rows, cols] int8 matrix. */
function transposeInt8(data: Int8Array, rows: number, cols: number): Int8Array {
  const out = new Int8Array(rows * cols)
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c]
  return out
}

/** com.microsoft.Attention with packed QKV weights [H, 3H], bias [3H] and the 2-D key mask. */
function fusedAttention(g: GraphBuilder, W: Weights, p: string, x: string, maskIndex: string, H: number, nH: number): string {
  const q = W.linear(`${p}.attention.self.query.weight`, H, H)
  const k = W.linear(`${p}.attention.self.key.weight`, H, H)
  const v = W.linear(`${p}.attention.self.value.weight`, H, H)
  const packed = new Float32Array(H * 3 * H)
  for (let r = 0; r < H; r++) {
    packed.set(q.subarray(r * H, (r + 1) * H), r * 3 * H)
    packed.set(k.subarray(r * H, (r + 1) * H), r * 3 * H + H)
    packed.set(v.subarray(r * H, (r + 1) * H), r * 3 * H + 2 * H)
  }
  const bias = new Float32Array(3 * H)
  bias.set(W.get(`${p}.attention.self.query.bias`, [H]).data, 0)
  bias.set(W.get(`${p}.attention.self.key.bias`, [H]).data, H)
  bias.set(W.get(`${p}.attention.self.value.bias`, [H]).data, 2 * H)
  const w = g.initializer(`${p}.attention.self.qkv.weight`, { dims: [H, 3 * H], data: packed })
  const b = g.initializer(`${p}.attention.self.qkv.bias`, { dims: [3 * H], data: bias })
  return g.node('Attention', [x, w, b, maskIndex], { num_heads: attr.int(nH), mask_filter_value: attr.float(FLOAT32_MIN) }, { name: `${p}.attention.self/Attention`, domain: 'com.microsoft' })
}

// ---- checkpoint directory → model.onnx ------------------------------------------------------

export interface CheckpointExportOptions {
  hiddenStates?: boolean
  fused?: boolean | FusedOps
  /** For an int8 model folder; default DEFAULT_INT8_MATMUL. */
  int8MatMul?: Int8MatMul
  /** false: leave the folder as it is and return the graph in memory instead. Default true. */
  write?: boolean
}

export interface CheckpointExportResult {
  path: string
  fingerprint: string
  heads: OnnxHead[]
  bytes: number
  /** The graph, when it was not written (write: false). */
  model?: Uint8Array
}

export function optionsKey(opts: CheckpointExportOptions): string {
  return JSON.stringify({ hiddenStates: !!opts.hiddenStates, fused: fusionKey(resolveFusion(opts.fused)) })
}

/**
 * sha256 over the exporter version, the export options, config.json and the weight files: any
 * change to the weights, the config or the graph code gives a new fingerprint. It names content
 * only: anyone holding the files can compute it, so it never vouches for a graph it is written in.
 */
/** Content fingerprint of a checkpoint folder's config and weights (what model.onnx records). */
export async function checkpointFingerprint(dir: string): Promise<string> {
  const files = readCheckpointFiles(dir)
  return fingerprintFiles(files.configBytes, files.weightPaths, {})
}

function fingerprintHash(configBytes: Uint8Array, opts: CheckpointExportOptions) {
  const h = createHash('sha256')
  h.update(`fastbioner-onnx:${EXPORTER_VERSION}:${optionsKey(opts)}\n`)
  h.update(configBytes)
  return h
}

const weightFileHeader = (path: string): string => `\n${path.split(/[\\/]/).pop()}\n`

async function fingerprintFiles(configBytes: Uint8Array, weightPaths: string[], opts: CheckpointExportOptions): Promise<string> {
  const h = fingerprintHash(configBytes, opts)
  for (const path of weightPaths) {
    h.update(weightFileHeader(path))
    await new Promise<void>((resolve, reject) => {
      const s = createReadStream(path, { highWaterMark: 1 << 22 })
      s.on('data', (chunk) => h.update(chunk))
      s.on('error', (e) => reject(new OnnxFileError(path, `cannot read the model weights (${(e as NodeJS.ErrnoException).code ?? e.message})`)))
      s.on('end', () => resolve())
    })
  }
  return h.digest('hex')
}

/** The same fingerprint over weight files already in memory (`bytes[i]` holds `files.weightPaths[i]`). */
export function fingerprintOfBytes(files: CheckpointFiles, bytes: Uint8Array[], opts: CheckpointExportOptions): string {
  const h = fingerprintHash(files.configBytes, opts)
  files.weightPaths.forEach((path, i) => h.update(weightFileHeader(path)).update(bytes[i]!))
  return h.digest('hex')
}

/** The graph of a checkpoint's weights, its fingerprint in the metadata. Errors name the folder. */
export function checkpointGraph(files: CheckpointFiles, weights: WeightsMap, fingerprint: string, opts: CheckpointExportOptions): { model: Uint8Array; heads: OnnxHead[] } {
  try {
    const heads = findHeads(weights, onnxConfigOf(files.config).hiddenSize)
    const model = exportOnnx(weights, files.config, {
      hiddenStates: opts.hiddenStates,
      fused: opts.fused,
      int8MatMul: opts.int8MatMul,
      metadata: { [META_FINGERPRINT]: fingerprint },
    })
    return { model, heads }
  } catch (e) {
    if (e instanceof OnnxExportError) throw new OnnxExportError(`${files.dir}: ${e.message}`)
    throw e
  }
}

/**
 * Exports the checkpoint in `dir` (HF layout) to dir/model.onnx, atomically (temp + rename), for
 * a folder we are writing (quantize's output). What runs is never that file: see graph-cache.ts.
 */
export async function exportCheckpointToOnnx(dir: string, opts: CheckpointExportOptions = {}): Promise<CheckpointExportResult> {
  const files = readCheckpointFiles(dir)
  const fingerprint = await fingerprintFiles(files.configBytes, files.weightPaths, opts)
  const { model, heads } = checkpointGraph(files, readCheckpointWeights(files.weightPaths), fingerprint, opts)
  const path = join(dir, ONNX_FILE)
  if (opts.write === false) return { path, fingerprint, heads, bytes: model.length, model }
  removeStaleTempFiles(dir)
  try {
    writeFileAtomic(path, [model])
  } catch (e) {
    throw new OnnxFileError(path, `cannot write the ONNX export (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`)
  }
  return { path, fingerprint, heads, bytes: model.length }
}
