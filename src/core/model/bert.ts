// BERT encoder + token-classification heads with HuggingFace semantics
// (transformers BertModel / BertForTokenClassification), written with tfjs-core ops only.
//
// Semantics kept exactly:
//  - embeddings = LN(word[ids] + position[0..S) + token_type[types]), eps = layer_norm_eps
//  - post-LN blocks: LN(x + dropout(dense(attn(x)))) then LN(h + dropout(dense(gelu(dense(h)))))
//  - GELU is the exact erf form 0.5·x·(1 + erf(x/√2)) (HF "gelu"); tfjs' Erf kernels use the
//    Abramowitz–Stegun 7.1.26 approximation, |error| < 1.5e-7.
//  - attention mask: scores + (1 − mask)·m on padded KEYS, with m = float32 min (−3.4028e38),
//    as HF's get_extended_attention_mask does with torch.finfo(dtype).min. exp() of it is 0, so
//    padded keys get exactly zero weight; padded QUERY rows are computed but meaningless.
//  - dropout (hidden, attention probs, classifier input) only when training, seeded.
//  - returned attentions are the probabilities after dropout, as HF returns them (identical to
//    the softmax when not training).
//
// Layout: torch Linear stores weight [out, in]; here every Linear weight variable is [in, out]
// (the layout tfjs matMul/XNNPACK consume without a transpose). Checkpoint IO transposes
// (see isLinearWeight); names are the HF parameter names either way.

import * as tf from '@tensorflow/tfjs-core'
import { gradientsRegistered } from './gradients'
import { dropoutMask } from './dropout'
import { Rng } from '../rng'
import { DEFAULT_HEAD, encoderParamShapes, headParamNames, isLinearWeight, validateConfig, type BertConfig } from './config'

export {
  DEFAULT_BERT_CONFIG, DEFAULT_HEAD, encoderParamShapes, headParamNames, isLinearWeight, makeBertConfig, validateConfig, type BertConfig,
} from './config'

export interface BertInputs {
  /** int32 [batch, seq] */
  inputIds: tf.Tensor2D
  /** [batch, seq], 1 = real token, 0 = padding */
  attentionMask: tf.Tensor2D
  /** int32 [batch, seq]; zeros when absent */
  tokenTypeIds?: tf.Tensor2D
}

export interface ForwardOptions {
  training?: boolean
  outputHiddenStates?: boolean
  outputAttentions?: boolean
  /** Dropout seed; without it each training call draws the next seed from the model's stream. */
  seed?: number
  /** Heads to compute (default: all). */
  heads?: string[]
}

export interface BertOutput {
  /** Per head: [batch, seq, numLabels] */
  logits: Record<string, tf.Tensor3D>
  /** Embedding output, then each layer's output: numLayers + 1 tensors [batch, seq, hidden]. */
  hiddenStates?: tf.Tensor3D[]
  /** Per layer: [batch, heads, seq, seq] */
  attentions?: tf.Tensor4D[]
}

export interface HeadInfo {
  labels: string[]
}

/** Float32 min, the additive mask value HF uses (torch.finfo(torch.float32).min). */
export const MASK_VALUE = -3.4028234663852886e38

let modelCounter = 0

interface LayerVars {
  q: [tf.Variable, tf.Variable]
  k: [tf.Variable, tf.Variable]
  v: [tf.Variable, tf.Variable]
  ao: [tf.Variable, tf.Variable]
  aln: [tf.Variable, tf.Variable]
  i: [tf.Variable, tf.Variable]
  o: [tf.Variable, tf.Variable]
  oln: [tf.Variable, tf.Variable]
}

export class BertTokenClassifier {
  readonly config: BertConfig
  readonly heads: Map<string, HeadInfo>
  private readonly vars = new Map<string, tf.Variable>()
  /** Prefix that keeps tf variable names unique per model (tfjs registers names globally). */
  private readonly scope: string
  private dropoutRng: Rng
  private disposed = false

