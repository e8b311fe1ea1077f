// Masked-LM pretraining on unlabelled text (BERT recipe, whole-word masking), on the one training
// runner. The result is a HuggingFace BertForMaskedLM folder that `train --init` fine-tunes and
// transformers can load.
//
// All text is read (and the vocabulary learnt) before anything is written, so bad input never
// leaves a half-made folder; after that, checkpoints with optimizer state are written at every
// epoch end, at least every `saveEverySeconds` and when the run is stopped (`signal`), and
// `resume` continues from the last one.
//
// The app's "Adapt to my documents" continues pretraining a workspace model (`init`) on text held
// in memory (`documents`) and keeps its token-classification heads (`keepHeads`): the masked-LM
// graph trains the encoder and the LM head only, so the heads are carried through unchanged and
// the result is still a tagger (on a moved encoder: it wants retraining before its tags count).

import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { BertTokenClassifier, type BertConfig } from '../model/bert'
import { loadCheckpoint, saveCheckpoint } from '../model/checkpoint'
import { findWeightFiles, headLabelsOf, readCheckpointInfo } from '../model/checkpoint-files'
import { headParamNames } from '../model/config'
import { presetConfig } from '../model/presets'
import type { PresetName } from '../../shared/recipes'
import { readSafetensors, readSafetensorsNames } from '../model/safetensors'
import { WordPieceTokenizer } from '../nlp/tokenizer'
import { countWords, trainFromWordCounts } from '../nlp/vocab-trainer'
import { collate, type BatchableExample, type HostBatch } from '../train/batching'
import { linearScheduleWithWarmup, warmupStepsFromRatio } from '../train/optimizer'
import { loadOptimizerState, plannedStepsOf, runTraining, saveOptimizerState, type RunProgress, type SavePoint } from '../train/runner'
import { deriveSeed } from '../rng'
import { ElectraTrainer, GENERATOR_PREFIX, generatorConfig, RTD_HEAD, RTD_LABELS } from './electra'
import { initLmHead, lmHeadFromTensors, lmHeadTensors, MaskedLmTrainer, type HeldOutScores } from './engine'
import { heldOutEvery, maskRng, packDocuments, wholeWordMask, type MaskOptions, type PackedSequence } from './mlm-data'
import { readTextDocuments, type TextDocument } from './text'

export const PRETRAIN_DEFAULTS = {
  preset: 'cpu-small' as PresetName,
  maxLength: 128,
  epochs: 1,
  batchSize: 32,
  /** From scratch; continuing from --init uses initLr. */
  lr: 5e-4,
  initLr: 5e-5,
  warmupRatio: 0.06,
  weightDecay: 0.01,
  seed: 42,
  vocabSize: 8000,
  lowercase: true,
  saveEverySeconds: 600,
  /** Every 100th packed sequence is held out (1 %). */
  heldOutEvery: 100,
}

export interface PretrainOptions {
  text: readonly string[]
  /**
   * Text held in memory, read after the files of `text` (the app passes the workspace's
   * documents). A run with such text cannot be resumed: the text is not in the checkpoint.
   */
  documents?: readonly TextDocument[]
  outDir: string
  preset?: PresetName
  /** Continue pretraining this checkpoint (its vocabulary and encoder; its LM head when present). */
  init?: string
  /**
   * 'mlm' (default): BERT's masked-LM. 'electra': replaced-token detection against a small
   * masked-LM generator (./electra); the result is the discriminator encoder.
   */
  objective?: PretrainObjective
  /**
   * With `init`: keep the checkpoint's token-classification heads in the result (unchanged;
   * masked-LM training does not touch them). Default: dropped, the result is an encoder only.
   */
  keepHeads?: boolean
  /** Hold out every N-th packed sequence for the per-epoch masked-token accuracy (default 100). */
  heldOutEvery?: number
  /** Further keys for fastbioner.json (e.g. the base model's training record), written at every save. */
  metadata?: Record<string, unknown>
  maxLength?: number
  epochs?: number
  maxSteps?: number
  batchSize?: number
  lr?: number
  seed?: number
  vocabSize?: number
  lowercase?: boolean
  /** Continue the run saved in outDir with its own settings. */
  resume?: boolean
  /** Also save within an epoch after this many seconds (default 600); Infinity: at epoch ends only. */
  saveEverySeconds?: number
  threads?: number
  signal?: AbortSignal
  onProgress?: (p: RunProgress) => void
  onHeldOut?: (epoch: number, s: HeldOutScores) => void
  log?: (line: string) => void
}

