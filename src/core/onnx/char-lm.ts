// Graphs of the character language model (core/model/char-lm.ts).
//
// Training: one chunk of truncated back-propagation through time per run. Each direction reads
// its own B streams of text (the backward model's are the text reversed) for T characters from the
// state the previous chunk ended in, and predicts each next character: mean cross-entropy over
// both directions' 2·B·T predictions, every gradient, and the state to start the next chunk from.
// The recurrence is ./recurrent's unrolledLstm, as the word tagger's.
//
// States: the tagging-time graph, ONNX's LSTM operator over each direction's characters (any
// length; `sequence_lens` bounds each row), and the states a word tagger reads gathered from it.

import { attr } from './graph'
import { crossEntropy, GradGraph, type TrainGraph } from './training'
import { onnxLstmWeights, unrolledLstm } from './lstm'
import { ONNX_OPSET } from './export'
import type * as Ort from 'onnxruntime-node'
import { CHAR_LM_PARAMS, type CharLmDims } from '../model/char-lm'
import { charLmInputs, type CharLmInputs, type WordTaggerDims } from '../model/word-tagger'
import { OrtGraphRunner, type OrtSessionOptions } from '../train/ort'

export const CHAR_LM_STATE_INPUTS = { h: 'state.h', c: 'state.c' } as const
export const CHAR_LM_STATE_OUTPUTS = { h: 'state.h.next', c: 'state.c.next' } as const

export interface CharLmGraphOptions {
  dims: CharLmDims
  /** Characters per chunk (T). */
  steps: number
  /** Dropout mask input `dropout.output` [2, B·T, H] on the LSTM's output. */
  dropout: boolean
}

/**
 * One training chunk. Inputs: `char_ids` int64 [2, B, T] (rows of the stacked table: direction d's
 * character k is d·V + k), `next_ids` int64 [2, B, T] (the character that follows each, 0 … V−1;
 * −100 for none), `state.h` / `state.c` [2, B, H] (zeros at the start of a stream). Outputs `loss`
 * (nats per character), the gradients (the table's as rows) and `state.h.next` / `state.c.next`.
 */
