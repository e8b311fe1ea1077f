// The model jobs, run inside the model host process: import, train, tag, retrain, distil,
// compare, adapt (continued masked-LM pretraining on the workspace's documents). Everything here may take seconds to hours and holds hundreds of MB; none of it runs
// on the process that serves IPC. The host writes checkpoint folders the main process chose; it
// never touches the workspace database (documents come in the request, results go back in the
// reply and main writes them in its own transactions).
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs'
import { availableParallelism, cpus } from 'node:os'
import { join } from 'node:path'
import type { EngineInfo } from '@shared/ipc'
import type { CorpusDocument } from '@shared/domain'
import { continuedTrainingLr, FINETUNE_RECIPE, isPresetName, PRESET_NAMES, SCRATCH_RECIPE, TRAIN_DEFAULTS } from '@shared/recipes'
import { readCorpusFile } from '../core/corpus'
import { TEMP_PREFIX, writeFileAtomic } from '../core/fs/atomic'
import { distillCheckpoints } from '../core/distill/run'
import { compareModels } from '../core/eval/compare'
import { evaluate } from '../core/eval/evaluate'
import type { EvalResult } from '../core/eval/metrics'
import { initBackend, type BackendInfo } from '../core/model/backend'
import { BertTokenClassifier, DEFAULT_HEAD } from '../core/model/bert'
import { loadCheckpoint, saveCheckpoint } from '../core/model/checkpoint'
import { findWeightFiles, headLabelsOf, METADATA_FILE, readCheckpointInfo, type TrainingMetadata } from '../core/model/checkpoint-files'
import { presetConfig } from '../core/model/presets'
import { pretrain, PretrainError } from '../core/pretrain/run'
import { wordCount } from '../core/pretrain/text'
import { OPTIMIZER_FILE, type RunProgress } from '../core/train/runner'
import { readSafetensorsNames } from '../core/model/safetensors'
import { buildLabelMap } from '../core/nlp/bio'
import { WordPieceTokenizer } from '../core/nlp/tokenizer'
import { trainWordPieceVocab } from '../core/nlp/vocab-trainer'
import { isInt8Folder } from '../core/onnx/quantize'
import { openTagger, windowSettingsOf, type CheckpointTagger } from '../core/tag/open'
import { train, type TrainProgress } from '../core/train/loop'
import type { HostMethods, HostParams, HostResult, JobProgress, ModelSummary, ScoresWithTypes, TrainedCheckpoint } from './protocol'
import type { JobContext } from './job'

/** A problem with the request the user can act on (reported as 'invalid_request'). */
export class HostInputError extends Error {
  override name = 'HostInputError'
}

const log = (line: string) => process.stderr.write(`[model-host] ${line}\n`)

let backend: BackendInfo | null = null
async function ensureBackend(): Promise<BackendInfo> {
  backend ??= await initBackend({ logger: log })
  return backend
}

/** Cores for onnxruntime: leave one to the main process (the window) when there are several. */
function inferenceThreads(): number {
  const n = typeof availableParallelism === 'function' ? availableParallelism() : cpus().length
  return Math.max(1, n - 1)
}

const phase = (ctx: JobContext, message: string, done?: number, total?: number) =>
  ctx.progress({ kind: 'phase', message, done, total } satisfies JobProgress)

/** Step events at most every 200 ms (first, last and every epoch end always). */
function stepReporter(ctx: JobContext, curve: TrainedCheckpoint['curve']) {
  let last = -Infinity
  return (p: Pick<TrainProgress, 'kind' | 'epoch' | 'epochs' | 'step' | 'totalSteps' | 'loss' | 'tokensPerSecond' | 'etaSeconds' | 'devF1'>) => {
    if (p.kind === 'eval') curve.push({ step: p.step, loss: p.loss, devF1: p.devF1 })
    else curve.push({ step: p.step, loss: p.loss })
    const now = performance.now()
    if (p.kind === 'step' && now - last < 200 && p.step !== 1 && p.step !== p.totalSteps) return
    last = now
    ctx.progress({
      kind: p.kind,
      step: p.step,
      totalSteps: p.totalSteps,
      epoch: p.epoch,
      epochs: p.epochs,
      loss: p.loss,
      devF1: p.devF1,
      tokensPerSecond: p.tokensPerSecond,
      etaSeconds: p.etaSeconds,
    } satisfies JobProgress)
  }
}

