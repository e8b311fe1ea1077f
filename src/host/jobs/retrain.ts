// The retrain job: fine-tunes a workspace model on reviewed documents into a candidate, scored before and after.
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { continuedTrainingLr, TRAIN_DEFAULTS } from '@shared/recipes'
import { evaluate } from '../../core/eval/evaluate'
import { DEFAULT_HEAD } from '../../core/model/bert'
import { loadCheckpoint, saveCheckpoint } from '../../core/model/checkpoint'
import { inheritedMetadata, type TrainingMetadata } from '../../core/model/checkpoint-files'
import { buildLabelMap, typesOfLabels } from '../../core/nlp/bio'
import { WordPieceTokenizer } from '../../core/nlp/tokenizer'
import { train } from '../../core/train/loop'
import { isWordTaggerFolder } from '../../core/model/word-tagger'
import { retrainWordTagger } from './word-tagger'
import type { ScoresWithTypes, TrainedCheckpoint } from '../protocol'
import { ensureBackend, phase, scores, stepReporter, summarize, trainingMeta, typesOf, type Job, readExtraCorpora, cancelledRetrain, savedRetrain } from './common'

export const retrain: Job<'retrain'> = async (p, ctx) => {
  if (isWordTaggerFolder(p.baseDir)) return retrainWordTagger(p, ctx)
  const b = await ensureBackend()
  const t0 = performance.now()
  const { extra, notes } = await readExtraCorpora(p.extraCorpusPaths, ctx)
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
  if (ctx.signal.aborted) return cancelledRetrain(p, b.name, before, notes, t0)

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
      maxSteps: p.maxSteps,
      lr,
      seed: p.seed,
      maxLength,
      sentenceLevel,
      onProgress: stepReporter(ctx, curve),
      signal: ctx.signal,
    })
    if (result.cancelled) return cancelledRetrain(p, b.name, before, notes, t0, curve)
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
      metadata: { ...inheritedMetadata(base.metadata, { sameHeads: false }), training, retrained: { from: p.baseDir, at: new Date().toISOString(), before, after } },
    })
    const run = { summary: summarize(p.candidateDir, ck.model), after, epochs: result.epochs.length, steps: result.steps, backend: b.name, extraDocuments: extra.length }
    return savedRetrain(run, before, notes, t0, curve)
  } catch (e) {
    rmSync(p.candidateDir, { recursive: true, force: true })
    throw e
  } finally {
    ck.model.dispose()
  }
}
