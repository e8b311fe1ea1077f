// The one training runner: batching, optimizer steps through a TrainerEngine, cancel, divergence
// checks, progress/ETA, devel evaluation, best-epoch save, patience and resume. Tasks (token
// classification in loop.ts; distillation and pretraining next) supply only the examples, the
// engine (which owns the loss graph and the optimizer) and how to evaluate and save.
//
// Randomness derives from `seed` only (batch order per epoch, dropout per global step), so the
// same seed, engine and thread count replay the same losses, and a resumed run continues the
// curve of the run it resumes.

import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { readSafetensors, writeSafetensors, type TensorToWrite } from '../model/safetensors'
import { collate, countBatches, planBatches, type BatchableExample, type HostBatch } from './batching'
import type { TrainerEngine } from './engine'
import type { OptimizerState } from './optimizer'
import { deriveSeed } from '../rng'

export interface DevScores {
  precision: number
  recall: number
  f1: number
}

export interface RunProgress {
  /** 'step' after each optimizer step; 'eval' after each devel evaluation. */
  kind: 'step' | 'eval'
  epoch: number
  epochs: number
  step: number
  totalSteps: number
  /** This step's loss ('step') or the epoch's mean loss ('eval'). */
  loss: number
  lr: number
  /** Real (unpadded) tokens per second of training time so far. */
  tokensPerSecond: number
  /** Remaining time at the current pace, evaluations included. */
  etaSeconds: number
  devF1?: number
}

export interface EpochRecord {
  epoch: number
  loss: number
  steps: number
  seconds: number
  dev?: DevScores
  saved: boolean
}

/** Where a run stands after a save; enough to resume it. */
export interface SavePoint {
  /** Epochs completed. */
  epoch: number
  /** Optimizer steps done. */
  step: number
  dev: DevScores | null
  /** Batches of epoch `epoch + 1` already trained when the save was made within an epoch. */
  batchesIntoEpoch?: number
}

export interface ResumePoint extends SavePoint {
  bestEpoch: number | null
  bestDevF1: number | null
  optimizer: OptimizerState
}

export interface RunnerOptions {
  examples: readonly BatchableExample[]
  /**
   * The examples of one epoch, when they change from epoch to epoch (masked-LM draws new masks):
   * same count and lengths as `examples`, which still decides the batch plan.
   */
  examplesOfEpoch?: (epoch: number) => readonly BatchableExample[]
  /**
   * Also save within an epoch once this many seconds have passed since the last save (long
   * pretraining epochs); a resumed run continues after the last batch saved. Such saves are
   * made without evaluation, so use them only where every save replaces the previous one.
   */
  saveEverySeconds?: number
  engine: TrainerEngine
  /**
   * The batches of an epoch (example indices), when the task plans its own (distillation keeps
   * one corpus per batch); default: length-bucketed shuffled batches over all examples.
   */
  planEpoch?: (epoch: number) => number[][]
  /** Loss targets of a batch, per head. */
  labels: (b: HostBatch) => Record<string, Int32Array>
  padTokenId: number
  epochs: number
  batchSize: number
  seed: number
  plannedSteps: number
  patience?: number
  /** Entity-level scores on devel after `epoch`; the runner syncs the engine's weights into the model first. */
  evaluate?: (epoch: number) => Promise<DevScores> | DevScores
  /** Saves the model (weights already synced); returns where, or null when nothing was saved. */
  save?: (p: SavePoint) => Promise<string | null>
  /** Continue a run from its last save. */
  resume?: ResumePoint
  onProgress?: (p: RunProgress) => void
  signal?: AbortSignal
  /** For the divergence message. */
  peakLr: number
}

export interface RunResult {
  /** Loss of every optimizer step, in order. */
  losses: number[]
  steps: number
  plannedSteps: number
  epochs: EpochRecord[]
  bestEpoch: number | null
  bestDevF1: number | null
  /** Where the best checkpoint is, when something was saved. */
  checkpointDir: string | null
  cancelled: boolean
  stoppedEarly: boolean
  /** Real tokens processed by training steps. */
  trainTokens: number
  trainSeconds: number
  evalSeconds: number
  tokensPerSecond: number
}

/** Lets timers and abort events run between steps (a step is long work). */
const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

export class DivergenceError extends Error {
  override name = 'DivergenceError'
}

export function plannedStepsOf(numExamples: number, batchSize: number, epochs: number, maxSteps?: number): { stepsPerEpoch: number; plannedSteps: number } {
  const stepsPerEpoch = countBatches(numExamples, batchSize)
  return { stepsPerEpoch, plannedSteps: Math.min(maxSteps ?? Infinity, stepsPerEpoch * epochs) }
}

