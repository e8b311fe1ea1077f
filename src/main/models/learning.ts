// The correction loop (issue 30): the review queue's strategy, the learning curve, and
// "Auto-improve" — every N newly reviewed documents the active model is retrained in the
// background by the retrain job itself (./retrain.ts), warm-started from the active model and
// measured on the fixed held-out documents; kept when it scores at least as well there, then the
// unreviewed documents are re-tagged with it (tag:run), so the queue and their suggestions come
// from the new model. One automatic retrain at a time: reviews while one runs are coalesced into
// one further retrain.
import type { LearningLoopState, RetrainResult } from '@shared/ipc'
import { LEARNING_LOOP, REVIEW_STRATEGY_DEFAULT } from '@shared/recipes'
import { isStoreError, StoreError, type Workspace, type WorkspaceSettings } from '../../core/store'
import type { Handlers } from '../handlers'
import { reviewedSplit, type RetrainJobs } from './retrain'
import { reviewStrategy } from './review-queue'
import type { ModelRuntime } from './runtime'

export type AutoImproveSettings = WorkspaceSettings['autoImprove']

/** Off, every LEARNING_LOOP.autoImproveEvery documents, counted from zero. */
export const AUTO_IMPROVE_OFF: AutoImproveSettings = { enabled: false, every: LEARNING_LOOP.autoImproveEvery, baseline: 0 }

/** What one automatic round did: a sentence for the window, or that the training slot was taken. */
export type AutoRoundResult = { outcome: string } | { busy: true }

export interface AutoImproveDeps {
  settings(): AutoImproveSettings
  saveSettings(s: AutoImproveSettings): void
  /** Documents reviewed now (done or in progress: what retraining learns from). */
  reviewedCount(): number
  /** One automatic round (retrain, decide, re-tag); { busy } when another job holds the training slot. */
  round(): Promise<AutoRoundResult>
  /** The state the window shows changed. */
  changed(): void
}

/**
 * When to retrain: after `every` documents reviewed since the baseline (the reviewed count when the
 * last automatic retrain started, or when the switch was turned on). A trigger while a round runs
 * or while another model job holds the slot is remembered as `queued` — one further round, never
 * several — and checked again when the round or the job ends.
 */
export class AutoImproveTrigger {
  running = false
  queued = false
  lastOutcome: string | null = null

  constructor(private readonly deps: AutoImproveDeps) {}

  reviewedSince(): number {
    return Math.max(0, this.deps.reviewedCount() - this.deps.settings().baseline)
  }

  /** Turns the switch on or off, or sets N; turning it on counts from the documents reviewed now. */
  configure(patch: { enabled?: boolean; every?: number }): void {
    const cur = this.deps.settings()
    const enabled = patch.enabled ?? cur.enabled
    const baseline = enabled && !cur.enabled ? this.deps.reviewedCount() : cur.baseline
    this.deps.saveSettings({ enabled, every: patch.every ?? cur.every, baseline })
    if (!enabled) this.queued = false
    this.check()
  }

  /** After a change to what is reviewed, or when a model job ended: start a round, queue one, or nothing. */
  check(): void {
    const s = this.deps.settings()
    if (!s.enabled) return
    const reviewed = this.deps.reviewedCount()
    if (reviewed < s.baseline) {
      // Documents were reopened as unreviewed: count the next N from here.
      this.deps.saveSettings({ ...s, baseline: reviewed })
      return
    }
    if (reviewed - s.baseline < s.every) return
    if (this.running) {
      if (!this.queued) {
        this.queued = true
        this.deps.changed()
      }
      return
    }
    this.running = true
    this.queued = false
    this.deps.saveSettings({ ...s, baseline: reviewed })
    this.deps.changed()
    let busy = false
    void this.deps
      .round()
      .then(
        (r) => {
          if ('busy' in r) {
            busy = true
            // Not started: these documents still count towards the round that will start when the slot frees.
            this.deps.saveSettings({ ...this.deps.settings(), baseline: s.baseline })
            this.queued = true
          } else this.lastOutcome = r.outcome
        },
        (e: unknown) => {
          this.lastOutcome = `Auto-improve stopped: ${e instanceof Error ? e.message : String(e)}`
        },
      )
      .finally(() => {
        this.running = false
        this.deps.changed()
        if (!busy) this.check()
      })
  }
}

export interface LearningLoop {
  handlers: Pick<Handlers, 'learning:get' | 'learning:set'>
  /** Call after a request that may change which documents are reviewed. */
  reviewChanged(): void
  /** The window should redraw the loop (a learning-curve point was added). */
  changed(): void
}

const pct = (x: number) => (100 * x).toFixed(1)

