// Training graphs for onnxruntime: forward + loss + backward of the BERT encoder in standard ONNX
// ops (opset 17), so that onnxruntime-node, which has no training API and no *Grad kernels, runs
// a whole training step with the same MLAS kernels that make its inference fast.
//
// Parameters are graph INPUTS (in the tfjs layout: Linear weights [in, out], HF names as the tfjs
// variables carry them) so the optimizer can update them between runs without rebuilding the
// session. Outputs: `loss` (the sum of the loss terms), one `loss.<term>` per term, and one
// `grad.<parameter>` per parameter.
//
// Forward semantics are those of core/onnx/export.ts and core/model/bert.ts (HF, post-LN, erf
// GELU, float32-min key mask). The backward pass is written block by block:
//   Linear y = x·W + b:   dW = xᵀ·dy (Gemm transA), db = Σ_rows dy, dx = dy·Wᵀ (Gemm transB)
//   LayerNorm:            dx = rstd·(ĝ − mean(ĝ) − x̂·mean(ĝ·x̂)), ĝ = dy·γ; dγ = Σ dy·x̂, dβ = Σ dy
//   GELU x·Φ(x):          dx = dy·(Φ(x) + x·φ(x)), written in u = x/√2 (see the FFN)
//   softmax p:            ds = p·(dp − Σ dp·p)
//   log-softmax CE:       dlogits = (softmax − onehot)·keep / count
//   embeddings:           ScatterND(zeros, ids, rows, reduction 'add'); positions: Σ over batch
//   character channel:    ./char-cnn, its projection a Linear, times the has-characters mask
// Dropout is multiplication by a mask given as an input (values 0 or 1/(1−p)), drawn from the
// project's seeded RNG in the order the tfjs model draws them (see dropoutMasks), so both engines
// see identical masks.

import { GraphBuilder, attr, type Attr } from './graph'
import { ONNX_OPSET, type OnnxBertConfig } from './export'
import { charCnnLayer } from './char-cnn'
import { charCnnParamNames } from '../model/char-cnn'

/** torch.finfo(torch.float32).min, HF's additive mask value. */
const FLOAT32_MIN = -3.4028234663852886e38
const INV_SQRT_2PI = 1 / Math.sqrt(2 * Math.PI)
const LN_2_OVER_SQRT_PI = Math.log(2 / Math.sqrt(Math.PI))

/** Which dropout sites exist in the graph (a site with p = 0 has no mask input). */
export interface DropoutSites {
  /** Embedding output, attention output, FFN output ([N, H] masks). */
  hidden: boolean
  /** Attention probabilities ([B, heads, S, S] masks). */
  attention: boolean
  /** Classifier / MLM-head input ([N, H] mask). */
  classifier: boolean
}

export const NO_DROPOUT: DropoutSites = { hidden: false, attention: false, classifier: false }

export interface GraphBuildOptions {
  /**
   * Use onnxruntime's com.microsoft operators where they save work (FusedMatMul for the attention's
   * transposed and scaled products); default true: every graph here runs on onnxruntime, whose
   * CPU and CUDA providers have them. False: standard ONNX operators only (parity tests).
   */
  contribOps?: boolean
}

export interface ParamSpec {
  name: string
  /** tfjs layout: Linear weights [in, out]. */
  shape: number[]
  /** The graph's declaration of the input and its gradient when it differs (symbolic dimensions). */
  declared?: Array<number | string>
}

/** One token-classification head in a cross-entropy loss. */
export interface CeHead {
  /** 'default' → classifier.*, else classifiers.<name>.* */
  name: string
  numLabels: number
  /**
   * The head's loss is computed on the host (a CRF, core/model/crf): instead of labels the graph
   * takes `dlogits.<name>` [batch·sequence, C], d loss / d logits from the host, and backpropagates
   * it; the graph's `loss` leaves this head out.
   */
  lossOnHost?: boolean
}

export const dlogitsInput = (head: string): string => `dlogits.${head}`
export const logitsOutput = (head: string): string => `logits.${head}`

export interface TrainGraph {
  model: Uint8Array
  /** Parameter inputs in graph order; the gradient of p is output `grad.<p.name>`. */
  params: ParamSpec[]
  /** Loss-term outputs besides `loss`. */
  lossTerms: string[]
  /** Scalar outputs that are not losses (counts for metrics), reported with the terms. */
  metricOutputs?: string[]
  /** Mask inputs in the order dropoutMasks fills them. */
  dropoutInputs: string[]
  /** Other float inputs the loss needs (teacher targets), name → dims. */
  extraInputs: Array<{ name: string; dims: (number | string)[]; type: 'float32' | 'int64' }>
  /**
   * Parameters (embedding tables) whose gradient comes as the rows a batch reads instead of the
   * whole table: output `grad_rows.<param>` [N, width], row k the gradient of table row ids[k],
   * ids being the int64 input named `ids` (flattened); rows of one id add up. Their ‖g‖² is not
   * in grad_norm_sq (duplicate ids: only the summed rows give it). No `grad.<param>` output.
   */
  rowGrads?: Array<{ param: string; ids: string }>
}

export const gradName = (param: string): string => `grad.${param}`
export const rowGradName = (param: string): string => `grad_rows.${param}`
/** Output: Σ over parameters of ‖gradient‖². */
export const GRAD_NORM_SQ = 'grad_norm_sq'

function headPrefix(head: string): string {
  return head === 'default' ? 'classifier' : `classifiers.${head}`
}

/**
 * The row length (in floats) at which to store a [N, n] activation that a Gemm reads in place: n,
 * or n + 16 when n floats are a multiple of 4 KiB. MLAS's SGEMM reads its A operand where it lies,
 * a tile of rows at a time, and rows 4 KiB apart fall into the same L1 cache sets: on this machine
 * (Zen 4, 2 threads) 2 048 × 1 024 · 1 024 × 256 ran at 162–170 GFLOP/s, at 1 040 wide 181–195,
 * and 2 048 × 3 072 · 3 072 × 768 (BERT-base) at 147–164 against 181–185 at 3 088. The extra
 * columns are zeros: the padded Gemms give the same sums.
 */
export function strideSafeWidth(n: number): number {
  return (n * 4) % 4096 === 0 ? n + 16 : n
}

/**
 * A graph under construction with a gradient tape: parameters are inputs, contributions to each
 * parameter's gradient are summed at the end.
 */
export class GradGraph {
  readonly g: GraphBuilder
  readonly params: ParamSpec[] = []
  private readonly grads = new Map<string, string[]>()
  readonly dropoutInputs: string[] = []
  readonly rowGrads: Array<{ param: string; ids: string }> = []
  /** Whether the graph may use onnxruntime's com.microsoft operators (GraphBuildOptions.contribOps). */
  readonly contribOps: boolean
  private usesContribOps = false

