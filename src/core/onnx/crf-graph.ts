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

/** One head's CRF inputs: emissions [B·T, C] (T fixed) and labels int64 [B, T]. */
export interface CrfHeadInput {
  head: string
  emissions: string
  labels: string
}

/**
 * The CRFs of K heads with C labels each, computed as one: every tensor carries the heads on a
 * leading axis ([K, B, ·]), so the T steps of the forward algorithm and of its derivative are one
 * set of nodes whatever K is. A multi-task word tagger has a CRF per head (the default model's
 * student four, three labels each), and per head they cost a step about 3.3 ms (2 × 300, 16 × 64
 * words, 2 threads), most of it launching the small per-step nodes. Returns each head's loss and
 * emission gradient, in the order of `heads`; their parameters' gradients are recorded.
 */
export function crfLossGraph(t: GradGraph, heads: CrfHeadInput[], T: number, C: number): CrfGraphLoss[] {
  const g = t.g
  const K = heads.length
  const names = heads.map((h) => crfParamNames(h.head))
  /** K tensors of one shape stacked on a new leading axis. */
  const stack = (xs: string[]) => {
    const lifted = xs.map((x) => g.node('Unsqueeze', [x, g.int64s([0])]))
    return K === 1 ? lifted[0] : g.node('Concat', lifted, { axis: attr.int(0) })
  }
  /** [K, ·] → K tensors of the head's own shape. */
  const unstack = (x: string) => (K === 1 ? [x] : g.nodeOutputs('Split', [x], { axis: attr.int(0) }, { outputs: K })).map((v) => g.node('Squeeze', [v, g.int64s([0])]))
  const trans = stack(names.map((n) => t.param(n.transitions, [C, C]))) // [K, C, C]
  const start = stack(names.map((n) => t.param(n.start, [C]))) // [K, C]
  const end = stack(names.map((n) => t.param(n.end, [C]))) // [K, C]
  const e4 = stack(heads.map((h) => g.node('Reshape', [h.emissions, g.int64s([-1, T, C])]))) // [K, B, T, C]
  const labels = stack(heads.map((h) => h.labels)) // [K, B, T]
  const valid = g.node('Not', [g.node('Less', [labels, g.int64s([0], [])])]) // bool [K, B, T]
  const validF = g.node('Cast', [valid], { to: attr.int(1) }) // [K, B, T]
  const y = g.node('Where', [valid, labels, g.int64s([0], [])]) // [K, B, T], 0 where unlabelled
  const count = g.node('Max', [t.reduceSum(validF, [1, 2], false), g.float(1)]) // [K]: labelled positions
  const countK11 = g.node('Unsqueeze', [count, g.int64s([1, 2])]) // [K, 1, 1]
  const lengths = t.reduceSum(validF, [2], false) // [K, B]
  const rowHas = g.node('Cast', [g.node('Greater', [lengths, g.float(0)])], { to: attr.int(1) }) // [K, B]
  const steps = (x: string) => (T === 1 ? [x] : g.nodeOutputs('Split', [x], { axis: attr.int(2) }, { outputs: T }))
  const squeeze2 = (x: string) => g.node('Squeeze', [x, g.int64s([2])])
  const e = steps(e4).map(squeeze2) // T × [K, B, C]
  const validSteps = steps(g.node('Unsqueeze', [validF, g.int64s([3])])).map(squeeze2) // T × [K, B, 1]
  const validBool = steps(g.node('Unsqueeze', [valid, g.int64s([3])])).map(squeeze2) // T × bool [K, B, 1]
  const transB = g.node('Unsqueeze', [trans, g.int64s([1])]) // [K, 1, C, C]
  /** log Σ_axis exp(x), keepdims false: one node (onnxruntime's kernel subtracts the max first; 1000, 999, 998 → 1000.41). */
  const lse = (x: string, axis: number) => g.node('ReduceLogSumExp', [x], { axes: attr.ints([axis]), keepdims: attr.int(0) })

  // ---- forward algorithm ----------------------------------------------------------------------
  const alpha: string[] = [t.add(g.node('Unsqueeze', [start, g.int64s([1])]), e[0])] // [K, B, C]
  const scores: string[] = [''] // s_t = α_{t−1}[:, :, :, None] + trans  [K, B, C, C]
  const lses: string[] = ['']
  for (let s = 1; s < T; s++) {
    const sc = t.add(g.node('Unsqueeze', [alpha[s - 1], g.int64s([3])]), transB)
    const l = lse(sc, 2) // [K, B, C]
    scores.push(sc)
    lses.push(l)
    alpha.push(g.node('Where', [validBool[s], t.add(l, e[s]), alpha[s - 1]]))
  }
  const final = t.add(alpha[T - 1], g.node('Unsqueeze', [end, g.int64s([1])])) // [K, B, C]
  const logZ = lse(final, 2) // [K, B]

  // ---- gold path score ------------------------------------------------------------------------
  const goldEm = t.reduceSum(t.mul(g.node('Squeeze', [g.node('GatherElements', [e4, g.node('Unsqueeze', [y, g.int64s([3])])], { axis: attr.int(3) }), g.int64s([3])]), validF), [2], false) // [K, B]
  let goldTrans: string | null = null
  if (T > 1) {
    const prev = g.node('Slice', [y, g.int64s([0]), g.int64s([T - 1]), g.int64s([2])]) // [K, B, T−1]
    const next = g.node('Slice', [y, g.int64s([1]), g.int64s([T]), g.int64s([2])])
    const pair = t.add(t.mul(prev, g.int64s([C], [])), next)
    const validNext = g.node('Slice', [validF, g.int64s([1]), g.int64s([T]), g.int64s([2])])
    // each head's transition score of each pair: its [C·C] row gathered by the pair's index
    const pairScore = t.reshape(g.node('GatherElements', [t.reshape(trans, g.int64s([0, -1])), t.reshape(pair, g.int64s([0, -1]))], { axis: attr.int(1) }), g.node('Shape', [pair])) // [K, B, T−1]
    goldTrans = t.reduceSum(t.mul(pairScore, validNext), [2], false) // [K, B]
  }
  const first = g.node('Squeeze', [g.node('Slice', [y, g.int64s([0]), g.int64s([1]), g.int64s([2])]), g.int64s([2])]) // [K, B]
  const lastIndex = g.node('Cast', [g.node('Max', [t.sub(lengths, g.float(1)), g.float(0)])], { to: attr.int(7) }) // [K, B] int64
  const last = g.node('Squeeze', [g.node('GatherElements', [y, g.node('Unsqueeze', [lastIndex, g.int64s([2])])], { axis: attr.int(2) }), g.int64s([2])]) // [K, B]
  const goldEnds = t.add(g.node('GatherElements', [start, first], { axis: attr.int(1) }), g.node('GatherElements', [end, last], { axis: attr.int(1) })) // [K, B]
  const gold = t.sum([goldEm, goldEnds, ...(goldTrans ? [goldTrans] : [])])
  const loss = g.node('Div', [t.reduceSum(t.mul(t.sub(logZ, gold), rowHas), [1], false), count]) // [K]

  // ---- backward -------------------------------------------------------------------------------
  const perCount = g.node('Div', [g.float(1), countK11]) // [K, 1, 1]
  const scale = t.mul(g.node('Unsqueeze', [rowHas, g.int64s([2])]), perCount) // [K, B, 1]: rowHas / count
  const pFinal = g.node('Softmax', [final], { axis: attr.int(2) }) // [K, B, C]
  let grad = t.mul(pFinal, scale) // g_{T−1}, already scaled
  const dEndModel = t.reduceSum(grad, [1], false) // [K, C]
  const dE: string[] = new Array<string>(T)
  const xis: string[] = []
  for (let s = T - 1; s >= 1; s--) {
    const gv = t.mul(grad, validSteps[s]) // [K, B, C]
    dE[s] = gv
    // ξ(i, j) = gv_j · softmax_i(s_ij) = gv_j · exp(s_ij − lse_j)
    const xi = t.mul(g.node('Exp', [t.sub(scores[s], g.node('Unsqueeze', [lses[s], g.int64s([2])]))]), g.node('Unsqueeze', [gv, g.int64s([2])])) // [K, B, C, C]
    xis.push(xi)
    // g·(1 − valid) = g − g·valid exactly (valid is 0 or 1)
    grad = t.add(t.sub(grad, gv), t.reduceSum(xi, [3], false))
  }
  // d trans = Σ_t Σ_b ξ_t: the steps' ξ side by side on the batch axis, one sum  [K, C, C]
  const dTrans = T > 1 ? t.reduceSum(xis.length === 1 ? xis[0] : g.node('Concat', xis, { axis: attr.int(1) }), [1], false) : null
  dE[0] = grad
  const dStartModel = t.reduceSum(grad, [1], false) // [K, C]
  // minus the gold path: one-hot of each labelled position, of each labelled transition, of the ends
  const oneHotOf = (ids: string) => g.node('Cast', [g.node('Equal', [g.node('Unsqueeze', [ids, g.int64s([-1])]), g.int64s(Array.from({ length: C }, (_, k) => k))])], { to: attr.int(1) }) // [..., C]
  const oneHot = oneHotOf(y) // [K, B, T, C]
  const goldE = t.mul(t.mul(oneHot, g.node('Unsqueeze', [validF, g.int64s([3])])), g.node('Unsqueeze', [perCount, g.int64s([3])])) // [K, B, T, C] / count
  const stacked = T === 1 ? g.node('Unsqueeze', [dE[0], g.int64s([2])]) : g.node('Concat', dE.map((x) => g.node('Unsqueeze', [x, g.int64s([2])])), { axis: attr.int(2) }) // [K, B, T, C]
  const dEmissions = t.sub(stacked, goldE) // [K, B, T, C]
  const goldStart = t.reduceSum(t.mul(oneHotOf(first), scale), [1], false) // [K, C], / count
  const goldEnd = t.reduceSum(t.mul(oneHotOf(last), scale), [1], false) // [K, C], / count
  const dStart = unstack(t.sub(dStartModel, goldStart))
  const dEnd = unstack(t.sub(dEndModel, goldEnd))
  let dTransAll: string[] | null = null
  if (T > 1) {
    const prevHot = g.node('Slice', [oneHot, g.int64s([0]), g.int64s([T - 1]), g.int64s([2])]) // [K, B, T−1, C]
    const nextHot = t.mul(g.node('Slice', [oneHot, g.int64s([1]), g.int64s([T]), g.int64s([2])]), g.node('Unsqueeze', [g.node('Slice', [validF, g.int64s([1]), g.int64s([T]), g.int64s([2])]), g.int64s([3])]))
    // per head Σ_{b,t} prev_onehot ⊗ next_onehot: [K, C, B·(T−1)] · [K, B·(T−1), C]
    const flat = (x: string) => t.reshape(x, g.int64s([0, -1, C]))
    const pairs = g.node('MatMul', [t.transpose(flat(prevHot), [0, 2, 1]), flat(nextHot)]) // [K, C, C]
    dTransAll = unstack(t.sub(dTrans!, t.mul(pairs, perCount)))
  }
  const losses = unstack(loss)
  const dEms = unstack(dEmissions)
  return heads.map((_, k) => {
    t.addGrad(names[k].start, dStart[k])
    t.addGrad(names[k].end, dEnd[k])
    if (dTransAll) t.addGrad(names[k].transitions, dTransAll[k])
    return { loss: losses[k], dEmissions: t.reshape(dEms[k], g.int64s([-1, C])) }
  })
}