export function learningLoop(
  rt: ModelRuntime,
  jobs: { retrain: RetrainJobs; tag: Handlers['tag:run'] },
): LearningLoop {
  const { ctx, workspace } = rt
  let round = 0
  let jobId: string | null = null

  const settingsOf = (ws: Workspace): AutoImproveSettings => ({ ...AUTO_IMPROVE_OFF, ...(ws.setting('autoImprove') ?? {}) })

  const trigger = new AutoImproveTrigger({
    settings: () => settingsOf(workspace()),
    saveSettings: (s) => workspace().setSetting('autoImprove', s),
    reviewedCount: () => workspace().reviewedCount(),
    round: autoRound,
    changed: () => changed(),
  })

  /** Retrain the active model, keep the result when it is no worse on the held-out documents, re-tag. */
  async function autoRound(): Promise<AutoRoundResult> {
    if (rt.slotBusy('training')) return { busy: true }
    const ws = workspace()
    const base = ws.activeModel()
    if (!base || base.status !== 'ready') return { outcome: 'Auto-improve needs an active model: train or import one in Models.' }
    jobId = `auto-improve-${++round}`
    changed()
    let r: RetrainResult
    try {
      r = await jobs.retrain.start({ jobId, baseModelId: base.id }, 'auto')
    } catch (e) {
      if (isStoreError(e) && e.code === 'conflict') return { busy: true }
      if (isStoreError(e) && e.code === 'invalid_request') return { outcome: `Auto-improve did not retrain: ${e.message}` }
      throw e
    } finally {
      jobId = null
    }
    if (!r.candidate || !r.after) return { outcome: r.cancelled ? 'The automatic retrain was cancelled; the model stays as it was.' : 'The automatic retrain did not finish; the model stays as it was.' }
    const scores = `held-out F1 ${pct(r.before.f1)} → ${pct(r.after.f1)}`
    if (r.after.f1 < r.before.f1) {
      await jobs.retrain.handlers['retrain:decide']({ candidateId: r.candidate.id, keep: false })
      return { outcome: `Discarded the automatic retrain (${scores}, worse): ${base.name} stays active.` }
    }
    const kept = await jobs.retrain.handlers['retrain:decide']({ candidateId: r.candidate.id, keep: true })
    const name = kept.model?.name ?? r.candidate.name
    const unreviewed = ws.documentIdsWithStatus('unreviewed')
    if (unreviewed.length === 0) return { outcome: `Kept ${name} (${scores}).` }
    jobId = `auto-improve-${round}-tag`
    // The window learns of the new active model, and of the job to follow or cancel now.
    changed()
    try {
      const t = await jobs.tag({ jobId, documentIds: unreviewed, modelId: kept.model?.id })
      return { outcome: `Kept ${name} (${scores}); re-tagged ${t.documents} unreviewed document${t.documents === 1 ? '' : 's'}${t.cancelled ? ' (cancelled there)' : ''}.` }
    } catch (e) {
      if (isStoreError(e) && e.code === 'conflict') {
        return { outcome: `Kept ${name} (${scores}); tagging was busy, so the unreviewed documents keep their older suggestions (marked outdated).` }
      }
      throw e
    } finally {
      jobId = null
    }
  }

  function state(): LearningLoopState {
    const ws = workspace()
    const settings = settingsOf(ws)
    const reviewed = [...ws.documentIdsWithStatus('done'), ...ws.documentIdsWithStatus('in_progress')].map((id) => ({ id: String(id) }))
    return {
      strategy: reviewStrategy(ws),
      defaultStrategy: REVIEW_STRATEGY_DEFAULT,
      autoImprove: {
        enabled: settings.enabled,
        every: settings.every,
        reviewedSince: trigger.reviewedSince(),
        running: trigger.running,
        jobId,
        queued: trigger.queued,
        lastOutcome: trigger.lastOutcome,
      },
      heldOut: { documents: reviewedSplit(reviewed).heldOut.length, reviewed: reviewed.length, every: LEARNING_LOOP.heldOutEvery, min: LEARNING_LOOP.minHeldOut },
      curve: ws.learningCurve(),
    }
  }

  function changed(): void {
    try {
      ctx.emit('learning:changed', state())
    } catch {
      // No workspace open (the chooser is shown): nothing to tell.
    }
  }

  const safeCheck = () => {
    try {
      trigger.check()
    } catch (e) {
      // A closed or locked workspace: the next review change checks again.
      if (!(isStoreError(e) || e instanceof StoreError)) console.error('[auto-improve]', e)
    }
  }
  rt.onJobEnd(safeCheck)

  // The window's "k of N reviewed" follows the reviews while Auto-improve is on (one event per change of the count).
  let lastReviewed: number | null = null
  const reviewChanged = () => {
    safeCheck()
    try {
      const ws = workspace()
      if (!settingsOf(ws).enabled) return
      const n = ws.reviewedCount()
      if (n !== lastReviewed) {
        lastReviewed = n
        changed()
      }
    } catch {
      // No workspace open: nothing to tell.
    }
  }

  return {
    handlers: {
      async 'learning:get'() {
        return state()
      },
      async 'learning:set'(req) {
        const ws = workspace()
        if (req.strategy !== undefined) ws.setSetting('reviewStrategy', req.strategy)
        if (req.autoImprove) trigger.configure(req.autoImprove)
        return state()
      },
    },
    reviewChanged,
    changed,
  }
}
