// The linear-chain CRF loss inside a training graph with a fixed number of steps (the word
// tagger's length buckets), so a step is one graph run: the host CRF (core/model/crf) needs the
// emissions first and then a second run to backpropagate its gradient, which repeats the whole
// forward pass. Semantics are crfBatchLoss's: labels −100 mark positions without a label, each
// row's labelled positions are a prefix, the loss is Σ_rows (log Z − gold score) / labelled
// positions, and a row without labels contributes nothing.
//
// Forward algorithm in log space, α_0 = start + e_0, α_t = lse_i(α_{t−1,i} + trans_ij) + e_t,j on
// labelled steps (α carried unchanged past a row's end), log Z = lse(α_{T−1} + end). Its
// reverse-mode derivative, step by step from the end: with g_t = d log Z / d α_t,
//   d e_t = g_t·valid_t,   ξ_t(i, j) = g_t,j·valid_t·softmax_i(α_{t−1,i} + trans_ij),
//   d trans += Σ_b ξ_t,   g_{t−1} = g_t·(1 − valid_t) + Σ_j ξ_t(·, j),   d start = Σ_b g_0,
// minus the gold path's counts; all divided by the number of labelled positions.

import { attr } from './graph'
import { crfParamNames } from '../model/crf'
import type { GradGraph } from './training'

export interface CrfGraphLoss {
  /** Scalar loss of this head. */
  loss: string
  /** d loss / d emissions [B·T, C]. */
  dEmissions: string
}

