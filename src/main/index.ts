// Electron shell: one window, the security policy, and the IPC registration of the handler table.
import { join } from 'node:path'
import { userInfo } from 'node:os'
import { app, BrowserWindow, dialog, ipcMain, Menu, net, session as electronSession, utilityProcess, type IpcMainInvokeEvent } from 'electron'
import { CHANNELS, type EventName, type EventPayloads } from '@shared/ipc'
import { createHandlers, dispatch, type HandlerContext } from './api'
import { findDefaultModel } from '../core/model/default-model'
import { ModelHost, type HostChannel } from '../host/client'
import type { HostToMain, MainToHost } from '../host/protocol'
import { hardenSession, installGlobalGuards, isAppUrl } from './security'
import { WorkspaceSession } from './workspace-session'
import { netHubFetch, type NetRequest } from './models/hub-transport'

let mainWindow: BrowserWindow | null = null

const CORPUS_FILE_FILTERS = [
  { name: 'Corpus files', extensions: ['pubtator', 'txt', 'tsv', 'conll', 'iob', 'iob2', 'xml', 'json', 'ann'] },
  { name: 'All files', extensions: ['*'] },
]

function rendererUrl(): string {
  const devUrl = process.env['ELECTRON_RENDERER_URL']
  if (!app.isPackaged && devUrl) return devUrl
  return new URL(`file://${join(__dirname, '../renderer/index.html')}`).href
}

/** `--workspace PATH` or FASTBIONER_WORKSPACE choose the workspace; default is the user-data folder. */
function requestedWorkspacePath(): string {
  const flag = process.argv.findIndex((a) => a === '--workspace')
  if (flag >= 0 && process.argv[flag + 1]) return process.argv[flag + 1]!
  return process.env['FASTBIONER_WORKSPACE'] ?? join(app.getPath('userData'), 'workspace.sqlite')
}

/**
 * The model host as an Electron utility process (out/main/modelHost.js, built from
 * src/host/entry.ts): a Node process of its own, so native ML libraries, training memory
 * and crashes stay out of this process, which serves the window's IPC.
 */
function spawnUtilityModelHost(): HostChannel {
  const child = utilityProcess.fork(join(__dirname, 'modelHost.js'), [], {
    serviceName: 'FastBioNER model host',
    stdio: 'inherit',
  })
  let exited: { code: number } | null = null
  const exitListeners: Array<(code: number | null, signal: string | null) => void> = []
  child.on('exit', (code) => {
    exited = { code }
    for (const l of exitListeners.splice(0)) l(code, null)
  })
  return {
    get pid() {
      return child.pid
    },
    send(msg: MainToHost) {
      child.postMessage(msg)
    },
    onMessage(listener: (msg: HostToMain) => void) {
      child.on('message', (m) => listener(m as HostToMain))
    },
    onExit(listener) {
      if (exited) queueMicrotask(() => listener(exited!.code, null))
      else exitListeners.push(listener)
    },
    kill() {
      child.kill()
    },
  }
}

