// Fine-tuning for token classification on the training runner (core/train/runner.ts); devel
// evaluation tags through core/tag.
//
// One step: batch (padded to its own longest sequence) → the trainer engine (onnxruntime training
// graph, or tfjs autodiff as the fallback) computes the masked cross-entropy and its gradients
// with a per-step dropout seed → AdamW (clip, decay, schedule). Everything that decides
// randomness derives from `seed`, so the same seed, engine and thread count replay the same
// losses.

import type { CorpusDocument } from '../../shared/domain'
import { TRAIN_DEFAULTS } from '../../shared/recipes'
import { evaluate } from '../eval/evaluate'
import { DEFAULT_HEAD, type BertTokenClassifier } from '../model/bert'
import { saveCheckpoint, type TrainingMetadata } from '../model/checkpoint'
import { ensureGradients } from '../model/gradients'
import { labelMapFromLabels, type LabelMap } from '../nlp/bio'
import { documentsToExamples, type Example, type ExampleOptions } from '../nlp/examples'
import { attachCharInputs } from '../model/char-cnn'
import type { WordPieceTokenizer } from '../nlp/tokenizer'
import { checkMaxLength } from '../tag/tagger'
import { IGNORE_INDEX, type BatchableExample, type HostBatch } from './batching'
import { copyParamsIntoModel, openTrainer, type TrainerPreference } from './engine'
import { runOptimizer } from './optimizer'
import {
  loadOptimizerState,
  OPTIMIZER_FILE,
  plannedStepsOf,
  runTraining,
  saveOptimizerState,
  type EpochRecord,
  type DevScores,
  type ResumePoint,
  type RunProgress,
  type RunResult,
  type SavePoint,
} from './runner'

/** Progress of a training run (see core/train/runner). */
export type TrainProgress = RunProgress

/** One corpus of a multi-task run (MT-BioNER): its own head, trained only on its own examples. */
export interface TrainTask {
  head: string
  train: readonly CorpusDocument[]
  dev?: readonly CorpusDocument[]
}

/** The settings every training task (fine-tuning, distillation) takes. */
export interface RunSettings {
  /**
   * Checkpoint directory: the best model by devel F1 (or the latest epoch without devel) is
   * saved there, atomically, after each improving epoch. Omit to keep the model in memory only.
   */
  outDir?: string
  /**
   * Passed to saveCheckpoint: `lowercase` (default: the tokenizer's) and extra metadata for
   * fastbioner.json (the task adds its record: settings, epoch, devel scores).
   */
  checkpoint?: { lowercase?: boolean; metadata?: Record<string, unknown> }
  epochs?: number
  batchSize?: number
  lr?: number
  /** Fraction of all planned steps spent warming up (HF warmup_ratio). */
  warmupRatio?: number
  weightDecay?: number
  /** Global-norm clip; null disables. */
  maxGradNorm?: number | null
  seed?: number
  /** Piece sequence length including [CLS]/[SEP]. */
  maxLength?: number
  /** One example per sentence (default true): short sequences, no overlap duplication. */
  sentenceLevel?: boolean
  /** Stop after this many evaluations without a devel F1 improvement. Default: never. */
  patience?: number
  /** Hard cap on optimizer steps (the schedule is planned for min(cap, epochs·steps)). */
  maxSteps?: number
  /**
   * Checkpoint averaging: after the last epoch, the mean of the weights at the end of the last
   * N epochs is scored on devel and saved when it beats the best single epoch. Needs devel data;
   * holds N copies of the weights in memory.
   */
  averageLast?: number
  evalBatchSize?: number
  /** Checked between steps; the run ends cleanly and the best checkpoint stays as it was. */
  signal?: AbortSignal
  /** Trainer engine: 'auto' (default: onnxruntime, else tfjs; FASTBIONER_TRAINER overrides). */
  trainer?: TrainerPreference
  /** onnxruntime intra-op threads of the trainer (default: all cores). */
  threads?: number
  /** Told which engine trains, and why, once it has started. */
  onTrainer?: (trainer: string, reason: string) => void
}

