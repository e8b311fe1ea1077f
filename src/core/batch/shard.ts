// Which input files one task of a batch-tagging array job owns.
//
// The scheduler (a Slurm job array, a Kubernetes Indexed Job) starts N copies of the same
// command; each copy must find its own share of the inputs with no coordination and the same
// answer on every rerun. Files are sorted by path and dealt round-robin: shard i of N owns files
// i, i+N, i+2N, …, so shards differ in size by at most one file and a requeued task redoes
// exactly the files it owned before.

export interface Shard {
  /** 0-based. */
  index: number
  count: number
  /** Where the shard came from, for the log line. */
  source: string
}

export class ShardError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ShardError'
  }
}

function positiveInt(value: string, what: string): number {
  if (!/^\d+$/.test(value.trim())) throw new ShardError(`${what} must be a whole number (got "${value}")`)
  return Number(value.trim())
}

/**
 * The shard from `--shard I/N` (1-based, as people count), or else from the scheduler's
 * environment: Slurm's SLURM_ARRAY_TASK_ID (offset by SLURM_ARRAY_TASK_MIN, so `--array=0-9` and
 * `--array=1-10` both work) with SLURM_ARRAY_TASK_COUNT, or Kubernetes' JOB_COMPLETION_INDEX
 * (0-based) with `--shard-count`. No shard at all means one shard holding every file.
 */
export function resolveShard(opts: { shard?: string; shardCount?: number }, env: NodeJS.ProcessEnv = process.env): Shard {
  if (opts.shard !== undefined) {
    const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(opts.shard)
    if (!m) throw new ShardError(`--shard must look like I/N, e.g. 3/16 (got "${opts.shard}")`)
    const index = Number(m[1])
    const count = Number(m[2])
    if (count < 1 || index < 1 || index > count) throw new ShardError(`--shard ${opts.shard}: I must be between 1 and N`)
    return { index: index - 1, count, source: `--shard ${index}/${count}` }
  }
  if (env.SLURM_ARRAY_TASK_ID !== undefined && env.SLURM_ARRAY_TASK_ID !== '') {
    const id = positiveInt(env.SLURM_ARRAY_TASK_ID, 'SLURM_ARRAY_TASK_ID')
    const min = env.SLURM_ARRAY_TASK_MIN ? positiveInt(env.SLURM_ARRAY_TASK_MIN, 'SLURM_ARRAY_TASK_MIN') : 0
    const count = opts.shardCount ?? (env.SLURM_ARRAY_TASK_COUNT ? positiveInt(env.SLURM_ARRAY_TASK_COUNT, 'SLURM_ARRAY_TASK_COUNT') : undefined)
    if (count === undefined) throw new ShardError('SLURM_ARRAY_TASK_ID is set but neither SLURM_ARRAY_TASK_COUNT nor --shard-count is')
    const index = id - min
    if (index < 0 || index >= count) throw new ShardError(`Slurm array task ${id} (first ${min}) is outside ${count} shards`)
    return { index, count, source: `Slurm array task ${id}` }
  }
  if (env.JOB_COMPLETION_INDEX !== undefined && env.JOB_COMPLETION_INDEX !== '') {
    const index = positiveInt(env.JOB_COMPLETION_INDEX, 'JOB_COMPLETION_INDEX')
    if (opts.shardCount === undefined) throw new ShardError('JOB_COMPLETION_INDEX is set: give the number of shards with --shard-count (the Job\'s completions)')
    if (index >= opts.shardCount) throw new ShardError(`JOB_COMPLETION_INDEX ${index} is outside ${opts.shardCount} shards`)
    return { index, count: opts.shardCount, source: `Kubernetes completion index ${index}` }
  }
  if (opts.shardCount !== undefined && opts.shardCount !== 1) {
    throw new ShardError('--shard-count needs a shard index: --shard I/N, SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX')
  }
  return { index: 0, count: 1, source: 'all inputs' }
}

/** The files shard `shard` owns: sorted by path (code-point order, the same on every OS), dealt round-robin. */
export function filesOfShard(files: readonly string[], shard: Pick<Shard, 'index' | 'count'>): string[] {
  const sorted = [...new Set(files)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  return sorted.filter((_, i) => i % shard.count === shard.index)
}
