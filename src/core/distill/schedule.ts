// Schedules of the distillation losses: FastBioNER's dynamic weight φ(s) and the stepped
// temperature ramp of multi-teacher, multi-feature KD.

/** FastBioNER's default offset b in φ(s). */
export const DEFAULT_PHI_B = 0.3

/**
 * φ(s) = max(1 − e^(s/G + b − 1), 0): the weight of the teacher-imitation losses at step s of G.
 * φ(0) = 1 − e^(b − 1) (≈ 0.503 for b = 0.3), decreasing, and exactly 0 from s/G = 1 − b on
 * (0.7 for b = 0.3): the student imitates the teacher early and learns from gold tags late.
 * Steps are 0-based (the first optimizer step is s = 0).
 */
export function phi(step: number, totalSteps: number, b = DEFAULT_PHI_B): number {
  if (!(totalSteps > 0)) throw new RangeError(`phi: total steps must be > 0, got ${totalSteps}`)
  return Math.max(1 - Math.exp(step / totalSteps + b - 1), 0)
}

/** The first step at which φ is 0: ceil((1 − b)·G). */
export function phiZeroStep(totalSteps: number, b = DEFAULT_PHI_B): number {
  return Math.max(0, Math.ceil((1 - b) * totalSteps))
}

export interface TemperatureRamp {
  /** First temperature ("near 0"); default 0.5. */
  start?: number
  /** Final temperature; default 3. */
  target?: number
  /** Step between levels; default 0.5. */
  increment?: number
}

/** The temperature levels of a ramp: start, start + inc, …, target (the last one clamped to target). */
export function temperatureLevels(r: TemperatureRamp = {}): number[] {
  const start = r.start ?? 0.5
  const target = r.target ?? 3
  const inc = r.increment ?? 0.5
  if (!(start > 0) || !(target > 0) || !(inc > 0)) throw new RangeError(`temperature ramp: start, target and increment must be > 0 (got ${start}, ${target}, ${inc})`)
  if (start >= target) return [target]
  const levels: number[] = []
  // Rounded to 1e-9 so 0.5 + 5·0.5 is exactly 3 and never 2.9999999.
  for (let t = start; t < target - 1e-9; t = Math.round((t + inc) * 1e9) / 1e9) levels.push(t)
  levels.push(target)
  return levels
}

/**
 * Stepped temperature: training is cut into as many equal parts as there are levels and part k
 * uses level k (0.5, 1, 1.5, 2, 2.5, 3 by default: six plateaus of G/6 steps each). The last
 * level is reached at step floor((K − 1)·G / K) and held to the end.
 */
export function rampTemperature(step: number, totalSteps: number, r: TemperatureRamp = {}): number {
  if (!(totalSteps > 0)) throw new RangeError(`temperature ramp: total steps must be > 0, got ${totalSteps}`)
  const levels = temperatureLevels(r)
  const k = Math.min(levels.length - 1, Math.max(0, Math.floor((step / totalSteps) * levels.length)))
  return levels[k]
}