function scores(ev: EvalResult): ScoresWithTypes {
  const pick = (s: { precision: number; recall: number; f1: number }) => ({ precision: s.precision, recall: s.recall, f1: s.f1 })
  return { ...pick(ev.overall), types: Object.fromEntries(Object.entries(ev.types).map(([t, s]) => [t, pick(s)])) }
}

const typesOfLabels = (labels: readonly string[]) => [...new Set(labels.filter((l) => l !== 'O').map((l) => l.replace(/^[BIES]-/, '')))].sort()

function summarize(dir: string, model: BertTokenClassifier): ModelSummary {
  const head = model.heads.get(DEFAULT_HEAD) ?? [...model.heads.values()][0]
  const labels = head ? [...head.labels] : ['O']
  // Tagging merges every head (core/tag/merge.ts): a multi-head model tags the types of them all.
  const allLabels = [...model.heads.values()].flatMap((h) => [...h.labels])
  return {
    layers: model.config.numHiddenLayers,
    hidden: model.config.hiddenSize,
    heads: model.config.numAttentionHeads,
    parameters: model.numParameters(),
    bytes: statSync(join(dir, 'model.safetensors')).size,
    weights: isInt8Folder(dir) ? 'int8' : 'float32',
    labels,
    entityTypes: typesOfLabels(allLabels.length ? allLabels : labels),
  }
}

function trainingMeta(metadata: Record<string, unknown> | undefined): Partial<TrainingMetadata> {
  return ((metadata as { training?: Partial<TrainingMetadata> } | undefined)?.training ?? {}) as Partial<TrainingMetadata>
}

/** Loads a saved checkpoint, scores it on `docs` (when any) and summarises it. */
async function scoreSaved(dir: string, docs: readonly CorpusDocument[]): Promise<{ summary: ModelSummary; devScores: ScoresWithTypes | null }> {
  const ck = await loadCheckpoint(dir, { trainable: false })
  try {
    const tokenizer = new WordPieceTokenizer(ck.vocab, { lowercase: ck.lowercase, source: join(dir, 'vocab.txt') })
    const t = trainingMeta(ck.metadata)
    const devScores = docs.length
      ? scores(await evaluate(ck.model, tokenizer, docs, { maxLength: t.maxLength, sentenceLevel: t.sentenceLevel, stride: t.stride ?? undefined }))
      : null
    return { summary: summarize(dir, ck.model), devScores }
  } finally {
    ck.model.dispose()
  }
}

function typesOf(docs: readonly CorpusDocument[]): string[] {
  return [...new Set(docs.flatMap((d) => d.mentions.map((m) => m.type)))].sort()
}

// ---------------------------------------------------------------------------------------------
// Taggers, cached per folder (a tag:run sends many small requests)

interface CachedTagger {
  stamp: string
  tagger: CheckpointTagger
}

const taggers = new Map<string, Promise<CachedTagger>>()

function stampOf(dir: string): string {
  const s = (f: string) => {
    try {
      return String(statSync(join(dir, f)).mtimeMs)
    } catch {
      return '-'
    }
  }
  return `${s('config.json')}:${s('model.safetensors')}`
}

async function cachedTagger(dir: string): Promise<CheckpointTagger> {
  const stamp = stampOf(dir)
  const cached = taggers.get(dir)
  if (cached) {
    const m = await cached.catch(() => null)
    if (m && m.stamp === stamp) return m.tagger
    taggers.delete(dir)
    if (m) await m.tagger.dispose().catch(() => undefined)
  }
  // One model at a time: a second one would double the memory for nothing.
  await releaseTaggers(null)
  const opening = (async (): Promise<CachedTagger> => {
    // tfjs is the fallback engine and needs its backend.
    await ensureBackend()
    return { stamp, tagger: await openTagger(dir, { threads: inferenceThreads(), spin: false, logger: log }) }
  })()
  taggers.set(dir, opening)
  opening.catch(() => taggers.delete(dir))
  return (await opening).tagger
}

