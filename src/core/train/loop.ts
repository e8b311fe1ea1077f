// Fine-tuning loop for token classification, and batched prediction for tagging/evaluation.
//
// One step: batch (padded to its own longest sequence) → forward in training mode with a
// per-step dropout seed → masked cross-entropy → gradients → AdamW (clip, decay, schedule).
// Everything that decides randomness derives from `seed` (batch order per epoch, dropout per
// step), so the same seed on the same backend replays the same losses bit for bit.

import * as tf from '@tensorflow/tfjs-core'
import type { CorpusDocument } from '../../shared/domain'
import { evaluateSpans, type EvalResult } from '../eval/metrics'
import { DEFAULT_HEAD, type BertTokenClassifier } from '../model/bert'
import { saveCheckpoint } from '../model/checkpoint'
import { ensureGradients } from '../model/gradients'
import { labelMapFromLabels, type LabelMap } from '../nlp/bio'
import { documentsToExamples, planTagging, predictionsToMentions, type Example, type ScoredMention, type TaggingPlan } from '../nlp/examples'
import type { WordPieceTokenizer } from '../nlp/tokenizer'
import { collate, countBatches, disposeBatch, planBatches, toTensors, type BatchableExample } from './batching'
import { maskedCrossEntropy } from './loss'
import { AdamW, linearScheduleWithWarmup, warmupStepsFromRatio } from './optimizer'
import { deriveSeed } from './rng'

export interface TrainProgress {
  /** 'step' after each optimizer step; 'eval' after each devel evaluation. */
  kind: 'step' | 'eval'
  /** 1-based. */
  epoch: number
  epochs: number
  /** Optimizer steps done (1-based after the first step). */
  step: number
  totalSteps: number
  /** Loss of this step ('step') or mean loss of the epoch ('eval'). */
  loss: number
  lr: number
  /** Real (unpadded) tokens per second of training time so far. */
  tokensPerSecond: number
  /** Remaining training time at the current pace (evaluation time included proportionally). */
  etaSeconds: number
  /** Entity-level F1 on devel, on 'eval' events. */
  devF1?: number
}

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
}

export interface EpochRecord {
  epoch: number
  /** Mean training loss over the epoch's steps. */
  loss: number
  steps: number
  seconds: number
  dev?: { precision: number; recall: number; f1: number }
  /** This epoch's model was saved as the best. */
  saved: boolean
}

export interface TrainResult {
  /** Loss of every optimizer step, in order. */
  losses: number[]
  steps: number
  plannedSteps: number
  epochs: EpochRecord[]
  bestEpoch: number | null
  bestDevF1: number | null
  /** Where the best checkpoint is, when outDir was given and something was saved. */
  checkpointDir: string | null
  cancelled: boolean
  stoppedEarly: boolean
  trainExamples: number
  /** Real tokens processed by training steps. */
  trainTokens: number
  trainSeconds: number
  evalSeconds: number
  wallSeconds: number
  tokensPerSecond: number
  labels: string[]
}

/** What the loop records in fastbioner.json; `tag`/`eval` read maxLength etc. back from it. */
export interface TrainingMetadata {
  head: string
  labels: string[]
  maxLength: number
  stride: number | null
  sentenceLevel: boolean
  epoch: number
  step: number
  seed: number
  batchSize: number
  lr: number
  dev: { precision: number; recall: number; f1: number } | null
}

export const TRAIN_DEFAULTS = {
  epochs: 3,
  batchSize: 16,
  lr: 5e-5,
  warmupRatio: 0.1,
  weightDecay: 0.01,
  maxGradNorm: 1.0,
  seed: 42,
  maxLength: 128,
  sentenceLevel: true,
  evalBatchSize: 32,
} as const

/** Lets timers and abort events run between steps (a step is long synchronous work). */
const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

export function headLabelMap(model: BertTokenClassifier, head = DEFAULT_HEAD): LabelMap {
  const info = model.heads.get(head)
  if (!info) throw new Error(`model has no head '${head}' (heads: ${[...model.heads.keys()].join(', ') || 'none'})`)
  return labelMapFromLabels(info.labels)
}

