// The learning curve (issue 30): one point per finished retrain — held-out F1 before and after it,
// against the number of documents reviewed then — so the Retrain view can show whether the
// corrections pay off.
import type { LearningCurvePoint } from '@shared/ipc'
import type { Connection } from './connection'
import { now } from './rows'

export type NewLearningPoint = Omit<LearningCurvePoint, 'id' | 'at'>

const unit = (x: number) => Math.min(1, Math.max(0, Number.isFinite(x) ? x : 0))

export function addLearningPoint(c: Connection, p: NewLearningPoint): LearningCurvePoint {
  return c.write(() => {
    const row = c
      .stmt(
        `INSERT INTO learning_curve (model_id, base_model_id, trigger, reviewed, held_out, f1_before, f1_after, at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      )
      .get(p.modelId, p.baseModelId, p.trigger, p.reviewed, p.heldOut, unit(p.f1Before), unit(p.f1After), now()) as CurveRow
    return toPoint(row)
  })
}

/** Every point, oldest first. */
export function learningCurve(c: Connection): LearningCurvePoint[] {
  c.assertOpen()
  return (c.stmt('SELECT * FROM learning_curve ORDER BY id').all() as CurveRow[]).map(toPoint)
}

interface CurveRow {
  id: number
  model_id: number | null
  base_model_id: number | null
  trigger: 'manual' | 'auto'
  reviewed: number
  held_out: number
  f1_before: number
  f1_after: number
  at: string
}

const toPoint = (r: CurveRow): LearningCurvePoint => ({
  id: r.id,
  modelId: r.model_id,
  baseModelId: r.base_model_id,
  trigger: r.trigger,
  reviewed: r.reviewed,
  heldOut: r.held_out,
  f1Before: r.f1_before,
  f1After: r.f1_after,
  at: r.at,
})