async function releaseTaggers(dir: string | null): Promise<number> {
  let n = 0
  for (const [d, p] of [...taggers]) {
    if (dir !== null && d !== dir) continue
    taggers.delete(d)
    const m = await p.catch(() => null)
    if (m) {
      await m.tagger.dispose().catch(() => undefined)
      n++
    }
  }
  return n
}

// ---------------------------------------------------------------------------------------------
// Jobs

type Job<M extends keyof HostMethods> = (params: HostParams<M>, ctx: JobContext) => Promise<HostResult<M>>

const engineInfo: Job<'engineInfo'> = async ({ modelDir }) => {
  const b = await ensureBackend()
  const out: EngineInfo = { trainingBackend: b.name, trainingBackendReason: b.reason, inferenceEngine: '', inferenceEngineReason: '' }
  if (modelDir) {
    try {
      const t = await cachedTagger(modelDir)
      out.inferenceEngine = t.engine.engine
      out.inferenceEngineReason = t.engine.reason
      return out
    } catch (e) {
      out.inferenceEngineReason = `cannot open the active model (${(e as Error).message}); `
    }
  }
  const prefer = process.env.FASTBIONER_INFERENCE?.trim().toLowerCase()
  if (prefer === 'tfjs') {
    out.inferenceEngine = `tfjs-${b.name}`
    out.inferenceEngineReason += 'tfjs preferred by FASTBIONER_INFERENCE'
    return out
  }
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ort = require('onnxruntime-node') as { env?: { versions?: { common?: string } } }
    out.inferenceEngine = 'onnxruntime-cpu'
    out.inferenceEngineReason += `onnxruntime-node ${ort.env?.versions?.common ?? ''} loads; the execution provider is chosen when a model is opened`
  } catch (e) {
    out.inferenceEngine = `tfjs-${b.name}`
    out.inferenceEngineReason += `onnxruntime-node cannot load (${(e as Error).message.split('\n')[0]}); tagging runs on tfjs`
  }
  return out
}

function hasClassifier(dir: string): boolean {
  return findWeightFiles(dir).some((f) => readSafetensorsNames(f).some((n) => /^(classifier|classifiers\.[^.]+)\.weight$/.test(n)))
}

const importModel: Job<'importModel'> = async ({ source, dest, headLabels, seed, keepFiles }, ctx) => {
  const b = await ensureBackend()
  phase(ctx, `Reading ${source}`)
  // loadCheckpoint validates the folder and gives the clear errors (missing vocab.txt, a
  // pytorch_model.bin-only download with the one-line conversion command, shape mismatches).
  const ck = await loadCheckpoint(source, { trainable: false, seed })
  try {
    const notes = [...ck.notes]
    const freshHead = !hasClassifier(source)
    const int8 = isInt8Folder(source)
    if (freshHead && int8) throw new HostInputError(`${source} is an int8 model without a token-classification head: quantize a model that has one`)
    if (freshHead && keepFiles) throw new HostInputError(`${source} has no token-classification head: it cannot tag as it is`)
    if (freshHead) {
      if (!headLabels || headLabels.length < 3) {
        throw new HostInputError(
          `${source} has no token-classification head (a bare encoder such as BioBERT or PubMedBERT). ` +
            'Import annotated documents first: the new head is made for the workspace’s entity types.',
        )
      }
      for (const name of [...ck.model.heads.keys()]) if (name !== DEFAULT_HEAD) ck.model.removeHead(name)
      ck.model.setHead(DEFAULT_HEAD, headLabels, seed)
      const types = typesOfLabels(headLabels)
      notes.splice(0, notes.length, ...notes.filter((n) => !/fresh head/.test(n)))
      notes.push(
        `no classifier in the checkpoint: imported as a teacher with a new head for ${types.join(', ')} ` +
          '(randomly initialised): retrain it on reviewed documents before tagging',
      )
    }
    if (ctx.signal.aborted) throw new DOMException('import cancelled', 'AbortError')
    phase(ctx, `Writing ${dest}`)
    const metadata = { ...ck.metadata, imported: { from: source, at: new Date().toISOString(), freshHead } }
    if (keepFiles) {
      // Every file as it is: f16 or int8 weights stay as small as they were, and a model.onnx
      // exported beside them is still current (ensureOnnx compares content fingerprints).
      mkdirSync(dest, { recursive: true })
      for (const e of readdirSync(source, { withFileTypes: true })) {
        if (e.isFile() && e.name !== METADATA_FILE && !e.name.startsWith(TEMP_PREFIX)) copyFileSync(join(source, e.name), join(dest, e.name))
      }
      writeFileAtomic(join(dest, METADATA_FILE), [JSON.stringify(metadata, null, 2) + '\n'])
    } else if (int8) {
      // The loaded model holds the dequantized weights: saving it would write float32. Keep the
      // int8 files as they are (model.onnx is exported again beside them when first tagged).
      mkdirSync(dest, { recursive: true })
      for (const f of ['config.json', 'vocab.txt', 'tokenizer_config.json', 'model.safetensors']) if (existsSync(join(source, f))) copyFileSync(join(source, f), join(dest, f))
      writeFileAtomic(join(dest, METADATA_FILE), [JSON.stringify(metadata, null, 2) + '\n'])
    } else {
      await saveCheckpoint(dest, ck.model, ck.vocab, { lowercase: ck.lowercase, metadata })
    }
    return { summary: summarize(dest, ck.model), notes, freshHead, backend: b.name }
  } finally {
    ck.model.dispose()
  }
}

