// The model registry and its runs (rows only; the checkpoint folders are the caller's: see
// src/main/models). Paths inside the workspace folder are stored relative so the folder can move.
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path'
import type { DistillMethod, DistillMode, ModelAdaptation, ModelBenchmark, ModelDistillation, Scores } from '@shared/ipc'
import type { Connection } from './connection'
import { StoreError } from './errors'
import { now, type ModelRow } from './rows'
import type { ModelConfigSummary, ModelRecord, ModelUpdate, NewModelInput, RunKind, RunRecord } from './types'

export function listModels(c: Connection, opts: { includeTraining?: boolean } = {}): ModelRecord[] {
  c.assertOpen()
  const rows = c
    .stmt(`SELECT * FROM models WHERE (? = 1 OR status <> 'training') ORDER BY created_at, id`)
    .all(opts.includeTraining ? 1 : 0) as ModelRow[]
  return rows.map((r) => toModel(c, r))
}

export function getModel(c: Connection, id: number): ModelRecord {
  c.assertOpen()
  return toModel(c, modelRow(c, id))
}

export function activeModel(c: Connection): ModelRecord | null {
  c.assertOpen()
  const row = c.stmt('SELECT * FROM models WHERE active = 1').get() as ModelRow | undefined
  return row ? toModel(c, row) : null
}

/** `base`, or `base (2)`, `base (3)`, … whichever no model has yet. */
export function uniqueModelName(c: Connection, base: string): string {
  c.assertOpen()
  const taken = (n: string) => c.stmt('SELECT 1 FROM models WHERE name = ?').get(n) !== undefined
  if (!taken(base)) return base
  for (let k = 2; ; k++) if (!taken(`${base} (${k})`)) return `${base} (${k})`
}

