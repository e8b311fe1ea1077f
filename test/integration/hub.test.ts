// Models from the Hugging Face ecosystem through the handler table (issue 28, the app's side):
// models:hubPlan / hubDownload against the fake Hub on 127.0.0.1 (test/unit/hub/fake-hub.ts) over
// Node's plain fetch (the app injects Electron's net the same way), the import of the snapshot
// by the real model host, cancel and resume, gated and missing repositories, the contract's
// refusals, and models:cached / importCached over the Hugging Face cache the download wrote.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Channel, EventName, EventPayloads } from '@shared/ipc'
import { createHandlers, dispatch, type HandlerContext, type Handlers } from '../../src/main/api'
import { callError, callOk } from './ipc-calls'
import { Workspace } from '../../src/core/store'
import { fetchAsHubFetch, type HubFetch } from '../../src/core/hub/http'
import type { ModelHost } from '../../src/host/client'
import { createNodeModelHost } from '../../src/host/node'
import { FakeHub, sha256, type FakeFile } from '../unit/hub/fake-hub'

const FIXTURE = join(__dirname, '../fixtures/torch/fp32')
const COMMIT = 'c'.repeat(40)
const tiny: Record<string, FakeFile> = Object.fromEntries(
  readdirSync(FIXTURE).map((f) => [f, { bytes: readFileSync(join(FIXTURE, f)), lfs: f === 'pytorch_model.bin' }]),
)
const weights = tiny['pytorch_model.bin']!.bytes

let dir: string
let cache: string
let ws: Workspace
let host: ModelHost
let handlers: Handlers
const hub = new FakeHub()
const events: Array<{ event: EventName; payload: unknown }> = []
/** Set by a test: called when the weights' body has delivered its first chunk. */
let onFirstWeightsChunk: (() => void) | null = null

/** Node's fetch, with a hook in the CDN's body (to cancel half-way through a file). */
const plain = fetchAsHubFetch(fetch)
const transport: HubFetch = async (url, headers, signal) => {
  const r = await plain(url, headers, signal)
  if (!url.includes('/blobs/') || !onFirstWeightsChunk) return r
  const hook = onFirstWeightsChunk
  onFirstWeightsChunk = null
  async function* body(): AsyncGenerator<Uint8Array> {
    for await (const c of r.body) {
      yield c
      // The chunk is on disk: the person cancels, and the connection goes with it.
      hook()
      throw new Error('socket closed')
    }
  }
  return { ...r, body: body() }
}

const call = <C extends Channel>(channel: C, payload: unknown) => callOk(handlers, channel, payload)
const fail = (channel: Channel, payload: unknown) => callError(handlers, channel, payload)

const jobEvents = (jobId: string) =>
  events.filter((e) => e.event === 'job:progress' && (e.payload as { jobId: string }).jobId === jobId).map((e) => e.payload as EventPayloads['job:progress'])

beforeAll(async () => {
  await hub.start()
  hub.repos.set('org/tiny-bert', { commit: COMMIT, files: { ...tiny, 'README.md': { bytes: Buffer.from('# tiny'), lfs: false } } })
  hub.repos.set('org/gated-bert', { commit: COMMIT, files: tiny, gatedToken: 'hf_good' })
  dir = mkdtempSync(join(tmpdir(), 'fastbioner-hub-int-'))
  cache = join(dir, 'hf-cache')
  ws = Workspace.open(join(dir, 'ws.sqlite'), { user: 'tester' })
  host = createNodeModelHost({ env: { FASTBIONER_BACKEND: 'wasm' } })
  const ctx: HandlerContext = {
    user: 'tester',
    defaultWorkspacePath: join(dir, 'ws.sqlite'),
    workspace: () => ws,
    openWorkspace() {
      throw new Error('not used')
    },
    emit<E extends EventName>(event: E, payload: EventPayloads[E]) {
      events.push({ event, payload: structuredClone(payload) })
    },
    dialogs: { openCorpusFiles: async () => [], saveExport: async () => null },
    modelHost: host,
    // As the Electron shell: a path reaches models:import only from a dialog, or from main itself.
    restrictPathsToDialogs: true,
    hub: { env: { HF_ENDPOINT: hub.hubUrl, HF_HUB_CACHE: cache }, home: dir, fetch: transport },
  }
  handlers = createHandlers(ctx)
})

afterAll(async () => {
  await host?.close({ final: true, timeoutMs: 2000 })
  ws?.close()
  await hub.stop()
  rmSync(dir, { recursive: true, force: true })
})

beforeEach(() => {
  hub.log.length = 0
  hub.dropOnce.clear()
})

test('the contract refuses repo ids that could leave the cache folder, bad revisions, and an endpoint or folder in the request — before any request to the Hub', async () => {
  for (const repoId of ['../etc/passwd', 'org/../x', 'org/..', 'a--b/c', '/abs/path', 'org/name/extra', 'C:\\models\\x', '']) {
    expect((await fail('models:hubPlan', { repoId })).code).toBe('invalid_request')
    expect((await fail('models:hubDownload', { jobId: 'j-bad', repoId })).code).toBe('invalid_request')
    expect((await fail('models:importCached', { repoId })).code).toBe('invalid_request')
  }
  for (const revision of ['..', 'main/../x', 'a b']) expect((await fail('models:hubPlan', { repoId: 'org/tiny-bert', revision })).code).toBe('invalid_request')
  expect((await fail('models:hubPlan', { repoId: 'org/tiny-bert', endpoint: 'http://evil.example' })).code).toBe('invalid_request')
  expect((await fail('models:hubDownload', { jobId: 'j-bad', repoId: 'org/tiny-bert', cacheDir: '/tmp' })).code).toBe('invalid_request')
  expect(hub.log).toEqual([])
})

