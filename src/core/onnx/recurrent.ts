// Training and tagging graphs of the word-level recurrent tagger (core/model/word-tagger.ts): word
// embedding + character CNN + case/shape flags → BiLSTM → linear emissions → CRF loss
// (./crf-graph), so that a training step is one graph run.
//
// onnxruntime-node has no LSTM gradient kernel, so the recurrence is unrolled for a fixed number of
// word positions T (one graph per length bucket; the batch stays dynamic) and its backward is
// written step by step next to the forward, as the BERT blocks are in ./training.ts.
//
// Both directions run as one stacked recurrence [2, B, ·]: the host passes `reverse_index`, a
// permutation of the B·T word rows that reverses each sentence within its own length (padding
// stays in place), so the backward direction sees its words as a prefix too and no masking is
// needed inside the recurrence. A permutation that reverses is its own inverse: the same Gather
// maps outputs back and gradients through.
//
// The recurrence and its backward: ./lstm (shared with the character LM). Parameters are in the
// tfjs layout ([in, out]) as the rest of the training graphs.
// Character CNN and shape flags: ./char-cnn (shared with the BERT encoder's character channel).

import { attr } from './graph'
import { ONNX_OPSET } from './export'
import { GradGraph, logitsOutput, type TrainGraph } from './training'
import { crfLossGraph } from './crf-graph'
import { charCnnLayer } from './char-cnn'
import { charLmStateDim, wordTaggerInputDim, type WordTaggerDims } from '../model/word-tagger'
import { charLmWordStates } from './char-lm'
import { ONNX_GATE_BLOCKS, onnxLstmBias, onnxLstmWeights, unrolledLstm } from './lstm'

/** Training graphs' input of the character LM's states of each word [B, T, 2H_lm] (computed once per sentence: the LM is frozen). */
export const CHAR_LM_STATES_INPUT = 'char_lm_states'

export interface WordTaggerGraphOptions {
  dims: WordTaggerDims
  /** Word positions of this graph's bucket. */
  steps: number
  heads: Array<{ name: string; numLabels: number }>
  /** Dropout masks as inputs (`dropout.input` [B, T, Din], `dropout.output` [B·T, 2H]). */
  dropout: boolean
}

export const WORD_TAGGER_PARAMS = {
  wordEmbeddings: 'embeddings.word_embeddings.weight',
  charEmbeddings: 'char_cnn.char_embeddings.weight',
  charConv: 'char_cnn.conv',
  lstm: 'lstm',
} as const


const headPrefix = (head: string): string => (head === 'default' ? 'classifier' : `classifiers.${head}`)

interface Forward {
  t: GradGraph
  logits: Array<{ name: string; y: string; backward: (dy: string) => string }>
  backward: (dHidden: string) => void
}

/**
 * Word embedding, character CNN and shape flags of every word, dropout applied: x [B·T, Din], and
 * the backward of everything before the recurrence. T is a number (a training bucket) or
 * 'steps' (the inference graph, any length).
 */
