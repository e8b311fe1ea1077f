// The one seeded random number generator of the code base: weight init, dropout masks,
// shuffling, bucketing, document splits, synthetic benchmark corpora and test fixtures all draw
// from it, so one seed replays a whole run. Math.random cannot be seeded, and tf.randomNormal /
// tf.dropout go through seedrandom one JS call per element and cannot be advanced as one stream.
//
// Written by hand rather than taken from npm: the dropout path draws millions of values per
// training step and runs four generators side by side in a WebAssembly SIMD kernel
// (./dropout.wat), which the packages (pure-rand, seedrandom) do not offer; the generator itself
// is twenty lines of a published algorithm.

import { DROPOUT_WASM_BASE64 } from './dropout-wasm'
import { instantiateKernel, WASM_PAGE_BYTES } from './wasm'

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
   * Fills `out` with an inverted-dropout mask (0 or 1/(1−p)). The next 16 draws of nextU32()
   * seed four xoshiro128** generators that run side by side in a WebAssembly SIMD kernel
   * (./dropout.wat): their j-th draws decide units 8j … 8j+3 by their high 16 bits and 8j+4 …
   * 8j+7 by their low 16 bits, a unit kept when its 16 bits are ≥ ⌊p·2¹⁶⌋ (so p is used to within
   * 2⁻¹⁶). A training step fills millions of mask values: one scalar generator took most of the
   * host's time in a step besides AdamW (a quiet cpu-small step: 17 ms of ~300).
   */
  fillDropoutMask(out: Float32Array, p: number): Float32Array {
    // A view of an arena's memory is filled where it is; any other array through the scratch arena's.
    const home = DropoutArena.of(out)
    const arena = home ?? scratchArena()
    const target = home ? out : arena.views([out.length])[0] // may grow the memory: the state view is taken after
    const lanes = arena.state()
    for (let word = 0; word < 4; word++) for (let lane = 0; lane < 4; lane++) lanes[4 * word + lane] = this.nextU32()
    // xoshiro's state must not be all zero: such a lane would stay zero.
    for (let lane = 0; lane < 4; lane++) if ((lanes[lane] | lanes[4 + lane] | lanes[8 + lane] | lanes[12 + lane]) === 0) lanes[lane] = 1
    arena.fill(target.byteOffset, out.length, lanes.byteOffset, Math.min(Math.floor(p * 65536), 65536), 1 / (1 - p))
    if (!home) out.set(target)
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

/** [lanes' state, 64 bytes][masks, each rounded up to 8 values: the kernel writes 8 at a time]. */
const MASKS_AT = 64

/**
 * The dropout kernel (./dropout.wat) with a memory of its own that holds masks: an onnxruntime
 * trainer feeds views of it as its mask inputs, so Rng.fillDropoutMask writes each mask where the
 * graph reads it instead of into a scratch area and then a copy.
 */
export class DropoutArena {
  private static readonly byBuffer = new WeakMap<ArrayBufferLike, DropoutArena>()
  private readonly memory = new WebAssembly.Memory({ initial: 1 })
  readonly fill = instantiateKernel(DROPOUT_WASM_BASE64, this.memory).fill as (out: number, n: number, state: number, threshold: number, scale: number) => void

  constructor() {
    DropoutArena.byBuffer.set(this.memory.buffer, this)
  }

  /** The arena whose memory `a` is a view of, if any. */
  static of(a: Float32Array): DropoutArena | undefined {
    return DropoutArena.byBuffer.get(a.buffer)
  }

  /**
   * Arrays of these sizes in the arena, side by side. Views handed out before are no longer valid
   * after this call (the memory may have grown); those of one call stay valid until the next.
   */
  views(sizes: readonly number[]): Float32Array[] {
    const room = sizes.map((n) => Math.ceil(n / 8) * 8)
    const need = MASKS_AT + 4 * room.reduce((a, n) => a + n, 0)
    if (need > this.memory.buffer.byteLength) {
      this.memory.grow(Math.ceil((need - this.memory.buffer.byteLength) / WASM_PAGE_BYTES))
      DropoutArena.byBuffer.set(this.memory.buffer, this)
    }
    let at = MASKS_AT
    return sizes.map((n, i) => {
      const view = new Float32Array(this.memory.buffer, at, n)
      at += 4 * room[i]
      return view
    })
  }

  /** The four lanes' state words (s0 of lanes 0-3, then s1, s2, s3). */
  state(): Int32Array {
    return new Int32Array(this.memory.buffer, 0, 16)
  }
}

let scratch: DropoutArena | null = null

/** The arena that masks outside any arena are drawn in before they are copied out. */
function scratchArena(): DropoutArena {
  return (scratch ??= new DropoutArena())
}