test('models:cached is offline and empty before anything was downloaded', async () => {
  expect(await call('models:cached', {})).toEqual([])
  expect(hub.log).toEqual([])
})

test('models:hubPlan: the files a token classifier needs, their sizes and the free space, from the model info alone; nothing written', async () => {
  const plan = await call('models:hubPlan', { repoId: 'org/tiny-bert' })
  expect(plan.endpoint).toBe(hub.hubUrl)
  expect(plan.commit).toBe(COMMIT)
  expect(plan.cacheDir).toBe(cache)
  expect(plan.files.map((f) => f.name).sort()).toEqual(Object.keys(tiny).sort())
  expect(plan.files.find((f) => f.name === 'pytorch_model.bin')).toMatchObject({ size: weights.length, state: 'missing' })
  const total = Object.values(tiny).reduce((a, f) => a + f.bytes.length, 0)
  expect(plan.totalBytes).toBe(total)
  expect(plan.downloadBytes).toBe(total)
  expect(plan.freeBytes).toBeGreaterThan(total)
  expect(hub.log.map((l) => l.path)).toEqual(['/api/models/org/tiny-bert/revision/main?blobs=true'])
  expect(existsSync(cache)).toBe(false)
})

test('a missing repository and a gated one are said so, with what to do', async () => {
  const missing = await fail('models:hubPlan', { repoId: 'org/no-such-model' })
  expect(missing.code).toBe('not_found')
  expect(missing.message).toMatch(/org\/no-such-model: no such model/)
  const gated = await fail('models:hubDownload', { jobId: 'j-gated', repoId: 'org/gated-bert' })
  expect(gated.code).toBe('invalid_request')
  expect(gated.message).toMatch(/gated/)
  expect(gated.message).toContain(`${hub.hubUrl}/org/gated-bert`)
  expect(gated.message).toMatch(/HF_TOKEN/)
  expect(gated.message).not.toMatch(/command/)
  expect(ws.listModels()).toHaveLength(0)
})

test('cancel half-way through the weights keeps what arrived; the next download resumes it with a Range request and imports the model', async () => {
  const sha = sha256(weights)
  hub.dropOnce.add(sha)
  onFirstWeightsChunk = () => void dispatch(handlers, 'jobs:cancel', { jobId: 'j-1' })
  const cancelled = await call('models:hubDownload', { jobId: 'j-1', repoId: 'org/tiny-bert' })
  expect(cancelled).toMatchObject({ cancelled: true, model: null })
  expect(ws.listModels()).toHaveLength(0)
  const plan = await call('models:hubPlan', { repoId: 'org/tiny-bert' })
  const part = plan.files.find((f) => f.name === 'pytorch_model.bin')!
  expect(part.state).toBe('partial')
  expect(part.partialBytes).toBeGreaterThan(0)
  expect(part.partialBytes).toBeLessThan(weights.length)
  expect(plan.downloadBytes).toBe(weights.length - part.partialBytes)

  hub.log.length = 0
  const r = await call('models:hubDownload', { jobId: 'j-2', repoId: 'org/tiny-bert' })
  expect(r.cancelled).toBe(false)
  expect(hub.log.find((l) => l.server === 'cdn')?.range).toBe(`bytes=${part.partialBytes}-`)
  expect(r.downloadedBytes).toBe(weights.length - part.partialBytes)
  expect(r.snapshot).toBe(join(cache, 'models--org--tiny-bert', 'snapshots', COMMIT))
  expect(readFileSync(join(r.snapshot!, 'pytorch_model.bin'))).toEqual(weights)
  // Imported as models:import does: a copy in the workspace, the checkpoint's own head kept.
  expect(r.model).toMatchObject({ name: 'tiny-bert', kind: 'imported', layers: 2, hidden: 8, entityTypes: ['Disease'] })
  expect(r.model!.path.startsWith(ws.modelsDir)).toBe(true)
  expect(ws.listModels().map((m) => m.name)).toEqual(['tiny-bert'])
  const progress = jobEvents('j-2')
  expect(progress.some((p) => p.total === plan.totalBytes && p.done === plan.totalBytes)).toBe(true)
  expect(progress.at(-1)!.message).toMatch(/Importing org\/tiny-bert/)
}, 60_000)

test('models:cached lists the downloaded model (offline) and models:importCached imports it in one call', async () => {
  const list = await call('models:cached', {})
  expect(list).toEqual([
    expect.objectContaining({ repoId: 'org/tiny-bert', revision: COMMIT, layers: 2, hidden: 8, tokenClassifier: true, bytes: weights.length }),
  ])
  const m = await call('models:importCached', { repoId: 'org/tiny-bert' })
  expect(m).toMatchObject({ name: 'tiny-bert (2)', layers: 2, entityTypes: ['Disease'] })
  expect((await fail('models:importCached', { repoId: 'org/not-cached' })).code).toBe('not_found')
  expect(hub.log).toEqual([])
}, 60_000)
