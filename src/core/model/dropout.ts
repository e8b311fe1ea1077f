// Dropout masks from the project's seeded stream, shared by the tfjs model and the onnxruntime
// trainer (no tfjs here).

import type { Rng } from '../rng'

/**
 * An inverted-dropout mask of `size` values (0 or 1/(1−p)) from our seeded stream. The ONNX
 * trainer draws its masks through this function in the forward's order, so both engines see
 * identical masks for one seed.
 */
export function dropoutMask(size: number, p: number, rng: Rng): Float32Array {
  return rng.fillDropoutMask(new Float32Array(size), p)
}
