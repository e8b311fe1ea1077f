// "Adapt to my documents" through the real UI and model host: the shipped default model (a tiny
// random two-head checkpoint, as FASTBIONER_DEFAULT_MODEL would name it) is adapted to the
// workspace's invented abstracts from its row in the Models view, with a live curve and the
// held-out masked-word accuracy; the result is listed as "adapted" and is what "Train new model"
// starts from.
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
  installation = await tinyDefaultModel('fastbioner-e2e-adapt-', { ncbi: ['Disease'], bc5cdr: ['Chemical', 'Disease'] })
  h = await startHarness({ defaultModel: installation })
})

afterAll(async () => {
  await h?.close()
  rmSync(installation, { recursive: true, force: true })
})

describe('Adapt to my documents (real model host)', () => {
  it('adapts the default model to the imported abstracts from its row; the result is listed and is what training starts from', async () => {
    const { page } = h
    const abstracts = join(h.dir, 'abstracts.pubtator')
    // 80 invented abstracts: about 2,500 words, over the 2,000-word minimum.
    writeFileSync(abstracts, inventedCorpus({ firstId: 99000001, count: 80, seed: 5, annotated: false }))
    h.queueOpenFiles([abstracts])
    await page.getByRole('button', { name: 'Import…' }).click()
    await expectToast(page, /Imported 80 documents/)

    await page.locator('.view-tab[data-view="models"]').click()
    await page.getByTestId('models-view').waitFor()
    const baseRow = page.locator('.models-table tbody tr[data-model-name="Default model (Disease, Chemical)"]')
    await baseRow.getByTestId('default-badge').waitFor({ timeout: 60_000 })
    await baseRow.locator('[data-action="adapt"]').click()
    const form = page.getByTestId('adapt-form')
    await form.waitFor()
    expect(await form.textContent()).toMatch(/all 80 documents in this workspace.*stays as it is.*keeps Default model \(Disease, Chemical\)'s entity heads \(Chemical, Disease\)/)
    await form.getByLabel('Passes over the text (epochs)').fill('2')
    await dismissToasts(page)
    await h.screenshot('42-adapt-form')
    await expectAccessible(page, 'adapt form')

    await form.getByTestId('start-adapt').click()
    const job = page.getByTestId('adapt-job')
    await job.waitFor()
    await page.waitForFunction(() => document.querySelector('[data-testid="adapt-job"] [data-testid="model-job"]')?.getAttribute('data-state') !== 'running', null, {
      timeout: 120_000,
    })
    expect(await job.getByTestId('model-job').getAttribute('data-state')).toBe('done')
    await expectToast(page, /Adapted Default model \(Disease, Chemical\) to this workspace: .*Held-out masked-word accuracy \d+\.\d%/)
    const curve = page.getByTestId('training-curve')
    expect(Number(await curve.getAttribute('data-evals'))).toBe(2)
    expect(await page.getByTestId('curve-masked-accuracy').textContent()).toMatch(/^\d+\.\d%$/)
    await dismissToasts(page)
    await job.scrollIntoViewIfNeeded()
    await h.screenshot('43-adapt-curve')

    const row = page.locator('.models-table tbody tr[data-model-name^="Default model (Disease, Chemical) adapted to "]')
    await row.waitFor()
    expect(await row.locator('.kind').textContent()).toBe('adapted')
    // The default model is still the active one: the adapted model needs training before it tags.
    await baseRow.getByTestId('active-badge').waitFor()
    await row.locator('button.disclosure').click()
    const details = page.locator('.details-row')
    expect(await details.textContent()).toMatch(/Adapted fromDefault model \(Disease, Chemical\)/)
    expect(await details.textContent()).toMatch(/Adapted on80 documents \([\d.,k ]+ words\), 2 epochs; held-out masked-word accuracy \d+\.\d%/)
    await dismissToasts(page)
    await h.screenshot('44-adapted-model')
    await expectAccessible(page, 'models view with an adapted model')

    // "Train new model" starts from the adapted model's encoder.
    await page.getByTestId('train-new').click()
    const train = page.getByTestId('train-form')
    expect(await train.getByTestId('start-from-model').isChecked()).toBe(true)
    expect(await train.getByTestId('train-base').locator('option:checked').textContent()).toMatch(/adapted to .*\(adapted\)/)
    expect(await train.locator('.presets').count()).toBe(0)
    await h.screenshot('45-train-from-adapted')
    await expectAccessible(page, 'train form starting from a model')
    await train.getByTestId('start-from-scratch').check()
    await train.locator('.presets').waitFor()
    expect(h.errors).toEqual([])
  }, 200_000)
})