export function charLmTrainGraph(o: CharLmGraphOptions): TrainGraph {
  const t = new GradGraph(`fastbioner_char_lm_train_T${o.steps}`)
  const g = t.g
  const { charVocabSize: V, charDim: E, hidden: H } = o.dims
  const T = o.steps
  const ids = g.input('char_ids', 'int64', [2, 'batch', T])
  const next = g.input('next_ids', 'int64', [2, 'batch', T])
  const h0 = g.input(CHAR_LM_STATE_INPUTS.h, 'float32', [2, 'batch', H])
  const c0 = g.input(CHAR_LM_STATE_INPUTS.c, 'float32', [2, 'batch', H])
  const table = t.param(CHAR_LM_PARAMS.embeddings, [2 * V, E])
  const wIh = t.param(CHAR_LM_PARAMS.weightIh, [2, E, 4 * H])
  const wHh = t.param(CHAR_LM_PARAMS.weightHh, [2, H, 4 * H])
  const bias = t.param(CHAR_LM_PARAMS.bias, [2, 4 * H])
  const decW = t.param(CHAR_LM_PARAMS.decoderWeight, [2, H, V])
  const decB = t.param(CHAR_LM_PARAMS.decoderBias, [2, V])

  const bShape = g.node('Slice', [g.node('Shape', [ids]), g.int64s([1]), g.int64s([2])]) // [1]: B
  const x = t.reshape(g.node('Gather', [table, ids]), g.int64s([2, -1, E])) // [2, B·T, E]
  const xw = t.add(g.node('MatMul', [x, wIh]), g.node('Unsqueeze', [bias, g.int64s([1])])) // [2, B·T, 4H]
  /** [2, B·T, W] → T × [1, 2, B, W] */
  const rowsToSteps = (v: string, W: number) => {
    const steps = t.transpose(g.node('Reshape', [v, g.node('Concat', [g.int64s([2]), bShape, g.int64s([T, W])], { axis: attr.int(0) })]), [2, 0, 1, 3]) // [T, 2, B, W]
    return T === 1 ? [steps] : g.nodeOutputs('Split', [steps], { axis: attr.int(0) }, { outputs: T })
  }
  /** T × [1, 2, B, W] → [2, B·T, W] */
  const stepsToRows = (vs: string[], W: number) => t.reshape(t.transpose(vs.length === 1 ? vs[0] : g.node('Concat', vs, { axis: attr.int(0) }), [1, 2, 0, 3]), g.int64s([2, -1, W]))
  const unsqueeze0 = (v: string) => g.node('Unsqueeze', [v, g.int64s([0])])
  const lstm = unrolledLstm(t, rowsToSteps(xw, 4 * H), wHh, H, { h: unsqueeze0(h0), c: unsqueeze0(c0) })
  const hidden = stepsToRows(lstm.hs, H) // [2, B·T, H]
  const hDrop = t.dropout(o.dropout, 'dropout.output', hidden, [2, 'batch*steps', H])
  const logits = t.add(g.node('MatMul', [hDrop.y, decW]), g.node('Unsqueeze', [decB, g.int64s([1])])) // [2, B·T, V]
  const ce = crossEntropy(t, t.reshape(logits, g.int64s([-1, V])), next, V)

  // ---- backward --------------------------------------------------------------------------------
  const dLogits = t.reshape(ce.dLogits, g.int64s([2, -1, V])) // [2, B·T, V]
  t.addGrad(CHAR_LM_PARAMS.decoderWeight, g.node('MatMul', [t.transpose(hDrop.y, [0, 2, 1]), dLogits])) // [2, H, V]
  t.addGrad(CHAR_LM_PARAMS.decoderBias, t.sumRows(dLogits)) // [2, V]
  const dHidden = hDrop.backward(g.node('MatMul', [dLogits, t.transpose(decW, [0, 2, 1])])) // [2, B·T, H]
  const dZ = stepsToRows(lstm.backward(rowsToSteps(dHidden, H)), 4 * H) // [2, B·T, 4H]
  t.addGrad(CHAR_LM_PARAMS.weightHh, g.node('MatMul', [t.transpose(stepsToRows(lstm.hPrev, H), [0, 2, 1]), dZ])) // [2, H, 4H]
  t.addGrad(CHAR_LM_PARAMS.weightIh, g.node('MatMul', [t.transpose(x, [0, 2, 1]), dZ])) // [2, E, 4H]
  t.addGrad(CHAR_LM_PARAMS.bias, t.sumRows(dZ)) // [2, 4H]
  const dX = t.reshape(g.node('MatMul', [dZ, t.transpose(wIh, [0, 2, 1])]), g.int64s([-1, E])) // [2·B·T, E], rows in char_ids' order
  t.addRowGrad(CHAR_LM_PARAMS.embeddings, ids, dX)

  g.output('loss', ce.loss, 'float32', [])
  g.output('loss.lm', ce.loss, 'float32', [])
  const squeeze0 = (v: string) => g.node('Squeeze', [v, g.int64s([0])])
  g.output(CHAR_LM_STATE_OUTPUTS.h, squeeze0(lstm.h), 'float32', [2, 'batch', H])
  g.output(CHAR_LM_STATE_OUTPUTS.c, squeeze0(lstm.c), 'float32', [2, 'batch', H])
  t.finishGradients()
  return {
    model: t.encode(`character LM training graph, ${T} characters per chunk`),
    params: t.params,
    lossTerms: ['loss.lm'],
    dropoutInputs: t.dropoutInputs,
    extraInputs: [{ name: next, dims: [2, 'batch', T], type: 'int64' }],
    rowGrads: t.rowGrads,
  }
}

/** Inputs of the states graph (core/model/word-tagger.ts charLmInputs fills them). */
export const CHAR_LM_INPUTS = { ids: 'char_lm.char_ids', lengths: 'char_lm.lengths', positions: 'char_lm.word_positions' } as const
/** Output of charLmStatesGraph: [B·T, 2H]. */
export const CHAR_LM_STATES_OUTPUT = 'char_lm.states'

/**
 * The states a word tagger reads, [B·T, 2H] (forward, then backward), from the inputs of
 * CHAR_LM_INPUTS: each direction's characters through ONNX's LSTM operator (gates reordered as the
 * word tagger's tagging graph does), then each word's row gathered. The model's parameters are
 * graph inputs, as every tagging graph's.
 */