/** Registers a model (default status 'training'); a ready model becomes active when none is. */
export function createModel(c: Connection, input: NewModelInput): ModelRecord {
  const name = input.name.trim()
  if (!name || name.length > 100) throw new StoreError('invalid_request', 'A model name must be 1 to 100 characters')
  return c.write(() => {
    if (c.stmt('SELECT 1 FROM models WHERE name = ?').get(name)) {
      throw new StoreError('conflict', `A model named "${name}" already exists; choose another name`)
    }
    if (input.parentId != null) modelRow(c, input.parentId)
    const status = input.status ?? 'training'
    const row = c
      .stmt(
        `INSERT INTO models (name, path, config, created_at, kind, status, active, parent_id, entity_types, trained_on,
                             dev_scores, training_summary, distillation, shipped, adaptation, benchmark)
         VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      )
      .get(
        name,
        storedPath(c, input.path),
        JSON.stringify(input.config ?? {}),
        now(),
        input.kind,
        status,
        input.parentId ?? null,
        JSON.stringify(input.entityTypes ?? []),
        input.trainedOn ?? null,
        input.devScores ? JSON.stringify(input.devScores) : null,
        input.trainingSummary ?? null,
        input.distillation ? JSON.stringify({ method: input.distillation.method, mode: input.distillation.mode }) : null,
        input.shipped ? 1 : 0,
        input.adaptation ? JSON.stringify(input.adaptation) : null,
        input.benchmark ? JSON.stringify(input.benchmark) : null,
      ) as ModelRow
    input.distillation?.teachers.forEach((t, k) => {
      c.stmt('INSERT INTO model_teachers (model_id, position, teacher_id, teacher_name) VALUES (?, ?, ?, ?)').run(row.id, k, t.id, t.name)
    })
    if (status === 'ready') activateIfNone(c, row.id)
    return toModel(c, modelRow(c, row.id))
  })
}

/** Fills in what a finished job learnt; becoming ready activates the model when none is active. */
export function updateModel(c: Connection, id: number, patch: ModelUpdate): ModelRecord {
  return c.write(() => {
    const cur = modelRow(c, id)
    c.stmt(
      `UPDATE models SET status = ?, kind = ?, config = ?, entity_types = ?, trained_on = ?, dev_scores = ?, training_summary = ?,
                         adaptation = ?, benchmark = ?
       WHERE id = ?`,
    ).run(
      patch.status ?? cur.status,
      patch.kind ?? cur.kind,
      patch.config ? JSON.stringify(patch.config) : cur.config,
      patch.entityTypes ? JSON.stringify(patch.entityTypes) : cur.entity_types,
      patch.trainedOn !== undefined ? patch.trainedOn : cur.trained_on,
      patch.devScores !== undefined ? (patch.devScores ? JSON.stringify(patch.devScores) : null) : cur.dev_scores,
      patch.trainingSummary !== undefined ? patch.trainingSummary : cur.training_summary,
      patch.adaptation !== undefined ? (patch.adaptation ? JSON.stringify(patch.adaptation) : null) : cur.adaptation,
      patch.benchmark !== undefined ? (patch.benchmark ? JSON.stringify(patch.benchmark) : null) : cur.benchmark,
      id,
    )
    if ((patch.status ?? cur.status) === 'ready') activateIfNone(c, id)
    return toModel(c, modelRow(c, id))
  })
}

/** Makes `id` the one active tagger. Only a ready model (not a candidate) can be active. */
export function setActiveModel(c: Connection, id: number): ModelRecord {
  return c.write(() => {
    const row = modelRow(c, id)
    if (row.status !== 'ready') {
      throw new StoreError(
        'conflict',
        row.status === 'candidate'
          ? `Model "${row.name}" is a retrain candidate: keep it (retrain:decide) to make it active`
          : `Model "${row.name}" is still being trained`,
      )
    }
    c.stmt('UPDATE models SET active = 0 WHERE active = 1 AND id <> ?').run(id)
    c.stmt('UPDATE models SET active = 1 WHERE id = ?').run(id)
    return toModel(c, modelRow(c, id))
  })
}

/**
 * Removes the row (runs and uncertainties forget it; children keep a null parent). When it was
 * the active model, the newest other ready model becomes active. Returns the removed record so
 * the caller can remove its folder.
 */
export function deleteModel(c: Connection, id: number): ModelRecord {
  return c.write(() => deleteModelRow(c, id))
}

/**
 * Start-up recovery: models still 'training' (their job was interrupted: the app quit or
 * crashed) are removed, runs still 'running' are marked failed. `keep` spares models and runs
 * of jobs running in this process. Returns the removed models (the caller removes the folders).
 */
export function abandonInterruptedModels(
  c: Connection,
  keep: { models?: ReadonlySet<number>; runs?: ReadonlySet<number> } = {},
): ModelRecord[] {
  return c.write(() => {
    const rows = c.stmt(`SELECT * FROM models WHERE status = 'training'`).all() as ModelRow[]
    const removed = rows.filter((r) => !keep.models?.has(r.id)).map((r) => deleteModelRow(c, r.id))
    const at = now()
    for (const r of c.stmt(`SELECT id FROM runs WHERE status = 'running'`).all() as Array<{ id: number }>) {
      if (keep.runs?.has(r.id)) continue
      c.stmt(`UPDATE runs SET status = 'failed', finished_at = ?, metrics = ? WHERE id = ?`).run(
        at,
        JSON.stringify({ error: 'interrupted: the app stopped while the job ran' }),
        r.id,
      )
    }
    return removed
  })
}

export function startRun(c: Connection, kind: RunKind, modelId: number | null, params: Record<string, unknown>): number {
  return c.write(
    () =>
      (
        c
          .stmt(`INSERT INTO runs (kind, model_id, params, status, started_at) VALUES (?, ?, ?, 'running', ?) RETURNING id`)
          .get(kind, modelId, JSON.stringify(params), now()) as { id: number }
      ).id,
  )
}

export function finishRun(
  c: Connection,
  id: number,
  status: 'done' | 'failed' | 'cancelled',
  metrics: Record<string, unknown> | null,
  modelId?: number | null,
): void {
  c.write(() => {
    c.stmt(`UPDATE runs SET status = ?, metrics = ?, finished_at = ?, model_id = coalesce(?, model_id) WHERE id = ?`).run(
      status,
      metrics ? JSON.stringify(metrics) : null,
      now(),
      modelId ?? null,
      id,
    )
  })
}

export function runs(c: Connection): RunRecord[] {
  c.assertOpen()
  const rows = c.stmt('SELECT * FROM runs ORDER BY id').all() as Array<{
    id: number
    kind: string
    model_id: number | null
    status: string
    params: string
    metrics: string | null
  }>
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    modelId: r.model_id,
    status: r.status,
    params: JSON.parse(r.params),
    metrics: r.metrics ? JSON.parse(r.metrics) : null,
  }))
}

function modelRow(c: Connection, id: number): ModelRow {
  const row = c.stmt('SELECT * FROM models WHERE id = ?').get(id) as ModelRow | undefined
  if (!row) throw new StoreError('not_found', `Model ${id} does not exist`)
  return row
}

function toModel(c: Connection, r: ModelRow): ModelRecord {
  const cfg = JSON.parse(r.config) as Partial<ModelConfigSummary>
  return {
    id: r.id,
    name: r.name,
    kind: r.kind,
    status: r.status,
    candidate: r.status === 'candidate',
    path: isAbsolute(r.path) ? r.path : resolve(dirname(c.path), r.path),
    layers: cfg.layers ?? 0,
    hidden: cfg.hidden ?? 0,
    heads: cfg.heads ?? 0,
    parameters: cfg.parameters ?? 0,
    bytes: cfg.bytes ?? 0,
    weights: cfg.weights ?? 'float32',
    entityTypes: JSON.parse(r.entity_types) as string[],
    createdAt: r.created_at,
    active: r.active === 1,
    parentId: r.parent_id,
    trainedOn: r.trained_on,
    devScores: r.dev_scores ? (JSON.parse(r.dev_scores) as Scores & { types: Record<string, Scores> }) : null,
    trainingSummary: r.training_summary,
    distillation: r.distillation ? distillationOf(c, r.id, r.distillation) : null,
    shipped: r.shipped === 1,
    adaptation: r.adaptation ? (JSON.parse(r.adaptation) as ModelAdaptation) : null,
    benchmark: r.benchmark ? (JSON.parse(r.benchmark) as ModelBenchmark) : null,
  }
}

/** A student's method and mode (models.distillation) with its teachers, named as they are now or, once deleted, as they were. */
function distillationOf(c: Connection, id: number, json: string): ModelDistillation {
  const { method, mode } = JSON.parse(json) as { method: DistillMethod; mode: DistillMode | null }
  const teachers = c
    .stmt(
      `SELECT mt.teacher_id AS id, coalesce(t.name, mt.teacher_name) AS name FROM model_teachers mt
       LEFT JOIN models t ON t.id = mt.teacher_id WHERE mt.model_id = ? ORDER BY mt.position`,
    )
    .all(id) as Array<{ id: number | null; name: string }>
  return { teachers, method, mode }
}

/** Inside the workspace folder: relative with '/', so the folder can move; else absolute. */
function storedPath(c: Connection, p: string): string {
  const full = resolve(p)
  const rel = relative(dirname(c.path), full)
  if (rel && !rel.startsWith('..') && !isAbsolute(rel)) return rel.split(sep).join('/')
  return full
}

function activateIfNone(c: Connection, id: number): void {
  if (!c.stmt('SELECT 1 FROM models WHERE active = 1').get()) {
    c.stmt(`UPDATE models SET active = 1 WHERE id = ? AND status = 'ready'`).run(id)
  }
}

function deleteModelRow(c: Connection, id: number): ModelRecord {
  const row = modelRow(c, id)
  const rec = toModel(c, row)
  c.stmt('UPDATE runs SET model_id = NULL WHERE model_id = ?').run(id)
  c.stmt('DELETE FROM models WHERE id = ?').run(id)
  if (row.active === 1) {
    const next = c.stmt(`SELECT id FROM models WHERE status = 'ready' ORDER BY created_at DESC, id DESC LIMIT 1`).get() as
      | { id: number }
      | undefined
    if (next) c.stmt('UPDATE models SET active = 1 WHERE id = ?').run(next.id)
  }
  return rec
}
