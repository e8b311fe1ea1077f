// axe-core (the maintained WCAG rules engine) run inside the page the e2e tests drive.
// Any violation fails the test, whatever its impact: the moderate ones (content outside every
// landmark, a page without a level-one heading) were once only printed, and went unfixed in 44
// of the states the tests check.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'
import type { AxeResults, Result } from 'axe-core'
import { expect } from 'vitest'

const AXE_SOURCE = readFileSync(createRequire(__filename).resolve('axe-core/axe.min.js'), 'utf8')

/** WCAG 2.1 A and AA, plus axe's best practices (landmarks, headings, nested controls). */
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']

function summarise(v: Result): string {
  const where = v.nodes
    .slice(0, 5)
    .map((n) => `    ${n.target.join(' ')}: ${n.failureSummary?.replace(/\s+/g, ' ').trim() ?? ''}`)
    .join('\n')
  const more = v.nodes.length > 5 ? `\n    … and ${v.nodes.length - 5} more` : ''
  return `  [${v.impact}] ${v.id}: ${v.help} (${v.nodes.length} element${v.nodes.length === 1 ? '' : 's'})\n${where}${more}`
}

/**
 * Checks what the page shows now. `state` names it in the output (e.g. "empty workspace").
 * The source goes in through evaluate, not a <script> tag: the app's CSP forbids inline scripts,
 * and a blocked tag would also be reported as a CSP violation.
 */
export async function expectAccessible(page: Page, state: string): Promise<AxeResults> {
  const loaded = await page.evaluate(() => typeof (window as unknown as { axe?: unknown }).axe === 'object')
  if (!loaded) await page.evaluate(AXE_SOURCE)
  const results = (await page.evaluate(
    (tags) =>
      (window as unknown as { axe: { run(ctx: Document, opts: object): Promise<unknown> } }).axe.run(document, {
        runOnly: { type: 'tag', values: tags },
        resultTypes: ['violations'],
      }),
    TAGS,
  )) as AxeResults
  expect(results.violations.map(summarise), `axe, ${state}: violations`).toEqual([])
  return results
}
