// End-to-end harness: the built renderer (out/renderer) in Debian's Chromium, driven by Playwright,
// talking to the REAL handler table (src/main/api.ts) over a REAL SQLite workspace in a temp folder.
//
// What differs from the Electron app, and only this:
//  - the page is served by a tiny static HTTP server on 127.0.0.1 (Chromium does not load module
//    scripts from file://); the server sends the same CSP as src/shared/csp.ts;
//  - the preload is emulated: window.api.invoke goes through page.exposeBinding into dispatch(),
//    and ctx.emit reaches window.api.on listeners through page.evaluate;
//  - the OS dialogs are test doubles: "open" returns the paths a test queued, "save" a temp path;
//  - the model host is a Node child process (createNodeModelHost: tsx + the same host entry) where
//    Electron forks a utilityProcess; it starts on the first model request, so tests that never
//    touch a model never pay for it.
import { createServer, type Server } from 'node:http'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { extname, join, normalize, resolve, sep } from 'node:path'
import type { AddressInfo } from 'node:net'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import type { Channel, EventName, EventPayloads } from '@shared/ipc'
import type { CorpusFormat } from '@shared/domain'
import { createHandlers, dispatch, type HandlerContext, type Handlers } from '../../src/main/api'
import { findDefaultModel } from '../../src/core/model/default-model'
import type { Workspace } from '../../src/core/store'
import { WorkspaceSession } from '../../src/main/workspace-session'
import { createNodeModelHost } from '../../src/host/node'
import type { ModelHost } from '../../src/host/client'
import { CONTENT_SECURITY_POLICY, RENDERER_DIR, SCREENSHOTS } from './paths'

export { FIXTURES, RENDERER_DIR, ROOT, SCREENSHOTS } from './paths'

export const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium'
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
]

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
}

/** Serves `dir` read-only on 127.0.0.1 at a random port. */
async function serveStatic(dir: string): Promise<{ server: Server; url: string }> {
  const root = resolve(dir)
  const csp = CONTENT_SECURITY_POLICY
  const server = createServer((req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1')
      if (url.pathname === '/favicon.ico') {
        // Chromium asks for one by itself; Electron's file:// page does not.
        res.writeHead(204).end()
        return
      }
      const rel = decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname)
      const file = normalize(join(root, rel))
      if (file !== root && !file.startsWith(root + sep)) {
        res.writeHead(403).end()
        return
      }
      if (!existsSync(file) || !statSync(file).isFile()) {
        res.writeHead(404).end()
        return
      }
      res.writeHead(200, {
        'Content-Type': MIME[extname(file)] ?? 'application/octet-stream',
        'Content-Security-Policy': csp,
        'Cache-Control': 'no-store',
      })
      res.end(readFileSync(file))
    } catch {
      res.writeHead(500).end()
    }
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  const { port } = server.address() as AddressInfo
  return { server, url: `http://127.0.0.1:${port}/` }
}

/** Runs in the page before any app script: what src/preload/index.ts exposes, over the binding. */
function preloadEmulation(): void {
  const listeners = new Map<string, Set<(payload: unknown) => void>>()
  const w = window as unknown as {
    __fastbionerInvoke: (channel: string, payload: unknown) => Promise<unknown>
    __fastbionerEmit: (event: string, payload: unknown) => void
  }
  Object.defineProperty(window, '__fastbionerEmit', {
    value: (event: string, payload: unknown) => {
      for (const l of [...(listeners.get(event) ?? [])]) {
        try {
          l(payload)
        } catch (e) {
          console.error(e)
        }
      }
    },
  })
  const api = Object.freeze({
    invoke: (channel: string, request: unknown) => w.__fastbionerInvoke(channel, request),
    on: (event: string, listener: (payload: unknown) => void) => {
      let set = listeners.get(event)
      if (!set) listeners.set(event, (set = new Set()))
      set.add(listener)
      return () => set.delete(listener)
    },
  })
  Object.defineProperty(window, 'api', { value: api, writable: false, configurable: false })
  // CSP violations would be silent in a screenshot: make them console errors the tests collect.
  document.addEventListener('securitypolicyviolation', (e) => {
    console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline content'}`)
  })
}

export interface Harness {
  browser: Browser
  context: BrowserContext
  page: Page
  url: string
  dir: string
  workspacePath: string
  handlers: Handlers
  /** The workspace the handlers use (for assertions on what was persisted). */
  workspace: () => Workspace
  /** Paths the next "Import…" file dialog will return. */
  queueOpenFiles(paths: string[]): void
  /** The folder the next "Import HF folder…" dialog will return. */
  queueModelFolder(path: string | null): void
  /** The file the next "Word vectors… Choose file…" dialog will return. */
  queueWordVectors(path: string | null): void
  /** The file the next "Open workspace…" / "New workspace…" dialog will return. */
  queueWorkspaceFile(path: string | null): void
  modelHost: ModelHost
  /** Every path the save dialog handed out, in order. */
  exportPaths: string[]
  /** Console errors and page errors seen so far (known-benign ones filtered out). */
  errors: string[]
  /** Calls a channel the way the renderer does, from the test. */
  invoke<C extends Channel>(channel: C, payload: unknown): ReturnType<typeof dispatch<C>>
  screenshot(name: string): Promise<string>
  close(): Promise<void>
}

