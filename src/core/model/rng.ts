// Small seeded PRNG for weight init and dropout masks. tf.randomNormal/tf.dropout use seedrandom
// through per-element JS calls and cannot be advanced as one stream; this is faster and lets one
// seed reproduce a whole model or training step.

/** xoshiro128** (Blackman & Vigna), 32-bit state words; seeded through splitmix32. */
export class Rng {
  private s0: number
  private s1: number
  private s2: number
  private s3: number
  private spare: number | null = null

  constructor(seed: number) {
    let x = (Math.floor(seed) ^ 0x9e3779b9) >>> 0
    const next = () => {
      // splitmix32
      x = (x + 0x9e3779b9) >>> 0
      let z = x
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
      return (z ^ (z >>> 16)) >>> 0
    }
    this.s0 = next()
    this.s1 = next()
    this.s2 = next()
    this.s3 = next()
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1
  }

  /** Uniform 32-bit unsigned integer. */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5) >>> 0, 7), 9) >>> 0
    const t = (this.s1 << 9) >>> 0
    this.s2 = (this.s2 ^ this.s0) >>> 0
    this.s3 = (this.s3 ^ this.s1) >>> 0
    this.s1 = (this.s1 ^ this.s2) >>> 0
    this.s0 = (this.s0 ^ this.s3) >>> 0
    this.s2 = (this.s2 ^ t) >>> 0
    this.s3 = rotl(this.s3, 11)
    return result
  }

  /**
   * Fills `out` with the next out.length values of nextU32(), much faster: the state lives in
   * int32 locals, which V8 keeps unboxed (dropout draws millions of values per training step).
   */
  fillU32(out: Uint32Array): Uint32Array {
    let s0 = this.s0 | 0
    let s1 = this.s1 | 0
    let s2 = this.s2 | 0
    let s3 = this.s3 | 0
    for (let i = 0; i < out.length; i++) {
      const m = Math.imul(s1, 5)
      out[i] = Math.imul((m << 7) | (m >>> 25), 9)
      const t = s1 << 9
      s2 ^= s0
      s3 ^= s1
      s1 ^= s2
      s0 ^= s3
      s2 ^= t
      s3 = (s3 << 11) | (s3 >>> 21)
    }
    this.s0 = s0 >>> 0
    this.s1 = s1 >>> 0
    this.s2 = s2 >>> 0
    this.s3 = s3 >>> 0
    return out
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextU32() / 4294967296
  }

  /** Standard normal (Box–Muller, both values used). */
  normal(): number {
    if (this.spare != null) {
      const v = this.spare
      this.spare = null
      return v
    }
    let u = 0
    while (u === 0) u = this.next()
    const v = this.next()
    const r = Math.sqrt(-2 * Math.log(u))
    this.spare = r * Math.sin(2 * Math.PI * v)
    return r * Math.cos(2 * Math.PI * v)
  }

  /** Fills a new Float32Array with N(mean, std²) samples. */
  normalArray(size: number, std: number, mean = 0): Float32Array {
    const out = new Float32Array(size)
    for (let i = 0; i < size; i++) out[i] = mean + std * this.normal()
    return out
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0
}
