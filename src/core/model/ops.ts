// The tfjs ops of the BERT forward with their hand-written gradients: dense (fused matmul +
// bias), LayerNorm, exact GELU, and inverted dropout from the project's seeded stream.

import * as tf from '@tensorflow/tfjs-core'
import { dropoutMask } from './dropout'
import type { Rng } from '../rng'

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
