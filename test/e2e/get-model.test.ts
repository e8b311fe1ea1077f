// "Get a model from Hugging Face…" and "Models on this computer" (issue 28) through the real UI,
// the real handler table and model host, against the fake Hub on 127.0.0.1 (Node's plain fetch as
// the transport, where the Electron shell passes its net): a missing repository, the plan with
// sizes, the download with progress and its import, the Hugging Face cache list and its one-click
// import, and a gated repository's message. axe on the dialog and the view.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fetchAsHubFetch, type HubFetch } from '../../src/core/hub/http'
import { FakeHub, sha256, type FakeFile } from '../unit/hub/fake-hub'
import { startHarness, type Harness } from './harness'
import { expectToast } from './ui'
import { expectAccessible } from './axe'

const FIXTURE = join(__dirname, '../fixtures/torch/fp32')
const COMMIT = 'd'.repeat(40)
const tiny: Record<string, FakeFile> = Object.fromEntries(
  readdirSync(FIXTURE).map((f) => [f, { bytes: readFileSync(join(FIXTURE, f)), lfs: f === 'pytorch_model.bin' }]),
)
/** Every file of the fixture is one the tagger needs: all are downloaded. */
const TOTAL = Object.values(tiny).reduce((a, f) => a + f.bytes.length, 0)
const hub = new FakeHub()
let h: Harness
let cacheRoot: string
/** Set by a test: the next CDN body delivers its first chunk, then waits until the job is cancelled. */
let stallNextCdnBody = false

const plain = fetchAsHubFetch(fetch)
const transport: HubFetch = async (url, headers, signal) => {
  const r = await plain(url, headers, signal)
  if (!url.includes('/blobs/') || !stallNextCdnBody) return r
  stallNextCdnBody = false
  async function* body(): AsyncGenerator<Uint8Array> {
    for await (const c of r.body) {
      yield c
      await new Promise((resolve) => signal?.addEventListener('abort', resolve, { once: true }))
      throw new Error('aborted')
    }
  }
  return { ...r, body: body() }
}

beforeAll(async () => {
  await hub.start()
  hub.repos.set('org/tiny-bert', { commit: COMMIT, files: tiny })
  hub.repos.set('org/gated-bert', { commit: COMMIT, files: tiny, gatedToken: 'hf_good' })
  hub.repos.set('org/other-bert', { commit: COMMIT, files: tiny })
  cacheRoot = mkdtempSync(join(tmpdir(), 'fastbioner-e2e-hf-'))
  h = await startHarness({
    hub: { env: { HF_ENDPOINT: hub.hubUrl, HF_HUB_CACHE: join(cacheRoot, 'hub') }, home: cacheRoot, fetch: transport },
  })
})

afterAll(async () => {
  await h?.close()
  await hub.stop()
  rmSync(cacheRoot, { recursive: true, force: true })
})

test('gets a model from the fake Hub (sizes first, then download and import), lists it under "Models on this computer" and imports it from there', async () => {
  const { page } = h
  await page.locator('.view-tab[data-view="models"]').click()
  await page.getByTestId('models-view').waitFor()
  const cached = page.getByTestId('cached-models')
  await cached.getByText('No BERT model in the Hugging Face cache.').waitFor()
  expect(await page.getByTestId('models-view').locator('.view-head').textContent()).toMatch(/offline: the app reaches the network only when you ask/)
  expect(hub.log).toEqual([])

  await page.getByTestId('get-model').click()
  const dialog = page.getByTestId('get-model-dialog')
  await dialog.waitFor()
  expect(await dialog.getByTestId('offline-note').textContent()).toMatch(/works offline.*only when you press/)
  // Nothing goes to the Hub before the person asks.
  expect(hub.log).toEqual([])

  await dialog.getByLabel('Repository id').fill('org/no-such-model')
  await dialog.getByTestId('hub-check').click()
  expect(await dialog.getByTestId('hub-plan-error').textContent()).toMatch(/org\/no-such-model: no such model/)
  expect(await dialog.getByTestId('hub-download-start').isDisabled()).toBe(true)

  hub.log.length = 0
  await dialog.getByLabel('Repository id').fill('org/tiny-bert')
  await dialog.getByTestId('hub-check').click()
  await dialog.getByTestId('hub-plan').waitFor()
  const rows = dialog.locator('.hub-files tbody tr')
  expect(await rows.count()).toBe(Object.keys(tiny).length)
  expect(await dialog.locator('tr[data-file="pytorch_model.bin"]').textContent()).toMatch(/18 KB.*to download/)
  expect(await dialog.getByTestId('hub-sizes').textContent()).toMatch(/free in the Hugging Face cache/)
  expect(hub.log.map((l) => l.path)).toEqual(['/api/models/org/tiny-bert/revision/main?blobs=true'])
  await expectAccessible(page, 'get model dialog with a plan')
  await h.screenshot('47-get-model-dialog')

  await dialog.getByTestId('hub-download-start').click()
  const job = dialog.getByTestId('hub-download')
  await page.waitForFunction(() => document.querySelector('[data-testid="hub-download"]')?.getAttribute('data-state') !== 'running', null, { timeout: 60_000 })
  expect(await job.getAttribute('data-state'), (await job.textContent()) ?? '').toBe('done')
  expect(await dialog.getByTestId('hub-result').textContent()).toBe(`Imported as tiny-bert (${Math.round(TOTAL / 1024)} KB downloaded).`)
  await expectToast(page, /Downloaded and imported tiny-bert \(2 layers × 8\)/)
  expect(hub.log.some((l) => l.server === 'cdn')).toBe(true)
  await dialog.getByRole('button', { name: 'Close', exact: true }).click()

  const row = page.locator('.models-table tr[data-model-name="tiny-bert"]')
  await row.waitFor()
  expect(await row.textContent()).toMatch(/2 × 8/)

  // The download put it in the Hugging Face cache: listed offline, importable in one click.
  const entry = cached.locator('tr[data-repo-id="org/tiny-bert"]')
  await entry.waitFor()
  expect(await entry.textContent()).toMatch(/2 × 8.*18 KB.*yes: tags as it is/)
  hub.log.length = 0
  await entry.getByRole('button', { name: 'Import org/tiny-bert' }).click()
  await expectToast(page, /Imported tiny-bert \(2\) from the Hugging Face cache/)
  await page.locator('.models-table tr[data-model-name="tiny-bert (2)"]').waitFor()
  expect(hub.log).toEqual([])
  await expectAccessible(page, 'models view with models on this computer')
  await page.locator('.toast-close').evaluateAll((els) => els.forEach((e) => (e as HTMLElement).click()))
  await cached.scrollIntoViewIfNeeded()
  await h.screenshot('48-models-on-this-computer')
  expect(h.workspace().listModels().map((m) => m.name).sort()).toEqual(['tiny-bert', 'tiny-bert (2)'])
}, 120_000)

