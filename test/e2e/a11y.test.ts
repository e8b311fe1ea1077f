// Accessibility through the real UI: a review done with the keyboard alone (not one mouse event),
// what a screen reader is told about entities and suggestions, entity types in forced colours
// (Windows high contrast), and every control reachable at 200 % zoom.
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { FIXTURES, startHarness, type Harness } from './harness'
import { describeEntities, expectToast, seenEntities, waitSaved } from './ui'
import { expectAccessible } from './axe'

const GOOD = join(FIXTURES, 'abstracts.pubtator')

let h: Harness

beforeAll(async () => {
  h = await startHarness()
  // Every pointer event the page sees. A button pressed with Enter or Space fires "click" with
  // detail 0; a mouse click has detail ≥ 1 and is preceded by pointerdown / mousedown.
  await h.page.evaluate(() => {
    const seen: string[] = []
    ;(window as unknown as { __mouseEvents: string[] }).__mouseEvents = seen
    for (const type of ['pointerdown', 'mousedown', 'mouseup', 'dblclick', 'contextmenu', 'wheel']) {
      window.addEventListener(type, (e) => seen.push(`${type} on ${(e.target as Element).tagName}`), true)
    }
    window.addEventListener('click', (e) => e.detail > 0 && seen.push(`click on ${(e.target as Element).tagName}`), true)
  })
})

afterAll(async () => {
  await h?.close()
})

const mouseEvents = (page: Page) => page.evaluate(() => (window as unknown as { __mouseEvents: string[] }).__mouseEvents)
const focusedName = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null
    return el ? `${el.tagName}:${el.getAttribute('aria-label') ?? el.textContent?.trim() ?? ''}` : ''
  })
const inText = (page: Page) => page.evaluate(() => !!document.activeElement?.closest('.doc-text'))
const cursorLine = (page: Page) => page.getByTestId('cursor-entity').textContent()

/** Presses Tab until the focused element's name matches (as a person tabbing through). */
async function tabTo(page: Page, name: RegExp, max = 40): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab')
    if (name.test(await focusedName(page))) return
  }
  throw new Error(`${max} presses of Tab never reached ${name}; last: ${await focusedName(page)}`)
}

async function documentId(externalId: string): Promise<number> {
  const r = await h.invoke('documents:list', { query: externalId })
  if (!r.ok || r.value.documents.length !== 1) throw new Error(`document ${externalId} not found`)
  return r.value.documents[0]!.id
}

/** Writes a model suggestion for `phrase` the way the model host does (state suggested, origin model). */
async function suggest(docId: number, phrase: string, type: string, confidence: number): Promise<void> {
  const text = h.workspace().getDocument(docId).text
  const start = text.indexOf(phrase)
  expect(start).toBeGreaterThanOrEqual(0)
  const r = await h.invoke('annotations:create', { documentId: docId, start, end: start + phrase.length, type, state: 'suggested', origin: 'model', confidence })
  expect(r.ok).toBe(true)
}