function checkLength(model: BertTokenClassifier, maxLength: number): void {
  if (!Number.isInteger(maxLength) || maxLength < 3) throw new Error(`max length must be an integer >= 3, got ${maxLength}`)
  if (maxLength > model.config.maxPositionEmbeddings) {
    throw new Error(`max length ${maxLength} exceeds the model's max_position_embeddings ${model.config.maxPositionEmbeddings}`)
  }
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
  const patience = opts.patience ?? Infinity
  checkLength(model, maxLength)
  if (!(Number.isInteger(epochs) && epochs >= 1)) throw new Error(`epochs must be a positive integer, got ${epochs}`)
  if (!(Number.isInteger(batchSize) && batchSize >= 1)) throw new Error(`batch size must be a positive integer, got ${batchSize}`)
  if (!(peakLr > 0)) throw new Error(`learning rate must be > 0, got ${peakLr}`)
  // Registered by initBackend/useBackend already; a caller that set a backend itself may not have.
  await ensureGradients()

  const exOpts = { maxLength, stride: opts.stride, sentenceLevel }
  // Examples with no labelled position (empty sentences) would only cost time.
  const examples: Example[] = documentsToExamples(opts.train, tokenizer, labelMap, exOpts).filter((e) => e.labels.some((l) => l !== -100))
  if (examples.length === 0) throw new Error('no training examples: the training documents contain no tokens')
  const lengths = examples.map((e) => e.inputIds.length)
  const stepsPerEpoch = countBatches(examples.length, batchSize)
  const plannedSteps = Math.min(opts.maxSteps ?? Infinity, stepsPerEpoch * epochs)
  const warmup = warmupStepsFromRatio(plannedSteps, opts.warmupRatio ?? TRAIN_DEFAULTS.warmupRatio)

  const params = new Map([...model.variables()].filter(([, v]) => v.trainable))
  const optimizer = new AdamW(params, {
    lr: linearScheduleWithWarmup(peakLr, warmup, plannedSteps),
    weightDecay: opts.weightDecay ?? TRAIN_DEFAULTS.weightDecay,
    maxGradNorm: opts.maxGradNorm === undefined ? TRAIN_DEFAULTS.maxGradNorm : opts.maxGradNorm,
  })
  const padTokenId = tokenizer.padId

  const result: TrainResult = {
    losses: [],
    steps: 0,
    plannedSteps,
    epochs: [],
    bestEpoch: null,
    bestDevF1: null,
    checkpointDir: null,
    cancelled: false,
    stoppedEarly: false,
    trainExamples: examples.length,
    trainTokens: 0,
    trainSeconds: 0,
    evalSeconds: 0,
    wallSeconds: 0,
    tokensPerSecond: 0,
    labels: labelMap.labels,
  }
  let sinceBest = 0
  let trainMs = 0
  let evalMs = 0
  let evals = 0

  const save = async (epoch: number, dev?: EpochRecord['dev']) => {
    if (!opts.outDir) return false
    const training: TrainingMetadata = {
      head,
      labels: labelMap.labels,
      maxLength,
      stride: opts.stride ?? null,
      sentenceLevel,
      epoch,
      step: result.steps,
      seed,
      batchSize,
      lr: peakLr,
      dev: dev ?? null,
    }
    await saveCheckpoint(opts.outDir, model, [...tokenizer.vocab], {
      lowercase: opts.checkpoint?.lowercase ?? tokenizer.lowercase,
      metadata: { ...opts.checkpoint?.metadata, training },
    })
    result.checkpointDir = opts.outDir
    return true
  }

  try {
    outer: for (let epoch = 1; epoch <= epochs; epoch++) {
      const epochStart = performance.now()
      const plan = planBatches(lengths, { batchSize, seed, epoch, shuffle: true })
      let lossSum = 0
      let epochSteps = 0
      for (const idx of plan) {
        if (opts.signal?.aborted) {
          result.cancelled = true
          break outer
        }
        if (result.steps >= plannedSteps) break
        const stepStart = performance.now()
        const batch = toTensors(collate(examples as BatchableExample[], idx, { padTokenId }))
        const stepSeed = deriveSeed(seed, 0x5eed, result.steps)
        let info: ReturnType<AdamW['step']>
        try {
          info = optimizer.step(() => {
            const out = model.forward(
              { inputIds: batch.inputIds, attentionMask: batch.attentionMask, tokenTypeIds: batch.tokenTypeIds },
              { training: true, seed: stepSeed, heads: [head] },
            )
            return maskedCrossEntropy(out.logits[head], batch.labels) // [] over labelled pieces
          })
        } finally {
          disposeBatch(batch)
        }
        if (!Number.isFinite(info.loss)) {
          throw new Error(`training diverged: loss is ${info.loss} at step ${result.steps + 1} (lower the learning rate, now ${peakLr})`)
        }
        result.steps++
        result.losses.push(info.loss)
        result.trainTokens += batch.numTokens
        lossSum += info.loss
        epochSteps++
        trainMs += performance.now() - stepStart
        const msPerStep = trainMs / result.steps
        // Evaluations still to come (this epoch's included), at the mean cost of those done.
        const laterSteps = Math.max(0, plannedSteps - result.steps - (plan.length - epochSteps))
        const evalsLeft = opts.dev && evals > 0 ? 1 + Math.ceil(laterSteps / stepsPerEpoch) : 0
        opts.onProgress?.({
          kind: 'step',
          epoch,
          epochs,
          step: result.steps,
          totalSteps: plannedSteps,
          loss: info.loss,
          lr: info.lr,
          tokensPerSecond: result.trainTokens / (trainMs / 1000),
          etaSeconds: ((plannedSteps - result.steps) * msPerStep + (evals > 0 ? (evalMs / evals) * evalsLeft : 0)) / 1000,
        })
        await yieldToEventLoop()
      }
      if (epochSteps === 0) break
      const record: EpochRecord = { epoch, loss: lossSum / epochSteps, steps: epochSteps, seconds: 0, saved: false }
      if (opts.dev && opts.dev.length > 0) {
        const evalStart = performance.now()
        const ev = evaluate(model, tokenizer, opts.dev, {
          batchSize: opts.evalBatchSize ?? TRAIN_DEFAULTS.evalBatchSize,
          maxLength,
          stride: opts.stride,
          sentenceLevel,
          head,
        })
        evalMs += performance.now() - evalStart
        evals++
        const { precision, recall, f1 } = ev.overall
        record.dev = { precision, recall, f1 }
        if (result.bestDevF1 === null || f1 > result.bestDevF1) {
          result.bestDevF1 = f1
          result.bestEpoch = epoch
          sinceBest = 0
          record.saved = await save(epoch, record.dev)
        } else {
          sinceBest++
        }
        opts.onProgress?.({
          kind: 'eval',
          epoch,
          epochs,
          step: result.steps,
          totalSteps: plannedSteps,
          loss: record.loss,
          lr: optimizer.currentLr(),
          tokensPerSecond: result.trainTokens / Math.max(1e-9, trainMs / 1000),
          etaSeconds: ((plannedSteps - result.steps) * (trainMs / result.steps) + (evalMs / evals) * Math.ceil((plannedSteps - result.steps) / stepsPerEpoch)) / 1000,
          devF1: f1,
        })
      } else {
        result.bestEpoch = epoch
        record.saved = await save(epoch)
      }
      record.seconds = (performance.now() - epochStart) / 1000
      result.epochs.push(record)
      if (sinceBest >= patience) {
        result.stoppedEarly = epoch < epochs
        break
      }
      if (result.steps >= plannedSteps) break
      if (opts.signal?.aborted) {
        result.cancelled = true
        break
      }
    }
  } finally {
    optimizer.dispose()
  }
  result.trainSeconds = trainMs / 1000
  result.evalSeconds = evalMs / 1000
  result.wallSeconds = (performance.now() - t0) / 1000
  result.tokensPerSecond = trainMs > 0 ? result.trainTokens / (trainMs / 1000) : 0
  return result
}

