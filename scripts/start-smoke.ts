// Start-up smoke test of the real app: Electron, the real (sandboxed) preload, the real model host
// (utilityProcess), on a temporary workspace. It fails on exactly what unit tests under plain Node
// cannot see: a native module built for the wrong ABI, a preload that cannot load in the sandbox,
// a model host entry that is not where the shell forks it, files that must be outside app.asar.
//
//   npm run start:smoke                          built app (electron-vite build, then out/main/index.js)
//   npm run start:smoke -- --app PATH            an unpacked installer build, e.g.
//                                                dist/linux-unpacked/fastbioner
//                                                "dist/win-unpacked/FastBioNER Workbench.exe"
//
// Steps: window + window.api → first IPC round trip (workspace:info names the temp workspace) →
// import a small annotated corpus (SQLite writes) → engine:info (the host starts, picks its tfjs
// backend, loads onnxruntime-node) → train a cpu-tiny model for one epoch in the host (tfjs,
// gradients) → tag with it (ONNX export + onnxruntime) → quit, and the app must exit with 0.
// Without an Electron binary (ELECTRON_SKIP_BINARY_DOWNLOAD=1) it prints why and exits 0; with
// --app the binary must exist.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { _electron, type ElectronApplication, type Page } from 'playwright-core'
import type { Channel, IpcResult, RequestOf, ResponseOf } from '../src/shared/ipc'
import { inventedCorpus } from '../test/e2e/corpus'

const ROOT = resolve(__dirname, '..')
const STEP_TIMEOUT_MS = 60_000
const TRAIN_TIMEOUT_MS = 240_000

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : undefined
}

/** The development Electron binary, or why there is none. */
function devElectron(): { path: string | null; why: string } {
  try {
    // The electron package's main export is the path of its binary; it throws when none was downloaded.
    const p = createRequire(join(ROOT, 'package.json'))('electron') as unknown
    if (typeof p !== 'string') return { path: null, why: 'require("electron") did not return a path' }
    if (!existsSync(p)) return { path: null, why: `${p} does not exist` }
    return { path: p, why: '' }
  } catch (e) {
    return { path: null, why: (e as Error).message.split('\n')[0]! }
  }
}

function withTimeout<T>(what: string, ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms)
  })
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer))
}

async function invoke<C extends Channel>(win: Page, channel: C, request: RequestOf<C>, ms = STEP_TIMEOUT_MS): Promise<ResponseOf<C>> {
  const result = await withTimeout(
    channel,
    ms,
    win.evaluate(
      ([c, r]) =>
        (window as unknown as { api: { invoke(c: string, r: unknown): Promise<unknown> } }).api.invoke(c, r) as Promise<IpcResult<unknown>>,
      [channel, request] as const,
    ),
  )
  if (!result.ok) throw new Error(`${channel} failed: ${result.error.code}: ${result.error.message}`)
  return result.value as ResponseOf<C>
}

