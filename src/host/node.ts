// The model host under plain Node (tests, the e2e harness, benches, the CLI if it wants one):
// child_process.fork of the TypeScript entry through tsx. The Electron shell uses
// utilityProcess instead (src/main/index.ts); both satisfy HostChannel.
import { fork, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ModelHost, type HostChannel, type ModelHostOptions } from './client'
import type { HostToMain, MainToHost } from './protocol'

export interface NodeModelHostOptions extends ModelHostOptions {
  /** The host entry; default src/host/entry.ts next to this file. */
  entry?: string
  /** Extra environment for the host (e.g. FASTBIONER_BACKEND=wasm). */
  env?: NodeJS.ProcessEnv
  /** Extra Node flags, e.g. ['--max-old-space-size=4096']. */
  execArgv?: string[]
}

const ROOT = resolve(__dirname, '../..')

function tsxLoader(): string {
  // Absolute, so the host starts whatever the current directory is.
  const req = createRequire(join(ROOT, 'package.json'))
  return pathToFileURL(req.resolve('tsx')).href
}

/** Wraps a forked child as a HostChannel. */
export function childProcessChannel(child: ChildProcess): HostChannel {
  return {
    get pid() {
      return child.pid
    },
    send(msg: MainToHost) {
      child.send(msg)
    },
    onMessage(listener: (msg: HostToMain) => void) {
      child.on('message', (m) => listener(m as HostToMain))
    },
    onExit(listener) {
      if (child.exitCode !== null || child.signalCode !== null) {
        queueMicrotask(() => listener(child.exitCode, child.signalCode))
        return
      }
      // 'close', not 'exit': it comes after the last IPC message, so a result sent just before
      // the process ended is never mistaken for a crash.
      child.once('close', (code, signal) => listener(code, signal))
    },
    kill() {
      child.kill('SIGKILL')
    },
  }
}

/**
 * A ModelHost whose process is `node --import tsx src/host/entry.ts`. This is what the e2e
 * harness (and any plain-Node embedding of the handler table) passes as `ctx.modelHost`:
 *
 *   const modelHost = createNodeModelHost()
 *   const ctx: HandlerContext = { …, modelHost }
 *   …
 *   await modelHost.close({ final: true })   // when done (the process also exits with its parent)
 */
export function createNodeModelHost(opts: NodeModelHostOptions = {}): ModelHost {
  const entry = opts.entry ?? join(__dirname, 'entry.ts')
  return new ModelHost(() => {
    const child = fork(entry, [], {
      cwd: ROOT,
      execArgv: ['--import', tsxLoader(), ...(opts.execArgv ?? [])],
      env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.json'), ...opts.env },
      // Typed arrays and Maps survive structured clone; JSON would turn them into objects.
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    // An 'error' (spawn failure) is followed by 'exit'; the channel reports that.
    child.on('error', (e) => (opts.logger ?? console.error)(`[model-host] ${e.message}`))
    return childProcessChannel(child)
  }, opts)
}
