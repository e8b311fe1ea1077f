// The document list's counts against the legend, a document's revision history, and switching /
// creating workspaces from the UI — through the real UI, handler table and SQLite workspaces.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { CorpusDocument } from '@shared/domain'
import { startHarness, type Harness } from './harness'
import { expectToast, openFromList, pasteImport, waitSaved } from './ui'
import { expectAccessible } from './axe'

let h: Harness

/** Two small invented documents with gold mentions. */
function doc(id: string, text: string, spans: Array<[string, string]>): CorpusDocument {
  return {
    id,
    text,
    passages: [],
    mentions: spans.map(([word, type]) => {
      const start = text.indexOf(word)
      return { start, end: start + word.length, text: word, type }
    }),
  }
}
const DOCS = [
  doc('7000001', 'Zorvitis in children treated with fenoxamil and quinavor.', [['Zorvitis', 'Disease'], ['fenoxamil', 'Chemical']]),
  doc('7000002', 'No finding of brunoma after dratrizole.', [['brunoma', 'Disease']]),
]

beforeAll(async () => {
  h = await startHarness()
  await h.workspace().importDocuments(DOCS, 'fixture')
  const id = h.workspace().listDocuments({ query: '7000001' }).documents[0]!.id
  // What a tagging run stores: two model suggestions beside the two gold entities.
  const text = DOCS[0]!.text
  const at = (w: string) => ({ start: text.indexOf(w), end: text.indexOf(w) + w.length })
  h.workspace().replaceSuggestions(
    [{ documentId: id, suggestions: [{ ...at('quinavor'), type: 'Chemical', confidence: 0.93 }, { ...at('children'), type: 'Disease', confidence: 0.55 }], uncertainty: 0.5 }],
    { modelId: null, by: 'model:tiny-test' },
  )
  await h.page.reload()
})

afterAll(async () => {
  await h?.close()
})

