// Batches padded to their own longest sequence, with length bucketing and seeded shuffling.
//
// Padding to a global maximum wastes most of the compute on short biomedical sentences
// (attention is quadratic in the padded length), so every batch is as long as its longest
// member and batches are formed from examples of similar length.

import * as tf from '@tensorflow/tfjs-core'
import { deriveSeed, Rng } from '../rng'

/** Label value that every loss and metric ignores (padding, non-first word pieces, [CLS]/[SEP]). */
export const IGNORE_INDEX = -100

/** What batching needs from an example; `Example` from core/nlp satisfies it structurally. */
export interface BatchableExample {
  inputIds: ArrayLike<number>
  /** Same length as inputIds; IGNORE_INDEX where no loss applies. Absent for inference. */
  labels?: ArrayLike<number>
  tokenTypeIds?: ArrayLike<number>
  /** When absent every position of inputIds is real. */
  attentionMask?: ArrayLike<number>
  /** The character channel's inputs (core/model/char-cnn.ts): [len, max_chars] ids and [len, flags]. */
  charIds?: ArrayLike<number>
  shapeFlags?: ArrayLike<number>
}

export interface BatchPlanOptions {
  batchSize: number
  /** Shuffle the order of examples and batches (training); false keeps input order (inference). */
  shuffle?: boolean
  seed?: number
  /** Mixed into the seed so every epoch has its own order but the run stays replayable. */
  epoch?: number
  /**
   * Length bucketing: examples are shuffled, cut into chunks of `bucketChunkBatches` batches,
   * sorted by length inside each chunk and then cut into batches (HF `group_by_length`
   * uses 50). 0 or 1 disables bucketing. Inference (shuffle false) sorts globally by length when
   * bucketing is enabled since order does not matter there (callers re-map by `indices`).
   */
  bucketChunkBatches?: number
  /** Drop a last partial batch (off by default: every example is seen each epoch). */
  dropLast?: boolean
}

/**
 * Groups example indices into batches. Pure and deterministic: the same lengths and options
 * give the same plan. Each batch lists example indices.
 */
export function planBatches(lengths: readonly number[], opts: BatchPlanOptions): number[][] {
  const batchSize = Math.floor(opts.batchSize)
  if (!(batchSize >= 1)) throw new Error(`batch size must be a positive integer, got ${opts.batchSize}`)
  const chunkBatches = opts.bucketChunkBatches ?? 50
  const shuffle = opts.shuffle ?? true
  const order = lengths.map((_, i) => i)
  const rng = new Rng(deriveSeed(opts.seed ?? 0, opts.epoch ?? 0))
  const byLengthDesc = (a: number, b: number): number => lengths[b] - lengths[a] || a - b

  if (shuffle) rng.shuffle(order)
  if (chunkBatches > 1) {
    if (shuffle) {
      const chunk = chunkBatches * batchSize
      for (let s = 0; s < order.length; s += chunk) {
        const part = order.slice(s, s + chunk).sort(byLengthDesc)
        for (let k = 0; k < part.length; k++) order[s + k] = part[k]
      }
    } else {
      order.sort(byLengthDesc)
    }
  }
  const batches: number[][] = []
  for (let s = 0; s < order.length; s += batchSize) {
    const b = order.slice(s, s + batchSize)
    if (b.length < batchSize && opts.dropLast && batches.length > 0) break
    batches.push(b)
  }
  // Sorted chunks would otherwise always start with their longest batch; shuffling batch order
  // keeps the per-step cost (and the gradient statistics) from following a saw-tooth.
  if (shuffle) rng.shuffle(batches)
  return batches
}

/** A batch on the host, row-major [batch, seq]. */
export interface HostBatch {
  indices: number[]
  batchSize: number
  /** Longest sequence in this batch (never a global maximum). */
  seqLen: number
  inputIds: Int32Array
  attentionMask: Int32Array
  tokenTypeIds: Int32Array
  labels: Int32Array
  /** Real (unpadded) tokens in the batch. */
  numTokens: number
  /** Positions whose label is not IGNORE_INDEX. */
  numLabeled: number
  /** When the examples carry them: [batch, seq, maxChars] character ids (0 = <pad>) and [batch, seq, flags]. */
  chars?: HostChars
}

export interface HostChars {
  maxChars: number
  flags: number
  charIds: Int32Array
  shapeFlags: Float32Array
}

export interface CollateOptions {
  /** [PAD] id; 0 in every BERT vocabulary we ship, but a loaded vocab may differ. */
  padTokenId?: number
}

function realLength(ex: BatchableExample): number {
  const n = ex.inputIds.length
  if (!ex.attentionMask) return n
  // Trailing zeros of a given mask are padding that an example already carried.
  let last = n
  while (last > 0 && !ex.attentionMask[last - 1]) last--
  return last
}

