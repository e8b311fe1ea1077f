// What every inference engine offers (onnxruntime in ./session, tfjs in ./tfjs): one padded batch
// in, logits per head out. A file of its own so the engines share it without importing each other.

export type OrtEngineName = 'onnxruntime-cpu' | 'onnxruntime-cuda' | 'onnxruntime-dml'
export type EngineName = OrtEngineName | `tfjs-${string}`
export type ExecutionProvider = 'cuda' | 'dml' | 'cpu'

/** One padded batch; ids may be int32 or int64, row-major [batch, seq]. */
export interface InferenceBatch {
  inputIds: Int32Array | BigInt64Array
  attentionMask: Int32Array | BigInt64Array
  /** Zeros when absent. */
  tokenTypeIds?: Int32Array | BigInt64Array
  batch: number
  seq: number
  /**
   * For engines that read words themselves (needsWords: the word-level tagger): per row, the
   * first-piece position of each word and the word's text.
   */
  words?: Array<{ positions: number[]; texts: string[] }>
  /**
   * For an encoder with a character channel (core/model/char-cnn.ts): [batch, seq, maxChars]
   * character ids of each piece's word and [batch, seq, flags] its shape flags.
   */
  chars?: { maxChars: number; flags: number; charIds: Int32Array; shapeFlags: Float32Array }
}

export interface InferenceResult {
  /** Per head ('default' for classifier.*): [batch * seq * numLabels], row-major. */
  logits: Record<string, Float32Array>
  /** Only from a model exported with hidden states: numLayers + 1 arrays [batch * seq * hidden]. */
  hiddenStates?: Float32Array[]
}

export interface InferenceEngine {
  engine: EngineName
  /** Why this engine: shown to the user. */
  reason: string
  /** Problems met on the way (fallbacks, re-exports), each naming the file. */
  warnings: string[]
  /** The model files this engine read (model.onnx, or the weights for tfjs), for sizes. */
  files?: string[]
  /** The engine reads InferenceBatch.words (the tagger supplies them). */
  needsWords?: boolean
  run(batch: InferenceBatch): Promise<InferenceResult>
  dispose(): Promise<void>
}
