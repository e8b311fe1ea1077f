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

/** A student–teacher hidden-state pair of the distillation graph (over all teachers). */
export interface FeatureHiddenPair {
  teacher: number
  /** Hidden-state indices (0 = embeddings). */
  student: number
  teacherLayer: number
  teacherWidth: number
  /** Learned projection W [Hs, Ht] (`distill.teacher{k}.W_h`, `W_e` for embeddings); null when the widths are equal. */
  projection: string | null
}

/** A student–teacher attention pair of the distillation graph (over all teachers). */
export interface FeatureAttentionPair {
  teacher: number
  /** Student layer, 0-based (its attentions[] index). */
  student: number
  teacherLayer: number
  teacherHeads: number
}

export interface FeatureTeacher {
  hiddenSize: number
  numAttentionHeads: number
  pairs: readonly LayerPair[]
  /** Teacher layers whose hidden states / attentions the run uses. */
  hidden: readonly number[]
  attentions: readonly number[]
}

/**
 * The feature losses of a run: each teacher's pairs whose targets it uses, and one projection
 * per teacher and kind (W_h for transformer layers, W_e for the embedding pair) when the
 * widths differ, started as the zero-padding map [I | 0] (the truncation when the student is
 * wider) so that the losses first compare the dimensions the two models share.
 */
export function featurePairs(studentWidth: number, teachers: readonly FeatureTeacher[]): {
  hidden: FeatureHiddenPair[]
  attention: FeatureAttentionPair[]
  projections: Map<string, { shape: [number, number]; init: Float32Array }>
} {
  const hidden: FeatureHiddenPair[] = []
  const attention: FeatureAttentionPair[] = []
  const projections = new Map<string, { shape: [number, number]; init: Float32Array }>()
  teachers.forEach((t, k) => {
    const Ht = t.hiddenSize
    const projectionFor = (studentLayer: number): string | null => {
      if (Ht === studentWidth) return null
      const name = `distill.teacher${k}.${studentLayer === 0 ? 'W_e' : 'W_h'}`
      if (!projections.has(name)) {
        const init = new Float32Array(studentWidth * Ht)
        for (let i = 0; i < Math.min(studentWidth, Ht); i++) init[i * Ht + i] = 1
        projections.set(name, { shape: [studentWidth, Ht], init })
      }
      return name
    }
    for (const p of t.pairs) {
      if (t.hidden.includes(p.teacher)) hidden.push({ teacher: k, student: p.student, teacherLayer: p.teacher, teacherWidth: Ht, projection: projectionFor(p.student) })
      if (p.teacher > 0 && p.student > 0 && t.attentions.includes(p.teacher)) {
        attention.push({ teacher: k, student: p.student - 1, teacherLayer: p.teacher, teacherHeads: t.numAttentionHeads })
      }
    }
  })
  return { hidden, attention, projections }
}