/** What a new model starts from: a randomly initialised preset, or a workspace model's encoder. */
interface TrainingStart {
  model: BertTokenClassifier
  tokenizer: WordPieceTokenizer
  lr: number
  warmupRatio: number
  maxLength: number
  sentenceLevel: boolean
  metadata: Record<string, unknown>
  note: string
}

function scratchStart(p: HostParams<'trainModel'>, labels: string[], ctx: JobContext): TrainingStart {
  if (!p.preset || !isPresetName(p.preset)) throw new HostInputError(`unknown preset '${p.preset}' (one of ${PRESET_NAMES.join(', ')})`)
  phase(ctx, 'Learning the WordPiece vocabulary')
  const vocab = trainWordPieceVocab(
    [...p.train, ...p.dev].map((d) => d.text),
    { vocabSize: p.vocabSize ?? SCRATCH_RECIPE.vocabSize, lowercase: SCRATCH_RECIPE.lowercase },
  )
  return {
    model: BertTokenClassifier.random(presetConfig(p.preset, { vocabSize: vocab.tokens.length }), p.seed, { [DEFAULT_HEAD]: labels }),
    tokenizer: new WordPieceTokenizer(vocab.tokens, { lowercase: SCRATCH_RECIPE.lowercase }),
    lr: p.lr ?? SCRATCH_RECIPE.lr,
    warmupRatio: SCRATCH_RECIPE.warmupRatio,
    maxLength: p.maxLength ?? TRAIN_DEFAULTS.maxLength,
    sentenceLevel: TRAIN_DEFAULTS.sentenceLevel,
    metadata: { preset: p.preset },
    note: `vocabulary: ${vocab.tokens.length} WordPiece tokens learnt from the training text`,
  }
}

/**
 * Fine-tuning a model's encoder (an adapted model, an imported BioBERT…) with its vocabulary and
 * windows; its default head is kept when it has exactly the workspace's labels, else a new one is
 * made. The folder is only read.
 */
async function initStart(p: HostParams<'trainModel'>, initDir: string, labels: string[], ctx: JobContext): Promise<TrainingStart> {
  phase(ctx, `Loading ${initDir}`)
  const ck = await loadCheckpoint(initDir, { heads: { [DEFAULT_HEAD]: labels }, seed: p.seed })
  const meta = trainingMeta(ck.metadata)
  const fresh = ck.notes.some((n) => /fresh head/.test(n))
  return {
    model: ck.model,
    tokenizer: new WordPieceTokenizer(ck.vocab, { lowercase: ck.lowercase, source: join(initDir, 'vocab.txt') }),
    lr: p.lr ?? continuedTrainingLr(meta.lr, ck.config.hiddenSize),
    warmupRatio: FINETUNE_RECIPE.warmupRatio,
    maxLength: Math.min(p.maxLength ?? meta.maxLength ?? TRAIN_DEFAULTS.maxLength, ck.config.maxPositionEmbeddings),
    sentenceLevel: meta.sentenceLevel ?? TRAIN_DEFAULTS.sentenceLevel,
    metadata: { init: initDir },
    note: `initialised from ${initDir} (${ck.vocab.length}-piece vocabulary; ${fresh ? `a new head for ${typesOfLabels(labels).join(', ')}` : 'its head kept'})`,
  }
}