describe('Accessibility (real handlers, real workspace)', () => {
  it('reviews with the keyboard alone: import, open, add / retype / delete, mark done, next, accept / reject', async () => {
    const { page } = h
    // Import: Tab to the header's "Import…" and press Enter.
    h.queueOpenFiles([GOOD])
    await tabTo(page, /^BUTTON:Import…$/)
    await page.keyboard.press('Enter')
    await expectToast(page, /Imported 3 documents from abstracts\.pubtator/)
    // Suggestions in the second document, as a tagging run leaves them.
    const second = await documentId('90000002')
    await suggest(second, 'children', 'Species', 0.62)
    await suggest(second, 'survivors', 'Species', 0.58)
    await suggest(second, 'invented cohort', 'Disease', 0.51)
    // Tagging leaves a document unreviewed; writing annotations through the channel started its review.
    expect((await h.invoke('documents:setStatus', { id: second, status: 'unreviewed' })).ok).toBe(true)

    // Open: "/" to search, type the PMID, ↓ into the list, Enter opens it with the caret in the text.
    await page.keyboard.press('/')
    await page.keyboard.type('90000001')
    await expect.poll(() => page.locator('.doc-row').count()).toBe(1)
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('Enter')
    await page.locator('[data-testid="doc-external-id"]', { hasText: '90000001' }).waitFor()
    await expect.poll(() => inText(page)).toBe(true)
    // Clear the search again (Shift+Tab out of the text, "/", Esc) so that "next" sees every
    // document; ↓ Enter comes back to the open one, caret in the text.
    await page.keyboard.press('Shift+Tab')
    await page.keyboard.press('/')
    await page.keyboard.press('Escape')
    await expect.poll(() => page.locator('.doc-row').count()).toBe(3)
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('Enter')
    await expect.poll(() => inText(page)).toBe(true)

    // The caret in an entity says what it is: type (and its key), text, origin.
    await page.keyboard.press('Control+Home')
    await expect.poll(() => cursorLine(page)).toMatch(/^Entity: Disease key 1 Hepatic fibrosis · Imported annotation \(gold\)\. Press Enter for details/)

    // Add: select "after" with Ctrl+Shift+→ and press 2 (Chemical); retype with 1; delete.
    await page.keyboard.press('Control+ArrowRight')
    await page.keyboard.press('Control+ArrowRight')
    await page.keyboard.press('ArrowRight')
    await page.keyboard.press('Control+Shift+ArrowRight')
    await page.keyboard.press('2')
    await expect.poll(async () => describeEntities(await seenEntities(page))).toContain('Chemical:after')
    await expect.poll(() => cursorLine(page)).toMatch(/^Entity: Chemical key 2 after · Added by a person/)
    await page.keyboard.press('1')
    await expect.poll(async () => describeEntities(await seenEntities(page))).toContain('Disease:after')
    await expect.poll(() => cursorLine(page)).toMatch(/^Entity: Disease key 1 after · Added by a person/)
    await waitSaved(page)
    const first = await documentId('90000001')
    const stored = () => {
      const d = h.workspace().getDocument(first)
      return d.annotations.map((a) => `${a.type}:${d.text.slice(a.start, a.end)}`)
    }
    expect(stored()).toContain('Disease:after')
    await page.keyboard.press('Delete')
    await waitSaved(page)
    expect(stored()).not.toContain('Disease:after')
    expect(stored()).toHaveLength(12)

    // Mark done, then on to the next unreviewed document.
    await page.keyboard.press('Control+Enter')
    await page.locator('.doc-toolbar .pill', { hasText: 'Done' }).waitFor()
    await page.keyboard.press('Alt+ArrowDown')
    await page.locator('[data-testid="doc-external-id"]', { hasText: '90000002' }).waitFor()
    await expect.poll(() => inText(page)).toBe(true)

    // Suggestions: n goes to one and says so (type, text, model confidence); a accepts, r rejects.
    await page.getByTestId('suggestion-bar').waitFor()
    await page.keyboard.press('n')
    await expect.poll(() => cursorLine(page)).toMatch(/^Suggestion: Species key 3 children · Model suggestion, not yet accepted · model 0\.62\. Press a to accept, r to reject/)
    await page.keyboard.press('a')
    await waitSaved(page)
    // Accepting moves the caret on to the next suggestion.
    await expect.poll(() => cursorLine(page)).toMatch(/^Suggestion: Species key 3 survivors · .* model 0\.58/)
    await page.keyboard.press('r')
    await expectToast(page, /Rejected/)
    await waitSaved(page)
    const d2 = h.workspace().getDocument(second)
    const byText = (t: string) => d2.annotations.find((a) => d2.text.slice(a.start, a.end) === t)
    expect(byText('children')).toMatchObject({ type: 'Species', state: 'accepted' })
    expect(byText('survivors')).toBeUndefined()
    expect(byText('invented cohort')).toMatchObject({ state: 'suggested' })
    await expectAccessible(page, 'caret on a suggestion')

    // The suggestion's popover (Enter) has labelled review actions and takes the focus.
    await page.keyboard.press('n')
    await expect.poll(() => cursorLine(page)).toMatch(/invented cohort/)
    await page.keyboard.press('Enter')
    const popover = page.getByTestId('entity-popover')
    await popover.waitFor()
    await expect.poll(() => focusedName(page)).toMatch(/^BUTTON:✓ Accept/)
    expect(await popover.getByRole('button', { name: /Accept/ }).count()).toBe(1)
    expect(await popover.getByRole('button', { name: /Reject/ }).count()).toBe(1)
    await page.keyboard.press('Escape')
    await expect.poll(() => inText(page)).toBe(true)

    // Done and next in one step.
    await page.keyboard.press('Control+Shift+Enter')
    await page.locator('[data-testid="doc-external-id"]', { hasText: '90000003' }).waitFor()
    const listed = await h.invoke('documents:list', { status: 'done' })
    expect(listed.ok && listed.value.documents.map((d) => d.externalId).sort()).toEqual(['90000001', '90000002'])

    expect(await mouseEvents(page)).toEqual([])
    expect(h.errors).toEqual([])
  })

  it('keeps entity types apart in forced colours (high contrast): a line pattern per type, also in the legend', async () => {
    const { page } = h
    await page.getByTestId('search').fill('90000002')
    await page.locator('.doc-row[data-external-id="90000002"]').click()
    await page.locator('[data-testid="doc-external-id"]', { hasText: '90000002' }).waitFor()
    await page.getByTestId('search').fill('')
    await page.emulateMedia({ forcedColors: 'active' })
    try {
      const look = await page.evaluate(() => {
        const line = (el: Element | null, pseudo?: string) => {
          const cs = getComputedStyle(el!, pseudo)
          return `${cs.textDecorationLine} ${cs.textDecorationStyle}`
        }
        const tok = (type: string) => document.querySelector(`.doc-text .entity[data-type="${type}"] .tok`)
        const swatch = (type: string) => document.querySelector(`.legend-item[data-type="${type}"] .swatch`)
        const suggested = document.querySelector<HTMLElement>('.doc-text .entity.is-suggested')!
        return {
          forced: matchMedia('(forced-colors: active)').matches,
          text: ['Disease', 'Chemical', 'Species'].map((t) => line(tok(t))),
          legend: ['Disease', 'Chemical', 'Species'].map((t) => line(swatch(t), '::before')),
          suggestion: getComputedStyle(suggested).outlineStyle,
        }
      })
      expect(look.forced).toBe(true)
      // Disease, Chemical and Species hold palette slots 0, 1 and 3 (palette.ts).
      expect(look.text).toEqual(['underline solid', 'underline dashed', 'underline double'])
      // The legend shows each type's pattern beside its name.
      expect(look.legend).toEqual(look.text)
      expect(look.suggestion).toBe('dashed')
      await page.locator('.doc-text').focus()
      await page.keyboard.press('Control+Home')
      await page.keyboard.press('n')
      await h.screenshot('21-forced-colours')
      await expectAccessible(page, 'forced colours')
    } finally {
      await page.emulateMedia({ forcedColors: 'none' })
    }
  })

  it("shows every header control inside the window at the window's smallest size, without scrolling", async () => {
    const { page } = h
    const size = page.viewportSize()!
    try {
      for (const width of [900, 1024, 1240]) {
        await page.setViewportSize({ width, height: 600 })
        if (width === 900) await h.screenshot('64-header-900px')
        const outside = await page.evaluate(() =>
          [...document.querySelectorAll<HTMLElement>('.app-header button, .app-header [role="tab"]')]
            .filter((el) => el.getClientRects().length > 0)
            .filter((el) => el.getBoundingClientRect().right > innerWidth || el.getBoundingClientRect().left < 0)
            .map((el) => el.textContent?.trim() ?? ''),
        )
        expect(outside, `${width} px`).toEqual([])
        // Nothing widens the page either (the elements past the edge name the culprit).
        const page_ = await page.evaluate(() => ({
          scrollWidth: document.documentElement.scrollWidth,
          past: [...document.querySelectorAll<HTMLElement>('body *')]
            .filter((el) => el.getBoundingClientRect().right > innerWidth + 0.5)
            .map((el) => `${el.tagName.toLowerCase()}.${el.className}`)
            .slice(0, 8),
        }))
        expect(page_.scrollWidth, `${width} px: ${page_.past.join(', ')}`).toBeLessThanOrEqual(width)
      }
    } finally {
      await page.setViewportSize(size)
    }
  })

  it('keeps every control reachable at 200 % zoom (half the CSS pixels)', async () => {
    const { page } = h
    const size = page.viewportSize()!
    await page.setViewportSize({ width: Math.round(size.width / 2), height: Math.round(size.height / 2) })
    // Messages come and go; the controls under them are what must be reachable.
    await page.locator('.toast-close').evaluateAll((els) => els.forEach((e) => (e as HTMLElement).click()))
    try {
      // Every enabled control of the view: scrolled into view, it is the element at its own centre.
      const unreachable = () =>
        page.evaluate(() => {
          const out: string[] = []
          const controls = document.querySelectorAll<HTMLElement>('button, input, select, textarea, a[href], [tabindex="0"]')
          for (const el of controls) {
            if (el.closest('[hidden], [aria-hidden="true"]') || el.getClientRects().length === 0) continue
            el.scrollIntoView({ block: 'center', inline: 'center' })
            const r = el.getBoundingClientRect()
            const x = Math.min(Math.max(r.left + r.width / 2, 0), innerWidth - 1)
            const y = Math.min(Math.max(r.top + r.height / 2, 0), innerHeight - 1)
            const hit = document.elementFromPoint(x, y)
            const inside = r.right > 0 && r.bottom > 0 && r.left < innerWidth && r.top < innerHeight
            if (!inside || !hit || !(el === hit || el.contains(hit) || hit.contains(el) || (el as HTMLInputElement).labels?.[0]?.contains(hit))) {
              out.push(`${el.tagName.toLowerCase()} "${el.getAttribute('aria-label') ?? el.textContent?.trim().slice(0, 30) ?? ''}" (hit ${hit?.tagName.toLowerCase()}.${hit?.className})`)
            }
          }
          return out
        })
      await h.screenshot('22-zoom-200-documents')
      expect(await unreachable(), 'documents view').toEqual([])
      for (const view of ['models', 'retrain', 'compression'] as const) {
        await page.locator(`.view-tab[data-view="${view}"]`).click()
        await page.getByTestId(`${view}-view`).waitFor()
        expect(await unreachable(), `${view} view`).toEqual([])
      }
      await page.locator('.view-tab[data-view="models"]').click()
      await page.locator('.view-host').evaluate((e) => (e.scrollTop = 0))
      await h.screenshot('23-zoom-200-models')
      await page.locator('.view-tab[data-view="documents"]').click()
    } finally {
      await page.setViewportSize(size)
    }
  })
})
