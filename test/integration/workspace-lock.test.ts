// Two app instances on one workspace folder (issue 31 F1): two shells — sessions and handler
// tables as src/main/index.ts builds them — on one file. The second is refused with a message and
// runs no start-up recovery; the first's training job, running meanwhile, finishes and is registered.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { EventName, EventPayloads } from '@shared/ipc'
import { createHandlers, dispatch, type HandlerContext, type Handlers } from '../../src/main/api'
import { callOk as call } from './ipc-calls'
import { WorkspaceSession } from '../../src/main/workspace-session'
import type { ModelHost } from '../../src/host/client'
import { createNodeModelHost } from '../../src/host/node'
import { syntheticDocs } from '../unit/train/synthetic'

let dir: string
let host: ModelHost

function shell(path: string, user: string): { session: WorkspaceSession; handlers: Handlers } {
  const session = WorkspaceSession.start(path, user)
  const ctx: HandlerContext = {
    user,
    defaultWorkspacePath: path,
    workspace: () => session.current(),
    openWorkspace: (p, opts) => session.open(p, opts),
    workspaceProblem: () => session.problem,
    emit<E extends EventName>(_event: E, _payload: EventPayloads[E]) {},
    dialogs: { openCorpusFiles: async () => [], saveExport: async () => null },
    modelHost: host,
  }
  return { session, handlers: createHandlers(ctx) }
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'fastbioner-lock-'))
  host = createNodeModelHost({ env: { FASTBIONER_BACKEND: 'wasm' } })
})

afterAll(async () => {
  await host?.close({ final: true })
  rmSync(dir, { recursive: true, force: true })
})

describe('two instances on one workspace', () => {
  it('refuses the second with a message; the first one’s running job finishes and is registered', async () => {
    const path = join(dir, 'workspace.sqlite')
    const first = shell(path, 'first')
    const second: Array<ReturnType<typeof shell>> = []
    try {
      expect(first.session.problem).toBeNull()
      await first.session.current().importDocuments(syntheticDocs(24, 11, 4, 'gold'), 'gold.pubtator')
      const training = call(first.handlers, 'models:train', { jobId: 'train-first', name: 'first model', preset: 'cpu-tiny', epochs: 3, seed: 3 })
      // Wait until the job's registry row ('training') exists: what a second instance's recovery used to delete.
      const t0 = Date.now()
      while (!first.session.current().listModels({ includeTraining: true }).some((m) => m.status === 'training')) {
        if (Date.now() - t0 > 30_000) throw new Error('the training job did not start')
        await new Promise((r) => setTimeout(r, 20))
      }

      const b = shell(path, 'second')
      second.push(b)
      expect(b.session.problem).toMatchObject({ path, reason: 'locked', canTakeOver: false })
      expect(b.session.problem!.message).toMatch(new RegExp(`open in another FastBioNER window or instance: first on .* \\(process ${process.pid}`))
      const status = await call(b.handlers, 'workspace:status', {})
      expect(status).toMatchObject({ workspace: null, problem: { reason: 'locked' } })
      // Every workspace channel says why instead of touching the file; the model list (start-up recovery) included.
      const list = await dispatch(b.handlers, 'models:list', {})
      expect(list).toMatchObject({ ok: false, error: { code: 'not_found' } })
      expect(!list.ok && list.error.message).toMatch(/No workspace is open: .*open in another FastBioNER/)
      // Trying again while the first instance holds it: still refused.
      expect(await dispatch(b.handlers, 'workspace:open', {})).toMatchObject({ ok: false, error: { code: 'conflict' } })

      const r = await training
      expect(r.cancelled).toBe(false)
      expect(r.model).toMatchObject({ name: 'first model' })
      const models = await call(first.handlers, 'models:list', {})
      expect(models.map((m) => m.name)).toEqual(['first model'])
      expect(existsSync(models[0]!.path)).toBe(true)

      // Once the first instance closes the workspace, the second can open it and finds the model.
      first.session.close()
      expect((await call(b.handlers, 'workspace:open', {})).path).toBe(path)
      expect((await call(b.handlers, 'models:list', {})).map((m) => m.name)).toEqual(['first model'])
    } finally {
      first.session.close()
      for (const s of second) s.session.close()
    }
  })

  it('runs start-up recovery only while this instance holds the lock', async () => {
    const path = join(dir, 'taken-over.sqlite')
    const a = shell(path, 'first')
    try {
      const ws = a.session.current()
      const folder = join(ws.modelsDir, 'running-elsewhere')
      mkdirSync(folder, { recursive: true })
      const rec = ws.createModel({ name: 'running elsewhere', kind: 'teacher', status: 'training', path: folder })
      // Another computer took the workspace over (its user chose "Take over"): its job's rows look interrupted from here.
      writeFileSync(`${path}.lock`, JSON.stringify({ pid: 1, host: 'other-machine.example', started: null, user: 'colleague', since: 'now', token: 'theirs' }))
      expect(ws.ownsLock).toBe(false)
      await call(a.handlers, 'models:list', {})
      expect(ws.listModels({ includeTraining: true }).map((m) => m.id)).toEqual([rec.id])
      expect(existsSync(folder)).toBe(true)
    } finally {
      a.session.close()
    }
  })
})