/** The CRF of `head` over emissions [B·T, C] (T fixed) against labels int64 [B, T]. */
export function crfLossGraph(t: GradGraph, head: string, emissions: string, labels: string, T: number, C: number): CrfGraphLoss {
  const g = t.g
  const n = crfParamNames(head)
  const trans = t.param(n.transitions, [C, C])
  const start = t.param(n.start, [C])
  const end = t.param(n.end, [C])
  const e3 = g.node('Reshape', [emissions, g.int64s([-1, T, C])]) // [B, T, C]
  const valid = g.node('Not', [g.node('Less', [labels, g.int64s([0], [])])]) // bool [B, T]
  const validF = g.node('Cast', [valid], { to: attr.int(1) }) // [B, T]
  const y = g.node('Where', [valid, labels, g.int64s([0], [])]) // [B, T], 0 where unlabelled
  const count = g.node('Max', [t.reduceSum(validF, [0, 1], false), g.float(1)]) // labelled positions
  const lengths = t.reduceSum(validF, [1], false) // [B]
  const rowHas = g.node('Cast', [g.node('Greater', [lengths, g.float(0)])], { to: attr.int(1) }) // [B]
  const steps = (x: string) => (T === 1 ? [x] : g.nodeOutputs('Split', [x], { axis: attr.int(1) }, { outputs: T }))
  const squeeze1 = (x: string) => g.node('Squeeze', [x, g.int64s([1])])
  const e = steps(e3).map(squeeze1) // T × [B, C]
  const validSteps = steps(g.node('Unsqueeze', [validF, g.int64s([2])])).map(squeeze1) // T × [B, 1]
  const validBool = steps(g.node('Unsqueeze', [valid, g.int64s([2])])).map(squeeze1) // T × bool [B, 1]
  const transB = g.node('Unsqueeze', [trans, g.int64s([0])]) // [1, C, C]
  /** log Σ_axis exp(x), keepdims false. */
  const lse = (x: string, axis: number) => {
    const m = g.node('ReduceMax', [x], { axes: attr.ints([axis]), keepdims: attr.int(1) })
    const s = g.node('Log', [g.node('ReduceSum', [g.node('Exp', [t.sub(x, m)]), g.int64s([axis])], { keepdims: attr.int(1) })])
    return g.node('Squeeze', [t.add(s, m), g.int64s([axis])])
  }

  // ---- forward algorithm ----------------------------------------------------------------------
  const alpha: string[] = [t.add(start, e[0])] // [B, C]
  const scores: string[] = [''] // s_t = α_{t−1}[:, :, None] + trans  [B, C, C]
  const lses: string[] = ['']
  for (let s = 1; s < T; s++) {
    const sc = t.add(g.node('Unsqueeze', [alpha[s - 1], g.int64s([2])]), transB)
    const l = lse(sc, 1) // [B, C]
    scores.push(sc)
    lses.push(l)
    alpha.push(g.node('Where', [validBool[s], t.add(l, e[s]), alpha[s - 1]]))
  }
  const final = t.add(alpha[T - 1], end) // [B, C]
  const logZ = lse(final, 1) // [B]

  // ---- gold path score ------------------------------------------------------------------------
  const goldEm = t.reduceSum(t.mul(g.node('Squeeze', [g.node('GatherElements', [e3, g.node('Unsqueeze', [y, g.int64s([2])])], { axis: attr.int(2) }), g.int64s([2])]), validF), [1], false) // [B]
  let goldTrans: string | null = null
  if (T > 1) {
    const prev = g.node('Slice', [y, g.int64s([0]), g.int64s([T - 1]), g.int64s([1])]) // [B, T−1]
    const next = g.node('Slice', [y, g.int64s([1]), g.int64s([T]), g.int64s([1])])
    const pair = t.add(t.mul(prev, g.int64s([C], [])), next)
    const validNext = g.node('Slice', [validF, g.int64s([1]), g.int64s([T]), g.int64s([1])])
    goldTrans = t.reduceSum(t.mul(g.node('Gather', [t.reshape(trans, g.int64s([-1])), pair]), validNext), [1], false) // [B]
  }
  const first = g.node('Squeeze', [g.node('Slice', [y, g.int64s([0]), g.int64s([1]), g.int64s([1])]), g.int64s([1])]) // [B]
  const lastIndex = g.node('Cast', [g.node('Max', [t.sub(lengths, g.float(1)), g.float(0)])], { to: attr.int(7) }) // [B] int64
  const last = g.node('Squeeze', [g.node('GatherElements', [y, g.node('Unsqueeze', [lastIndex, g.int64s([1])])], { axis: attr.int(1) }), g.int64s([1])]) // [B]
  const goldEnds = t.add(g.node('Gather', [start, first]), g.node('Gather', [end, last])) // [B]
  const gold = t.sum([goldEm, goldEnds, ...(goldTrans ? [goldTrans] : [])])
  const loss = g.node('Div', [t.reduceSum(t.mul(t.sub(logZ, gold), rowHas), [0], false), count])

  // ---- backward -------------------------------------------------------------------------------
  const scale = g.node('Unsqueeze', [g.node('Div', [rowHas, count]), g.int64s([1])]) // [B, 1]
  const pFinal = g.node('Softmax', [final], { axis: attr.int(1) }) // [B, C]
  let grad = t.mul(pFinal, scale) // g_{T−1}, already scaled
  t.addGrad(n.end, t.reduceSum(grad, [0], false))
  const dE: string[] = new Array<string>(T)
  const dTrans: string[] = []
  for (let s = T - 1; s >= 1; s--) {
    const gv = t.mul(grad, validSteps[s]) // [B, C]
    dE[s] = gv
    // ξ(i, j) = gv_j · softmax_i(s_ij) = gv_j · exp(s_ij − lse_j)
    const xi = t.mul(g.node('Exp', [t.sub(scores[s], g.node('Unsqueeze', [lses[s], g.int64s([1])]))]), g.node('Unsqueeze', [gv, g.int64s([1])])) // [B, C, C]
    dTrans.push(t.reduceSum(xi, [0], false))
    grad = t.add(t.mul(grad, t.sub(g.float(1), validSteps[s])), t.reduceSum(xi, [2], false))
  }
  dE[0] = grad
  t.addGrad(n.start, t.reduceSum(grad, [0], false))
  // minus the gold path: one-hot of each labelled position, of each labelled transition, of the ends
  const classes = g.int64s(Array.from({ length: C }, (_, k) => k), [1, 1, C])
  const oneHot = g.node('Cast', [g.node('Equal', [g.node('Unsqueeze', [y, g.int64s([2])]), classes])], { to: attr.int(1) }) // [B, T, C]
  const perRow = g.node('Unsqueeze', [g.node('Unsqueeze', [g.node('Div', [g.float(1), count]), g.int64s([0])]), g.int64s([0])]) // [1, 1]
  const goldE = t.mul(t.mul(oneHot, g.node('Unsqueeze', [validF, g.int64s([2])])), g.node('Unsqueeze', [perRow, g.int64s([0])])) // [B, T, C] / count
  const stacked = T === 1 ? g.node('Unsqueeze', [dE[0], g.int64s([1])]) : g.node('Concat', dE.map((x) => g.node('Unsqueeze', [x, g.int64s([1])])), { axis: attr.int(1) }) // [B, T, C]
  const dEmissions = t.reshape(t.sub(stacked, goldE), g.int64s([-1, C])) // [B·T, C]
  const goldStart = t.reduceSum(t.mul(g.node('Cast', [g.node('Equal', [g.node('Unsqueeze', [first, g.int64s([1])]), g.int64s(Array.from({ length: C }, (_, k) => k), [1, C])])], { to: attr.int(1) }), g.node('Unsqueeze', [rowHas, g.int64s([1])])), [0], false) // [C]
  const goldEnd = t.reduceSum(t.mul(g.node('Cast', [g.node('Equal', [g.node('Unsqueeze', [last, g.int64s([1])]), g.int64s(Array.from({ length: C }, (_, k) => k), [1, C])])], { to: attr.int(1) }), g.node('Unsqueeze', [rowHas, g.int64s([1])])), [0], false) // [C]
  t.addGrad(n.start, g.node('Neg', [g.node('Div', [goldStart, count])]))
  t.addGrad(n.end, g.node('Neg', [g.node('Div', [goldEnd, count])]))
  if (T > 1) {
    const prevHot = g.node('Slice', [oneHot, g.int64s([0]), g.int64s([T - 1]), g.int64s([1])]) // [B, T−1, C]
    const nextHot = t.mul(g.node('Slice', [oneHot, g.int64s([1]), g.int64s([T]), g.int64s([1])]), g.node('Unsqueeze', [g.node('Slice', [validF, g.int64s([1]), g.int64s([T]), g.int64s([1])]), g.int64s([2])]))
    // Σ_{b,t} prev_onehot ⊗ next_onehot: [C, B·(T−1)] · [B·(T−1), C]
    const pairs = g.node('MatMul', [t.transpose(t.reshape(prevHot, g.int64s([-1, C])), [1, 0]), t.reshape(nextHot, g.int64s([-1, C]))])
    t.addGrad(n.transitions, t.sub(t.sum(dTrans), g.node('Div', [pairs, count])))
  }
  return { loss, dEmissions }
}
