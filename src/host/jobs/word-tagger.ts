// The model host's jobs for the word-level recurrent tagger (core/model/word-tagger): a new model
// from scratch (the app's default choice), retraining from corrections with a warm start, and the
// summary the app shows. The BERT jobs hand over to these when the model is a word tagger.
import { rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { CorpusDocument } from '@shared/domain'
import { evaluateTagger } from '../../core/eval/evaluate'
import { DEFAULT_HEAD } from '../../core/model/bert'
import { inheritedMetadata } from '../../core/model/checkpoint-files'
import { loadWordTagger, saveWordTagger, type WordTaggerFolder } from '../../core/model/word-tagger'
import { typesOfLabels } from '../../core/nlp/bio'
import { wordTaggerFor } from '../../core/tag/open'
import { trainWordTagger, WORD_TAGGER_RECIPE, type WordTransferSet } from '../../core/train/word-loop'
import { planWordRetrain, retrainWordModel } from '../../core/train/word-retrain'
import type { HostParams, HostResult, ModelSummary, ScoresWithTypes, TrainedCheckpoint } from '../protocol'
import type { JobContext } from '../job'
import { HostInputError, inferenceThreads, phase, scores, stepReporter, trainingMeta, typesOf, readExtraCorpora, cancelledRetrain, savedRetrain, trainedCheckpoint } from './common'

/** Where word taggers train and run. */
export const WORD_TAGGER_ENGINE = 'onnxruntime-cpu'

export function wordTaggerSummary(dir: string, m: Pick<WordTaggerFolder, 'config' | 'heads' | 'params'>): ModelSummary {
  const labels = m.heads[DEFAULT_HEAD] ?? Object.values(m.heads)[0] ?? ['O']
  return {
    // One recurrent layer, both directions: what the app lists as layers × width.
    layers: 1,
    hidden: 2 * m.config.lstmHidden,
    heads: 0,
    parameters: [...m.params.values()].reduce((a, p) => a + p.length, 0),
    bytes: statSync(join(dir, 'model.safetensors')).size,
    weights: 'float32',
    labels,
    entityTypes: typesOfLabels(Object.values(m.heads).flat()),
  }
}

/** Scores of a word tagger (in memory or as saved) on `docs`, through the one tagging path. */
async function scoreWordTagger(m: Pick<WordTaggerFolder, 'config' | 'featurizer' | 'heads' | 'params' | 'metadata'>, docs: readonly CorpusDocument[], head?: string): Promise<ScoresWithTypes | null> {
  if (!docs.length) return null
  const t = trainingMeta(m.metadata)
  const tagger = wordTaggerFor(m, { maxLength: t.maxLength ?? WORD_TAGGER_RECIPE.maxLength, sentenceLevel: t.sentenceLevel ?? true }, { threads: inferenceThreads() })
  try {
    return scores(await evaluateTagger(tagger, docs, { head }))
  } finally {
    await tagger.dispose()
  }
}

/** Summary and devel scores of a saved word tagger. */
export async function scoreSavedWordTagger(dir: string, docs: readonly CorpusDocument[]): Promise<{ summary: ModelSummary; devScores: ScoresWithTypes | null }> {
  const m = loadWordTagger(dir)
  return { summary: wordTaggerSummary(dir, m), devScores: await scoreWordTagger(m, docs) }
}

/** Documents tagged by teachers for a word tagger to learn beside the gold ones (the distill job's word-tagger student), and what the phase says of them. */
export interface WordTaggerTeaching {
  transfer: WordTransferSet
  description: string
}

/**
 * trainModel for `preset: word-lstm` (from scratch) or an initDir holding a word tagger (warm
 * start); with `teaching`, also trained on the teachers' tags (sequence-level KD).
 */
export async function trainWordTaggerJob(p: HostParams<'trainModel'>, ctx: JobContext, teaching?: WordTaggerTeaching): Promise<HostResult<'trainModel'>> {
  const t0 = performance.now()
  const init = p.initDir ? loadWordTagger(p.initDir) : undefined
  const curve: TrainedCheckpoint['curve'] = []
  phase(ctx, `Training the word tagger${init ? ` from ${p.initDir}` : ''} on ${p.train.length} documents${teaching ? ` and ${teaching.description}` : ''}`)
  const result = await trainWordTagger({
    transfer: teaching?.transfer,
    tasks: [{ head: DEFAULT_HEAD, train: p.train, dev: p.dev.length ? p.dev : undefined }],
    outDir: p.dir,
    epochs: p.epochs,
    batchSize: p.batchSize,
    lr: p.lr,
    seed: p.seed,
    init,
    wordVectors: init ? undefined : p.wordVectors,
    threads: inferenceThreads(),
    signal: ctx.signal,
    onProgress: stepReporter(ctx, curve),
    metadata: { ...p.metadata, arch: 'word-lstm', ...(p.initDir ? { init: p.initDir } : {}) },
  })
  const c = result.model.config
  const wv = result.wordVectors
  return trainedCheckpoint(result, {
    dir: p.dir,
    dev: p.dev,
    t0,
    backend: WORD_TAGGER_ENGINE,
    score: scoreSavedWordTagger,
    notes: [
      init
        ? `continued from ${p.initDir} (its ${c.wordVocabSize}-word and ${c.charVocabSize}-character vocabularies)`
        : `word tagger: ${c.wordVocabSize} words and ${c.charVocabSize} characters learnt from the training text; BiLSTM 2 × ${c.lstmHidden}, CRF`,
      ...(wv ? [`word table from ${wv.file}: ${wv.initialised} of ${wv.vocabulary} words started from its ${wv.dim}-dimensional vectors (${wv.added} of them added from the file)`] : []),
      `trainer: ${result.trainer}`,
    ],
    curve,
  })
}

/** retrain for a word tagger base: warm start on the reviewed documents, scored before and after on the held-out ones. */
export async function retrainWordTagger(p: HostParams<'retrain'>, ctx: JobContext): Promise<HostResult<'retrain'>> {
  const t0 = performance.now()
  const { extra, notes } = await readExtraCorpora(p.extraCorpusPaths, ctx)
  phase(ctx, 'Loading the base model')
  const base = loadWordTagger(p.baseDir)
  const wanted = typesOf([...p.train, ...p.heldOut, ...extra])
  if (wanted.length === 0) throw new HostInputError('the reviewed documents have no accepted annotations: nothing to learn')
  const plan = planWordRetrain(base, wanted)
  const { baseHead, labels, newTypes } = plan
  if (newTypes.length) notes.push(`the base model does not know ${newTypes.join(', ')}: its head was replaced by a new one for ${typesOfLabels(labels).join(', ')}`)
  phase(ctx, `Scoring the base model on ${p.heldOut.length} held-out documents`)
  const before = (await scoreWordTagger(base, p.heldOut, baseHead)) ?? { precision: 0, recall: 0, f1: 0, types: {} }
  if (ctx.signal.aborted) return cancelledRetrain(p, WORD_TAGGER_ENGINE, before, notes, t0)
  const curve: TrainedCheckpoint['curve'] = []
  try {
    phase(ctx, `Fine-tuning on ${p.train.length + extra.length} documents`)
    const result = await retrainWordModel(base, [...p.train, ...extra], plan, {
      epochs: p.epochs,
      maxSteps: p.maxSteps,
      lr: p.lr,
      seed: p.seed,
      threads: inferenceThreads(),
      signal: ctx.signal,
      onProgress: stepReporter(ctx, curve),
    })
    if (result.cancelled) return cancelledRetrain(p, WORD_TAGGER_ENGINE, before, notes, t0, curve)
    notes.push(`trainer: ${result.trainer}`)
    // The last epoch is the candidate (no selection on the held-out documents, as for BERT models).
    const after = (await scoreWordTagger(result.model, p.heldOut)) ?? before
    phase(ctx, 'Saving the candidate')
    saveWordTagger(p.candidateDir, {
      ...result.model,
      metadata: { ...inheritedMetadata(base.metadata, { sameHeads: false }), training: { ...trainingMeta(base.metadata), labels, epoch: result.epochs.length, step: result.steps, seed: p.seed, dev: { precision: after.precision, recall: after.recall, f1: after.f1 } }, retrained: { from: p.baseDir, at: new Date().toISOString(), before, after } },
    })
    const run = { summary: wordTaggerSummary(p.candidateDir, result.model), after, epochs: result.epochs.length, steps: result.steps, backend: WORD_TAGGER_ENGINE, extraDocuments: extra.length }
    return savedRetrain(run, before, notes, t0, curve)
  } catch (e) {
    rmSync(p.candidateDir, { recursive: true, force: true })
    throw e
  }
}