  /**
   * Takes ownership of `params` (HF name → tensor in our layout); every encoder parameter and
   * both parameters of every head must be present with the right shape.
   */
  constructor(config: BertConfig, params: Map<string, tf.Tensor>, heads: Record<string, string[]>, opts: { trainable?: boolean; seed?: number } = {}) {
    validateConfig(config)
    this.config = { ...config }
    this.scope = `fastbioner${++modelCounter}`
    this.heads = new Map()
    this.dropoutRng = new Rng((opts.seed ?? 0) + 0x5eed)
    const expected = encoderParamShapes(config)
    for (const [head, labels] of Object.entries(heads)) {
      if (labels.length === 0) throw new Error(`head '${head}' has no labels`)
      if (!/^[A-Za-z0-9_-]+$/.test(head)) throw new Error(`head name '${head}' must be letters, digits, '_' or '-'`)
      this.heads.set(head, { labels: [...labels] })
      const n = headParamNames(head)
      expected.set(n.weight, [config.hiddenSize, labels.length])
      expected.set(n.bias, [labels.length])
    }
    for (const [name, shape] of expected) {
      const t = params.get(name)
      if (!t) throw new Error(`model parameter ${name} is missing`)
      if (!tf.util.arraysEqual(t.shape, shape)) {
        throw new Error(`model parameter ${name} has shape [${t.shape}], expected [${shape}]`)
      }
    }
    for (const name of params.keys()) {
      if (!expected.has(name)) throw new Error(`unexpected model parameter ${name}`)
    }
    const trainable = opts.trainable ?? true
    for (const [name] of expected) {
      const t = params.get(name)!
      const src = t.dtype === 'float32' ? t : tf.cast(t, 'float32')
      // The variable shares src's buffer (tfjs counts references), so src can be released.
      this.vars.set(name, tf.variable(src, trainable, `${this.scope}/${name}`))
      if (src !== t) src.dispose()
    }
    for (const t of params.values()) t.dispose()
  }

  /**
   * HF-style random init: Linear and embedding weights ~ N(0, initializer_range²) (plain normal,
   * as HF's _init_weights), the padding row of the word embeddings zero, biases 0, LayerNorm
   * weight 1 / bias 0. Default heads: one head 'default' with label 'O'.
   */
  static random(config: BertConfig, seed = 0, heads: Record<string, string[]> = { [DEFAULT_HEAD]: ['O'] }): BertTokenClassifier {
    validateConfig(config)
    const rng = new Rng(seed)
    const shapes = encoderParamShapes(config)
    for (const [head, labels] of Object.entries(heads)) {
      const n = headParamNames(head)
      shapes.set(n.weight, [config.hiddenSize, labels.length])
      shapes.set(n.bias, [labels.length])
    }
    const params = new Map<string, tf.Tensor>()
    for (const [name, shape] of shapes) params.set(name, initTensor(name, shape, config, rng))
    return new BertTokenClassifier(config, params, heads, { seed })
  }