function inputFeatures(t: GradGraph, d: WordTaggerDims, T: number | 'steps', dropout: boolean, lmStatesInput = false) {
  const g = t.g
  const Din = wordTaggerInputDim(d)
  const wordIds = g.input('word_ids', 'int64', ['batch', T])

  // ---- word embedding [B, T, Dw] -------------------------------------------------------------
  // The tables' rows are symbolic: a bucket's graph is the same whatever the vocabulary sizes, so a
  // model retrained with a grown vocabulary reuses the sessions already opened (train/ort.ts).
  const wordTable = t.param(WORD_TAGGER_PARAMS.wordEmbeddings, [d.wordVocabSize, d.wordDim], ['word_vocab', d.wordDim])
  const words = g.node('Gather', [wordTable, wordIds])

  // ---- character CNN and shape flags [B, T, F + F_s] (./char-cnn) ---------------------------
  const chars = charCnnLayer(g, (name, shape) => t.param(name, shape, name === WORD_TAGGER_PARAMS.charEmbeddings ? ['char_vocab', shape[1]] : shape), d, { embeddings: WORD_TAGGER_PARAMS.charEmbeddings, conv: WORD_TAGGER_PARAMS.charConv }, T)

  // ---- the character LM's states [B, T, 2H_lm] (frozen: no gradient) --------------------------
  // Training reads them computed once per sentence (CHAR_LM_STATES_INPUT); tagging runs the LM,
  // or reads them too (lmStatesInput: a training run's devel tagging, the same sentences each epoch).
  const lmWidth = charLmStateDim(d)
  const lm = !d.charLm
    ? []
    : T === 'steps' && !lmStatesInput
      ? [g.node('Reshape', [charLmWordStates(t, d.charLm), g.node('Concat', [g.node('Shape', [wordIds]), g.int64s([lmWidth])], { axis: attr.int(0) })])]
      : [g.input(CHAR_LM_STATES_INPUT, 'float32', ['batch', T, lmWidth])]

  // ---- input features [B·T, Din] with dropout -----------------------------------------------
  const x = t.reshape(g.node('Concat', [words, chars.features, ...lm], { axis: attr.int(2) }), g.int64s([-1, Din]))
  const xDrop = t.dropout(dropout, 'dropout.input', x, ['batch*steps', Din])

  /** dX: gradient at x after dropout [B·T, Din]. */
  const backward = (dXDrop: string) => {
    const dX = xDrop.backward(dXDrop)
    const [dWords, dChars] = g.nodeOutputs('Split', [dX, g.int64s([d.wordDim, d.charFilters + d.shapeFlags, ...(lmWidth ? [lmWidth] : [])])], { axis: attr.int(1) }, { outputs: lmWidth ? 3 : 2 })
    // The rows the batch read, not the whole table: the trainer updates those rows (HostAdamW's lazy rows).
    t.addRowGrad(WORD_TAGGER_PARAMS.wordEmbeddings, wordIds, dWords)
    chars.backward(t, dChars)
  }
  return { x: xDrop.y, wordIds, backward }
}

