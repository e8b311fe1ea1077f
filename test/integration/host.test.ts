// The model host process and its protocol, without any model: round trips, progress,
// cooperative cancel, the kill-after-grace cancel of a job that ignores it, crash detection and
// restart on the next request. Uses the same factory the e2e harness uses (createNodeModelHost).
import { HostCrashError, type ModelHost } from '../../src/host/client'
import { createNodeModelHost } from '../../src/host/node'
import { isStoreError } from '../../src/core/store'

let host: ModelHost
const logs: string[] = []

beforeAll(() => {
  host = createNodeModelHost({ cancelGraceMs: 1500, logger: (l) => logs.push(l) })
})
afterAll(async () => {
  await host.close({ final: true })
})

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p
  } catch (e) {
    return e as Error
  }
  throw new Error('expected a rejection')
}

describe('model host process', () => {
  it('answers in its own process, with progress messages before the result', async () => {
    const pong = await host.request('ping', { echo: 'hello' })
    expect(pong.echo).toBe('hello')
    expect(pong.pid).not.toBe(process.pid)
    expect(host.pid).toBe(pong.pid)

    const ticks: number[] = []
    const r = await host.request('sleep', { ms: 120, tickMs: 20 }, { onProgress: (p) => ticks.push(p.elapsedMs) })
    expect(r.cancelled).toBe(false)
    expect(ticks.length).toBeGreaterThanOrEqual(3)
    expect(ticks).toEqual([...ticks].sort((a, b) => a - b))
  })

  it('runs requests concurrently and keeps their answers apart', async () => {
    const [a, b, c] = await Promise.all([
      host.request('sleep', { ms: 150 }),
      host.request('ping', { echo: 'b' }),
      host.request('ping', { echo: 'c' }),
    ])
    expect(a.sleptMs).toBeGreaterThanOrEqual(140)
    expect(b.echo).toBe('b')
    expect(c.echo).toBe('c')
  })

  it('cancels a cooperative job with a cancel message (the process survives)', async () => {
    const pid = host.pid
    const controller = new AbortController()
    const p = host.request('sleep', { ms: 10_000, tickMs: 10 }, { signal: controller.signal })
    setTimeout(() => controller.abort(), 100)
    const t0 = performance.now()
    const r = await p
    expect(r.cancelled).toBe(true)
    // Well under the job's 10 s: the cancel stopped it (timing margins are for a loaded machine).
    expect(performance.now() - t0).toBeLessThan(8000)
    expect(host.pid).toBe(pid)
  })

  it('kills a job that ignores the cancel after the grace period, rejects it as cancelled and restarts on the next request', async () => {
    const startsBefore = host.starts
    const controller = new AbortController()
    const p = host.request('block', { ms: 20_000 }, { signal: controller.signal })
    // A bystander request in flight on the same process is failed clearly, not left hanging.
    const bystander = host.request('sleep', { ms: 20_000 })
    setTimeout(() => controller.abort(), 200)
    const err = await rejection(p)
    expect(isStoreError(err) && err.code === 'cancelled').toBe(true)
    const other = await rejection(bystander)
    expect(other).toBeInstanceOf(HostCrashError)
    expect(other.message).toMatch(/did not stop within 1500 ms/)
    const pong = await host.request('ping', {})
    expect(host.starts).toBe(startsBefore + 1)
    expect(pong.pid).toBe(host.pid)
  })

  it('detects a crash: pending requests are rejected with a clear error and the next request gets a fresh process', async () => {
    const before = await host.request('ping', {})
    const crashesBefore = host.crashes
    const pending = host.request('sleep', { ms: 30_000 })
    const crash = host.request('crash', { exitCode: 71 })
    const [e1, e2] = await Promise.all([rejection(pending), rejection(crash)])
    for (const e of [e1, e2]) {
      expect(e).toBeInstanceOf(HostCrashError)
      expect(e.message).toMatch(/stopped unexpectedly .*exit code 71.*restarts with the next model request/)
    }
    expect(host.crashes).toBe(crashesBefore + 1)
    expect(host.pid).toBeUndefined()
    const after = await host.request('ping', {})
    expect(after.pid).not.toBe(before.pid)
    expect(logs.some((l) => l.includes('stopped unexpectedly'))).toBe(true)
  })

  it('reports an unknown method as an invalid request and refuses after a final close', async () => {
    const err = await rejection(host.request('nope' as never, {} as never))
    expect(isStoreError(err) && err.code === 'invalid_request').toBe(true)
    expect(err.message).toContain('unknown model host method')

    const other = createNodeModelHost()
    await other.request('ping', {})
    await other.close({ final: true })
    expect(other.pid).toBeUndefined()
    await expect(other.request('ping', {})).rejects.toThrow(/closed/)
  })
})
