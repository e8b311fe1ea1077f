import { deriveSeed, Rng } from '@core/rng'

describe('the one seeded generator', () => {
  it('replays the same stream for the same seed and a different one for another seed', () => {
    const a = new Rng(42)
    const b = new Rng(42)
    const c = new Rng(43)
    const xs = Array.from({ length: 8 }, () => a.nextU32())
    expect(Array.from({ length: 8 }, () => b.nextU32())).toEqual(xs)
    expect(Array.from({ length: 8 }, () => c.nextU32())).not.toEqual(xs)
  })

  it('fillDropoutMask: 16 draws seed four xoshiro128** lanes, whose j-th draws decide units 8j…8j+3 (high 16 bits) and 8j+4…8j+7 (low), kept when ≥ p·2¹⁶', () => {
    // The rule written out with scalar generators (the kernel runs the four lanes in SIMD).
    const rotl = (x: number, k: number) => ((x << k) | (x >>> (32 - k))) >>> 0
    const reference = (seed: number, length: number, p: number) => {
      const r = new Rng(seed)
      const words = Array.from({ length: 16 }, () => r.nextU32())
      const lanes = [0, 1, 2, 3].map((lane) => [0, 1, 2, 3].map((w) => words[4 * w + lane]))
      for (const s of lanes) if ((s[0] | s[1] | s[2] | s[3]) === 0) s[0] = 1
      const keep = (bits: number) => (bits >= Math.floor(p * 2 ** 16) ? Math.fround(1 / (1 - p)) : 0)
      const out: number[] = []
      while (out.length < length) {
        const draws = lanes.map((s) => {
          const result = Math.imul(rotl(Math.imul(s[1], 5) >>> 0, 7), 9) >>> 0
          const t = (s[1] << 9) >>> 0
          s[2] = (s[2] ^ s[0]) >>> 0
          s[3] = (s[3] ^ s[1]) >>> 0
          s[1] = (s[1] ^ s[2]) >>> 0
          s[0] = (s[0] ^ s[3]) >>> 0
          s[2] = (s[2] ^ t) >>> 0
          s[3] = rotl(s[3], 11)
          return result
        })
        out.push(...draws.map((u) => keep(u >>> 16)), ...draws.map((u) => keep(u & 0xffff)))
      }
      return { mask: out.slice(0, length), next: r.nextU32() }
    }
    for (const [length, p] of [[1000, 0.3], [997, 0.1], [5, 0.5], [200_000, 0.1]] as const) {
      const rng = new Rng(7)
      const mask = rng.fillDropoutMask(new Float32Array(length), p)
      const want = reference(7, length, p)
      expect(Array.from(mask)).toEqual(want.mask)
      // The generator moved on by exactly the 16 draws.
      expect(rng.nextU32()).toBe(want.next)
      const dropped = mask.filter((x) => x === 0).length / length
      if (length >= 1000) expect(Math.abs(dropped - p)).toBeLessThan(0.05)
    }
  })

  it('draws uniforms in [0, 1), integers in range, and normals with mean 0 and variance 1', () => {
    const r = new Rng(1)
    let sum = 0
    let sq = 0
    const n = 20_000
    for (let i = 0; i < n; i++) {
      const u = r.next()
      expect(u >= 0 && u < 1).toBe(true)
      const k = r.int(5)
      expect(Number.isInteger(k) && k >= 0 && k < 5).toBe(true)
      const z = r.normal()
      sum += z
      sq += z * z
    }
    expect(Math.abs(sum / n)).toBeLessThan(0.05)
    expect(Math.abs(sq / n - 1)).toBeLessThan(0.05)
  })

  it('shuffles into a permutation that depends on the seed', () => {
    const items = Array.from({ length: 50 }, (_, i) => i)
    const s1 = new Rng(3).shuffle([...items])
    const s2 = new Rng(4).shuffle([...items])
    expect([...s1].sort((x, y) => x - y)).toEqual(items)
    expect(s1).not.toEqual(items)
    expect(s1).not.toEqual(s2)
    expect(new Rng(3).shuffle([...items])).toEqual(s1)
  })

  it('derives unrelated seeds for neighbouring (seed, epoch) pairs', () => {
    const seeds = new Set<number>()
    for (let s = 0; s < 8; s++) for (let e = 0; e < 8; e++) seeds.add(deriveSeed(s, e))
    expect(seeds.size).toBe(64)
    expect(deriveSeed(1, 2)).toBe(deriveSeed(1, 2))
  })
})
