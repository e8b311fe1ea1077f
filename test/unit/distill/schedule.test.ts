import { describe, expect, it } from 'vitest'
import { phi, phiZeroStep, rampTemperature, temperatureLevels } from '@core/distill/schedule'

describe('dynamic weight φ(s) = max(1 − e^(s/G + b − 1), 0)', () => {
  it('starts at 1 − e^(b − 1) and is 0 at s = G', () => {
    expect(phi(0, 1000)).toBeCloseTo(1 - Math.exp(-0.7), 12)
    expect(phi(0, 1000)).toBeCloseTo(0.50341, 5)
    expect(phi(1000, 1000)).toBe(0)
    expect(phi(0, 10, 0.5)).toBeCloseTo(1 - Math.exp(-0.5), 12)
  })
  it('crosses zero at s/G = 1 − b (0.7 for b = 0.3) and decreases before', () => {
    const G = 1000
    expect(phi(699, G)).toBeGreaterThan(0)
    expect(phi(699, G)).toBeLessThan(0.002)
    expect(phi(700, G)).toBe(0)
    expect(phi(850, G)).toBe(0)
    expect(phiZeroStep(G)).toBe(700)
    expect(phi(phiZeroStep(37), 37)).toBe(0)
    expect(phi(phiZeroStep(37) - 1, 37)).toBeGreaterThan(0)
    for (let s = 1; s < 700; s++) expect(phi(s, G)).toBeLessThan(phi(s - 1, G))
    expect(phi(350, G)).toBeCloseTo(1 - Math.exp(0.35 + 0.3 - 1), 12)
  })
  it('rejects a non-positive G', () => {
    expect(() => phi(0, 0)).toThrow(/total steps/)
  })
})

describe('temperature ramp', () => {
  it('has levels 0.5, 1, …, 3 by default in steps of 0.5', () => {
    expect(temperatureLevels()).toEqual([0.5, 1, 1.5, 2, 2.5, 3])
    expect(temperatureLevels({ start: 1, target: 2.2 })).toEqual([1, 1.5, 2, 2.2])
    expect(temperatureLevels({ start: 4, target: 3 })).toEqual([3])
  })
  it('steps up in equal parts of training and holds the target to the end', () => {
    const G = 600
    const seen = Array.from({ length: G }, (_, s) => rampTemperature(s, G))
    expect(seen[0]).toBe(0.5)
    expect(seen[99]).toBe(0.5)
    expect(seen[100]).toBe(1)
    expect(seen[499]).toBe(2.5)
    expect(seen[500]).toBe(3)
    expect(seen[599]).toBe(3)
    expect(rampTemperature(G, G)).toBe(3)
    // Monotone, every increment 0.5, all six levels used.
    const changes = seen.slice(1).map((t, i) => t - seen[i]).filter((d) => d !== 0)
    expect(changes).toEqual([0.5, 0.5, 0.5, 0.5, 0.5])
    expect(new Set(seen).size).toBe(6)
  })
})
