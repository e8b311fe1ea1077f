// Auto-improve's trigger: when a background retrain starts, and how triggers while one runs are coalesced.
import { describe, expect, it } from 'vitest'
import { AUTO_IMPROVE_OFF, AutoImproveTrigger, type AutoImproveSettings, type AutoRoundResult } from '../../../src/main/models/learning'

/** A trigger over a fake workspace: `reviewed` is set by the test, rounds finish when the test says. */
function fixture(initial: Partial<AutoImproveSettings> = {}) {
  let settings: AutoImproveSettings = { ...AUTO_IMPROVE_OFF, ...initial }
  const rounds: Array<(r: AutoRoundResult) => void> = []
  const counter = { reviewed: 0 }
  const f = {
    get reviewed(): number {
      return counter.reviewed
    },
    set reviewed(n: number) {
      counter.reviewed = n
    },
    get settings() {
      return settings
    },
    rounds,
    trigger: new AutoImproveTrigger({
      settings: () => settings,
      saveSettings: (s) => (settings = s),
      reviewedCount: () => counter.reviewed,
      round: () => new Promise<AutoRoundResult>((resolve) => rounds.push(resolve)),
      changed: () => undefined,
    }),
    /** Reviews `n` more documents, checking after each (as the handler table does after each request). */
    review(n: number) {
      for (let i = 0; i < n; i++) {
        counter.reviewed++
        f.trigger.check()
      }
    },
    /** Ends the oldest running round and lets its continuation run. */
    async finish(r: AutoRoundResult = { outcome: 'kept' }) {
      rounds.shift()!(r)
      await new Promise((res) => setTimeout(res, 0))
    },
  }
  return f
}

describe('AutoImproveTrigger', () => {
  it('is off by default and never starts a round while off', () => {
    const f = fixture()
    expect(f.settings.enabled).toBe(false)
    f.review(50)
    expect(f.rounds).toHaveLength(0)
  })

  it('counts from the documents reviewed when it is turned on, and starts a round after every N', async () => {
    const f = fixture()
    f.reviewed = 30
    f.trigger.configure({ enabled: true, every: 4 })
    expect(f.settings).toEqual({ enabled: true, every: 4, baseline: 30 })
    f.review(3)
    expect(f.rounds).toHaveLength(0)
    expect(f.trigger.reviewedSince()).toBe(3)
    f.review(1)
    expect(f.rounds).toHaveLength(1)
    expect(f.trigger.running).toBe(true)
    expect(f.settings.baseline).toBe(34)
    expect(f.trigger.reviewedSince()).toBe(0)
    await f.finish({ outcome: 'Kept model 2' })
    expect(f.trigger.running).toBe(false)
    expect(f.trigger.lastOutcome).toBe('Kept model 2')
    f.review(4)
    expect(f.rounds).toHaveLength(1)
  })

  it('coalesces triggers while a round runs into ONE further round on everything reviewed meanwhile', async () => {
    const f = fixture()
    f.trigger.configure({ enabled: true, every: 2 })
    f.review(2)
    expect(f.rounds).toHaveLength(1)
    f.review(7) // three more triggers' worth
    expect(f.rounds).toHaveLength(1)
    expect(f.trigger.queued).toBe(true)
    await f.finish()
    // One further round, counted from all 9 reviewed.
    expect(f.rounds).toHaveLength(1)
    expect(f.trigger.queued).toBe(false)
    expect(f.settings.baseline).toBe(9)
    await f.finish()
    expect(f.rounds).toHaveLength(0)
    expect(f.trigger.running).toBe(false)
  })

  it('waits for a busy training slot without losing the documents counted, then starts on the next check', async () => {
    const f = fixture()
    f.trigger.configure({ enabled: true, every: 3 })
    f.review(3)
    await f.finish({ busy: true })
    expect(f.trigger.queued).toBe(true)
    expect(f.trigger.running).toBe(false)
    expect(f.settings.baseline).toBe(0)
    expect(f.rounds).toHaveLength(0)
    // The other job ended: the runtime's job-end listener checks again.
    f.trigger.check()
    expect(f.rounds).toHaveLength(1)
    expect(f.settings.baseline).toBe(3)
  })

  it('turned off, it starts nothing more and forgets a queued round', async () => {
    const f = fixture()
    f.trigger.configure({ enabled: true, every: 1 })
    f.review(1)
    f.review(1)
    expect(f.trigger.queued).toBe(true)
    f.trigger.configure({ enabled: false })
    expect(f.trigger.queued).toBe(false)
    await f.finish()
    expect(f.rounds).toHaveLength(0)
  })

  it('changing N keeps the count; documents reopened lower the baseline', () => {
    const f = fixture()
    f.trigger.configure({ enabled: true, every: 10 })
    f.review(6)
    expect(f.trigger.reviewedSince()).toBe(6)
    f.trigger.configure({ every: 5 })
    // 6 ≥ 5: the new N applies at once, to the documents counted under the old one.
    expect(f.rounds).toHaveLength(1)
    expect(f.settings).toEqual({ enabled: true, every: 5, baseline: 6 })
    const g = fixture({ enabled: true, every: 5, baseline: 20 })
    g.reviewed = 12
    g.trigger.check()
    expect(g.settings.baseline).toBe(12)
    expect(g.rounds).toHaveLength(0)
  })

  it('records a failed round as its outcome, and does not retry it until N more are reviewed', async () => {
    let settings: AutoImproveSettings = { enabled: true, every: 5, baseline: 0 }
    let reviewed = 5
    let attempts = 0
    const t = new AutoImproveTrigger({
      settings: () => settings,
      saveSettings: (s) => (settings = s),
      reviewedCount: () => reviewed,
      round: () => {
        attempts++
        return Promise.reject(new Error('host crashed'))
      },
      changed: () => undefined,
    })
    t.check()
    await new Promise((res) => setTimeout(res, 0))
    expect(t.lastOutcome).toMatch(/host crashed/)
    expect(t.running).toBe(false)
    expect(attempts).toBe(1)
    reviewed = 10
    t.check()
    await new Promise((res) => setTimeout(res, 0))
    expect(attempts).toBe(2)
  })
})