export function charLmWordStates(t: GradGraph, lm: CharLmDims): string {
  const g = t.g
  const { charVocabSize: V, charDim: E, hidden: H } = lm
  const ids = g.input(CHAR_LM_INPUTS.ids, 'int64', [2, 'batch', 'characters'])
  const lengths = g.input(CHAR_LM_INPUTS.lengths, 'int32', ['batch'])
  const positions = g.input(CHAR_LM_INPUTS.positions, 'int64', [2, 'batch*steps'])
  const table = t.param(CHAR_LM_PARAMS.embeddings, [2 * V, E])
  const wIh = t.param(CHAR_LM_PARAMS.weightIh, [2, E, 4 * H])
  const wHh = t.param(CHAR_LM_PARAMS.weightHh, [2, H, 4 * H])
  const bias = t.param(CHAR_LM_PARAMS.bias, [2, 4 * H])
  const w = onnxLstmWeights(t, wIh, wHh, bias) // W [2, 4H, E], R [2, 4H, H], B [2, 8H]
  const x = g.node('Gather', [table, ids]) // [2, B, L, E]
  const states = [0, 1].map((d) => {
    const pick = (v: string) => g.node('Slice', [v, g.int64s([d]), g.int64s([d + 1]), g.int64s([0])]) // [1, ·]
    const xd = t.transpose(g.node('Squeeze', [pick(x), g.int64s([0])]), [1, 0, 2]) // [L, B, E]
    const y = g.node('LSTM', [xd, pick(w.W), pick(w.R), pick(w.B), lengths], { hidden_size: attr.int(H) }) // [L, 1, B, H]
    const rows = t.reshape(t.transpose(y, [2, 1, 0, 3]), g.int64s([-1, H])) // [B·L, H]
    return g.node('Gather', [rows, g.node('Gather', [positions, g.int64s([d], [])], { axis: attr.int(0) })]) // [B·T, H]
  })
  return g.node('Concat', states, { axis: attr.int(1) }) // [B·T, 2H]
}

/** The character LM's states of every word alone (a word tagger's training reads them once per sentence). */
export function charLmStatesGraph(lm: CharLmDims): TrainGraph {
  const t = new GradGraph('fastbioner_char_lm_states')
  t.g.output(CHAR_LM_STATES_OUTPUT, charLmWordStates(t, lm), 'float32', ['batch*steps', 2 * lm.hidden])
  return {
    model: t.g.encode({ opset: ONNX_OPSET, producerName: 'fastbioner', docString: 'character LM word states' }),
    params: t.params,
    lossTerms: [],
    dropoutInputs: [],
    extraInputs: [],
  }
}

/** The character LM's inputs of a batch (core/model/word-tagger.ts charLmInputs) as tensors. */
export function charLmFeeds(ort: typeof Ort, lm: CharLmInputs, batch: number): Record<string, Ort.Tensor> {
  return {
    [CHAR_LM_INPUTS.ids]: new ort.Tensor('int64', lm.ids, [2, batch, lm.steps]),
    [CHAR_LM_INPUTS.lengths]: new ort.Tensor('int32', lm.lengths, [batch]),
    [CHAR_LM_INPUTS.positions]: new ort.Tensor('int64', lm.positions, [2, lm.positions.length / 2]),
  }
}

/**
 * The character LM's states of every word of `sentences` ([words, 2H_lm] each), for training a
 * word tagger that reads them: the LM is frozen, so they are computed once, in batches of
 * sentences of similar length, instead of at every step.
 */
export async function charLmStatesOf(lm: NonNullable<WordTaggerDims['charLm']>, params: ReadonlyMap<string, Float32Array>, sentences: readonly (readonly string[])[], opts: OrtSessionOptions = {}): Promise<Float32Array[]> {
  const width = 2 * lm.hidden
  const out = new Array<Float32Array>(sentences.length)
  const order = sentences.map((_, i) => i).sort((a, b) => sentences[a].join(' ').length - sentences[b].join(' ').length)
  const runner = await OrtGraphRunner.open(charLmStatesGraph(lm), opts)
  try {
    for (let at = 0; at < order.length; at += 64) {
      const rows = order.slice(at, at + 64)
      const T = Math.max(1, ...rows.map((i) => sentences[i].length))
      const inputs = charLmInputs(lm, rows.map((i) => sentences[i]), T)
      const states = (await runner.outputs(params as Map<string, Float32Array>, charLmFeeds(runner.ort, inputs, rows.length)))[CHAR_LM_STATES_OUTPUT].data as Float32Array // [B·T, 2H]
      rows.forEach((i, r) => (out[i] = states.slice(r * T * width, (r * T + sentences[i].length) * width)))
    }
  } finally {
    await runner.dispose()
  }
  return out
}

/** The states of a batch's rows [B, T, 2H_lm] from each row's (charLmStatesOf), padding zero. */
export function batchCharLmStates(rows: readonly Float32Array[], steps: number, width: number): Float32Array {
  const out = new Float32Array(rows.length * steps * width)
  rows.forEach((r, b) => out.set(r, b * steps * width))
  return out
}