  /** Adds or replaces a head with freshly initialised parameters. */
  setHead(name: string, labels: string[], seed = 0): void {
    this.assertAlive()
    if (labels.length === 0) throw new Error(`head '${name}' has no labels`)
    if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`head name '${name}' must be letters, digits, '_' or '-'`)
    this.removeHead(name)
    const rng = new Rng(seed)
    const n = headParamNames(name)
    const w = initTensor(n.weight, [this.config.hiddenSize, labels.length], this.config, rng)
    const b = initTensor(n.bias, [labels.length], this.config, rng)
    this.vars.set(n.weight, tf.variable(w, true, `${this.scope}/${n.weight}`))
    this.vars.set(n.bias, tf.variable(b, true, `${this.scope}/${n.bias}`))
    w.dispose()
    b.dispose()
    this.heads.set(name, { labels: [...labels] })
  }

  removeHead(name: string): void {
    if (!this.heads.has(name)) return
    const n = headParamNames(name)
    for (const p of [n.weight, n.bias]) {
      this.vars.get(p)?.dispose()
      this.vars.delete(p)
    }
    this.heads.delete(name)
  }

  /** HF name → variable (Linear weights in [in, out] layout). */
  variables(): Map<string, tf.Variable> {
    this.assertAlive()
    return new Map(this.vars)
  }

  trainableVariables(): tf.Variable[] {
    this.assertAlive()
    return [...this.vars.values()].filter((v) => v.trainable)
  }

  numParameters(): number {
    let n = 0
    for (const v of this.vars.values()) n += v.size
    return n
  }

  dispose(): void {
    if (this.disposed) return
    for (const v of this.vars.values()) v.dispose()
    this.vars.clear()
    this.disposed = true
  }

  get isDisposed(): boolean {
    return this.disposed
  }

  private assertAlive(): void {
    if (this.disposed) throw new Error('BertTokenClassifier used after dispose()')
  }

  private v(name: string): tf.Variable {
    const v = this.vars.get(name)
    if (!v) throw new Error(`model parameter ${name} is missing`)
    return v
  }

  private layer(l: number): LayerVars {
    const p = `bert.encoder.layer.${l}`
    const pair = (n: string): [tf.Variable, tf.Variable] => [this.v(`${p}.${n}.weight`), this.v(`${p}.${n}.bias`)]
    return {
      q: pair('attention.self.query'),
      k: pair('attention.self.key'),
      v: pair('attention.self.value'),
      ao: pair('attention.output.dense'),
      aln: pair('attention.output.LayerNorm'),
      i: pair('intermediate.dense'),
      o: pair('output.dense'),
      oln: pair('output.LayerNorm'),
    }
  }

  forward(inputs: BertInputs, opts: ForwardOptions = {}): BertOutput {
    this.assertAlive()
    const c = this.config
    const { inputIds, attentionMask, tokenTypeIds } = inputs
    if (inputIds.rank !== 2) throw new Error(`inputIds must be [batch, seq], got shape [${inputIds.shape}]`)
    const [B, S] = inputIds.shape
    if (!tf.util.arraysEqual(attentionMask.shape, [B, S])) {
      throw new Error(`attentionMask shape [${attentionMask.shape}] does not match inputIds [${inputIds.shape}]`)
    }
    if (tokenTypeIds && !tf.util.arraysEqual(tokenTypeIds.shape, [B, S])) {
      throw new Error(`tokenTypeIds shape [${tokenTypeIds.shape}] does not match inputIds [${inputIds.shape}]`)
    }
    if (S > c.maxPositionEmbeddings) throw new Error(`sequence length ${S} exceeds max_position_embeddings ${c.maxPositionEmbeddings}`)
    const training = opts.training ?? false
    if (training && !gradientsRegistered()) {
      // tfjs-core registers no gradients by itself; without them the caller's tf.grad fails far
      // from the cause.
      throw new Error('tfjs gradients are not registered: await initBackend() / useBackend() / ensureGradients() (core/model) before training')
    }
    const headNames = opts.heads ?? [...this.heads.keys()]
    for (const h of headNames) if (!this.heads.has(h)) throw new Error(`unknown head '${h}'`)
    const rng = training ? (opts.seed != null ? new Rng(opts.seed) : new Rng(this.dropoutRng.nextU32())) : null
    const H = c.hiddenSize
    const nH = c.numAttentionHeads
    const d = H / nH
    const N = B * S
    const eps = c.layerNormEps
    const pH = training ? c.hiddenDropoutProb : 0
    const pA = training ? c.attentionProbsDropoutProb : 0

    return tf.tidy(() => {
      const hidden: tf.Tensor3D[] = []
      const attentions: tf.Tensor4D[] = []

      // Embeddings, kept 2-D [N, H] so every dense layer is a single XNNPACK matmul.
      const ids = tf.reshape(tf.cast(inputIds, 'int32'), [N])
      const words = tf.gather(this.v('bert.embeddings.word_embeddings.weight'), ids) // [N, H]
      const pos = tf.slice(this.v('bert.embeddings.position_embeddings.weight'), [0, 0], [S, H]) // [S, H]
      let types: tf.Tensor // [N, H] or [1, H]
      const typeTable = this.v('bert.embeddings.token_type_embeddings.weight')
      if (tokenTypeIds) types = tf.gather(typeTable, tf.reshape(tf.cast(tokenTypeIds, 'int32'), [N]))
      else types = tf.slice(typeTable, [0, 0], [1, H])
      let emb = tf.add(tf.reshape(tf.add(tf.reshape(words, [B, S, H]), pos), [N, H]), types) // [N, H]
      emb = layerNorm(emb, this.v('bert.embeddings.LayerNorm.weight'), this.v('bert.embeddings.LayerNorm.bias'), eps)
      let x = dropout(emb, pH, rng) as tf.Tensor2D
      if (opts.outputHiddenStates) hidden.push(tf.reshape(x, [B, S, H]))

      // Additive key mask [B, 1, 1, S]: 0 for real tokens, float32 min for padding.
      const maskAdd = tf.reshape(tf.mul(tf.sub(1, tf.cast(attentionMask, 'float32')), MASK_VALUE), [B, 1, 1, S])
      const scale = 1 / Math.sqrt(d)

      for (let l = 0; l < c.numHiddenLayers; l++) {
        const L = this.layer(l)
        // Q pre-scaled by 1/√d ([B, h, S, d]); K produced directly as K^T ([B, h, d, S]) so the
        // score product needs no transposed operand.
        const q = tf.transpose(tf.reshape(dense(x, L.q), [B, S, nH, d]), [0, 2, 1, 3])
        const kT = tf.transpose(tf.reshape(dense(x, L.k), [B, S, nH, d]), [0, 2, 3, 1])
        const v = tf.transpose(tf.reshape(dense(x, L.v), [B, S, nH, d]), [0, 2, 1, 3])
        const scores = tf.add(tf.matMul(tf.mul(q, scale), kT), maskAdd) // [B, h, S, S]
        let probs = tf.softmax(scores) as tf.Tensor4D
        probs = dropout(probs, pA, rng) as tf.Tensor4D
        if (opts.outputAttentions) attentions.push(probs)
        const ctx = tf.reshape(tf.transpose(tf.matMul(probs, v), [0, 2, 1, 3]), [N, H]) // [N, H]
        const attnOut = dropout(dense(ctx, L.ao), pH, rng)
        const a = layerNorm(tf.add(attnOut, x), L.aln[0], L.aln[1], eps)
        const inter = gelu(dense(a, L.i)) // [N, I]
        const out = dropout(dense(inter, L.o), pH, rng)
        x = layerNorm(tf.add(out, a), L.oln[0], L.oln[1], eps) as tf.Tensor2D
        if (opts.outputHiddenStates) hidden.push(tf.reshape(x, [B, S, H]))
      }

      const pC = training ? (c.classifierDropout ?? c.hiddenDropoutProb) : 0
      const seq = dropout(x, pC, rng)
      const logits: Record<string, tf.Tensor3D> = {}
      for (const h of headNames) {
        const n = headParamNames(h)
        const numLabels = this.heads.get(h)!.labels.length
        logits[h] = tf.reshape(dense(seq, [this.v(n.weight), this.v(n.bias)]), [B, S, numLabels])
      }
      const result: BertOutput = { logits }
      if (opts.outputHiddenStates) result.hiddenStates = hidden
      if (opts.outputAttentions) result.attentions = attentions
      return result as unknown as tf.TensorContainer
    }) as unknown as BertOutput
  }
}