function forward(name: string, o: WordTaggerGraphOptions): Forward {
  const t = new GradGraph(name)
  const g = t.g
  const d = o.dims
  const T = o.steps
  const H = d.lstmHidden
  const Din = wordTaggerInputDim(d)
  const features = inputFeatures(t, d, T, o.dropout)
  const reverseIndex = g.input('reverse_index', 'int64', ['batch*steps'])
  const bShape = g.node('Slice', [g.node('Shape', [features.wordIds]), g.int64s([0]), g.int64s([1])]) // [1]: B
  const xRev = g.node('Gather', [features.x, reverseIndex]) // [B·T, Din], each sentence reversed
  const x2 = g.node('Concat', [g.node('Unsqueeze', [features.x, g.int64s([0])]), g.node('Unsqueeze', [xRev, g.int64s([0])])], { axis: attr.int(0) }) // [2, B·T, Din]

  // ---- stacked BiLSTM ------------------------------------------------------------------------
  const wIh = t.param(`${WORD_TAGGER_PARAMS.lstm}.weight_ih`, [2, Din, 4 * H])
  const wHh = t.param(`${WORD_TAGGER_PARAMS.lstm}.weight_hh`, [2, H, 4 * H])
  const bias = t.param(`${WORD_TAGGER_PARAMS.lstm}.bias`, [2, 4 * H])
  const xw = t.add(g.node('MatMul', [x2, wIh]), g.node('Unsqueeze', [bias, g.int64s([1])])) // [2, B·T, 4H]
  const xwSteps = t.transpose(g.node('Reshape', [xw, g.node('Concat', [g.int64s([2]), bShape, g.int64s([T, 4 * H])], { axis: attr.int(0) })]), [2, 0, 1, 3]) // [T, 2, B, 4H]
  // A step's tensors keep the leading axis of one (Split's pieces): [1, 2, B, ·]. MatMul with the
  // [2, ·, ·] weights broadcasts over it, and the steps concatenate back on it, so no step needs a
  // Squeeze or Unsqueeze node (the graph holds T of each step's nodes; see Step).
  const xwT = T === 1 ? [xwSteps] : g.nodeOutputs('Split', [xwSteps], { axis: attr.int(0) }, { outputs: T }) // T × [1, 2, B, 4H]
  const squeeze0 = (v: string) => g.node('Squeeze', [v, g.int64s([0])])
  /** T × [1, 2, B, W] → [2, B·T, W] (the rows in batch-major order, as xw's). */
  const stepsToRows = (vs: string[], W: number) => t.reshape(t.transpose(vs.length === 1 ? vs[0] : g.node('Concat', vs, { axis: attr.int(0) }), [1, 2, 0, 3]), g.int64s([2, -1, W]))

  const lstm = unrolledLstm(t, xwT, wHh, H)
  const hs = lstm.hs
  const hFlat = stepsToRows(hs, H) // [2, B·T, H]
  const [hFwd, hBwdRev] = g.nodeOutputs('Split', [hFlat], { axis: attr.int(0) }, { outputs: 2 })
  const hBwd = g.node('Gather', [squeeze0(hBwdRev), reverseIndex]) // [B·T, H] back in word order
  const hidden = g.node('Concat', [squeeze0(hFwd), hBwd], { axis: attr.int(1) }) // [B·T, 2H]
  const hDrop = t.dropout(o.dropout, 'dropout.output', hidden, ['batch*steps', 2 * H])

  const logits = o.heads.map((head) => {
    const lin = t.linear(headPrefix(head.name), hDrop.y, 2 * H, head.numLabels)
    return { name: head.name, y: lin.y, backward: lin.backward }
  })

  const backward = (dHiddenDrop: string) => {
    const dHidden = hDrop.backward(dHiddenDrop) // [B·T, 2H]
    const [dFwd, dBwd] = g.nodeOutputs('Split', [dHidden], { axis: attr.int(1) }, { outputs: 2 })
    const dBwdRev = g.node('Gather', [dBwd, reverseIndex])
    const dH2 = g.node('Concat', [g.node('Unsqueeze', [dFwd, g.int64s([0])]), g.node('Unsqueeze', [dBwdRev, g.int64s([0])])], { axis: attr.int(0) }) // [2, B·T, H]
    const dHSteps = t.transpose(g.node('Reshape', [dH2, g.node('Concat', [g.int64s([2]), bShape, g.int64s([T, H])], { axis: attr.int(0) })]), [2, 0, 1, 3]) // [T, 2, B, H]
    const dHOut = T === 1 ? [dHSteps] : g.nodeOutputs('Split', [dHSteps], { axis: attr.int(0) }, { outputs: T }) // T × [1, 2, B, H]
    const dz = lstm.backward(dHOut)
    const dZ = stepsToRows(dz, 4 * H) // [2, B·T, 4H]
    // h_{t−1} for every step: zeros, then h_0 … h_{T−2}  [2, B·T, H]
    if (T > 1) t.addGrad(`${WORD_TAGGER_PARAMS.lstm}.weight_hh`, g.node('MatMul', [t.transpose(stepsToRows(lstm.hPrev, H), [0, 2, 1]), dZ])) // [2, H, 4H]
    t.addGrad(`${WORD_TAGGER_PARAMS.lstm}.weight_ih`, g.node('MatMul', [t.transpose(x2, [0, 2, 1]), dZ])) // [2, Din, 4H]
    t.addGrad(`${WORD_TAGGER_PARAMS.lstm}.bias`, t.sumRows(dZ)) // [2, 4H]
    const dX2 = g.node('MatMul', [dZ, t.transpose(wIh, [0, 2, 1])]) // [2, B·T, Din]
    const [dXf, dXr] = g.nodeOutputs('Split', [dX2], { axis: attr.int(0) }, { outputs: 2 })
    features.backward(t.add(squeeze0(dXf), g.node('Gather', [squeeze0(dXr), reverseIndex]))) // [B·T, Din]
  }
  return { t, logits, backward }
}

/**
 * One training step of the word tagger in one run: emissions, each head's CRF loss (./crf-graph)
 * against `labels.<head>` int64 [B, T] (−100 where a row has no label: padding, or a row of another
 * head's corpus), and every gradient. Inputs word_ids, char_ids, shape_flags, reverse_index, the
 * labels and the dropout masks; outputs `loss` (Σ over heads), `loss.<head>`, the gradients
 * (CRF scores included) and grad_norm_sq.
 */
