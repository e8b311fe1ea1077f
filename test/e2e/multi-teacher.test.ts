// Multi-teacher distillation in the Distil tab (issue 26 item 5), through the real UI, handler
// table and model host: teachers are chosen with check boxes (a model with other entity types is
// offered disabled, with the reason), the tab says which distillation will run — soft labels for
// same-vocabulary BERTs, the teachers' tags when a word tagger is among them, a new word-tagger
// student for word taggers alone — and the comparison names each student's teachers.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { WORD_LSTM } from '@shared/recipes'
import type { ModelInfo } from '@shared/ipc'
import { BertTokenClassifier, makeBertConfig } from '../../src/core/model/bert'
import { saveCheckpoint } from '../../src/core/model/checkpoint'
import { buildLabelMap } from '../../src/core/nlp/bio'
import { syntheticVocab } from '../unit/train/synthetic'
import { useCpuBackend } from '../unit/train/tfSetup'
import { startHarness, type Harness } from './harness'
import { inventedCorpus } from './corpus'
import { expectToast } from './ui'
import { expectAccessible } from './axe'

let h: Harness
const WAIT = { timeout: 20_000 }
let bert: ModelInfo
let words: ModelInfo
let words2: ModelInfo
let copy: ModelInfo
let diseaseOnly: ModelInfo

beforeAll(async () => {
  h = await startHarness()
})

afterAll(async () => {
  await h?.close()
})

async function invoke<T>(channel: Parameters<Harness['invoke']>[0], payload: unknown): Promise<T> {
  const r = await h.invoke(channel, payload)
  if (!r.ok) throw new Error(`${channel}: ${r.error.message}`)
  return r.value as T
}

/** Imports a model folder the way the window does: the folder dialog, then models:import. */
async function importFolder(path: string, name: string): Promise<ModelInfo> {
  h.queueModelFolder(path)
  await invoke('dialog:openModelFolder', {})
  return invoke<ModelInfo>('models:import', { path, name })
}

async function dismissToasts(page: Page): Promise<void> {
  await page.locator('.toast-close').evaluateAll((els) => els.forEach((e) => (e as HTMLElement).click()))
}

const option = (page: Page, m: ModelInfo) => page.locator(`.teacher-option[data-teacher-id="${m.id}"]`)
const method = (page: Page) => page.getByTestId('distil-method')

