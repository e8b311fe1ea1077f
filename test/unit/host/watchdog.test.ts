// The model host client's watchdog (issue 31 F11): a request without a cancel signal that never
// answers (the host blocked in a read) must not stall every later model request: past its deadline
// the process is killed, the request fails saying why, and the next request starts a fresh process.
import type { HostToMain, MainToHost } from '../../../src/host/protocol'
import { HostCrashError, ModelHost, type HostChannel } from '../../../src/host/client'

/** A host process double: ready at once; answers 'release' unless `stuck`, never anything while stuck. */
function fakeSpawner(stuck: () => boolean) {
  const spawned: Array<{ killed: boolean }> = []
  const spawn = (): HostChannel => {
    const me = { killed: false }
    spawned.push(me)
    let onMsg: (m: HostToMain) => void = () => undefined
    const exits: Array<(code: number | null, signal: string | null) => void> = []
    const blocked = stuck()
    return {
      pid: 1000 + spawned.length,
      send(msg: MainToHost) {
        if (msg.type === 'request' && !blocked) queueMicrotask(() => onMsg({ type: 'result', id: msg.id, ok: true, value: {} } as HostToMain))
      },
      onMessage(l) {
        onMsg = l
        queueMicrotask(() => l({ type: 'ready' } as HostToMain))
      },
      onExit(l) {
        exits.push(l)
      },
      kill() {
        me.killed = true
        for (const l of exits.splice(0)) queueMicrotask(() => l(null, 'SIGKILL'))
      },
    }
  }
  return { spawn, spawned }
}

describe('model host watchdog', () => {
  it('kills a process that does not answer a request without a signal; the next request gets a fresh one', async () => {
    let stuck = true
    const f = fakeSpawner(() => stuck)
    const host = new ModelHost(f.spawn, { logger: () => undefined })
    const t0 = Date.now()
    const err = await host.request('release', { dir: '/x' }, { timeoutMs: 80 }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(HostCrashError)
    expect((err as Error).message).toMatch(/release was stopped: release did not answer within 80 ms/)
    expect(Date.now() - t0).toBeLessThan(5000)
    expect(f.spawned[0]!.killed).toBe(true)
    stuck = false
    await expect(host.request('release', { dir: '/x' }, { timeoutMs: 80 })).resolves.toEqual({})
    expect(host.starts).toBe(2)
    await host.close({ final: true, timeoutMs: 10 })
  })

  it('applies the host-wide default to requests without a signal, and none to cancellable ones', async () => {
    const f = fakeSpawner(() => true)
    const host = new ModelHost(f.spawn, { logger: () => undefined, requestTimeoutMs: 60 })
    await expect(host.request('engineInfo', { modelDir: null })).rejects.toThrow(/engineInfo did not answer within 60 ms/)
    const controller = new AbortController()
    let settled = false
    const cancellable = host.request('engineInfo', { modelDir: null }, { signal: controller.signal }).finally(() => (settled = true))
    cancellable.catch(() => undefined)
    await new Promise((r) => setTimeout(r, 200))
    expect(settled).toBe(false)
    expect(f.spawned[1]!.killed).toBe(false)
    host.kill()
    await expect(cancellable).rejects.toThrow(HostCrashError)
    await host.close({ final: true, timeoutMs: 10 })
  })
})
