// models:adapt ("Adapt to my documents") through the handler table, with the real model host
// process and a tiny model: continued masked-LM pretraining on the workspace's documents, live
// progress with the held-out masked-token accuracy, a registered model that tags and retrains
// with the base's heads kept, the base folder untouched, cancel, and the refusals.
import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Channel, EventName, EventPayloads, ModelInfo } from '@shared/ipc'
import { ADAPT_RECIPE } from '@shared/recipes'
import type { CorpusDocument } from '@shared/domain'
import { createHandlers, type HandlerContext, type Handlers } from '../../src/main/api'
import { callError, callOk } from './ipc-calls'
import { adaptedModelName } from '../../src/main/models/adapt'
import { Workspace } from '../../src/core/store'
import { BertTokenClassifier, makeBertConfig } from '../../src/core/model/bert'
import { saveCheckpoint } from '../../src/core/model/checkpoint'
import { readSafetensors } from '../../src/core/model/safetensors'
import { buildLabelMap } from '../../src/core/nlp/bio'
import { wordCount, documentLines } from '../../src/core/pretrain/text'
import type { ModelHost } from '../../src/host/client'
import { createNodeModelHost } from '../../src/host/node'
import { syntheticDocs, syntheticVocab } from '../unit/train/synthetic'
import { useCpuBackend } from '../unit/train/tfSetup'

let dir: string
let ws: Workspace
let host: ModelHost
let handlers: Handlers
const events: Array<{ event: EventName; payload: unknown }> = []
/** Called on every event (the cancel test cancels from the first training step). */
let onEvent: ((event: EventName, payload: unknown) => void) | null = null

function makeCtx(): HandlerContext {
  return {
    user: 'tester',
    defaultWorkspacePath: join(dir, 'ws.sqlite'),
    workspace: () => ws,
    openWorkspace() {
      throw new Error('not used')
    },
    emit<E extends EventName>(event: E, payload: EventPayloads[E]) {
      events.push({ event, payload: structuredClone(payload) })
      onEvent?.(event, payload)
    },
    dialogs: { openCorpusFiles: async () => [], saveExport: async () => null, openModelFolder: async () => null },
    modelHost: host,
  }
}

const call = <C extends Channel>(channel: C, payload: unknown) => callOk(handlers, channel, payload)
const fail = (channel: Channel, payload: unknown) => callError(handlers, channel, payload)

const trainEvents = (jobId: string) =>
  events.filter((e) => e.event === 'train:progress' && (e.payload as { jobId: string }).jobId === jobId).map((e) => e.payload as EventPayloads['train:progress'])

/** Every file's bytes (names included): byte-identical folders hash alike. */
function folderHash(path: string): string {
  const h = createHash('sha256')
  for (const f of readdirSync(path).sort()) h.update(f).update(readFileSync(join(path, f)))
  return h.digest('hex')
}

const LABELS = buildLabelMap(['Disease']).labels

/** A tiny tagger for the synthetic vocabulary (which has [MASK]), saved as an HF folder. */
async function writeTinyTagger(path: string): Promise<void> {
  const vocab = syntheticVocab()
  const config = makeBertConfig({ vocabSize: vocab.length, hiddenSize: 32, numHiddenLayers: 2, numAttentionHeads: 2, intermediateSize: 64, maxPositionEmbeddings: 64 })
  const model = BertTokenClassifier.random(config, 5, { default: LABELS })
  // A training record as our trainer writes it: tagging and retraining read it back.
  await saveCheckpoint(path, model, vocab, { lowercase: true, metadata: { training: { maxLength: 48, sentenceLevel: true, lr: 1e-3 } } })
  model.dispose()
}

const modelsFolder = () => readdirSync(join(dir, 'models')).sort()

let base: ModelInfo
let docs: CorpusDocument[]

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fastbioner-adapt-'))
  ws = Workspace.open(join(dir, 'ws.sqlite'), { user: 'tester' })
  host = createNodeModelHost({ env: { FASTBIONER_BACKEND: 'wasm' } })
  const warm = host.request('engineInfo', { modelDir: null })
  // ≈ 2,600 words: over the 2,000-word minimum, a few dozen packed sequences of 64 pieces.
  docs = syntheticDocs(80, 21, 4, 'abs')
  await ws.importDocuments(docs, 'abstracts.pubtator')
  handlers = createHandlers(makeCtx())
  const tf = await useCpuBackend()
  ;(tf.backend() as unknown as { firstUse: boolean }).firstUse = false
  const src = join(dir, 'src-tagger')
  await writeTinyTagger(src)
  await warm
  base = await call('models:import', { path: src, name: 'tiny base' })
})