export interface PredictOptions {
  batchSize?: number
  maxLength?: number
  stride?: number
  /** Must match how the model was trained; default true. */
  sentenceLevel?: boolean
  head?: string
  /** Documents planned and run together; bounds the memory held for window outputs. */
  docsPerChunk?: number
  onProgress?: (docsDone: number, docsTotal: number) => void
  signal?: AbortSignal
}

/**
 * Mentions (with confidences) for each document, in input order. Long documents and long
 * sentences are cut into overlapping windows and merged (core/nlp/windows).
 */
export function predict(model: BertTokenClassifier, tokenizer: WordPieceTokenizer, docs: readonly CorpusDocument[], opts: PredictOptions = {}): ScoredMention[][] {
  const head = opts.head ?? DEFAULT_HEAD
  const labelMap = headLabelMap(model, head)
  const maxLength = opts.maxLength ?? Math.min(TRAIN_DEFAULTS.maxLength, model.config.maxPositionEmbeddings)
  checkLength(model, maxLength)
  const batchSize = opts.batchSize ?? TRAIN_DEFAULTS.evalBatchSize
  const exOpts = { maxLength, stride: opts.stride, sentenceLevel: opts.sentenceLevel ?? TRAIN_DEFAULTS.sentenceLevel }
  const chunk = Math.max(1, opts.docsPerChunk ?? 64)
  const numLabels = labelMap.labels.length
  const out: ScoredMention[][] = []
  for (let d0 = 0; d0 < docs.length; d0 += chunk) {
    if (opts.signal?.aborted) throw new DOMException('prediction cancelled', 'AbortError')
    const part = docs.slice(d0, d0 + chunk)
    const plans: TaggingPlan[] = part.map((doc) => planTagging(doc, tokenizer, labelMap, exOpts))
    const flat: Array<{ plan: number; ex: number }> = []
    plans.forEach((p, i) => p.examples.forEach((_, k) => flat.push({ plan: i, ex: k })))
    const exs = flat.map((f) => plans[f.plan].examples[f.ex])
    const probs: Float32Array[][] = plans.map((p) => new Array<Float32Array>(p.examples.length))
    // Sorted by length: inference batches waste nothing on padding; outputs go back by index.
    const batches = planBatches(exs.map((e) => e.inputIds.length), { batchSize, shuffle: false })
    for (const idx of batches) {
      const h = collate(exs, idx, { padTokenId: tokenizer.padId })
      const b = toTensors(h)
      const p = tf.tidy(() => {
        const logits = model.forward({ inputIds: b.inputIds, attentionMask: b.attentionMask, tokenTypeIds: b.tokenTypeIds }, { training: false, heads: [head] }).logits[head]
        return tf.softmax(logits) // [batch, seq, labels]
      })
      disposeBatch(b)
      const data = p.dataSync() as Float32Array
      p.dispose()
      idx.forEach((e, r) => {
        const len = exs[e].inputIds.length
        const f = flat[e]
        probs[f.plan][f.ex] = data.slice(r * h.seqLen * numLabels, (r * h.seqLen + len) * numLabels)
      })
    }
    plans.forEach((plan, i) => out.push(predictionsToMentions(part[i], plan, probs[i])))
    opts.onProgress?.(Math.min(docs.length, d0 + chunk), docs.length)
  }
  return out
}

/** Entity-level exact-span P/R/F1 (and token accuracy) of the model on gold documents. */
export function evaluate(model: BertTokenClassifier, tokenizer: WordPieceTokenizer, gold: readonly CorpusDocument[], opts: PredictOptions = {}): EvalResult {
  const pred = predict(model, tokenizer, gold, opts)
  // By position, not by id: a corpus may repeat an id (NCBI train has PMID 8528200 twice).
  return evaluateSpans(
    gold.map((g, i) => ({ id: String(i), text: g.text, mentions: g.mentions, tokens: g.tokens })),
    pred.map((mentions, i) => ({ id: String(i), mentions })),
  )
}
