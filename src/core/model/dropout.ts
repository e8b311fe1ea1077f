// Dropout masks from the project's seeded stream, shared by the tfjs model and the onnxruntime
// trainer (no tfjs here).

import type { Rng } from '../rng'

/**
 * An inverted-dropout mask of `size` values (0 or 1/(1−p)) from our seeded stream. The ONNX
 * trainer draws its masks through this function in the forward's order, so both engines see
 * identical masks for one seed.
 */
export function dropoutMask(size: number, p: number, rng: Rng): Float32Array {
  const scale = 1 / (1 - p)
  // Keep an element when its 32-bit draw is ≥ p·2³²; compared in the signed domain (both sides
  // offset by 2³¹) so the loop stays on int32 values.
  const threshold = (Math.min(Math.floor(p * 4294967296), 4294967295) - 2147483648) | 0
  const bits = new Int32Array(size)
  rng.fillU32(new Uint32Array(bits.buffer))
  const mask = new Float32Array(size)
  for (let i = 0; i < mask.length; i++) mask[i] = (bits[i] ^ -2147483648) >= threshold ? scale : 0
  return mask
}
