// The character CNN and case/shape flags of a word, as ONNX ops with their backward: the one graph
// of this layer, read by the word tagger (./recurrent) and by the BERT encoder's character channel
// (./training, ./export; core/model/char-cnn.ts).
//
//   words = Unique(char_ids rows)                [U, L]       (N rows: words or pieces; U distinct)
//   chars = E_c[words]                           [U, L, Dc]
//   windows: zero padding (w−1)/2 each side, w shifted copies concatenated   [U, L, w·Dc]
//   conv = windows·W + b, max over L             [U, F]
//   features = [conv max gathered back to the N rows, shape_flags]   [B, T, F + F_s]
// A batch repeats words ("the", "of", a padding row of zeros): the CNN runs once per distinct
// character row, on 0.46 of the rows of 16 NCBI-disease sentences in a 32-word bucket (0.59
// distinct words, 22 % padding). Backward: the N rows' d features summed per distinct row
// (GradGraph.sumRowsByIndex), then d max goes to the (first) arg-max position of each filter (ScatterElements); dW =
// windowsᵀ·dconv, db = Σ dconv, d windows = dconv·Wᵀ, each window slice back to its characters,
// and the rows to the embedding table (GradGraph.sumRowsByIndex: the table has a hundred-odd rows).

import { attr, type GraphBuilder } from './graph'
import type { CharCnnDims } from '../model/char-cnn'

/** What the backward needs of a training graph (./training's GradGraph; not imported: it imports this). */
export interface GradTape {
  mul(a: string, b: string): string
  sum(values: string[]): string
  reduceSum(x: string, axes: number[], keepdims: boolean): string
  sumRows(x: string): string
  sumRowsByIndex(index: string, rows: string, count: string): string
  addGrad(param: string, value: string): void
}

export interface CharCnnNames {
  /** Character embedding table [Vc, Dc]. */
  embeddings: string
  /** Prefix of the convolution's `.weight` [w·Dc, F] and `.bias` [F]. */
  conv: string
}

export interface CharCnnLayer {
  /** int64 [B, T, L] input. */
  charIds: string
  /** float32 [B, T, F_s] input. */
  shapeFlags: string
  /** [B, T, F + F_s] */
  features: string
  /** Records the gradients of the table and the convolution from d features [B·T, F + F_s] (the flags are inputs: no gradient). */
  backward(t: GradTape, dFeatures: string): void
}

/**
 * Declares the inputs `char_ids` [batch, steps, L] and `shape_flags` [batch, steps, F_s] and
 * builds the features. `param` gives a parameter's value: a graph input (training graphs, the
 * word tagger's tagging graph) or an initializer (the exported BERT graph).
 */
