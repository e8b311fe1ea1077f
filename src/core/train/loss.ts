// Token-classification cross-entropy with ignored positions (HF / torch ignore_index = -100).

import * as tf from '@tensorflow/tfjs-core'
import { crfBatchLoss } from '../model/crf'
import { IGNORE_INDEX } from './batching'

/**
 * Mean cross-entropy over positions whose label is not -100.
 * logits [batch, seq, labels] (any float), labels [batch, seq] int32.
 * Padding and ignored word pieces contribute neither to the sum nor to the count, so a batch
 * padded to any length gives the same loss and the same gradients. With no labelled position
 * the loss is 0 (and so are the gradients) rather than NaN.
 */
export function maskedCrossEntropy(logits: tf.Tensor, labels: tf.Tensor, ignoreIndex = IGNORE_INDEX): tf.Scalar {
  return tf.tidy(() => {
    const numLabels = logits.shape[logits.shape.length - 1]
    const flatLogits = tf.reshape(tf.cast(logits, 'float32'), [-1, numLabels]) // [N, C]
    const flatLabels = tf.reshape(tf.cast(labels, 'int32'), [-1]) // [N]
    if (flatLogits.shape[0] !== flatLabels.shape[0]) {
      throw new Error(`loss: logits ${JSON.stringify(logits.shape)} and labels ${JSON.stringify(labels.shape)} do not match`)
    }
    const keep = tf.notEqual(flatLabels, tf.scalar(ignoreIndex, 'int32')) // [N] bool
    const safe = tf.where(keep, flatLabels, tf.zerosLike(flatLabels)) // [N] int32
    const logp = tf.logSoftmax(flatLogits) // [N, C]; subtracts the row max: stable
    // oneHot in int32 then cast: tfjs-backend-wasm 4.22's OneHot writes int bits into a float32
    // output when asked for dtype 'float32' (1 reads as 1.4e-45).
    const picked = tf.sum(tf.mul(logp, tf.cast(tf.oneHot(safe, numLabels), 'float32')), -1) // [N]
    const w = tf.cast(keep, 'float32') // [N]
    const count = tf.maximum(tf.sum(w), tf.scalar(1))
    return tf.neg(tf.div(tf.sum(tf.mul(picked, w)), count)) as tf.Scalar
  })
}

/** Number of positions a loss would average over (labels ≠ -100). */
export function countLabeled(labels: ArrayLike<number>, ignoreIndex = IGNORE_INDEX): number {
  let n = 0
  for (let i = 0; i < labels.length; i++) if (labels[i] !== ignoreIndex) n++
  return n
}

/**
 * The CRF loss (core/model/crf: −log p(gold path) per sequence over the labelled positions, summed
 * and divided by their count, the scale of maskedCrossEntropy) as a tfjs op. The recursions run
 * on the host in float64; the custom gradient hands tfjs d loss / d logits and the CRF scores'
 * gradients, so autodiff trains the encoder and the CRF together.
 * logits [B, S, C], labels [B, S] (−100 = no label), transitions [C, C], start/end [C].
 */
export function crfLoss(logits: tf.Tensor, labels: Int32Array, transitions: tf.Tensor, start: tf.Tensor, end: tf.Tensor): tf.Scalar {
  const [B, S, C] = logits.shape
  const f = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const [lg, tr, st, en] = args as tf.Tensor[]
    const r = crfBatchLoss(lg.dataSync(), labels, B, S, C, { transitions: tr.dataSync(), start: st.dataSync(), end: en.dataSync() })
    return {
      value: tf.scalar(r.loss),
      gradFunc: (dy: tf.Tensor) => [
        tf.mul(dy, tf.tensor(r.dLogits, [B, S, C])),
        tf.mul(dy, tf.tensor(Float32Array.from(r.grads.transitions), [C, C])),
        tf.mul(dy, tf.tensor(Float32Array.from(r.grads.start), [C])),
        tf.mul(dy, tf.tensor(Float32Array.from(r.grads.end), [C])),
      ],
    }
  })
  return f(tf.cast(logits, 'float32'), transitions, start, end) as tf.Scalar
}
