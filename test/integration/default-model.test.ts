// The default model that ships with the app, through the handler table (dispatch, as Electron and
// the e2e harness call it) and the real model host: a workspace without a model gets a copy of
// it, active, so tagging works right after the first import; a workspace with its own model
// never gets one, nor one whose copy the user deleted; without an installed default model
// nothing happens. The "installed" model here is a tiny random three-head checkpoint
// (FASTBIONER_DEFAULT_MODEL points at it), never the real one in resources/.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { EventName, EventPayloads, ModelInfo } from '@shared/ipc'
import { createHandlers, dispatch, type HandlerContext, type Handlers } from '../../src/main/api'
import { callOk as call } from './ipc-calls'
import { writeCorpus } from '../../src/core/corpus'
import { BertTokenClassifier, makeBertConfig } from '../../src/core/model/bert'
import { saveCheckpoint } from '../../src/core/model/checkpoint'
import { findDefaultModel } from '../../src/core/model/default-model'
import { buildLabelMap } from '../../src/core/nlp/bio'
import { Workspace } from '../../src/core/store'
import { WorkspaceSession } from '../../src/main/workspace-session'
import type { ModelHost } from '../../src/host/client'
import { createNodeModelHost } from '../../src/host/node'
import { headEntityTypes } from '../../src/main/models/default-model'
import { syntheticDocs, syntheticVocab } from '../unit/train/synthetic'
import { useCpuBackend } from '../unit/train/tfSetup'

let dir: string
let host: ModelHost
/** The installation's default model folder (three heads, as the shipped one has). */
let shippedDir: string

/** What the recipe writes into the shipped folder's fastbioner.json (made-up figures). */
const BENCHMARK = { split: 'test', tagging: 'every head merged', scores: [{ corpus: 'NCBI-disease', type: 'Disease', f1: 0.5 }, { corpus: 'BC2GM', type: 'Gene', f1: 0.25 }] }

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex')

interface Shell {
  ctx: HandlerContext
  handlers: Handlers
  events: Array<{ event: EventName; payload: unknown }>
  workspace: () => Workspace
  close(): void
}

/** A shell as src/main/index.ts builds it: a workspace open first, then the handler table. */
function startShell(workspacePath: string, defaultModelDir: string): Shell {
  const session = WorkspaceSession.start(workspacePath, 'tester')
  const events: Shell['events'] = []
  const ctx: HandlerContext = {
    user: 'tester',
    defaultWorkspacePath: workspacePath,
    workspace: () => session.current(),
    openWorkspace: (path, opts) => session.open(path, opts),
    workspaceProblem: () => session.problem,
    emit<E extends EventName>(event: E, payload: EventPayloads[E]) {
      events.push({ event, payload: structuredClone(payload) })
    },
    dialogs: { openCorpusFiles: async () => [], saveExport: async () => null },
    modelHost: host,
    findDefaultModel: () => findDefaultModel({ FASTBIONER_DEFAULT_MODEL: defaultModelDir }),
  }
  return { ctx, handlers: createHandlers(ctx), events, workspace: () => session.current(), close: () => session.close() }
}

/** The model the 'models:changed' event announced, once the copy is done. */
async function installed(shell: Shell, timeoutMs = 60_000): Promise<ModelInfo> {
  const t0 = Date.now()
  for (;;) {
    const e = shell.events.find((x) => x.event === 'models:changed')
    if (e) return (e.payload as EventPayloads['models:changed']).model
    if (Date.now() - t0 > timeoutMs) throw new Error('the default model was not installed in time')
    await new Promise((r) => setTimeout(r, 50))
  }
}

