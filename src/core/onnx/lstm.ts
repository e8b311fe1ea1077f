// The LSTM pieces the recurrent graphs share (./recurrent's word tagger, ./char-lm's language
// model): the recurrence unrolled with its backward written step by step (onnxruntime-node has no
// LSTM gradient kernel), and our weights in the layout of ONNX's LSTM operator for tagging.
//
// Gate order and semantics are PyTorch's nn.LSTM (i, f, g, o; c = f·c + i·g; h = o·tanh(c)), with
// one bias (PyTorch's b_ih + b_hh). Backward of one step, with s = σ(z), (tanh)' = 1 − tanh²:
//   dh = dh_out + dh_next;  dc = dc_next + dh·o·(1 − tanh²c)
//   dz_o = dh·tanh(c)·o(1−o);  dz_i = dc·g·i(1−i);  dz_g = dc·i·(1 − g²);  dz_f = dc·c_prev·f(1−f)
//   dh_prev = dz·W_hhᵀ;  dc_prev = dc·f;  dW_hh = Σ_t h_{t−1}ᵀ·dz_t;  dW_ih = Σ_t x_tᵀ·dz_t
// with everything but dh and dc formed in the forward step (Step.dcFromDh, Step.dzScale).

import { attr } from './graph'
import type { GradGraph } from './training'

/** An unrolled LSTM over T steps, D stacked directions: its hidden states and the backward through them. */
export interface UnrolledLstm {
  /** h of every step, T × [1, D, B, H]. */
  hs: string[]
  /** The state after the last step [1, D, B, H]. */
  h: string
  c: string
  /** h_{t−1} of every step, T × [1, D, B, H]: the initial state (zeros without one), then h_0 … h_{T−2}. */
  hPrev: string[]
  /**
   * From the loss's gradient at every h (T × [1, D, B, H]) the gradient at every step's gate
   * pre-activations, T × [1, D, B, 4H] (i, f, g, o). None flows into the initial state: truncated
   * back-propagation through time, as PyTorch's detached state.
   */
  backward(dHOut: string[]): string[]
}

/**
 * The recurrence of D stacked LSTM directions, unrolled: `xw` holds each step's input projection
 * x·W_ih + b (T × [1, D, B, 4H]; a step's tensors keep Split's leading axis of one, so MatMul with
 * the [D, H, 4H] weights broadcasts over it and no step needs a Squeeze or Unsqueeze node), `init`
 * the state before the first step ([1, D, B, H] each; zeros when absent).
 */