  constructor(name: string, opts: GraphBuildOptions = {}) {
    this.g = new GraphBuilder(name)
    this.contribOps = opts.contribOps ?? true
  }

  /**
   * alpha·op(a)·op(b) for a, b [B, h, *, *], op transposing the last two axes when asked. With
   * contrib operators one com.microsoft FusedMatMul (MLAS reads the operands transposed: no
   * Transpose copy, and no elementwise pass for alpha); else Transpose + MatMul + Mul.
   */
  matmul(a: string, b: string, o: { transA?: boolean; transB?: boolean; alpha?: number } = {}): string {
    const alpha = o.alpha ?? 1
    if (this.contribOps) {
      this.usesContribOps = true
      return this.g.node('FusedMatMul', [a, b], { alpha: attr.float(alpha), transA: attr.int(o.transA ? 1 : 0), transB: attr.int(o.transB ? 1 : 0) }, { domain: 'com.microsoft' })
    }
    const lastTwo = [0, 1, 3, 2]
    const y = this.g.node('MatMul', [o.transA ? this.transpose(a, lastTwo) : a, o.transB ? this.transpose(b, lastTwo) : b])
    return alpha === 1 ? y : this.mul(y, this.g.float(alpha))
  }

  /** The serialized model, declaring the com.microsoft operator set when a node uses it. */
  encode(docString: string): Uint8Array {
    return this.g.encode({ opset: ONNX_OPSET, producerName: 'fastbioner', docString, ...(this.usesContribOps ? { extraOpsets: { 'com.microsoft': 1 } } : {}) })
  }

  /**
   * A parameter input; one used twice (a projection shared by several layer pairs) is declared once
   * and its gradients add up. `declared` may name dimensions symbolically (a vocabulary's rows), so
   * that the graph does not change with them; `shape` is what the runner feeds.
   */
  param(name: string, shape: number[], declared: Array<number | string> = shape): string {
    const seen = this.params.find((p) => p.name === name)
    if (seen) {
      if (seen.shape.join() !== shape.join()) throw new Error(`training graph: parameter ${name} is [${seen.shape}] and [${shape}]`)
      return name
    }
    this.params.push(declared === shape ? { name, shape } : { name, shape, declared })
    return this.g.input(name, 'float32', declared)
  }

  addGrad(param: string, value: string): void {
    const list = this.grads.get(param)
    if (list) list.push(value)
    else this.grads.set(param, [value])
  }

  /**
   * The gradient of an embedding table as the rows its lookup read: `rows` [N, width] for the ids
   * in input `ids` (TrainGraph.rowGrads). Skips the scatter into a zero table of the table's size,
   * its copy out of the graph and, in the optimizer, every row the batch did not read.
   */
  addRowGrad(param: string, ids: string, rows: string): void {
    if (this.rowGrads.some((r) => r.param === param) || this.grads.has(param)) throw new Error(`training graph: ${param} has another gradient`)
    this.rowGrads.push({ param, ids })
    this.g.output(rowGradName(param), rows, 'float32', ['batch*sequence', this.params.find((p) => p.name === param)!.shape[1]])
  }

  dropoutMask(name: string, dims: (number | string)[]): string {
    this.dropoutInputs.push(name)
    return this.g.input(name, 'float32', dims)
  }

  // ---- small op helpers ----------------------------------------------------------------------
  add(a: string, b: string): string {
    return this.g.node('Add', [a, b])
  }
  sub(a: string, b: string): string {
    return this.g.node('Sub', [a, b])
  }
  mul(a: string, b: string): string {
    return this.g.node('Mul', [a, b])
  }
  sum(values: string[]): string {
    return values.length === 1 ? values[0] : this.g.node('Sum', values)
  }
  /** Σ over axes (opset 13+: axes is an input). */
  reduceSum(x: string, axes: number[], keepdims: boolean): string {
    return this.g.node('ReduceSum', [x, this.g.int64s(axes)], { keepdims: attr.int(keepdims ? 1 : 0) })
  }
  /**
   * Σ over the rows of x [N, K] → [K] (or of each group of x [G, N, K] → [G, K]), as the product
   * ones[N]·x: onnxruntime's ReduceSum over the rows took about twice the product's time on this
   * machine (quiet, 2 threads: 2 048 × 256 0.18 against 0.10 ms; 2 048 × 1 024 0.6-0.76 against
   * 0.28-0.39), and a step sums rows for every bias and LayerNorm gradient.
   */
  sumRows(x: string): string {
    const g = this.g
    const rows = g.node('Slice', [g.node('Shape', [x]), g.int64s([-2]), g.int64s([-1])]) // [1]: N
    const ones = g.node('ConstantOfShape', [rows], { value: attr.tensor({ dims: [1], data: new Float32Array([1]) }) }) // [N]
    // A 1-D first operand: MatMul gives [K] (or [G, K]) with no Squeeze after it.
    return g.node('MatMul', [ones, x])
  }

  /**
   * Rows summed by index: out[u] = Σ_{i: index[i] = u} rows[i] for u < count, as one Gemm,
   * onehot(index, count)ᵀ·rows. Not ScatterND(reduction add): onnxruntime's CPU kernel adds the
   * rows of repeated indices from its threads without synchronising them, and lost about 8 % of
   * 5 M additions on 2 threads (a 96-row table; none on 1 thread), so every 2-thread run trained
   * on wrong gradients and never repeated itself. Gemm sums in an order fixed by its shapes.
   * The one-hot is Cast(index = 0…count−1), not the OneHot operator: the same 0/1 matrix, but
   * onnxruntime's OneHot kernel took about 1.3 ms for [1 024, 556] (a word-tagger batch's words
   * by its distinct words) where Equal + Cast take about 0.35.
   * index [N] int64 in [0, count), rows [N, D], count an int64 tensor of one element → [count, D]
   */
  sumRowsByIndex(index: string, rows: string, count: string): string {
    const g = this.g
    const scalar = (v: bigint) => g.constant(new BigInt64Array([v]), [], 'int64')
    const ids = g.node('Range', [scalar(0n), g.node('Squeeze', [count]), scalar(1n)]) // [count]
    const oneHot = g.node('Cast', [g.node('Equal', [g.node('Unsqueeze', [index, g.int64s([1])]), ids])], { to: attr.int(1) }) // [N, count]
    return g.node('Gemm', [oneHot, rows], { transA: attr.int(1) })
  }

