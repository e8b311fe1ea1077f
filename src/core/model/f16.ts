// IEEE half precision: safetensors F16 tensors, and the distillation teacher cache (hidden states
// and attention maps at 2 bytes a value, relative error ≤ 2⁻¹¹, far below what the MSE losses can
// notice). Written by hand because Node 20 has no Float16Array.

const f32 = new Float32Array(1)
const u32 = new Uint32Array(f32.buffer)

/** float32 → binary16 bits, round to nearest even; overflow → ±Inf, NaN kept. */
export function toHalf(v: number): number {
  f32[0] = v
  const x = u32[0]
  const sign = (x >>> 16) & 0x8000
  const exp = (x >>> 23) & 0xff
  let mant = x & 0x7fffff
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0)
  const e = exp - 127 + 15
  if (e >= 0x1f) return sign | 0x7c00
  if (e <= 0) {
    if (e < -10) return sign
    mant |= 0x800000
    const shift = 14 - e
    let h = mant >>> shift
    const rem = mant & ((1 << shift) - 1)
    const half = 1 << (shift - 1)
    if (rem > half || (rem === half && (h & 1))) h++
    return sign | h
  }
  let h = (e << 10) | (mant >>> 13)
  const rem = mant & 0x1fff
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++ // may carry into the exponent: still correct
  return sign | h
}

const HALF_TABLE = (() => {
  const t = new Float32Array(65536)
  for (let h = 0; h < 65536; h++) {
    const s = h & 0x8000 ? -1 : 1
    const e = (h >> 10) & 0x1f
    const f = h & 0x3ff
    t[h] = e === 0 ? s * f * 2 ** -24 : e === 31 ? (f ? NaN : s * Infinity) : s * (1 + f / 1024) * 2 ** (e - 15)
  }
  return t
})()

export function fromHalf(h: number): number {
  return HALF_TABLE[h & 0xffff]
}

export function encodeHalf(src: ArrayLike<number>, dst = new Uint16Array(src.length), srcOffset = 0, count = src.length - srcOffset, dstOffset = 0): Uint16Array {
  for (let i = 0; i < count; i++) dst[dstOffset + i] = toHalf(src[srcOffset + i])
  return dst
}

/** Decodes `count` halves from src[srcOffset…] into dst[dstOffset…]. */
export function decodeHalfInto(src: Uint16Array, dst: Float32Array, srcOffset: number, count: number, dstOffset: number): void {
  for (let i = 0; i < count; i++) dst[dstOffset + i] = HALF_TABLE[src[srcOffset + i]]
}
