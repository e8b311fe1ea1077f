// The word tagger in the app, through the handler table and the real model host: the form's
// default choice trains it from scratch, it tags the workspace into suggestions, it retrains from
// reviewed documents into a candidate (warm start, before/after), it teaches a BERT student
// through its tags beside a BERT teacher (alone, distillation refuses it with the reason), and two
// word taggers teach a new word-tagger student their agreed tags.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Channel, EventName, EventPayloads, ModelInfo } from '@shared/ipc'
import { FORM_DEFAULTS, WORD_LSTM } from '@shared/recipes'
import type { CorpusDocument } from '@shared/domain'
import { createHandlers, dispatch, type HandlerContext, type Handlers } from '../../src/main/api'
import { callError, callOk } from './ipc-calls'
import { Workspace } from '../../src/core/store'
import { isWordTaggerFolder } from '../../src/core/model/word-tagger'
import type { ModelHost } from '../../src/host/client'
import { createNodeModelHost } from '../../src/host/node'
import { BertTokenClassifier, makeBertConfig } from '../../src/core/model/bert'
import { learnCharVocabulary } from '../../src/core/model/char-cnn'
import { saveCheckpoint } from '../../src/core/model/checkpoint'
import { buildLabelMap } from '../../src/core/nlp/bio'
import { Rng } from '../../src/core/rng'
import { ENTITY, FILLER, syntheticDocs, syntheticVocab } from '../unit/train/synthetic'
import { useCpuBackend } from '../unit/train/tfSetup'

let dir: string
let ws: Workspace
let host: ModelHost
let handlers: Handlers
let trained: ModelInfo
/** What the word-vector file dialog answers. */
let pickedVectors: string | null = null
let baseCtx: HandlerContext

const call = <C extends Channel>(channel: C, payload: unknown) => callOk(handlers, channel, payload)
const fail = (channel: Channel, payload: unknown) => callError(handlers, channel, payload)

const unlabelled = (docs: CorpusDocument[]): CorpusDocument[] => docs.map((d) => ({ ...d, mentions: [] }))

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fastbioner-word-app-'))
  ws = Workspace.open(join(dir, 'ws.sqlite'), { user: 'tester' })
  host = createNodeModelHost({ env: { FASTBIONER_BACKEND: 'wasm' } })
  await ws.importDocuments(syntheticDocs(32, 11, 4, 'gold'), 'gold.pubtator')
  await ws.importDocuments(unlabelled(syntheticDocs(12, 12, 4, 'new')), 'new.txt')
  const ctx: HandlerContext = {
    user: 'tester',
    defaultWorkspacePath: join(dir, 'ws.sqlite'),
    workspace: () => ws,
    openWorkspace() {
      throw new Error('not used')
    },
    emit<E extends EventName>(_event: E, _payload: EventPayloads[E]) {},
    dialogs: { openCorpusFiles: async () => [], saveExport: async () => null, openModelFolder: async () => null, openWordVectors: async () => pickedVectors },
    modelHost: host,
  }
  handlers = createHandlers(ctx)
  baseCtx = ctx
})