/** Settings of a run, saved in the checkpoint so that `resume` continues with the same ones. */
export interface PretrainSettings {
  maxLength: number
  epochs: number
  maxSteps: number | null
  batchSize: number
  lr: number
  seed: number
  text: string[]
  /** Absent in runs saved before these settings existed: 100 and false. */
  heldOutEvery?: number
  keepHeads?: boolean
  /** The run read text held in memory (not resumable). */
  inMemoryText?: boolean
  /** Absent in runs saved before ELECTRA existed: 'mlm'. */
  objective?: PretrainObjective
}

export type PretrainObjective = 'mlm' | 'electra'

export interface PretrainResult {
  outDir: string
  firstLoss: number | null
  lastLoss: number | null
  heldOut: Array<{ epoch: number } & HeldOutScores>
  steps: number
  plannedSteps: number
  sequences: number
  heldOutSequences: number
  trainTokens: number
  tokensPerSecond: number
  trainSeconds: number
  wallSeconds: number
  trainer: string
  trainerReason: string
  cancelled: boolean
  resumedAtStep: number | null
  /**
   * The step of the checkpoint in outDir (a stopped run saves the steps it did); null when
   * nothing was saved (stopped before the first training step).
   */
  savedAtStep: number | null
}

export class PretrainError extends Error {
  override name = 'PretrainError'
}

/**
 * The WordPiece vocabulary of a from-scratch model, learnt from the documents' lines (pretrain and
 * wordvec make the same vocabulary from the same text). `onWords` sees every line's normalised words.
 */
export function learnVocabulary(
  docs: readonly TextDocument[],
  o: { vocabSize: number; lowercase: boolean; onWords?: (words: string[]) => void },
): { tokens: string[]; wordTypes: number; wordCounts: Map<string, number> } {
  const counts = countWords(
    (function* () {
      for (const d of docs) yield* d.lines
    })(),
    { lowercase: o.lowercase },
    o.onWords,
  )
  return { tokens: trainFromWordCounts(counts, { vocabSize: o.vocabSize, lowercase: o.lowercase }).tokens, wordTypes: counts.size, wordCounts: counts }
}

export async function collectDocuments(paths: readonly string[]): Promise<TextDocument[]> {
  const docs: TextDocument[] = []
  for await (const d of readTextDocuments(paths)) docs.push(d)
  return docs
}