  /**
   * An embedding table's dense gradient from the rows its lookup read: the rows of each distinct
   * id summed (sumRowsByIndex over Unique's inverse indices, so the one-hot is [N, distinct ids],
   * not [N, table rows]), then written to the ids' rows of a zero table by a ScatterND whose
   * indices are distinct (no reduction: no two threads write one row).
   * table [V, D] (its shape only), ids any shape of N int64, rows [N, D] → [V, D]
   */
  scatterRows(table: string, ids: string, rows: string): string {
    const g = this.g
    const [distinct, , inverse] = g.nodeOutputs('Unique', [this.reshape(ids, g.int64s([-1]))], { sorted: attr.int(0) }, { outputs: 3 }) // [U], -, [N]
    const sums = this.sumRowsByIndex(inverse, rows, g.node('Shape', [distinct])) // [U, D]
    const zeros = g.node('ConstantOfShape', [g.node('Shape', [table])], { value: attr.tensor({ dims: [1], data: new Float32Array([0]) }) })
    return g.node('ScatterND', [zeros, g.node('Unsqueeze', [distinct, g.int64s([1])]), sums])
  }

  /** Mean over the last axis, kept (opset < 18: axes is an attribute). */
  meanLast(x: string): string {
    return this.g.node('ReduceMean', [x], { axes: attr.ints([-1]), keepdims: attr.int(1) })
  }
  transpose(x: string, perm: number[]): string {
    return this.g.node('Transpose', [x], { perm: attr.ints(perm) })
  }
  reshape(x: string, shape: string): string {
    return this.g.node('Reshape', [x, shape])
  }

  /**
   * y = x·W + b for x [N, in]; returns y and a backward that records dW, db and returns dx.
   * `scale` folds constant factors into the Gemms instead of elementwise passes over x or y:
   * y = output·((input·x)·W + b), i.e. Gemm alpha = output·input, beta = output.
   * `padded` widens W (and b) with zeros to `padded.in` rows or `padded.out` columns inside the
   * graph (strideSafeWidth): then x is [N, padded.in] with zeros past `in`, y [N, padded.out] with
   * zeros past `out`, and dW, db are cut back to the parameter's shape.
   */
  linear(prefix: string, x: string, inDim: number, outDim: number, scale: { input?: number; output?: number } = {}, padded: { in?: number; out?: number } = {}): { y: string; backward: (dy: string, addTo?: string) => string } {
    const g = this.g
    const w = this.param(`${prefix}.weight`, [inDim, outDim])
    const b = this.param(`${prefix}.bias`, [outDim])
    const padIn = (padded.in ?? inDim) - inDim
    const padOut = (padded.out ?? outDim) - outDim
    const wUsed = padIn || padOut ? g.node('Pad', [w, g.int64s([0, 0, padIn, padOut])]) : w // [in + padIn, out + padOut]
    const bUsed = padOut ? g.node('Pad', [b, g.int64s([0, padOut])]) : b
    const cut = (grad: string, dims: number[]) => (padIn || padOut ? g.node('Slice', [grad, g.int64s(dims.map(() => 0)), g.int64s(dims)]) : grad)
    const out = scale.output ?? 1
    const alpha = out * (scale.input ?? 1)
    // Unscaled: MatMul + Add, which onnxruntime fuses into one Gemm (and the exported models keep).
    const y = alpha === 1 && out === 1 ? this.add(g.node('MatMul', [x, wUsed]), bUsed) : g.node('Gemm', [x, wUsed, bUsed], { alpha: attr.float(alpha), beta: attr.float(out) })
    const alphaAttr: Record<string, Attr> = alpha === 1 ? {} : { alpha: attr.float(alpha) }
    return {
      y,
      // addTo [N, in]: a gradient that dx adds to, as the Gemm's C (beta 1), instead of a Sum or
      // Add pass over [N, in] after it.
      backward: (dy: string, addTo?: string) => {
        this.addGrad(`${prefix}.weight`, cut(g.node('Gemm', [x, dy], { transA: attr.int(1), ...alphaAttr }), [inDim, outDim])) // [in, out]
        const db = cut(this.sumRows(dy), [outDim]) // [out]
        this.addGrad(`${prefix}.bias`, out === 1 ? db : this.mul(db, g.float(out)))
        return g.node('Gemm', addTo ? [dy, wUsed, addTo] : [dy, wUsed], { transB: attr.int(1), ...alphaAttr }) // [N, in + padIn]
      },
    }
  }

  /** LayerNorm over the last axis of x [N, H]. */
  layerNorm(prefix: string, x: string, H: number, eps: number): { y: string; backward: (dy: string) => string } {
    const gamma = this.param(`${prefix}.weight`, [H])
    const beta = this.param(`${prefix}.bias`, [H])
    const [y, mean, rstd] = this.g.nodeOutputs('LayerNormalization', [x, gamma, beta], { axis: attr.int(-1), epsilon: attr.float(eps) }, { outputs: 3 })
    return {
      y,
      backward: (dy: string) => {
        const xhat = this.mul(this.sub(x, mean), rstd) // [N, H]
        const dxhat = this.mul(dy, gamma)
        const m1 = this.meanLast(dxhat) // [N, 1]
        const m2 = this.meanLast(this.mul(dxhat, xhat)) // [N, 1]
        this.addGrad(`${prefix}.weight`, this.sumRows(this.mul(dy, xhat)))
        this.addGrad(`${prefix}.bias`, this.sumRows(dy))
        return this.mul(this.sub(this.sub(dxhat, m1), this.mul(xhat, m2)), rstd)
      },
    }
  }

  /** Multiplies by a dropout mask input when the site is on. */
  dropout(on: boolean, name: string, x: string, dims: (number | string)[]): { y: string; backward: (dy: string) => string } {
    if (!on) return { y: x, backward: (dy) => dy }
    const m = this.dropoutMask(name, dims)
    return { y: this.mul(x, m), backward: (dy) => this.mul(dy, m) }
  }

  /**
   * Declares `grad.<p>` for every parameter (zeros for one the loss does not reach) and
   * `grad_norm_sq` = Σ‖grad‖² (for global-norm clipping, computed while the gradients are hot).
   */
  finishGradients(): void {
    const squares: string[] = []
    for (const p of this.params) {
      if (this.rowGrads.some((r) => r.param === p.name)) continue
      const list = this.grads.get(p.name)
      if (!list?.length) {
        const shape = p.declared ? this.g.node('Shape', [p.name]) : this.g.int64s(p.shape)
        const zeros = this.g.node('ConstantOfShape', [shape], { value: attr.tensor({ dims: [1], data: new Float32Array([0]) }) })
        this.g.output(gradName(p.name), zeros, 'float32', p.declared ?? p.shape)
        continue
      }
      const value = this.sum(list)
      squares.push(this.g.node('ReduceSumSquare', [value], { keepdims: attr.int(0) }))
      this.g.output(gradName(p.name), value, 'float32', p.declared ?? p.shape)
    }
    this.g.output(GRAD_NORM_SQ, squares.length ? this.sum(squares) : this.g.float(0), 'float32', [])
  }
}

