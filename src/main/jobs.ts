// A tiny registry of cancellable jobs (imports now; training later) and a progress throttle.
import { StoreError } from '../core/store/errors'

const jobs = new Map<string, AbortController>()

/** Registers `jobId` and returns its controller; a job id still running is refused ('conflict'). */
export function startJob(jobId: string): AbortController {
  if (jobs.has(jobId)) throw new StoreError('conflict', `Job ${jobId} is already running`)
  const controller = new AbortController()
  jobs.set(jobId, controller)
  return controller
}

/** Aborts a running job; false when no such job runs (finished already, or never started). */
export function cancelJob(jobId: string): boolean {
  const controller = jobs.get(jobId)
  if (!controller) return false
  controller.abort()
  return true
}

/** Forgets the job; call in `finally`. */
export function finishJob(jobId: string): void {
  jobs.delete(jobId)
}

export function runningJobs(): string[] {
  return [...jobs.keys()]
}

/** Default spacing of progress events: at most ~20 per second. */
export const PROGRESS_INTERVAL_MS = 50

export interface Throttled<A extends unknown[]> {
  (...args: A): void
  /** Delivers the last suppressed call, if any, now (e.g. the final count). */
  flush(): void
}

/**
 * Calls `fn` at most once per `intervalMs`: the first call goes through, later ones inside the
 * interval are dropped except the newest, which `flush()` delivers. No timers, so nothing to clean up.
 */
export function throttle<A extends unknown[]>(fn: (...args: A) => void, intervalMs = PROGRESS_INTERVAL_MS): Throttled<A> {
  let last = -Infinity
  let pending: A | null = null
  const call = ((...args: A) => {
    const t = performance.now()
    if (t - last >= intervalMs) {
      last = t
      pending = null
      fn(...args)
    } else {
      pending = args
    }
  }) as Throttled<A>
  call.flush = () => {
    if (pending) {
      const args = pending
      pending = null
      last = performance.now()
      fn(...args)
    }
  }
  return call
}
