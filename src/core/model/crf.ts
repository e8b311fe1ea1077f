// A linear-chain CRF over a head's label scores (Lample et al. 2016, as pytorch-crf): the
// encoder's logits are the emissions, a [C, C] transition matrix (from → to) and start/end scores
// are learnt with it. Training minimises −log p(gold path); tagging takes the Viterbi path.
//
// Everything here runs on the host in float64 after the encoder's forward pass: C is 3–7 and a
// sentence has tens of words, so the forward–backward recursions cost microseconds, and keeping
// them out of the ONNX graph leaves every engine's graph (training, export, int8) unchanged.
// Written by hand: no maintained JS package offers CRF marginals with gradients.

import type { Rng } from '../rng'
import { DEFAULT_HEAD } from './config'

/** Learnt scores of one head's CRF; C = number of labels. */
export interface CrfScores {
  /** [C, C] row-major: score of label `to` following label `from` at index from·C + to. */
  transitions: ArrayLike<number>
  /** [C]: score of a sequence starting with each label. */
  start: ArrayLike<number>
  /** [C]: score of a sequence ending with each label. */
  end: ArrayLike<number>
}

export interface CrfGradients {
  transitions: Float64Array
  start: Float64Array
  end: Float64Array
}

function logSumExp(v: ArrayLike<number>, n: number, offset = 0): number {
  let max = -Infinity
  for (let i = 0; i < n; i++) max = Math.max(max, v[offset + i])
  if (max === -Infinity) return -Infinity
  let s = 0
  for (let i = 0; i < n; i++) s += Math.exp(v[offset + i] - max)
  return max + Math.log(s)
}

/** Score of one label path given its emissions ([L, C] row-major). */
export function pathScore(emissions: ArrayLike<number>, path: ArrayLike<number>, C: number, crf: CrfScores): number {
  const L = path.length
  if (L === 0) return 0
  let s = crf.start[path[0]] + crf.end[path[L - 1]]
  for (let t = 0; t < L; t++) {
    s += emissions[t * C + path[t]]
    if (t > 0) s += crf.transitions[path[t - 1] * C + path[t]]
  }
  return s
}

/** The forward recursion: alpha[t, j] = log Σ over label prefixes ending in j at t; logZ over all paths. */
function forward(emissions: ArrayLike<number>, L: number, C: number, crf: CrfScores): { alpha: Float64Array; logZ: number } {
  const alpha = new Float64Array(L * C)
  const tmp = new Float64Array(C)
  for (let j = 0; j < C; j++) alpha[j] = crf.start[j] + emissions[j]
  for (let t = 1; t < L; t++) {
    for (let j = 0; j < C; j++) {
      for (let i = 0; i < C; i++) tmp[i] = alpha[(t - 1) * C + i] + crf.transitions[i * C + j]
      alpha[t * C + j] = logSumExp(tmp, C) + emissions[t * C + j]
    }
  }
  for (let j = 0; j < C; j++) tmp[j] = alpha[(L - 1) * C + j] + crf.end[j]
  return { alpha, logZ: logSumExp(tmp, C) }
}

/** An index drawn with probability ∝ exp(logWeights[i]), i < n. */
function sampleLogWeights(logWeights: Float64Array, n: number, rng: Rng): number {
  let max = -Infinity
  for (let i = 0; i < n; i++) max = Math.max(max, logWeights[i])
  if (max === -Infinity) return 0
  let total = 0
  for (let i = 0; i < n; i++) total += logWeights[i] = Math.exp(logWeights[i] - max)
  let u = rng.next() * total
  for (let i = 0; i < n; i++) {
    u -= logWeights[i]
    if (u < 0) return i
  }
  // Rounding can leave u ≥ 0 past the end: the last label of positive weight.
  for (let i = n - 1; i > 0; i--) if (logWeights[i] > 0) return i
  return 0
}

