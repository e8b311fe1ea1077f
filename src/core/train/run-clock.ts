// The time a training run has spent, for its --minutes budget, leaving out the time its process
// was stopped (SIGSTOP or Ctrl-Z, then SIGCONT). On a shared machine a background run is paused
// while something else is measured; a budget that kept counting through the pause ended the run
// short of its planned epochs (the default-model recipe's teachers lost 12 of their 45 minutes to
// two paused test runs and would have stopped before their learning rate reached 0).
//
// A stop cannot be caught, only the continue, and after it Node runs whatever is due (an overdue
// timer, a finished step) in no fixed order with the SIGCONT listener. So a heartbeat every second
// measures how late it comes (a stall), the listener notes when the process continued, and a
// stall whose end lies within a couple of seconds of a continue is a stop: its length, less one
// beat, is left out. A stall without a continue (a long synchronous piece of work, such as
// building a training graph) still counts, and so does a stop shorter than the stall threshold.
// A reading taken while the heartbeat is overdue (right after a continue, before the listener
// and the heartbeat have run: seen in the character LM's loop, which read 84.5 minutes after a
// 6-minute stop at 78, then 79.5 a minute later) counts only up to the stall threshold past the
// last beat; the beat, when it comes, settles whether the rest was work or a stop.

/** What the clock listens to for SIGCONT (the process; a test gives its own emitter). */
export interface SignalSource {
  on(event: 'SIGCONT', listener: () => void): unknown
  off(event: 'SIGCONT', listener: () => void): unknown
}

/** The heartbeat's period. */
export const BEAT_MS = 1_000
/** A beat at least this late (since the last) marks a stall. */
const STALL_MS = 2 * BEAT_MS
/** A continue at most this far from a stall's end makes the stall a stop. */
const MATCH_MS = 2 * BEAT_MS

export class RunClock {
  private readonly startedMs: number
  private pausedMs = 0
  private lastBeatMs: number
  private stall: { endMs: number; lateMs: number } | null = null
  private continuedAtMs: number | null = null
  private beating = false
  private readonly onContinue = () => {
    this.continuedAtMs = this.now()
    this.match()
  }

  /**
   * @param spentBeforeSeconds what an interrupted run had spent before (resume)
   * @param now a monotonic clock in milliseconds
   * @param signals where SIGCONT arrives; null: nowhere (Windows has no SIGCONT)
   */
  constructor(
    spentBeforeSeconds = 0,
    private readonly now: () => number = () => performance.now(),
    private readonly signals: SignalSource | null = process.platform === 'win32' ? null : process,
  ) {
    this.startedMs = this.now() - spentBeforeSeconds * 1000
    this.lastBeatMs = this.now()
  }

  /**
   * Runs `body` with stops left out (the heartbeat and the SIGCONT listener run meanwhile);
   * outside it the clock counts wall time alone, and a body that fails leaves nothing behind.
   */
  async pausable<T>(body: () => Promise<T>): Promise<T> {
    this.lastBeatMs = this.now()
    const heart = setInterval(() => this.beat(), BEAT_MS)
    heart.unref()
    this.signals?.on('SIGCONT', this.onContinue)
    this.beating = true
    try {
      return await body()
    } finally {
      this.beating = false
      clearInterval(heart)
      this.signals?.off('SIGCONT', this.onContinue)
    }
  }

  /** One heartbeat (every BEAT_MS inside pausable; a test calls it after moving its clock). */
  beat(): void {
    const t = this.now()
    const late = t - this.lastBeatMs
    this.lastBeatMs = t
    if (late >= STALL_MS) {
      this.stall = { endMs: t, lateMs: late - BEAT_MS }
      this.match()
    }
  }

  /** Seconds spent: those before a resume plus the wall time since, less the stops. */
  seconds(): number {
    // An overdue heartbeat may be a stop not yet settled: count no further than the threshold.
    const now = this.beating ? Math.min(this.now(), this.lastBeatMs + STALL_MS) : this.now()
    return (now - this.startedMs - this.pausedMs) / 1000
  }

  /** Seconds left out as stopped. */
  pausedSeconds(): number {
    return this.pausedMs / 1000
  }

  private match(): void {
    if (!this.stall || this.continuedAtMs === null) return
    if (Math.abs(this.stall.endMs - this.continuedAtMs) <= MATCH_MS) {
      this.pausedMs += this.stall.lateMs
      this.stall = null
      this.continuedAtMs = null
    } else if (this.stall.endMs < this.continuedAtMs) {
      this.stall = null // an older stall: work, not a stop
    } else {
      this.continuedAtMs = null // an older continue: a stop too short to stall the heartbeat
    }
  }
}
