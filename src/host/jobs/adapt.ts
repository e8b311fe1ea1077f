// The adaptModel job: continued masked-LM pretraining on the workspace's documents.
import { isWordTaggerFolder } from '../../core/model/word-tagger'
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { continuedTrainingLr } from '@shared/recipes'
import { inheritedMetadata, readCheckpointInfo } from '../../core/model/checkpoint-files'
import { pretrain, PretrainError } from '../../core/pretrain/run'
import { wordCount } from '../../core/pretrain/text'
import { OPTIMIZER_FILE, type RunProgress } from '../../core/train/runner'
import type { JobProgress, TrainedCheckpoint } from '../protocol'
import { ensureBackend, HostInputError, inferenceThreads, log, phase, scoreSaved, stepReporter, type Job } from './common'

export const adaptModel: Job<'adaptModel'> = async (p, ctx) => {
  const t0 = performance.now()
  // The clear refusals first, before any model code runs: a folder without a vocabulary (or
  // without [MASK]) cannot be pretrained with its own pieces, and too little text only disturbs it.
  if (isWordTaggerFolder(p.baseDir)) throw new HostInputError(`${p.baseDir} is a word tagger: adapting is masked-language-model pretraining of a BERT encoder; a word tagger learns from your corrections (Retrain)`)
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
  const { pretraining: _previousPretraining, ...baseMetadata } = inheritedMetadata(base.metadata, { sameHeads: true })
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