export interface TrainOptions extends RunSettings {
  model: BertTokenClassifier
  tokenizer: WordPieceTokenizer
  /** Single-task training data (ignored when `tasks` is given). */
  train?: readonly CorpusDocument[]
  /** Devel documents for model selection and early stopping. */
  dev?: readonly CorpusDocument[]
  /** Head to train (its labels define the label map). Default 'default'. */
  head?: string
  /**
   * Multi-task training: one head per corpus. Batches mix corpora; the loss is the sum over heads
   * of each head's mean cross-entropy over its own corpus's positions in the batch, so a corpus
   * that does not annotate a type never teaches another head's "this is O". Model selection uses
   * the mean of the heads' devel F1.
   */
  tasks?: readonly TrainTask[]
  /** Told each head's devel scores after each evaluation (multi-task runs). */
  onTaskScores?: (epoch: number, scores: Record<string, DevScores>) => void
  stride?: number
  onProgress?: (p: TrainProgress) => void
  /**
   * Continue the run saved in outDir (model weights already loaded from it by the caller): the
   * optimizer state beside the checkpoint and its save point are read back, and training goes
   * on from the epoch after it with the same options.
   */
  resume?: boolean
  /** Dropout on (default). Off only to compare engines step for step. */
  dropout?: boolean
}

export type { EpochRecord }

/** The runner's result plus what the token-classification task adds. */
export interface TrainResult extends RunResult {
  trainExamples: number
  wallSeconds: number
  labels: string[]
  /** Each head's devel scores of the best epoch (multi-task runs; also for one task with devel). */
  devByHead: Record<string, DevScores> | null
  /** Engine that trained ('onnxruntime-cpu', 'tfjs-wasm', …) and why. */
  trainer: string
  trainerReason: string
  /** Epoch the run resumed after, when it resumed. */
  resumedAfterEpoch: number | null
  averaged: AveragedOutcome | null
}

/** Checkpoint averaging's outcome (averageLast): the epochs averaged, their devel scores, and whether the average was kept. */
export interface AveragedOutcome {
  epochs: number[]
  dev: DevScores
  kept: boolean
}

/** RunSettings.averageLast checked: the number of epochs to average, 0 when off (below 2). */
export function averagingEpochs(averageLast: number | undefined, hasDev: boolean): number {
  const n = averageLast ?? 0
  if (!(Number.isInteger(n) && n >= 0)) throw new Error(`checkpoint averaging needs a whole number of epochs, got ${n}`)
  if (n >= 2 && !hasDev) throw new Error('checkpoint averaging decides on devel scores: give devel data')
  return n >= 2 ? n : 0
}

export type { TrainingMetadata } from '../model/checkpoint-files'


export function headLabelMap(model: BertTokenClassifier, head = DEFAULT_HEAD): LabelMap {
  const info = model.heads.get(head)
  if (!info) throw new Error(`model has no head '${head}' (heads: ${[...model.heads.keys()].join(', ') || 'none'})`)
  return labelMapFromLabels(info.labels)
}

/**
 * A multi-task batch's loss targets: per head, the labels of the rows whose example belongs to
 * that head's corpus (`taskOf[example]` indexes `heads`) and -100 on every other row.
 */
export function labelsByTask(b: HostBatch, taskOf: readonly number[], heads: readonly string[]): Record<string, Int32Array> {
  const out: Record<string, Int32Array> = {}
  for (const h of heads) out[h] = new Int32Array(b.labels.length).fill(IGNORE_INDEX)
  b.indices.forEach((exampleIndex, row) => {
    const o = row * b.seqLen
    out[heads[taskOf[exampleIndex]]].set(b.labels.subarray(o, o + b.seqLen), o)
  })
  return out
}

/**
 * Devel scores of each task's head and their mean (multi-task model selection: macro average
 * over corpora). Evaluated on onnxruntime when the trainer is onnxruntime (it is at hand, and
 * its forward is several times tfjs's).
 */
