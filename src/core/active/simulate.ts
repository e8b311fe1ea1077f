// A simulated annotator (issue 30): the gold of a labelled pool is hidden from the model; each
// round a strategy (./strategies) picks documents from what the current model says about the
// pool, the "annotator" replaces the model's suggestions by the gold (the edits that takes are
// counted, core/eval/edits), the model is retrained warm-started on every reviewed document with
// the app's own retrain (core/train/word-retrain), and devel F1 is recorded. Round 0 is the seed
// model, trained from scratch on k documents whose annotation counts as typed in.

import type { CorpusDocument, Mention } from '../../shared/domain'
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
  /**
   * Teaching a type the model lacks (issue 30 item 2): the annotator adds this type only. The
   * seed documents are reviewed with `baseModel` (a model of other types) and it, not a model
   * from scratch, is retrained on them; the suggestions of the base's own types are kept as the
   * model made them (what a person adding genes to a disease model does); edits and devel F1
   * count this type only.
   */
  newType?: { type: string; baseModel: WordModel }
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

/** The model's suggestions for `docs` through the app's tagging path (also bench:active --latency's re-tagging). */
export async function tagWith(model: WordModel, docs: readonly CorpusDocument[], threads: number | undefined): Promise<TagResult[]> {
  if (docs.length === 0) return []
  const tagger = wordTaggerFor(model, WINDOWS, { threads })
  try {
    return await tagger.tag(docs)
  } finally {
    await tagger.dispose()
  }
}

/** Devel scores over every type, or of `type` alone (a new type: the devel gold has no other). */
async function devScores(model: WordModel, dev: readonly CorpusDocument[], threads: number | undefined, type?: string): Promise<RoundRecord['dev']> {
  const tagger = wordTaggerFor(model, WINDOWS, { threads })
  try {
    const scores = await evaluateTagger(tagger, dev)
    const r = type ? (scores.types[type] ?? { precision: 0, recall: 0, f1: 0 }) : scores.overall
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
  const newType = o.newType?.type
  /** What the annotator leaves in a reviewed document: the gold, or with a new type the gold of that type and the model's other suggestions. */
  const annotated = new Map<number, CorpusDocument>()
  const review = (p: number, suggested: readonly Mention[]): EditCounts => {
    const gold = o.pool[p]
    if (!newType) {
      annotated.set(p, gold)
      return countEdits(suggested, gold.mentions)
    }
    const goldNew = gold.mentions.filter((m) => m.type === newType)
    const kept = suggested.filter((m) => m.type !== newType && !goldNew.some((g) => g.start < m.end && m.start < g.end))
    annotated.set(p, { ...gold, mentions: [...goldNew, ...kept].sort((a, b) => a.start - b.start) })
    return countEdits(suggested.filter((m) => m.type === newType), goldNew)
  }
  const retrainOn = async (from: WordModel, round: number) => {
    const docs = reviewed.map((i) => annotated.get(i)!)
    const plan = planWordRetrain(from, [...new Set(docs.flatMap((d) => d.mentions.map((m) => m.type)))].sort())
    const result = await retrainWordModel(from, docs, plan, { epochs: o.retrainEpochs, maxSteps: o.retrainSteps, seed: deriveSeed(o.seed, round), threads: o.threads, signal: o.signal })
    if (result.cancelled) throw new DOMException('simulation cancelled', 'AbortError')
    return result
  }
  let t0 = performance.now()
  let model: WordModel
  let typedIn: EditCounts = { ...NO_EDITS }
  let seedSuggested = 0
  let seedSteps = 0
  if (o.newType) {
    const suggestions = await tagWith(o.newType.baseModel, reviewed.map((i) => o.pool[i]), o.threads)
    reviewed.forEach((p, k) => (typedIn = addEdits(typedIn, review(p, suggestions[k].mentions))))
    seedSuggested = suggestions.reduce((a, t) => a + t.mentions.filter((m) => m.type === newType).length, 0)
    const result = await retrainOn(o.newType.baseModel, 0)
    model = result.model
    seedSteps = result.steps
  } else {
    for (const p of reviewed) typedIn = addEdits(typedIn, review(p, []))
    model = o.seedModel ?? (await trainSeedModel(reviewed.map((i) => o.pool[i]), o))
    if (!o.seedModel) o.onSeedModel?.(model)
  }
  const seedRetrain = since(t0)
  t0 = performance.now()
  let total = typedIn
  emit({ round: 0, picked: [...reviewed], reviewed: reviewed.length, edits: typedIn, suggested: seedSuggested, totalEdits: total, dev: await devScores(model, o.dev, o.threads, newType), seconds: { select: 0, retrain: seedRetrain, eval: since(t0) }, steps: seedSteps })
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
      edits = addEdits(edits, review(p, suggestions[k].mentions))
    })
    total = addEdits(total, edits)

    t0 = performance.now()
    const result = await retrainOn(model, round)
    model = result.model
    const retrain = since(t0)
    t0 = performance.now()
    const suggested = suggestions.reduce((a, t) => a + t.mentions.filter((m) => !newType || m.type === newType).length, 0)
    emit({ round, picked, reviewed: reviewed.length, edits, suggested, totalEdits: total, dev: await devScores(model, o.dev, o.threads, newType), seconds: { select, retrain, eval: since(t0) }, steps: result.steps })
  }
  return rounds
}
