// The compare job: several models measured on the same gold documents.
import { compareModels } from '../../core/eval/compare'
import { ensureBackend, log, phase, type Job } from './common'
import { releaseTaggers } from './taggers'

export const compare: Job<'compare'> = async (p, ctx) => {
  await ensureBackend()
  // The engines compare opens are its own: free ours first so both never sit in memory.
  await releaseTaggers(null)
  phase(ctx, `Measuring ${p.dirs.length} models on ${p.gold.length} documents`)
  return compareModels(p.dirs, p.gold, { names: p.names, logger: log })
}