export function wordTaggerTrainGraph(o: WordTaggerGraphOptions): TrainGraph {
  const f = forward(`fastbioner_word_tagger_train_T${o.steps}`, o)
  const { t } = f
  const g = t.g
  const extraInputs: TrainGraph['extraInputs'] = []
  const labels = new Map(f.logits.map((head) => [head.name, g.input(`labels.${head.name}`, 'int64', ['batch', o.steps])]))
  for (const name of labels.values()) extraInputs.push({ name, dims: ['batch', o.steps], type: 'int64' })
  // The CRFs of heads with as many labels run as one (./crf-graph).
  const crfs = new Map<string, { loss: string; dEmissions: string }>()
  for (const C of new Set(o.heads.map((h) => h.numLabels))) {
    const group = f.logits.filter((_, k) => o.heads[k].numLabels === C) // logits in the order of o.heads
    const out = crfLossGraph(t, group.map((head) => ({ head: head.name, emissions: head.y, labels: labels.get(head.name)! })), o.steps, C)
    group.forEach((head, k) => crfs.set(head.name, out[k]))
  }
  const dTop: string[] = []
  const losses: string[] = []
  const lossTerms: string[] = []
  for (const head of f.logits) {
    const crf = crfs.get(head.name)!
    dTop.push(head.backward(crf.dEmissions))
    losses.push(crf.loss)
    lossTerms.push(g.output(`loss.${head.name}`, crf.loss, 'float32', []))
  }
  f.backward(t.sum(dTop))
  g.output('loss', t.sum(losses), 'float32', [])
  t.finishGradients()
  return {
    model: g.encode({ opset: ONNX_OPSET, producerName: 'fastbioner', docString: `word tagger training graph, ${o.steps} steps` }),
    params: t.params,
    lossTerms,
    dropoutInputs: t.dropoutInputs,
    extraInputs,
    rowGrads: t.rowGrads,
  }
}

/**
 * The tagging graph: the same emissions for any number of words, the recurrence as ONNX's own LSTM
 * operator (bidirectional, `sequence_lens` [B] int32 bounding each sentence), so one session serves
 * every length. Parameters stay inputs (a model in training is tagged with its weights as they
 * are). ONNX orders the gates i, o, f, c where PyTorch (and our parameters) order i, f, g, o: the
 * graph reorders the weight blocks; the bias goes in Wb, Rb is zero.
 */
export function wordTaggerTaggingGraph(dims: WordTaggerDims, heads: ReadonlyArray<{ name: string; numLabels: number }>, opts: { lmStatesInput?: boolean; int8Lstm?: boolean } = {}): TrainGraph {
  const t = new GradGraph('fastbioner_word_tagger')
  const g = t.g
  const H = dims.lstmHidden
  const Din = wordTaggerInputDim(dims)
  const features = inputFeatures(t, dims, 'steps', false, opts.lmStatesInput)
  const lengths = g.input('sequence_lens', 'int32', ['batch'])
  const wordsShape = g.node('Shape', [features.wordIds]) // [B, T]
  const x = t.transpose(g.node('Reshape', [features.x, g.node('Concat', [wordsShape, g.int64s([Din])], { axis: attr.int(0) })]), [1, 0, 2]) // [T, B, Din]
  const Y = bilstm(t, x, lengths, Din, H, opts.int8Lstm ?? false) // [T, 2, B, H]
  const hidden = t.reshape(t.transpose(Y, [2, 0, 1, 3]), g.int64s([-1, 2 * H])) // [B·T, 2H]: forward, then backward
  for (const head of heads) {
    const lin = t.linear(headPrefix(head.name), hidden, 2 * H, head.numLabels)
    g.output(logitsOutput(head.name), lin.y, 'float32', ['batch*steps', head.numLabels])
  }
  return {
    model: g.encode({ opset: ONNX_OPSET, producerName: 'fastbioner', docString: 'word tagger tagging graph', ...(opts.int8Lstm ? { extraOpsets: { 'com.microsoft': 1 } } : {}) }),
    params: t.params,
    lossTerms: [],
    dropoutInputs: [],
    extraInputs: [],
  }
}

/** The tagging graph's inputs of the int8 BiLSTM (int8LstmInputs fills them). */
export const INT8_LSTM = { W: 'lstm.weight_ih.int8', R: 'lstm.weight_hh.int8', wScale: 'lstm.weight_ih.scale', rScale: 'lstm.weight_hh.scale' } as const