export async function evaluateHeads(
  model: BertTokenClassifier,
  tokenizer: WordPieceTokenizer,
  tasks: ReadonlyArray<{ head: string; dev?: readonly CorpusDocument[] }>,
  o: { batchSize: number; maxLength: number; stride?: number; sentenceLevel: boolean; trainer: string },
): Promise<{ byHead: Record<string, DevScores>; mean: DevScores }> {
  const byHead: Record<string, DevScores> = {}
  for (const t of tasks) {
    const { overall } = await evaluate(model, tokenizer, t.dev ?? [], {
      batchSize: o.batchSize,
      maxLength: o.maxLength,
      stride: o.stride,
      sentenceLevel: o.sentenceLevel,
      head: t.head,
      engine: o.trainer.startsWith('onnxruntime') ? 'onnx' : 'tfjs',
    })
    byHead[t.head] = { precision: overall.precision, recall: overall.recall, f1: overall.f1 }
  }
  const all = Object.values(byHead)
  const mean = (k: keyof DevScores) => all.reduce((a, s) => a + s[k], 0) / all.length
  return { byHead, mean: { precision: mean('precision'), recall: mean('recall'), f1: mean('f1') } }
}

export async function train(opts: TrainOptions): Promise<TrainResult> {
  const t0 = performance.now()
  const { model, tokenizer } = opts
  const tasks: readonly TrainTask[] = opts.tasks ?? [{ head: opts.head ?? DEFAULT_HEAD, train: opts.train ?? [], dev: opts.dev }]
  if (tasks.length === 0) throw new Error('no training task')
  const heads = tasks.map((t) => t.head)
  if (new Set(heads).size !== heads.length) throw new Error(`each task needs its own head (got ${heads.join(', ')})`)
  const head = heads[0]
  const labelMaps = tasks.map((t) => headLabelMap(model, t.head))
  const labelMap = labelMaps[0]
  const epochs = opts.epochs ?? TRAIN_DEFAULTS.epochs
  const batchSize = opts.batchSize ?? TRAIN_DEFAULTS.batchSize
  const peakLr = opts.lr ?? TRAIN_DEFAULTS.lr
  const seed = opts.seed ?? TRAIN_DEFAULTS.seed
  const maxLength = opts.maxLength ?? Math.min(TRAIN_DEFAULTS.maxLength, model.config.maxPositionEmbeddings)
  const sentenceLevel = opts.sentenceLevel ?? TRAIN_DEFAULTS.sentenceLevel
  checkMaxLength(maxLength, model.config.maxPositionEmbeddings)
  if (!(Number.isInteger(epochs) && epochs >= 1)) throw new Error(`epochs must be a positive integer, got ${epochs}`)
  if (!(Number.isInteger(batchSize) && batchSize >= 1)) throw new Error(`batch size must be a positive integer, got ${batchSize}`)
  if (!(peakLr > 0)) throw new Error(`learning rate must be > 0, got ${peakLr}`)
  // Registered by initBackend/useBackend already; a caller that set a backend itself may not have.
  await ensureGradients()

  let resume: ResumePoint | undefined
  if (opts.resume) {
    if (!opts.outDir) throw new Error('resume needs the checkpoint directory (outDir) of the run to continue')
    const saved = loadOptimizerState(opts.outDir)
    if (!saved) throw new Error(`${opts.outDir}: no ${OPTIMIZER_FILE}, so there is no run to resume (train without resume)`)
    resume = { ...saved.point, bestEpoch: saved.point.epoch, bestDevF1: saved.point.dev?.f1 ?? null, optimizer: saved.state }
  }

  const exOpts = { maxLength, stride: opts.stride, sentenceLevel }
  // Examples with no labelled position (empty sentences) would only cost time.
  const examples: Example[] = []
  /** Task of each example. */
  const taskOf: number[] = []
  tasks.forEach((t, ti) => {
    const own = trainingExamples(model, t.train, tokenizer, labelMaps[ti], exOpts).filter((e) => e.labels.some((l) => l !== -100))
    if (own.length === 0 && tasks.length > 1) throw new Error(`task '${t.head}': no training examples (its documents contain no tokens)`)
    for (const e of own) {
      examples.push(e)
      taskOf.push(ti)
    }
  })
  if (examples.length === 0) throw new Error('no training examples: the training documents contain no tokens')
  const batchLabels = (b: HostBatch): Record<string, Int32Array> => (tasks.length === 1 ? { [head]: b.labels } : labelsByTask(b, taskOf, heads))
  const devTasks = tasks.filter((t) => t.dev && t.dev.length > 0)
  const devByEpoch = new Map<number, Record<string, DevScores>>()
  const averageLast = averagingEpochs(opts.averageLast, devTasks.length > 0)
  /** Weights at the end of the last `averageLast` epochs, oldest first. */
  const snapshots: Array<{ epoch: number; weights: Map<string, Float32Array> }> = []
  const { plannedSteps } = plannedStepsOf(examples.length, batchSize, epochs, opts.maxSteps)
  const engine = await openTrainer({
    model,
    heads,
    optimizer: runOptimizer(peakLr, plannedSteps, opts),
    prefer: opts.trainer,
    threads: opts.threads,
    dropout: opts.dropout,
  })
  opts.onTrainer?.(engine.trainer, engine.reason)

  let tokensPerSecond = 0
  let averaged: TrainResult['averaged'] = null
  /** The epochs a save's weights average (checkpoint averaging), for its metadata. */
  let averagedInSave: number[] | null = null
  const saveTo = opts.outDir
    ? async (point: SavePoint): Promise<string> => {
        const outDir = opts.outDir!
        const training: TrainingMetadata = {
          head,
          labels: labelMap.labels,
          ...(tasks.length > 1 ? { tasks: heads } : {}),
          ...(devByEpoch.has(point.epoch) ? { devByHead: devByEpoch.get(point.epoch) } : {}),
          maxLength,
          stride: opts.stride ?? null,
          sentenceLevel,
          epoch: point.epoch,
          step: point.step,
          seed,
          batchSize,
          lr: peakLr,
          dev: point.dev,
          ...(averagedInSave ? { averagedEpochs: averagedInSave } : {}),
          trainer: engine.trainer,
          trainerReason: engine.reason,
          tokensPerSecond,
        }
        await saveCheckpoint(outDir, model, [...tokenizer.vocab], {
          lowercase: opts.checkpoint?.lowercase ?? tokenizer.lowercase,
          metadata: { ...opts.checkpoint?.metadata, training },
        })
        saveOptimizerState(outDir, engine.optimizerState(), point, { trainer: engine.trainer })
        return outDir
      }
    : undefined
  let run: RunResult
  try {
    run = await runTraining({
      examples: examples as BatchableExample[],
      engine,
      labels: batchLabels,
      padTokenId: tokenizer.padId,
      epochs,
      batchSize,
      seed,
      plannedSteps,
      patience: opts.patience,
      peakLr,
      resume,
      signal: opts.signal,
      onProgress: (p) => {
        tokensPerSecond = p.tokensPerSecond
        opts.onProgress?.(p)
      },
      evaluate:
        devTasks.length > 0
          ? async (epoch) => {
              if (averageLast >= 2) {
                snapshots.push({ epoch, weights: new Map([...model.variables()].map(([n, v]) => [n, Float32Array.from(v.dataSync() as Float32Array)])) })
                if (snapshots.length > averageLast) snapshots.shift()
              }
              const { byHead, mean } = await scoreDevel()
              devByEpoch.set(epoch, byHead)
              opts.onTaskScores?.(epoch, byHead)
              return mean
            }
          : undefined,
      save: saveTo,
    })
    // The model object is the result of training: leave the latest weights in it.
    engine.syncModel()
    if (snapshots.length >= 2 && !run.cancelled) {
      // The weights as arrays, which averaging sets to the mean and, when devel prefers the best
      // epoch, back to the last epoch's; the model's variables follow them.
      const trained = new Map([...model.variables()].map(([n, v]) => [n, Float32Array.from(v.dataSync() as Float32Array)]))
      const { outcome, byTask } = await averageLastEpochs(trained, snapshots, run.bestDevF1, async () => {
        copyParamsIntoModel(model, trained)
        const { byHead, mean } = await scoreDevel()
        return { byTask: byHead, mean }
      })
      copyParamsIntoModel(model, trained)
      averaged = outcome
      if (outcome.kept) {
        const last = outcome.epochs[outcome.epochs.length - 1]
        devByEpoch.set(last, byTask)
        averagedInSave = outcome.epochs
        const dir = saveTo ? await saveTo({ epoch: last, step: run.steps, dev: outcome.dev }) : null
        if (dir) run.checkpointDir = dir
        run.bestDevF1 = outcome.dev.f1
        run.bestEpoch = last
      }
    }
  } finally {
    await engine.dispose()
  }
  return {
    ...run,
    trainExamples: examples.length,
    wallSeconds: (performance.now() - t0) / 1000,
    labels: labelMap.labels,
    devByHead: run.bestEpoch !== null ? (devByEpoch.get(run.bestEpoch) ?? null) : null,
    trainer: engine.trainer,
    trainerReason: engine.reason,
    resumedAfterEpoch: resume ? resume.epoch : null,
    averaged,
  }

  function scoreDevel() {
    return evaluateHeads(model, tokenizer, devTasks, {
      batchSize: opts.evalBatchSize ?? TRAIN_DEFAULTS.evalBatchSize,
      maxLength,
      stride: opts.stride,
      sentenceLevel,
      trainer: engine.trainer,
    })
  }
}

