// The plain weights map the ONNX exporter consumes and the checkpoint reader produces (a file of its
// own so neither imports the other for it).

import type { Int8Rows } from '../model/int8'

/** A float32 parameter: shape + row-major data. */
export interface WeightTensor {
  shape: number[]
  data: Float32Array
  /** Set in an int8 model folder: the stored int8 rows (data is their dequantized value). */
  int8?: Int8Rows
}
export type WeightsMap = Map<string, WeightTensor>
