// Distillation losses, every one masked so that padding never contributes.
//
// Masks are float [batch, seq] with 1 on the positions a loss averages over:
//  - realMask: real (unpadded) tokens, from the attention mask;
//  - labeledMask: positions with a gold label (first word piece of a word), from labels ≠ -100.
// A batch padded to any length therefore gives the same loss values and gradients: padded
// positions are multiplied by 0 in the sum and are not counted in the denominator. Attention
// maps are masked on query rows AND key columns (pair mask m_i·m_j).

import * as tf from '@tensorflow/tfjs-core'
import '../model/gradients'
import { IGNORE_INDEX } from '../train/batching'

/** float32 [B, S]: 1 for real tokens. */
export function realMask(attentionMask: tf.Tensor): tf.Tensor2D {
  return tf.tidy(() => tf.cast(tf.greater(attentionMask, 0), 'float32')) as tf.Tensor2D
}

/** float32 [B, S]: 1 where labels ≠ -100. */
export function labeledMask(labels: tf.Tensor, ignoreIndex = IGNORE_INDEX): tf.Tensor2D {
  return tf.tidy(() => tf.cast(tf.notEqual(tf.cast(labels, 'int32'), tf.scalar(ignoreIndex, 'int32')), 'float32')) as tf.Tensor2D
}

/**
 * Combined soft targets of one or more teachers at temperature T:
 * p̄ = Σ_k w_k · softmax(z_k / T), weights normalised to sum to 1 (average by default).
 * Probabilities are averaged, not logits: each teacher's distribution is a proper target and
 * the mixture is one too. [B, S, C].
 */
export function softTargets(teacherLogits: readonly tf.Tensor[], temperature: number, weights?: readonly number[]): tf.Tensor3D {
  if (teacherLogits.length === 0) throw new Error('softTargets: no teacher logits')
  const w = weights ?? teacherLogits.map(() => 1)
  if (w.length !== teacherLogits.length) throw new Error(`softTargets: ${w.length} weights for ${teacherLogits.length} teachers`)
  const total = w.reduce((a, b) => a + b, 0)
  if (!(total > 0) || w.some((x) => x < 0)) throw new Error(`softTargets: teacher weights must be ≥ 0 with a positive sum, got ${w.join(',')}`)
  return tf.tidy(() => {
    const parts = teacherLogits.map((z, k) => tf.mul(tf.softmax(tf.div(tf.cast(z, 'float32'), temperature)), w[k] / total))
    return (parts.length === 1 ? parts[0] : tf.addN(parts)) as tf.Tensor3D
  })
}

/**
 * L_SL: cross-entropy H(p̄, softmax(z_s/T)) = −Σ_c p̄_c · log softmax(z_s/T)_c, averaged over the
 * masked positions; multiplied by T² when `scaleT2` (Hinton et al.: the gradient of the softened
 * loss w.r.t. the logits shrinks like 1/T², so T² keeps its size comparable to the hard loss
 * whatever T is, which matters when T is ramped during training).
 */
export function softCrossEntropy(studentLogits: tf.Tensor, targets: tf.Tensor, mask: tf.Tensor, temperature: number, scaleT2 = true): tf.Scalar {
  return tf.tidy(() => {
    const logp = tf.logSoftmax(tf.div(tf.cast(studentLogits, 'float32'), temperature)) // [B, S, C]
    const per = tf.neg(tf.sum(tf.mul(targets, logp), -1)) // [B, S]
    const m = tf.cast(mask, 'float32')
    const loss = tf.div(tf.sum(tf.mul(per, m)), tf.maximum(tf.sum(m), 1))
    return (scaleT2 ? tf.mul(loss, temperature * temperature) : loss) as tf.Scalar
  })
}

/** Mean KL(p_t ‖ p_s) at temperature T over masked positions (a monitor, not a training loss). */
export function maskedKl(studentLogits: tf.Tensor, teacherLogits: tf.Tensor, mask: tf.Tensor, temperature = 1): tf.Scalar {
  return tf.tidy(() => {
    const lt = tf.logSoftmax(tf.div(tf.cast(teacherLogits, 'float32'), temperature))
    const ls = tf.logSoftmax(tf.div(tf.cast(studentLogits, 'float32'), temperature))
    const per = tf.sum(tf.mul(tf.exp(lt), tf.sub(lt, ls)), -1)
    const m = tf.cast(mask, 'float32')
    return tf.div(tf.sum(tf.mul(per, m)), tf.maximum(tf.sum(m), 1)) as tf.Scalar
  })
}

/**
 * MSE(H_s·W, H_t) over real positions: Σ_{b,i} m_bi·‖H_s[b,i]·W − H_t[b,i]‖² / (Σ m · H_t width).
 * H_s [B, S, Hs], H_t [B, S, Ht], W [Hs, Ht] (omit when Hs = Ht: identity).
 */
export function hiddenMse(hs: tf.Tensor, ht: tf.Tensor, mask: tf.Tensor, w?: tf.Tensor): tf.Scalar {
  return tf.tidy(() => {
    const [B, S, Hs] = hs.shape
    const Ht = ht.shape[2]!
    let proj: tf.Tensor = hs
    if (w) {
      if (w.shape[0] !== Hs || w.shape[1] !== Ht) throw new Error(`hiddenMse: projection [${w.shape}] does not map width ${Hs} to ${Ht}`)
      proj = tf.reshape(tf.matMul(tf.reshape(hs, [B * S!, Hs!]), w as tf.Tensor2D), [B, S!, Ht])
    } else if (Hs !== Ht) {
      throw new Error(`hiddenMse: student width ${Hs} ≠ teacher width ${Ht} and no projection given`)
    }
    const sq = tf.sum(tf.square(tf.sub(proj, ht)), -1) // [B, S]
    const m = tf.cast(mask, 'float32')
    return tf.div(tf.sum(tf.mul(sq, m)), tf.mul(tf.maximum(tf.sum(m), 1), Ht)) as tf.Scalar
  })
}

/**
 * (1/h)·Σ_heads MSE(A_s, A_t) over valid (query, key) pairs: both positions real. A [B, h, S, S].
 * When the head counts differ (a narrower student) the head-averaged maps are compared.
 */
export function attentionMse(as: tf.Tensor, at: tf.Tensor, mask: tf.Tensor): tf.Scalar {
  return tf.tidy(() => {
    let a = as
    let b = at
    if (as.shape[1] !== at.shape[1]) {
      a = tf.mean(as, 1, true)
      b = tf.mean(at, 1, true)
    }
    const h = a.shape[1]!
    const [B, S] = mask.shape
    const m = tf.cast(mask, 'float32')
    const pair = tf.mul(tf.reshape(m, [B, 1, S, 1]), tf.reshape(m, [B, 1, 1, S])) // [B, 1, S, S]
    const sq = tf.mul(tf.square(tf.sub(a, b)), pair) // [B, h, S, S]
    return tf.div(tf.sum(sq), tf.mul(tf.maximum(tf.sum(pair), 1), h)) as tf.Scalar
  })
}
