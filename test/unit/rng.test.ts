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

  it('fillDropoutMask (the fast dropout path) decides two units per nextU32 draw, by its high and its low 16 bits ≥ p·2¹⁶, and leaves the same state', () => {
    for (const length of [1000, 999]) {
      const fast = new Rng(7)
      const slow = new Rng(7)
      const p = 0.3
      const mask = fast.fillDropoutMask(new Float32Array(length), p)
      const keep = (bits: number) => (bits >= Math.floor(p * 2 ** 16) ? Math.fround(1 / (1 - p)) : 0)
      const expected = Array.from({ length: Math.ceil(length / 2) }, () => slow.nextU32()).flatMap((u) => [keep(u >>> 16), keep(u & 0xffff)])
      expect(Array.from(mask)).toEqual(expected.slice(0, length))
      expect(fast.nextU32()).toBe(slow.nextU32())
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