export function unrolledLstm(t: GradGraph, xw: string[], wHh: string, H: number, init?: { h: string; c: string }): UnrolledLstm {
  const g = t.g
  const T = xw.length
  // The forward steps hold only the recurrence (about a dozen nodes each). What the backward needs
  // of every step is formed after the loop on all T steps at once ([T, D, B, ·] tensors): per
  // gate block (i, f, g, o) d act/d z times what the gate's value multiplies, dz = [dc, dc, dc, dh]
  // ⊙ dzScale with dzScale = [g, c_prev, i, tanh c] ⊙ act', and dcFromDh = o·(1 − tanh² c). The
  // graph holds T of each step's nodes, onnxruntime's session set-up grows with the square of the
  // node count (a 128-word bucket once had 8 908 nodes and took 12 s), and each node of a step's
  // small tensors ([1, D, B, H]) costs about as much to launch as to run.
  // act' from the activations a = [i, f, g, o]: σ' = a(1 − a), tanh' = 1 − a², i.e.
  // a' = isTanh + a·(isSigmoid − a) with the 0/1 column vectors below.
  const blockOf = (values: number[]) => g.constant(Float32Array.from({ length: 4 * H }, (_, k) => values[Math.floor(k / H)]), [4 * H])
  const isSigmoid = blockOf([1, 1, 0, 1])
  const isTanh = blockOf([0, 0, 1, 0])
  const acts: string[] = [] // T × [1, D, B, 4H]: i, f, g, o
  const fs: string[] = [] // T × [1, D, B, H]
  const cs: string[] = [] // T × [1, D, B, H]
  const tanhCs: string[] = [] // T × [1, D, B, H]
  const hs: string[] = []
  let h: string | null = init?.h ?? null
  let c: string | null = init?.c ?? null
  /** The state before the first step [1, D, B, H] (c_prev of step 0, h_{−1} in the backward): zeros without `init`. */
  let zeroState = ''
  for (let s = 0; s < T; s++) {
    let z = xw[s] // [1, D, B, 4H]
    if (h) z = t.add(z, g.node('MatMul', [h, wHh]))
    const [zi, zf, zg, zo] = g.nodeOutputs('Split', [z], { axis: attr.int(3) }, { outputs: 4 })
    const i = g.node('Sigmoid', [zi])
    const f = g.node('Sigmoid', [zf])
    const gg = g.node('Tanh', [zg])
    const oo = g.node('Sigmoid', [zo])
    const ig = t.mul(i, gg)
    const cNew: string = c ? t.add(t.mul(f, c), ig) : ig
    const tc = g.node('Tanh', [cNew])
    const hNew = t.mul(oo, tc) // [1, D, B, H]
    acts.push(g.node('Concat', [i, f, gg, oo], { axis: attr.int(3) }))
    if (s === 0 && !init) zeroState = g.node('Mul', [i, g.float(0)])
    fs.push(f)
    cs.push(cNew)
    tanhCs.push(tc)
    hs.push(hNew)
    h = hNew
    c = cNew
  }
  const cat = (vs: string[], axis: number) => (vs.length === 1 ? vs[0] : g.node('Concat', vs, { axis: attr.int(axis) }))
  const steps = (v: string) => (T === 1 ? [v] : g.nodeOutputs('Split', [v], { axis: attr.int(0) }, { outputs: T })) // [T, …] → T × [1, …]
  const act = cat(acts, 0) // [T, D, B, 4H]
  const actD = t.add(isTanh, t.mul(act, t.sub(isSigmoid, act)))
  const [iAll, , gAll, oAll] = g.nodeOutputs('Split', [act], { axis: attr.int(3) }, { outputs: 4 }) // [T, D, B, H] each
  const tanhC = cat(tanhCs, 0) // [T, D, B, H]
  const cPrev = cat([init?.c ?? zeroState, ...cs.slice(0, T - 1)], 0) // [T, D, B, H]
  const dzScale = steps(t.mul(g.node('Concat', [gAll, cPrev, iAll, tanhC], { axis: attr.int(3) }), actD)) // T × [1, D, B, 4H]
  const dcFromDh = steps(t.mul(oAll, t.sub(g.float(1), t.mul(tanhC, tanhC)))) // T × [1, D, B, H]: o·(1 − tanh² c)
  const backward = (dHOut: string[]) => {
    const wHhT = t.transpose(wHh, [0, 2, 1]) // [D, 4H, H]
    const dz: string[] = new Array<string>(T)
    let dhNext: string | null = null
    let dcNext: string | null = null
    for (let s = T - 1; s >= 0; s--) {
      const dh: string = dhNext ? t.add(dHOut[s], dhNext) : dHOut[s]
      const dcFromH = t.mul(dh, dcFromDh[s])
      const dc: string = dcNext ? t.add(dcNext, dcFromH) : dcFromH
      dz[s] = t.mul(g.node('Concat', [dc, dc, dc, dh], { axis: attr.int(3) }), dzScale[s]) // [1, D, B, 4H]: i, f, g, o
      if (s > 0) {
        dhNext = g.node('MatMul', [dz[s], wHhT])
        dcNext = t.mul(dc, fs[s])
      }
    }
    return dz
  }
  return { hs, h: h!, c: c!, hPrev: [init?.h ?? zeroState, ...hs.slice(0, T - 1)], backward }
}

/**
 * Stacked LSTM weights in our layout (W_ih [D, In, 4H], W_hh [D, H, 4H], bias [D, 4H]; gates i, f,
 * g, o as PyTorch) as ONNX's LSTM operator takes them: W [D, 4H, In], R [D, 4H, H], B [D, 8H],
 * gates i, o, f, c; the bias in Wb, Rb zero.
 */
export function onnxLstmWeights(t: GradGraph, wIh: string, wHh: string, bias: string): { W: string; R: string; B: string } {
  return {
    W: t.transpose(gatesIofc(t, wIh, 2), [0, 2, 1]),
    R: t.transpose(gatesIofc(t, wHh, 2), [0, 2, 1]),
    B: onnxLstmBias(t, bias),
  }
}

/** Our bias [D, 4H] (i, f, g, o) as ONNX's LSTM takes it: [D, 8H], Wb in i, o, f, c then Rb zero. */
export function onnxLstmBias(t: GradGraph, bias: string): string {
  const g = t.g
  return g.node('Concat', [gatesIofc(t, bias, 1), g.node('Mul', [bias, g.float(0)])], { axis: attr.int(1) })
}

/**
 * ONNX's gate blocks (i, o, f, c) as indices of ours (i, f, g, o, PyTorch's): block k of an ONNX
 * LSTM weight is our block ONNX_GATE_BLOCKS[k]. The graph (gatesIofc) and the int8 weights
 * (recurrent.ts int8LstmInputs) reorder by it.
 */
export const ONNX_GATE_BLOCKS = [0, 3, 1, 2] as const

/** [.., 4H] gate blocks i, f, g, o (ours) → i, o, f, c (ONNX's) along `axis`. */
function gatesIofc(t: GradGraph, v: string, axis: number): string {
  const g = t.g
  const ours = g.nodeOutputs('Split', [v], { axis: attr.int(axis) }, { outputs: 4 })
  return g.node('Concat', ONNX_GATE_BLOCKS.map((b) => ours[b]), { axis: attr.int(axis) })
}