afterAll(async () => {
  await host?.close({ final: true })
  ws?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('models:adapt', () => {
  it('continues pretraining on the documents with progress; the result is registered, keeps the heads, tags; the base is untouched', async () => {
    const words = wordCount(docs.flatMap((d) => documentLines(d)))
    expect(words).toBeGreaterThan(ADAPT_RECIPE.minWords)
    const baseHash = folderHash(base.path)
    const r = await call('models:adapt', { jobId: 'adapt-1', baseModelId: base.id, epochs: 2, seed: 4 })
    expect(r.cancelled).toBe(false)
    const m = r.model!
    expect(m).toMatchObject({
      name: adaptedModelName('tiny base', join(dir, 'ws.sqlite')),
      kind: 'teacher',
      parentId: base.id,
      layers: 2,
      hidden: 32,
      entityTypes: ['Disease'],
      devScores: null,
      active: false,
      candidate: false,
    })
    expect(m.name).toBe('tiny base adapted to ws')
    expect(m.trainedOn).toMatch(/^onnxruntime/)
    expect(m.adaptation).toMatchObject({ documents: 80, words, epochs: 2 })
    expect(m.adaptation!.steps).toBeGreaterThan(1)
    expect(m.trainingSummary).toMatch(/80 documents .* 2 of 2 epochs.*not yet tuned to the adapted encoder/)
    expect((await call('models:list', {})).find((x) => x.id === m.id)).toEqual(m)

    // Progress: steps (at most every 200 ms; the first and the last always), then each epoch's
    // held-out masked-token accuracy.
    const steps = trainEvents('adapt-1')
    const evals = steps.filter((e) => e.maskedAccuracy !== undefined)
    const stepNumbers = steps.filter((e) => e.maskedAccuracy === undefined).map((e) => e.step)
    expect(stepNumbers[0]).toBe(1)
    expect(stepNumbers[stepNumbers.length - 1]).toBe(m.adaptation!.steps)
    expect(stepNumbers.every((s, i) => i === 0 || s > stepNumbers[i - 1]!)).toBe(true)
    expect(steps.every((e) => e.totalSteps === m.adaptation!.steps && e.etaSeconds >= 0 && e.label === m.name)).toBe(true)
    expect(evals.map((e) => e.epoch)).toEqual([1, 2])
    expect(evals.every((e) => e.maskedAccuracy! >= 0 && e.maskedAccuracy! <= 1 && e.loss > 0)).toBe(true)
    expect(r.heldOut.map((h) => [h.epoch, h.accuracy])).toEqual(evals.map((e) => [e.epoch, e.maskedAccuracy]))
    expect(m.adaptation!.heldOutAccuracy).toBe(r.heldOut[1]!.accuracy)

    // The base folder is byte-identical; the adapted one has new encoder weights, the base's
    // classifier unchanged, an LM head, no optimizer state, and the base's training record.
    expect(folderHash(base.path)).toBe(baseHash)
    const before = readSafetensors(join(base.path, 'model.safetensors')).tensors
    const after = readSafetensors(join(m.path, 'model.safetensors')).tensors
    expect([...after.get('classifier.weight')!.data]).toEqual([...before.get('classifier.weight')!.data])
    expect([...after.get('classifier.bias')!.data]).toEqual([...before.get('classifier.bias')!.data])
    expect([...after.get('bert.encoder.layer.0.attention.self.query.weight')!.data]).not.toEqual([...before.get('bert.encoder.layer.0.attention.self.query.weight')!.data])
    expect(after.has('cls.predictions.bias')).toBe(true)
    expect(existsSync(join(m.path, 'optimizer.safetensors'))).toBe(false)
    const meta = JSON.parse(readFileSync(join(m.path, 'fastbioner.json'), 'utf8'))
    expect(meta.training).toMatchObject({ maxLength: 48, sentenceLevel: true })
    expect(meta.adapted).toMatchObject({ from: base.path, baseModel: 'tiny base', documents: 80, words })
    expect(meta.pretraining).toMatchObject({ epochs: 2, keepHeads: true, inMemoryText: true, heldOutEvery: ADAPT_RECIPE.heldOutEvery })
    expect(JSON.parse(readFileSync(join(m.path, 'config.json'), 'utf8')).fastbioner_heads).toEqual({ default: LABELS })
    expect(ws.runs().filter((x) => x.kind === 'adapt').map((x) => x.status)).toEqual(['done'])

    // It loads and tags (the LM head does not get in the tagger's way)…
    const tagged = await call('tag:run', { jobId: 'adapt-tag', modelId: m.id, documentIds: [1, 2] })
    expect(tagged).toMatchObject({ cancelled: false, documents: 2, modelId: m.id })
    // …and is a base to retrain from.
    for (const id of [3, 4, 5, 6, 7]) await call('documents:setStatus', { id, status: 'done' })
    const rt = await call('retrain:start', { jobId: 'adapt-rt', baseModelId: m.id, epochs: 1, seed: 2 })
    expect(rt.cancelled).toBe(false)
    expect(rt.candidate).toMatchObject({ parentId: m.id, entityTypes: ['Disease'] })
    await call('retrain:decide', { candidateId: rt.candidate!.id, keep: false })
    // …and to train a new model from (its encoder and vocabulary, its head kept: same labels).
    expect((await fail('models:train', { jobId: 'x', name: 'x', preset: 'cpu-tiny', baseModelId: m.id })).message).toMatch(/either preset .* or baseModelId/)
    const adaptedHash = folderHash(m.path)
    const t = await call('models:train', { jobId: 'adapt-train', name: 'from adapted', baseModelId: m.id, epochs: 1, seed: 2 })
    expect(t.model).toMatchObject({ name: 'from adapted', kind: 'teacher', parentId: m.id, layers: 2, hidden: 32, entityTypes: ['Disease'], adaptation: null })
    expect(t.model!.trainingSummary).toMatch(/; fine-tuned from tiny base adapted to ws, 1 of 1 epochs/)
    expect(t.model!.devScores).not.toBeNull()
    expect(JSON.parse(readFileSync(join(t.model!.path, 'fastbioner.json'), 'utf8'))).toMatchObject({ init: m.path, training: { maxLength: 48 } })
    expect(readFileSync(join(t.model!.path, 'vocab.txt'), 'utf8')).toBe(readFileSync(join(m.path, 'vocab.txt'), 'utf8'))
    expect(folderHash(m.path)).toBe(adaptedHash)
    // A second adaptation gets a name of its own.
    expect(ws.uniqueModelName(adaptedModelName('tiny base', ws.path))).toBe('tiny base adapted to ws (2)')
  })

  it('a cancelled adaptation leaves no model, no folder, the base untouched', async () => {
    const baseHash = folderHash(base.path)
    const namesBefore = (await call('models:list', {})).map((m) => m.name)
    const foldersBefore = modelsFolder()
    onEvent = (event, payload) => {
      if (event === 'train:progress' && (payload as { jobId: string }).jobId === 'adapt-cancel') void call('jobs:cancel', { jobId: 'adapt-cancel' })
    }
    try {
      const r = await call('models:adapt', { jobId: 'adapt-cancel', baseModelId: base.id, epochs: 10 })
      expect(r).toMatchObject({ cancelled: true, model: null })
    } finally {
      onEvent = null
    }
    const steps = trainEvents('adapt-cancel')
    expect(steps.length).toBeGreaterThan(0)
    expect(Math.max(...steps.map((s) => s.step))).toBeLessThan(steps[0]!.totalSteps)
    expect((await call('models:list', {})).map((m) => m.name)).toEqual(namesBefore)
    expect(modelsFolder()).toEqual(foldersBefore)
    expect(folderHash(base.path)).toBe(baseHash)
    expect(ws.runs().filter((x) => x.kind === 'adapt').map((x) => x.status)).toEqual(['done', 'cancelled'])
  })

  it('refuses too little text, and a base without a vocabulary, naming the problem; nothing is left behind', async () => {
    const big = ws
    const small = Workspace.open(join(dir, 'small.sqlite'), { user: 'tester' })
    try {
      await small.importDocuments(syntheticDocs(3, 5, 4, 'few'), 'few.pubtator')
      ws = small
      const smallBase = await call('models:import', { path: join(dir, 'src-tagger'), name: 'small base' })
      const err = await fail('models:adapt', { jobId: 'adapt-small', baseModelId: smallBase.id })
      expect(err.code).toBe('invalid_request')
      expect(err.message).toMatch(/^Too little text to adapt a model to: the workspace's 3 documents hold \d+ words, and adapting needs at least 2,000/)
      expect((await call('models:list', {})).map((m) => m.name)).toEqual(['small base'])
      expect(small.runs().filter((x) => x.kind === 'adapt')).toEqual([])
    } finally {
      ws = big
      small.close()
    }

    const broken = await call('models:import', { path: join(dir, 'src-tagger'), name: 'no vocabulary' })
    rmSync(join(broken.path, 'vocab.txt'))
    const foldersBefore = modelsFolder()
    const err = await fail('models:adapt', { jobId: 'adapt-novocab', baseModelId: broken.id })
    expect(err.code).toBe('invalid_request')
    expect(err.message).toContain(join(broken.path, 'vocab.txt'))
    expect(err.message).toMatch(/missing/)
    expect(modelsFolder()).toEqual(foldersBefore)
    expect((await call('models:list', {})).some((m) => m.parentId === broken.id)).toBe(false)
    expect(ws.runs().filter((x) => x.kind === 'adapt').map((x) => x.status)).toEqual(['done', 'cancelled', 'failed'])

    expect((await fail('models:adapt', { jobId: 'adapt-404', baseModelId: 9999 })).code).toBe('not_found')
    expect((await fail('models:adapt', { jobId: 'adapt-bad', baseModelId: base.id, epochs: 0 })).code).toBe('invalid_request')
  })
})
