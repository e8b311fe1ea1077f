// BERT encoder + token-classification heads with HuggingFace semantics
// (transformers BertModel / BertForTokenClassification), written with tfjs-core ops only.
//
// Semantics kept exactly:
//  - embeddings = LN(word[ids] + position[0..S) + token_type[types]), eps = layer_norm_eps
//    (+ the character channel's vector of each piece's word when config.charCnn: ./char-cnn)
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
import { dense, dropout, gelu, layerNorm } from './ops'
import { Rng } from '../rng'
import { DEFAULT_HEAD, encoderParamShapes, headParamNames, isLinearWeight, validateConfig, type BertConfig } from './config'
import { crfParamNames, crfParamShapes, type CrfScores } from './crf'
import { charCnnConfig, charCnnParamNames, initCharCnnParams, type CharCnnConfig } from './char-cnn'
import { PAD_ID, type WordFeaturizer } from '../nlp/word-features'

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
  /** int32 [batch, seq, max_chars]: the characters of each piece's word (config.charCnn only). */
  charIds?: tf.Tensor3D
  /** float32 [batch, seq, shape_flags]: the case/shape flags of each piece's word (config.charCnn only). */
  shapeFlags?: tf.Tensor3D
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
  /** A CRF over this head's logits (./crf): its transitions are model parameters, tagging decodes with Viterbi. */
  crf: boolean
}

/** Float32 min, the additive mask value HF uses (torch.finfo(torch.float32).min). */
export const MASK_VALUE = -3.4028234663852886e38

let modelCounter = 0

export class BertTokenClassifier {
  readonly config: BertConfig
  readonly heads: Map<string, HeadInfo>
  private readonly vars = new Map<string, tf.Variable>()
  /** Prefix that keeps tf variable names unique per model (tfjs registers names globally). */
  private readonly scope: string
  private dropoutRng: Rng
  private disposed = false
  /** The character vocabulary (chars.txt) of a model with config.charCnn; null without one. */
  charVocab: WordFeaturizer | null

