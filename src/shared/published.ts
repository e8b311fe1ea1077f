// Published FastBioNER compression results, shown next to the user's own compare:run figures.
// Fractions in the same sense as ComparisonRow (src/shared/ipc.ts): f1Retention = F1 / F1 of
// the 12-layer teacher, sizeReduction = 1 − size / teacher size, timeReduction = 1 − tagging
// time / teacher time. Imports nothing.

export interface PublishedCompression {
  /** Student depth (the teacher has 12 layers). */
  layers: 6 | 4 | 3
  f1Retention: number
  sizeReduction: number
  timeReduction: number
}

export const PUBLISHED_FASTBIONER: {
  source: string
  teacherLayers: number
  rows: readonly PublishedCompression[]
} = {
  source: 'FastBioNER (dynamic-weight knowledge distillation of a BioBERT teacher), as published',
  teacherLayers: 12,
  rows: [
    { layers: 6, f1Retention: 0.988, sizeReduction: 0.393, timeReduction: 0.462 },
    { layers: 4, f1Retention: 0.959, sizeReduction: 0.524, timeReduction: 0.608 },
    { layers: 3, f1Retention: 0.945, sizeReduction: 0.589, timeReduction: 0.688 },
  ],
}