/** Copies the examples at `indices` into padded row-major arrays. */
export function collate(examples: readonly BatchableExample[], indices: readonly number[], opts: CollateOptions = {}): HostBatch {
  const pad = opts.padTokenId ?? 0
  const lens = indices.map((i) => {
    const ex = examples[i]
    if (!ex) throw new Error(`example index ${i} out of range (0..${examples.length - 1})`)
    return realLength(ex)
  })
  const seqLen = Math.max(1, ...lens)
  const b = indices.length
  const inputIds = new Int32Array(b * seqLen).fill(pad)
  const attentionMask = new Int32Array(b * seqLen)
  const tokenTypeIds = new Int32Array(b * seqLen)
  const labels = new Int32Array(b * seqLen).fill(IGNORE_INDEX)
  const chars = collateChars(examples, indices, lens, seqLen)
  let numTokens = 0
  let numLabeled = 0
  for (let r = 0; r < b; r++) {
    const ex = examples[indices[r]]
    const n = lens[r]
    const o = r * seqLen
    if (ex.labels && ex.labels.length < n) {
      throw new Error(`example ${indices[r]}: ${ex.labels.length} labels for ${n} input ids`)
    }
    for (let t = 0; t < n; t++) {
      inputIds[o + t] = ex.inputIds[t]
      attentionMask[o + t] = ex.attentionMask ? (ex.attentionMask[t] ? 1 : 0) : 1
      tokenTypeIds[o + t] = ex.tokenTypeIds ? ex.tokenTypeIds[t] : 0
      if (ex.labels && attentionMask[o + t]) {
        const l = ex.labels[t]
        labels[o + t] = l
        if (l !== IGNORE_INDEX) numLabeled++
      }
      numTokens += attentionMask[o + t]
    }
  }
  return { indices: [...indices], batchSize: b, seqLen, inputIds, attentionMask, tokenTypeIds, labels, numTokens, numLabeled, ...(chars ? { chars } : {}) }
}

/** The character inputs of the rows, padded as the ids are; undefined when the examples have none. */
function collateChars(examples: readonly BatchableExample[], indices: readonly number[], lens: number[], seqLen: number): HostChars | undefined {
  const first = examples[indices[0]]
  if (!first?.charIds || !first.shapeFlags) return undefined
  const n0 = first.inputIds.length
  const L = first.charIds.length / n0
  const F = first.shapeFlags.length / n0
  const charIds = new Int32Array(indices.length * seqLen * L)
  const shapeFlags = new Float32Array(indices.length * seqLen * F)
  indices.forEach((i, r) => {
    const ex = examples[i]
    const n = ex.inputIds.length
    if (!ex.charIds || !ex.shapeFlags || ex.charIds.length !== n * L || ex.shapeFlags.length !== n * F) throw new Error(`example ${i}: character inputs missing or not [${n}, ${L}] and [${n}, ${F}]`)
    for (let k = 0; k < lens[r] * L; k++) charIds[r * seqLen * L + k] = ex.charIds[k]
    for (let k = 0; k < lens[r] * F; k++) shapeFlags[r * seqLen * F + k] = ex.shapeFlags[k]
  })
  return { maxChars: L, flags: F, charIds, shapeFlags }
}

/** The same batch as int32 tensors, [batch, seq] each. Caller disposes (disposeBatch). */
export interface TensorBatch {
  indices: number[]
  batchSize: number
  seqLen: number
  numTokens: number
  numLabeled: number
  inputIds: tf.Tensor2D
  attentionMask: tf.Tensor2D
  tokenTypeIds: tf.Tensor2D
  labels: tf.Tensor2D
  /** int32 [batch, seq, maxChars] and float32 [batch, seq, flags], when the batch has characters. */
  charIds?: tf.Tensor3D
  shapeFlags?: tf.Tensor3D
}

export function toTensors(h: HostBatch): TensorBatch {
  const shape: [number, number] = [h.batchSize, h.seqLen]
  const c = h.chars
  return {
    ...(c
      ? {
          charIds: tf.tensor3d(c.charIds, [h.batchSize, h.seqLen, c.maxChars], 'int32'),
          shapeFlags: tf.tensor3d(c.shapeFlags, [h.batchSize, h.seqLen, c.flags], 'float32'),
        }
      : {}),
    indices: h.indices,
    batchSize: h.batchSize,
    seqLen: h.seqLen,
    numTokens: h.numTokens,
    numLabeled: h.numLabeled,
    inputIds: tf.tensor2d(h.inputIds, shape, 'int32'),
    attentionMask: tf.tensor2d(h.attentionMask, shape, 'int32'),
    tokenTypeIds: tf.tensor2d(h.tokenTypeIds, shape, 'int32'),
    labels: tf.tensor2d(h.labels, shape, 'int32'),
  }
}

export function disposeBatch(b: TensorBatch): void {
  tf.dispose([b.inputIds, b.attentionMask, b.tokenTypeIds, b.labels, ...(b.charIds ? [b.charIds] : []), ...(b.shapeFlags ? [b.shapeFlags] : [])])
}

/** What the model's forward reads of a batch (BertInputs). */
export function modelInputs(b: TensorBatch): { inputIds: tf.Tensor2D; attentionMask: tf.Tensor2D; tokenTypeIds: tf.Tensor2D; charIds?: tf.Tensor3D; shapeFlags?: tf.Tensor3D } {
  return { inputIds: b.inputIds, attentionMask: b.attentionMask, tokenTypeIds: b.tokenTypeIds, charIds: b.charIds, shapeFlags: b.shapeFlags }
}

export interface BatchOptions extends BatchPlanOptions, CollateOptions {}

/**
 * Yields tensor batches lazily so only one batch is resident at a time; the consumer disposes
 * each one (disposeBatch) before asking for the next.
 */
export function* iterateBatches(examples: readonly BatchableExample[], opts: BatchOptions): Generator<TensorBatch> {
  const plan = planBatches(examples.map(realLength), opts)
  for (const idx of plan) yield toTensors(collate(examples, idx, opts))
}

/** Number of batches an epoch will have (for schedules and ETA). */
export function countBatches(numExamples: number, batchSize: number, dropLast = false): number {
  if (numExamples === 0) return 0
  const full = Math.floor(numExamples / batchSize)
  const rest = numExamples % batchSize
  return rest > 0 && !(dropLast && full > 0) ? full + 1 : full
}

export { realLength as exampleLength }
