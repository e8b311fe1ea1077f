// The distill job: a smaller student distilled from a workspace model.
import { isWordTaggerFolder } from '../../core/model/word-tagger'
import { continuedTrainingLr } from '@shared/recipes'
import { distillCheckpoints } from '../../core/distill/run'
import { DEFAULT_HEAD } from '../../core/model/bert'
import { headLabelsOf, readCheckpointInfo } from '../../core/model/checkpoint-files'
import { windowSettingsOf } from '../../core/tag/open'
import type { TrainedCheckpoint } from '../protocol'
import { ensureBackend, HostInputError, log, phase, scoreSaved, stepReporter, type Job } from './common'

export const distill: Job<'distill'> = async (p, ctx) => {
  const b = await ensureBackend()
  const t0 = performance.now()
  if (isWordTaggerFolder(p.teacherDir)) throw new HostInputError(`${p.teacherDir} is a word tagger: distilling it into a BERT student is not available yet; choose a BERT teacher`)
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
      `trainer: ${run.result.trainer} (${run.result.trainerReason})`,
    ],
    curve,
    layerMap: run.layerMap,
  }
}