function initTensor(name: string, shape: number[], c: BertConfig, rng: Rng): tf.Tensor {
  const size = tf.util.sizeFromShape(shape)
  if (name.includes('LayerNorm')) {
    return name.endsWith('.weight') ? tf.ones(shape) : tf.zeros(shape)
  }
  if (name.endsWith('.bias')) return tf.zeros(shape)
  const data = rng.normalArray(size, c.initializerRange)
  if (name === 'bert.embeddings.word_embeddings.weight' && c.padTokenId >= 0 && c.padTokenId < shape[0]) {
    data.fill(0, c.padTokenId * shape[1], (c.padTokenId + 1) * shape[1])
  }
  return tf.tensor(data, shape, 'float32')
}

/** x [N, in] · W [in, out] + b through the fused (XNNPACK, bias-in-kernel) path. */
export function dense(x: tf.Tensor, [w, b]: [tf.Tensor, tf.Tensor]): tf.Tensor2D {
  return tf.fused.matMul({ a: x as tf.Tensor2D, b: w as tf.Tensor2D, bias: b }) as tf.Tensor2D
}

/**
 * LayerNorm over the last axis with biased variance, as torch. The gradient is written out
 * (dx = rstd·(ĝ − mean(ĝ) − x̂·mean(ĝ·x̂)), ĝ = dy·γ) instead of differentiating the ~10 ops of
 * the forward: about half the kernels in the backward pass.
 */