test('a gated repository: the download is refused with what to do, and no model is added', async () => {
  const { page } = h
  await page.getByTestId('get-model').click()
  const dialog = page.getByTestId('get-model-dialog')
  await dialog.getByLabel('Repository id').fill('org/gated-bert')
  await dialog.getByTestId('hub-check').click()
  await dialog.getByTestId('hub-plan').waitFor()
  await dialog.getByTestId('hub-download-start').click()
  const error = dialog.getByTestId('hub-error')
  await error.waitFor({ timeout: 30_000 })
  const text = (await error.textContent()) ?? ''
  expect(text).toMatch(/org\/gated-bert is a gated model/)
  expect(text).toContain(`${hub.hubUrl}/org/gated-bert`)
  expect(text).toMatch(/HF_TOKEN/)
  await expectAccessible(page, 'get model dialog with a gated error')
  expect(h.workspace().listModels()).toHaveLength(2)
  expect(h.errors).toEqual([])
}, 60_000)

test('cancel during the download keeps what arrived; checking again shows it, and the next download resumes it and imports', async () => {
  const { page } = h
  const dialog = page.getByTestId('get-model-dialog')
  await dialog.getByLabel('Repository id').fill('org/other-bert')
  await dialog.getByTestId('hub-check').click()
  await dialog.getByTestId('hub-plan').waitFor()
  hub.dropOnce.add(sha256(tiny['pytorch_model.bin']!.bytes))
  stallNextCdnBody = true
  await dialog.getByTestId('hub-download-start').click()
  // Progress in bytes while the weights come: half of them are here, the rest waits.
  await page.waitForFunction(() => /pytorch_model\.bin/.test(document.querySelector('[data-testid="hub-download"]')?.textContent ?? ''), null, { timeout: 30_000 })
  await dialog.getByTestId('hub-cancel').click()
  await dialog.getByTestId('hub-cancelled').waitFor({ timeout: 30_000 })
  expect(await dialog.getByTestId('hub-download').getAttribute('data-state')).toBe('cancelled')
  expect(h.workspace().listModels()).toHaveLength(2)

  await dialog.getByTestId('hub-check').click()
  await dialog.locator('tr[data-file="pytorch_model.bin"][data-state="partial"]').waitFor()
  expect(await dialog.locator('tr[data-file="pytorch_model.bin"]').textContent()).toMatch(/here from an interrupted download: resumed/)
  hub.log.length = 0
  await dialog.getByTestId('hub-download-start').click()
  await page.waitForFunction(() => document.querySelector('[data-testid="hub-download"]')?.getAttribute('data-state') === 'done', null, { timeout: 60_000 })
  expect(hub.log.find((l) => l.server === 'cdn')?.range).toMatch(/^bytes=[1-9]\d*-$/)
  expect(await dialog.getByTestId('hub-result').textContent()).toMatch(/Imported as other-bert/)
  expect(h.workspace().listModels().map((m) => m.name)).toContain('other-bert')
  expect(h.errors).toEqual([])
}, 120_000)
