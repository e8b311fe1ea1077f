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
import { documentsToExamples, type Example } from '../nlp/examples'
import type { WordPieceTokenizer } from '../nlp/tokenizer'
import { checkMaxLength } from '../tag/tagger'
import type { BatchableExample } from './batching'
import { openTrainer, type TrainerPreference } from './engine'
import { linearScheduleWithWarmup, warmupStepsFromRatio } from './optimizer'
import {
  loadOptimizerState,
  OPTIMIZER_FILE,
  plannedStepsOf,
  runTraining,
  saveOptimizerState,
  type EpochRecord,
  type ResumePoint,
  type RunProgress,
  type RunResult,
} from './runner'

/** Progress of a training run (see core/train/runner). */
export type TrainProgress = RunProgress

export interface TrainOptions {
  model: BertTokenClassifier
  tokenizer: WordPieceTokenizer
  train: readonly CorpusDocument[]
  /** Devel documents for model selection and early stopping. */
  dev?: readonly CorpusDocument[]
  /** Head to train (its labels define the label map). Default 'default'. */
  head?: string
  /**
   * Checkpoint directory: the best model by devel F1 (or the latest epoch without devel) is
   * saved there, atomically, after each improving epoch. Omit to keep the model in memory only.
   */
  outDir?: string
  /**
   * Passed to saveCheckpoint: `lowercase` (default: the tokenizer's) and extra metadata for
   * fastbioner.json (the loop adds a `training` record: settings, epoch, devel scores).
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
  stride?: number
  /** One example per sentence (default true): short sequences, no overlap duplication. */
  sentenceLevel?: boolean
  /** Stop after this many evaluations without a devel F1 improvement. Default: never. */
  patience?: number
  /** Hard cap on optimizer steps (the schedule is planned for min(cap, epochs·steps)). */
  maxSteps?: number
  evalBatchSize?: number
  onProgress?: (p: TrainProgress) => void
  /** Checked between steps; the run ends cleanly and the best checkpoint stays as it was. */
  signal?: AbortSignal
  /** Trainer engine: 'auto' (default: onnxruntime, else tfjs; FASTBIONER_TRAINER overrides). */
  trainer?: TrainerPreference
  /** onnxruntime intra-op threads (default: all cores). */
  threads?: number
  /**
   * Continue the run saved in outDir (model weights already loaded from it by the caller): the
   * optimizer state beside the checkpoint and its save point are read back, and training goes
   * on from the epoch after it with the same options.
   */
  resume?: boolean
  /** Dropout on (default). Off only to compare engines step for step. */
  dropout?: boolean
  /** Told which engine trains, and why, once it has started. */
  onTrainer?: (trainer: string, reason: string) => void
}

export type { EpochRecord }

/** The runner's result plus what the token-classification task adds. */
export interface TrainResult extends RunResult {
  trainExamples: number
  wallSeconds: number
  labels: string[]
  /** Engine that trained ('onnxruntime-cpu', 'tfjs-wasm', …) and why. */
  trainer: string
  trainerReason: string
  /** Epoch the run resumed after, when it resumed. */
  resumedAfterEpoch: number | null
}

export type { TrainingMetadata } from '../model/checkpoint-files'


export function headLabelMap(model: BertTokenClassifier, head = DEFAULT_HEAD): LabelMap {
  const info = model.heads.get(head)
  if (!info) throw new Error(`model has no head '${head}' (heads: ${[...model.heads.keys()].join(', ') || 'none'})`)
  return labelMapFromLabels(info.labels)
}

export async function train(opts: TrainOptions): Promise<TrainResult> {
  const t0 = performance.now()
  const { model, tokenizer } = opts
  const head = opts.head ?? DEFAULT_HEAD
  const labelMap = headLabelMap(model, head)
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
  const examples: Example[] = documentsToExamples(opts.train, tokenizer, labelMap, exOpts).filter((e) => e.labels.some((l) => l !== -100))
  if (examples.length === 0) throw new Error('no training examples: the training documents contain no tokens')
  const { plannedSteps } = plannedStepsOf(examples.length, batchSize, epochs, opts.maxSteps)
  const warmup = warmupStepsFromRatio(plannedSteps, opts.warmupRatio ?? TRAIN_DEFAULTS.warmupRatio)
  const engine = await openTrainer({
    model,
    heads: [head],
    optimizer: {
      lr: linearScheduleWithWarmup(peakLr, warmup, plannedSteps),
      weightDecay: opts.weightDecay ?? TRAIN_DEFAULTS.weightDecay,
      maxGradNorm: opts.maxGradNorm === undefined ? TRAIN_DEFAULTS.maxGradNorm : opts.maxGradNorm,
    },
    prefer: opts.trainer,
    threads: opts.threads,
    dropout: opts.dropout,
  })
  opts.onTrainer?.(engine.trainer, engine.reason)

  let tokensPerSecond = 0
  let run: RunResult
  try {
    run = await runTraining({
      examples: examples as BatchableExample[],
      engine,
      labels: (b) => ({ [head]: b.labels }),
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
        opts.dev && opts.dev.length > 0
          ? async () =>
              (
                await evaluate(model, tokenizer, opts.dev!, {
                  batchSize: opts.evalBatchSize ?? TRAIN_DEFAULTS.evalBatchSize,
                  maxLength,
                  stride: opts.stride,
                  sentenceLevel,
                  head,
                })
              ).overall
          : undefined,
      save: opts.outDir
        ? async (point) => {
            const outDir = opts.outDir!
            const training: TrainingMetadata = {
              head,
              labels: labelMap.labels,
              maxLength,
              stride: opts.stride ?? null,
              sentenceLevel,
              epoch: point.epoch,
              step: point.step,
              seed,
              batchSize,
              lr: peakLr,
              dev: point.dev,
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
        : undefined,
    })
    // The model object is the result of training: leave the latest weights in it.
    engine.syncModel()
  } finally {
    await engine.dispose()
  }
  return {
    ...run,
    trainExamples: examples.length,
    wallSeconds: (performance.now() - t0) / 1000,
    labels: labelMap.labels,
    trainer: engine.trainer,
    trainerReason: engine.reason,
    resumedAfterEpoch: resume ? resume.epoch : null,
  }
}
