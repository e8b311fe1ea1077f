// A simulated annotator (issue 30): the gold of a labelled pool is hidden from the model; each
// round a strategy (./strategies) picks documents from what the current model says about the
// pool, the "annotator" replaces the model's suggestions by the gold (the edits that takes are
// counted, core/eval/edits), the model is retrained warm-started on every reviewed document with
// the app's own retrain (core/train/word-retrain), and devel F1 is recorded. Round 0 is the seed
// model, trained from scratch on k documents whose annotation counts as typed in.

import type { CorpusDocument } from '../../shared/domain'
import { addEdits, countEdits, NO_EDITS, type EditCounts } from '../eval/edits'
import { evaluateTagger } from '../eval/evaluate'
import { DEFAULT_HEAD } from '../model/bert'
import type { WordTaggerConfig, WordTaggerFolder } from '../model/word-tagger'
import { deriveSeed, Rng } from '../rng'
import { wordTaggerFor } from '../tag/open'
import type { TagResult } from '../tag/tagger'
import { trainWordTagger, WORD_TAGGER_RECIPE } from '../train/word-loop'
import { planWordRetrain, retrainWordModel } from '../train/word-retrain'
import { needsPoolScores, selectBatch, tfidfVectors, type Candidate, type Strategy } from './strategies'

export type WordModel = Pick<WordTaggerFolder, 'config' | 'featurizer' | 'heads' | 'params'>

export interface SimulationOptions {
  /** Labelled documents the annotator works through; their gold is only seen once reviewed. */
  pool: readonly CorpusDocument[]
  /** Held-out gold for devel F1 after every round. */
  dev: readonly CorpusDocument[]
  strategy: Strategy
  seed: number
  /** k: documents annotated from nothing for the seed model. */
  seedDocs: number
  /** N: documents reviewed per round. */
  batch: number
  /** Stop once this many documents (seed documents included) are reviewed. */
  maxDocs: number
  /** Epochs of the seed model from scratch. */
  seedEpochs: number
  /** Epochs of each retrain (the app's RETRAIN_RECIPE by default in the bench). */
  retrainEpochs: number
  /** Optimizer-step budget per retrain; default: every epoch in full. */
  retrainSteps?: number
  threads?: number
  /** The seed model, when already trained on the same seed documents (seedDocuments()). */
  seedModel?: WordModel
  /** Model sizes for the seed model from scratch (tests use tiny ones). */
  config?: Partial<WordTaggerConfig>
  onSeedModel?: (m: WordModel) => void
  onRound?: (r: RoundRecord) => void
  signal?: AbortSignal
}

export interface RoundRecord {
  round: number
  /** Pool positions reviewed in this round, in the order the strategy showed them. */
  picked: number[]
  /** Documents reviewed so far, seed documents included. */
  reviewed: number
  edits: EditCounts
  /** Suggestions the model made on the reviewed documents of this round. */
  suggested: number
  /** Since the start, the seed documents' mentions counted as added. */
  totalEdits: EditCounts
  dev: { precision: number; recall: number; f1: number }
  /** Wall time: choosing (tagging the pool), retraining, scoring devel. */
  seconds: { select: number; retrain: number; eval: number }
  steps: number
}

const WINDOWS = { maxLength: WORD_TAGGER_RECIPE.maxLength, sentenceLevel: true }

/** The k seed documents' pool positions for a seed (the same for every strategy). */
export function seedDocuments(poolSize: number, k: number, seed: number): number[] {
  const all = Array.from({ length: poolSize }, (_, i) => i)
  return new Rng(deriveSeed(seed, 0x5eed)).shuffle(all).slice(0, Math.min(k, poolSize)).sort((a, b) => a - b)
}

export async function trainSeedModel(docs: readonly CorpusDocument[], o: Pick<SimulationOptions, 'seed' | 'seedEpochs' | 'threads' | 'config' | 'signal'>): Promise<WordModel> {
  // No devel set: the app's user has none at this point, and selecting an epoch on the measured
  // devel set would flatter the first point of every curve.
  const r = await trainWordTagger({ tasks: [{ head: DEFAULT_HEAD, train: docs }], epochs: o.seedEpochs, seed: o.seed, threads: o.threads, config: o.config, signal: o.signal })
  return r.model
}

async function tagWith(model: WordModel, docs: readonly CorpusDocument[], threads: number | undefined): Promise<TagResult[]> {
  if (docs.length === 0) return []
  const tagger = wordTaggerFor(model, WINDOWS, { threads })
  try {
    return await tagger.tag(docs)
  } finally {
    await tagger.dispose()
  }
}

