// What the model host's jobs share: the request error, the log line, the training backend (set
// up once per process), progress events and the summaries and scores a job reports back.
import { typesOfLabels } from '../../core/nlp/bio'
import { rmSync, statSync } from 'node:fs'
import { availableParallelism, cpus } from 'node:os'
import { join } from 'node:path'
import type { CorpusDocument } from '@shared/domain'
import { readCorpusFile } from '../../core/corpus'
import { evaluate, evaluateTagger } from '../../core/eval/evaluate'
import type { EvalResult } from '../../core/eval/metrics'
import { initBackend, type BackendInfo } from '../../core/model/backend'
import { BertTokenClassifier, DEFAULT_HEAD } from '../../core/model/bert'
import { loadCheckpoint } from '../../core/model/checkpoint'
import type { TrainingMetadata } from '../../core/model/checkpoint-files'
import { WordPieceTokenizer } from '../../core/nlp/tokenizer'
import { isInt8Folder } from '../../core/onnx/quantize'
import { openTagger } from '../../core/tag/open'
import type { TagOptions } from '../../core/tag/tagger'
import type { TrainProgress } from '../../core/train/loop'
import type { HostMethods, HostParams, HostResult, JobProgress, ModelSummary, ScoresWithTypes, TrainedCheckpoint } from '../protocol'
import type { JobContext } from '../job'

/** A problem with the request the user can act on (reported as 'invalid_request'). */
export class HostInputError extends Error {
  override name = 'HostInputError'
}

export const log = (line: string) => process.stderr.write(`[model-host] ${line}\n`)

let backend: BackendInfo | null = null
export async function ensureBackend(): Promise<BackendInfo> {
  backend ??= await initBackend({ logger: log })
  return backend
}

/** Cores for onnxruntime: leave one to the main process (the window) when there are several. */
export function inferenceThreads(): number {
  const n = typeof availableParallelism === 'function' ? availableParallelism() : cpus().length
  return Math.max(1, n - 1)
}

export const phase = (ctx: JobContext, message: string, done?: number, total?: number) =>
  ctx.progress({ kind: 'phase', message, done, total } satisfies JobProgress)

