// Which documents an annotator should review next (active learning). Pure functions over what the
// current model said about each pool document (core/tag/uncertainty) and, for the diversity-aware
// strategy, a cheap document vector: the simulation (./simulate) and, later, the app's review
// queue rank with the same code.

import { ACTIVE_STRATEGIES, type ActiveStrategy } from '../../shared/recipes'
import { deriveSeed, Rng } from '../rng'
import type { DocumentUncertainty } from '../tag/uncertainty'

/** The names live in shared/recipes so that the app's contract and window can offer them. */
export const STRATEGIES = ACTIVE_STRATEGIES
export type Strategy = ActiveStrategy

/** Strategies that need the model's outputs on the whole pool before choosing. */
export function needsPoolScores(s: Strategy): boolean {
  return s !== 'order' && s !== 'random'
}

export function parseStrategy(name: string): Strategy {
  if ((STRATEGIES as readonly string[]).includes(name)) return name as Strategy
  throw new Error(`unknown strategy '${name}' (strategies: ${STRATEGIES.join(', ')})`)
}

export interface Candidate {
  /** Position in the pool's document order (what a person reading top to bottom follows). */
  position: number
  /** Null when not tagged or without words: ranked after every scored document. */
  uncertainty: DocumentUncertainty | null
  /** Unit-length document vector (diverse only). */
  vector?: Float32Array
}

export interface SelectOptions {
  /** Random draws and k-means initialisation. */
  seed: number
}

type Score = keyof DocumentUncertainty

const SCORE_OF: Partial<Record<Strategy, Score>> = { 'least-confidence': 'leastConfidence', margin: 'margin', entropy: 'entropy' }

/** Most uncertain first by `score`; documents without a score last; ties in document order. */
export function rankByUncertainty(cands: readonly Candidate[], score: Score): Candidate[] {
  const v = (c: Candidate) => (c.uncertainty ? c.uncertainty[score] : -Infinity)
  return [...cands].sort((a, b) => v(b) - v(a) || a.position - b.position)
}

/** The positions of the (at most) n documents to review next, in the order they are shown. */
export function selectBatch(strategy: Strategy, cands: readonly Candidate[], n: number, o: SelectOptions): number[] {
  const take = Math.max(0, Math.min(n, cands.length))
  switch (strategy) {
    case 'order':
      return [...cands].sort((a, b) => a.position - b.position).slice(0, take).map((c) => c.position)
    case 'random':
      return new Rng(o.seed).shuffle([...cands].sort((a, b) => a.position - b.position)).slice(0, take).map((c) => c.position)
    case 'diverse':
      return diverseBatch(cands, take, o.seed)
    default:
      return rankByUncertainty(cands, SCORE_OF[strategy]!).slice(0, take).map((c) => c.position)
  }
}

/** Zhdanov's pre-filter: the diverse batch is drawn from this many times its size of the most uncertain documents. */
export const DIVERSE_PREFILTER = 10

/**
 * The whole pool in the order a person should review it (the app's review queue): the first
 * `batch` documents as selectBatch picks them, then the rest most uncertain first (least
 * confidence; in document order for 'order' and 'random' as they are a full order already).
 * Only 'diverse' treats the first batch apart, and it clusters just the DIVERSE_PREFILTER × batch
 * most uncertain documents (Zhdanov 2019's pre-filter), so that a queue of thousands ranks in
 * milliseconds; `vectors` is asked for exactly those candidates.
 */
export function rankPool(
  strategy: Strategy,
  cands: readonly Candidate[],
  o: SelectOptions & { batch: number; vectors?: (cands: readonly Candidate[]) => Float32Array[] },
): number[] {
  if (strategy !== 'diverse') return selectBatch(strategy, cands, cands.length, o)
  const ranked = rankByUncertainty(cands, 'leastConfidence')
  const pool = ranked.slice(0, Math.max(o.batch, o.batch * DIVERSE_PREFILTER))
  if (!o.vectors) throw new Error('diverse: rankPool needs document vectors')
  const vectors = o.vectors(pool)
  const first = diverseBatch(pool.map((c, i) => ({ ...c, vector: vectors[i] })), o.batch, o.seed)
  const taken = new Set(first)
  return [...first, ...ranked.map((c) => c.position).filter((p) => !taken.has(p))]
}

/**
 * Uncertainty within clusters: the pool's vectors in n clusters (k-means), the most uncertain
 * document (the queue's least confidence) of each, most uncertain first; clusters that come out
 * empty leave their places to the next most uncertain documents overall. Plain uncertainty
 * ranking tends to pick n near-copies of one confusing topic; one pick per cluster spreads the
 * batch over the pool (Zhdanov 2019, "Diverse mini-batch active learning", without its weights).
 */