afterAll(async () => {
  await host?.close({ final: true })
  ws?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('the word tagger in the app', () => {
  it("is the form's default from-scratch choice and trains into a ready model", async () => {
    expect(FORM_DEFAULTS.preset).toBe(WORD_LSTM)
    const r = await call('models:train', { jobId: 'w-1', name: 'words', preset: WORD_LSTM, epochs: 5, seed: 3 })
    expect(r.cancelled).toBe(false)
    trained = r.model!
    expect(isWordTaggerFolder(trained.path)).toBe(true)
    expect(trained).toMatchObject({ name: 'words', kind: 'teacher', layers: 1, hidden: 400, entityTypes: ['Disease'] })
    expect(trained.trainingSummary).toMatch(/word-lstm from scratch, 5 of 5 epochs/)
    expect(trained.devScores!.f1).toBeGreaterThan(0.5)
  }, 240_000)

  it('starts a new word table from a word-vector file chosen in the dialog; a bad file is refused by line and leaves no model', async () => {
    // 8 dimensions (the tagger's own word size is larger), so the file's size is seen in the model.
    const rng = new Rng(5)
    const words = [...FILLER, ...ENTITY, 'vectoronly']
    const vecFile = join(dir, 'words.vec')
    writeFileSync(vecFile, `${words.length} 8\n` + words.map((w) => `${w} ${Array.from({ length: 8 }, () => (rng.next() - 0.5).toFixed(4)).join(' ')}\n`).join(''))
    pickedVectors = vecFile
    expect(await call('dialog:openWordVectors', {})).toEqual({ path: vecFile })
    const r = await call('models:train', { jobId: 'w-vec', name: 'words with vectors', preset: WORD_LSTM, epochs: 2, seed: 3, wordVectorsPath: vecFile })
    const m = r.model!
    expect(m.trainingSummary).toMatch(/word-lstm from scratch, word table from words\.vec, 2 of 2 epochs/)
    const meta = JSON.parse(readFileSync(join(m.path, 'fastbioner.json'), 'utf8')) as { word_vectors: { file: string; dim: number; initialised: number; added: number } }
    expect(meta.word_vectors).toMatchObject({ file: vecFile, dim: 8 })
    expect(meta.word_vectors.added).toBeGreaterThanOrEqual(1)
    expect(meta.word_vectors.initialised).toBe(words.length)
    expect(readFileSync(join(m.path, 'words.txt'), 'utf8').split('\n')).toContain('vectoronly')

    const bad = join(dir, 'bad.vec')
    writeFileSync(bad, 'zorvitis 0.1 0.2\nkalemia 0.1 nope\n')
    const before = (await call('models:list', {})).length
    const e = await fail('models:train', { jobId: 'w-bad', name: 'bad vectors', preset: WORD_LSTM, epochs: 1, wordVectorsPath: bad })
    expect(e.code).toBe('invalid_request')
    expect(e.message).toContain(`${bad}:2: value 2 of 'kalemia' is 'nope', not a finite number`)
    expect((await call('models:list', {})).length).toBe(before)
    expect((await fail('models:train', { jobId: 'w-bert', name: 'bert with vectors', preset: 'cpu-tiny', wordVectorsPath: vecFile })).message).toMatch(/wordVectorsPath is for the word-lstm preset/)

    // The Electron shell's rule: the file must come from this session's dialog, once.
    const strict = createHandlers({ ...baseCtx, restrictPathsToDialogs: true })
    const refused = await dispatch(strict, 'models:train', { jobId: 'w-strict', name: 'strict', preset: WORD_LSTM, epochs: 1, wordVectorsPath: vecFile })
    expect(refused.ok ? null : refused.error.message).toMatch(/Training with word vectors refused: .*words\.vec was not chosen in a file dialog/)
    expect((await call('models:list', {})).length).toBe(before)
  }, 240_000)

  it('tags the workspace into suggestions', async () => {
    await call('models:setActive', { id: trained.id })
    const r = await call('tag:run', { jobId: 'w-tag' })
    expect(r).toMatchObject({ cancelled: false, modelId: trained.id, engine: 'onnxruntime-cpu' })
    expect(r.suggestions).toBeGreaterThan(10)
  }, 120_000)

  it('retrains from reviewed documents into a candidate, scored before and after, the base untouched', async () => {
    for (const d of ws.listDocuments({ query: 'gold', limit: 100 }).documents.slice(0, 14)) await call('documents:setStatus', { id: d.id, status: 'done' })
    // A benchmark the base's folder states (as the default model's does) is the base's, not the candidate's.
    const baseMeta = join(trained.path, 'fastbioner.json')
    const baseRecords = readFileSync(baseMeta, 'utf8')
    writeFileSync(baseMeta, JSON.stringify({ ...JSON.parse(baseRecords), benchmark: { split: 'test', tagging: 'merged', scores: [{ corpus: 'c', type: 'Disease', f1: 0.5 }] } }))
    const r = await call('retrain:start', { jobId: 'w-rt', baseModelId: trained.id, epochs: 2, seed: 1 })
    writeFileSync(baseMeta, baseRecords)
    expect(r.cancelled).toBe(false)
    expect(r.before.f1).toBeGreaterThan(0.5)
    expect(r.after!.f1).toBeGreaterThan(0.5)
    expect(r.curve.filter((p) => p.devF1 === undefined).length).toBeGreaterThan(1)
    const cand = r.candidate!
    expect(isWordTaggerFolder(cand.path)).toBe(true)
    const candMeta = JSON.parse(readFileSync(join(cand.path, 'fastbioner.json'), 'utf8')) as Record<string, unknown>
    expect(candMeta).toMatchObject({ retrained: { from: trained.path } })
    expect(candMeta.benchmark).toBeUndefined()
    expect(cand).toMatchObject({ candidate: true, parentId: trained.id, layers: 1, hidden: 400 })
    expect(cand.devScores!.f1).toBeCloseTo(r.after!.f1, 10)
    await call('retrain:decide', { candidateId: cand.id, keep: false })
  }, 240_000)

  it('imports a word tagger folder as it is (its model card too), ready to tag', async () => {
    const src = join(dir, 'word-src')
    cpSync(trained.path, src, { recursive: true })
    writeFileSync(join(src, 'MODEL_CARD.md'), '# A word tagger\n')
    const m = await call('models:import', { path: src, name: 'imported words' })
    expect(m).toMatchObject({ name: 'imported words', kind: 'imported', layers: 1, hidden: 400, entityTypes: ['Disease'] })
    expect(isWordTaggerFolder(m.path)).toBe(true)
    expect(readFileSync(join(m.path, 'MODEL_CARD.md'), 'utf8')).toBe('# A word tagger\n')
    for (const f of ['words.txt', 'chars.txt', 'model.safetensors']) expect(readFileSync(join(m.path, f))).toEqual(readFileSync(join(src, f)))
    await call('models:setActive', { id: m.id })
    expect((await call('tag:run', { jobId: 'w-tag-imported' })).modelId).toBe(m.id)
  }, 120_000)

  it("copied as the default model is (keepFiles), gives the benchmark its fastbioner.json states, and refuses a malformed one naming the file", async () => {
    const src = join(dir, 'word-default')
    cpSync(trained.path, src, { recursive: true })
    const metaFile = join(src, 'fastbioner.json')
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as Record<string, unknown>
    const benchmark = { split: 'test', tagging: 'every head merged', scores: [{ corpus: 'NCBI-disease', type: 'Disease', f1: 0.75 }] }
    writeFileSync(metaFile, JSON.stringify({ ...meta, benchmark }))
    const r = await host.request('importModel', { source: src, dest: join(dir, 'word-default-copy'), headLabels: null, seed: 1, keepFiles: true })
    expect(r.benchmark).toEqual(benchmark)
    // A user's import does not read it.
    expect((await host.request('importModel', { source: src, dest: join(dir, 'word-default-user'), headLabels: null, seed: 1 })).benchmark).toBeNull()
    writeFileSync(metaFile, JSON.stringify({ ...meta, benchmark: { ...benchmark, scores: [{ corpus: 'NCBI-disease', type: 'Disease', f1: 75 }] } }))
    await expect(host.request('importModel', { source: src, dest: join(dir, 'word-default-bad'), headLabels: null, seed: 1, keepFiles: true })).rejects.toThrow(
      `${metaFile}: benchmark.scores[0].f1 must be a number from 0 to 1, got 75`,
    )
  }, 60_000)

  it('teaches a BERT student beside a character-aware BERT, through its tags on the unreviewed documents; alone it is refused', async () => {
    const alone = await call('distill:plan', { teacherIds: [trained.id] })
    expect(alone).toMatchObject({ method: null, studentKind: null, problem: expect.stringMatching(/words is a word tagger: alone its tags would teach a new model nothing .*Models view/) })
    expect((await fail('distill:start', { jobId: 'w-d', teacherIds: [trained.id], layers: [1], mode: 'dynamic' })).message).toMatch(/is a word tagger/)

    // A 2-layer BERT with a character channel, on the synthetic vocabulary.
    const src = join(dir, 'char-bert')
    const tf = await useCpuBackend()
    ;(tf.backend() as unknown as { firstUse: boolean }).firstUse = false
    const vocab = syntheticVocab()
    const config = makeBertConfig({ vocabSize: vocab.length, hiddenSize: 32, numHiddenLayers: 2, numAttentionHeads: 2, intermediateSize: 64, maxPositionEmbeddings: 64 })
    const model = BertTokenClassifier.random(config, 4, { default: buildLabelMap(['Disease']).labels })
    model.addCharCnn(learnCharVocabulary(syntheticDocs(32, 11, 4, 'gold').flatMap((d) => d.text.split(/\s+/))), { pieces: 'all' }, 4)
    await saveCheckpoint(src, model, vocab, { lowercase: true })
    model.dispose()
    const bert = await call('models:import', { path: src, name: 'char bert' })

    const plan = await call('distill:plan', { teacherIds: [trained.id, bert.id] })
    expect(plan).toMatchObject({ method: 'teacher-tags', studentKind: 'bert', int8Unavailable: null, problem: null, baseId: bert.id, maxLayers: 2 })
    expect(plan.summary).toMatch(/a word tagger cannot give soft labels to a BERT student/)
    expect(plan.unreviewedDocuments).toBeGreaterThan(0)
    expect(plan.candidates.find((c) => c.modelId === trained.id)).toMatchObject({ wordTagger: true, compatible: true })

    const r = await call('distill:start', { jobId: 'w-mixed', teacherIds: [trained.id, bert.id], layers: [1], mode: 'dynamic', epochs: 1, seed: 2 })
    expect(r.cancelled).toBe(false)
    const student = r.students[0]!
    expect(student).toMatchObject({
      kind: 'student',
      layers: 1,
      parentId: bert.id,
      entityTypes: ['Disease'],
      distillation: { teachers: [{ id: trained.id, name: 'words' }, { id: bert.id, name: 'char bert' }], method: 'teacher-tags', mode: null },
    })
    expect(isWordTaggerFolder(student.path)).toBe(false)
    // The student inherited the base's character channel.
    expect(JSON.parse(readFileSync(join(student.path, 'config.json'), 'utf8')).char_cnn).toBeTruthy()
    expect(readFileSync(join(student.path, 'chars.txt'), 'utf8')).toBe(readFileSync(join(bert.path, 'chars.txt'), 'utf8'))
    // The word tagger found mentions in the unreviewed documents, and they were learnt.
    const found = /\(words: (\d+) mentions?/.exec(student.trainingSummary ?? '')
    expect(Number(found?.[1])).toBeGreaterThan(0)
    expect(student.devScores).not.toBeNull()
  }, 240_000)

  it('two word taggers teach one new word-tagger student their agreed tags, stored with its teachers and summary', async () => {
    const second = (await call('models:train', { jobId: 'w-2', name: 'words 2', preset: WORD_LSTM, epochs: 3, seed: 7 })).model!
    const plan = await call('distill:plan', { teacherIds: [second.id, trained.id] })
    expect(plan).toMatchObject({ method: 'teacher-tags', studentKind: 'word-tagger', problem: null, baseId: null, maxLayers: 0 })
    expect(plan.int8Unavailable).toMatch(/the app's int8 job reads BERT folders only/)
    expect(plan.unreviewedDocuments).toBeGreaterThan(0)
    // BERT layers make no sense for a word-tagger student, and a BERT student needs them.
    expect((await fail('distill:start', { jobId: 'w-ww-layers', teacherIds: [second.id, trained.id], layers: [1], mode: 'dynamic' })).message).toMatch(
      /all word taggers: the student is one new word tagger .* leave out layers \(asked for 1\)/,
    )

    // The app's int8 job reads BERT folders only.
    expect((await fail('distill:start', { jobId: 'w-ww-int8', teacherIds: [second.id, trained.id], mode: 'dynamic', int8: true })).message).toMatch(/No int8 version of this student: the app's int8 job reads BERT folders only; `fastbioner quantize/)

    const r = await call('distill:start', { jobId: 'w-ww', teacherIds: [second.id, trained.id], mode: 'dynamic', epochs: 2, seed: 4 })
    expect(r.cancelled).toBe(false)
    expect(r.students).toHaveLength(1)
    const student = r.students[0]!
    expect(isWordTaggerFolder(student.path)).toBe(true)
    expect(student).toMatchObject({
      name: 'words 2 + 1 more → word tagger',
      kind: 'student',
      parentId: second.id,
      layers: 1,
      hidden: 400,
      entityTypes: ['Disease'],
      distillation: { teachers: [{ id: second.id, name: 'words 2' }, { id: trained.id, name: 'words' }], method: 'teacher-tags', mode: null },
    })
    expect(student.devScores).not.toBeNull()
    const summary = student.trainingSummary ?? ''
    const counts = /\(words 2: (\d+) mentions?, words: (\d+) mentions?; (\d+) mentions? more than half of them agree on, which the student learnt\) beside (\d+) reviewed documents; a new word tagger \(BiLSTM-CRF\), \d+ held out for devel; 2 epochs$/.exec(summary)
    expect(counts, summary).not.toBeNull()
    const [a, b, agreed] = counts!.slice(1, 4).map(Number)
    expect(a).toBeGreaterThan(0)
    expect(b).toBeGreaterThan(0)
    expect(agreed).toBeGreaterThan(0)
    expect(agreed).toBeLessThanOrEqual(Math.min(a, b))
    // The folder records what taught it.
    const meta = JSON.parse(readFileSync(join(student.path, 'fastbioner.json'), 'utf8')) as { arch: string; source: { teachers: string[]; method: string } }
    expect(meta).toMatchObject({ arch: 'word-lstm', source: { teachers: [second.path, trained.path], method: 'teacher-tags' } })
    expect(ws.listModels().filter((m) => m.kind === 'student' && m.distillation?.teachers[0].id === second.id)).toHaveLength(1)
  }, 360_000)
})