/** What a loss can read from the encoder and send gradients back into. */
export interface EncoderTape {
  /** Final hidden state [N, H] (after the last layer; before any head dropout). */
  top: string
  /** hidden_states as HF returns them: embeddings output, then each layer's output; [N, H]. */
  hidden: string[]
  /** Attention probabilities per layer after dropout (as HF returns them) [B, heads, S, S]. */
  attentions: string[]
  /** [B, S] shape tensor, int64 [2] (for reshapes). */
  batchSeqShape: string
  /** float [B, S]: 1 on real tokens. */
  realMask: string
  /** int64 [B, S] inputs. */
  inputIds: string
  /** Word-embedding table parameter name (for tied MLM decoders). */
  wordEmbeddings: string
  /**
   * Emits the backward pass. `dTop` is the gradient at `top` (or null); `dHidden[i]` and
   * `dAttention[l]` add gradients at hidden[i] and attentions[l].
   */
  backward(dTop: string | null, dHidden?: Map<number, string>, dAttention?: Map<number, string>): void
}

/** The BERT encoder forward with its backward (HF semantics as export.ts). */
export function encoder(t: GradGraph, c: OnnxBertConfig, drop: DropoutSites, prefix = 'bert.', opts: { wordRowGrads?: boolean } = {}): EncoderTape {
  const g = t.g
  const H = c.hiddenSize
  const nH = c.numAttentionHeads
  const d = H / nH
  const eps = c.layerNormEps
  const inputIds = g.input('input_ids', 'int64', ['batch', 'sequence'])
  const attentionMask = g.input('attention_mask', 'int64', ['batch', 'sequence'])
  const tokenTypeIds = g.input('token_type_ids', 'int64', ['batch', 'sequence'])
  const rows = g.int64s([-1, H])
  const bs = g.node('Shape', [inputIds]) // [2]: B, S
  const shape4 = g.node('Concat', [bs, g.int64s([nH, d])], { axis: attr.int(0) }) // [B, S, h, d]
  const shape3 = g.node('Concat', [bs, g.int64s([H])], { axis: attr.int(0) }) // [B, S, H]
  const seqLen = g.node('Slice', [bs, g.int64s([1]), g.int64s([2])]) // [1]
  const hiddenDims = ['batch*sequence', H]
  const I = strideSafeWidth(c.intermediateSize) // the FFN's inner width as the graph stores it

  // ---- embeddings ----------------------------------------------------------------------------
  const wordName = `${prefix}embeddings.word_embeddings.weight`
  const posName = `${prefix}embeddings.position_embeddings.weight`
  const typeName = `${prefix}embeddings.token_type_embeddings.weight`
  const wordTable = t.param(wordName, [c.vocabSize, H])
  const posTable = t.param(posName, [c.maxPositionEmbeddings, H])
  const typeTable = t.param(typeName, [c.typeVocabSize, H])
  const words = g.node('Gather', [wordTable, inputIds]) // [B, S, H]
  const types = g.node('Gather', [typeTable, tokenTypeIds]) // [B, S, H]
  const positions = g.node('Slice', [posTable, g.int64s([0]), seqLen, g.int64s([0])]) // [S, H]
  const pieces = t.reshape(t.add(t.add(words, types), positions), rows) // [N, H]
  const chars = c.charCnn ? charChannel(t, c, prefix) : null
  const emb = chars ? t.add(pieces, chars.y) : pieces // [N, H]
  const embLn = t.layerNorm(`${prefix}embeddings.LayerNorm`, emb, H, eps)
  const embDrop = t.dropout(drop.hidden, 'dropout.embeddings', embLn.y, hiddenDims)
  let x = embDrop.y
  const hidden = [x]
  const attentions: string[] = []

  // additive key mask (1 − mask)·float32_min [B, 1, 1, S]
  const maskF = g.node('Cast', [attentionMask], { to: attr.int(1) })
  const maskBias = g.node('Unsqueeze', [t.mul(t.sub(g.float(1), maskF), g.float(FLOAT32_MIN)), g.int64s([1, 2])])
  const invSqrtD = 1 / Math.sqrt(d)
  const split = (y: string) => t.transpose(t.reshape(y, shape4), [0, 2, 1, 3]) // [N, H] → [B, h, S, d]
  const merge = (y: string) => t.reshape(t.transpose(y, [0, 2, 1, 3]), rows) // [B, h, S, d] → [N, H]

  // dOut: gradient at the layer output; dAttn: extra gradient at its attention probabilities.
  const layerBackwards: Array<(dOut: string, dAttn?: string) => string> = []
  for (let l = 0; l < c.numHiddenLayers; l++) {
    const p = `${prefix}encoder.layer.${l}`
    const xIn = x
    const qL = t.linear(`${p}.attention.self.query`, xIn, H, H)
    const kL = t.linear(`${p}.attention.self.key`, xIn, H, H)
    const vL = t.linear(`${p}.attention.self.value`, xIn, H, H)
    const q = split(qL.y) // [B, h, S, d]
    const k = split(kL.y) // [B, h, S, d]
    const v = split(vL.y) // [B, h, S, d]
    const scores = t.add(t.matmul(q, k, { transB: true, alpha: invSqrtD }), maskBias) // [B, h, S, S]
    const probs = g.node('Softmax', [scores], { axis: attr.int(-1) })
    const probsDrop = t.dropout(drop.attention, `dropout.layer.${l}.attention`, probs, ['batch', nH, 'sequence', 'sequence'])
    attentions.push(probsDrop.y)
    const ctx = merge(g.node('MatMul', [probsDrop.y, v])) // [N, H]
    const aoL = t.linear(`${p}.attention.output.dense`, ctx, H, H)
    const aoDrop = t.dropout(drop.hidden, `dropout.layer.${l}.attention_output`, aoL.y, hiddenDims)
    const aLn = t.layerNorm(`${p}.attention.output.LayerNorm`, t.add(aoDrop.y, xIn), H, eps)
    const a = aLn.y
    // erf GELU in u = pre/√2 (pre = a·W_i + b_i): gelu(pre) = u·(1 + erf u)/√2. Both 1/√2 ride on
    // the two Gemms (u straight out of the first, the second reads h = √2·gelu), which saves four
    // elementwise passes over [N, I] per layer, forward and backward.
    const iL = t.linear(`${p}.intermediate.dense`, a, H, c.intermediateSize, { output: Math.SQRT1_2 }, { out: I })
    const u = iL.y // [N, I]
    const erf1 = t.add(g.node('Erf', [u]), g.float(1)) // 1 + erf u
    const h = t.mul(u, erf1) // √2·gelu(pre)
    const oL = t.linear(`${p}.output.dense`, h, c.intermediateSize, H, { input: Math.SQRT1_2 }, { in: I })
    const oDrop = t.dropout(drop.hidden, `dropout.layer.${l}.output`, oL.y, hiddenDims)
    const oLn = t.layerNorm(`${p}.output.LayerNorm`, t.add(oDrop.y, a), H, eps)
    x = oLn.y
    hidden.push(x)

    layerBackwards.push((dOut: string, dAttn?: string) => {
      const dz2 = oLn.backward(dOut)
      const dh = oL.backward(oDrop.backward(dz2)) // [N, I]
      // dh/du = 1 + erf u + u·(2/√π)·exp(−u²); the factor 2/√π as exp(ln(2/√π) − u²)
      const slope = t.mul(u, g.node('Exp', [t.sub(g.float(LN_2_OVER_SQRT_PI), t.mul(u, u))]))
      const du = t.mul(dh, t.add(erf1, slope))
      const da = iL.backward(du, dz2)
      const dz1 = aLn.backward(da)
      const dctx = split(aoL.backward(aoDrop.backward(dz1))) // [B, h, S, d]
      let dProbsDrop = t.matmul(dctx, v, { transB: true }) // [B, h, S, S]
      if (dAttn) dProbsDrop = t.add(dProbsDrop, dAttn)
      const dv = t.matmul(probsDrop.y, dctx, { transA: true }) // [B, h, S, d]
      // ds = p·(dp − Σ dp·p) with dp = dPD·m (m the dropout mask, 1 without): p·dp = (p·m)·dPD, the
      // dropped probabilities times dPD, so ds = e − p·Σe with e = probsDrop·dPD: one pass over the
      // [B, h, S, S] scores fewer than masking dPD first.
      const e = t.mul(dProbsDrop, probsDrop.y)
      const dScores = t.sub(e, t.mul(probs, g.node('ReduceSum', [e, g.int64s([-1])], { keepdims: attr.int(1) })))
      // The 1/√d of the scores rides on the two products (FusedMatMul alpha).
      const dq = t.matmul(dScores, k, { alpha: invSqrtD }) // [B, h, S, d]
      const dk = t.matmul(dScores, q, { transA: true, alpha: invSqrtD }) // [B, h, S, d]
      return qL.backward(merge(dq), kL.backward(merge(dk), vL.backward(merge(dv), dz1)))
    })
  }

  return {
    top: x,
    hidden,
    attentions,
    batchSeqShape: bs,
    realMask: maskF,
    inputIds,
    wordEmbeddings: wordName,
    backward(dTop, dHidden, dAttention) {
      const L = c.numHiddenLayers
      const withHidden = (i: number, dv: string | null): string | null => {
        const extra = dHidden?.get(i)
        if (!extra) return dv
        return dv ? t.add(dv, extra) : extra
      }
      let dx = withHidden(L, dTop)
      for (let l = L - 1; l >= 0; l--) {
        if (!dx) {
          dx = withHidden(l, null)
          continue
        }
        dx = withHidden(l, layerBackwards[l](dx, dAttention?.get(l)))
      }
      if (!dx) return
      const dEmb = embLn.backward(embDrop.backward(dx)) // [N, H]
      chars?.backward(dEmb)
      if (opts.wordRowGrads) t.addRowGrad(wordName, inputIds, dEmb)
      else t.addGrad(wordName, t.scatterRows(wordTable, inputIds, dEmb))
      t.addGrad(typeName, t.sumRowsByIndex(t.reshape(tokenTypeIds, g.int64s([-1])), dEmb, g.int64s([c.typeVocabSize])))
      // positions: Σ over the batch, then zero rows S..P−1  [P, H]
      const dPos = t.reduceSum(t.reshape(dEmb, shape3), [0], false) // [S, H]
      const padRows = t.sub(g.int64s([c.maxPositionEmbeddings]), seqLen) // [1]
      const pads = g.node('Concat', [g.int64s([0, 0]), padRows, g.int64s([0])], { axis: attr.int(0) })
      t.addGrad(posName, g.node('Pad', [dPos, pads]))
    },
  }
}

