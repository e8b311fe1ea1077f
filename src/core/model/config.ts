// BERT hyper-parameters (HF BertConfig in camelCase), the head naming rule and the parameter
// shapes they imply. Plain data and checks, no tfjs: the ONNX exporter, the checkpoint reader and
// the tagger use them without loading a tensor library.

import { charCnnParamShapes, isCharCnnLinearWeight, validateCharCnn, type CharCnnConfig } from './char-cnn-config'

/** The head behind HF's single `classifier.*`; other heads are `classifiers.<name>.*`. */
export const DEFAULT_HEAD = 'default'

export interface BertConfig {
  vocabSize: number
  hiddenSize: number
  numHiddenLayers: number
  numAttentionHeads: number
  intermediateSize: number
  /** Only 'gelu' (exact, erf) is supported; HF's default. */
  hiddenAct: 'gelu'
  hiddenDropoutProb: number
  attentionProbsDropoutProb: number
  maxPositionEmbeddings: number
  typeVocabSize: number
  initializerRange: number
  layerNormEps: number
  padTokenId: number
  /** Dropout before the classifiers; null → hiddenDropoutProb (HF classifier_dropout). */
  classifierDropout: number | null
  /** The character channel (./char-cnn); absent: the encoder reads pieces only (HF BERT). */
  charCnn?: CharCnnConfig
}

export const DEFAULT_BERT_CONFIG: BertConfig = {
  vocabSize: 28996,
  hiddenSize: 768,
  numHiddenLayers: 12,
  numAttentionHeads: 12,
  intermediateSize: 3072,
  hiddenAct: 'gelu',
  hiddenDropoutProb: 0.1,
  attentionProbsDropoutProb: 0.1,
  maxPositionEmbeddings: 512,
  typeVocabSize: 2,
  initializerRange: 0.02,
  layerNormEps: 1e-12,
  padTokenId: 0,
  classifierDropout: null,
}

export function makeBertConfig(partial: Partial<BertConfig> = {}): BertConfig {
  const c = { ...DEFAULT_BERT_CONFIG, ...partial }
  validateConfig(c)
  return c
}

/**
 * Upper bounds of the integer sizes, far above any BERT encoder (bert-large: 30522 / 1024 / 24 /
 * 16 / 4096 / 512 / 2): a config.json from an untrusted folder must not make the loaders build
 * millions of parameter names or allocate gigabytes before the weights are even looked at.
 */
export const CONFIG_LIMITS = {
  vocabSize: 1_000_000,
  hiddenSize: 16_384,
  numHiddenLayers: 256,
  numAttentionHeads: 1_024,
  intermediateSize: 65_536,
  maxPositionEmbeddings: 131_072,
  typeVocabSize: 1_024,
} as const satisfies Partial<Record<keyof BertConfig, number>>

/** Encoder parameters beyond this (8 GB of float32) are refused: no engine here could hold them. */
export const MAX_ENCODER_PARAMETERS = 2_000_000_000