const trainModel: Job<'trainModel'> = async (p, ctx) => {
  const types = typesOf(p.train)
  if (types.length === 0) throw new HostInputError('the training documents have no accepted annotations: nothing to learn')
  const b = await ensureBackend()
  const t0 = performance.now()
  const labels = buildLabelMap(types).labels
  const start = p.initDir ? await initStart(p, p.initDir, labels, ctx) : scratchStart(p, labels, ctx)
  const curve: TrainedCheckpoint['curve'] = []
  let result
  try {
    phase(ctx, `Training ${p.initDir ? 'from the base model' : p.preset} on ${p.train.length} documents`)
    result = await train({
      model: start.model,
      tokenizer: start.tokenizer,
      train: p.train,
      dev: p.dev.length ? p.dev : undefined,
      outDir: p.dir,
      epochs: p.epochs,
      batchSize: p.batchSize ?? TRAIN_DEFAULTS.batchSize,
      lr: start.lr,
      warmupRatio: start.warmupRatio,
      seed: p.seed,
      maxLength: start.maxLength,
      sentenceLevel: start.sentenceLevel,
      onProgress: stepReporter(ctx, curve),
      signal: ctx.signal,
      checkpoint: { metadata: { ...p.metadata, ...start.metadata, backend: b.name } },
    })
  } finally {
    start.model.dispose()
  }
  const saved = result.checkpointDir !== null
  const scored = saved ? await scoreSaved(p.dir, p.dev) : null
  return {
    cancelled: result.cancelled,
    saved,
    summary: scored?.summary ?? null,
    devScores: scored?.devScores ?? null,
    bestEpoch: result.bestEpoch,
    steps: result.steps,
    epochs: result.epochs.length,
    seconds: (performance.now() - t0) / 1000,
    backend: b.name,
    notes: [start.note, `trainer: ${result.trainer} (${result.trainerReason})`],
    curve,
  }
}