export async function runTraining(o: RunnerOptions): Promise<RunResult> {
  const lengths = o.examples.map((e) => e.inputIds.length)
  const planEpoch = o.planEpoch ?? ((epoch: number) => planBatches(lengths, { batchSize: o.batchSize, seed: o.seed, epoch, shuffle: true }))
  const stepsPerEpoch = o.planEpoch ? o.planEpoch(1).length : countBatches(o.examples.length, o.batchSize)
  const plannedSteps = o.plannedSteps
  const patience = o.patience ?? Infinity
  const r: RunResult = {
    losses: [],
    steps: 0,
    plannedSteps,
    epochs: [],
    bestEpoch: null,
    bestDevF1: null,
    checkpointDir: null,
    cancelled: false,
    stoppedEarly: false,
    trainTokens: 0,
    trainSeconds: 0,
    evalSeconds: 0,
    tokensPerSecond: 0,
  }
  let firstEpoch = 1
  let skipBatches = 0
  if (o.resume) {
    skipBatches = o.resume.batchesIntoEpoch ?? 0
    o.engine.loadOptimizerState(o.resume.optimizer)
    r.steps = o.resume.step
    r.bestEpoch = o.resume.bestEpoch
    r.bestDevF1 = o.resume.bestDevF1
    firstEpoch = o.resume.epoch + 1
  }
  let sinceBest = 0
  let trainMs = 0
  let evalMs = 0
  let evals = 0
  let stepsThisRun = 0
  const save = async (p: SavePoint): Promise<boolean> => {
    if (!o.save) return false
    o.engine.syncModel()
    const dir = await o.save(p)
    if (dir) r.checkpointDir = dir
    return dir !== null
  }
  const evalEta = (laterSteps: number) => (evals > 0 ? (evalMs / evals) * Math.ceil(laterSteps / stepsPerEpoch) : 0)

  let lastSave = performance.now()
  outer: for (let epoch = firstEpoch; epoch <= o.epochs; epoch++) {
    if (r.steps >= plannedSteps) break
    const epochStart = performance.now()
    const plan = planEpoch(epoch)
    const examples = o.examplesOfEpoch ? o.examplesOfEpoch(epoch) : o.examples
    if (examples.length !== o.examples.length) throw new Error(`examplesOfEpoch(${epoch}) gave ${examples.length} examples, expected ${o.examples.length}`)
    let lossSum = 0
    let epochSteps = 0
    const skip = skipBatches
    skipBatches = 0
    for (const [batchIndex, idx] of plan.entries()) {
      if (batchIndex < skip) continue
      if (o.signal?.aborted) {
        r.cancelled = true
        break outer
      }
      if (r.steps >= plannedSteps) break
      const t0 = performance.now()
      const batch = collate(examples, idx, { padTokenId: o.padTokenId })
      const info = await o.engine.step(batch, o.labels(batch), deriveSeed(o.seed, 0x5eed, r.steps))
      if (!Number.isFinite(info.loss) || !Number.isFinite(info.gradNorm)) {
        throw new DivergenceError(
          `training diverged: ${Number.isFinite(info.loss) ? `gradient norm is ${info.gradNorm}` : `loss is ${info.loss}`} at step ${r.steps + 1} (lower the learning rate, now ${o.peakLr})`,
        )
      }
      r.steps++
      stepsThisRun++
      r.losses.push(info.loss)
      r.trainTokens += batch.numTokens
      lossSum += info.loss
      epochSteps++
      trainMs += performance.now() - t0
      const laterSteps = Math.max(0, plannedSteps - r.steps - (plan.length - epochSteps))
      o.onProgress?.({
        kind: 'step',
        epoch,
        epochs: o.epochs,
        step: r.steps,
        totalSteps: plannedSteps,
        loss: info.loss,
        lr: info.lr,
        tokensPerSecond: r.trainTokens / (trainMs / 1000),
        etaSeconds: ((plannedSteps - r.steps) * (trainMs / stepsThisRun) + (o.evaluate && evals > 0 ? (evalMs / evals) * (1 + Math.ceil(laterSteps / stepsPerEpoch)) : 0)) / 1000,
      })
      if (o.saveEverySeconds !== undefined && performance.now() - lastSave >= o.saveEverySeconds * 1000 && batchIndex < plan.length - 1) {
        await save({ epoch: epoch - 1, step: r.steps, dev: null, batchesIntoEpoch: batchIndex + 1 })
        lastSave = performance.now()
      }
      await yieldToEventLoop()
    }
    if (epochSteps === 0) break
    const record: EpochRecord = { epoch, loss: lossSum / epochSteps, steps: epochSteps, seconds: 0, saved: false }
    if (o.evaluate) {
      const e0 = performance.now()
      o.engine.syncModel()
      const dev = await o.evaluate(epoch)
      evalMs += performance.now() - e0
      evals++
      record.dev = { precision: dev.precision, recall: dev.recall, f1: dev.f1 }
      if (r.bestDevF1 === null || dev.f1 > r.bestDevF1) {
        r.bestDevF1 = dev.f1
        r.bestEpoch = epoch
        sinceBest = 0
        record.saved = await save({ epoch, step: r.steps, dev: record.dev })
      } else {
        sinceBest++
      }
      o.onProgress?.({
        kind: 'eval',
        epoch,
        epochs: o.epochs,
        step: r.steps,
        totalSteps: plannedSteps,
        loss: record.loss,
        lr: o.engine.currentLr(),
        tokensPerSecond: r.trainTokens / Math.max(1e-9, trainMs / 1000),
        etaSeconds: ((plannedSteps - r.steps) * (trainMs / Math.max(1, stepsThisRun)) + evalEta(plannedSteps - r.steps)) / 1000,
        devF1: dev.f1,
      })
    } else {
      r.bestEpoch = epoch
      record.saved = await save({ epoch, step: r.steps, dev: null })
    }
    lastSave = performance.now()
    record.seconds = (performance.now() - epochStart) / 1000
    r.epochs.push(record)
    if (sinceBest >= patience) {
      r.stoppedEarly = epoch < o.epochs
      break
    }
    if (o.signal?.aborted) {
      r.cancelled = true
      break
    }
  }
  r.trainSeconds = trainMs / 1000
  r.evalSeconds = evalMs / 1000
  r.tokensPerSecond = trainMs > 0 ? r.trainTokens / (trainMs / 1000) : 0
  return r
}