export function validateConfig(c: BertConfig): void {
  for (const [k, max] of Object.entries(CONFIG_LIMITS) as Array<[keyof typeof CONFIG_LIMITS, number]>) {
    const v = c[k]
    if (!Number.isInteger(v) || v < (k === 'numHiddenLayers' ? 0 : 1)) throw new Error(`BERT config: ${k} must be a positive integer, got ${v}`)
    if (v > max) throw new Error(`BERT config: ${k} is ${v}, more than the ${max.toLocaleString('en-US')} this app accepts`)
  }
  if (c.hiddenSize % c.numAttentionHeads !== 0) {
    throw new Error(`BERT config: hidden size ${c.hiddenSize} is not a multiple of the number of attention heads ${c.numAttentionHeads}`)
  }
  // Embeddings + per layer (4 H×H attention, 2 H×I feed-forward, biases and LayerNorms), without building the name map.
  const H = c.hiddenSize
  const I = c.intermediateSize
  const params = (c.vocabSize + c.maxPositionEmbeddings + c.typeVocabSize + 2) * H + c.numHiddenLayers * (4 * H * H + 2 * H * I + 9 * H + I)
  if (params > MAX_ENCODER_PARAMETERS) {
    throw new Error(`BERT config: these sizes make ${params.toExponential(2)} encoder parameters, more than the ${MAX_ENCODER_PARAMETERS.toExponential(0)} this app accepts`)
  }
  if (c.hiddenAct !== 'gelu') throw new Error(`BERT config: hidden_act '${c.hiddenAct}' is not supported (only 'gelu')`)
  for (const k of ['hiddenDropoutProb', 'attentionProbsDropoutProb', 'classifierDropout'] as const) {
    const p = c[k]
    if (p === null && k === 'classifierDropout') continue
    if (!(typeof p === 'number' && p >= 0 && p < 1)) throw new Error(`BERT config: ${k} must be in [0, 1), got ${p}`)
  }
  if (!(c.layerNormEps > 0)) throw new Error(`BERT config: layer_norm_eps must be > 0, got ${c.layerNormEps}`)
  if (c.charCnn) validateCharCnn(c.charCnn)
}

/** HF names of a head's parameters: 'default' → classifier.*, others → classifiers.<name>.* */
export function headParamNames(head: string): { weight: string; bias: string } {
  const base = head === DEFAULT_HEAD ? 'classifier' : `classifiers.${head}`
  return { weight: `${base}.weight`, bias: `${base}.bias` }
}

/** True for parameters that torch stores as Linear [out, in] and we store as [in, out]. */
export function isLinearWeight(hfName: string): boolean {
  return (hfName.endsWith('.weight') && !hfName.includes('embeddings') && !hfName.includes('LayerNorm')) || isCharCnnLinearWeight(hfName)
}

/** Every encoder parameter name and its shape in our layout ([in, out] for Linear weights). */
export function encoderParamShapes(c: BertConfig): Map<string, number[]> {
  const H = c.hiddenSize
  const I = c.intermediateSize
  const m = new Map<string, number[]>([
    ['bert.embeddings.word_embeddings.weight', [c.vocabSize, H]],
    ['bert.embeddings.position_embeddings.weight', [c.maxPositionEmbeddings, H]],
    ['bert.embeddings.token_type_embeddings.weight', [c.typeVocabSize, H]],
    ['bert.embeddings.LayerNorm.weight', [H]],
    ['bert.embeddings.LayerNorm.bias', [H]],
  ])
  if (c.charCnn) for (const [name, shape] of charCnnParamShapes(c.charCnn, H)) m.set(name, shape)
  for (let l = 0; l < c.numHiddenLayers; l++) {
    const p = `bert.encoder.layer.${l}`
    for (const n of ['query', 'key', 'value']) {
      m.set(`${p}.attention.self.${n}.weight`, [H, H])
      m.set(`${p}.attention.self.${n}.bias`, [H])
    }
    m.set(`${p}.attention.output.dense.weight`, [H, H])
    m.set(`${p}.attention.output.dense.bias`, [H])
    m.set(`${p}.attention.output.LayerNorm.weight`, [H])
    m.set(`${p}.attention.output.LayerNorm.bias`, [H])
    m.set(`${p}.intermediate.dense.weight`, [H, I])
    m.set(`${p}.intermediate.dense.bias`, [I])
    m.set(`${p}.output.dense.weight`, [I, H])
    m.set(`${p}.output.dense.bias`, [H])
    m.set(`${p}.output.LayerNorm.weight`, [H])
    m.set(`${p}.output.LayerNorm.bias`, [H])
  }
  return m
}

/** Parameters of an encoder with these heads (name → number of labels): what numParameters() counts. */
export function countParameters(c: BertConfig, headLabels: Iterable<number>): number {
  let n = 0
  for (const shape of encoderParamShapes(c).values()) n += shape.reduce((a, b) => a * b, 1)
  for (const labels of headLabels) n += (c.hiddenSize + 1) * labels
  return n
}
