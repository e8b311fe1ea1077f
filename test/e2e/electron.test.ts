// The real app: out/main/index.js in Electron, real preload, real IPC. Runs wherever the Electron
// binary is installed; elsewhere (ELECTRON_SKIP_BINARY_DOWNLOAD) it is skipped and says so.
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { _electron, type ElectronApplication } from 'playwright-core'
import { FIXTURES, ROOT } from './paths'

function electronBinary(): { path: string | null; why: string } {
  try {
    // The electron package's main export is the path of its binary; it throws when none was downloaded.
    const p = createRequire(join(ROOT, 'package.json'))('electron') as unknown
    if (typeof p !== 'string') return { path: null, why: 'require("electron") did not return a path' }
    if (!existsSync(p)) return { path: null, why: `${p} does not exist` }
    return { path: p, why: '' }
  } catch (e) {
    return { path: null, why: (e as Error).message }
  }
}

const binary = electronBinary()
const mainJs = join(ROOT, 'out/main/index.js')
if (!binary.path) console.log(`skipped: no Electron binary (${binary.why})`)

describe('Electron app (real main process, preload and IPC)', () => {
  let app: ElectronApplication | undefined
  let dir: string | undefined

  afterAll(async () => {
    await app?.close().catch(() => undefined)
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it.skipIf(!binary.path)('imports through window.api, lists documents, and keeps Node out of the page', async () => {
    if (!existsSync(mainJs)) throw new Error(`${mainJs} is missing: run \`npx electron-vite build\` first`)
    dir = mkdtempSync(join(tmpdir(), 'fastbioner-electron-'))
    const workspace = join(dir, 'workspace.sqlite')
    app = await _electron.launch({
      executablePath: binary.path!,
      args: [mainJs, '--workspace', workspace, '--no-sandbox', '--disable-gpu'],
      env: { ...process.env, ELECTRON_DISABLE_SECURITY_WARNINGS: 'true' },
    })
    const win = await app.firstWindow()
    await win.waitForLoadState('domcontentloaded')

    // Security: the bridge is there, Node is not.
    const globals = await win.evaluate(() => ({
      api: typeof (window as unknown as { api?: unknown }).api,
      invoke: typeof (window as unknown as { api?: { invoke?: unknown } }).api?.invoke,
      require: typeof (globalThis as unknown as { require?: unknown }).require,
      process: typeof (globalThis as unknown as { process?: unknown }).process,
      module: typeof (globalThis as unknown as { module?: unknown }).module,
    }))
    expect(globals).toEqual({ api: 'object', invoke: 'function', require: 'undefined', process: 'undefined', module: 'undefined' })

    const info = await win.evaluate(() => (window as unknown as { api: { invoke(c: string, p: unknown): Promise<unknown> } }).api.invoke('workspace:info', {}))
    expect(info).toMatchObject({ ok: true, value: { path: workspace } })

    // Paths must come from the shell's own dialogs: a path the page made up is refused.
    type Invoke = { api: { invoke(c: string, p: unknown): Promise<{ ok: boolean; value?: unknown; error?: { message: string } }> } }
    const fixture = join(FIXTURES, 'abstracts.pubtator')
    const direct = await win.evaluate(
      (paths) => (window as unknown as Invoke).api.invoke('import:files', { jobId: 'electron-direct', paths }),
      [fixture],
    )
    expect(direct.ok).toBe(false)
    expect(direct.error!.message).toContain('not chosen in a file dialog')

    // The native dialog cannot be clicked by a test: answer it in the main process instead.
    await app.evaluate(({ dialog }, path) => {
      dialog.showOpenDialog = (async () => ({ canceled: false, filePaths: [path] })) as typeof dialog.showOpenDialog
    }, fixture)
    const picked = await win.evaluate(() => (window as unknown as Invoke).api.invoke('dialog:openCorpusFiles', {}))
    expect(picked).toEqual({ ok: true, value: { paths: [fixture] } })
    const result = (await win.evaluate(
      (paths) => (window as unknown as Invoke).api.invoke('import:files', { jobId: 'electron-e2e', paths }),
      [fixture],
    )) as { ok: boolean; value?: { files: Array<{ imported: number }> } }
    expect(result.ok).toBe(true)
    expect(result.value!.files[0]!.imported).toBe(3)

    // An unknown channel is refused by the preload whitelist.
    const refused = await win.evaluate(() =>
      (window as unknown as { api: { invoke(c: string, p: unknown): Promise<unknown> } }).api
        .invoke('shell:exec', {})
        .then(() => 'resolved', (e: Error) => `rejected: ${e.message}`),
    )
    expect(refused).toMatch(/^rejected/)

    await win.reload()
    await win.locator('.doc-row').first().waitFor()
    expect(await win.locator('.doc-row').count()).toBe(3)
    expect(await win.getByTestId('workspace-path').textContent()).toContain(workspace)
  })
})
