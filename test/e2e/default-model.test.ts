// The default model that ships with the app, through the real UI: a fresh workspace shows it in
// the Models view (badge "Default", kind "shipped", active) and "Tag the workspace" works right
// after the first import, with no model trained or imported by hand. The "installed" model is a
// tiny random three-head checkpoint (as FASTBIONER_DEFAULT_MODEL would name it).
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startHarness, type Harness } from './harness'
import { inventedCorpus } from './corpus'
import { expectToast } from './ui'
import { dismissToasts, tinyDefaultModel } from './default-install'
import { expectAccessible } from './axe'

let h: Harness
let installation: string

beforeAll(async () => {
  installation = await tinyDefaultModel('fastbioner-e2e-default-', { ncbi: ['Disease'], bc5cdr: ['Chemical', 'Disease'], bc2gm: ['Gene'] }, {
    split: 'test',
    tagging: 'every head merged, document rules on (as tagging does it)',
    scores: [
      { corpus: 'NCBI-disease', type: 'Disease', f1: 0.8374 },
      { corpus: 'BC2GM', type: 'Gene', f1: 0.7881 },
    ],
  })
  h = await startHarness({ defaultModel: installation })
})

afterAll(async () => {
  await h?.close()
  rmSync(installation, { recursive: true, force: true })
})

describe('the default model (real model host)', () => {
  it('is in the Models view of a fresh workspace, active; tagging works right after the first import', async () => {
    const { page } = h
    const abstracts = join(h.dir, 'abstracts.pubtator')
    writeFileSync(abstracts, inventedCorpus({ firstId: 98000001, count: 5, seed: 3, annotated: false }))
    h.queueOpenFiles([abstracts])
    await page.getByRole('button', { name: 'Import…' }).click()
    await expectToast(page, /Imported 5 documents/)

    await page.locator('.view-tab[data-view="models"]').click()
    await page.getByTestId('models-view').waitFor()
    const row = page.locator('.models-table tbody tr[data-model-name="Default model (Disease, Chemical, Gene)"]')
    await row.getByTestId('default-badge').waitFor({ timeout: 60_000 })
    await row.getByTestId('active-badge').waitFor()
    expect(await row.locator('.kind').textContent()).toBe('shipped')
    // Its benchmark scores in its details, apart from the workspace's devel F1 (it has none yet).
    expect(await row.locator('td.num').nth(3).textContent()).toBe('–')
    await row.locator('button.disclosure').click()
    const benchmark = page.getByTestId('model-benchmark')
    expect(await benchmark.textContent()).toMatch(/^NCBI-disease Disease 83\.7 · BC2GM Gene 78\.8 — every head merged, document rules on \(as tagging does it\); public corpora, not this workspace’s documents$/)
    expect(await page.locator('.details-row dt', { hasText: 'Benchmark F1' }).textContent()).toBe('Benchmark F1 (test)')
    await dismissToasts(page)
    await h.screenshot('40-models-default')
    await expectAccessible(page, 'models view with the default model')

    await page.getByTestId('tag-workspace').click()
    await page.getByTestId('tag-result').waitFor({ timeout: 90_000 })
    expect(await page.getByTestId('tag-result').textContent()).toMatch(/5 documents/)
    await dismissToasts(page)
    await h.screenshot('41-models-default-tagged')
    expect(h.errors).toEqual([])
  }, 150_000)
})