/**
 * The character channel's term of the embedding sum [N, H] (core/model/char-cnn.ts): the shared
 * character CNN + flags (./char-cnn), a Linear to H, zero on rows whose first character is <pad>
 * (special tokens, padding, later pieces with pieces 'first'). Inputs char_ids, shape_flags.
 */
function charChannel(t: GradGraph, c: OnnxBertConfig, prefix: string): { y: string; backward: (dEmb: string) => void } {
  const g = t.g
  const cc = c.charCnn!
  const n = charCnnParamNames(prefix)
  const layer = charCnnLayer(g, (name, shape) => t.param(name, shape), cc, { embeddings: n.embeddings, conv: n.conv }, 'sequence')
  const width = cc.charFilters + cc.shapeFlags
  // feature_scale: see CharCnnConfig.featureScale (absent = 1)
  const proj = t.linear(n.projection, t.reshape(layer.features, g.int64s([-1, width])), width, c.hiddenSize, { input: cc.featureScale ?? 1 }) // [N, H]
  const first = t.reshape(g.node('Slice', [layer.charIds, g.int64s([0]), g.int64s([1]), g.int64s([2])]), g.int64s([-1, 1])) // [N, 1]
  const hasChars = g.node('Cast', [g.node('Not', [g.node('Equal', [first, g.int64s([0], [])])])], { to: attr.int(1) }) // [N, 1]
  return {
    y: t.mul(proj.y, hasChars),
    backward: (dEmb) => layer.backward(t, proj.backward(t.mul(dEmb, hasChars))), // d features [N, F + F_s]
  }
}

/**
 * Masked mean cross-entropy of logits [N, C] against labels (int64 [B, S], −100 = ignored), as
 * core/train/loss.ts maskedCrossEntropy. Returns the loss value and dlogits.
 */