async function devScores(model: WordModel, dev: readonly CorpusDocument[], threads: number | undefined): Promise<RoundRecord['dev']> {
  const tagger = wordTaggerFor(model, WINDOWS, { threads })
  try {
    const r = (await evaluateTagger(tagger, dev)).overall
    return { precision: r.precision, recall: r.recall, f1: r.f1 }
  } finally {
    await tagger.dispose()
  }
}

const since = (t0: number) => (performance.now() - t0) / 1000

/** Runs every round; returns them (round 0 = the seed model). */
export async function simulate(o: SimulationOptions): Promise<RoundRecord[]> {
  if (o.seedDocs < 1 || o.batch < 1) throw new Error('simulate: seedDocs and batch must be at least 1')
  const rounds: RoundRecord[] = []
  const emit = (r: RoundRecord) => {
    rounds.push(r)
    o.onRound?.(r)
  }
  const reviewed = seedDocuments(o.pool.length, o.seedDocs, o.seed)
  const done = new Set(reviewed)
  let t0 = performance.now()
  let model = o.seedModel ?? (await trainSeedModel(reviewed.map((i) => o.pool[i]), o))
  if (!o.seedModel) o.onSeedModel?.(model)
  const seedRetrain = since(t0)
  t0 = performance.now()
  const typedIn: EditCounts = { ...NO_EDITS, added: reviewed.reduce((a, i) => a + o.pool[i].mentions.length, 0) }
  let total = typedIn
  emit({ round: 0, picked: [...reviewed], reviewed: reviewed.length, edits: typedIn, suggested: 0, totalEdits: total, dev: await devScores(model, o.dev, o.threads), seconds: { select: 0, retrain: seedRetrain, eval: since(t0) }, steps: 0 })
  // Computed once: the vectors do not depend on the model.
  const vectors = o.strategy === 'diverse' ? tfidfVectors(o.pool.map((d) => d.text)) : null

  for (let round = 1; reviewed.length < o.maxDocs && done.size < o.pool.length; round++) {
    if (o.signal?.aborted) throw new DOMException('simulation cancelled', 'AbortError')
    const n = Math.min(o.batch, o.maxDocs - reviewed.length)
    t0 = performance.now()
    const open = o.pool.map((_, i) => i).filter((i) => !done.has(i))
    // Order and random never look at the model, so only their picks are tagged (for the edits).
    const scored = needsPoolScores(o.strategy) ? await tagWith(model, open.map((i) => o.pool[i]), o.threads) : null
    const cands: Candidate[] = open.map((position, k) => ({ position, uncertainty: scored?.[k].uncertainties ?? null, vector: vectors?.[position] }))
    const picked = selectBatch(o.strategy, cands, n, { seed: deriveSeed(o.seed, round) })
    const byPosition = scored ? new Map(open.map((p, k) => [p, scored[k]])) : null
    const suggestions = byPosition ? picked.map((p) => byPosition.get(p)!) : await tagWith(model, picked.map((p) => o.pool[p]), o.threads)
    const select = since(t0)
    let edits: EditCounts = { ...NO_EDITS }
    picked.forEach((p, k) => {
      if (done.has(p)) throw new Error(`simulate: strategy ${o.strategy} picked document ${p} twice`)
      done.add(p)
      reviewed.push(p)
      edits = addEdits(edits, countEdits(suggestions[k].mentions, o.pool[p].mentions))
    })
    total = addEdits(total, edits)

    t0 = performance.now()
    const docs = reviewed.map((i) => o.pool[i])
    const plan = planWordRetrain(model, [...new Set(docs.flatMap((d) => d.mentions.map((m) => m.type)))].sort())
    const result = await retrainWordModel(model, docs, plan, { epochs: o.retrainEpochs, maxSteps: o.retrainSteps, seed: deriveSeed(o.seed, round), threads: o.threads, signal: o.signal })
    if (result.cancelled) throw new DOMException('simulation cancelled', 'AbortError')
    model = result.model
    const retrain = since(t0)
    t0 = performance.now()
    emit({ round, picked, reviewed: reviewed.length, edits, suggested: suggestions.reduce((a, t) => a + t.mentions.length, 0), totalEdits: total, dev: await devScores(model, o.dev, o.threads), seconds: { select, retrain, eval: since(t0) }, steps: result.steps })
  }
  return rounds
}
