// Page helpers for the e2e tests: read entities as a person sees them, select text with the mouse.
import type { Page } from 'playwright-core'
import { expect } from 'vitest'

export interface SeenEntity {
  key: string
  type: string
  origin: string
  text: string
}

/** Entities in document order, as drawn: one per data-id, text joined across its spans. */
export function seenEntities(page: Page): Promise<SeenEntity[]> {
  return page.evaluate(() => {
    const out: Array<{ key: string; type: string; origin: string; text: string }> = []
    const byKey = new Map<string, { text: string }>()
    for (const el of document.querySelectorAll<HTMLElement>('.doc-text .entity')) {
      const key = el.dataset['id'] ?? ''
      const seen = byKey.get(key)
      if (seen) seen.text += el.textContent ?? ''
      else {
        const item = { key, type: el.dataset['type'] ?? '', origin: el.dataset['origin'] ?? '', text: el.textContent ?? '' }
        byKey.set(key, item)
        out.push(item)
      }
    }
    return out
  })
}

export const describeEntities = (list: SeenEntity[]): string[] => list.map((e) => `${e.type}:${e.text}`)

/** Viewport points just inside the first and last character of the n-th occurrence of `phrase`. */
export async function phrasePoints(
  page: Page,
  phrase: string,
  occurrence = 0,
): Promise<{ x1: number; y1: number; x2: number; y2: number; cx: number; cy: number }> {
  return page.evaluate(
    ([phrase, occurrence]) => {
      const root = document.querySelector('.doc-text')!
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT)
      const nodes: Array<{ node: Text; start: number }> = []
      let text = ''
      while (walker.nextNode()) {
        const node = walker.currentNode as Text
        nodes.push({ node, start: text.length })
        text += node.data
      }
      let at = -1
      for (let i = 0; i <= occurrence; i++) {
        at = text.indexOf(phrase, at + 1)
        if (at < 0) throw new Error(`"${phrase}" (occurrence ${occurrence}) is not in the document text`)
      }
      const locate = (offset: number, isEnd: boolean) => {
        for (const n of nodes) {
          const len = n.node.data.length
          if (offset >= n.start && (isEnd ? offset <= n.start + len : offset < n.start + len)) return { node: n.node, off: offset - n.start }
        }
        throw new Error(`offset ${offset} not found`)
      }
      const first = document.createRange()
      const a = locate(at, false)
      first.setStart(a.node, a.off)
      first.setEnd(a.node, a.off + 1)
      const last = document.createRange()
      const b = locate(at + phrase.length - 1, false)
      last.setStart(b.node, b.off)
      last.setEnd(b.node, b.off + 1)
      // Bring the phrase to the middle of the text's scroll area (the paragraph may be huge).
      const scroller = root.closest('.doc-scroll') as HTMLElement | null
      if (scroller) {
        const box = scroller.getBoundingClientRect()
        const r = first.getBoundingClientRect()
        if (r.top < box.top + 40 || r.bottom > box.bottom - 40) scroller.scrollTop += r.top - (box.top + box.height / 2)
      }
      const r1 = first.getBoundingClientRect()
      const r2 = last.getBoundingClientRect()
      // Centre of the phrase's first line box (a phrase may wrap onto the next line).
      const whole = document.createRange()
      whole.setStart(a.node, a.off)
      whole.setEnd(b.node, b.off + 1)
      const line = whole.getClientRects()[0] ?? r1
      return {
        x1: r1.left + 1,
        y1: r1.top + r1.height / 2,
        x2: r2.right - 1,
        y2: r2.top + r2.height / 2,
        cx: line.left + line.width / 2,
        cy: line.top + line.height / 2,
      }
    },
    [phrase, occurrence] as const,
  )
}

/** Drags the mouse across the phrase, as a person selecting it. */
export async function selectByMouse(page: Page, phrase: string, occurrence = 0): Promise<void> {
  const p = await phrasePoints(page, phrase, occurrence)
  await page.mouse.move(p.x1, p.y1)
  await page.mouse.down()
  await page.mouse.move((p.x1 + p.x2) / 2, (p.y1 + p.y2) / 2, { steps: 3 })
  await page.mouse.move(p.x2, p.y2, { steps: 3 })
  await page.mouse.up()
}

/** Clicks in the middle of the phrase (e.g. on an entity). */
export async function clickPhrase(page: Page, phrase: string, occurrence = 0): Promise<void> {
  const p = await phrasePoints(page, phrase, occurrence)
  await page.mouse.click(p.cx, p.cy)
}

/** Clicks just inside the first character of the phrase: the caret lands before it. */
export async function caretBefore(page: Page, phrase: string, occurrence = 0): Promise<void> {
  const p = await phrasePoints(page, phrase, occurrence)
  await page.mouse.click(p.x1, p.y1)
}

/** Waits until every edit reached the workspace. */
export async function waitSaved(page: Page): Promise<void> {
  await page.waitForFunction(() => document.querySelector('[data-testid="save-state"]')?.getAttribute('data-state') === 'saved')
  // A save can be scheduled right after the state flips; let the queue settle.
  await page.waitForTimeout(50)
  await page.waitForFunction(() => document.querySelector('[data-testid="save-state"]')?.getAttribute('data-state') === 'saved')
}

export async function expectToast(page: Page, pattern: RegExp, timeout = 5000): Promise<string> {
  const toast = page.locator('.toast', { hasText: pattern }).first()
  await toast.waitFor({ state: 'visible', timeout })
  const text = (await toast.textContent()) ?? ''
  expect(text).toMatch(pattern)
  return text
}

export async function openFromList(page: Page, externalId: string): Promise<void> {
  await page.locator(`.doc-row[data-external-id="${externalId}"]`).click()
  await page.locator(`[data-testid="doc-external-id"]`, { hasText: externalId }).waitFor()
  await page.waitForFunction(() => !!document.querySelector('.doc-text'))
}

/** Imports `content` through "Paste text…" as the file `name` in `format`; returns when the dialog has sent it. */
export async function pasteImport(page: Page, name: string, format: string, content: string): Promise<void> {
  await page.getByRole('button', { name: 'Paste text…' }).click()
  const paste = page.getByTestId('paste-dialog')
  await paste.getByLabel(/^Name/).fill(name)
  await paste.getByLabel('Format').selectOption(format)
  await paste.getByLabel('Text', { exact: true }).fill(content)
  await paste.getByRole('button', { name: 'Import' }).click()
}