const pubtator = async (n: number, seed: number, prefix: string) => (await writeCorpus(syntheticDocs(n, seed, 2, prefix), 'pubtator')).files[0]!.content

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fastbioner-default-model-'))
  host = createNodeModelHost({ env: { FASTBIONER_BACKEND: 'wasm' } })
  const warm = host.request('engineInfo', { modelDir: null })
  const tf = await useCpuBackend()
  // The cpu backend's "install tfjs-node" banner is noise here (it only builds the checkpoint).
  ;(tf.backend() as unknown as { firstUse: boolean }).firstUse = false
  shippedDir = join(dir, 'installation', 'resources', 'models', 'default')
  const vocab = syntheticVocab()
  const config = makeBertConfig({ vocabSize: vocab.length, hiddenSize: 32, numHiddenLayers: 1, numAttentionHeads: 2, intermediateSize: 64, maxPositionEmbeddings: 64 })
  // One head per corpus, in the shipped model's order (MT-BioNER).
  const model = BertTokenClassifier.random(config, 3, {
    ncbi: buildLabelMap(['Disease']).labels,
    bc5cdr: buildLabelMap(['Chemical', 'Disease']).labels,
    bc2gm: buildLabelMap(['Gene']).labels,
  })
  await saveCheckpoint(shippedDir, model, vocab, { lowercase: true, metadata: { benchmark: BENCHMARK } })
  model.dispose()
  writeFileSync(join(shippedDir, 'MODEL_CARD.md'), '# Test default model\n\nRandom weights; for tests only.\n')
  await warm
})

afterAll(async () => {
  await host?.close({ final: true })
  rmSync(dir, { recursive: true, force: true })
})