function createWindow(): BrowserWindow {
  const win = new BrowserWindow({
    width: 1400,
    height: 900,
    minWidth: 900,
    minHeight: 600,
    show: false,
    title: 'FastBioNER Workbench',
    backgroundColor: '#f7f7f5',
    webPreferences: {
      preload: join(__dirname, '../preload/index.js'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      spellcheck: false,
      // Middle-click can open links in new windows; nothing in this app needs it.
      disableBlinkFeatures: 'Auxclick',
    },
  })
  win.once('ready-to-show', () => win.show())
  void win.loadURL(rendererUrl())
  return win
}

function registerIpc(ctx: HandlerContext): void {
  const handlers = createHandlers(ctx)
  for (const channel of CHANNELS) {
    ipcMain.handle(channel, (event: IpcMainInvokeEvent, payload: unknown) => {
      // Only our own top-level page may call the API; anything else (an injected frame) is refused.
      const senderUrl = event.senderFrame?.url ?? ''
      if (!isAppUrl(senderUrl, rendererUrl()) || event.senderFrame !== event.sender.mainFrame) {
        return { ok: false, error: { code: 'invalid_request', message: `refused IPC from ${senderUrl || 'unknown frame'}` } }
      }
      return dispatch(handlers, channel, payload)
    })
  }
}

function buildMenu(): void {
  const isMac = process.platform === 'darwin'
  Menu.setApplicationMenu(
    Menu.buildFromTemplate([
      ...(isMac ? [{ role: 'appMenu' as const }] : []),
      { role: 'fileMenu' },
      { role: 'editMenu' },
      {
        label: 'View',
        submenu: [{ role: 'resetZoom' }, { role: 'zoomIn' }, { role: 'zoomOut' }, { type: 'separator' }, { role: 'togglefullscreen' }],
      },
      { role: 'windowMenu' },
    ]),
  )
}

/** Brings the window of this (first) instance to the front: a second launch ends itself and calls this. */
function focusMainWindow(): void {
  if (!mainWindow) return
  if (mainWindow.isMinimized()) mainWindow.restore()
  mainWindow.show()
  mainWindow.focus()
}

app.enableSandbox()
installGlobalGuards(rendererUrl)

// One instance per user-data folder: a second launch focuses the running window and quits. A
// second install or user-data folder is refused by the workspace lock instead (core/store/lock.ts).
if (!app.requestSingleInstanceLock()) {
  app.quit()
} else {
  app.on('second-instance', focusMainWindow)
  void app
    .whenReady()
    .then(start)
    .catch((e: unknown) => {
      // Whatever else fails at start-up is said, never left as a silent exit.
      dialog.showErrorBox('FastBioNER Workbench could not start', e instanceof Error ? (e.stack ?? e.message) : String(e))
      app.quit()
    })
}

function start(): void {
  hardenSession(rendererUrl())
  buildMenu()
  const user = userInfo().username || 'annotator'
  const defaultWorkspacePath = requestedWorkspacePath()
  // Never throws: a workspace that cannot be opened leaves the window showing the workspace chooser with the reason.
  const session = WorkspaceSession.start(defaultWorkspacePath, user)
  const modelHost = new ModelHost(spawnUtilityModelHost)
  const ctx: HandlerContext = {
    user,
    defaultWorkspacePath,
    restrictPathsToDialogs: true,
    modelHost,
    findDefaultModel: () => findDefaultModel(),
    // Hub downloads (only when the person asks) on a session of their own: the default session
    // refuses every request that is not the app's bundle (security.ts). Its proxy is the system's.
    hub: {
      fetch: netHubFetch((o) => {
        const hubSession = electronSession.fromPartition('fastbioner-hub', { cache: false })
        // ClientRequest's overloaded on() does not relate to NetRequest's three; it has all three.
        return net.request({ ...o, session: hubSession }) as unknown as NetRequest
      }),
    },
    workspace: () => session.current(),
    openWorkspace: (path, opts) => session.open(path, opts),
    workspaceProblem: () => session.problem,
    emit<E extends EventName>(event: E, payload: EventPayloads[E]) {
      mainWindow?.webContents.send(event, payload)
    },
    dialogs: {
      async openCorpusFiles() {
        const result = await dialog.showOpenDialog(mainWindow!, {
          title: 'Import corpus files',
          properties: ['openFile', 'multiSelections'],
          filters: CORPUS_FILE_FILTERS,
        })
        return result.canceled ? [] : result.filePaths
      },
      async saveExport(format) {
        const result = await dialog.showSaveDialog(mainWindow!, {
          title: `Export as ${format}`,
          defaultPath: format === 'brat' ? 'export-brat' : `export.${format === 'bioc-json' ? 'json' : format === 'conll' ? 'tsv' : format}`,
        })
        return result.canceled || !result.filePath ? null : result.filePath
      },
      async chooseWorkspace(purpose) {
        if (purpose === 'create') {
          const result = await dialog.showSaveDialog(mainWindow!, {
            title: 'New workspace',
            defaultPath: 'workspace.sqlite',
            filters: [{ name: 'FastBioNER workspace', extensions: ['sqlite'] }],
          })
          return result.canceled || !result.filePath ? null : result.filePath
        }
        const result = await dialog.showOpenDialog(mainWindow!, {
          title: 'Open workspace',
          properties: ['openFile'],
          filters: [{ name: 'FastBioNER workspace', extensions: ['sqlite'] }],
        })
        return firstPath(result)
      },
      async openModelFolder() {
        const result = await dialog.showOpenDialog(mainWindow!, {
          title: 'Import a model (HuggingFace folder with config.json, vocab.txt, model.safetensors)',
          properties: ['openDirectory'],
        })
        return firstPath(result)
      },
      async openWordVectors() {
        const result = await dialog.showOpenDialog(mainWindow!, {
          title: 'Word vectors for the new word tagger (word2vec, fastText or GloVe text format)',
          properties: ['openFile'],
          filters: [
            { name: 'Word vectors', extensions: ['vec', 'txt', 'gz'] },
            { name: 'All files', extensions: ['*'] },
          ],
        })
        return firstPath(result)
      },
    },
  }
  registerIpc(ctx)
  app.on('before-quit', () => {
    // A job still running in the host is interrupted; its 'training' rows are cleaned up on the
    // next start (src/main/models/). The process would be ended with the app anyway.
    void modelHost.close({ final: true, timeoutMs: 1000 })
    session.close()
  })
  mainWindow = createWindow()
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) mainWindow = createWindow()
  })
}

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit()
})

/** The one path an open dialog answered; null when cancelled. */
function firstPath(result: Electron.OpenDialogReturnValue): string | null {
  return result.canceled || result.filePaths.length === 0 ? null : result.filePaths[0]!
}
