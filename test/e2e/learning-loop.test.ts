// The correction loop through the real UI and handler table (issue 30, item 4): the Auto-improve
// switch (off by default, N persisted, a round fires after N documents reviewed in the window),
// the review queue's strategy (chosen, persisted, followed), suggestions of another model marked
// outdated, and the learning curve on the Retrain view. No model is trained here: the registry
// rows and taggings are written into the workspace the way the model jobs write them, so the test
// exercises the window and main's logic, not the model host (the retrain itself is covered by
// test/integration/models.test.ts).
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { REVIEW_STRATEGY_DEFAULT } from '@shared/recipes'
import { SERIES } from '../../src/renderer/src/models/palette'
import { startHarness, type Harness } from './harness'
import { inventedCorpus } from './corpus'
import { expectToast, openFromList } from './ui'
import { expectAccessible } from './axe'

let h: Harness

const FIRST = 98000001
const COUNT = 12
const WAIT = { timeout: 30_000 }

beforeAll(async () => {
  h = await startHarness()
})

afterAll(async () => {
  await h?.close()
})

async function gotoView(page: Page, view: 'documents' | 'retrain'): Promise<void> {
  await page.locator(`.view-tab[data-view="${view}"]`).click()
  if (view !== 'documents') await page.getByTestId(`${view}-view`).waitFor(WAIT)
}

async function dismissToasts(page: Page): Promise<void> {
  await page.locator('.toast-close').evaluateAll((els) => els.forEach((e) => (e as HTMLElement).click()))
}

const docIds = () => h.workspace().listDocuments({ limit: 100 }).documents.map((d) => d.id)

