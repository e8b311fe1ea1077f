// BERT hyper-parameters (HF BertConfig in camelCase), the head naming rule and the parameter
// shapes they imply. Plain data and checks, no tfjs: the ONNX exporter, the checkpoint reader and
// the tagger use them without loading a tensor library.

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

export function validateConfig(c: BertConfig): void {
  const ints: Array<keyof BertConfig> = ['vocabSize', 'hiddenSize', 'numHiddenLayers', 'numAttentionHeads', 'intermediateSize', 'maxPositionEmbeddings', 'typeVocabSize']
  for (const k of ints) {
    const v = c[k] as number
    if (!Number.isInteger(v) || v < (k === 'numHiddenLayers' ? 0 : 1)) throw new Error(`BERT config: ${k} must be a positive integer, got ${v}`)
  }
  if (c.hiddenSize % c.numAttentionHeads !== 0) {
    throw new Error(`BERT config: hidden size ${c.hiddenSize} is not a multiple of the number of attention heads ${c.numAttentionHeads}`)
  }
  if (c.hiddenAct !== 'gelu') throw new Error(`BERT config: hidden_act '${c.hiddenAct}' is not supported (only 'gelu')`)
  for (const k of ['hiddenDropoutProb', 'attentionProbsDropoutProb', 'classifierDropout'] as const) {
    const p = c[k]
    if (p === null && k === 'classifierDropout') continue
    if (!(typeof p === 'number' && p >= 0 && p < 1)) throw new Error(`BERT config: ${k} must be in [0, 1), got ${p}`)
  }
  if (!(c.layerNormEps > 0)) throw new Error(`BERT config: layer_norm_eps must be > 0, got ${c.layerNormEps}`)
}

/** HF names of a head's parameters: 'default' → classifier.*, others → classifiers.<name>.* */
export function headParamNames(head: string): { weight: string; bias: string } {
  const base = head === DEFAULT_HEAD ? 'classifier' : `classifiers.${head}`
  return { weight: `${base}.weight`, bias: `${base}.bias` }
}

/** True for parameters that torch stores as Linear [out, in] and we store as [in, out]. */
export function isLinearWeight(hfName: string): boolean {
  return hfName.endsWith('.weight') && !hfName.includes('embeddings') && !hfName.includes('LayerNorm')
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