export function crossEntropy(t: GradGraph, logits: string, labels: string, C: number): { loss: string; dLogits: string } {
  const g = t.g
  const flat = t.reshape(labels, g.int64s([-1])) // [N]
  const ignored = g.node('Equal', [flat, g.int64s([-100], [])])
  const keep = g.node('Cast', [g.node('Not', [ignored])], { to: attr.int(1) }) // [N]
  const safe = g.node('Where', [ignored, g.int64s([0], []), flat])
  const oneHot = g.node('Cast', [g.node('Equal', [g.node('Unsqueeze', [safe, g.int64s([1])]), g.int64s(Array.from({ length: C }, (_, i) => i))])], { to: attr.int(1) }) // [N, C]
  const logp = g.node('LogSoftmax', [logits], { axis: attr.int(-1) })
  const count = g.node('Max', [t.reduceSum(keep, [0], false), g.float(1)])
  const picked = t.reduceSum(t.mul(logp, oneHot), [1], false) // [N]
  const loss = g.node('Neg', [g.node('Div', [t.reduceSum(t.mul(picked, keep), [0], false), count])])
  const weight = g.node('Unsqueeze', [g.node('Div', [keep, count]), g.int64s([1])]) // [N, 1]
  const dLogits = t.mul(t.sub(g.node('Exp', [logp]), oneHot), weight)
  return { loss, dLogits }
}

export interface TokenClassificationGraphOptions extends GraphBuildOptions {
  config: OnnxBertConfig
  /** Heads in the loss; the loss is the sum of their mean cross-entropies. */
  heads: CeHead[]
  dropout?: DropoutSites
  /** The word table's gradient as the rows the batch read (TrainGraph.rowGrads). */
  wordRowGrads?: boolean
}

/**
 * Token classification: Σ_heads masked mean CE(classifier(dropout(encoder(x))), labels_<head>).
 * Inputs: input_ids, attention_mask, token_type_ids (int64 [B, S]), labels.<head> (int64 [B, S]),
 * the parameters and the dropout masks.
 */
export function tokenClassificationTrainGraph(opts: TokenClassificationGraphOptions): TrainGraph {
  if (opts.heads.length === 0) throw new Error('training graph: no head to train')
  const t = new GradGraph('fastbioner_token_classification_train', opts)
  const { enc, top, heads } = tokenClassifierForward(t, opts)
  const g = t.g
  const losses: string[] = []
  const dTop: string[] = []
  const lossTerms: string[] = []
  const extraInputs: TrainGraph['extraInputs'] = []
  opts.heads.forEach((h, k) => {
    const head = heads[k]
    if (h.lossOnHost) {
      const dims = ['batch*sequence', h.numLabels]
      const dLogits = g.input(dlogitsInput(h.name), 'float32', dims)
      extraInputs.push({ name: dLogits, dims, type: 'float32' })
      dTop.push(head.backward(dLogits))
      return
    }
    const labels = g.input(`labels.${h.name}`, 'int64', ['batch', 'sequence'])
    extraInputs.push({ name: labels, dims: ['batch', 'sequence'], type: 'int64' })
    const ce = crossEntropy(t, head.y, labels, h.numLabels)
    losses.push(ce.loss)
    dTop.push(head.backward(ce.dLogits))
    const term = `loss.${h.name}`
    g.output(term, ce.loss, 'float32', [])
    lossTerms.push(term)
  })
  enc.backward(top.backward(t.sum(dTop)))
  g.output('loss', losses.length ? t.sum(losses) : g.float(0), 'float32', [])
  t.finishGradients()
  return {
    model: t.encode(`token-classification training graph (${opts.heads.map((h) => h.name).join(', ')})`),
    params: t.params,
    lossTerms,
    dropoutInputs: t.dropoutInputs,
    extraInputs,
    rowGrads: t.rowGrads,
  }
}

/** Encoder, classifier dropout and one linear head per entry of opts.heads: the forward both graphs share. */
function tokenClassifierForward(t: GradGraph, opts: TokenClassificationGraphOptions) {
  const drop = opts.dropout ?? NO_DROPOUT
  const enc = encoder(t, opts.config, drop, 'bert.', { wordRowGrads: opts.wordRowGrads })
  const H = opts.config.hiddenSize
  const top = t.dropout(drop.classifier, 'dropout.classifier', enc.top, ['batch*sequence', H]) // [N, H]
  return { enc, top, heads: opts.heads.map((h) => t.linear(headPrefix(h.name), top.y, H, h.numLabels)) }
}

/**
 * The forward half of tokenClassificationTrainGraph: `logits.<head>` [batch·sequence, C] for the
 * heads given, with the same parameter and dropout-mask inputs, so a host loss (CRF) can be
 * computed on exactly the logits the training graph's backward pass will differentiate.
 */
export function tokenClassificationLogitsGraph(opts: TokenClassificationGraphOptions): TrainGraph {
  const t = new GradGraph('fastbioner_token_classification_logits', opts)
  const { heads } = tokenClassifierForward(t, opts)
  opts.heads.forEach((h, k) => t.g.output(logitsOutput(h.name), heads[k].y, 'float32', ['batch*sequence', h.numLabels]))
  return {
    model: t.encode(`token-classification logits with training inputs (${opts.heads.map((h) => h.name).join(', ')})`),
    params: t.params,
    lossTerms: [],
    dropoutInputs: t.dropoutInputs,
    extraInputs: [],
  }
}

export interface MaskedLmGraphOptions extends GraphBuildOptions {
  config: OnnxBertConfig
  dropout?: DropoutSites
  /** Also output the labelled rows' logits `mlm.logits` [M, V] (ELECTRA samples its replacements from them). */
  outputLogits?: boolean
}

/** Output of the masked-LM graph with outputLogits: [M, V] logits of the labelled positions, in flat (row-major) order. */
export const MLM_LOGITS_OUTPUT = 'mlm.logits'

/** HF BertForMaskedLM head parameter names (the decoder weight is the word-embedding table). */
/** Output of the masked-LM graph: how many labelled positions the model predicts right. */
export const MLM_CORRECT_OUTPUT = 'mlm.correct'

export const MLM_PARAMS = {
  dense: 'cls.predictions.transform.dense',
  layerNorm: 'cls.predictions.transform.LayerNorm',
  bias: 'cls.predictions.bias',
} as const

/**
 * Masked-LM pretraining (HF BertForMaskedLM): logits = LN(gelu(x·W_t + b_t))·E_wordᵀ + b, the
 * decoder tied to the word embeddings; mean CE over positions whose label (input `labels.mlm`,
 * int64 [B, S]) is not −100. Only the labelled rows go through the head ([M, V] logits, not
 * [N, V]): the other rows' gradients are zero anyway.
 */
