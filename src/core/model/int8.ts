// Int8 weights with one float32 scale per row (symmetric, zero point 0), as stored in an int8
// model folder's model.safetensors: `<name>` is I8 in the tensor's usual (torch) layout and
// `<name>_scale` is F32 [rows]. Rows are output channels of a Linear weight ([out, in]) and
// tokens of an embedding table ([vocab, hidden]), so one scale per output channel / per token.
//   value ≈ int8 · scale,  scale = max|row| / qmax,  qmax = 2^(bits−1) − 1
// Symmetric because onnxruntime's int8 GEMMs are fastest with a zero weight zero-point, and a
// per-row range keeps a row of small weights from being flattened by one large row.

export const INT8_SCALE_SUFFIX = '_scale'

export interface Int8Rows {
  /** [rows, cols] row-major. */
  values: Int8Array
  /** [rows]. */
  scale: Float32Array
}

/**
 * Quantizes a row-major [rows, cols] float matrix. `bits` 8 uses −127…127; 7 (−63…63) leaves
 * headroom for the u8×s8 16-bit accumulation of AVX2 CPUs without VNNI.
 */
export function quantizeRows(data: Float32Array, rows: number, cols: number, bits: 7 | 8 = 8): Int8Rows {
  if (data.length !== rows * cols) throw new Error(`quantizeRows: ${data.length} values for [${rows}, ${cols}]`)
  const qmax = 2 ** (bits - 1) - 1
  const values = new Int8Array(rows * cols)
  const scale = new Float32Array(rows)
  for (let r = 0; r < rows; r++) {
    const base = r * cols
    let max = 0
    for (let c = 0; c < cols; c++) max = Math.max(max, Math.abs(data[base + c]))
    if (!Number.isFinite(max)) throw new Error(`quantizeRows: row ${r} holds a non-finite value`)
    // An all-zero row quantizes to zeros whatever the scale; 1 keeps the scale a normal float.
    const s = max > 0 ? max / qmax : 1
    scale[r] = s
    for (let c = 0; c < cols; c++) values[base + c] = Math.max(-qmax, Math.min(qmax, Math.round(data[base + c] / s)))
  }
  return { values, scale }
}

/** The float32 matrix an int8 one stands for (row-major [rows, cols]). */
export function dequantizeRows(values: ArrayLike<number>, scale: ArrayLike<number>, rows: number, cols: number): Float32Array {
  const out = new Float32Array(rows * cols)
  for (let r = 0; r < rows; r++) {
    const s = scale[r]
    const base = r * cols
    for (let c = 0; c < cols; c++) out[base + c] = values[base + c] * s
  }
  return out
}