async function main(): Promise<number> {
  const packaged = arg('app')
  let executablePath: string
  if (packaged) {
    executablePath = resolve(packaged)
    if (!existsSync(executablePath)) throw new Error(`--app ${executablePath} does not exist (build the installers first)`)
  } else {
    const dev = devElectron()
    if (!dev.path) {
      console.log(`start:smoke skipped: no Electron binary (${dev.why}). npm ci downloads it unless ELECTRON_SKIP_BINARY_DOWNLOAD=1 is set; see README "Set-up".`)
      return 0
    }
    executablePath = dev.path
    if (!process.argv.includes('--no-build')) {
      // What `npm start` (electron-vite preview) runs first.
      const cli = join(ROOT, 'node_modules/electron-vite/bin/electron-vite.js')
      const build = spawnSync(process.execPath, [cli, 'build'], { cwd: ROOT, stdio: 'inherit' })
      if (build.status !== 0) throw new Error(`electron-vite build failed (exit ${build.status})`)
    }
  }

  const dir = mkdtempSync(join(tmpdir(), 'fastbioner-smoke-'))
  const workspace = join(dir, 'workspace.sqlite')
  const log: string[] = []
  const pageErrors: string[] = []
  let app: ElectronApplication | undefined
  const t0 = performance.now()
  const seconds = () => ((performance.now() - t0) / 1000).toFixed(1)
  const step = (what: string) => console.log(`[${seconds()} s] ${what}`)
  try {
    const appArgs = packaged ? [] : [join(ROOT, 'out/main/index.js')]
    step(`launching ${executablePath}${packaged ? '' : ` ${appArgs[0]}`}`)
    app = await _electron.launch({
      executablePath,
      args: [...appArgs, '--workspace', workspace, '--disable-gpu'],
      env: { ...process.env, ELECTRON_DISABLE_SECURITY_WARNINGS: 'true', ELECTRON_RUN_AS_NODE: '' },
      timeout: STEP_TIMEOUT_MS,
    })
    const proc = app.process()
    proc.stdout?.on('data', (b: Buffer) => log.push(b.toString()))
    proc.stderr?.on('data', (b: Buffer) => log.push(b.toString()))
    const exited = new Promise<number | null>((res) => proc.once('exit', (code) => res(code)))

    const win = await app.firstWindow({ timeout: STEP_TIMEOUT_MS })
    win.on('pageerror', (e) => pageErrors.push(e.message))
    win.on('console', (m) => {
      if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`)
    })
    await win.waitForLoadState('domcontentloaded')
    const bridge = await win.evaluate(() => typeof (window as unknown as { api?: { invoke?: unknown } }).api?.invoke)
    if (bridge !== 'function') throw new Error(`window.api.invoke is ${bridge}: the preload did not load (${pageErrors.join('; ') || 'no page error'})`)
    step('window and preload bridge up')

    const info = await invoke(win, 'workspace:info', {})
    if (info.path !== workspace) throw new Error(`workspace:info names ${info.path}, expected ${workspace}`)
    step(`IPC round trip: workspace ${info.path} open (${info.documentCount} documents)`)

    const content = inventedCorpus({ firstId: 93000001, count: 24, seed: 5, annotated: true })
    const imported = await invoke(win, 'import:text', { jobId: 'smoke-import', name: 'smoke.pubtator', content, format: 'pubtator' })
    const n = imported.files.reduce((s, f) => s + f.imported, 0)
    if (n !== 24) throw new Error(`imported ${n} documents, expected 24`)
    step(`imported ${n} documents`)

    const engine = await invoke(win, 'engine:info', {}, TRAIN_TIMEOUT_MS)
    step(`model host: training on ${engine.trainingBackend} (${engine.trainingBackendReason}); inference ${engine.inferenceEngine} (${engine.inferenceEngineReason})`)
    // The plain-JavaScript fallback would hide a wasm binary that cannot be found.
    if (engine.trainingBackend === 'cpu' && !process.env['FASTBIONER_BACKEND']) throw new Error('the host fell back to the plain JavaScript backend')
    if (!engine.inferenceEngine.startsWith('onnxruntime')) throw new Error(`onnxruntime-node did not load in the host: ${engine.inferenceEngineReason}`)

    const trained = await invoke(win, 'models:train', { jobId: 'smoke-train', name: 'smoke', preset: 'cpu-tiny', epochs: 1, seed: 1 }, TRAIN_TIMEOUT_MS)
    if (trained.cancelled || !trained.model) throw new Error('training ended without a model')
    step(`trained model "${trained.model.name}" in the host`)

    const tagged = await invoke(win, 'tag:run', { jobId: 'smoke-tag' }, TRAIN_TIMEOUT_MS)
    if (tagged.documents === 0) throw new Error('tag:run tagged no document')
    if (!tagged.engine.startsWith('onnxruntime')) throw new Error(`tagging ran on ${tagged.engine}, not onnxruntime (${tagged.engineReason})`)
    step(`tagged ${tagged.documents} documents on ${tagged.engine}`)

    if (pageErrors.length) throw new Error(`errors in the window: ${pageErrors.join('; ')}`)

    await app.evaluate(({ app: electronApp }) => electronApp.quit())
    const code = await withTimeout('quitting', 30_000, exited)
    app = undefined
    if (code !== 0) throw new Error(`the app exited with ${code}`)
    step('quit, exit code 0')
    console.log(`start:smoke passed (${packaged ? 'packaged app' : 'built app'}, ${seconds()} s)`)
    return 0
  } catch (e) {
    console.error(`start:smoke FAILED: ${(e as Error).message}`)
    if (log.length) console.error(`--- app output (last 8000 characters) ---\n${log.join('').slice(-8000)}`)
    return 1
  } finally {
    await app?.close().catch(() => undefined)
    rmSync(dir, { recursive: true, force: true })
  }
}

main().then(
  (code) => process.exit(code),
  (e: Error) => {
    console.error(`start:smoke FAILED: ${e.message}`)
    process.exit(1)
  },
)