describe('document list, history and workspaces', () => {
  it('counts the same entities in the list as in the legend, suggestions apart', async () => {
    const { page } = h
    const row = page.locator('.doc-row[data-external-id="7000001"]')
    await row.waitFor()
    await openFromList(page, '7000001')
    const legendTotal = Number(await page.locator('.legend-total strong').textContent())
    expect(legendTotal).toBe(2)
    expect(Number(await page.getByTestId('suggestion-count').textContent())).toBe(2)
    expect(await row.getByTestId('row-count').textContent()).toBe(`${legendTotal} entities`)
    expect(await row.getByTestId('row-suggestions').textContent()).toBe('2 suggested')
    await h.screenshot('workspace-list-counts')
  })

  it("shows the document's history: who (person or model), when, before and after", async () => {
    const { page } = h
    // Accept the confident suggestion (a person's decision on the model's proposal).
    await page.getByTestId('accept-above').click()
    await page.waitForFunction(() => document.querySelector('[data-testid="save-state"]')?.getAttribute('data-state') === 'saved')
    await page.getByTestId('history-button').click()
    const dialog = page.getByTestId('history-dialog')
    await dialog.getByTestId('history-table').waitFor()
    const rows = dialog.locator('tbody tr')
    // Newest first: the accept, then the model's two suggestions, then the two imported gold entities.
    await expect.poll(() => rows.count()).toBe(5)
    const newest = rows.first()
    expect(await newest.getAttribute('data-author-kind')).toBe('person')
    expect(await newest.textContent()).toContain('e2e-annotator')
    expect(await newest.textContent()).toContain('Accepted')
    expect(await newest.locator('td').nth(3).textContent()).toMatch(/Chemical “quinavor”.*suggested 0\.93/)
    expect(await newest.locator('td').nth(4).textContent()).toMatch(/Chemical “quinavor”/)
    expect(await newest.locator('td').nth(4).textContent()).not.toContain('suggested')
    const byModel = dialog.locator('tbody tr[data-author-kind="model"]')
    expect(await byModel.count()).toBe(2)
    expect(await byModel.first().textContent()).toMatch(/Model tiny-test.*Suggested/)
    expect(await dialog.locator('tbody tr', { hasText: 'Imported' }).count()).toBe(2)
    await h.screenshot('workspace-history')
    await expectAccessible(page, 'history dialog')
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })
  })

  it('restores a change from the history after a reload, when undo no longer can', async () => {
    const { page } = h
    const id = h.workspace().listDocuments({ query: '7000001' }).documents[0]!.id
    const quinavor = () => h.workspace().getDocument(id).annotations.find((a) => a.type === 'Chemical' && a.confidence === 0.93)!
    expect(quinavor().state).toBe('accepted')
    await page.reload()
    await page.locator('.doc-text').waitFor()
    await page.getByTestId('history-button').click()
    const dialog = page.getByTestId('history-dialog')
    const rows = dialog.locator('tbody tr')
    await expect.poll(() => rows.count()).toBe(5)
    // Only each annotation's latest change can be restored: the accept, not the suggestion under it.
    expect(await rows.locator('[data-action="restore"]').count()).toBe(4)
    expect(await rows.nth(0).locator('[data-action="restore"]').count()).toBe(1)
    await rows.nth(0).locator('[data-action="restore"]').click()
    await expectToast(page, /Restored “quinavor” as it was before: accepted undone/)
    expect(quinavor()).toMatchObject({ state: 'suggested', origin: 'model' })
    await expect.poll(() => rows.count()).toBe(6)
    expect(await rows.first().textContent()).toContain('Accept undone')
    await h.screenshot('workspace-history-restored')
    await expectAccessible(page, 'history dialog after a restore')
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })
    // The text shows it as a suggestion again.
    expect(await page.locator('.doc-text .entity.is-suggested', { hasText: 'quinavor' }).count()).toBe(1)
  })

  it('creates a new workspace and opens the previous one again from the Workspace menu', async () => {
    const { page } = h
    const fresh = join(h.dir, 'second', 'fresh.sqlite')
    h.queueWorkspaceFile(fresh)
    await page.getByTestId('workspace-menu').click()
    await h.screenshot('workspace-menu')
    await page.locator('[data-action="new-workspace"]').click()
    await expectToast(page, /Created the workspace .*fresh\.sqlite \(0 documents\)/)
    expect(existsSync(fresh)).toBe(true)
    await page.getByTestId('workspace-path').getByText(fresh).waitFor()
    await page.getByRole('heading', { name: 'Your workspace is empty' }).waitFor()
    expect(h.workspace().path).toBe(fresh)

    // Creating over an existing file is refused; the open workspace stays.
    h.queueWorkspaceFile(h.workspacePath)
    await page.getByTestId('workspace-menu').click()
    await page.locator('[data-action="new-workspace"]').click()
    await expectToast(page, /Could not create the workspace: .*already exists/)
    expect(h.workspace().path).toBe(fresh)

    h.queueWorkspaceFile(h.workspacePath)
    await page.getByTestId('workspace-menu').click()
    await page.locator('[data-action="open-workspace"]').click()
    await expectToast(page, /Opened the workspace .*\(2 documents\)/)
    await page.locator('.doc-row[data-external-id="7000002"]').waitFor()
    expect(h.workspace().path).toBe(h.workspacePath)
    await h.screenshot('workspace-switched-back')
  })
  it('renames entity types on import by the rules set in the Workspace menu', async () => {
    const { page } = h
    await page.getByTestId('workspace-menu').click()
    await page.locator('[data-action="type-map"]').click()
    const dialog = page.getByTestId('type-map-dialog')
    await dialog.waitFor()
    await dialog.getByLabel('Rules').fill('Gibberish')
    await dialog.getByRole('button', { name: 'Save' }).click()
    await dialog.getByRole('alert').getByText(/'Gibberish' is not SOURCE/).waitFor()
    await dialog.getByLabel('Rules').fill('SpecificDisease,DiseaseClass=Disease\nGENE=Gene')
    await expectAccessible(page, 'type-map dialog')
    await h.screenshot('type-map-dialog')
    await dialog.getByRole('button', { name: 'Save' }).click()
    await expectToast(page, /Imports will rename 3 entity types/)
    expect(h.workspace().setting('importTypeMap')).toBe('SpecificDisease,DiseaseClass=Disease;GENE=Gene')

    await pasteImport(page, 'renamed', 'pubtator', '7100001|t|Kelposis and the ZRB1 gene.\n7100001\t0\t8\tKelposis\tSpecificDisease\n7100001\t17\t21\tZRB1\tGENE\n\n')
    await expectToast(page, /Imported 1 document from renamed/)
    const id = h.workspace().listDocuments({ query: '7100001' }).documents[0]!.id
    expect(h.workspace().getDocument(id).annotations.map((a) => a.type).sort()).toEqual(['Disease', 'Gene'])
  })

  it('says why a suggestion a document rule added is there, and an undone reject keeps the reason', async () => {
    const { page } = h
    const text = 'Quinavor (QV) lowered the pressure. QV was well tolerated.'
    await h.workspace().importDocuments([doc('7200001', text, [])], 'rules')
    const id = h.workspace().listDocuments({ query: '7200001' }).documents[0]!.id
    // What tagging stores after the abbreviation rule: the model's "Quinavor", and the two "QV" it copied.
    const second = text.lastIndexOf('QV')
    const rule = { rule: 'abbreviation' as const, from: { start: 0, end: 8, text: 'Quinavor' } }
    h.workspace().replaceSuggestions(
      [
        {
          documentId: id,
          suggestions: [
            { start: 0, end: 8, type: 'Chemical', confidence: 0.91 },
            { start: 10, end: 12, type: 'Chemical', confidence: 0.91, rule },
            { start: second, end: second + 2, type: 'Chemical', confidence: 0.91, rule },
          ],
          uncertainty: 0.2,
        },
      ],
      { modelId: null, by: 'model:tiny-test' },
    )
    await page.reload()
    await openFromList(page, '7200001')
    const copies = page.locator('.doc-text .entity.is-suggested[data-rule="abbreviation"]')
    expect(await copies.count()).toBe(2)
    expect(await page.locator('.doc-text .entity.is-suggested:not([data-rule])').count()).toBe(1)
    // The suggestion bar says how many of them the rules added.
    expect(await page.getByTestId('rule-suggestion-count').textContent()).toBe(' · 2 by document rules')
    expect(await copies.nth(1).getAttribute('title')).toMatch(/suggestion, model 0\.91, abbreviation rule/)
    await copies.nth(1).click()
    const popover = page.getByTestId('entity-popover')
    await popover.waitFor()
    expect(await popover.getByTestId('suggestion-rule').textContent()).toBe(
      'Added by the abbreviation rule: the model tagged “Quinavor” (characters 0–8) where this document defines the abbreviation, so every use of it gets the same type',
    )
    expect(await popover.getByTestId('entity-meta').textContent()).toMatch(/Model suggestion \(abbreviation rule\), not yet accepted/)
    // The popover is taller than the room under the line: the pane scrolls to it but keeps the entity in view.
    const shown = await copies.nth(1).evaluate((el) => {
      const pane = el.closest('.doc-scroll')!.getBoundingClientRect()
      const r = el.getBoundingClientRect()
      return r.top >= pane.top && r.bottom <= pane.bottom
    })
    expect(shown).toBe(true)
    await expectAccessible(page, 'popover of a rule suggestion')
    await h.screenshot('suggestion-rule-popover')

    await popover.locator('[data-action="reject"]').click()
    await waitSaved(page)
    const atSecond = () => h.workspace().getDocument(id).annotations.find((a) => a.start === second)
    expect(atSecond()).toBeUndefined()
    expect(await page.getByTestId('rule-suggestion-count').textContent()).toBe(' · 1 by document rules')
    await page.locator('.doc-text').focus()
    await page.keyboard.press('Control+z')
    await waitSaved(page)
    expect(atSecond()).toMatchObject({ state: 'suggested', origin: 'model', confidence: 0.91, rule })
  })

  it('deletes the selected documents after a confirmation that counts their annotations, and Undo brings them back exactly', async () => {
    const { page } = h
    const text = 'Bad import of zorvitis with fenoxamil.'
    await h.workspace().importDocuments(
      [
        doc('7300001', text, [['zorvitis', 'Disease']]),
        doc('7300002', 'Duplicate of the brunoma abstract.', [['brunoma', 'Disease']]),
        doc('7300003', 'A keeper about dratrizole.', []),
      ],
      'wrong-file',
    )
    const idOf = (ext: string) => h.workspace().listDocuments({ query: ext }).documents[0]?.id
    const bad = idOf('7300001')!
    // The person's own work on it: what the dialog must warn about, and the undo must bring back.
    h.workspace().createAnnotation({ documentId: bad, start: text.indexOf('fenoxamil'), end: text.indexOf('fenoxamil') + 9, type: 'Chemical' })
    const before = h.workspace().getDocument(bad)
    const totalBefore = h.workspace().info().documentCount
    await page.reload()
    await openFromList(page, '7300001')
    for (const ext of ['7300001', '7300002']) await page.locator(`.doc-row[data-external-id="${ext}"]`).getByTestId('row-check').click()
    await page.getByTestId('document-list').focus()
    await page.keyboard.press('Delete')

    const dialog = page.getByTestId('confirm-delete-documents')
    await dialog.waitFor()
    expect(await dialog.getByRole('heading').textContent()).toBe('Delete 2 documents?')
    expect(await dialog.getByTestId('delete-annotations').textContent()).toBe('3 annotations')
    expect(await dialog.getByTestId('delete-by-person').textContent()).toBe('1')
    expect(await dialog.textContent()).toContain('7300001, 7300002')
    // The safe answer has the focus: Enter at once keeps the documents.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Keep them')
    await expectAccessible(page, 'delete documents confirmation')
    await h.screenshot('delete-documents-confirm')

    await dialog.getByTestId('confirm-delete-documents-button').click()
    await expectToast(page, /Deleted 2 documents and 3 annotations\./)
    await page.locator('.doc-row[data-external-id="7300001"]').waitFor({ state: 'detached' })
    expect(await page.locator('.doc-row[data-external-id="7300002"]').count()).toBe(0)
    // The next document opens in place of the deleted one; counts and selection follow.
    await page.locator('[data-testid="doc-external-id"]', { hasText: '7300003' }).waitFor()
    await page.locator('.list-summary', { hasText: `${totalBefore - 2} documents` }).waitFor()
    expect(await page.getByTestId('selection-actions').count()).toBe(0)
    expect(h.workspace().info().documentCount).toBe(totalBefore - 2)
    expect(idOf('7300001')).toBeUndefined()
    await expectAccessible(page, 'list after delete, with the undo offer')
    await h.screenshot('delete-documents-undo-offer')

    await page.locator('.toast', { hasText: 'Deleted 2 documents' }).getByTestId('toast-action').click()
    await expectToast(page, /Restored 2 documents with 3 annotations\./)
    await page.locator('[data-testid="doc-external-id"]', { hasText: '7300001' }).waitFor()
    await page.locator('.list-summary', { hasText: `${totalBefore} documents` }).waitFor()
    expect(h.workspace().getDocument(bad)).toEqual(before)

    // One document by keyboard: Delete on the active row, Escape keeps it, then Tab, Enter deletes it.
    await page.getByTestId('document-list').focus()
    await page.keyboard.press('Delete')
    await dialog.waitFor()
    expect(await dialog.getByRole('heading').textContent()).toBe('Delete document 7300001?')
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })
    expect(idOf('7300001')).toBe(bad)
    await page.keyboard.press('Delete')
    await dialog.waitFor()
    await page.keyboard.press('Tab')
    await page.keyboard.press('Enter')
    await expectToast(page, /Deleted document 7300001 and 2 annotations\./)
    expect(idOf('7300001')).toBeUndefined()

    // Importing the file again brings it back afresh, as the file has it, and the report says so.
    await pasteImport(page, 'fixed-file', 'pubtator', '7300001|t|Fixed import of zorvitis.\n7300001\t16\t24\tzorvitis\tDisease\n\n')
    await expectToast(page, /Imported 1 document from fixed-file; 1 deleted earlier came back as a fresh document/)
    expect(await page.getByTestId('import-reimported').textContent()).toMatch(/1 had been deleted from the workspace and was imported afresh.*: 7300001/)
    const fresh = h.workspace().listDocuments({ query: '7300001' }).documents
    expect(fresh).toMatchObject([{ title: 'Fixed import of zorvitis.', annotationCount: 1 }])
    expect(fresh[0]!.id).not.toBe(bad)

    // The same id with another text is not a repeat: it is left out, and the report says why.
    await pasteImport(page, 'other-version', 'pubtator', '7300001|t|Another text under the same id.\n\n')
    await expectToast(page, /Imported 0 documents from other-version; 1 not imported: its id belongs to a document with another text/)
    expect(await page.getByTestId('import-conflicts').textContent()).toMatch(/1 not imported: the workspace has a document with this id but another text.*: 7300001/)
    await h.screenshot('workspace-import-conflict')
    expect(h.workspace().listDocuments({ query: '7300001' }).documents).toMatchObject([{ title: 'Fixed import of zorvitis.' }])
    expect(h.errors).toEqual([])
  })

  it('restores a deleted document from Workspace → Deleted documents…, once its Undo has gone', async () => {
    const { page } = h
    const [gone] = h.workspace().deletedDocuments().documents
    expect(gone).toMatchObject({ externalId: expect.stringMatching(/^7300001 \(deleted #\d+\)$/), annotations: 2 })
    const totalBefore = h.workspace().info().documentCount
    await page.getByTestId('workspace-menu').click()
    await page.locator('[data-action="deleted-documents"]').click()
    const dialog = page.getByTestId('deleted-documents')
    const row = dialog.locator(`tr[data-doc-id="${gone!.id}"]`)
    await row.waitFor()
    expect(await row.textContent()).toContain('Bad import of zorvitis with fenoxamil.')
    await expectAccessible(page, 'deleted documents dialog')
    await h.screenshot('deleted-documents')
    await row.locator('[data-action="restore-document"]').click()
    await expectToast(page, new RegExp(`Restored document 7300001 \\(deleted #\\d+\\) with 2 annotations\\.`))
    await row.waitFor({ state: 'detached' })
    expect(h.workspace().info().documentCount).toBe(totalBefore + 1)
    expect(h.workspace().getDocument(gone!.id).annotations).toHaveLength(2)
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })
    await page.locator('.list-summary', { hasText: `${totalBefore + 1} documents` }).waitFor()
    expect(h.errors).toEqual([])
  })
})