describe('the default model in a workspace', () => {
  it('derives its types from the heads, in head order', () => {
    expect(headEntityTypes(shippedDir)).toEqual(['Disease', 'Chemical', 'Gene'])
  })

  it('is installed into a fresh workspace, active, as a copy of every file; "Tag all" works right after the first import', async () => {
    const shell = startShell(join(dir, 'fresh', 'workspace.sqlite'), shippedDir)
    try {
      // The first import races with the copy: the installation waits for the import's write lock.
      const content = await pubtator(6, 21, 'first')
      const imported = await call(shell.handlers, 'import:text', { jobId: 'first-import', name: 'first.pubtator', content, format: 'pubtator' })
      expect(imported.files[0]).toMatchObject({ ok: true, imported: 6 })

      const model = await installed(shell)
      expect(model).toMatchObject({
        name: 'Default model (Disease, Chemical, Gene)',
        kind: 'imported',
        shipped: true,
        active: true,
        candidate: false,
        layers: 1,
        hidden: 32,
        entityTypes: ['Chemical', 'Disease', 'Gene'],
      })
      const ws = shell.workspace()
      expect(ws.setting('defaultModel')).toEqual({ decision: 'installed', modelId: model.id, source: shippedDir })
      // A copy inside the workspace (the installation's folder is read-only): the weights byte
      // for byte (f16 stays f16), the model card beside them, all heads kept.
      expect(model.path.startsWith(ws.modelsDir)).toBe(true)
      expect(sha256(join(model.path, 'model.safetensors'))).toBe(sha256(join(shippedDir, 'model.safetensors')))
      expect(readFileSync(join(model.path, 'MODEL_CARD.md'), 'utf8')).toMatch(/Test default model/)
      expect(headEntityTypes(model.path)).toEqual(['Disease', 'Chemical', 'Gene'])
      expect(model.trainingSummary).toMatch(/ships with the app.*MODEL_CARD\.md/)
      // The benchmark scores its folder states, kept in the registry for the Models view.
      expect(model.benchmark).toEqual(BENCHMARK)
      expect(ws.runs().filter((r) => r.kind === 'import')).toMatchObject([{ status: 'done', modelId: model.id }])

      const list = await call(shell.handlers, 'models:list', {})
      expect(list.map((m) => [m.name, m.active, m.shipped, m.benchmark?.scores.length])).toEqual([['Default model (Disease, Chemical, Gene)', true, true, 2]])

      // "Tag all": no model chosen, the active one tags every document.
      const tagged = await call(shell.handlers, 'tag:run', { jobId: 'tag-all' })
      expect(tagged).toMatchObject({ cancelled: false, documents: 6, modelId: model.id })
      const suggested = ws.listDocuments({}).documents.flatMap((d) => ws.getDocument(d.id).annotations.filter((a) => a.state === 'suggested').map((a) => a.type))
      expect(suggested).toHaveLength(tagged.suggestions)
      for (const t of suggested) expect(['Disease', 'Chemical', 'Gene']).toContain(t)

      // Opening the workspace again installs nothing more.
      await call(shell.handlers, 'workspace:open', { path: ws.path })
      expect(shell.workspace().listModels({ includeTraining: true })).toHaveLength(1)
    } finally {
      shell.close()
    }
  })

  it('is not installed into a workspace that has a model of its own, nor later when that model is gone', async () => {
    const path = join(dir, 'own', 'workspace.sqlite')
    const prepared = Workspace.open(path, { user: 'tester' })
    const own = prepared.createModel({ name: 'my tagger', kind: 'teacher', status: 'ready', path: join(prepared.modelsDir, 'my-tagger') })
    prepared.close()
    const shell = startShell(path, shippedDir)
    try {
      const ws = shell.workspace()
      // Decided before the first await: nothing is copied, the decision is remembered.
      expect(ws.setting('defaultModel')).toMatchObject({ decision: 'declined', reason: expect.stringContaining('my tagger') })
      expect(ws.listModels({ includeTraining: true }).map((m) => m.name)).toEqual(['my tagger'])

      await call(shell.handlers, 'models:delete', { id: own.id })
      await call(shell.handlers, 'workspace:open', { path })
      expect(shell.workspace().listModels({ includeTraining: true })).toEqual([])
      expect(shell.workspace().runs()).toEqual([])
      expect(shell.events.filter((e) => e.event === 'models:changed')).toEqual([])
    } finally {
      shell.close()
    }
  })

  it('does not come back after the user deleted it', async () => {
    const path = join(dir, 'deleted', 'workspace.sqlite')
    const shell = startShell(path, shippedDir)
    try {
      const model = await installed(shell)
      await call(shell.handlers, 'models:delete', { id: model.id })
      expect(existsSync(model.path)).toBe(false)
      // Reopened (the same shell, then a new one as after a restart): no copy, no job.
      await call(shell.handlers, 'workspace:open', { path })
      expect(shell.workspace().listModels({ includeTraining: true })).toEqual([])
      shell.close()
      const restarted = startShell(path, shippedDir)
      try {
        expect(restarted.workspace().listModels({ includeTraining: true })).toEqual([])
        expect(restarted.workspace().setting('defaultModel')).toMatchObject({ decision: 'installed', modelId: model.id })
        expect(restarted.workspace().runs().filter((r) => r.kind === 'import')).toHaveLength(1)
        await new Promise((r) => setTimeout(r, 200))
        expect(restarted.events).toEqual([])
      } finally {
        restarted.close()
      }
    } finally {
      shell.close()
    }
  })

  it('without an installed default model: nothing happens, one log line, no error; it is installed once there is one', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    const missing = join(dir, 'no-installation', 'models', 'default')
    const path = join(dir, 'none', 'workspace.sqlite')
    const shell = startShell(path, missing)
    try {
      await call(shell.handlers, 'workspace:open', { path: join(dir, 'none-2', 'workspace.sqlite'), create: true })
      await call(shell.handlers, 'workspace:open', { path })
      const ws = shell.workspace()
      expect(ws.listModels({ includeTraining: true })).toEqual([])
      expect(ws.setting('defaultModel')).toBeNull()
      expect(ws.runs()).toEqual([])
      expect(warn.mock.calls.map((c) => String(c[0])).filter((l) => /no default model is installed/.test(l))).toHaveLength(1)
      expect(warn.mock.calls[0]![0]).toContain(missing)
      expect(error).not.toHaveBeenCalled()
      expect(await call(shell.handlers, 'models:list', {})).toEqual([])
    } finally {
      shell.close()
      warn.mockRestore()
      error.mockRestore()
    }
    // Installed later (an update that ships one): the undecided workspace gets it then.
    const later = startShell(path, shippedDir)
    try {
      expect((await installed(later)).shipped).toBe(true)
    } finally {
      later.close()
    }
  })

  it('a folder that is not a checkpoint: the error is logged, nothing is registered or remembered', async () => {
    const broken = join(dir, 'broken-installation', 'models', 'default')
    mkdirSync(broken, { recursive: true })
    writeFileSync(join(broken, 'config.json'), JSON.stringify({ model_type: 'bert', hidden_size: 32, num_attention_heads: 2 }))
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    const shell = startShell(join(dir, 'broken', 'workspace.sqlite'), broken)
    try {
      await vi.waitFor(() => expect(error).toHaveBeenCalled())
      expect(String(error.mock.calls[0]![0])).toMatch(/default model was not installed.*vocab\.txt: missing/)
      const ws = shell.workspace()
      expect(ws.listModels({ includeTraining: true })).toEqual([])
      expect(ws.setting('defaultModel')).toBeNull()
      expect(existsSync(ws.modelsDir) ? readdirSync(ws.modelsDir) : []).toEqual([])
    } finally {
      shell.close()
      error.mockRestore()
    }
  })
})
