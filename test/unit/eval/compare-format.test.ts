import { describe, expect, it } from 'vitest'
import { reductionPct } from '@core/eval/compare'

describe('compare table: size and time cuts', () => {
  it('prints a reduction as a plain percentage, never "−0.0", and a growth as "+N more"', () => {
    expect(reductionPct(0.4)).toBe('40.0')
    expect(reductionPct(0)).toBe('0.0')
    expect(reductionPct(-0.0004)).toBe('0.0')
    expect(reductionPct(-0)).toBe('0.0')
    expect(reductionPct(-0.125)).toBe('+12.5 more')
    expect(reductionPct(undefined)).toBe('-')
    expect(reductionPct(Number.NaN)).toBe('-')
  })
})
