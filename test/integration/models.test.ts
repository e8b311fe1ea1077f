// The model-in-the-loop channels through the handler table (dispatch, as Electron and the e2e
// harness call it), with the real model host process (createNodeModelHost) and tiny models:
// registry + import, training from scratch (and the IPC latency meanwhile), tagging into
// suggestions, accept/reject, the review queue, retraining with keep/discard/cancel, recovery of
// an interrupted retrain, distillation and comparison. One host serves the whole file.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Channel, EventName, EventPayloads, ModelInfo, ResponseOf } from '@shared/ipc'
import { PUBLISHED_FASTBIONER } from '@shared/published'
import type { CorpusDocument } from '@shared/domain'
import { createHandlers, dispatch, type HandlerContext, type Handlers } from '../../src/main/api'
import { callError, callOk } from './ipc-calls'
import { writeCorpus } from '../../src/core/corpus'
import { isStoreError, StoreError, Workspace } from '../../src/core/store'
import { BertTokenClassifier, makeBertConfig } from '../../src/core/model/bert'
import { bertConfigToHf, exportHfTensors, HEADS_KEY, saveCheckpoint } from '../../src/core/model/checkpoint'
import { writeSafetensors } from '../../src/core/model/safetensors'
import { buildLabelMap } from '../../src/core/nlp/bio'
import { isInt8Folder, quantizeModelFolder } from '../../src/core/onnx/quantize'
import type { ModelHost } from '../../src/host/client'
import { createNodeModelHost } from '../../src/host/node'
import { splitDocuments } from '../../src/main/models'
import { PROGRESS_INTERVAL_MS } from '../../src/main/jobs'
import { syntheticDocs, syntheticVocab } from '../unit/train/synthetic'
import { useCpuBackend } from '../unit/train/tfSetup'

/** Runs `f` on a clock that moves PROGRESS_INTERVAL_MS further at every reading, so no throttled progress event is dropped. */
async function withSteppingClock<T>(f: () => Promise<T>): Promise<T> {
  const realNow = performance.now.bind(performance)
  let ahead = 0
  const clock = vi.spyOn(performance, 'now').mockImplementation(() => realNow() + (ahead += PROGRESS_INTERVAL_MS))
  try {
    return await f()
  } finally {
    clock.mockRestore()
  }
}

let dir: string
let ws: Workspace
let host: ModelHost
let handlers: Handlers
let ctx: HandlerContext
const events: Array<{ event: EventName; payload: unknown }> = []
let pickedFolder: string | null = null

function makeCtx(overrides: Partial<HandlerContext> = {}): HandlerContext {
  return {
    user: 'tester',
    defaultWorkspacePath: join(dir, 'ws.sqlite'),
    workspace: () => ws,
    openWorkspace() {
      throw new Error('not used')
    },
    emit<E extends EventName>(event: E, payload: EventPayloads[E]) {
      events.push({ event, payload: structuredClone(payload) })
    },
    dialogs: {
      openCorpusFiles: async () => [],
      saveExport: async () => null,
      openModelFolder: async () => pickedFolder,
    },
    modelHost: host,
    ...overrides,
  }
}

const call = <C extends Channel>(channel: C, payload: unknown, h: Handlers = handlers) => callOk(h, channel, payload)
const fail = (channel: Channel, payload: unknown, h: Handlers = handlers) => callError(h, channel, payload)

const trainEvents = (jobId: string) =>
  events.filter((e) => e.event === 'train:progress' && (e.payload as { jobId: string }).jobId === jobId).map((e) => e.payload as EventPayloads['train:progress'])
const jobEvents = (jobId: string) =>
  events.filter((e) => e.event === 'job:progress' && (e.payload as { jobId: string }).jobId === jobId).map((e) => e.payload as EventPayloads['job:progress'])

function folderHash(path: string): string {
  const h = createHash('sha256')
  for (const f of readdirSync(path).sort()) if (f !== 'model.onnx') h.update(f).update(readFileSync(join(path, f)))
  return h.digest('hex')
}

/** A tiny random classifier for the synthetic vocabulary. */
function tinyModel(labels: string[], seed = 5): BertTokenClassifier {
  const vocab = syntheticVocab()
  const config = makeBertConfig({ vocabSize: vocab.length, hiddenSize: 32, numHiddenLayers: 2, numAttentionHeads: 2, intermediateSize: 64, maxPositionEmbeddings: 64 })
  return BertTokenClassifier.random(config, seed, { default: labels })
}

/** An HF folder of a bare encoder (no classifier), as a BioBERT download looks. */
function writeBareEncoder(path: string): void {
  const model = tinyModel(['O'])
  mkdirSync(path, { recursive: true })
  const tensors = exportHfTensors(model)
  for (const name of [...tensors.keys()]) if (name.startsWith('classifier')) tensors.delete(name)
  writeSafetensors(join(path, 'model.safetensors'), tensors)
  const cfg = bertConfigToHf(model.config, new Map()) as Record<string, unknown>
  delete cfg[HEADS_KEY]
  delete cfg.id2label
  delete cfg.label2id
  cfg.architectures = ['BertModel']
  writeFileSync(join(path, 'config.json'), JSON.stringify(cfg))
  writeFileSync(join(path, 'vocab.txt'), syntheticVocab().join('\n') + '\n')
  model.dispose()
}

/** A tiny random BERT teacher folder (synthetic vocabulary) for these entity types. */
async function saveTinyTeacher(name: string, types: string[]): Promise<string> {
  const path = join(dir, name)
  const m = tinyModel(buildLabelMap(types).labels, 9)
  await saveCheckpoint(path, m, syntheticVocab(), { lowercase: true })
  m.dispose()
  return path
}

const unlabelled = (docs: CorpusDocument[]): CorpusDocument[] => docs.map((d) => ({ ...d, mentions: [] }))

