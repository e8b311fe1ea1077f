// The one seeded random number generator of the code base: weight init, dropout masks,
// shuffling, bucketing, document splits, synthetic benchmark corpora and test fixtures all draw
// from it, so one seed replays a whole run. Math.random cannot be seeded, and tf.randomNormal /
// tf.dropout go through seedrandom one JS call per element and cannot be advanced as one stream.
//
// Written by hand rather than taken from npm: the dropout path draws millions of values per
// training step and needs the unboxed int32 loop of fillU32, which the packages (pure-rand,
// seedrandom) do not offer; the generator itself is twenty lines of a published algorithm.

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
   * Fills `out` with an inverted-dropout mask (0 or 1/(1−p)) from the next ⌈out.length / 2⌉ draws
   * of nextU32(): each draw decides two units, the first by its high 16 bits and the second by its
   * low 16 bits, a unit kept when its 16 bits are ≥ ⌊p·2¹⁶⌋ (so p is used to within 2⁻¹⁶). One
   * pass, state in int32 locals, no scratch array: a training step fills millions of mask values,
   * and half the draws halve the time the host spends on them.
   */
  fillDropoutMask(out: Float32Array, p: number): Float32Array {
    const scale = 1 / (1 - p)
    const threshold = Math.min(Math.floor(p * 65536), 65536)
    let s0 = this.s0 | 0
    let s1 = this.s1 | 0
    let s2 = this.s2 | 0
    let s3 = this.s3 | 0
    const n = out.length
    for (let i = 0; i < n; i += 2) {
      const m = Math.imul(s1, 5)
      const draw = Math.imul((m << 7) | (m >>> 25), 9)
      // Without a branch (bits − threshold < 0 sets the sign bit: dropped): twice as fast here.
      out[i] = scale * (1 - (((draw >>> 16) - threshold) >>> 31))
      if (i + 1 < n) out[i + 1] = scale * (1 - (((draw & 0xffff) - threshold) >>> 31))
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

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n)
  }

  /** One element of a non-empty list, uniformly. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]
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

  /** Fisher–Yates shuffle in place; returns `items`. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1)
      const tmp = items[i]
      items[i] = items[j]
      items[j] = tmp
    }
    return items
  }
}

/** Derives an independent stream seed from a base seed and labels (epoch, step, purpose). */
export function deriveSeed(seed: number, ...parts: number[]): number {
  // Each value goes through a full avalanche (murmur3's fmix32) before the next is mixed in, so
  // nearby (seed, epoch) pairs give unrelated streams; xoring seed and part first would make
  // (seed 0, epoch 1) and (seed 1, epoch 0) the same stream.
  let h = fmix32((seed ^ 0x9e3779b9) >>> 0)
  for (const p of parts) h = fmix32((h ^ (p >>> 0)) >>> 0)
  return h
}

function fmix32(h: number): number {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0
}