  /**
   * Takes ownership of `params` (HF name → tensor in our layout); every encoder parameter and
   * both parameters of every head must be present with the right shape.
   */
  constructor(config: BertConfig, params: Map<string, tf.Tensor>, heads: Record<string, string[]>, opts: { trainable?: boolean; seed?: number; crfHeads?: readonly string[]; charVocab?: WordFeaturizer | null } = {}) {
    validateConfig(config)
    this.config = { ...config }
    this.charVocab = opts.charVocab ?? null
    checkCharVocab(config.charCnn, this.charVocab)
    this.scope = `fastbioner${++modelCounter}`
    this.heads = new Map()
    this.dropoutRng = new Rng((opts.seed ?? 0) + 0x5eed)
    const expected = encoderParamShapes(config)
    for (const [head, labels] of Object.entries(heads)) {
      if (labels.length === 0) throw new Error(`head '${head}' has no labels`)
      if (!/^[A-Za-z0-9_-]+$/.test(head)) throw new Error(`head name '${head}' must be letters, digits, '_' or '-'`)
      const crf = opts.crfHeads?.includes(head) ?? false
      this.heads.set(head, { labels: [...labels], crf })
      const n = headParamNames(head)
      expected.set(n.weight, [config.hiddenSize, labels.length])
      expected.set(n.bias, [labels.length])
      if (crf) for (const [name, shape] of crfParamShapes(head, labels.length)) expected.set(name, shape)
    }
    for (const h of opts.crfHeads ?? []) if (!this.heads.has(h)) throw new Error(`CRF for unknown head '${h}'`)
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
  static random(config: BertConfig, seed = 0, heads: Record<string, string[]> = { [DEFAULT_HEAD]: ['O'] }, charVocab: WordFeaturizer | null = null): BertTokenClassifier {
    validateConfig(config)
    const rng = new Rng(seed)
    // The channel's parameters are drawn after the rest, from their own stream, so a model without
    // it is initialised exactly as before.
    const shapes = encoderParamShapes({ ...config, charCnn: undefined })
    for (const [head, labels] of Object.entries(heads)) {
      const n = headParamNames(head)
      shapes.set(n.weight, [config.hiddenSize, labels.length])
      shapes.set(n.bias, [labels.length])
    }
    const params = new Map<string, tf.Tensor>()
    for (const [name, shape] of shapes) params.set(name, initTensor(name, shape, config, rng))
    if (config.charCnn) {
      for (const [name, data] of initCharCnnParams(config.charCnn, config.hiddenSize, new Rng(seed + 0xc4a2))) {
        params.set(name, tf.tensor(data, encoderParamShapes(config).get(name)!, 'float32'))
      }
    }
    return new BertTokenClassifier(config, params, heads, { seed, charVocab })
  }

  /**
   * Gives the encoder a character channel (no-op if it has one) over `vocab`'s characters. Its
   * projection starts at zero: the model computes what it did until it trains. `from` gives
   * some of the channel's parameters their starting values (names and layout of
   * charCnnParamShapes, e.g. a word tagger's trained character CNN: charCnnParamsOf).
   */
  addCharCnn(vocab: WordFeaturizer, over: Partial<Omit<CharCnnConfig, 'charVocabSize' | 'shapeFlags'>> = {}, seed = 0, from?: ReadonlyMap<string, Float32Array>): void {
    this.assertAlive()
    if (this.config.charCnn) return
    const c = charCnnConfig(vocab, over)
    const config = { ...this.config, charCnn: c }
    validateConfig(config)
    const shapes = encoderParamShapes(config)
    for (const [name, random] of initCharCnnParams(c, this.config.hiddenSize, new Rng(seed + 0xc4a2))) {
      const data = from?.get(name) ?? random
      if (data.length !== random.length) throw new Error(`${name}: ${data.length} starting values for [${shapes.get(name)}]`)
      const t = tf.tensor(data, shapes.get(name)!, 'float32')
      this.vars.set(name, tf.variable(t, true, `${this.scope}/${name}`))
      t.dispose()
    }
    this.config.charCnn = c
    this.charVocab = vocab
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
    this.heads.set(name, { labels: [...labels], crf: false })
  }

  /**
   * Puts a CRF on a head (no-op if it has one): transitions, start and end scores start at zero,
   * so until trained the Viterbi path is the per-word argmax.
   */
  addCrf(head: string): void {
    this.assertAlive()
    const info = this.heads.get(head)
    if (!info) throw new Error(`unknown head '${head}'`)
    if (info.crf) return
    for (const [name, shape] of crfParamShapes(head, info.labels.length)) {
      const z = tf.zeros(shape)
      this.vars.set(name, tf.variable(z, true, `${this.scope}/${name}`))
      z.dispose()
    }
    info.crf = true
  }

  /** A head's CRF scores as they are now; undefined for a head without CRF. */
  crfScores(head: string): CrfScores | undefined {
    this.assertAlive()
    if (!this.heads.get(head)?.crf) return undefined
    const n = crfParamNames(head)
    const read = (name: string) => Float32Array.from(this.v(name).dataSync() as Float32Array)
    return { transitions: read(n.transitions), start: read(n.start), end: read(n.end) }
  }

  removeHead(name: string): void {
    if (!this.heads.has(name)) return
    const n = headParamNames(name)
    const c = crfParamNames(name)
    for (const p of [n.weight, n.bias, c.transitions, c.start, c.end]) {
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

  forward(inputs: BertInputs, opts: ForwardOptions = {}): BertOutput {
    this.assertAlive()
    const c = this.config
    const { inputIds, attentionMask, tokenTypeIds, charIds, shapeFlags } = inputs
    if (inputIds.rank !== 2) throw new Error(`inputIds must be [batch, seq], got shape [${inputIds.shape}]`)
    const [B, S] = inputIds.shape
    if (!tf.util.arraysEqual(attentionMask.shape, [B, S])) {
      throw new Error(`attentionMask shape [${attentionMask.shape}] does not match inputIds [${inputIds.shape}]`)
    }
    if (tokenTypeIds && !tf.util.arraysEqual(tokenTypeIds.shape, [B, S])) {
      throw new Error(`tokenTypeIds shape [${tokenTypeIds.shape}] does not match inputIds [${inputIds.shape}]`)
    }
    if (c.charCnn) {
      if (!charIds || !shapeFlags) throw new Error('this model reads characters (config char_cnn): its inputs need charIds and shapeFlags')
      if (!tf.util.arraysEqual(charIds.shape, [B, S, c.charCnn.maxChars])) throw new Error(`charIds shape [${charIds.shape}] is not [${B}, ${S}, ${c.charCnn.maxChars}]`)
      if (!tf.util.arraysEqual(shapeFlags.shape, [B, S, c.charCnn.shapeFlags])) throw new Error(`shapeFlags shape [${shapeFlags.shape}] is not [${B}, ${S}, ${c.charCnn.shapeFlags}]`)
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

    const p = (name: string) => this.v(name)
    const dims: Dims = { B, S, H: c.hiddenSize, nH: c.numAttentionHeads, eps: c.layerNormEps }
    const pHidden = training ? c.hiddenDropoutProb : 0
    const pAttention = training ? c.attentionProbsDropoutProb : 0

    return tf.tidy(() => {
      const hidden: tf.Tensor3D[] = []
      const attentions: tf.Tensor4D[] = []
      const chars = c.charCnn ? charCnnEmbedding(p, c.charCnn, charIds!, shapeFlags!) : null // [N, H]
      let x = embeddings(p, dims, inputIds, tokenTypeIds, chars, pHidden, rng) // [N, H]
      if (opts.outputHiddenStates) hidden.push(tf.reshape(x, [B, S, dims.H]))

      // Additive key mask [B, 1, 1, S]: 0 for real tokens, float32 min for padding.
      const maskAdd = tf.reshape(tf.mul(tf.sub(1, tf.cast(attentionMask, 'float32')), MASK_VALUE), [B, 1, 1, S]) as tf.Tensor4D
      for (let l = 0; l < c.numHiddenLayers; l++) {
        const prefix = `bert.encoder.layer.${l}`
        const attention = selfAttention(p, `${prefix}.attention.self`, dims, x, maskAdd, pAttention, rng)
        if (opts.outputAttentions) attentions.push(attention.probs)
        const a = addAndNorm(p, `${prefix}.attention.output`, dims, attention.context, x, pHidden, rng) // [N, H]
        const intermediate = gelu(linear(p, `${prefix}.intermediate.dense`, a)) as tf.Tensor2D // [N, I]
        x = addAndNorm(p, `${prefix}.output`, dims, intermediate, a, pHidden, rng) // [N, H]
        if (opts.outputHiddenStates) hidden.push(tf.reshape(x, [B, S, dims.H]))
      }

      const pClassifier = training ? (c.classifierDropout ?? c.hiddenDropoutProb) : 0
      const sequence = dropout(x, pClassifier, rng) // [N, H]
      const logits: Record<string, tf.Tensor3D> = {}
      for (const h of headNames) {
        const n = headParamNames(h)
        logits[h] = tf.reshape(dense(sequence, [p(n.weight), p(n.bias)]), [B, S, this.heads.get(h)!.labels.length]) // [B, S, C]
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


// ---- the blocks of BertModel, by HF module name ------------------------------------------------

type Param = (name: string) => tf.Tensor
interface Dims {
  B: number
  S: number
  H: number
  nH: number
  eps: number
}

/** `name`.weight [in, out] and `name`.bias applied to x [N, in]. */
function linear(p: Param, name: string, x: tf.Tensor): tf.Tensor2D {
  return dense(x, [p(`${name}.weight`), p(`${name}.bias`)])
}

/** BertEmbeddings: LN(word[ids] + position[0..S) + token_type[types] (+ chars [N, H])), then dropout. [N, H] */
function embeddings(p: Param, { B, S, H, eps }: Dims, inputIds: tf.Tensor2D, tokenTypeIds: tf.Tensor2D | undefined, chars: tf.Tensor2D | null, pHidden: number, rng: Rng | null): tf.Tensor2D {
  const N = B * S
  const words = tf.gather(p('bert.embeddings.word_embeddings.weight'), tf.reshape(tf.cast(inputIds, 'int32'), [N])) // [N, H]
  const positions = tf.slice(p('bert.embeddings.position_embeddings.weight'), [0, 0], [S, H]) // [S, H]
  const typeTable = p('bert.embeddings.token_type_embeddings.weight')
  const types = tokenTypeIds
    ? tf.gather(typeTable, tf.reshape(tf.cast(tokenTypeIds, 'int32'), [N])) // [N, H]
    : tf.slice(typeTable, [0, 0], [1, H]) // [1, H]: every token has type 0
  const pieces = tf.add(tf.reshape(tf.add(tf.reshape(words, [B, S, H]), positions), [N, H]), types) // [N, H]
  const sum = chars ? tf.add(pieces, chars) : pieces
  // Kept 2-D [N, H] from here on, so every dense layer is a single XNNPACK matmul.
  return dropout(layerNorm(sum, p('bert.embeddings.LayerNorm.weight'), p('bert.embeddings.LayerNorm.bias'), eps), pHidden, rng) as tf.Tensor2D
}

/** BertSelfAttention: softmax(Q·Kᵀ/√d + mask)·V per head; probs after dropout, as HF returns them. */
function selfAttention(p: Param, name: string, { B, S, H, nH }: Dims, x: tf.Tensor2D, maskAdd: tf.Tensor4D, pAttention: number, rng: Rng | null): { context: tf.Tensor2D; probs: tf.Tensor4D } {
  const d = H / nH
  const heads = (t: tf.Tensor2D) => tf.reshape(t, [B, S, nH, d]) // [B, S, h, d]
  const q = tf.transpose(heads(linear(p, `${name}.query`, x)), [0, 2, 1, 3]) // [B, h, S, d]
  // K produced directly as Kᵀ, so the score product needs no transposed operand.
  const kT = tf.transpose(heads(linear(p, `${name}.key`, x)), [0, 2, 3, 1]) // [B, h, d, S]
  const v = tf.transpose(heads(linear(p, `${name}.value`, x)), [0, 2, 1, 3]) // [B, h, S, d]
  const scores = tf.add(tf.matMul(tf.mul(q, 1 / Math.sqrt(d)), kT), maskAdd) // [B, h, S, S]
  const probs = dropout(tf.softmax(scores), pAttention, rng) as tf.Tensor4D // [B, h, S, S]
  const context = tf.reshape(tf.transpose(tf.matMul(probs, v), [0, 2, 1, 3]), [B * S, H]) as tf.Tensor2D // [N, H]
  return { context, probs }
}

/** BertSelfOutput / BertOutput: LN(residual + dropout(dense(x))). [N, H] */
function addAndNorm(p: Param, name: string, { eps }: Dims, x: tf.Tensor2D, residual: tf.Tensor2D, pHidden: number, rng: Rng | null): tf.Tensor2D {
  const out = dropout(linear(p, `${name}.dense`, x), pHidden, rng) // [N, H]
  return layerNorm(tf.add(out, residual), p(`${name}.LayerNorm.weight`), p(`${name}.LayerNorm.bias`), eps) as tf.Tensor2D
}

/**
 * The channel's contribution to the embedding sum [N, H] (N = B·S): zero on rows without
 * characters. charIds int [B, S, L], flags float [B, S, F_s].
 */
export function charCnnEmbedding(p: Param, c: CharCnnConfig, charIds: tf.Tensor, flags: tf.Tensor): tf.Tensor2D {
  const n = charCnnParamNames()
  const L = c.maxChars
  const ids = tf.reshape(tf.cast(charIds, 'int32'), [-1, L]) // [N, L]
  const N = ids.shape[0]
  const chars = tf.reshape(tf.gather(p(n.embeddings), tf.reshape(ids, [-1])), [N, L, c.charDim]) // [N, L, Dc]
  const half = (c.charWidth - 1) / 2
  const padded = tf.pad(chars, [
    [0, 0],
    [half, half],
    [0, 0],
  ]) // [N, L + w − 1, Dc]
  const windows = tf.concat(Array.from({ length: c.charWidth }, (_, k) => tf.slice(padded, [0, k, 0], [N, L, c.charDim])), 2) // [N, L, w·Dc]
  const conv = tf.add(tf.matMul(tf.reshape(windows, [N * L, c.charWidth * c.charDim]), p(`${n.conv}.weight`) as tf.Tensor2D), p(`${n.conv}.bias`)) // [N·L, F]
  const charMax = tf.max(tf.reshape(conv, [N, L, c.charFilters]), 1) // [N, F]
  const features = tf.mul(tf.concat([charMax, tf.reshape(tf.cast(flags, 'float32'), [N, c.shapeFlags])], 1), c.featureScale ?? 1) // [N, F + F_s]
  const projected = tf.add(tf.matMul(features, p(`${n.projection}.weight`) as tf.Tensor2D), p(`${n.projection}.bias`)) // [N, H]
  const hasChars = tf.cast(tf.reshape(tf.notEqual(tf.slice(ids, [0, 0], [N, 1]), PAD_ID), [N, 1]), 'float32') // [N, 1]
  return tf.mul(projected, hasChars) as tf.Tensor2D
}

function checkCharVocab(c: CharCnnConfig | undefined, vocab: WordFeaturizer | null): void {
  if (!c) {
    if (vocab) throw new Error('a character vocabulary for a model without char_cnn')
    return
  }
  if (!vocab) throw new Error('a model with char_cnn needs its character vocabulary (chars.txt)')
  if (vocab.chars.length !== c.charVocabSize) throw new Error(`character vocabulary of ${vocab.chars.length} characters, char_cnn.vocab_size says ${c.charVocabSize}`)
}
