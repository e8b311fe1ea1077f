// ModelHost: the main process's handle on the model host process, where all model work runs
// (tagging, training, retraining, distillation, comparison). Electron-free: the process is made
// by a spawner — utilityProcess.fork in the Electron shell (src/main/index.ts), child_process.fork
// of the TypeScript entry through tsx in plain Node (./node.ts: tests, the e2e harness, benches).
//
// Why a process and not worker_threads:
//  - native addons (tfjs-node / tfjs-node-gpu's libtensorflow, onnxruntime-node) load into their
//    own process, once, the way they are built and tested; several of them are not safe to load
//    into (or unload from) worker threads and share a process with Chromium's own threads;
//  - a crash, an abort() in native code or an out-of-memory during training ends only the host:
//    the window and the workspace survive, pending requests fail with a clear error and the
//    next request starts a fresh host;
//  - the host has its own V8 heap: training's garbage (hundreds of MB of typed arrays) is never
//    collected on the thread that serves IPC, so no GC pause freezes the window;
//  - a job that ignores cancellation can still be stopped: the process is killed.
//
// Protocol (./protocol.ts): request ids, progress messages, one result per request, cancel
// messages. A cancelled job that has not answered after `cancelGraceMs` is stopped by killing
// the process; its request then rejects with StoreError 'cancelled', any other request in flight
// with HostCrashError. A request without a cancel signal has a watchdog instead (timeoutMs): one
// that never answers (a read blocked on a FIFO or a dead network share) would otherwise stall every
// later model request; past its deadline the process is killed and the next request starts a fresh one.
import { CorpusError } from '../core/corpus/errors'
import { StoreError } from '../core/store/errors'
import type { HostErrorShape, HostMethod, HostParams, HostProgress, HostResult, HostToMain, MainToHost } from './protocol'

/** The process's message channel, whatever made it (child_process, utilityProcess, a test double). */
export interface HostChannel {
  readonly pid: number | undefined
  send(msg: MainToHost): void
  onMessage(listener: (msg: HostToMain) => void): void
  /** Called once when the process has ended (code, or the signal that ended it). */
  onExit(listener: (code: number | null, signal: string | null) => void): void
  kill(): void
}

export type HostSpawner = () => HostChannel

/** The host process ended while a request was in flight (crash, out of memory, killed). */
export class HostCrashError extends Error {
  override name = 'HostCrashError'
}

export interface ModelHostOptions {
  /** Time for a new process to report ready (loading tsx/tfjs can take a while on a cold disk). Default 120 s. */
  startTimeoutMs?: number
  /** How long a cancelled request may take to answer before the process is killed. Default 15 s. */
  cancelGraceMs?: number
  /** Deadline of a request that has no cancel signal (RequestOptions.timeoutMs). Default 10 min. */
  requestTimeoutMs?: number
  logger?: (line: string) => void
}

export interface RequestOptions<P> {
  /** Aborting sends a cancel; see cancelGraceMs. */
  signal?: AbortSignal
  onProgress?: (progress: P) => void
  cancelGraceMs?: number
  /**
   * How long to wait for the answer before the process is judged stuck: it is killed (every
   * request in flight fails, the next one starts a fresh process) and this request rejects with
   * HostCrashError. Default: none when `signal` is given (the user can cancel), else
   * ModelHostOptions.requestTimeoutMs.
   */
  timeoutMs?: number
}

interface Proc {
  channel: HostChannel
  ready: Promise<void>
  exited: boolean
  /** Why we killed it, when we did. */
  killedBecause: string | null
}

interface Pending {
  method: HostMethod
  proc: Proc
  resolve(value: unknown): void
  reject(error: Error): void
  onProgress?: (p: unknown) => void
  cancelRequested: boolean
  cleanup(): void
}

function describeExit(code: number | null, signal: string | null): string {
  if (signal) return `killed by ${signal}`
  if (code === 134 || code === 137) return `exit code ${code}, probably out of memory`
  return `exit code ${code}`
}

