// Start-up that always shows a window (issue 31 F3): when the start-up workspace cannot be opened
// (here: another FastBioNER holds it, then a damaged file), the window shows the workspace chooser
// with the reason instead of nothing, and from there another workspace opens into the workbench.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Workspace } from '../../src/core/store'
import { startHarness, type Harness } from './harness'
import { expectAccessible } from './axe'

let h: Harness | null = null
let holder: Workspace | null = null

afterEach(async () => {
  await h?.close()
  h = null
  holder?.close()
  holder = null
})

describe('the workspace chooser', () => {
  it('says that another instance has the workspace open; "Try again" opens it once that one has closed it', async () => {
    h = await startHarness({
      prepareWorkspace: (path) => {
        holder = Workspace.open(path, { user: 'colleague' })
      },
    })
    const chooser = h.page.locator('.workspace-chooser')
    await chooser.waitFor()
    await expect(chooser.locator('h1').textContent()).resolves.toBe('This workspace is open in another FastBioNER')
    await expect(chooser.locator('.workspace-problem').textContent()).resolves.toMatch(/open in another FastBioNER window or instance: colleague on/)
    await expect(chooser.getByRole('button', { name: 'Take over' }).count()).resolves.toBe(0)
    await h.screenshot('workspace-chooser-locked')
    await expectAccessible(h.page, 'workspace chooser')

    await chooser.getByRole('button', { name: 'Try again' }).click()
    await chooser.locator('.workspace-problem', { hasText: /Close it there first/ }).nth(1).waitFor()
    holder!.close()
    holder = null
    await chooser.getByRole('button', { name: 'Try again' }).click()
    await h.page.locator('.workspace-chooser').waitFor({ state: 'detached' })
    await h.page.getByText('Your workspace is empty').waitFor()
  })

  it('says that the file is damaged and opens a new workspace instead', async () => {
    h = await startHarness({ prepareWorkspace: (path) => writeFileSync(path, 'not a database, '.repeat(200)) })
    const chooser = h.page.locator('.workspace-chooser')
    await chooser.waitFor()
    await expect(chooser.locator('h1').textContent()).resolves.toBe('This workspace file is damaged')
    await h.screenshot('workspace-chooser-corrupt')
    const fresh = join(h.dir, 'fresh.sqlite')
    h.queueWorkspaceFile(fresh)
    await chooser.getByRole('button', { name: 'New workspace…' }).click()
    await h.page.getByText('Your workspace is empty').waitFor()
    expect(h.workspace().path).toBe(fresh)
    expect(h.errors).toEqual([])
  })
})