/** Console messages that are not failures of the app; none at present. */
const BENIGN: RegExp[] = []

export async function startHarness(
  opts: {
    user?: string
    viewport?: { width: number; height: number }
    hostEnv?: NodeJS.ProcessEnv
    /** Called with the workspace path before the shell opens it (a damaged or locked workspace for the chooser). */
    prepareWorkspace?: (path: string) => void
    /** The installation's default model folder (as FASTBIONER_DEFAULT_MODEL); none by default. */
    defaultModel?: string
    /** The Hugging Face Hub and cache the model channels use (as the shell passes them; a fake Hub in tests). */
    hub?: HandlerContext['hub']
  } = {},
): Promise<Harness> {
  if (!existsSync(join(RENDERER_DIR, 'index.html'))) {
    throw new Error(`${RENDERER_DIR}/index.html is missing: run \`npx electron-vite build\` first (npm run test:e2e does).`)
  }
  const dir = mkdtempSync(join(tmpdir(), 'fastbioner-e2e-'))
  const workspacePath = join(dir, 'workspace.sqlite')
  const user = opts.user ?? 'e2e-annotator'
  opts.prepareWorkspace?.(workspacePath)
  // As the Electron shell: a workspace that cannot be opened leaves the chooser, never a throw.
  const session = WorkspaceSession.start(workspacePath, user)
  const openQueue: string[][] = []
  const folderQueue: Array<string | null> = []
  const vectorsQueue: Array<string | null> = []
  const workspaceQueue: Array<string | null> = []
  // Single-threaded tfjs (wasm) unless a test asks otherwise: the suite runs on two cores.
  const modelHost = createNodeModelHost({ env: { FASTBIONER_BACKEND: 'wasm', ...opts.hostEnv } })
  const exportPaths: string[] = []
  let page: Page | null = null

  const ctx: HandlerContext = {
    user,
    defaultWorkspacePath: workspacePath,
    workspace: () => session.current(),
    openWorkspace: (path, opts) => session.open(path, opts),
    workspaceProblem: () => session.problem,
    emit<E extends EventName>(event: E, payload: EventPayloads[E]) {
      void page
        ?.evaluate(([e, p]) => (window as unknown as { __fastbionerEmit(e: string, p: unknown): void }).__fastbionerEmit(e, p), [
          event,
          payload,
        ] as const)
        .catch(() => undefined)
    },
    // As in the Electron shell: paths must come from the dialogs below.
    restrictPathsToDialogs: true,
    modelHost,
    ...(opts.hub ? { hub: opts.hub } : {}),
    ...(opts.defaultModel ? { findDefaultModel: () => findDefaultModel({ FASTBIONER_DEFAULT_MODEL: opts.defaultModel }) } : {}),
    dialogs: {
      // Test doubles for the OS dialogs (Electron's dialog.showOpenDialog / showSaveDialog).
      async openCorpusFiles() {
        return openQueue.shift() ?? []
      },
      async openModelFolder() {
        return folderQueue.shift() ?? null
      },
      async openWordVectors() {
        return vectorsQueue.shift() ?? null
      },
      async chooseWorkspace() {
        return workspaceQueue.shift() ?? null
      },
      async saveExport(format: CorpusFormat) {
        const ext = format === 'bioc-json' ? 'json' : format === 'conll' ? 'tsv' : format === 'brat' ? '' : format
        const p = join(dir, 'exports', `export-${exportPaths.length + 1}${ext ? `.${ext}` : ''}`)
        mkdirSync(join(dir, 'exports'), { recursive: true })
        exportPaths.push(p)
        return p
      },
    },
  }
  const handlers = createHandlers(ctx)

  const { server, url } = await serveStatic(RENDERER_DIR)
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS })
  const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1400, height: 900 }, deviceScaleFactor: 1 })
  const errors: string[] = []
  await context.exposeBinding('__fastbionerInvoke', (_source, channel: Channel, payload: unknown) => dispatch(handlers, channel, payload))
  await context.addInitScript(preloadEmulation)
  page = await context.newPage()
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return
    const text = msg.text()
    if (!BENIGN.some((re) => re.test(text))) errors.push(text)
  })
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`))
  await page.goto(url)
  mkdirSync(SCREENSHOTS, { recursive: true })

  const h: Harness = {
    browser,
    context,
    page,
    url,
    dir,
    workspacePath,
    handlers,
    workspace: () => session.current(),
    queueOpenFiles: (paths) => void openQueue.push(paths),
    queueModelFolder: (path) => void folderQueue.push(path),
    queueWordVectors: (path) => void vectorsQueue.push(path),
    queueWorkspaceFile: (path) => void workspaceQueue.push(path),
    modelHost,
    exportPaths,
    errors,
    invoke: (channel, payload) => dispatch(handlers, channel, payload),
    async screenshot(name) {
      const file = join(SCREENSHOTS, `${name}.png`)
      await page!.screenshot({ path: file })
      return file
    },
    async close() {
      await modelHost.close({ final: true, timeoutMs: 2000 }).catch(() => undefined)
      await browser.close().catch(() => undefined)
      await new Promise<void>((ok) => server.close(() => ok()))
      session.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return h
}
