// The correction loop's fixed held-out set: which reviewed documents measure every retrain and are
// never trained on. Each document's side is decided by a seeded hash of its workspace id alone, so
// reviewing more documents never moves a measured document into training (a learning curve over
// retrains compares like with like), and retraining never sees the documents that score it.

import { deriveSeed } from '../rng'

export interface HeldOutRule {
  /** About one document in `every` is held out. */
  every: number
  seed: number
  /** At least this many held out, when there are that many besides one document to train on. */
  min: number
}

/** Where a document falls in [0, 1): held out when below 1 / every. */
export function heldOutKey(documentId: number, seed: number): number {
  return deriveSeed(seed, documentId) / 2 ** 32
}

/**
 * Splits documents into training and held-out parts by the rule. With fewer than `min` documents
 * below the threshold, the ones closest above it are held out too, and one document always stays
 * for training when there are two or more. So once more than `min` documents are reviewed, adding
 * documents only ever moves padding back into training, never a trained-on document out of it;
 * below that the held-out part grows from the training part (the first few retrains).
 */
export function splitHeldOut<T>(docs: readonly T[], idOf: (d: T) => number, rule: HeldOutRule): { train: T[]; heldOut: T[] } {
  if (docs.length < 2) return { train: [...docs], heldOut: [] }
  const keyed = docs.map((d, i) => ({ i, key: heldOutKey(idOf(d), rule.seed) })).sort((a, b) => a.key - b.key || a.i - b.i)
  const below = keyed.filter((k) => k.key < 1 / rule.every).length
  const n = Math.min(docs.length - 1, Math.max(below, rule.min))
  const held = new Set(keyed.slice(0, n).map((k) => k.i))
  return { train: docs.filter((_, i) => !held.has(i)), heldOut: docs.filter((_, i) => held.has(i)) }
}
