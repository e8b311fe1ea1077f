// Layer correspondence between a teacher and a student.
//
// Indexing used everywhere in core/distill (and the model's outputs):
//  - "layer j" is 1-based: layer 1 is the first transformer block. In HF parameter names it is
//    bert.encoder.layer.{j-1}; in BertOutput it is hiddenStates[j] (its output) and
//    attentions[j-1] (its attention probabilities).
//  - layer 0 is the embedding output (hiddenStates[0]); it has no attention map.
//
// Uniform mapping (FastBioNER): with m teacher and n student layers, student layer j learns from
// teacher layer g(j) = floor(j·m/n), j = 1..n. When n divides m this is exactly j·m/n:
//   (12, 6) → 2 4 6 8 10 12   (12, 4) → 3 6 9 12   (12, 3) → 4 8 12   (4, 2) → 2 4
// The last student layer always maps to the last teacher layer, whose output feeds the
// classifier the student inherits.

/** Teacher layer (1-based) for each student layer 1..n: result[j-1] = floor(j·m/n). */
export function uniformLayerMap(teacherLayers: number, studentLayers: number): number[] {
  const m = teacherLayers
  const n = studentLayers
  if (!Number.isInteger(m) || m < 1) throw new RangeError(`teacher must have at least one layer, got ${m}`)
  if (!Number.isInteger(n) || n < 1 || n > m) throw new RangeError(`student layers must be an integer in 1..${m} (the teacher's depth), got ${n}`)
  const out: number[] = []
  for (let j = 1; j <= n; j++) out.push(Math.floor((j * m) / n))
  return out
}

/** A feature-loss pair in hidden-state indices (0 = embeddings, k = output of layer k). */
export interface LayerPair {
  student: number
  teacher: number
}

/**
 * Default pairs for one teacher: student layer j ↔ teacher layer g(j) for j = 1..n, preceded by
 * the embedding pair 0 ↔ 0 when `includeEmbeddings` (multi-teacher, multi-feature KD includes
 * it; FastBioNER's Σ_j L_ML^j runs over the mapped transformer layers only).
 */
export function defaultLayerPairs(teacherLayers: number, studentLayers: number, includeEmbeddings = false): LayerPair[] {
  const pairs = uniformLayerMap(teacherLayers, studentLayers).map((t, i) => ({ student: i + 1, teacher: t }))
  return includeEmbeddings ? [{ student: 0, teacher: 0 }, ...pairs] : pairs
}

/** Throws unless every pair is inside both models. */
export function checkLayerPairs(pairs: readonly LayerPair[], teacherLayers: number, studentLayers: number, what = 'layer pair'): void {
  for (const p of pairs) {
    if (!Number.isInteger(p.student) || p.student < 0 || p.student > studentLayers) throw new RangeError(`${what} ${p.student}:${p.teacher}: student layer must be in 0..${studentLayers}`)
    if (!Number.isInteger(p.teacher) || p.teacher < 0 || p.teacher > teacherLayers) throw new RangeError(`${what} ${p.student}:${p.teacher}: teacher layer must be in 0..${teacherLayers}`)
    if ((p.student === 0) !== (p.teacher === 0)) throw new RangeError(`${what} ${p.student}:${p.teacher}: the embedding layer (0) can only pair with the embedding layer`)
  }
}

/** Parses "0:0,1:3,2:6" (student:teacher). */
export function parseLayerPairs(text: string): LayerPair[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const m = /^(\d+):(\d+)$/.exec(s)
      if (!m) throw new RangeError(`layer pair '${s}' is not student:teacher (e.g. 1:3)`)
      return { student: Number(m[1]), teacher: Number(m[2]) }
    })
}