const seconds = (ms: number) => (ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`)

/** Rebuilds a thrown host error on this side, keeping what toIpcError needs (code, issues). */
export function errorFromHost(e: HostErrorShape): Error {
  if (e.code === 'corpus_error' && e.issues?.length) return new CorpusError(e.issues)
  if (e.code === 'invalid_request' || e.code === 'not_found' || e.code === 'conflict' || e.code === 'cancelled') {
    return new StoreError(e.code, e.message)
  }
  const err = new Error(e.message)
  err.name = e.name || 'Error'
  return err
}

export class ModelHost {
  private proc: Proc | null = null
  private readonly pending = new Map<number, Pending>()
  private nextId = 1
  private closed = false
  /** Processes started so far (a restart after a crash adds one). */
  starts = 0
  /** Processes that ended without being asked to. */
  crashes = 0

  constructor(
    private readonly spawn: HostSpawner,
    private readonly opts: ModelHostOptions = {},
  ) {}

  /** The running process's id, or undefined when none runs. */
  get pid(): number | undefined {
    return this.proc && !this.proc.exited ? this.proc.channel.pid : undefined
  }

  get inFlight(): number {
    return this.pending.size
  }

  /** Sends a request (starting the process if needed) and resolves with its result. */
  async request<M extends HostMethod>(
    method: M,
    params: HostParams<M>,
    opts: RequestOptions<HostProgress<M>> = {},
  ): Promise<HostResult<M>> {
    if (this.closed) throw new Error('The model host is closed')
    if (opts.signal?.aborted) throw new StoreError('cancelled', `${method} cancelled`)
    const proc = await this.ensure()
    if (opts.signal?.aborted) throw new StoreError('cancelled', `${method} cancelled`)
    return new Promise<HostResult<M>>((resolve, reject) => {
      const id = this.nextId++
      let graceTimer: NodeJS.Timeout | null = null
      let watchdog: NodeJS.Timeout | null = null
      const onAbort = () => {
        const p = this.pending.get(id)
        if (!p || p.cancelRequested) return
        p.cancelRequested = true
        this.post(proc, { type: 'cancel', id })
        const grace = opts.cancelGraceMs ?? this.opts.cancelGraceMs ?? 15_000
        graceTimer = setTimeout(() => {
          if (this.pending.has(id)) this.kill(proc, `${method} did not stop within ${grace} ms of being cancelled`)
        }, grace)
        graceTimer.unref?.()
      }
      const pending: Pending = {
        method,
        proc,
        resolve: resolve as (v: unknown) => void,
        reject,
        onProgress: opts.onProgress as ((p: unknown) => void) | undefined,
        cancelRequested: false,
        cleanup: () => {
          if (graceTimer) clearTimeout(graceTimer)
          if (watchdog) clearTimeout(watchdog)
          opts.signal?.removeEventListener('abort', onAbort)
        },
      }
      this.pending.set(id, pending)
      opts.signal?.addEventListener('abort', onAbort, { once: true })
      const deadline = opts.timeoutMs ?? (opts.signal ? undefined : (this.opts.requestTimeoutMs ?? 600_000))
      if (deadline !== undefined) {
        watchdog = setTimeout(() => {
          if (this.pending.has(id)) this.kill(proc, `${method} did not answer within ${seconds(deadline)} (a file it reads may be blocked); the model process restarts with the next request`)
        }, deadline)
        watchdog.unref?.()
      }
      if (!this.post(proc, { type: 'request', id, method, params })) {
        this.settle(id)
        reject(new HostCrashError(`The model process is not running (it stopped before ${method} could be sent); try again`))
      }
    })
  }

  /**
   * Stops the process: a polite shutdown message, then a kill after `timeoutMs`. Requests in
   * flight are rejected. The host can be used again afterwards (a new process starts) unless
   * `final` is set.
   */
  async close(opts: { timeoutMs?: number; final?: boolean } = {}): Promise<void> {
    if (opts.final) this.closed = true
    const proc = this.proc
    if (!proc || proc.exited) return
    proc.killedBecause = 'the model host was closed'
    const exited = new Promise<void>((r) => proc.channel.onExit(() => r()))
    this.post(proc, { type: 'shutdown' })
    const timer = setTimeout(() => proc.channel.kill(), opts.timeoutMs ?? 3000)
    await exited
    clearTimeout(timer)
  }

  /** Kills the process now (tests; a stuck job). Pending requests are rejected. */
  kill(proc: Proc | null = this.proc, why = 'killed on request'): void {
    if (!proc || proc.exited) return
    proc.killedBecause = why
    this.log(`[model-host] stopping pid ${proc.channel.pid}: ${why}`)
    proc.channel.kill()
  }

  // ---------------------------------------------------------------------------------------------

  private ensure(): Promise<Proc> {
    const cur = this.proc
    if (cur && !cur.exited) return cur.ready.then(() => cur)
    let channel: HostChannel
    try {
      channel = this.spawn()
    } catch (e) {
      return Promise.reject(new HostCrashError(`Cannot start the model process: ${(e as Error).message}`))
    }
    this.starts++
    let markReady!: () => void
    let failStart!: (e: Error) => void
    const ready = new Promise<void>((res, rej) => {
      markReady = res
      failStart = rej
    })
    const proc: Proc = { channel, ready, exited: false, killedBecause: null }
    let started = false
    const timeoutMs = this.opts.startTimeoutMs ?? 120_000
    const timer = setTimeout(() => {
      if (!started) {
        failStart(new HostCrashError(`The model process did not start within ${Math.round(timeoutMs / 1000)} s`))
        this.kill(proc, 'start-up timed out')
      }
    }, timeoutMs)
    timer.unref?.()
    channel.onMessage((msg) => {
      if (msg.type === 'ready') {
        started = true
        clearTimeout(timer)
        markReady()
        return
      }
      this.onMessage(msg)
    })
    channel.onExit((code, signal) => {
      clearTimeout(timer)
      proc.exited = true
      if (this.proc === proc) this.proc = null
      const why = describeExit(code, signal)
      if (!started) failStart(new HostCrashError(`The model process exited while starting (${why})`))
      if (!proc.killedBecause) {
        this.crashes++
        this.log(`[model-host] pid ${channel.pid} stopped unexpectedly (${why})`)
      }
      for (const [id, p] of [...this.pending]) {
        if (p.proc !== proc) continue
        this.settle(id)
        if (p.cancelRequested) p.reject(new StoreError('cancelled', `${p.method} cancelled (the model process was stopped)`))
        else if (proc.killedBecause) p.reject(new HostCrashError(`${p.method} was stopped: ${proc.killedBecause}`))
        else {
          p.reject(
            new HostCrashError(
              `The model process stopped unexpectedly during ${p.method} (${why}); nothing was saved from it. ` +
                'It restarts with the next model request.',
            ),
          )
        }
      }
    })
    // Avoid an unhandled rejection when nobody awaits a failed start (the request awaiting it sees it).
    ready.catch(() => undefined)
    this.proc = proc
    return ready.then(() => proc)
  }

  private onMessage(msg: HostToMain): void {
    if (msg.type === 'progress') {
      const p = this.pending.get(msg.id)
      try {
        p?.onProgress?.(msg.data)
      } catch (e) {
        this.log(`[model-host] progress listener of ${p?.method} threw: ${(e as Error).message}`)
      }
      return
    }
    if (msg.type === 'result') {
      const p = this.pending.get(msg.id)
      if (!p) return
      this.settle(msg.id)
      if (msg.ok) p.resolve(msg.value)
      else p.reject(errorFromHost(msg.error))
    }
  }

  private settle(id: number): void {
    const p = this.pending.get(id)
    if (!p) return
    this.pending.delete(id)
    p.cleanup()
  }

  private post(proc: Proc, msg: MainToHost): boolean {
    if (proc.exited) return false
    try {
      proc.channel.send(msg)
      return true
    } catch (e) {
      this.log(`[model-host] cannot send ${msg.type}: ${(e as Error).message}`)
      return false
    }
  }

  private log(line: string): void {
    ;(this.opts.logger ?? ((l: string) => console.error(l)))(line)
  }
}