/**
 * One label path drawn from p(path | emissions) ∝ exp(pathScore), by forward filtering, backward
 * sampling: the forward sums alpha make p(y_last) ∝ alpha[last, ·] + end and
 * p(y_t | y_{t+1}) ∝ alpha[t, ·] + transitions[·, y_{t+1}], so one backward pass of C-way draws
 * gives an exact sample (knowledge distillation's structure-level targets: a student trained on
 * such paths learns the teacher's whole posterior, not only its Viterbi path). Without a CRF the
 * words are independent: each drawn from the softmax of its emissions. Emissions may be
 * log-probabilities: a constant added to one word's row multiplies every path's weight alike.
 */
export function sampleCrfPath(emissions: ArrayLike<number>, L: number, C: number, crf: CrfScores | undefined, rng: Rng): Int32Array {
  const path = new Int32Array(L)
  const w = new Float64Array(C)
  if (!crf) {
    for (let t = 0; t < L; t++) {
      for (let j = 0; j < C; j++) w[j] = emissions[t * C + j]
      path[t] = sampleLogWeights(w, C, rng)
    }
    return path
  }
  if (L === 0) return path
  const { alpha } = forward(emissions, L, C, crf)
  for (let j = 0; j < C; j++) w[j] = alpha[(L - 1) * C + j] + crf.end[j]
  path[L - 1] = sampleLogWeights(w, C, rng)
  for (let t = L - 2; t >= 0; t--) {
    for (let i = 0; i < C; i++) w[i] = alpha[t * C + i] + crf.transitions[i * C + path[t + 1]]
    path[t] = sampleLogWeights(w, C, rng)
  }
  return path
}

/**
 * −log p(path | emissions) of one sequence and, when `grad` is given, its gradient:
 * d/d emissions[t, j] = p(y_t = j) − [path_t = j] added into `dEmissions` (scaled by `scale`),
 * and the expected minus gold transition/start/end counts added into `grad` (same scale).
 * emissions: [L, C] row-major; path: L labels.
 */
export function crfNegLogLikelihood(
  emissions: ArrayLike<number>,
  path: ArrayLike<number>,
  C: number,
  crf: CrfScores,
  grad?: { dEmissions: { [i: number]: number; length: number }; crf: CrfGradients; scale: number },
): number {
  const L = path.length
  if (L === 0) return 0
  const { alpha, logZ } = forward(emissions, L, C, crf)
  const beta = new Float64Array(L * C) // log Σ over suffixes after j at t
  const tmp = new Float64Array(C)
  const nll = logZ - pathScore(emissions, path, C, crf)
  if (!grad) return nll

  for (let i = 0; i < C; i++) beta[(L - 1) * C + i] = crf.end[i]
  for (let t = L - 2; t >= 0; t--) {
    for (let i = 0; i < C; i++) {
      for (let j = 0; j < C; j++) tmp[j] = crf.transitions[i * C + j] + emissions[(t + 1) * C + j] + beta[(t + 1) * C + j]
      beta[t * C + i] = logSumExp(tmp, C)
    }
  }
  const { dEmissions, crf: g, scale } = grad
  for (let t = 0; t < L; t++) {
    for (let j = 0; j < C; j++) {
      const p = Math.exp(alpha[t * C + j] + beta[t * C + j] - logZ)
      dEmissions[t * C + j] += scale * (p - (path[t] === j ? 1 : 0))
      if (t === 0) g.start[j] += scale * (p - (path[0] === j ? 1 : 0))
      if (t === L - 1) g.end[j] += scale * (p - (path[L - 1] === j ? 1 : 0))
    }
    if (t === 0) continue
    for (let i = 0; i < C; i++) {
      for (let j = 0; j < C; j++) {
        const p = Math.exp(alpha[(t - 1) * C + i] + crf.transitions[i * C + j] + emissions[t * C + j] + beta[t * C + j] - logZ)
        g.transitions[i * C + j] += scale * p
      }
    }
    g.transitions[path[t - 1] * C + path[t]] -= scale
  }
  return nll
}

