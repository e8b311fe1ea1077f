// Inside the model host process: receives requests, runs them (several may be in flight; long
// jobs yield between steps), streams progress, answers each with one result, honours cancels.
// Transport-agnostic (entry.ts binds it to Electron's parentPort or Node's process.send).
// The model code (tfjs, onnxruntime) is imported on the first request that needs it, so a
// ping — and a crash test — costs no model start-up.
import type { HostErrorShape, HostMethod, HostToMain, MainToHost } from './protocol'
import { HOST_METHODS } from './protocol'

export interface HostTransport {
  send(msg: HostToMain): void
  onMessage(listener: (msg: MainToHost) => void): void
  exit(code: number): void
}

import type { JobContext } from './job'

export type { JobContext } from './job'

type Impl = (params: never, ctx: JobContext) => Promise<unknown>

/** Errors the user can act on (bad folder, bad corpus, missing backend): 'invalid_request'. */
const USER_ERRORS = new Set([
  'CheckpointError',
  'SafetensorsError',
  'VocabError',
  'DistillError',
  'TaggingError',
  'BackendError',
  'InferenceEngineError',
  'OnnxFileError',
  'OnnxExportError',
  'HostInputError',
  'WordVectorError',
])

export function toHostError(e: unknown): HostErrorShape {
  if (!(e instanceof Error)) return { name: 'Error', code: 'internal', message: String(e) }
  const code = (e as { code?: unknown }).code
  if (e.name === 'AbortError' || (e.name === 'StoreError' && code === 'cancelled')) {
    return { name: e.name, code: 'cancelled', message: e.message || 'cancelled' }
  }
  if (e.name === 'CorpusError' && Array.isArray((e as { issues?: unknown }).issues)) {
    return { name: e.name, code: 'corpus_error', message: e.message, issues: (e as unknown as { issues: HostErrorShape['issues'] }).issues }
  }
  if (e.name === 'StoreError' && (code === 'invalid_request' || code === 'not_found' || code === 'conflict')) {
    return { name: e.name, code, message: e.message }
  }
  if (USER_ERRORS.has(e.name)) return { name: e.name, code: 'invalid_request', message: e.message }
  if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { name: e.name, code: 'invalid_request', message: e.message }
  return { name: e.name, code: 'internal', message: e.message || e.name }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** Diagnostics: cheap, no model code. */
const builtins: Partial<Record<HostMethod, Impl>> = {
  async ping(p: { echo?: string }) {
    return { pid: process.pid, echo: p.echo ?? null }
  },
  async sleep(p: { ms: number; tickMs?: number }, ctx: JobContext) {
    const t0 = performance.now()
    const tick = Math.max(1, p.tickMs ?? 20)
    while (performance.now() - t0 < p.ms) {
      if (ctx.signal.aborted) return { sleptMs: performance.now() - t0, cancelled: true }
      await sleep(Math.min(tick, p.ms))
      ctx.progress({ elapsedMs: performance.now() - t0 })
    }
    return { sleptMs: performance.now() - t0, cancelled: false }
  },
  async block(p: { ms: number }) {
    const t0 = performance.now()
    while (performance.now() - t0 < p.ms) {
      // Deliberately synchronous: a job that never looks at its cancel signal.
    }
    return { blockedMs: performance.now() - t0 }
  },
  async crash(p: { exitCode?: number }) {
    process.exit(p.exitCode ?? 70)
  },
}

let work: Promise<Record<string, Impl>> | null = null
function loadWork(): Promise<Record<string, Impl>> {
  work ??= import('./work').then((m) => m.JOBS as unknown as Record<string, Impl>)
  return work
}

export function serve(transport: HostTransport): void {
  const running = new Map<number, AbortController>()
  let shuttingDown = false

  const run = async (id: number, method: HostMethod, params: unknown) => {
    const controller = new AbortController()
    running.set(id, controller)
    try {
      if (!HOST_METHODS.includes(method)) throw Object.assign(new Error(`unknown model host method "${String(method)}"`), { name: 'HostInputError' })
      const impl = builtins[method] ?? (await loadWork())[method]
      if (!impl) throw new Error(`model host method "${method}" is not implemented`)
      const value = await impl(params as never, {
        signal: controller.signal,
        progress: (data) => {
          if (running.has(id)) transport.send({ type: 'progress', id, data })
        },
      })
      transport.send({ type: 'result', id, ok: true, value })
    } catch (e) {
      transport.send({ type: 'result', id, ok: false, error: toHostError(e) })
    } finally {
      running.delete(id)
    }
  }

  transport.onMessage((msg) => {
    if (!msg || typeof msg !== 'object') return
    if (msg.type === 'request') {
      if (shuttingDown) {
        transport.send({ type: 'result', id: msg.id, ok: false, error: { name: 'Error', code: 'internal', message: 'the model host is shutting down' } })
        return
      }
      void run(msg.id, msg.method, msg.params)
    } else if (msg.type === 'cancel') {
      running.get(msg.id)?.abort()
    } else if (msg.type === 'shutdown') {
      shuttingDown = true
      for (const c of running.values()) c.abort()
      void (async () => {
        // Let cancelled jobs answer and native engines close their sessions; then leave.
        const t0 = performance.now()
        while (running.size > 0 && performance.now() - t0 < 2000) await sleep(20)
        try {
          if (work) await (await loadWork())['release']?.({ dir: null } as never, { signal: new AbortController().signal, progress: () => {} })
        } catch {
          // nothing to release, or the engine is already gone
        }
        transport.exit(0)
      })()
    }
  })
  transport.send({ type: 'ready', pid: process.pid })
}