describe('The correction loop in the window', () => {
  it('imports untagged abstracts', async () => {
    const file = join(h.dir, 'loop.pubtator')
    writeFileSync(file, inventedCorpus({ firstId: FIRST, count: COUNT, seed: 5, annotated: false }))
    h.queueOpenFiles([file])
    await h.page.getByRole('button', { name: 'Import…' }).click()
    await expectToast(h.page, new RegExp(`Imported ${COUNT} documents`), 30_000)
  }, 60_000)

  it('Auto-improve: off by default, N persisted per workspace, a round after N documents reviewed', async () => {
    const { page } = h
    await gotoView(page, 'retrain')
    const card = page.getByTestId('auto-improve')
    await card.waitFor(WAIT)
    const toggle = page.getByTestId('auto-improve-switch')
    expect(await toggle.isChecked()).toBe(false)
    expect(await card.getAttribute('data-enabled')).toBe('false')
    expect(h.workspace().setting('autoImprove')).toBeNull()

    await page.getByRole('switch', { name: /On|Off/ }).click()
    await page.waitForFunction(() => document.querySelector('[data-testid="auto-improve"]')?.getAttribute('data-enabled') === 'true', undefined, WAIT)
    const every = page.getByLabel('Retrain every N reviewed documents')
    await every.fill('2')
    await every.press('Enter')
    await expect.poll(() => h.workspace().setting('autoImprove')?.every, WAIT).toBe(2)
    expect(h.workspace().setting('autoImprove')).toEqual({ enabled: true, every: 2, baseline: 0 })
    await expect.poll(() => page.getByTestId('auto-improve-status').textContent(), WAIT).toMatch(/0 documents reviewed since the last automatic retrain; the next starts at 2/)
    await expectAccessible(page, 'retrain view, Auto-improve on')

    // Review two documents in the window: the second one starts a round. There is no model yet, so
    // the round says so instead of retraining — and the count starts again.
    await gotoView(page, 'documents')
    for (const ext of [FIRST, FIRST + 1]) {
      await page.getByTestId('search').fill(String(ext))
      await openFromList(page, String(ext))
      await page.getByTestId('mark-done').click()
      await expectToast(page, new RegExp(`Marked ${ext} as done`), 10_000)
    }
    await page.getByTestId('search').fill('')
    await gotoView(page, 'retrain')
    await expect.poll(() => page.getByTestId('auto-improve-outcome').textContent(), WAIT).toMatch(/needs an active model/)
    expect(h.workspace().setting('autoImprove')).toEqual({ enabled: true, every: 2, baseline: 2 })
    await dismissToasts(page)
    await card.scrollIntoViewIfNeeded()
    await h.screenshot('30-auto-improve')
    await expectAccessible(page, 'retrain view after an automatic round')
  }, 90_000)

  it('the review queue follows the chosen strategy, which is kept per workspace', async () => {
    const { page } = h
    const ws = h.workspace()
    // Two registry models (as training writes them); the newer is active.
    const folder = (name: string) => {
      const p = join(ws.modelsDir, name)
      mkdirSync(p, { recursive: true })
      return p
    }
    const v1 = ws.createModel({ name: 'loop v1', kind: 'teacher', status: 'ready', path: folder('loop-v1') })
    const v2 = ws.createModel({ name: 'loop v2', kind: 'teacher', status: 'ready', path: folder('loop-v2'), parentId: v1.id })
    ws.setActiveModel(v2.id)
    // A tagging by v1 of the documents not done, each with one suggestion; every score puts another document first.
    const open = docIds().slice(2, 8)
    const scores = open.map((_, i) => ({ lc: [0.2, 0.6, 0.3, 0.5, 0.1, 0.4][i]!, margin: [0.7, 0.1, 0.2, 0.3, 0.9, 0.5][i]!, entropy: [0.1, 0.2, 0.9, 0.3, 0.4, 0.5][i]! }))
    ws.replaceSuggestions(
      open.map((documentId, i) => {
        const text = ws.getDocument(documentId).text
        const end = text.indexOf(' ')
        return { documentId, suggestions: [{ start: 0, end, type: 'Disease', confidence: 0.7 }], uncertainty: scores[i]!.lc, margin: scores[i]!.margin, entropy: scores[i]!.entropy }
      }),
      { modelId: v1.id, by: 'model:loop v1' },
    )
    const byScore = (k: 'lc' | 'margin') => open.map((id, i) => ({ id, s: scores[i]![k] })).sort((a, b) => b.s - a.s).map((x) => x.id)
    // The window reads the registry afresh (as after the model jobs that wrote it).
    await page.reload()
    await page.getByTestId('mode-queue').click()
    const select = page.getByTestId('queue-strategy')
    await page.waitForFunction((s) => document.querySelector('[data-testid="queue-summary"]')?.getAttribute('data-strategy') === s, REVIEW_STRATEGY_DEFAULT, WAIT)
    expect(await select.inputValue()).toBe(REVIEW_STRATEGY_DEFAULT)
    const shown = () => page.locator('.queue-row').evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-doc-id'))))
    await expect.poll(shown, WAIT).toEqual(byScore('lc'))

    await select.selectOption('margin')
    await page.waitForFunction(() => document.querySelector('[data-testid="queue-summary"]')?.getAttribute('data-strategy') === 'margin', undefined, WAIT)
    await expect.poll(shown, WAIT).toEqual(byScore('margin'))
    expect(ws.setting('reviewStrategy')).toBe('margin')
    expect(await page.getByTestId('queue-summary').textContent()).toMatch(/smallest gap between the two best labels first/)
    // Every row's suggestions came from v1, not the active v2.
    await expect.poll(() => page.getByTestId('queue-outdated').count(), WAIT).toBe(open.length)
    // Kept across a restart of the window.
    await page.reload()
    await page.getByTestId('mode-queue').click()
    await page.waitForFunction(() => document.querySelector('[data-testid="queue-summary"]')?.getAttribute('data-strategy') === 'margin', undefined, WAIT)
    await expect.poll(shown, WAIT).toEqual(byScore('margin'))
    await dismissToasts(page)
    await h.screenshot('31-queue-strategy')
    await expectAccessible(page, 'review queue with a chosen strategy')

    // Open the first: its suggestions came from v1 while v2 is active — marked outdated, with a refresh.
    await page.locator('.queue-row').first().click()
    const bar = page.getByTestId('suggestion-bar')
    await bar.waitFor(WAIT)
    await page.getByTestId('suggestions-outdated').waitFor(WAIT)
    expect(await bar.getAttribute('data-version')).toBe('outdated')
    expect(await page.getByTestId('suggestions-outdated').textContent()).toMatch(/came from loop v1; the active model is loop v2/)
    expect(await page.getByTestId('refresh-suggestions').isEnabled()).toBe(true)
    expect(await page.getByTestId('document-pane').getAttribute('data-suggestions-version')).toBe('outdated')
    await h.screenshot('32-outdated-suggestions')
    await expectAccessible(page, 'document with outdated suggestions')
    await page.getByTestId('mode-all').click()
  }, 90_000)

  it('draws the learning curve on the Retrain view and says how many documents are held out', async () => {
    const { page } = h
    const ws = h.workspace()
    const active = ws.activeModel()!
    // Three finished retrains as retrain:start records them; the second was Auto-improve's.
    for (const [reviewed, before, after, trigger] of [
      [6, 0.31, 0.42, 'manual'],
      [12, 0.42, 0.55, 'auto'],
      [20, 0.55, 0.61, 'manual'],
    ] as const) {
      ws.addLearningPoint({ modelId: active.id, baseModelId: null, trigger, reviewed, heldOut: 3, f1Before: before, f1After: after })
    }
    await gotoView(page, 'retrain')
    const card = page.getByTestId('learning-curve')
    await page.waitForFunction(() => document.querySelector('[data-testid="learning-curve"]')?.getAttribute('data-points') === '3', undefined, WAIT)
    expect(await page.locator('[data-testid="learning-table"] tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-reviewed')))).toEqual([
      '6',
      '12',
      '20',
    ])
    expect(await page.getByTestId('learning-table').textContent()).toMatch(/Auto/)
    // Two documents are reviewed (marked done above); one must stay to train on, so one is held out.
    const note = (await page.getByTestId('held-out-note').textContent()) ?? ''
    const m = /(\d+) reviewed documents? of (\d+) (?:is|are) held out/.exec(note)
    expect(m, note).not.toBeNull()
    expect(Number(m![2])).toBe(2)
    expect(Number(m![1])).toBe(1)
    expect(note).toMatch(/never trains on them/)
    // The canvas really holds a line in the series colour, not a blank chart.
    const drawn = await page.evaluate((colour) => {
      const canvas = document.querySelector<HTMLCanvasElement>('[data-testid="learning-chart"] canvas')!
      const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height)
      const [r, g, b] = [1, 3, 5].map((i) => parseInt(colour.slice(i, i + 2), 16))
      let n = 0
      for (let i = 0; i < data.length; i += 4) if (Math.abs(data[i]! - r!) < 12 && Math.abs(data[i + 1]! - g!) < 12 && Math.abs(data[i + 2]! - b!) < 12) n++
      return n
    }, SERIES[0]!)
    expect(drawn).toBeGreaterThan(100)
    await dismissToasts(page)
    await card.scrollIntoViewIfNeeded()
    await h.screenshot('33-learning-curve')
    await expectAccessible(page, 'retrain view with a learning curve')
    expect(h.errors).toEqual([])
  }, 60_000)
})