export async function pretrain(o: PretrainOptions): Promise<PretrainResult> {
  const t0 = performance.now()
  const log = o.log ?? (() => {})
  let settings: PretrainSettings
  let model: BertTokenClassifier
  let vocab: string[]
  let lowercase: boolean
  let head: Map<string, Float32Array> | null = null
  /** ELECTRA's generator (encoder + LM head, graph layout), when resuming one. */
  let generator: Map<string, Float32Array> | null = null
  let resumePoint: (SavePoint & { optimizer: ReturnType<typeof loadOptimizerState> }) | null = null
  let history: PretrainResult['heldOut'] = []

  if (o.resume) {
    const saved = loadOptimizerState(o.outDir)
    if (!saved) throw new PretrainError(`${o.outDir}: no optimizer state, so there is no pretraining run to resume`)
    const meta = (readCheckpointInfo(o.outDir).metadata?.pretraining ?? null) as (PretrainSettings & { step: number; heldOut?: PretrainResult['heldOut'] }) | null
    if (!meta) throw new PretrainError(`${o.outDir}: not a pretraining checkpoint (no pretraining record in fastbioner.json)`)
    if (meta.step !== saved.point.step) throw new PretrainError(`${o.outDir}: weights (step ${meta.step}) and optimizer state (step ${saved.point.step}) disagree; the last save was interrupted — start a new run`)
    if (meta.inMemoryText) throw new PretrainError(`${o.outDir}: this run pretrained on text held in memory (the app's documents), which is not saved with it; it cannot be resumed`)
    // Resume continues the run as it was started: a longer one would also be another learning-rate
    // schedule (it decays to zero at the planned step), not a continuation.
    const changed = [o.epochs !== undefined && o.epochs !== meta.epochs ? `epochs ${meta.epochs}` : '', o.maxSteps !== undefined && o.maxSteps !== meta.maxSteps ? `max steps ${meta.maxSteps ?? 'none'}` : ''].filter(Boolean)
    if (changed.length) throw new PretrainError(`${o.outDir}: resume continues the run as it was started (${changed.join(', ')}); to train further, start a new run from it with --init ${o.outDir}`)
    settings = {
      maxLength: meta.maxLength,
      epochs: meta.epochs,
      maxSteps: meta.maxSteps,
      batchSize: meta.batchSize,
      lr: meta.lr,
      seed: meta.seed,
      text: meta.text,
      heldOutEvery: meta.heldOutEvery,
      keepHeads: meta.keepHeads,
      objective: meta.objective ?? 'mlm',
    }
    const electra = settings.objective === 'electra'
    const ck = await loadCheckpoint(o.outDir, { heads: { ...(settings.keepHeads ? storedHeads(o.outDir) : {}), ...(electra ? { [RTD_HEAD]: RTD_LABELS } : {}) } })
    model = ck.model
    vocab = ck.vocab
    lowercase = ck.lowercase
    if (electra) {
      generator = new Map([...saved.params].filter(([n]) => n.startsWith(GENERATOR_PREFIX)).map(([n, x]) => [n.slice(GENERATOR_PREFIX.length), x]))
      if (generator.size === 0) throw new PretrainError(`${o.outDir}: the optimizer state holds no ELECTRA generator to resume`)
    } else {
      head = lmHeadFromTensors(readSafetensors(join(o.outDir, 'model.safetensors'), (n) => n.startsWith('cls.')).tensors as never, model.config.hiddenSize)
      if (!head) throw new PretrainError(`${o.outDir}: the checkpoint has no masked-LM head to resume`)
    }
    resumePoint = { ...saved.point, optimizer: saved }
    history = meta.heldOut ?? []
    log(`resuming ${o.outDir} after step ${saved.point.step}`)
  } else {
    if (existsSync(o.outDir) && readdirSync(o.outDir).length > 0) {
      throw new PretrainError(`${o.outDir} is not empty; choose a new folder, or --resume to continue the run in it`)
    }
    settings = {
      maxLength: o.maxLength ?? PRETRAIN_DEFAULTS.maxLength,
      epochs: o.epochs ?? PRETRAIN_DEFAULTS.epochs,
      maxSteps: o.maxSteps ?? null,
      batchSize: o.batchSize ?? PRETRAIN_DEFAULTS.batchSize,
      lr: o.lr ?? (o.init ? PRETRAIN_DEFAULTS.initLr : PRETRAIN_DEFAULTS.lr),
      seed: o.seed ?? PRETRAIN_DEFAULTS.seed,
      text: [...o.text],
      heldOutEvery: o.heldOutEvery ?? PRETRAIN_DEFAULTS.heldOutEvery,
      keepHeads: (o.keepHeads ?? false) && o.init !== undefined,
      ...(o.documents ? { inMemoryText: true } : {}),
      objective: o.objective ?? 'mlm',
    }
  }

  const textSource = [...settings.text, ...(o.documents ? [`${o.documents.length} documents given in memory`] : [])].join(', ')
  log(`reading ${textSource}`)
  const docs = settings.text.length ? await collectDocuments(settings.text) : []
  if (o.documents) docs.push(...o.documents)
  if (!o.resume) {
    if (o.init) {
      const heads = settings.keepHeads ? storedHeads(o.init) : {}
      const ck = await loadCheckpoint(o.init, { heads })
      model = ck.model
      vocab = ck.vocab
      lowercase = ck.lowercase
      const tensors = readSafetensorsIfAny(o.init)
      head = tensors ? lmHeadFromTensors(tensors, model.config.hiddenSize) : null
      const kept = Object.keys(heads)
      log(
        `continuing pretraining of ${o.init} (${vocab.length} pieces${head ? ', with its LM head' : ', new LM head'}` +
          `${kept.length ? `; token-classification heads kept: ${kept.join(', ')}` : ''})`,
      )
    } else {
      lowercase = o.lowercase ?? PRETRAIN_DEFAULTS.lowercase
      const learnt = learnVocabulary(docs, { vocabSize: o.vocabSize ?? PRETRAIN_DEFAULTS.vocabSize, lowercase })
      vocab = learnt.tokens
      const config: BertConfig = presetConfig(o.preset ?? PRETRAIN_DEFAULTS.preset, { vocabSize: vocab.length, maxPositionEmbeddings: Math.max(512, settings.maxLength) })
      model = BertTokenClassifier.random(config, settings.seed, {})
      log(`learnt a ${vocab.length}-piece WordPiece vocabulary from ${learnt.wordTypes} word types`)
    }
  }
  model = model!
  vocab = vocab!
  lowercase = lowercase!
  // The tfjs weights live in this process until the end: a long-lived caller (the model host)
  // must not keep them after the run.
  try {
    if (settings.maxLength > model.config.maxPositionEmbeddings) {
      throw new PretrainError(`--max-length ${settings.maxLength} exceeds the model's ${model.config.maxPositionEmbeddings} positions`)
    }
    const electra = settings.objective === 'electra'
    if (electra) {
      if (!model.heads.has(RTD_HEAD)) model.setHead(RTD_HEAD, RTD_LABELS, settings.seed)
      generator ??= initGenerator(model.config, settings.seed)
    } else {
      head ??= initLmHead(model.config.hiddenSize, model.config.vocabSize, model.config.initializerRange, settings.seed)
    }

    const tokenizer = WordPieceTokenizer.fromVocab(vocab, { lowercase })
    const train: PackedSequence[] = []
    const held: PackedSequence[] = []
    const isHeldOut = heldOutEvery(settings.heldOutEvery ?? PRETRAIN_DEFAULTS.heldOutEvery)
    let index = 0
    for (const seq of packDocuments(docs, tokenizer, { maxLength: settings.maxLength })) (isHeldOut(index++) ? held : train).push(seq)
    docs.length = 0
    if (train.length === 0) throw new PretrainError(`${textSource}: no text to pretrain on`)
    log(`${train.length} training sequences, ${held.length} held out (max ${settings.maxLength} pieces)`)

    const maskOpts: MaskOptions = {
      maskId: tokenizer.maskId,
      vocabSize: model.config.vocabSize,
      specialIds: [tokenizer.padId, tokenizer.unkId, tokenizer.clsId, tokenizer.sepId, tokenizer.maskId],
    }
    const masked = (seqs: readonly PackedSequence[], epoch: number, offset: number): BatchableExample[] =>
      seqs.map((s, i) => {
        const m = wholeWordMask(s, maskRng(settings.seed, epoch, offset + i), maskOpts)
        return { inputIds: m.inputIds, labels: m.labels }
      })
    let epochCache: { epoch: number; examples: BatchableExample[] } | null = null
    const examplesOfEpoch = (epoch: number): BatchableExample[] => {
      if (epochCache?.epoch !== epoch) epochCache = { epoch, examples: masked(train, epoch, 0) }
      return epochCache.examples
    }
    // Held-out masks are drawn once (epoch 0 never trains), so epochs are scored on the same task.
    const heldExamples = masked(held, 0, train.length)
    const heldBatches = (): Array<{ batch: HostBatch; labels: Int32Array }> => {
      const out: Array<{ batch: HostBatch; labels: Int32Array }> = []
      for (let i = 0; i < heldExamples.length; i += settings.batchSize) {
        const idx = Array.from({ length: Math.min(settings.batchSize, heldExamples.length - i) }, (_, k) => i + k)
        const batch = collate(heldExamples, idx, { padTokenId: tokenizer.padId })
        out.push({ batch, labels: batch.labels })
      }
      return out
    }

    const { plannedSteps, stepsPerEpoch } = plannedStepsOf(train.length, settings.batchSize, settings.epochs, settings.maxSteps ?? undefined)
    if (resumePoint && resumePoint.step >= plannedSteps) {
      throw new PretrainError(`${o.outDir}: the run finished (step ${resumePoint.step} of ${plannedSteps}); there is nothing to resume. To train further, start a new run from it with --init ${o.outDir}`)
    }
    const optimizer = {
      lr: linearScheduleWithWarmup(settings.lr, warmupStepsFromRatio(plannedSteps, PRETRAIN_DEFAULTS.warmupRatio), plannedSteps),
      weightDecay: PRETRAIN_DEFAULTS.weightDecay,
    }
    const engine = electra
      ? await ElectraTrainer.open(model, generator!, maskOpts.specialIds, optimizer, { threads: o.threads })
      : await MaskedLmTrainer.open(model, head!, optimizer, { threads: o.threads })
    log(`trainer: ${engine.trainer} — ${engine.reason}`)
    let tokensPerSecond = 0
    let savedStep = resumePoint?.step ?? 0
    const saveAt = async (point: SavePoint): Promise<string> => {
      const epochEnd = point.batchesIntoEpoch === undefined
      if (epochEnd && heldExamples.length > 0) {
        const s = await engine.score(heldBatches())
        history.push({ epoch: point.epoch, ...s })
        o.onHeldOut?.(point.epoch, s)
      }
      await saveCheckpoint(o.outDir, model, vocab, {
        lowercase,
        // With kept heads the folder is first a tagger (HF loads either class from it); an
        // ELECTRA discriminator is an encoder with its replaced-token head.
        architectures: engine instanceof ElectraTrainer ? ['BertForTokenClassification'] : model.heads.size ? ['BertForTokenClassification', 'BertForMaskedLM'] : ['BertForMaskedLM'],
        extraTensors: engine instanceof MaskedLmTrainer ? lmHeadTensors(engine.head(), model.config.hiddenSize) : undefined,
        metadata: {
          ...o.metadata,
          pretraining: { ...settings, epoch: point.epoch, step: point.step, batchesIntoEpoch: point.batchesIntoEpoch ?? null, heldOut: history, trainer: engine.trainer, trainerReason: engine.reason, tokensPerSecond },
        },
      })
      saveOptimizerState(o.outDir, engine.optimizerState(), point, { trainer: engine.trainer }, engine instanceof ElectraTrainer ? engine.generatorParams() : undefined)
      savedStep = point.step
      return o.outDir
    }
    try {
      const run = await runTraining({
        examples: examplesOfEpoch(1),
        examplesOfEpoch,
        engine,
        labels: (b) => ({ mlm: b.labels }),
        padTokenId: tokenizer.padId,
        epochs: settings.epochs,
        batchSize: settings.batchSize,
        seed: settings.seed,
        plannedSteps,
        peakLr: settings.lr,
        resume: resumePoint ? { epoch: resumePoint.epoch, step: resumePoint.step, dev: null, batchesIntoEpoch: resumePoint.batchesIntoEpoch, bestEpoch: null, bestDevF1: null, optimizer: resumePoint.optimizer!.state } : undefined,
        saveEverySeconds: o.saveEverySeconds ?? PRETRAIN_DEFAULTS.saveEverySeconds,
        signal: o.signal,
        onProgress: (p) => {
          tokensPerSecond = p.tokensPerSecond
          o.onProgress?.(p)
        },
        save: saveAt,
      })
      // Stopped (Ctrl-C) since the last save: keep the steps done, so that resume continues from
      // here rather than from the last save or, before the first one, from nothing.
      if (run.cancelled && run.steps > savedStep) {
        engine.syncModel()
        const done = Math.floor(run.steps / stepsPerEpoch)
        const into = run.steps - done * stepsPerEpoch
        await saveAt({ epoch: done, step: run.steps, dev: null, ...(into > 0 ? { batchesIntoEpoch: into } : {}) })
      }
      return {
        outDir: o.outDir,
        firstLoss: run.losses[0] ?? null,
        lastLoss: run.losses[run.losses.length - 1] ?? null,
        heldOut: history,
        steps: run.steps,
        plannedSteps,
        sequences: train.length,
        heldOutSequences: held.length,
        trainTokens: run.trainTokens,
        tokensPerSecond: run.tokensPerSecond,
        trainSeconds: run.trainSeconds,
        wallSeconds: (performance.now() - t0) / 1000,
        trainer: engine.trainer,
        trainerReason: engine.reason,
        cancelled: run.cancelled,
        resumedAtStep: resumePoint ? resumePoint.step : null,
        savedAtStep: savedStep > 0 ? savedStep : null,
      }
    } finally {
      await engine.dispose()
    }
  } finally {
    model.dispose()
  }
}