const retrain: Job<'retrain'> = async (p, ctx) => {
  const b = await ensureBackend()
  const t0 = performance.now()
  const notes: string[] = []
  const extra: CorpusDocument[] = []
  for (const path of p.extraCorpusPaths) {
    phase(ctx, `Reading ${path}`)
    const r = await readCorpusFile(path)
    extra.push(...r.documents)
    notes.push(`${path}: ${r.documents.length} extra training documents`)
  }
  phase(ctx, 'Loading the base model')
  const base = await loadCheckpoint(p.baseDir, { trainable: false })
  const baseMeta = trainingMeta(base.metadata)
  const maxLength = baseMeta.maxLength ?? Math.min(TRAIN_DEFAULTS.maxLength, base.config.maxPositionEmbeddings)
  const sentenceLevel = baseMeta.sentenceLevel ?? TRAIN_DEFAULTS.sentenceLevel
  const evalOpts = { maxLength, sentenceLevel }
  const tokenizer = new WordPieceTokenizer(base.vocab, { lowercase: base.lowercase, source: join(p.baseDir, 'vocab.txt') })
  const baseHead = base.model.heads.get(DEFAULT_HEAD) ?? [...base.model.heads.values()][0]
  const baseLabels = baseHead ? [...baseHead.labels] : ['O']
  const known = new Set(typesOfLabels(baseLabels))
  const wanted = typesOf([...p.train, ...p.heldOut, ...extra])
  const newTypes = wanted.filter((t) => !known.has(t))
  const labels = newTypes.length ? buildLabelMap([...known, ...newTypes]).labels : baseLabels
  if (newTypes.length) notes.push(`the base model does not know ${newTypes.join(', ')}: its classifier head was replaced by a new one for ${typesOfLabels(labels).join(', ')}`)

  // Before: the base as it is on disk, on the held-out documents.
  phase(ctx, `Scoring the base model on ${p.heldOut.length} held-out documents`)
  let before: ScoresWithTypes
  try {
    const baseForEval = baseHead && base.model.heads.has(DEFAULT_HEAD) ? DEFAULT_HEAD : [...base.model.heads.keys()][0]
    before = scores(await evaluate(base.model, tokenizer, p.heldOut, { ...evalOpts, head: baseForEval }))
  } finally {
    base.model.dispose()
  }
  if (ctx.signal.aborted) return cancelledRetrain(p, b, before, notes, t0)

  const ck = await loadCheckpoint(p.baseDir, { heads: { [DEFAULT_HEAD]: labels }, seed: p.seed })
  const lr = p.lr ?? continuedTrainingLr(baseMeta.lr, base.config.hiddenSize)
  const curve: TrainedCheckpoint['curve'] = []
  try {
    phase(ctx, `Fine-tuning on ${p.train.length + extra.length} documents`)
    const result = await train({
      model: ck.model,
      tokenizer,
      train: [...p.train, ...extra],
      dev: p.heldOut,
      epochs: p.epochs,
      lr,
      seed: p.seed,
      maxLength,
      sentenceLevel,
      onProgress: stepReporter(ctx, curve),
      signal: ctx.signal,
    })
    if (result.cancelled) return cancelledRetrain(p, b, before, notes, t0, curve)
    notes.push(`trainer: ${result.trainer} (${result.trainerReason})`)
    // The last epoch is the candidate (no selection on the held-out documents: "after" stays an
    // honest estimate; the curve shows every epoch).
    const after = scores(await evaluate(ck.model, tokenizer, p.heldOut, evalOpts))
    phase(ctx, 'Saving the candidate')
    const training: TrainingMetadata = {
      head: DEFAULT_HEAD,
      labels,
      maxLength,
      stride: baseMeta.stride ?? null,
      sentenceLevel,
      epoch: result.epochs.length,
      step: result.steps,
      seed: p.seed,
      batchSize: TRAIN_DEFAULTS.batchSize,
      lr,
      dev: { precision: after.precision, recall: after.recall, f1: after.f1 },
      trainer: result.trainer,
      trainerReason: result.trainerReason,
      tokensPerSecond: result.tokensPerSecond,
    }
    await saveCheckpoint(p.candidateDir, ck.model, [...tokenizer.vocab], {
      lowercase: tokenizer.lowercase,
      metadata: { ...base.metadata, training, retrained: { from: p.baseDir, at: new Date().toISOString(), before, after } },
    })
    return {
      cancelled: false,
      saved: true,
      summary: summarize(p.candidateDir, ck.model),
      devScores: after,
      bestEpoch: result.epochs.length,
      steps: result.steps,
      epochs: result.epochs.length,
      seconds: (performance.now() - t0) / 1000,
      backend: b.name,
      notes,
      curve,
      before,
      after,
      extraDocuments: extra.length,
    }
  } catch (e) {
    rmSync(p.candidateDir, { recursive: true, force: true })
    throw e
  } finally {
    ck.model.dispose()
  }
}

function cancelledRetrain(
  p: HostParams<'retrain'>,
  b: BackendInfo,
  before: ScoresWithTypes,
  notes: string[],
  t0: number,
  curve: TrainedCheckpoint['curve'] = [],
): HostResult<'retrain'> {
  rmSync(p.candidateDir, { recursive: true, force: true })
  return {
    cancelled: true,
    saved: false,
    summary: null,
    devScores: null,
    bestEpoch: null,
    steps: curve.filter((c) => c.devF1 === undefined).length,
    epochs: curve.filter((c) => c.devF1 !== undefined).length,
    seconds: (performance.now() - t0) / 1000,
    backend: b.name,
    notes,
    curve,
    before,
    after: null,
    extraDocuments: 0,
  }
}