export function layerNorm(x: tf.Tensor, gamma: tf.Tensor, beta: tf.Tensor, eps: number): tf.Tensor {
  const f = tf.customGrad(((xIn: tf.Tensor, g: tf.Tensor, b: tf.Tensor, save: tf.GradSaveFunc) => {
    const mean = tf.mean(xIn, -1, true)
    const xc = tf.sub(xIn, mean)
    const rstd = tf.rsqrt(tf.add(tf.mean(tf.square(xc), -1, true), eps)) // [..., 1]
    const xhat = tf.mul(xc, rstd)
    save([xhat, rstd, g])
    return {
      value: tf.add(tf.mul(xhat, g), b),
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const [xh, rs, gm] = saved
        const d = dy as tf.Tensor
        const lead = d.shape.slice(0, -1).map((_, i) => i)
        const dxhat = tf.mul(d, gm)
        const m1 = tf.mean(dxhat, -1, true)
        const m2 = tf.mean(tf.mul(dxhat, xh), -1, true)
        const dx = tf.mul(tf.sub(tf.sub(dxhat, m1), tf.mul(xh, m2)), rs)
        return [dx, tf.sum(tf.mul(d, xh), lead), tf.sum(d, lead)]
      },
    }
  }) as unknown as Parameters<typeof tf.customGrad>[0])
  return f(x, gamma, beta)
}

const INV_SQRT_2PI = 1 / Math.sqrt(2 * Math.PI)

/**
 * Exact GELU: x·Φ(x) = 0.5·x·(1 + erf(x/√2)); gradient Φ(x) + x·φ(x) written out (Φ saved from
 * the forward) rather than differentiated through erf.
 */
export function gelu(x: tf.Tensor): tf.Tensor {
  const f = tf.customGrad(((xIn: tf.Tensor, save: tf.GradSaveFunc) => {
    const cdf = tf.mul(tf.add(tf.erf(tf.mul(xIn, Math.SQRT1_2)), 1), 0.5)
    save([xIn, cdf])
    return {
      value: tf.mul(xIn, cdf),
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const [xs, c] = saved
        const pdf = tf.mul(tf.exp(tf.mul(tf.square(xs), -0.5)), INV_SQRT_2PI)
        return [tf.mul(dy as tf.Tensor, tf.add(c, tf.mul(xs, pdf)))]
      },
    }
  }) as unknown as Parameters<typeof tf.customGrad>[0])
  return f(x)
}

/** Inverted dropout with a mask from our seeded stream; identity when p = 0 or rng is null. */
export function dropout(x: tf.Tensor, p: number, rng: Rng | null): tf.Tensor {
  if (!rng || p <= 0) return x
  return tf.mul(x, tf.tensor(dropoutMask(x.size, p, rng), x.shape, 'float32'))
}