let trained: ModelInfo

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fastbioner-models-'))
  ws = Workspace.open(join(dir, 'ws.sqlite'), { user: 'tester' })
  host = createNodeModelHost({ env: { FASTBIONER_BACKEND: 'wasm' } })
  // Start the host (and its backend) while the workspace fills.
  const warm = host.request('engineInfo', { modelDir: null })
  await ws.importDocuments(syntheticDocs(32, 11, 4, 'gold'), 'gold.pubtator')
  await ws.importDocuments(unlabelled(syntheticDocs(12, 12, 4, 'new')), 'new.txt')
  ctx = makeCtx()
  handlers = createHandlers(ctx)
  const tf = await useCpuBackend()
  // The cpu backend's "install tfjs-node" banner is noise here (it only builds test checkpoints).
  ;(tf.backend() as unknown as { firstUse: boolean }).firstUse = false
  await warm
})

afterAll(async () => {
  await host?.close({ final: true })
  ws?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('model registry', () => {
  it('carries the published FastBioNER figures', () => {
    expect(PUBLISHED_FASTBIONER.rows.map((r) => [r.layers, r.f1Retention, r.sizeReduction, r.timeReduction])).toEqual([
      [6, 0.988, 0.393, 0.462],
      [4, 0.959, 0.524, 0.608],
      [3, 0.945, 0.589, 0.688],
    ])
  })

  it('imports HF folders: with a classifier as "imported", a bare encoder as a teacher with a new head; refuses pytorch_model.bin', async () => {
    const withHead = join(dir, 'src-with-head')
    const m = tinyModel(buildLabelMap(['Disease']).labels)
    await saveCheckpoint(withHead, m, syntheticVocab(), { lowercase: true })
    m.dispose()
    const a = await call('models:import', { path: withHead, name: 'tiny imported' })
    expect(a).toMatchObject({ name: 'tiny imported', kind: 'imported', layers: 2, hidden: 32, heads: 2, entityTypes: ['Disease'], active: true, candidate: false })
    expect(a.parameters).toBeGreaterThan(10_000)
    expect(a.bytes).toBeGreaterThan(a.parameters * 4 - 1)
    expect(a.path.startsWith(join(dir, 'models'))).toBe(true)
    expect(existsSync(join(a.path, 'model.safetensors'))).toBe(true)

    const bare = join(dir, 'src-bare')
    writeBareEncoder(bare)
    const b = await call('models:import', { path: bare })
    expect(b.kind).toBe('teacher')
    expect(b.name).toBe('src-bare')
    expect(b.entityTypes).toEqual(['Disease'])
    expect(b.active).toBe(false)
    expect(b.notes.join(' ')).toMatch(/no classifier in the checkpoint: imported as a teacher with a new head for Disease/)

    const pt = join(dir, 'src-pytorch')
    mkdirSync(pt)
    writeFileSync(join(pt, 'config.json'), readFileSync(join(bare, 'config.json')))
    writeFileSync(join(pt, 'vocab.txt'), readFileSync(join(bare, 'vocab.txt')))
    writeFileSync(join(pt, 'pytorch_model.bin'), 'not really a pickle')
    const err = await fail('models:import', { path: pt })
    expect(err.code).toBe('invalid_request')
    expect(err.message).toMatch(/pytorch_model\.bin.*model\.safetensors/)
    expect(err.message).toContain('save_pretrained')
    // Nothing is left behind by a failed import.
    expect((await call('models:list', {})).map((x) => x.name)).toEqual(['tiny imported', 'src-bare'])
    expect(readdirSync(join(dir, 'models')).sort()).toEqual(['src-bare', 'tiny-imported'])

    // A duplicate explicit name is a conflict.
    expect((await fail('models:import', { path: withHead, name: 'tiny imported' })).code).toBe('conflict')
  })

  it('keeps exactly one active model, refuses paths not chosen in the dialog, deletes files', async () => {
    const [a, b] = await call('models:list', {})
    expect((await call('models:setActive', { id: b!.id })).active).toBe(true)
    expect((await call('models:list', {})).filter((x) => x.active).map((x) => x.id)).toEqual([b!.id])

    // The Electron shell's rule: only paths from this session's own dialog.
    const strict = createHandlers(makeCtx({ restrictPathsToDialogs: true }))
    const refused = await fail('models:import', { path: join(dir, 'src-bare') }, strict)
    expect(refused.message).toMatch(/was not chosen in a file dialog/)
    pickedFolder = join(dir, 'src-bare')
    expect(await call('dialog:openModelFolder', {}, strict)).toEqual({ path: pickedFolder })
    const c = await call('models:import', { path: pickedFolder, name: 'via dialog' }, strict)
    expect(c.kind).toBe('teacher')
    // The dialog's answer imported one model; a second import needs the dialog again.
    expect((await fail('models:import', { path: pickedFolder, name: 'again' }, strict)).message).toMatch(/good for one use/)

    // Deleting the active model activates the newest remaining one and removes the folder.
    await call('models:delete', { id: b!.id })
    expect(existsSync(b!.path)).toBe(false)
    const left = await call('models:list', {})
    expect(left.map((x) => x.id)).toEqual([a!.id, c.id])
    expect(left.find((x) => x.active)!.id).toBe(c.id)
    await call('models:delete', { id: c.id })
    expect((await call('models:list', {})).find((x) => x.active)!.id).toBe(a!.id)
    expect((await fail('models:delete', { id: 9999 })).code).toBe('not_found')
  })

  it('cancels an import that has a job id: no model, no folder, the run recorded as cancelled', async () => {
    const before = ws.listModels({ includeTraining: true }).map((m) => m.id)
    const folders = readdirSync(join(dir, 'models')).sort()
    const pending = dispatch(handlers, 'models:import', { path: join(dir, 'src-with-head'), name: 'to cancel', jobId: 'import-cancel' })
    expect(await call('jobs:cancel', { jobId: 'import-cancel' })).toEqual({ cancelled: true })
    expect(await pending).toMatchObject({ ok: false, error: { code: 'cancelled', message: expect.stringMatching(/cancelled: no model was added/) } })
    expect(ws.listModels({ includeTraining: true }).map((m) => m.id)).toEqual(before)
    expect(readdirSync(join(dir, 'models')).sort()).toEqual(folders)
    expect(ws.runs().filter((r) => r.kind === 'import').at(-1)).toMatchObject({ status: 'cancelled' })
  })

  it('imports an int8 folder (fastbioner quantize) as int8: weights kept int8, labelled in the registry', async () => {
    const float = join(dir, 'src-float-for-int8')
    const m = tinyModel(buildLabelMap(['Disease']).labels)
    await saveCheckpoint(float, m, syntheticVocab(), { lowercase: true })
    m.dispose()
    const int8 = join(dir, 'src-int8')
    await quantizeModelFolder(float, int8)
    const before = await call('models:list', {})
    const q = await call('models:import', { path: int8, name: 'tiny int8' })
    expect(q).toMatchObject({ name: 'tiny int8', kind: 'imported', layers: 2, hidden: 32, weights: 'int8', entityTypes: ['Disease'] })
    expect(before.every((x) => x.weights === 'float32')).toBe(true)
    // The registered copy still holds int8 weights (not the dequantized floats) and its provenance.
    const st = readFileSync(join(q.path, 'model.safetensors'))
    expect(st.subarray(8, 8 + Number(st.readBigUInt64LE(0))).toString()).toContain('"dtype":"I8"')
    expect(JSON.parse(readFileSync(join(q.path, 'fastbioner.json'), 'utf8')).quantization.parent.dir).toBe(float)
    expect((await call('models:list', {})).find((x) => x.id === q.id)!.weights).toBe('int8')
    await call('models:delete', { id: q.id })
  })

  it("host job quantize: a folder that is not a model, an int8 one or a used output folder is refused clearly, and nothing is written", async () => {
    const refusal = async (modelDir: string, outDir: string) => {
      const e = await host.request('quantize', { modelDir, outDir, dev: [] }).then(
        () => null,
        (err: unknown) => err,
      )
      if (!isStoreError(e)) throw new Error(`expected an invalid_request refusal, got ${String(e)}`)
      expect(e.code).toBe('invalid_request')
      return e.message
    }
    const leftovers = () => readdirSync(dir).filter((n) => n.includes('fastbioner-tmp'))

    const notModel = join(dir, 'not-a-model')
    mkdirSync(notModel)
    writeFileSync(join(notModel, 'notes.txt'), 'just notes\n')
    const out = join(dir, 'int8-of-notes')
    expect(await refusal(notModel, out)).toContain(join(notModel, 'config.json'))
    expect(existsSync(out)).toBe(false)

    const float = join(dir, 'float-for-refusals')
    const m = tinyModel(buildLabelMap(['Disease']).labels)
    await saveCheckpoint(float, m, syntheticVocab(), { lowercase: true })
    m.dispose()
    const int8 = join(dir, 'int8-for-refusals')
    await quantizeModelFolder(float, int8)
    const again = join(dir, 'int8-of-int8')
    expect(await refusal(int8, again)).toMatch(/already an int8 model/)
    expect(existsSync(again)).toBe(false)

    // A user's folder with a file in it is never written into.
    const used = join(dir, 'users-folder')
    mkdirSync(used)
    writeFileSync(join(used, 'keep.txt'), 'mine')
    expect(await refusal(float, used)).toMatch(/not empty/)
    expect(readdirSync(used)).toEqual(['keep.txt'])
    expect(readFileSync(join(used, 'keep.txt'), 'utf8')).toBe('mine')
    expect(leftovers()).toEqual([])
  })

  it('reports the training backend and the inference engine', async () => {
    const info = await call('engine:info', {})
    expect(info.trainingBackend).toBe('wasm')
    expect(info.trainingBackendReason).toMatch(/WebAssembly/)
    expect(info.inferenceEngine).toMatch(/^(onnxruntime-cpu|tfjs-wasm)$/)
    expect(info.inferenceEngineReason.length).toBeGreaterThan(10)
  })
})

describe('training, tagging and suggestions', () => {
  it('trains a model from scratch with live progress while IPC stays responsive', async () => {
    expect((await fail('models:train', { jobId: 'bad', name: 'x', preset: 'huge' })).message).toMatch(/Unknown preset/)
    const pending = call('models:train', { jobId: 'train-1', name: 'tiny trained', preset: 'cpu-tiny', epochs: 5, seed: 3 })
    // Trivial calls through dispatch every 20 ms while the host trains: the window-never-freezes goal.
    const rtts: number[] = []
    let done = false
    void pending.finally(() => (done = true))
    while (!done) {
      const t0 = performance.now()
      await call('workspace:info', {})
      rtts.push(performance.now() - t0)
      await new Promise((r) => setTimeout(r, 20))
    }
    const r = await pending
    const worst = Math.max(...rtts)
    console.log(`[ipc-latency] ${rtts.length} workspace:info calls during models:train: max ${worst.toFixed(1)} ms, median ${rtts.sort((a, b) => a - b)[rtts.length >> 1]!.toFixed(2)} ms`)
    // The < 100 ms goal is measured by bench/ipc-latency.ts; here: calls are answered all along.
    expect(rtts.length).toBeGreaterThan(1)

    expect(r.cancelled).toBe(false)
    trained = r.model!
    expect(trained).toMatchObject({ name: 'tiny trained', kind: 'teacher', layers: 2, hidden: 128, trainedOn: 'wasm', entityTypes: ['Disease'], active: false })
    expect(trained.trainingSummary).toMatch(/29 documents .*3 held out for devel; cpu-tiny from scratch, 5 of 5 epochs/)
    expect(trained.devScores!.f1).toBeGreaterThan(0.5)
    expect(trained.devScores!.types.Disease).toBeDefined()

    const steps = trainEvents('train-1')
    expect(steps.length).toBeGreaterThan(3)
    expect(steps.every((s) => s.label === 'tiny trained' && s.totalSteps > 0 && s.etaSeconds >= 0)).toBe(true)
    expect(steps.filter((s) => s.devF1 !== undefined).map((s) => s.epoch)).toEqual([1, 2, 3, 4, 5])
    expect(jobEvents('train-1').some((e) => e.total > 0 && e.etaSeconds !== undefined)).toBe(true)
    await call('models:setActive', { id: trained.id })
  })

  it('tags the workspace into suggestions that never overlap accepted annotations, with progress, ETA and uncertainty', async () => {
    // A person's annotation on a new document: the model's mention there must not be stored.
    const newDoc = ws.listDocuments({ query: 'new0' }).documents[0]!
    const text = ws.getDocument(newDoc.id).text
    const word = syntheticDocs(12, 12, 4, 'new')[0]!.mentions[0]!
    const mine = await call('annotations:create', { documentId: newDoc.id, start: word.start, end: word.end, type: 'Disease' })
    expect(text.slice(mine.start, mine.end)).toBe(word.text)

    // Progress is throttled to one event per PROGRESS_INTERVAL_MS: on a quick machine every chunk
    // lands inside one interval and only the last survives, so the run sees a clock on which each
    // reading is an interval later.
    const r = await withSteppingClock(() => call('tag:run', { jobId: 'tag-1' }))
    expect(r).toMatchObject({ cancelled: false, documents: 44, modelId: trained.id })
    expect(r.engine).toMatch(/^(onnxruntime-cpu|tfjs-wasm)$/)
    expect(r.suggestions).toBeGreaterThan(20)
    expect(r.dropped).toBeGreaterThan(20) // the gold documents' mentions are all taken
    const progress = jobEvents('tag-1')
    expect(progress.at(-1)).toMatchObject({ done: 44, total: 44, message: 'Tagging finished' })
    expect(progress.some((p) => p.done > 0 && p.done < 44 && p.etaSeconds! >= 0)).toBe(true)

    for (const d of ws.listDocuments({ limit: 100 }).documents) {
      const anns = ws.getDocument(d.id).annotations
      const accepted = anns.filter((a) => a.state === 'accepted')
      for (const s of anns.filter((a) => a.state === 'suggested')) {
        expect(s.origin).toBe('model')
        expect(s.confidence!).toBeGreaterThan(0)
        expect(s.confidence!).toBeLessThanOrEqual(1)
        expect(s.updatedBy).toBe('model:tiny trained')
        expect(accepted.some((a) => a.start < s.end && a.end > s.start)).toBe(false)
      }
    }
    const doc0 = ws.getDocument(newDoc.id)
    expect(doc0.annotations.filter((a) => a.state === 'suggested').length).toBeGreaterThan(0)
    expect(doc0.annotations.find((a) => a.id === mine.id)).toMatchObject({ state: 'accepted', origin: 'person' })

    // Re-tagging replaces the previous suggestions (deleted with revisions), it does not add to them.
    const before = ws.getDocument(newDoc.id).annotations.filter((a) => a.state === 'suggested')
    const again = await call('tag:run', { jobId: 'tag-2', documentIds: [newDoc.id] })
    expect(again.documents).toBe(1)
    const after = ws.getDocument(newDoc.id).annotations.filter((a) => a.state === 'suggested')
    expect(after.length).toBe(before.length)
    expect(after.map((a) => a.id)).not.toEqual(before.map((a) => a.id))
    const deletions = ws.history(newDoc.id).filter((h) => h.action === 'delete' && h.by === 'model:tiny trained')
    expect(deletions.map((h) => h.annotationId).sort()).toEqual(before.map((a) => a.id).sort())

    // The review queue: documents not done, most uncertain first.
    const queue = await call('review:queue', { limit: 100 })
    expect(queue.length).toBe(44)
    expect(queue.map((q) => q.uncertainty)).toEqual([...queue.map((q) => q.uncertainty)].sort((a, b) => b - a))
    expect(queue.every((q) => q.uncertainty >= 0 && q.uncertainty < 1 && q.status !== 'done')).toBe(true)
    await call('documents:setStatus', { id: queue[0]!.documentId, status: 'done' })
    expect((await call('review:queue', {})).some((q) => q.documentId === queue[0]!.documentId)).toBe(false)
    await call('documents:setStatus', { id: queue[0]!.documentId, status: 'unreviewed' })
  })

  it('cancels a tag run between batches; what was written stays whole', async () => {
    const ids = ws.listDocuments({ limit: 100 }).documents.map((d) => d.id)
    const pending = dispatch(handlers, 'tag:run', { jobId: 'tag-cancel', documentIds: ids })
    await new Promise((r) => setTimeout(r, 5))
    expect(await call('jobs:cancel', { jobId: 'tag-cancel' })).toEqual({ cancelled: true })
    const r = await pending
    expect(r.ok).toBe(true)
    const v = (r as { value: ResponseOf<'tag:run'> }).value
    expect(v.cancelled).toBe(true)
    expect(v.documents).toBeLessThan(ids.length)
    expect(v.documents % 16 === 0 || v.documents === ids.length).toBe(true)
  })

  it('accepts (person-confirmed, with history), rejects and accepts above a threshold', async () => {
    const newDocs = ws.listDocuments({ query: 'new' }).documents
    const d1 = ws.getDocument(newDocs[1]!.id)
    const sug = d1.annotations.filter((a) => a.state === 'suggested')
    expect(sug.length).toBeGreaterThanOrEqual(2)
    expect(d1.status).toBe('unreviewed')

    expect(await call('suggestions:accept', { ids: [sug[0]!.id] })).toEqual({ accepted: 1 })
    const accepted = ws.getDocument(d1.id).annotations.find((a) => a.id === sug[0]!.id)!
    expect(accepted).toMatchObject({ state: 'accepted', origin: 'person', confidence: sug[0]!.confidence, updatedBy: 'tester' })
    const rev = ws.history(d1.id).at(-1)!
    expect(rev).toMatchObject({ action: 'update', by: 'tester', annotationId: sug[0]!.id })
    expect(rev.before).toMatchObject({ state: 'suggested', origin: 'model' })
    expect(rev.after).toMatchObject({ state: 'accepted', origin: 'person' })
    expect(ws.getDocument(d1.id).status).toBe('in_progress')
    // Accepting it again: it is no longer a suggestion.
    expect((await fail('suggestions:accept', { ids: [sug[0]!.id] })).code).toBe('conflict')

    expect(await call('suggestions:reject', { ids: [sug[1]!.id] })).toEqual({ rejected: 1 })
    expect(ws.getDocument(d1.id).annotations.some((a) => a.id === sug[1]!.id)).toBe(false)
    expect(ws.history(d1.id).at(-1)).toMatchObject({ action: 'delete', by: 'tester', annotationId: sug[1]!.id })

    const d2 = ws.getDocument(newDocs[2]!.id)
    const s2 = d2.annotations.filter((a) => a.state === 'suggested')
    const threshold = 0.5
    const expected = s2.filter((a) => a.confidence! >= threshold).length
    expect(await call('suggestions:acceptAbove', { threshold, documentId: d2.id })).toEqual({ accepted: expected })
    expect(ws.getDocument(d2.id).annotations.filter((a) => a.state === 'suggested').every((a) => a.confidence! < threshold)).toBe(true)
    // Other documents are untouched by a per-document acceptAbove.
    expect(ws.getDocument(newDocs[3]!.id).annotations.some((a) => a.state === 'suggested')).toBe(true)

    // A person's annotation over a suggestion replaces it (the suggestion is deleted, with a revision).
    const d3 = ws.getDocument(newDocs[3]!.id)
    const s3 = d3.annotations.find((a) => a.state === 'suggested')!
    const mine = await call('annotations:create', { documentId: d3.id, start: s3.start, end: s3.end, type: 'Disease' })
    const after3 = ws.getDocument(d3.id).annotations
    expect(after3.some((a) => a.id === s3.id)).toBe(false)
    expect(after3.find((a) => a.id === mine.id)!.state).toBe('accepted')
  })
})

describe('retraining from corrections', () => {
  it('splits by document with a seed', () => {
    const docs = Array.from({ length: 20 }, (_, i) => i)
    const a = splitDocuments(docs, 4, 7)
    expect(a.heldOut.length).toBe(4)
    expect([...a.train, ...a.heldOut].sort((x, y) => x - y)).toEqual(docs)
    expect(splitDocuments(docs, 4, 7)).toEqual(a)
    expect(splitDocuments(docs, 4, 8).heldOut).not.toEqual(a.heldOut)
  })

  it('scores before, fine-tunes with a live curve, scores after; the candidate waits for keep', async () => {
    // Reviewed documents: mark 14 gold documents done.
    const gold = ws.listDocuments({ query: 'gold', limit: 100 }).documents.slice(0, 14)
    for (const d of gold) await call('documents:setStatus', { id: d.id, status: 'done' })
    const baseHash = folderHash(trained.path)
    const { byStatus } = ws.listDocuments({}).counts
    const reviewed = byStatus.done + byStatus.in_progress
    expect(byStatus.done).toBe(14)
    expect(byStatus.in_progress).toBeGreaterThanOrEqual(3) // edited above
    const r = await call('retrain:start', { jobId: 'rt-1', baseModelId: trained.id, epochs: 2, seed: 1 })
    expect(r.cancelled).toBe(false)
    expect(r.baseModelId).toBe(trained.id)
    // The fixed held-out set: about one reviewed document in five, at least three, the same on every retrain.
    expect(r.heldOutDocuments).toBeGreaterThanOrEqual(3)
    expect(r.heldOutDocuments).toBeLessThan(reviewed)
    expect(r.trainDocuments).toBe(reviewed - r.heldOutDocuments)
    // A finished retrain is a point on the learning curve.
    const curve = (await call('learning:get', {})).curve
    expect(curve.at(-1)).toMatchObject({ trigger: 'manual', reviewed, heldOut: r.heldOutDocuments, modelId: r.candidate!.id, baseModelId: trained.id })
    expect(curve.at(-1)!.f1After).toBeCloseTo(r.after!.f1, 10)
    expect(r.before.f1).toBeGreaterThanOrEqual(0)
    expect(r.after!.f1).toBeGreaterThan(0)
    expect(r.curve.filter((p) => p.devF1 !== undefined).length).toBe(2)
    expect(r.curve.filter((p) => p.devF1 === undefined).length).toBeGreaterThan(1)
    expect(trainEvents('rt-1').filter((e) => e.devF1 !== undefined).length).toBe(2)
    const cand = r.candidate!
    expect(cand).toMatchObject({ candidate: true, active: false, parentId: trained.id, kind: 'teacher' })
    expect(cand.devScores!.f1).toBeCloseTo(r.after!.f1, 10)
    expect(folderHash(trained.path)).toBe(baseHash)
    // A candidate cannot tag nor be made active before the decision.
    expect((await fail('models:setActive', { id: cand.id })).code).toBe('conflict')

    const kept = await call('retrain:decide', { candidateId: cand.id, keep: true })
    expect(kept.model).toMatchObject({ id: cand.id, active: true, candidate: false })
    expect((await fail('retrain:decide', { candidateId: cand.id, keep: false })).code).toBe('conflict')
    await call('models:setActive', { id: trained.id })
  })

  it('discards a candidate (row and files), and a cancelled retrain leaves the base untouched and no candidate', async () => {
    // Extra corpus files join the training split; in the shell they must come from the corpus dialog.
    const extra = join(dir, 'extra.pubtator')
    writeFileSync(extra, (await writeCorpus(syntheticDocs(5, 99, 2, 'extra'), 'pubtator')).files[0]!.content)
    const strict = createHandlers(makeCtx({ restrictPathsToDialogs: true }))
    expect((await fail('retrain:start', { jobId: 'rt-x', baseModelId: trained.id, extraCorpusPaths: [extra] }, strict)).message).toMatch(/not chosen in a file dialog/)
    const r = await call('retrain:start', { jobId: 'rt-2', baseModelId: trained.id, epochs: 1, extraCorpusPaths: [extra] })
    const { byStatus } = ws.listDocuments({}).counts
    expect(r.trainDocuments).toBe(byStatus.done + byStatus.in_progress - r.heldOutDocuments + 5)
    expect(r.notes.join(' ')).toContain('5 extra training documents')
    const cand = r.candidate!
    expect(existsSync(cand.path)).toBe(true)
    expect(await call('retrain:decide', { candidateId: cand.id, keep: false })).toEqual({ kept: false, model: null })
    expect(existsSync(cand.path)).toBe(false)
    expect((await call('models:list', {})).some((m) => m.id === cand.id)).toBe(false)

    const baseHash = folderHash(trained.path)
    const namesBefore = (await call('models:list', {})).map((m) => m.name)
    const foldersBefore = readdirSync(join(dir, 'models')).sort()
    const pending = call('retrain:start', { jobId: 'rt-3', baseModelId: trained.id, epochs: 20 })
    // Cancel once training steps flow.
    while (!trainEvents('rt-3').length) await new Promise((res) => setTimeout(res, 20))
    // The base is in use: it cannot be deleted meanwhile.
    expect((await fail('models:delete', { id: trained.id })).code).toBe('conflict')
    await call('jobs:cancel', { jobId: 'rt-3' })
    const c = await pending
    expect(c.cancelled).toBe(true)
    expect(c.candidate).toBeNull()
    expect(c.after).toBeNull()
    expect(folderHash(trained.path)).toBe(baseHash)
    expect((await call('models:list', {})).map((m) => m.name)).toEqual(namesBefore)
    expect(readdirSync(join(dir, 'models')).sort()).toEqual(foldersBefore)
    expect(ws.runs().filter((x) => x.kind === 'retrain').map((x) => x.status)).toEqual(['done', 'done', 'cancelled'])
  })

  it('removes what an interrupted retrain left (app closed mid-job) the next time the workspace is used', async () => {
    const path = join(dir, 'models', 'interrupted')
    mkdirSync(path)
    writeFileSync(join(path, 'model.safetensors'), 'partial')
    const rec = ws.createModel({ name: 'tiny trained (retrained 9)', kind: 'teacher', status: 'training', path, parentId: trained.id })
    const runId = ws.startRun('retrain', rec.id, {})
    // A new handler table = the app started again.
    const fresh = createHandlers(makeCtx())
    const list = await call('models:list', {}, fresh)
    expect(list.some((m) => m.id === rec.id)).toBe(false)
    expect(list.some((m) => m.id === trained.id)).toBe(true)
    // The folder is removed in the background; wait for it rather than for a fixed time.
    await vi.waitFor(() => expect(existsSync(path)).toBe(false), { timeout: 10_000, interval: 25 })
    expect(ws.runs().find((x) => x.id === runId)!.status).toBe('failed')
  })

  it('Auto-improve: after N newly reviewed documents the retrain job runs from the active model, is kept only if no worse on the held-out documents, and re-tags the unreviewed ones', async () => {
    await call('models:setActive', { id: trained.id })
    const pointsBefore = (await call('learning:get', {})).curve.length
    const eventsBefore = events.length
    expect((await call('learning:set', { autoImprove: { enabled: true, every: 1 } })).autoImprove).toMatchObject({ enabled: true, every: 1, reviewedSince: 0, running: false })
    const next = ws.listDocuments({ status: 'unreviewed', limit: 1 }).documents[0]!
    await call('documents:setStatus', { id: next.id, status: 'done' })
    // The round started with the request that made the count; it ends in the background.
    expect((await call('learning:get', {})).autoImprove.running).toBe(true)
    await vi.waitFor(
      async () => {
        const s = await call('learning:get', {})
        expect(s.autoImprove.running).toBe(false)
        expect(s.autoImprove.lastOutcome).not.toBeNull()
      },
      { timeout: 60_000, interval: 100 },
    )
    const s = await call('learning:get', {})
    expect(s.curve).toHaveLength(pointsBefore + 1)
    const point = s.curve.at(-1)!
    expect(point).toMatchObject({ trigger: 'auto', baseModelId: trained.id })
    const loopEvents = events.slice(eventsBefore).filter((e) => e.event === 'learning:changed').map((e) => e.payload as EventPayloads['learning:changed'])
    expect(loopEvents.some((e) => e.autoImprove.running)).toBe(true)
    expect(loopEvents.at(-1)!.autoImprove.running).toBe(false)
    const active = (await call('models:list', {})).find((m) => m.active)!
    const unreviewed = ws.listDocuments({ status: 'unreviewed', limit: 1000 }).documents
    if (point.f1After >= point.f1Before) {
      expect(active.id).toBe(point.modelId)
      expect(s.autoImprove.lastOutcome).toMatch(unreviewed.length ? /^Kept .*; re-tagged \d+ unreviewed document/ : /^Kept /)
      // The unreviewed documents' suggestions now come from the new model.
      for (const d of unreviewed) expect(ws.getDocument(d.id).suggestionModelId).toBe(active.id)
    } else {
      expect(active.id).toBe(trained.id)
      expect(s.autoImprove.lastOutcome).toMatch(/^Discarded the automatic retrain/)
    }
    // As the other tests left it: off, the first model active, the document unreviewed, no extra model.
    await call('learning:set', { autoImprove: { enabled: false } })
    await call('models:setActive', { id: trained.id })
    if (active.id !== trained.id) await call('models:delete', { id: active.id })
    await call('documents:setStatus', { id: next.id, status: 'unreviewed' })
  }, 90_000)
})

describe('compression', () => {
  let student: ModelInfo
  let int8: ModelInfo

  it('distils the teacher into a registered student and its int8 version', async () => {
    expect((await fail('distill:start', { jobId: 'd0', teacherIds: [trained.id], layers: [3], mode: 'dynamic' })).message).toMatch(/at most/)
    const r = await call('distill:start', { jobId: 'd1', teacherIds: [trained.id], layers: [1], mode: 'dynamic', epochs: 2, seed: 2, int8: true })
    expect(r.cancelled).toBe(false)
    expect(r.students.length).toBe(2)
    student = r.students[0]!
    expect(student).toMatchObject({
      kind: 'student',
      layers: 1,
      weights: 'float32',
      parentId: trained.id,
      distillation: { teachers: [{ id: trained.id, name: trained.name }], method: 'soft-labels', mode: 'dynamic' },
      trainedOn: 'wasm',
    })
    expect(student.devScores).not.toBeNull()
    expect(student.bytes).toBeLessThan(trained.bytes)
    expect(trainEvents('d1').every((e) => e.label === '1-layer student')).toBe(true)

    int8 = r.students[1]!
    expect(int8).toMatchObject({
      name: `${student.name} · int8`,
      kind: 'student',
      layers: 1,
      hidden: student.hidden,
      weights: 'int8',
      parentId: student.id,
      distillation: student.distillation,
      entityTypes: student.entityTypes,
    })
    expect(isInt8Folder(int8.path)).toBe(true)
    expect(isInt8Folder(student.path)).toBe(false)
    expect(int8.bytes).toBeLessThan(student.bytes / 2)
    expect(int8.devScores).not.toBeNull()
    expect(Object.keys(int8.devScores!.types)).toEqual(Object.keys(student.devScores!.types))
    const f1 = (m: ModelInfo) => (m.devScores!.f1 * 100).toFixed(1)
    expect(int8.trainingSummary).toBe(`int8 version of ${student.name} (per-row int8 weights, dynamic int8 activations); devel F1 ${f1(student)} → ${f1(int8)}`)
    expect(jobEvents('d1').some((e) => e.message.startsWith('1-layer student · int8: '))).toBe(true)
    expect((await call('models:list', {})).filter((m) => m.id === student.id || m.id === int8.id).map((m) => m.weights)).toEqual(['float32', 'int8'])
    expect(ws.runs().find((x) => x.modelId === int8.id)).toMatchObject({ kind: 'quantize', status: 'done' })
  })

  it('a cancelled or failed int8 step discards the int8 model and keeps its float student', async () => {
    // The real host distils; its quantize answer is replaced by a cancel, then by a failure.
    let answer: Error = new StoreError('cancelled', 'quantize cancelled')
    const asked: string[] = []
    const stub = Object.create(host) as ModelHost
    stub.request = ((method, params, opts) => {
      if (method !== 'quantize') return host.request(method, params, opts)
      asked.push((params as { outDir: string }).outDir)
      return Promise.reject(answer)
    }) as ModelHost['request']
    const h = createHandlers(makeCtx({ modelHost: stub }))
    const names = (await call('models:list', {})).map((m) => m.name)

    const r = await call('distill:start', { jobId: 'd-cancel', teacherIds: [trained.id], layers: [1], mode: 'none', epochs: 1, seed: 4, int8: true }, h)
    expect(r.cancelled).toBe(true)
    expect(r.students.map((s) => s.weights)).toEqual(['float32'])
    expect(asked.length).toBe(1)
    expect(existsSync(asked[0]!)).toBe(false)
    expect((await call('models:list', {})).map((m) => m.name)).toEqual([...names, r.students[0]!.name])
    expect(ws.runs().filter((x) => x.kind === 'quantize').map((x) => x.status).slice(-1)).toEqual(['cancelled'])

    answer = new Error('onnxruntime fell over')
    const err = await fail('distill:start', { jobId: 'd-fail', teacherIds: [trained.id], layers: [1], mode: 'none', epochs: 1, seed: 5, int8: true }, h)
    expect(err.message).toMatch(/onnxruntime fell over/)
    const after = await call('models:list', {})
    expect(after.filter((m) => m.weights === 'int8').map((m) => m.id)).toEqual([int8.id])
    expect(after.length).toBe(names.length + 2)
    expect(existsSync(asked[1]!)).toBe(false)
    expect(ws.runs().filter((x) => x.kind === 'quantize').map((x) => x.status).slice(-1)).toEqual(['failed'])
    for (const m of after.filter((x) => !names.includes(x.name))) await call('models:delete', { id: m.id })
  })

  it('distils two same-vocabulary BERT teachers with soft labels: averaged, temperature ramp, a feature loss each; registered with both', async () => {
    const copy = await call('models:import', { path: trained.path, name: 'tiny trained copy' })
    const other = await saveTinyTeacher('src-other-vocab', ['Disease'])
    const otherVocab = await call('models:import', { path: other, name: 'other vocabulary' })
    const chemical = await call('models:import', { path: await saveTinyTeacher('src-chemical', ['Chemical']), name: 'chemical teacher' })
    try {
      const plan = await call('distill:plan', { teacherIds: [trained.id, copy.id] })
      expect(plan).toMatchObject({ method: 'soft-labels', problem: null, baseId: trained.id, maxLayers: 2, unreviewedDocuments: 0 })
      expect(plan.summary).toMatch(/Soft labels of the 2 teachers averaged, with a temperature ramp/)
      // Other entity types: offered, disabled, with the reason.
      expect(plan.candidates.find((c) => c.modelId === chemical.id)).toMatchObject({ compatible: false, wordTagger: false, reason: expect.stringMatching(/entity types \(Chemical\) differ from tiny trained's \(Disease\)/) })
      expect(plan.candidates.find((c) => c.modelId === otherVocab.id)).toMatchObject({ compatible: true, reason: null })
      expect((await call('distill:plan', { teacherIds: [trained.id, chemical.id] })).problem).toMatch(/chemical teacher cannot teach with the others/)
      // Another vocabulary: the BERTs cannot average soft labels, so they teach through their tags.
      const tags = await call('distill:plan', { teacherIds: [trained.id, otherVocab.id] })
      expect(tags).toMatchObject({ method: 'teacher-tags', baseId: trained.id })
      expect(tags.summary).toMatch(/do not share one tokenizer/)
      expect(tags.unreviewedDocuments).toBe(ws.documentIdsWithStatus('unreviewed').filter((id) => !ws.getDocument(id).annotations.some((a) => a.origin === 'gold')).length)
      // 'none' uses no teacher: refused with several.
      expect((await fail('distill:start', { jobId: 'd-none2', teacherIds: [trained.id, copy.id], layers: [1], mode: 'none' })).message).toMatch(/KD mode 'none'.*choose one teacher/)

      const r = await call('distill:start', { jobId: 'd-two', teacherIds: [trained.id, copy.id], layers: [1], mode: 'dynamic', epochs: 1, seed: 6 })
      expect(r.cancelled).toBe(false)
      const [s2] = r.students
      expect(r.students.length).toBe(1)
      expect(s2).toMatchObject({
        name: 'tiny trained + 1 more → 1 layer',
        kind: 'student',
        layers: 1,
        parentId: trained.id,
        distillation: { teachers: [{ id: trained.id, name: 'tiny trained' }, { id: copy.id, name: 'tiny trained copy' }], method: 'soft-labels', mode: 'dynamic' },
      })
      expect(s2!.trainingSummary).toMatch(/^Distilled from tiny trained, tiny trained copy \(dynamic KD, soft labels averaged, temperature ramp, a feature loss per teacher/)
      // What core/distill did: both teachers, the ramp, one set of layer pairs (with the embeddings) each.
      const meta = JSON.parse(readFileSync(join(s2!.path, 'fastbioner.json'), 'utf8')) as { distillation: { temperatureSchedule: string; teachers: Array<{ layerPairs: unknown[] }> } }
      expect(meta.distillation.temperatureSchedule).toBe('ramp')
      expect(meta.distillation.teachers.length).toBe(2)
      for (const t of meta.distillation.teachers) expect(t.layerPairs.length).toBe(2)
      expect(ws.runs().find((x) => x.modelId === s2!.id)?.params).toMatchObject({ teacherIds: [trained.id, copy.id], method: 'soft-labels' })

      // The comparison names each student's teachers; a deleted teacher keeps its name.
      await call('models:delete', { id: copy.id })
      const cmp = await call('compare:run', { jobId: 'cmp-two', modelIds: [trained.id, s2!.id] })
      expect(cmp.rows.map((x) => x.distillation)).toEqual([null, { teachers: [{ id: trained.id, name: 'tiny trained' }, { id: null, name: 'tiny trained copy' }], method: 'soft-labels', mode: 'dynamic' }])
      await call('models:delete', { id: s2!.id })
    } finally {
      for (const m of [copy, otherVocab, chemical]) if (ws.listModels().some((x) => x.id === m.id)) await call('models:delete', { id: m.id })
    }
  }, 180_000)

  it('distils BERT teachers of different vocabularies through their tags on the unreviewed documents', async () => {
    const otherVocab = await call('models:import', { path: join(dir, 'src-other-vocab'), name: 'other vocabulary 2' })
    try {
      // Listed first, but a 2-layer BERT like the trained one: the first of equals is the base.
      // Each teacher's phase message must reach the job's events whatever the machine's speed.
      const r = await withSteppingClock(() => call('distill:start', { jobId: 'd-tags', teacherIds: [otherVocab.id, trained.id], layers: [1], mode: 'fixed', epochs: 1, seed: 7 }))
      expect(r.cancelled).toBe(false)
      const s3 = r.students[0]!
      expect(s3).toMatchObject({
        layers: 1,
        parentId: otherVocab.id,
        distillation: { teachers: [{ id: otherVocab.id, name: 'other vocabulary 2' }, { id: trained.id, name: 'tiny trained' }], method: 'teacher-tags', mode: null },
      })
      expect(s3.trainingSummary).toMatch(/^Learnt the tags of other vocabulary 2, tiny trained on \d+ unreviewed documents \(other vocabulary 2: \d+ mentions?, tiny trained: \d+ mentions?; \d+ mentions? more than half of them agree on, which the student learnt\) beside \d+ reviewed documents/)
      // The student is a copy of the base: its vocabulary.
      expect(readFileSync(join(s3.path, 'vocab.txt'), 'utf8')).toBe(readFileSync(join(otherVocab.path, 'vocab.txt'), 'utf8'))
      expect(jobEvents('d-tags').some((e) => /Teacher 2 of 2 tags \d+ unreviewed documents/.test(e.message))).toBe(true)
      await call('models:delete', { id: s3.id })
    } finally {
      await call('models:delete', { id: otherVocab.id })
    }
  }, 180_000)

  it('compares teacher and student on the done documents, with the engine of each measurement', async () => {
    const r = await call('compare:run', { jobId: 'cmp', modelIds: [trained.id, student.id, int8.id] })
    expect(r.documents).toBe(14)
    expect(r.rows.map((x) => x.modelId)).toEqual([trained.id, student.id, int8.id])
    expect(r.rows.map((x) => x.distillation)).toEqual([null, student.distillation, student.distillation])
    expect(r.rows.map((x) => x.weights)).toEqual(['float32', 'float32', 'int8'])
    expect(r.rows[0]).toMatchObject({ f1Retention: 1, sizeReduction: 0, timeReduction: 0 })
    expect(r.rows[1]!.sizeReduction).toBeGreaterThan(0.3)
    for (const row of r.rows) {
      expect(row.engine).toMatch(/^(onnxruntime-cpu|tfjs-wasm)$/)
      expect(row.engineReason.length).toBeGreaterThan(5)
      expect(row.medianMsPerDocument).toBeGreaterThan(0)
      expect(row.overall.f1).toBeGreaterThanOrEqual(0)
    }
    expect(r.machine).toMatch(/CPU/)
  })
})
