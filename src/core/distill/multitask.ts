// MT-BioNER: one shared encoder, one classification head per corpus.
//
// Batches: every batch holds examples of one corpus and trains only that corpus's head (its
// loss is that head's cross-entropy, weight λ_t = 1 by default), so the shared encoder receives
// the sum of the per-corpus losses over the steps of an epoch. Mixing:
//  - 'proportional' (default): each corpus is cut into its own length-bucketed batches for the
//    epoch, then all batches of all corpora are shuffled together (seeded). Every example is
//    seen once per epoch and corpora appear in proportion to their size.
//  - 'round-robin': corpora take turns (c0, c1, …, c0, …); an epoch lasts until the largest
//    corpus has been seen once, smaller ones start over (with a new shuffle) when exhausted, so
//    each corpus gets the same number of steps.
//
// Tagging runs every head and merges their mentions into one document (core/tag).

import { planBatches } from '../train/batching'
import { deriveSeed, Rng } from '../rng'

export type TaskMix = 'proportional' | 'round-robin'

export interface TaskBatch {
  task: number
  /** Example indices within the task. */
  indices: number[]
}

export interface MixOptions {
  batchSize: number
  seed: number
  epoch: number
  mix?: TaskMix
  bucketChunkBatches?: number
}

/** The batches of one epoch over several corpora; `lengths[t]` are corpus t's example lengths. */
export function planTaskBatches(lengths: ReadonlyArray<readonly number[]>, opts: MixOptions): TaskBatch[] {
  const mix = opts.mix ?? 'proportional'
  const per = lengths.map((ls, t) =>
    planBatches(ls, { batchSize: opts.batchSize, seed: deriveSeed(opts.seed, 0x7a5c, t), epoch: opts.epoch, shuffle: true, bucketChunkBatches: opts.bucketChunkBatches }).map((indices) => ({ task: t, indices })),
  )
  if (lengths.length === 1) return per[0]
  if (mix === 'proportional') {
    const all = per.flat()
    new Rng(deriveSeed(opts.seed, 0x313c, opts.epoch)).shuffle(all)
    return all
  }
  if (mix !== 'round-robin') throw new Error(`unknown task mix '${mix as string}' (proportional or round-robin)`)
  const rounds = Math.max(...per.map((p) => p.length))
  const out: TaskBatch[] = []
  const refill = per.map(() => 0)
  const queues = per.map((p) => [...p])
  for (let r = 0; r < rounds; r++) {
    for (let t = 0; t < per.length; t++) {
      if (lengths[t].length === 0) continue
      if (queues[t].length === 0) {
        refill[t]++
        queues[t] = planBatches(lengths[t], {
          batchSize: opts.batchSize,
          seed: deriveSeed(opts.seed, 0x7a5c, t, refill[t]),
          epoch: opts.epoch,
          shuffle: true,
          bucketChunkBatches: opts.bucketChunkBatches,
        }).map((indices) => ({ task: t, indices }))
      }
      out.push(queues[t].shift()!)
    }
  }
  return out
}