describe('Multi-teacher distillation in the Distil tab', () => {
  it('sets up a BERT, two word taggers, a copy of the BERT and a model with other entity types', async () => {
    const train = join(h.dir, 'mt-train.pubtator')
    const untagged = join(h.dir, 'mt-untagged.pubtator')
    writeFileSync(train, inventedCorpus({ firstId: 93000001, count: 40, seed: 3, annotated: true }))
    writeFileSync(untagged, inventedCorpus({ firstId: 94000001, count: 10, seed: 4, annotated: false }))
    h.queueOpenFiles([train, untagged])
    await h.page.getByRole('button', { name: 'Import…' }).click()
    await expectToast(h.page, /Imported 50 documents/, 30_000)

    bert = (await invoke<{ model: ModelInfo }>('models:train', { jobId: 'mt-bert', name: 'tiny bert', preset: 'cpu-tiny', epochs: 2, seed: 1 })).model
    words = (await invoke<{ model: ModelInfo }>('models:train', { jobId: 'mt-words', name: 'words', preset: WORD_LSTM, epochs: 2, seed: 1 })).model
    words2 = (await invoke<{ model: ModelInfo }>('models:train', { jobId: 'mt-words-2', name: 'words 2', preset: WORD_LSTM, epochs: 2, seed: 2 })).model
    copy = await importFolder(bert.path, 'tiny bert copy')
    // A random BERT that knows Disease only: the others tag Chemical and Disease.
    const tf = await useCpuBackend()
    ;(tf.backend() as unknown as { firstUse: boolean }).firstUse = false
    const vocab = syntheticVocab()
    const m = BertTokenClassifier.random(
      makeBertConfig({ vocabSize: vocab.length, hiddenSize: 32, numHiddenLayers: 2, numAttentionHeads: 2, intermediateSize: 64, maxPositionEmbeddings: 64 }),
      3,
      { default: buildLabelMap(['Disease']).labels },
    )
    const folder = join(h.dir, 'disease-only')
    await saveCheckpoint(folder, m, vocab, { lowercase: true })
    m.dispose()
    diseaseOnly = await importFolder(folder, 'disease only')
    expect(bert.entityTypes).toEqual(['Chemical', 'Disease'])
    expect(words.entityTypes).toEqual(['Chemical', 'Disease'])
  }, 300_000)

  it('offers every model, disables the one with other entity types with the reason, and says what will run', async () => {
    const { page } = h
    await page.locator('.view-tab[data-view="compression"]').click()
    await page.getByTestId('compression-view').waitFor()
    // The active model (the BERT, trained first) is chosen; one same-vocabulary teacher: soft labels.
    await expect.poll(() => method(page).getAttribute('data-method'), WAIT).toBe('soft-labels')
    expect(await option(page, bert).locator('input').isChecked()).toBe(true)
    expect(await option(page, diseaseOnly).locator('input').isDisabled()).toBe(true)
    expect(await option(page, diseaseOnly).textContent()).toMatch(/Not with these teachers: its entity types \(Disease\) differ from tiny bert's \(Chemical, Disease\)/)
    expect(await option(page, words).textContent()).toMatch(/word tagger/)

    // A second same-vocabulary BERT: soft labels averaged with the ramp; 'No distillation' is off.
    await option(page, copy).locator('input').check()
    await expect.poll(() => method(page).textContent(), WAIT).toMatch(/Soft labels of the 2 teachers averaged, with a temperature ramp/)
    expect(await page.locator('input[name="kd-mode"][value="none"]').isDisabled()).toBe(true)
    await dismissToasts(page)
    await h.screenshot('60-distil-two-bert-teachers')
    await expectAccessible(page, 'distil tab: two BERT teachers')

    // The word tagger joins: label-level KD through the teachers' tags; the KD modes do not apply.
    await option(page, words).locator('input').check()
    await expect.poll(() => method(page).getAttribute('data-method'), WAIT).toBe('teacher-tags')
    expect(await method(page).textContent()).toMatch(/Label-level distillation \(teacher tags\).*a word tagger cannot give soft labels.*unreviewed documents/)
    expect(await page.locator('input[name="kd-mode"][value="dynamic"]').isDisabled()).toBe(true)
    expect(await method(page).textContent()).toMatch(/They tag all 10 unreviewed documents/)
    await h.screenshot('61-distil-word-tagger-among-teachers')
    await page.getByTestId('kd-legend').scrollIntoViewIfNeeded()
    await h.screenshot('61b-distil-teacher-tags-kd-modes-off')
    await expectAccessible(page, 'distil tab: a word tagger among the teachers')

    // One word tagger alone teaches nothing its retraining would not.
    await option(page, bert).locator('input').uncheck()
    await option(page, copy).locator('input').uncheck()
    await expect.poll(() => method(page).textContent(), WAIT).toMatch(/words is a word tagger: alone its tags would teach .*Models view/)
    expect(await page.getByTestId('start-distil').isDisabled()).toBe(true)

    // Two word taggers: their agreed tags teach one new word tagger; no layers to choose, no KD mode.
    await option(page, words2).locator('input').check()
    await expect.poll(() => method(page).getAttribute('data-method'), WAIT).toBe('teacher-tags')
    const form = page.getByTestId('distil-form')
    expect(await page.getByTestId('distil-student').textContent()).toBe(
      "Student: a word tagger (BiLSTM-CRF), trained on the reviewed documents and the teachers' agreed tags.",
    )
    expect(await form.locator('input[data-layers]').count()).toBe(0)
    // It trains from scratch: the word tagger's epochs, not a distilled BERT's 3.
    expect(await form.getByLabel('Epochs').inputValue()).toBe('10')
    expect(await method(page).textContent()).toMatch(/a new word tagger \(BiLSTM-CRF\) learns the tags more than half of them agree on.*They tag all 10 unreviewed documents/)
    expect(await page.locator('input[name="kd-mode"][value="dynamic"]').isDisabled()).toBe(true)
    expect(await form.getByTestId('distil-int8').isDisabled()).toBe(true)
    expect(await form.textContent()).toMatch(/Not for this student: the app's int8 job reads BERT folders only/)
    const start = form.getByTestId('start-distil')
    expect(await start.textContent()).toBe('Distil into a word tagger')
    expect(await start.isDisabled()).toBe(false)
    await dismissToasts(page)
    await h.screenshot('63-distil-word-taggers')
    await expectAccessible(page, 'distil tab: two word taggers, a word-tagger student')
    await option(page, words2).locator('input').uncheck()
  }, 60_000)

  it('distils the BERT and the word tagger into a student registered with both, named in the comparison', async () => {
    const { page } = h
    const form = page.getByTestId('distil-form')
    await option(page, bert).locator('input').check()
    await expect.poll(() => method(page).getAttribute('data-method'), WAIT).toBe('teacher-tags')
    await form.locator('input[data-layers="1"]').check()
    await form.getByLabel('Epochs').fill('1')
    await form.getByTestId('distil-int8').uncheck()
    await form.getByTestId('start-distil').click()
    const result = page.getByTestId('distil-result')
    await result.waitFor({ timeout: 180_000 })
    const student = (await invoke<ModelInfo[]>('models:list', {})).find((m) => m.kind === 'student')!
    expect(student.distillation).toEqual({ teachers: [{ id: words.id, name: 'words' }, { id: bert.id, name: 'tiny bert' }], method: 'teacher-tags', mode: null })
    expect(student.parentId).toBe(bert.id)

    await result.getByRole('button', { name: 'Compare with their teachers' }).click()
    await page.getByTestId('run-compare').click()
    const table = page.getByTestId('comparison-table')
    await table.waitFor({ timeout: 120_000 })
    // The base teacher (the reference), the other teacher, the student.
    expect(await table.locator('tbody tr').count()).toBe(3)
    expect(await table.locator(`tr[data-model-id="${student.id}"] [data-testid="learnt-from"]`).textContent()).toBe('from words, tiny bert · teacher tags')
    expect(await table.locator(`tr[data-model-id="${bert.id}"] [data-testid="learnt-from"]`).count()).toBe(0)
    await dismissToasts(page)
    await table.scrollIntoViewIfNeeded()
    await h.screenshot('62-comparison-names-teachers')
    await expectAccessible(page, 'comparison naming the teachers')
    expect(h.errors).toEqual([])
  }, 300_000)
})