const distill: Job<'distill'> = async (p, ctx) => {
  const b = await ensureBackend()
  const t0 = performance.now()
  const teacher = readCheckpointInfo(p.teacherDir)
  const windows = windowSettingsOf(teacher)
  const teacherLayers = teacher.config.numHiddenLayers
  if (!(p.layers >= 1 && p.layers <= teacherLayers)) {
    throw new HostInputError(`a ${p.layers}-layer student cannot be distilled from a ${teacherLayers}-layer teacher (1..${teacherLayers} layers)`)
  }
  const curve: TrainedCheckpoint['curve'] = []
  const report = stepReporter(ctx, curve)
  const headNames = Object.keys(headLabelsOf(teacher))
  const task = headNames.includes(DEFAULT_HEAD) ? DEFAULT_HEAD : headNames[0]
  const teacherLr = teacher.training.lr
  const lr = p.lr ?? continuedTrainingLr(teacherLr, teacher.config.hiddenSize)
  phase(ctx, `Distilling a ${p.layers}-layer student`)
  const run = await distillCheckpoints({
    teacherDirs: [p.teacherDir],
    layers: p.layers,
    tasks: [{ name: task, train: p.train, dev: p.dev.length ? p.dev : undefined }],
    kd: p.mode,
    outDir: p.outDir,
    epochs: p.epochs,
    seed: p.seed,
    lr,
    maxLength: windows.maxLength,
    sentenceLevel: windows.sentenceLevel,
    signal: ctx.signal,
    log,
    onProgress: (e) => {
      if (e.kind === 'cache') phase(ctx, `Computing the teacher's outputs: ${e.done} of ${e.total} examples`, e.done, e.total)
      else report({ ...e, kind: e.kind === 'eval' ? 'eval' : 'step' })
    },
  })
  const saved = run.result.checkpointDir !== null
  const scored = saved ? await scoreSaved(p.outDir, p.dev) : null
  return {
    cancelled: run.result.cancelled,
    saved,
    summary: scored?.summary ?? null,
    devScores: scored?.devScores ?? null,
    bestEpoch: run.result.bestEpoch,
    steps: run.result.steps,
    epochs: run.result.epochs.length,
    seconds: (performance.now() - t0) / 1000,
    backend: b.name,
    notes: [
      run.inherited
        ? `initialised from the teacher's embeddings and layers ${run.layerMap.join(', ')}`
        : 'randomly initialised (the width differs from the teacher)',
    ],
    curve,
    layerMap: run.layerMap,
  }
}

const compare: Job<'compare'> = async (p, ctx) => {
  await ensureBackend()
  // The engines compare opens are its own: free ours first so both never sit in memory.
  await releaseTaggers(null)
  phase(ctx, `Measuring ${p.dirs.length} models on ${p.gold.length} documents`)
  return compareModels(p.dirs, p.gold, { names: p.names, logger: log })
}

const tag: Job<'tag'> = async (p, ctx) => {
  const tagger = await cachedTagger(p.modelDir)
  const tagged = await tagger.tag(p.docs, { signal: ctx.signal })
  const docs = p.docs.map((d, i) => ({
    id: d.id,
    mentions: tagged[i].mentions.map((x) => ({ start: x.start, end: x.end, type: x.type, confidence: x.confidence })),
    uncertainty: tagged[i].uncertainty,
  }))
  return { engine: tagger.engine.engine, engineReason: tagger.engine.reason, docs }
}