export function charCnnLayer(g: GraphBuilder, param: (name: string, shape: number[]) => string, d: CharCnnDims, names: CharCnnNames, steps: number | string): CharCnnLayer {
  const L = d.maxChars
  const Dc = d.charDim
  const F = d.charFilters
  const w = d.charWidth
  if (w % 2 !== 1) throw new Error(`character CNN: the width must be odd, got ${w}`)
  const charIds = g.input('char_ids', 'int64', ['batch', steps, L])
  const shapeFlags = g.input('shape_flags', 'float32', ['batch', steps, d.shapeFlags])
  const table = param(names.embeddings, [d.charVocabSize, Dc])
  const reshape = (x: string, shape: number[]) => g.node('Reshape', [x, g.int64s(shape)])
  const [words, , rowOfWord] = g.nodeOutputs('Unique', [reshape(charIds, [-1, L])], { axis: attr.int(0), sorted: attr.int(0) }, { outputs: 3 }) // [U, L], -, [N]
  const chars = g.node('Gather', [table, words]) // [U, L, Dc]
  const half = (w - 1) / 2
  const padded = g.node('Pad', [chars, g.int64s([0, half, 0, 0, half, 0])]) // [U, L + w − 1, Dc]
  const windows = g.node(
    'Concat',
    Array.from({ length: w }, (_, k) => g.node('Slice', [padded, g.int64s([k]), g.int64s([k + L]), g.int64s([1])])),
    { axis: attr.int(2) },
  ) // [U, L, w·Dc]
  const windowsFlat = reshape(windows, [-1, w * Dc]) // [U·L, w·Dc]
  const weight = param(`${names.conv}.weight`, [w * Dc, F])
  const bias = param(`${names.conv}.bias`, [F])
  const conv = g.node('Add', [g.node('MatMul', [windowsFlat, weight]), bias]) // [U·L, F]
  const convNL = reshape(conv, [-1, L, F]) // [U, L, F]
  const charMax = g.node('ReduceMax', [convNL], { axes: attr.ints([1]), keepdims: attr.int(0) }) // [U, F]
  const rowsShape = g.node('Slice', [g.node('Shape', [charIds]), g.int64s([0]), g.int64s([2])]) // [2]: B, T
  const charFeat = g.node('Reshape', [g.node('Gather', [charMax, rowOfWord]), g.node('Concat', [rowsShape, g.int64s([F])], { axis: attr.int(0) })]) // [B, T, F]
  const features = g.node('Concat', [charFeat, shapeFlags], { axis: attr.int(2) }) // [B, T, F + F_s]

  const backward = (t: GradTape, dFeatures: string) => {
    const zerosLike = (x: string) => g.node('ConstantOfShape', [g.node('Shape', [x])], { value: attr.tensor({ dims: [1], data: new Float32Array([0]) }) })
    const [dCharRows] = g.nodeOutputs('Split', [dFeatures, g.int64s([F, d.shapeFlags])], { axis: attr.int(1) }, { outputs: 2 }) // [N, F]
    // A tensor's first dimension as an int64 [1] (the one-hot's depth); the table's is symbolic in the graph.
    const rowCount = (x: string) => g.node('Slice', [g.node('Shape', [x]), g.int64s([0]), g.int64s([1])])
    const dChar = t.sumRowsByIndex(rowOfWord, dCharRows, rowCount(charMax)) // [U, F]
    const arg = g.node('ArgMax', [convNL], { axis: attr.int(1), keepdims: attr.int(1) }) // [U, 1, F]
    // Each filter's d max written at its arg-max position, zeros elsewhere: one scatter instead of
    // a one-hot (Equal against every position, Cast, Mul: three ops over [U, L, F]). A quiet
    // word-tagger step (16 × 32 words, 2 threads) is the same either way (23-26 ms).
    const dConv = reshape(g.node('ScatterElements', [zerosLike(convNL), arg, g.node('Unsqueeze', [dChar, g.int64s([1])])], { axis: attr.int(1) }), [-1, F]) // [U·L, F]
    t.addGrad(`${names.conv}.weight`, g.node('Gemm', [windowsFlat, dConv], { transA: attr.int(1) })) // [w·Dc, F]
    t.addGrad(`${names.conv}.bias`, t.sumRows(dConv)) // [F]
    const dWindows = reshape(g.node('Gemm', [dConv, weight], { transB: attr.int(1) }), [-1, L, w * Dc]) // [U, L, w·Dc]
    const parts = w === 1 ? [dWindows] : g.nodeOutputs('Split', [dWindows], { axis: attr.int(2) }, { outputs: w })
    // window k at position l read padded[l + k] = chars[l + k − half]
    const dPadded = t.sum(parts.map((p, k) => g.node('Pad', [p, g.int64s([0, k, 0, 0, w - 1 - k, 0])])))
    const dChars = g.node('Slice', [dPadded, g.int64s([half]), g.int64s([half + L]), g.int64s([1])]) // [U, L, Dc]
    t.addGrad(names.embeddings, t.sumRowsByIndex(reshape(words, [-1]), reshape(dChars, [-1, Dc]), rowCount(table))) // [Vc, Dc]
  }
  return { charIds, shapeFlags, features, backward }
}
