// IPC latency while the model host works: "the window never freezes".
//   npm run bench:ipc-latency                         cpu-small, 60 synthetic documents, 3 epochs
//   npm run bench:ipc-latency -- --preset cpu-tiny --docs 40 --epochs 2 --interval 20
//
// Drives the real handler table (dispatch, as Electron's ipcMain.handle does) with the real model
// host process (createNodeModelHost), starts models:train and then tag:run, and meanwhile sends a
// trivial workspace:info every --interval ms, timing each round trip on this (the IPC) thread.
// Prints max / p99 / median per phase and exits 1 when the worst round trip reaches --limit ms
// (default 100).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Channel, EventName, EventPayloads } from '../src/shared/ipc'
import { createHandlers, dispatch, type HandlerContext } from '../src/main/api'
import { Workspace } from '../src/core/store'
import { createNodeModelHost } from '../src/host/node'
import { syntheticDocs } from '../test/unit/train/synthetic'

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback
}

const preset = arg('preset', 'cpu-small')
const docs = Number(arg('docs', '60'))
const epochs = Number(arg('epochs', '3'))
const interval = Number(arg('interval', '20'))
const limit = Number(arg('limit', '100'))

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * (s.length - 1)))] ?? NaN
}

async function main(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'fastbioner-ipc-bench-'))
  const ws = Workspace.open(join(dir, 'ws.sqlite'), { user: 'bench' })
  const modelHost = createNodeModelHost()
  try {
    await ws.importDocuments(syntheticDocs(docs, 1, 5, 'gold'), 'gold')
    await ws.importDocuments(syntheticDocs(docs, 2, 5, 'new').map((d) => ({ ...d, mentions: [] })), 'new')
    let steps = 0
    const ctx: HandlerContext = {
      user: 'bench',
      defaultWorkspacePath: ws.path,
      workspace: () => ws,
      openWorkspace: () => ws,
      emit<E extends EventName>(event: E, _payload: EventPayloads[E]) {
        if (event === 'train:progress') steps++
      },
      dialogs: { openCorpusFiles: async () => [], saveExport: async () => null },
      modelHost,
    }
    const handlers = createHandlers(ctx)
    const invoke = async (channel: Channel, payload: unknown) => {
      const r = await dispatch(handlers, channel, payload)
      if (!r.ok) throw new Error(`${channel}: ${r.error.message}`)
      return r.value
    }

    /** Times workspace:info every `interval` ms until `job` settles. */
    async function during(label: string, job: Promise<unknown>): Promise<{ label: string; rtts: number[]; seconds: number }> {
      const t0 = performance.now()
      let done = false
      job.then(
        () => (done = true),
        () => (done = true),
      )
      const rtts: number[] = []
      while (!done) {
        const s = performance.now()
        await invoke('workspace:info', {})
        rtts.push(performance.now() - s)
        await new Promise((r) => setTimeout(r, interval))
      }
      await job
      return { label, rtts, seconds: (performance.now() - t0) / 1000 }
    }

    process.stderr.write(`starting the model host and training ${preset} on ${docs} documents for ${epochs} epochs…\n`)
    const phases = []
    const train = invoke('models:train', { jobId: 'bench-train', name: 'bench', preset, epochs, seed: 1 }) as Promise<{ model: { id: number } }>
    phases.push(await during(`models:train (${preset}, ${epochs} epochs)`, train))
    const { model } = await train
    await invoke('models:setActive', { id: model.id })
    phases.push(await during(`tag:run (${2 * docs} documents)`, invoke('tag:run', { jobId: 'bench-tag' })))

    const rows = phases.map((p) => [
      p.label,
      String(p.rtts.length),
      quantile(p.rtts, 0.5).toFixed(2),
      quantile(p.rtts, 0.99).toFixed(2),
      Math.max(...p.rtts).toFixed(2),
      p.seconds.toFixed(1),
    ])
    const head = ['phase', 'calls', 'median ms', 'p99 ms', 'max ms', 'job s']
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
    const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')
    console.log(line(head))
    console.log(widths.map((w) => '-'.repeat(w)).join('  '))
    for (const r of rows) console.log(line(r))
    const worst = Math.max(...phases.flatMap((p) => p.rtts))
    console.log(`\nworkspace:info every ${interval} ms; ${steps} train:progress events; worst round trip ${worst.toFixed(1)} ms (goal < ${limit} ms)`)
    return worst < limit ? 0 : 1
  } finally {
    await modelHost.close({ final: true })
    ws.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e)
    process.exit(2)
  },
)