const adaptModel: Job<'adaptModel'> = async (p, ctx) => {
  const t0 = performance.now()
  // The clear refusals first, before any model code runs: a folder without a vocabulary (or
  // without [MASK]) cannot be pretrained with its own pieces, and too little text only disturbs it.
  const base = readCheckpointInfo(p.baseDir)
  if (base.vocab.length === 0) throw new HostInputError(`${join(p.baseDir, 'vocab.txt')}: the model has no vocabulary; it cannot be adapted`)
  if (!base.vocab.includes('[MASK]')) {
    throw new HostInputError(`${join(p.baseDir, 'vocab.txt')}: the vocabulary has no [MASK] piece, which masked-LM adaptation needs`)
  }
  const documents = p.documents.map((d) => ({ file: `document ${d.id}`, line: 0, lines: d.lines })).filter((d) => d.lines.length > 0)
  const words = wordCount(documents.flatMap((d) => d.lines))
  if (words < p.minWords) {
    throw new HostInputError(`The documents hold ${words.toLocaleString('en-US')} words; adapting a model needs at least ${p.minWords.toLocaleString('en-US')}`)
  }
  const b = await ensureBackend()
  const lr = p.lr ?? continuedTrainingLr(base.training.lr, base.config.hiddenSize)
  const maxLength = Math.min(p.maxLength, base.config.maxPositionEmbeddings)
  const curve: TrainedCheckpoint['curve'] = []
  const report = stepReporter(ctx, curve)
  // The last step seen (for the epoch-end events and the epochs reached).
  const seen: { last: RunProgress | null } = { last: null }
  // The base's own records (how it was trained, its windows, where it came from) stay: tagging
  // and retraining read the training record; `pretraining` and `adapted` are added.
  const { pretraining: _previousPretraining, ...baseMetadata } = (base.metadata ?? {}) as Record<string, unknown>
  phase(ctx, `Reading ${documents.length.toLocaleString('en-US')} documents (${words.toLocaleString('en-US')} words)`)
  try {
    const r = await pretrain({
      text: [],
      documents,
      init: p.baseDir,
      keepHeads: true,
      outDir: p.outDir,
      maxLength,
      epochs: p.epochs,
      maxSteps: p.maxSteps,
      batchSize: p.batchSize,
      lr,
      seed: p.seed,
      heldOutEvery: p.heldOutEvery,
      // Saves at epoch ends only: the app never resumes a run (a cancelled one is removed).
      saveEverySeconds: Infinity,
      threads: inferenceThreads(),
      metadata: { ...baseMetadata, adapted: { ...p.provenance, from: p.baseDir, at: new Date().toISOString(), documents: documents.length, words } },
      signal: ctx.signal,
      log,
      onProgress: (e) => {
        seen.last = e
        report(e)
      },
      onHeldOut: (epoch, s) => {
        const last = seen.last
        curve.push({ step: last?.step ?? 0, loss: s.loss, maskedAccuracy: s.accuracy })
        ctx.progress({
          kind: 'eval',
          step: last?.step ?? 0,
          totalSteps: last?.totalSteps ?? 0,
          epoch,
          epochs: last?.epochs ?? p.epochs,
          loss: s.loss,
          maskedAccuracy: s.accuracy,
          tokensPerSecond: last?.tokensPerSecond ?? 0,
          etaSeconds: last?.etaSeconds ?? 0,
        } satisfies JobProgress)
      },
    })
    const common = {
      bestEpoch: null,
      steps: r.steps,
      epochs: seen.last?.epoch ?? 0,
      seconds: (performance.now() - t0) / 1000,
      backend: r.trainer,
      curve,
      words,
      documents: documents.length,
      sequences: r.sequences,
      heldOutSequences: r.heldOutSequences,
      heldOut: r.heldOut,
      firstLoss: r.firstLoss,
      lastLoss: r.lastLoss,
      tokensPerSecond: r.tokensPerSecond,
      lr,
      devScores: null,
    }
    if (r.cancelled) {
      // Epoch-end saves may exist: a cancelled adaptation leaves nothing (the base is untouched).
      clearFolder(p.outDir)
      return { ...common, cancelled: true, saved: false, summary: null, notes: [] }
    }
    // Only a resume would read the optimizer state; the app never resumes.
    rmSync(join(p.outDir, OPTIMIZER_FILE), { force: true })
    phase(ctx, 'Checking the adapted model')
    const { summary } = await scoreSaved(p.outDir, [])
    const notes = [
      `trainer: ${r.trainer} (${r.trainerReason})`,
      `${r.sequences} sequences of up to ${maxLength} pieces for training, ${r.heldOutSequences} held out; peak learning rate ${lr}`,
    ]
    return { ...common, cancelled: false, saved: true, summary, notes }
  } catch (e) {
    clearFolder(p.outDir)
    if (e instanceof PretrainError) throw new HostInputError(e.message)
    throw e
  }
}

/** Empties a folder main reserved for a job (main removes the folder itself with the row). */
function clearFolder(dir: string): void {
  if (!existsSync(dir)) return
  for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true, force: true })
}

const release: Job<'release'> = async ({ dir }) => ({ released: await releaseTaggers(dir) })

export const JOBS: { [M in keyof HostMethods]?: Job<M> } = {
  engineInfo,
  importModel,
  trainModel,
  tag,
  retrain,
  distill,
  compare,
  adaptModel,
  release,
}