export function diverseBatch(cands: readonly Candidate[], n: number, seed: number): number[] {
  if (n <= 0) return []
  const ranked = rankByUncertainty(cands, 'leastConfidence')
  if (cands.some((c) => !c.vector)) throw new Error('diverse: every candidate needs a document vector')
  const assign = kMeans(cands.map((c) => c.vector!), Math.min(n, cands.length), seed)
  const best = new Map<number, Candidate>()
  // `ranked` is most uncertain first, so the first member seen of a cluster is its pick.
  const clusterOf = new Map(cands.map((c, i) => [c, assign[i]]))
  for (const c of ranked) if (!best.has(clusterOf.get(c)!)) best.set(clusterOf.get(c)!, c)
  const picks = rankByUncertainty([...best.values()], 'leastConfidence')
  const chosen = new Set(picks)
  for (const c of ranked) {
    if (picks.length >= n) break
    if (!chosen.has(c)) picks.push(c)
  }
  return picks.slice(0, n).map((c) => c.position)
}

/**
 * Spherical k-means (dot product on unit vectors): the cluster index of each vector. k-means++
 * seeding, at most 25 Lloyd iterations, the best of `restarts` starts (one bad start on a small
 * pool can merge two topics); deterministic for a seed.
 */
export function kMeans(vectors: readonly Float32Array[], k: number, seed: number, restarts = 3): number[] {
  let best: { assign: number[]; fit: number } | null = null
  for (let r = 0; r < restarts; r++) {
    const run = kMeansOnce(vectors, k, new Rng(deriveSeed(seed, r)))
    if (!best || run.fit > best.fit) best = run
  }
  return best?.assign ?? []
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0
  for (let i = 0; i < a.length; i++) s += a[i] * b[i]
  return s
}

/** One k-means run; fit = summed similarity of each vector to its centre. */
function kMeansOnce(vectors: readonly Float32Array[], k: number, rng: Rng): { assign: number[]; fit: number } {
  const n = vectors.length
  if (n === 0) return { assign: [], fit: 0 }
  k = Math.max(1, Math.min(k, n))
  // k-means++: each next centre drawn with probability ∝ its distance to the nearest centre.
  const centres: Float32Array[] = [Float32Array.from(vectors[rng.int(n)])]
  const dist = vectors.map((v) => Math.max(0, 1 - dot(v, centres[0])))
  while (centres.length < k) {
    const total = dist.reduce((a, b) => a + b, 0)
    let pick = 0
    if (total > 0) {
      let r = rng.next() * total
      while (pick < n - 1 && (r -= dist[pick]) > 0) pick++
    } else pick = rng.int(n)
    centres.push(Float32Array.from(vectors[pick]))
    vectors.forEach((v, i) => (dist[i] = Math.min(dist[i], Math.max(0, 1 - dot(v, centres[centres.length - 1])))))
  }
  const assign = new Array<number>(n).fill(-1)
  const sims = new Array<number>(n).fill(0)
  for (let iter = 0; iter < 25; iter++) {
    let moved = 0
    vectors.forEach((v, i) => {
      let best = 0
      let bestSim = -Infinity
      centres.forEach((c, j) => {
        const s = dot(v, c)
        if (s > bestSim) [best, bestSim] = [j, s]
      })
      sims[i] = bestSim
      if (assign[i] !== best) [assign[i], moved] = [best, moved + 1]
    })
    if (moved === 0) break
    centres.forEach((c, j) => {
      c.fill(0)
      vectors.forEach((v, i) => {
        if (assign[i] === j) for (let d = 0; d < c.length; d++) c[d] += v[d]
      })
      normalise(c)
    })
  }
  return { assign, fit: sims.reduce((a, b) => a + b, 0) }
}

/**
 * TF-IDF document vectors (scikit-learn's smoothed idf, so a topic's words shared by most of a
 * small pool still count), words hashed into `dims` buckets and scaled to unit length. Chosen
 * over the model's own word vectors because they do not move as the model retrains (clusters are
 * computed once per pool), cost milliseconds for a thousand abstracts, and what an abstract is
 * about (the disease, the gene studied) is in its words.
 */
export function tfidfVectors(texts: readonly string[], dims = 256): Float32Array[] {
  const docs = texts.map((t) => (t.toLowerCase().match(/[a-z][a-z0-9-]{2,}/g) ?? []).filter((w) => !STOPWORDS.has(w)))
  const df = new Map<string, number>()
  for (const words of docs) for (const w of new Set(words)) df.set(w, (df.get(w) ?? 0) + 1)
  return docs.map((words) => {
    const v = new Float32Array(dims)
    const tf = new Map<string, number>()
    for (const w of words) tf.set(w, (tf.get(w) ?? 0) + 1)
    for (const [w, f] of tf) v[hash(w) % dims] += f * (Math.log((1 + docs.length) / (1 + df.get(w)!)) + 1)
    return normalise(v)
  })
}

function normalise(v: Float32Array): Float32Array {
  let s = 0
  for (let i = 0; i < v.length; i++) s += v[i] * v[i]
  const norm = Math.sqrt(s)
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] /= norm
  return v
}

/** FNV-1a, 32 bits. */
function hash(s: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0
  return h
}

// Words every abstract has; idf already damps them, dropping them keeps hashed buckets for content.
const STOPWORDS = new Set('the and for with that this was were are from have has had not but its these those which their been into than also between patients study results using may can our all two one'.split(' '))
