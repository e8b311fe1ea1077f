// The one way the benchmarks launch a PyTorch reference (../shared/bench/*.py), so that two
// benches cannot measure PyTorch under different BLAS settings: Debian's /usr/bin/python3, the
// OpenMP OpenBLAS when installed, and OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE removed from its
// environment only (a core type set for other tools, e.g. Haswell, keeps OpenBLAS off the
// machine's best kernels; ../shared/bench/README.md). The script reports the kernel it ran
// (openblas_core), which the benches print beside every ratio.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'

export const TORCH_PYTHON = '/usr/bin/python3'
const OPENBLAS_OPENMP = '/usr/lib/x86_64-linux-gnu/openblas-openmp'

/** The environment of a PyTorch reference run, from `base` (default: this process's). */
export function torchEnv(base: NodeJS.ProcessEnv = process.env, openblasDir: string | null = existsSync(OPENBLAS_OPENMP) ? OPENBLAS_OPENMP : null): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base }
  delete env.OPENBLAS_CORETYPE
  delete env.OPENBLAS_L2_SIZE
  // OpenBLAS, not the reference BLAS (as ../shared/bench/run_torch_ref_matrix.py).
  if (openblasDir) env.LD_LIBRARY_PATH = openblasDir
  return env
}

/** Why the reference cannot run (no script, no python, no torch), or null when it can. */
export function torchMissing(script: string, python = TORCH_PYTHON): string | null {
  if (!existsSync(script)) return `${script} not found`
  if (!existsSync(python)) return `no ${python}`
  const r = spawnSync(python, ['-c', 'import torch'], { encoding: 'utf8', env: torchEnv() })
  return r.status === 0 ? null : `torch is not installed for ${python} (see ../shared/bench/README.md: apt-get install -y python3-torch libopenblas0-openmp)`
}

/** Runs `script args…` and returns its last JSON line (the reference scripts print one). */
export function runTorchRef<T>(script: string, args: Array<string | number>, opts: { python?: string; timeoutMs?: number } = {}): T {
  const python = opts.python ?? TORCH_PYTHON
  const r = spawnSync(python, [script, ...args.map(String)], { encoding: 'utf8', env: torchEnv(), timeout: opts.timeoutMs, maxBuffer: 1 << 24 })
  if (r.status !== 0) throw new Error(`${script} failed: ${(r.stderr || String(r.error)).trim().split('\n').pop()}`)
  const line = r.stdout.trim().split('\n').filter((l) => l.startsWith('{')).pop()
  if (!line) throw new Error(`${script} printed no JSON: ${r.stdout.slice(-500)}`)
  return JSON.parse(line) as T
}

/**
 * Other processes' CPU (in cores) above which a speed ratio to PyTorch is not printed: both sides
 * are timed by the wall clock, and a job on the other core slowed one side by up to 20× here (a
 * 15-second epoch took 5 minutes beside a 2-thread job).
 */
export const NOISY_CORES = 0.15

/**
 * Largest relative spread (max ÷ min − 1) of the rounds' ratios to PyTorch for which their median
 * is printed. On a quiet machine the rounds agree (session 17: 1.416× and 1.418×); in session 18,
 * quiet too, PyTorch's training throughput moved so much between rounds that they read 1.31× and
 * 1.73× in one command (and PyTorch itself 4 217 against 6 488 tok/s the day before): a median of
 * such rounds is no measurement.
 */
export const MAX_ROUND_SPREAD = 0.05

/**
 * The median of several rounds' ratios (each round's ours ÷ PyTorch), as ratioToTorch prints one,
 * or why it is withheld: the machine was busy, or the rounds disagree by more than MAX_ROUND_SPREAD.
 */
export function roundsRatioToTorch(ratios: ReadonlyArray<number | null>, otherCores: readonly number[], allowNoisy: boolean): string {
  const xs = ratios.filter((x): x is number => x != null && Number.isFinite(x) && x > 0).sort((a, b) => a - b)
  if (!xs.length) return '–'
  const median = xs.length % 2 ? xs[xs.length >> 1] : (xs[xs.length / 2 - 1] + xs[xs.length / 2]) / 2
  const spread = xs[xs.length - 1] / xs[0] - 1
  if (spread > MAX_ROUND_SPREAD && !allowNoisy) return `unsteady (rounds ${xs[0].toFixed(2)}–${xs[xs.length - 1].toFixed(2)}×; --allow-noisy prints the median)`
  return ratioToTorch(median, 1, otherCores, allowNoisy)
}

/** "ours ÷ theirs×" to 3 decimals, '–' without a reference, or why it is withheld: the machine was busy while timing. */
export function ratioToTorch(ours: number | null | undefined, theirs: number | null | undefined, otherCores: readonly number[], allowNoisy: boolean): string {
  if (ours == null || theirs == null || !(theirs > 0) || !Number.isFinite(ours)) return '–'
  const busiest = otherCores.length ? Math.max(...otherCores) : 0
  if (busiest > NOISY_CORES && !allowNoisy) return `noisy (${busiest.toFixed(2)} other cores; --allow-noisy prints it)`
  return `${(ours / theirs).toFixed(3)}×`
}
