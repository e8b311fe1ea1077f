// Schema migrations. PRAGMA user_version holds the applied version; `schema_migrations` records when
// each step ran. Append new steps; never edit a shipped one.
import type Database from './sqlite'

const MIGRATIONS: ReadonlyArray<{ version: number; sql: string }> = [
  {
    version: 1,
    sql: `
CREATE TABLE schema_migrations (
  version    INTEGER PRIMARY KEY,
  applied_at TEXT NOT NULL
);

CREATE TABLE documents (
  id          INTEGER PRIMARY KEY,
  external_id TEXT NOT NULL UNIQUE,
  title       TEXT NOT NULL,
  text        TEXT NOT NULL,
  passages    TEXT NOT NULL CHECK (json_valid(passages)),
  tokens      TEXT NULL CHECK (tokens IS NULL OR json_valid(tokens)),
  source_file TEXT NULL,
  imported_at TEXT NOT NULL,
  status      TEXT NOT NULL DEFAULT 'unreviewed' CHECK (status IN ('unreviewed', 'in_progress', 'done'))
);
CREATE INDEX documents_status ON documents (status, id);

CREATE TABLE annotations (
  id          INTEGER PRIMARY KEY,
  document_id INTEGER NOT NULL REFERENCES documents (id),
  start       INTEGER NOT NULL,
  "end"       INTEGER NOT NULL,
  type        TEXT NOT NULL CHECK (length(type) > 0),
  concept_id  TEXT NULL,
  origin      TEXT NOT NULL CHECK (origin IN ('gold', 'model', 'person')),
  confidence  REAL NULL CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1)),
  state       TEXT NOT NULL CHECK (state IN ('accepted', 'suggested')),
  deleted     INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
  updated_at  TEXT NOT NULL,
  updated_by  TEXT NOT NULL,
  CHECK (start >= 0 AND "end" > start)
);
-- Covering indexes for the per-document summary (count, types, type filter) and the type facets.
CREATE INDEX annotations_document ON annotations (document_id, deleted, type);
CREATE INDEX annotations_type ON annotations (deleted, type, document_id);

-- Append-only audit trail: the triggers below make UPDATE and DELETE fail.
CREATE TABLE revisions (
  id            INTEGER PRIMARY KEY,
  annotation_id INTEGER NOT NULL REFERENCES annotations (id),
  document_id   INTEGER NOT NULL REFERENCES documents (id),
  action        TEXT NOT NULL CHECK (action IN ('create', 'update', 'delete')),
  before        TEXT NULL CHECK (before IS NULL OR json_valid(before)),
  after         TEXT NULL CHECK (after IS NULL OR json_valid(after)),
  at            TEXT NOT NULL,
  by            TEXT NOT NULL
);
CREATE INDEX revisions_document ON revisions (document_id, id);
CREATE INDEX revisions_annotation ON revisions (annotation_id);
CREATE TRIGGER revisions_no_update BEFORE UPDATE ON revisions
BEGIN SELECT RAISE(ABORT, 'revisions are append-only: UPDATE is not allowed'); END;
CREATE TRIGGER revisions_no_delete BEFORE DELETE ON revisions
BEGIN SELECT RAISE(ABORT, 'revisions are append-only: DELETE is not allowed'); END;

-- Full-text search over title + text. External content: the text lives once, in documents.
-- Documents are never edited, so the index is only ever appended to (on import); a deleted document
-- (version 9) keeps its entry for the restore.
CREATE VIRTUAL TABLE documents_fts USING fts5 (
  title, text, content = 'documents', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
);

-- For the training/distillation layers; filled by them later.
CREATE TABLE models (
  id         INTEGER PRIMARY KEY,
  name       TEXT NOT NULL UNIQUE,
  path       TEXT NOT NULL,
  config     TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(config)),
  created_at TEXT NOT NULL
);
CREATE TABLE runs (
  id          INTEGER PRIMARY KEY,
  kind        TEXT NOT NULL,
  model_id    INTEGER NULL REFERENCES models (id),
  params      TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(params)),
  metrics     TEXT NULL CHECK (metrics IS NULL OR json_valid(metrics)),
  status      TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'done', 'failed', 'cancelled')),
  started_at  TEXT NOT NULL,
  finished_at TEXT NULL
);
`,
  },
  {
    // Model registry (model-in-the-loop): what a model is, where it came from, which one tags;
    // per-document uncertainty of the last tagging for the review queue.
    version: 2,
    sql: `
ALTER TABLE models ADD COLUMN kind TEXT NOT NULL DEFAULT 'imported' CHECK (kind IN ('teacher', 'student', 'imported'));
-- 'training': a job is writing it (left over at start = interrupted: removed); 'candidate': a
-- retrain result waiting for keep/discard; 'ready': usable.
ALTER TABLE models ADD COLUMN status TEXT NOT NULL DEFAULT 'ready' CHECK (status IN ('training', 'candidate', 'ready'));
ALTER TABLE models ADD COLUMN active INTEGER NOT NULL DEFAULT 0 CHECK (active IN (0, 1));
ALTER TABLE models ADD COLUMN parent_id INTEGER NULL REFERENCES models (id) ON DELETE SET NULL;
ALTER TABLE models ADD COLUMN entity_types TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(entity_types));
ALTER TABLE models ADD COLUMN trained_on TEXT NULL;
ALTER TABLE models ADD COLUMN dev_scores TEXT NULL CHECK (dev_scores IS NULL OR json_valid(dev_scores));
ALTER TABLE models ADD COLUMN training_summary TEXT NULL;
ALTER TABLE models ADD COLUMN distillation TEXT NULL CHECK (distillation IS NULL OR json_valid(distillation));
-- At most one active tagger (the registry keeps exactly one while any model is ready).
CREATE UNIQUE INDEX models_one_active ON models (active) WHERE active = 1;
CREATE INDEX runs_status ON runs (status);

CREATE TABLE document_uncertainty (
  document_id INTEGER PRIMARY KEY REFERENCES documents (id),
  model_id    INTEGER NULL REFERENCES models (id) ON DELETE SET NULL,
  uncertainty REAL NOT NULL CHECK (uncertainty >= 0 AND uncertainty <= 1),
  tagged_at   TEXT NOT NULL
);
CREATE INDEX document_uncertainty_order ON document_uncertainty (uncertainty DESC, document_id);
-- Suggestions of a document (replace on re-tagging, accept above a threshold).
CREATE INDEX annotations_state ON annotations (state, deleted, document_id);
`,
  },
  {
    // The default model that ships with the app: which registry rows are copies of it, and the
    // workspace's settings (one JSON value per key), e.g. whether the default model was installed
    // or declined, so it is never installed twice or brought back after the user deleted it.
    version: 3,
    sql: `
ALTER TABLE models ADD COLUMN shipped INTEGER NOT NULL DEFAULT 0 CHECK (shipped IN (0, 1));
CREATE TABLE settings (
  key        TEXT PRIMARY KEY,
  value      TEXT NOT NULL CHECK (json_valid(value)),
  updated_at TEXT NOT NULL
);
`,
  },
  {
    // Models adapted to the workspace's documents (continued masked-LM pretraining): what they
    // were adapted on and how far (ModelInfo.adaptation).
    version: 4,
    sql: `
ALTER TABLE models ADD COLUMN adaptation TEXT NULL CHECK (adaptation IS NULL OR json_valid(adaptation));
`,
  },
  {
    // The correction loop (issue 30): the review queue's other uncertainty scores (its strategy is
    // chosen per workspace; NULL for documents tagged before this step: they rank last under those
    // strategies until tagged again), and one learning-curve point per finished retrain: held-out
    // F1 against the number of documents reviewed.
    version: 5,
    sql: `
ALTER TABLE document_uncertainty ADD COLUMN margin REAL NULL CHECK (margin IS NULL OR (margin >= 0 AND margin <= 1));
ALTER TABLE document_uncertainty ADD COLUMN entropy REAL NULL CHECK (entropy IS NULL OR (entropy >= 0 AND entropy <= 1));
CREATE TABLE learning_curve (
  id            INTEGER PRIMARY KEY,
  model_id      INTEGER NULL REFERENCES models (id) ON DELETE SET NULL,
  base_model_id INTEGER NULL REFERENCES models (id) ON DELETE SET NULL,
  trigger       TEXT NOT NULL CHECK (trigger IN ('manual', 'auto')),
  reviewed      INTEGER NOT NULL CHECK (reviewed >= 0),
  held_out      INTEGER NOT NULL CHECK (held_out >= 0),
  f1_before     REAL NOT NULL CHECK (f1_before >= 0 AND f1_before <= 1),
  f1_after      REAL NOT NULL CHECK (f1_after >= 0 AND f1_after <= 1),
  at            TEXT NOT NULL
);
`,
  },
  {
    // Multi-teacher distillation (issue 26): a student's teachers, in the order they were given,
    // one row each (models.distillation held a single teacherId). The name is kept so that a
    // student still names a teacher deleted since; models.distillation keeps the method and mode.
    // Students of version 5 had one teacher and soft labels.
    version: 6,
    sql: `
CREATE TABLE model_teachers (
  model_id     INTEGER NOT NULL REFERENCES models (id) ON DELETE CASCADE,
  position     INTEGER NOT NULL CHECK (position >= 0),
  teacher_id   INTEGER NULL REFERENCES models (id) ON DELETE SET NULL,
  teacher_name TEXT NOT NULL,
  PRIMARY KEY (model_id, position)
);
CREATE INDEX model_teachers_teacher ON model_teachers (teacher_id);
INSERT INTO model_teachers (model_id, position, teacher_id, teacher_name)
  SELECT m.id, 0, t.id, coalesce(t.name, 'model ' || json_extract(m.distillation, '$.teacherId'))
  FROM models m LEFT JOIN models t ON t.id = json_extract(m.distillation, '$.teacherId')
  WHERE m.distillation IS NOT NULL AND json_extract(m.distillation, '$.teacherId') IS NOT NULL;
UPDATE models SET distillation = json_object('method', 'soft-labels', 'mode', json_extract(distillation, '$.mode'))
  WHERE distillation IS NOT NULL;
`,
  },
  {
    // Why a suggestion exists (issue 26): the document rule that copied it from one of the model's
    // mentions, as JSON {rule, from: {start, end, text}}; NULL for the model's own decisions and
    // for everything tagged before this step.
    version: 7,
    sql: `
ALTER TABLE annotations ADD COLUMN rule TEXT NULL CHECK (rule IS NULL OR json_valid(rule));
`,
  },
  {
    // The benchmark scores a model's folder stated when it was installed (ModelBenchmark, JSON);
    // NULL for every other model and for defaults installed before this step.
    version: 8,
    sql: `
ALTER TABLE models ADD COLUMN benchmark TEXT NULL CHECK (benchmark IS NULL OR json_valid(benchmark));
`,
  },
  {
    // Deleting documents (issue: a wrongly imported file stayed forever). A soft delete, as for
    // annotations: revisions reference the row, and undo must bring a document back with its
    // annotations exactly, so the row stays, flagged; every read skips it. When and by whom, for
    // the record. The FTS index keeps the deleted text (the list filters it out) for the restore.
    version: 9,
    sql: `
ALTER TABLE documents ADD COLUMN deleted INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1));
ALTER TABLE documents ADD COLUMN deleted_at TEXT NULL;
ALTER TABLE documents ADD COLUMN deleted_by TEXT NULL;
`,
  },
]

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version

/** Brings the database to SCHEMA_VERSION; each step runs in its own transaction. */
export function migrate(db: Database.Database, file: string): void {
  const current = db.pragma('user_version', { simple: true }) as number
  if (current > SCHEMA_VERSION) {
    throw new Error(
      `${file}: workspace schema version ${current} is newer than this app supports (${SCHEMA_VERSION}); update FastBioNER`,
    )
  }
  for (const step of MIGRATIONS) {
    if (step.version <= current) continue
    db.transaction(() => {
      db.exec(step.sql)
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(
        step.version,
        new Date().toISOString(),
      )
      // PRAGMA inside the transaction: the version bump commits (or rolls back) with the step.
      db.pragma(`user_version = ${step.version}`)
    }).immediate()
  }
}