/** The token-classification heads whose weights the checkpoint holds (name → labels). */
function storedHeads(dir: string): Record<string, string[]> {
  const names = new Set(findWeightFiles(dir).flatMap((f) => readSafetensorsNames(f)))
  return Object.fromEntries(Object.entries(headLabelsOf(readCheckpointInfo(dir))).filter(([h]) => names.has(headParamNames(h).weight)))
}

function readSafetensorsIfAny(dir: string): Map<string, { shape: number[]; data: Float32Array }> | null {
  const path = join(dir, 'model.safetensors')
  if (!existsSync(path)) return null
  return readSafetensors(path, (n) => n.startsWith('cls.')).tensors as never
}

/** A fresh ELECTRA generator for a discriminator of config `disc`: random encoder and masked-LM head, graph layout. */
function initGenerator(disc: BertConfig, seed: number): Map<string, Float32Array> {
  const c = generatorConfig(disc)
  const m = BertTokenClassifier.random(c, deriveSeed(seed, 0x6e4), {})
  try {
    const out = new Map<string, Float32Array>([...m.variables()].map(([n, v]) => [n, Float32Array.from(v.dataSync() as Float32Array)]))
    for (const [n, x] of initLmHead(c.hiddenSize, c.vocabSize, c.initializerRange, deriveSeed(seed, 0x6e5))) out.set(n, x)
    return out
  } finally {
    m.dispose()
  }
}