/** Step events at most every 200 ms (first, last and every epoch end always). */
export function stepReporter(ctx: JobContext, curve: TrainedCheckpoint['curve']) {
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

export function scores(ev: EvalResult): ScoresWithTypes {
  const pick = (s: { precision: number; recall: number; f1: number }) => ({ precision: s.precision, recall: s.recall, f1: s.f1 })
  return { ...pick(ev.overall), types: Object.fromEntries(Object.entries(ev.types).map(([t, s]) => [t, pick(s)])) }
}


export function summarize(dir: string, model: BertTokenClassifier): ModelSummary {
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

export function trainingMeta(metadata: Record<string, unknown> | undefined): Partial<TrainingMetadata> {
  return ((metadata as { training?: Partial<TrainingMetadata> } | undefined)?.training ?? {}) as Partial<TrainingMetadata>
}

export interface ScoreSavedOptions extends Pick<TagOptions, 'signal' | 'onProgress'> {
  /**
   * 'tfjs' (default): the checkpoint loaded as a tfjs model. 'onnx': our ONNX export of the folder's
   * weights on onnxruntime (openTagger), so an int8 folder is scored through the int8 graph users run,
   * not through the dequantized weights the tfjs model holds.
   */
  engine?: 'tfjs' | 'onnx'
}

/** What a finished training run reports (train, distill): the saved checkpoint scored on `dev`, its steps and timing. */
export async function trainedCheckpoint(
  r: { checkpointDir: string | null; cancelled: boolean; bestEpoch: number | null; steps: number; epochs: readonly unknown[] },
  o: {
    dir: string
    dev: readonly CorpusDocument[]
    t0: number
    backend: string
    notes: string[]
    curve: TrainedCheckpoint['curve']
    /** How the saved folder is loaded and scored (default scoreSaved: a BERT checkpoint). */
    score?: (dir: string, dev: readonly CorpusDocument[]) => Promise<Pick<TrainedCheckpoint, 'summary' | 'devScores'>>
  },
): Promise<TrainedCheckpoint> {
  const saved = r.checkpointDir !== null
  const scored = saved ? await (o.score ?? scoreSaved)(o.dir, o.dev) : null
  return {
    cancelled: r.cancelled,
    saved,
    summary: scored?.summary ?? null,
    devScores: scored?.devScores ?? null,
    bestEpoch: r.bestEpoch,
    steps: r.steps,
    epochs: r.epochs.length,
    seconds: (performance.now() - o.t0) / 1000,
    backend: o.backend,
    notes: o.notes,
    curve: o.curve,
  }
}

/** Loads a saved checkpoint, scores it on `docs` (when any) and summarises it. */
export async function scoreSaved(
  dir: string,
  docs: readonly CorpusDocument[],
  opts: ScoreSavedOptions = {},
): Promise<{ summary: ModelSummary; devScores: ScoresWithTypes | null }> {
  const { engine = 'tfjs', ...tagOpts } = opts
  const ck = await loadCheckpoint(dir, { trainable: false })
  let summary: ModelSummary
  let ev: EvalResult | null = null
  try {
    summary = summarize(dir, ck.model)
    if (docs.length && engine === 'tfjs') {
      const tokenizer = new WordPieceTokenizer(ck.vocab, { lowercase: ck.lowercase, source: join(dir, 'vocab.txt') })
      const t = trainingMeta(ck.metadata)
      ev = await evaluate(ck.model, tokenizer, docs, { maxLength: t.maxLength, sentenceLevel: t.sentenceLevel, stride: t.stride ?? undefined, ...tagOpts })
    }
  } finally {
    ck.model.dispose()
  }
  // After the tfjs copy is freed: the session and the model never sit in memory together.
  if (docs.length && engine === 'onnx') {
    const tagger = await openTagger(dir, { engine: 'onnx', threads: inferenceThreads(), spin: false, logger: log })
    try {
      ev = await evaluateTagger(tagger, docs, tagOpts)
    } finally {
      await tagger.dispose()
    }
  }
  return { summary, devScores: ev && scores(ev) }
}

/** The extra corpus files of a retrain, read whole, with a note per file. */
export async function readExtraCorpora(paths: readonly string[], ctx: JobContext): Promise<{ extra: CorpusDocument[]; notes: string[] }> {
  const extra: CorpusDocument[] = []
  const notes: string[] = []
  for (const path of paths) {
    phase(ctx, `Reading ${path}`)
    const r = await readCorpusFile(path)
    extra.push(...r.documents)
    notes.push(`${path}: ${r.documents.length} extra training documents`)
  }
  return { extra, notes }
}

/** The answer of a retrain stopped before its candidate was saved (the candidate folder removed). */
export function cancelledRetrain(
  p: HostParams<'retrain'>,
  backend: string,
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
    backend,
    notes,
    curve,
    before,
    after: null,
    extraDocuments: 0,
  }
}

/** The result of a retrain that saved its candidate (the last epoch, scored on the held-out documents). */
export function savedRetrain(
  run: { summary: HostResult<'retrain'>['summary']; after: ScoresWithTypes; epochs: number; steps: number; backend: string; extraDocuments: number },
  before: ScoresWithTypes,
  notes: string[],
  t0: number,
  curve: TrainedCheckpoint['curve'],
): HostResult<'retrain'> {
  return {
    cancelled: false,
    saved: true,
    summary: run.summary,
    devScores: run.after,
    bestEpoch: run.epochs,
    steps: run.steps,
    epochs: run.epochs,
    seconds: (performance.now() - t0) / 1000,
    backend: run.backend,
    notes,
    curve,
    before,
    after: run.after,
    extraDocuments: run.extraDocuments,
  }
}

export function typesOf(docs: readonly CorpusDocument[]): string[] {
  return [...new Set(docs.flatMap((d) => d.mentions.map((m) => m.type)))].sort()
}

/** A model-host job: its request's params in, its result out. */
export type Job<M extends keyof HostMethods> = (params: HostParams<M>, ctx: JobContext) => Promise<HostResult<M>>