export function maskedLmTrainGraph(opts: MaskedLmGraphOptions): TrainGraph {
  const c = opts.config
  const drop = opts.dropout ?? NO_DROPOUT
  const t = new GradGraph('fastbioner_masked_lm_train', opts)
  const enc = encoder(t, c, drop)
  const g = t.g
  const H = c.hiddenSize
  const labels = g.input('labels.mlm', 'int64', ['batch', 'sequence'])
  const flat = t.reshape(labels, g.int64s([-1])) // [N]
  // Row indices of the labelled positions [M] (NonZero gives [1, M]).
  const rowsIdx = t.reshape(g.node('NonZero', [g.node('Not', [g.node('Equal', [flat, g.int64s([-100], [])])])]), g.int64s([-1]))
  const picked = g.node('Gather', [enc.top, rowsIdx], { axis: attr.int(0) }) // [M, H]
  const pickedLabels = g.node('Gather', [flat, rowsIdx], { axis: attr.int(0) }) // [M]
  const dense = t.linear(MLM_PARAMS.dense, picked, H, H)
  const pre = dense.y
  const cdf = t.mul(t.add(g.node('Erf', [t.mul(pre, g.float(Math.SQRT1_2))]), g.float(1)), g.float(0.5))
  const act = t.mul(pre, cdf)
  const ln = t.layerNorm(MLM_PARAMS.layerNorm, act, H, c.layerNormEps)
  const wordTable = enc.wordEmbeddings // parameter already declared by the encoder: [V, H]
  const bias = t.param(MLM_PARAMS.bias, [c.vocabSize])
  const logits = t.add(g.node('Gemm', [ln.y, wordTable], { transB: attr.int(1) }), bias) // [M, V]
  const ce = crossEntropy(t, logits, pickedLabels, c.vocabSize)
  // decoder backward: dE += dlogitsᵀ·h, db = Σ dlogits, dh = dlogits·E
  t.addGrad(wordTable, g.node('Gemm', [ce.dLogits, ln.y], { transA: attr.int(1) }))
  t.addGrad(MLM_PARAMS.bias, t.reduceSum(ce.dLogits, [0], false))
  const dAct = ln.backward(g.node('MatMul', [ce.dLogits, wordTable]))
  const pdf = t.mul(g.node('Exp', [t.mul(t.mul(pre, pre), g.float(-0.5))]), g.float(INV_SQRT_2PI))
  const dPicked = dense.backward(t.mul(dAct, t.add(cdf, t.mul(pre, pdf)))) // [M, H]
  // back to [N, H]: rows are distinct, so a scatter into zeros is exact
  const zeros = g.node('ConstantOfShape', [g.node('Shape', [enc.top])], { value: attr.tensor({ dims: [1], data: new Float32Array([0]) }) })
  const dTop = g.node('ScatterND', [zeros, g.node('Unsqueeze', [rowsIdx, g.int64s([1])]), dPicked])
  enc.backward(dTop)
  g.output('loss.mlm', ce.loss, 'float32', [])
  g.output('loss', ce.loss, 'float32', [])
  // Held-out masked-token accuracy needs only the count of arg-max hits; [M, V] logits never leave the graph.
  const hits = g.node('Cast', [g.node('Equal', [g.node('ArgMax', [logits], { axis: attr.int(1), keepdims: attr.int(0) }), pickedLabels])], { to: attr.int(1) }) // [M]
  g.output(MLM_CORRECT_OUTPUT, t.reduceSum(hits, [0], false), 'float32', [])
  if (opts.outputLogits) g.output(MLM_LOGITS_OUTPUT, logits, 'float32', ['masked', c.vocabSize])
  t.finishGradients()
  return {
    model: t.encode('masked-LM training graph (decoder tied to the word embeddings)'),
    params: t.params,
    lossTerms: ['loss.mlm'],
    metricOutputs: [MLM_CORRECT_OUTPUT],
    dropoutInputs: t.dropoutInputs,
    extraInputs: [{ name: labels, dims: ['batch', 'sequence'], type: 'int64' }],
  }
}

/** A student hidden state matched to a teacher's (MSE through an optional projection W). */
export interface HiddenPair {
  /** Student hidden-state index: 0 = embeddings output, l = output of layer l. */
  student: number
  teacherWidth: number
  /** Parameter name of W [Hs, Ht]; null when the widths are equal (identity). */
  projection: string | null
}

/** A student attention map matched to a teacher's (per-head MSE, head-averaged when counts differ). */
export interface AttentionPair {
  /** Student layer (0-based). */
  student: number
  teacherHeads: number
}

export interface DistillGraphOptions extends GraphBuildOptions {
  config: OnnxBertConfig
  /** The head trained by this graph (its soft and gold losses). */
  head: CeHead
  hiddenPairs?: HiddenPair[]
  attentionPairs?: AttentionPair[]
  /** Multiply the soft loss by T² (default true). */
  scaleT2?: boolean
  dropout?: DropoutSites
}

/**
 * Knowledge distillation (core/distill/losses.ts semantics):
 *   L = w_soft·T²·CE(p̄, softmax(z/T)) + w_hard·CE(z, y) + w_feature·(Σ hidden MSE + Σ attention MSE)
 * Inputs besides the batch: `temperature`, `weight.soft`, `weight.hard`, `weight.feature` (float
 * scalars, so schedules need no new graph), `soft_targets` [B, S, C] (the teachers' mixed
 * softened distribution), `soft_mask` [B, S] (positions of the soft loss), `labels.<head>`,
 * `teacher_hidden.<k>` [B, S, Ht] and `teacher_attention.<k>` [B, h_t, S, S]. Hidden and
 * attention losses average over real tokens (pairs of real tokens for attention).
 */
