// A training run's --minutes budget leaves out the time its process was stopped (SIGSTOP, then
// SIGCONT): a paused background run must not end short of its epochs.
import { spawn } from 'node:child_process'
import { EventEmitter } from 'node:events'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { BEAT_MS, RunClock } from '../../../src/core/train/run-clock'

function fakeTime(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_000
  return { now: () => t, advance: (ms) => (t += ms) }
}

/** A clock on fake time, with its own SIGCONT source, and what moves them. */
function fakeClock(): { c: ReturnType<typeof fakeTime>; signals: EventEmitter; clock: RunClock } {
  const c = fakeTime()
  const signals = new EventEmitter()
  return { c, signals, clock: new RunClock(0, c.now, signals) }
}

describe('RunClock', () => {
  it('counts wall time and the time spent before a resume', () => {
    const c = fakeTime()
    const clock = new RunClock(90, c.now, new EventEmitter())
    c.advance(30_000)
    expect(clock.seconds()).toBe(120)
  })

  it('leaves out a stop, whichever of the late heartbeat and SIGCONT comes first', async () => {
    for (const order of ['beat first', 'continue first']) {
      const { c, signals, clock } = fakeClock()
      await clock.pausable(async () => {
        c.advance(BEAT_MS)
        clock.beat()
        c.advance(600_000) // stopped for ten minutes
        if (order === 'beat first') {
          clock.beat()
          signals.emit('SIGCONT')
        } else {
          signals.emit('SIGCONT')
          clock.beat()
        }
        c.advance(3 * BEAT_MS)
      })
      expect(clock.pausedSeconds(), order).toBe(600 - BEAT_MS / 1000)
      expect(clock.seconds(), order).toBe((4 * BEAT_MS) / 1000 + BEAT_MS / 1000)
    }
  })

  it('while the heartbeat is overdue, counts no further than the stall threshold until it comes', async () => {
    const { c, signals, clock } = fakeClock()
    await clock.pausable(async () => {
      c.advance(BEAT_MS)
      clock.beat()
      c.advance(360_000) // stopped for six minutes; the loop reads the clock before the beat and the listener run
      expect(clock.seconds()).toBe((3 * BEAT_MS) / 1000)
      signals.emit('SIGCONT')
      clock.beat()
      expect(clock.seconds()).toBe((2 * BEAT_MS) / 1000)
      c.advance(20_000) // a synchronous stall of work: read early it is held back, settled by the beat it counts
      expect(clock.seconds()).toBe((4 * BEAT_MS) / 1000)
      clock.beat()
      expect(clock.seconds()).toBe(22)
    })
    c.advance(5_000) // outside pausable nothing beats: wall time counts
    expect(clock.seconds()).toBe(27)
  })

  it('counts a long stall of work (no SIGCONT), and a continue long after a stall', async () => {
    const { c, signals, clock } = fakeClock()
    await clock.pausable(async () => {
      c.advance(12_000) // building a graph: the heartbeat comes 12 s late
      clock.beat()
      for (let i = 0; i < 30; i++) {
        c.advance(BEAT_MS)
        clock.beat()
      }
      signals.emit('SIGCONT') // a continue 30 s later, after a stop too short to stall the beat
      c.advance(BEAT_MS)
      clock.beat()
    })
    expect(clock.pausedSeconds()).toBe(0)
    expect(clock.seconds()).toBe(12 + 30 + BEAT_MS / 1000)
  })

  it('listens for SIGCONT only inside pausable, even when its body fails', async () => {
    const { c, signals, clock } = fakeClock()
    expect(signals.listenerCount('SIGCONT')).toBe(0)
    await expect(
      clock.pausable(async () => {
        expect(signals.listenerCount('SIGCONT')).toBe(1)
        throw new Error('boom')
      }),
    ).rejects.toThrow('boom')
    expect(signals.listenerCount('SIGCONT')).toBe(0)
  })
})

describe('RunClock in a process that is really stopped', () => {
  it.skipIf(process.platform === 'win32')('leaves a SIGSTOP … SIGCONT out of what it counts', async () => {
    // The child waits until its clock has counted 3 s (twice in a row: a reading in the same turn of
    // the event loop as the continue may come before the SIGCONT listener has run) and prints
    // what it counted and the wall time.
    const script = `
      const { register } = require('tsx/cjs/api'); register()
      const { RunClock } = require(${JSON.stringify(join(__dirname, '../../../src/core/train/run-clock.ts'))})
      const clock = new RunClock()
      const wallStart = performance.now()
      clock.pausable(() => new Promise((done) => {
        process.stdout.write('ready\\n')
        let over = 0
        const t = setInterval(() => { over = clock.seconds() > 3 ? over + 1 : 0; if (over === 2) { clearInterval(t); done() } }, 20)
      })).then(() => process.stdout.write(JSON.stringify({ counted: clock.seconds(), wall: (performance.now() - wallStart) / 1000, paused: clock.pausedSeconds() }) + '\\n'))`
    const child = spawn(process.execPath, ['-e', script], { cwd: join(__dirname, '../../..'), stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    await new Promise<void>((ok) => {
      const w = setInterval(() => out.includes('ready') && (clearInterval(w), ok()), 10)
    })
    await new Promise((r) => setTimeout(r, 500))
    child.kill('SIGSTOP')
    await new Promise((r) => setTimeout(r, 4_000))
    child.kill('SIGCONT')
    await new Promise((r) => child.on('exit', r))
    const res = JSON.parse(out.split('\n').find((l) => l.startsWith('{'))!) as { counted: number; wall: number; paused: number }
    expect(res.wall).toBeGreaterThan(6.5) // it was stopped for 4 s
    expect(res.paused).toBeGreaterThan(2.5) // the stop, less the beat it would have waited anyway
    expect(res.counted).toBeLessThan(3.5)
    expect(res.counted).toBeGreaterThan(3)
  }, 30_000)
})