/**
 * The tagging graph's BiLSTM over x [T, B, Din] with `lengths` [B]: ONNX's LSTM on the float
 * parameters, or with `int8` onnxruntime's com.microsoft DynamicQuantizeLSTM on int8 weights with
 * a scale per gate column (INT8_LSTM inputs, int8LstmInputs), the inputs quantized per step by the
 * operator itself. The bias stays a float parameter. Returns Y [T, 2, B, H].
 */
export function bilstm(t: GradGraph, x: string, lengths: string, Din: number, H: number, int8: boolean): string {
  const g = t.g
  const bias = t.param(`${WORD_TAGGER_PARAMS.lstm}.bias`, [2, 4 * H])
  const attrs = { direction: attr.string('bidirectional'), hidden_size: attr.int(H) }
  if (!int8) {
    const wIh = t.param(`${WORD_TAGGER_PARAMS.lstm}.weight_ih`, [2, Din, 4 * H])
    const wHh = t.param(`${WORD_TAGGER_PARAMS.lstm}.weight_hh`, [2, H, 4 * H])
    const { W, R, B } = onnxLstmWeights(t, wIh, wHh, bias)
    return g.node('LSTM', [x, W, R, B, lengths], attrs)
  }
  const W = g.input(INT8_LSTM.W, 'int8', [2, Din, 4 * H])
  const R = g.input(INT8_LSTM.R, 'int8', [2, H, 4 * H])
  const wScale = g.input(INT8_LSTM.wScale, 'float32', [2, 4 * H])
  const rScale = g.input(INT8_LSTM.rScale, 'float32', [2, 4 * H])
  const zeroPoints = g.constant(new Int8Array(2 * 4 * H), [2, 4 * H])
  return g.node('DynamicQuantizeLSTM', [x, W, R, onnxLstmBias(t, bias), lengths, '', '', '', wScale, zeroPoints, rScale, zeroPoints], attrs, { domain: 'com.microsoft' })
}

/**
 * The BiLSTM's weights as DynamicQuantizeLSTM takes them: W_ih [2, Din, 4H] and W_hh [2, H, 4H]
 * (our layout, gates reordered i, f, g, o → i, o, f, c) as symmetric int8 with one scale per gate
 * column and direction ([2, 4H]: max |w| of the column / 127). Every weight is within half a
 * scale of its float value.
 */
export function int8LstmInputs(params: ReadonlyMap<string, Float32Array>, dims: WordTaggerDims): Array<{ name: string; data: Int8Array | Float32Array; dims: number[] }> {
  const H = dims.lstmHidden
  const out: Array<{ name: string; data: Int8Array | Float32Array; dims: number[] }> = []
  for (const [which, rows, q, scale] of [['weight_ih', wordTaggerInputDim(dims), INT8_LSTM.W, INT8_LSTM.wScale], ['weight_hh', H, INT8_LSTM.R, INT8_LSTM.rScale]] as const) {
    const w = params.get(`${WORD_TAGGER_PARAMS.lstm}.${which}`)
    if (!w || w.length !== 2 * rows * 4 * H) throw new Error(`word tagger: ${WORD_TAGGER_PARAMS.lstm}.${which} is not [2, ${rows}, ${4 * H}]`)
    const cols = 4 * H
    // Column k of the operator's gate order i, o, f, c reads our column from[k] (order i, f, g, o).
    const from = Int32Array.from({ length: cols }, (_, k) => ONNX_GATE_BLOCKS[Math.floor(k / H)] * H + (k % H))
    const qs = new Int8Array(2 * rows * cols)
    const scales = new Float32Array(2 * cols)
    for (let d = 0; d < 2; d++) {
      const base = d * rows * cols
      for (let k = 0; k < cols; k++) {
        let m = 0
        for (let r = 0; r < rows; r++) m = Math.max(m, Math.abs(w[base + r * cols + from[k]]))
        const s = m > 0 ? m / 127 : 1
        scales[d * cols + k] = s
        for (let r = 0; r < rows; r++) qs[base + r * cols + k] = Math.round(w[base + r * cols + from[k]] / s)
      }
    }
    out.push({ name: q, data: qs, dims: [2, rows, cols] }, { name: scale, data: scales, dims: [2, cols] })
  }
  return out
}
