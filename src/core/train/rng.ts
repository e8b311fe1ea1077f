// Seeded pseudo-random numbers for everything in training that must replay exactly
// (shuffling, bucketing, dropout seeds). Math.random cannot be seeded, so it is never used here.

/** mulberry32: 32-bit state, period 2^32, good enough for shuffling; returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Derives an independent stream seed from a base seed and a label (epoch, purpose). */
export function deriveSeed(seed: number, ...parts: number[]): number {
  // splitmix32-style mixing so that nearby (seed, epoch) pairs give unrelated streams.
  let h = (seed ^ 0x9e3779b9) >>> 0
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0), 0x85ebca6b) >>> 0
    h ^= h >>> 13
    h = Math.imul(h, 0xc2b2ae35) >>> 0
    h ^= h >>> 16
  }
  return h >>> 0
}

/** Fisher–Yates shuffle in place with the given generator. */
export function shuffleInPlace<T>(items: T[], rng: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1))
    const tmp = items[i]
    items[i] = items[j]
    items[j] = tmp
  }
  return items
}