/** The highest-scoring label path for emissions [L, C]. */
export function viterbi(emissions: ArrayLike<number>, L: number, C: number, crf: CrfScores): Int32Array {
  const path = new Int32Array(L)
  if (L === 0) return path
  let score = new Float64Array(C)
  let next = new Float64Array(C)
  const back = new Int32Array(L * C)
  for (let j = 0; j < C; j++) score[j] = crf.start[j] + emissions[j]
  for (let t = 1; t < L; t++) {
    for (let j = 0; j < C; j++) {
      let best = 0
      let bestScore = -Infinity
      for (let i = 0; i < C; i++) {
        const s = score[i] + crf.transitions[i * C + j]
        if (s > bestScore) {
          bestScore = s
          best = i
        }
      }
      next[j] = bestScore + emissions[t * C + j]
      back[t * C + j] = best
    }
    ;[score, next] = [next, score]
  }
  let last = 0
  for (let j = 1; j < C; j++) if (score[j] + crf.end[j] > score[last] + crf.end[last]) last = j
  path[L - 1] = last
  for (let t = L - 1; t > 0; t--) path[t - 1] = back[t * C + path[t]]
  return path
}

export interface CrfBatchResult {
  /** Σ over sequences of −log p(gold) / number of labelled positions (the scale of the masked mean CE). */
  loss: number
  /** [B·S, C]: d loss / d logits, zero where no label applies. */
  dLogits: Float32Array
  grads: CrfGradients
  /** Labelled positions in the batch. */
  count: number
}

/**
 * The CRF loss of a batch of logits [B, S, C] against labels [B, S] (−100 = no label: special
 * tokens and word-continuation pieces). Each example's sequence is its labelled positions in
 * order, so the chain runs over words, not pieces.
 */
export function crfBatchLoss(logits: ArrayLike<number>, labels: ArrayLike<number>, B: number, S: number, C: number, crf: CrfScores): CrfBatchResult {
  const dLogits = new Float32Array(B * S * C)
  const grads: CrfGradients = { transitions: new Float64Array(C * C), start: new Float64Array(C), end: new Float64Array(C) }
  let count = 0
  for (let i = 0; i < labels.length; i++) if (labels[i] >= 0) count++
  if (count === 0) return { loss: 0, dLogits, grads, count }
  const scale = 1 / count
  let loss = 0
  for (let b = 0; b < B; b++) {
    const positions: number[] = []
    for (let s = 0; s < S; s++) {
      const y = labels[b * S + s]
      if (y >= 0) {
        if (y >= C) throw new RangeError(`label ${y} at batch row ${b}, position ${s} is outside the head's ${C} labels`)
        positions.push(b * S + s)
      }
    }
    const L = positions.length
    if (L === 0) continue
    const em = new Float64Array(L * C)
    const path = new Int32Array(L)
    positions.forEach((p, t) => {
      for (let j = 0; j < C; j++) em[t * C + j] = logits[p * C + j]
      path[t] = labels[p]
    })
    const dEm = new Float64Array(L * C)
    loss += crfNegLogLikelihood(em, path, C, crf, { dEmissions: dEm, crf: grads, scale })
    positions.forEach((p, t) => {
      for (let j = 0; j < C; j++) dLogits[p * C + j] = dEm[t * C + j]
    })
  }
  return { loss: loss * scale, dLogits, grads, count }
}

/** HF-style parameter names of a head's CRF (pytorch-crf's attribute names under crf / crfs.<head>). */
export function crfParamNames(head: string): { transitions: string; start: string; end: string } {
  const base = head === DEFAULT_HEAD ? 'crf' : `crfs.${head}`
  return { transitions: `${base}.transitions`, start: `${base}.start_transitions`, end: `${base}.end_transitions` }
}

/** A head's CRF parameters and their shapes. */
export function crfParamShapes(head: string, numLabels: number): Map<string, number[]> {
  const n = crfParamNames(head)
  return new Map([
    [n.transitions, [numLabels, numLabels]],
    [n.start, [numLabels]],
    [n.end, [numLabels]],
  ])
}