export function distillTrainGraph(opts: DistillGraphOptions): TrainGraph {
  const c = opts.config
  const drop = opts.dropout ?? NO_DROPOUT
  const t = new GradGraph('fastbioner_distill_train', opts)
  const enc = encoder(t, c, drop)
  const g = t.g
  const H = c.hiddenSize
  const C = opts.head.numLabels
  const scalar = (name: string) => g.input(name, 'float32', [])
  const T = scalar('temperature')
  const wSoft = scalar('weight.soft')
  const wHard = scalar('weight.hard')
  const wFeature = scalar('weight.feature')
  const extraInputs: TrainGraph['extraInputs'] = ['temperature', 'weight.soft', 'weight.hard', 'weight.feature'].map((name) => ({ name, dims: [], type: 'float32' as const }))
  const floatInput = (name: string, dims: (number | string)[]) => {
    extraInputs.push({ name, dims, type: 'float32' })
    return g.input(name, 'float32', dims)
  }
  const labels = g.input(`labels.${opts.head.name}`, 'int64', ['batch', 'sequence'])
  extraInputs.push({ name: labels, dims: ['batch', 'sequence'], type: 'int64' })
  const targets = t.reshape(floatInput('soft_targets', ['batch', 'sequence', C]), g.int64s([-1, C])) // [N, C]
  const softMask = t.reshape(floatInput('soft_mask', ['batch', 'sequence']), g.int64s([-1])) // [N]
  const lossTerms: string[] = []
  const terms: string[] = [] // weighted
  const term = (name: string, value: string, weight: string) => {
    g.output(name, value, 'float32', [])
    lossTerms.push(name)
    terms.push(t.mul(value, weight))
  }

  // ---- head: soft and gold cross-entropy -------------------------------------------------
  const top = t.dropout(drop.classifier, 'dropout.classifier', enc.top, ['batch*sequence', H])
  const head = t.linear(headPrefix(opts.head.name), top.y, H, C)
  const logits = head.y // [N, C]
  const hard = crossEntropy(t, logits, labels, C)
  term('loss.hard', hard.loss, wHard)
  const logq = g.node('LogSoftmax', [g.node('Div', [logits, T])], { axis: attr.int(-1) }) // [N, C]
  const count = g.node('Max', [t.reduceSum(softMask, [0], false), g.float(1)])
  const per = g.node('Neg', [t.reduceSum(t.mul(targets, logq), [1], false)]) // [N]
  const scale = opts.scaleT2 === false ? g.float(1) : t.mul(T, T)
  const soft = t.mul(g.node('Div', [t.reduceSum(t.mul(per, softMask), [0], false), count]), scale)
  term('loss.soft', soft, wSoft)
  // d soft / d logits = scale/T · (q − p̄) · m / count
  const softCoef = g.node('Div', [g.node('Div', [scale, T]), count]) // []
  const dSoft = t.mul(t.sub(g.node('Exp', [logq]), targets), g.node('Unsqueeze', [t.mul(softMask, softCoef), g.int64s([1])]))
  const dLogits = t.add(t.mul(hard.dLogits, wHard), t.mul(dSoft, wSoft))
  const dTop = top.backward(head.backward(dLogits))

  // ---- features ------------------------------------------------------------------------------
  const bs = enc.batchSeqShape
  const real = t.reshape(enc.realMask, g.int64s([-1])) // [N]
  const realCount = g.node('Max', [t.reduceSum(real, [0], false), g.float(1)])
  const dHidden = new Map<number, string>()
  const addTo = (m: Map<number, string>, k: number, v: string) => m.set(k, m.has(k) ? t.add(m.get(k)!, v) : v)
  ;(opts.hiddenPairs ?? []).forEach((p, k) => {
    const Ht = p.teacherWidth
    const target = t.reshape(floatInput(`teacher_hidden.${k}`, ['batch', 'sequence', Ht]), g.int64s([-1, Ht])) // [N, Ht]
    const hs = enc.hidden[p.student]
    if (!hs) throw new Error(`distillation graph: the student has no hidden state ${p.student}`)
    if (!p.projection && Ht !== H) throw new Error(`distillation graph: student width ${H} ≠ teacher width ${Ht} and no projection`)
    const w = p.projection ? t.param(p.projection, [H, Ht]) : null
    const proj = w ? g.node('MatMul', [hs, w]) : hs
    const diff = t.sub(proj, target) // [N, Ht]
    const denom = t.mul(realCount, g.float(Ht))
    const loss = g.node('Div', [t.reduceSum(t.mul(t.reduceSum(t.mul(diff, diff), [1], false), real), [0], false), denom])
    term(`loss.hidden.${k}`, loss, wFeature)
    // d/dproj = 2·diff·m / (count·Ht), times w_feature
    const dProj = t.mul(diff, g.node('Unsqueeze', [t.mul(real, g.node('Div', [t.mul(g.float(2), wFeature), denom])), g.int64s([1])]))
    if (w) t.addGrad(p.projection!, g.node('Gemm', [hs, dProj], { transA: attr.int(1) }))
    addTo(dHidden, p.student, w ? g.node('Gemm', [dProj, w], { transB: attr.int(1) }) : dProj)
  })
  const dAttention = new Map<number, string>()
  const nH = c.numAttentionHeads
  ;(opts.attentionPairs ?? []).forEach((p, k) => {
    const ht = p.teacherHeads
    const target = floatInput(`teacher_attention.${k}`, ['batch', ht, 'sequence', 'sequence'])
    const as = enc.attentions[p.student]
    if (!as) throw new Error(`distillation graph: the student has no layer ${p.student}`)
    const averaged = ht !== nH
    const a = averaged ? g.node('ReduceMean', [as], { axes: attr.ints([1]), keepdims: attr.int(1) }) : as
    const b = averaged ? g.node('ReduceMean', [target], { axes: attr.ints([1]), keepdims: attr.int(1) }) : target
    const h = averaged ? 1 : nH
    const m4 = g.node('Reshape', [enc.realMask, g.node('Concat', [bs, g.int64s([1, 1])], { axis: attr.int(0) })]) // [B, S, 1, 1]
    const rows = t.transpose(m4, [0, 2, 1, 3]) // [B, 1, S, 1]
    const cols = t.transpose(m4, [0, 2, 3, 1]) // [B, 1, 1, S]
    const pair = t.mul(rows, cols) // [B, 1, S, S]
    const denom = t.mul(g.node('Max', [t.reduceSum(pair, [0, 1, 2, 3], false), g.float(1)]), g.float(h))
    const diff = t.sub(a, b)
    const loss = g.node('Div', [t.reduceSum(t.mul(t.mul(diff, diff), pair), [0, 1, 2, 3], false), denom])
    term(`loss.attention.${k}`, loss, wFeature)
    let dA = t.mul(t.mul(diff, pair), g.node('Div', [t.mul(g.float(2), wFeature), denom])) // [B, h|1, S, S]
    if (averaged) dA = t.mul(t.add(dA, g.node('ConstantOfShape', [g.node('Shape', [as])], { value: attr.tensor({ dims: [1], data: new Float32Array([0]) }) })), g.float(1 / nH))
    addTo(dAttention, p.student, dA)
  })

  enc.backward(dTop, dHidden, dAttention)
  g.output('loss', t.sum(terms), 'float32', [])
  t.finishGradients()
  return {
    model: t.encode(`distillation training graph (head ${opts.head.name})`),
    params: t.params,
    lossTerms,
    dropoutInputs: t.dropoutInputs,
    extraInputs,
  }
}
