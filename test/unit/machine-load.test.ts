import { describe, expect, it } from 'vitest'
import { busySecondsOfStatLine, markLoad, otherCoresSince, waitQuiet } from '../../src/core/machine-load'

describe('machine load', () => {
  it('counts user, nice, system, irq and softirq of /proc/stat, not idle, iowait or steal', () => {
    // cpu user nice system idle iowait irq softirq steal guest guest_nice
    expect(busySecondsOfStatLine('cpu  1000 200 300 90000 500 10 20 7000 0 0')).toBeCloseTo(15.3)
    expect(busySecondsOfStatLine('cpu  1000 200 300 90000 500 10 20 7000 0 0', 1000)).toBeCloseTo(1.53)
    expect(() => busySecondsOfStatLine('cpu0 1 2 3 4 5 6 7 8')).toThrow(/not the total line/)
    expect(() => busySecondsOfStatLine('cpu 1 2')).toThrow(/not the total line/)
  })

  it('does not wait when asked for no time, and measures other processes, not itself', () => {
    expect(waitQuiet(0)).toBeNull()
    const mark = markLoad()
    // Busy work in this process must not count as other processes' load.
    let x = 0
    const until = performance.now() + 300
    while (performance.now() < until) x += Math.sqrt(x + 1)
    const other = otherCoresSince(mark)
    expect(x).toBeGreaterThan(0)
    if (other === null) return // not Linux: unknown, as documented
    expect(other).toBeGreaterThanOrEqual(0)
    // This test runner's other workers may be busy, but this loop's own core is not counted.
    expect(other).toBeLessThan(2)
  })
})