// ---- optimizer state beside the checkpoint --------------------------------------------------

export const OPTIMIZER_FILE = 'optimizer.safetensors'

/**
 * Writes the AdamW moments and the save point to dir/optimizer.safetensors (atomically), and
 * `params`: trained values that are not part of the checkpoint (distillation's projections W).
 */
export function saveOptimizerState(dir: string, s: OptimizerState, p: SavePoint, extra: Record<string, string> = {}, params?: ReadonlyMap<string, Float32Array>): void {
  const tensors = new Map<string, TensorToWrite>()
  for (const [n, m] of s.m) tensors.set(`m.${n}`, { shape: [m.length], data: m })
  for (const [n, v] of s.v) tensors.set(`v.${n}`, { shape: [v.length], data: v })
  for (const [n, x] of params ?? []) tensors.set(`p.${n}`, { shape: [x.length], data: x })
  writeSafetensors(join(dir, OPTIMIZER_FILE), tensors, { ...extra, step: String(s.step), save_point: JSON.stringify(p) })
}

/** Reads dir/optimizer.safetensors; null when there is none. */
export function loadOptimizerState(dir: string): { state: OptimizerState; point: SavePoint; metadata: Record<string, string>; params: Map<string, Float32Array> } | null {
  const path = join(dir, OPTIMIZER_FILE)
  if (!existsSync(path)) return null
  const f = readSafetensors(path)
  const m = new Map<string, Float32Array>()
  const v = new Map<string, Float32Array>()
  const params = new Map<string, Float32Array>()
  for (const [name, t] of f.tensors) {
    if (!(t.data instanceof Float32Array)) throw new Error(`${path}: ${name} is not float32`)
    if (name.startsWith('m.')) m.set(name.slice(2), t.data)
    else if (name.startsWith('v.')) v.set(name.slice(2), t.data)
    else if (name.startsWith('p.')) params.set(name.slice(2), t.data)
  }
  const step = Number(f.metadata.step)
  let point: SavePoint
  try {
    point = JSON.parse(f.metadata.save_point ?? '') as SavePoint
  } catch {
    throw new Error(`${path}: no save point in the metadata (not written by fastbioner?)`)
  }
  if (!Number.isInteger(step) || step !== point.step) throw new Error(`${path}: step ${f.metadata.step} does not match its save point`)
  return { state: { step, m, v }, point, metadata: f.metadata, params }
}

export function readJsonIfExists(path: string): unknown {
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : null
}