/**
 * documentsToExamples, with the character channel's inputs (core/model/char-cnn.ts) on each
 * example when the model has one: one document at a time, so each example reads its own text.
 */
export function trainingExamples(model: BertTokenClassifier, docs: readonly CorpusDocument[], tokenizer: WordPieceTokenizer, labelMap: LabelMap, opts: ExampleOptions): Example[] {
  const c = model.config.charCnn
  const vocab = model.charVocab
  if (!c || !vocab) return documentsToExamples(docs, tokenizer, labelMap, opts)
  return docs.flatMap((d) => attachCharInputs(documentsToExamples([d], tokenizer, labelMap, opts), d.text, vocab, c))
}

/**
 * Checkpoint averaging after the last epoch: the trained weights (in place) become the mean of
 * the snapshots' and are scored on devel; kept when they score above `bestDevF1` (the best single
 * epoch's), else the last snapshot's weights, the model's last epoch, are put back. The caller
 * saves a kept average.
 */
export async function averageLastEpochs<S>(
  trained: ReadonlyMap<string, Float32Array>,
  snapshots: ReadonlyArray<{ epoch: number; weights: ReadonlyMap<string, Float32Array> }>,
  bestDevF1: number | null,
  score: () => Promise<{ byTask: S; mean: DevScores }>,
): Promise<{ outcome: AveragedOutcome; byTask: S }> {
  const weights = snapshots.map((s) => s.weights)
  for (const [name, value] of trained) value.set(meanOfSnapshots(weights, name, value.length))
  const { byTask, mean } = await score()
  const kept = bestDevF1 === null || mean.f1 > bestDevF1
  if (!kept) for (const [name, value] of trained) value.set(weights[weights.length - 1].get(name)!)
  return { outcome: { epochs: snapshots.map((s) => s.epoch), dev: mean, kept }, byTask }
}

/**
 * One parameter's element-wise mean over checkpoint snapshots (checkpoint averaging, for every
 * model kind); summed in float64 so that the order of the snapshots does not round the mean.
 */
export function meanOfSnapshots(weights: ReadonlyArray<ReadonlyMap<string, Float32Array>>, name: string, size: number): Float32Array {
  if (weights.length === 0) throw new Error('no weights to average')
  const mean = new Float64Array(size)
  for (const w of weights) {
    const x = w.get(name)
    if (!x || x.length !== size) throw new Error(`checkpoint averaging: ${name} ${x ? `has ${x.length} values, expected ${size}` : 'is missing from a snapshot'}`)
    for (let i = 0; i < size; i++) mean[i] += x[i]
  }
  for (let i = 0; i < size; i++) mean[i] /= weights.length
  return Float32Array.from(mean)
}
