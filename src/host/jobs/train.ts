// The trainModel job: a new model from a preset (scratch) or from a workspace model's encoder.
import { join } from 'node:path'
import { continuedTrainingLr, FINETUNE_RECIPE, isPresetName, PRESET_NAMES, SCRATCH_RECIPE, TRAIN_DEFAULTS, WORD_LSTM } from '@shared/recipes'
import { isWordTaggerFolder } from '../../core/model/word-tagger'
import { trainWordTaggerJob } from './word-tagger'
import { BertTokenClassifier, DEFAULT_HEAD } from '../../core/model/bert'
import { loadCheckpoint } from '../../core/model/checkpoint'
import { presetConfig } from '../../core/model/presets'
import { buildLabelMap, typesOfLabels } from '../../core/nlp/bio'
import { WordPieceTokenizer } from '../../core/nlp/tokenizer'
import { trainWordPieceVocab } from '../../core/nlp/vocab-trainer'
import { augmentByMentionReplacement } from '../../core/train/augment'
import { train } from '../../core/train/loop'
import type { HostParams, TrainedCheckpoint } from '../protocol'
import type { JobContext } from '../job'
import { ensureBackend, HostInputError, phase, stepReporter, trainedCheckpoint, trainingMeta, typesOf, type Job } from './common'

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
  /** Mention-replaced copies of the training documents and checkpoint averaging (the scratch recipe's levers). */
  augmentCopies: number
  averageLast: number
}

function scratchStart(p: HostParams<'trainModel'>, labels: string[], ctx: JobContext): TrainingStart {
  if (!p.preset || !isPresetName(p.preset)) throw new HostInputError(`unknown preset '${p.preset}' (one of ${PRESET_NAMES.join(', ')})`)
  phase(ctx, 'Learning the WordPiece vocabulary')
  const vocab = trainWordPieceVocab(
    [...p.train, ...p.dev].map((d) => d.text),
    { vocabSize: p.vocabSize ?? SCRATCH_RECIPE.vocabSize, lowercase: SCRATCH_RECIPE.lowercase },
  )
  const model = BertTokenClassifier.random(presetConfig(p.preset, { vocabSize: vocab.tokens.length }), p.seed, { [DEFAULT_HEAD]: labels })
  if (SCRATCH_RECIPE.crf) model.addCrf(DEFAULT_HEAD)
  return {
    model,
    tokenizer: new WordPieceTokenizer(vocab.tokens, { lowercase: SCRATCH_RECIPE.lowercase }),
    lr: p.lr ?? SCRATCH_RECIPE.lr,
    warmupRatio: SCRATCH_RECIPE.warmupRatio,
    maxLength: p.maxLength ?? TRAIN_DEFAULTS.maxLength,
    sentenceLevel: TRAIN_DEFAULTS.sentenceLevel,
    metadata: { preset: p.preset },
    note: `vocabulary: ${vocab.tokens.length} WordPiece tokens learnt from the training text${SCRATCH_RECIPE.crf ? '; CRF output layer' : ''}`,
    augmentCopies: SCRATCH_RECIPE.augmentCopies,
    averageLast: SCRATCH_RECIPE.averageLast,
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
    augmentCopies: 0,
    averageLast: 0,
    note: `initialised from ${initDir} (${ck.vocab.length}-piece vocabulary; ${fresh ? `a new head for ${typesOfLabels(labels).join(', ')}` : 'its head kept'})`,
  }
}
export const trainModel: Job<'trainModel'> = async (p, ctx) => {
  const types = typesOf(p.train)
  if (types.length === 0) throw new HostInputError('the training documents have no accepted annotations: nothing to learn')
  if (p.initDir ? isWordTaggerFolder(p.initDir) : p.preset === WORD_LSTM) return trainWordTaggerJob(p, ctx)
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
      train: start.augmentCopies > 0 ? augmentByMentionReplacement(p.train, { copies: start.augmentCopies, seed: p.seed }) : p.train,
      dev: p.dev.length ? p.dev : undefined,
      averageLast: p.dev.length && start.averageLast >= 2 ? start.averageLast : undefined,
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
  return trainedCheckpoint(result, { dir: p.dir, dev: p.dev, t0, backend: b.name, notes: [start.note, `trainer: ${result.trainer} (${result.trainerReason})`], curve })
}
