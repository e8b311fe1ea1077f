// The workspace's public input and result types (re-exported by index.ts).
import type { ModelAdaptation, ModelBenchmark, ModelDistillation, ModelInfo, ModelKind, ModelShape } from '@shared/ipc'
import type { AnnotationOrigin, ReviewStatus, SuggestionRule } from '@shared/domain'

export interface OpenOptions {
  /** Recorded as `updated_by` / revision `by` for every change made through this workspace. */
  user?: string
  /**
   * Take the workspace over from an instance on another host that holds its lock (that host
   * cannot be checked from here). Locks of live processes on this host are never taken over.
   */
  takeOver?: boolean
}

export interface ImportOptions {
  /** Called after every document (done, total); throttle in the caller. Throwing aborts the import. */
  onProgress?: (done: number, total: number) => void
  /** Aborting rolls the whole import back and rejects with StoreError code 'cancelled'. */
  signal?: AbortSignal
}

export interface ImportSummary {
  imported: number
  /** External ids skipped because the workspace (or this batch, earlier) has them, with the same text. */
  duplicates: string[]
  /** External ids skipped because the workspace (or this batch, earlier) has them with another text. */
  conflicts: string[]
  /** External ids of deleted documents imported afresh (counted in `imported`); see import.ts. */
  reimported: string[]
}

export interface ListQuery {
  /** PMID / external-id prefix, or words searched in title + text (the last word as a prefix). */
  query?: string
  status?: ReviewStatus
  /** Only documents with at least one live annotation of this type. */
  type?: string
  offset?: number
  /** Default 100. */
  limit?: number
}

export interface CreateAnnotationInput {
  documentId: number
  start: number
  end: number
  type: string
  conceptId?: string | null
  /** Default 'person'. */
  origin?: AnnotationOrigin
  confidence?: number | null
  /** The document rule behind a model suggestion (undo restores a rejected one with it). */
  rule?: SuggestionRule | null
  /** Default 'accepted'. */
  state?: 'accepted' | 'suggested'
}

export interface UpdateAnnotationInput {
  id: number
  start?: number
  end?: number
  type?: string
  conceptId?: string | null
  state?: 'accepted' | 'suggested'
}

export interface WorkspaceSummary {
  path: string
  documentCount: number
  entityTypes: string[]
}

export type ModelStatus = 'training' | 'candidate' | 'ready'

/** A registry row: the contract's ModelInfo plus the lifecycle status. */
export interface ModelRecord extends ModelInfo {
  status: ModelStatus
}

/** Architecture summary stored with a model (models.config); `weights` is absent in older rows (float32). */
export type ModelConfigSummary = Omit<ModelShape, 'weights'> & Partial<Pick<ModelShape, 'weights'>>

export interface NewModelInput {
  name: string
  kind: ModelKind
  /** Default 'training' (a job is about to write it). */
  status?: ModelStatus
  /** Checkpoint folder; stored relative to the workspace folder when inside it. */
  path: string
  parentId?: number | null
  config?: ModelConfigSummary
  entityTypes?: string[]
  trainedOn?: string | null
  devScores?: ModelInfo['devScores']
  trainingSummary?: string | null
  /** Its teachers are written to model_teachers (ids must be models of the workspace, or null). */
  distillation?: ModelDistillation | null
  /** A copy of the default model that ships with the app (ModelInfo.shipped). */
  shipped?: boolean
  adaptation?: ModelAdaptation | null
  benchmark?: ModelBenchmark | null
}

export interface ModelUpdate {
  status?: ModelStatus
  kind?: ModelKind
  config?: ModelConfigSummary
  entityTypes?: string[]
  trainedOn?: string | null
  devScores?: ModelInfo['devScores']
  trainingSummary?: string | null
  adaptation?: ModelAdaptation | null
  benchmark?: ModelBenchmark | null
}

export interface SuggestionInput {
  start: number
  end: number
  type: string
  /** In [0, 1]; clamped. */
  confidence: number
  /** The document rule that added it; null or absent for the model's own decision. */
  rule?: SuggestionRule | null
}

export interface DocumentSuggestions {
  documentId: number
  suggestions: SuggestionInput[]
  /** Per-document uncertainty for the review queue; null leaves the stored value alone. */
  uncertainty: number | null
  /**
   * The same tagging pass's margin and entropy scores (core/tag/uncertainty), for the queue's
   * other strategies; absent or null: not known (stored as NULL).
   */
  margin?: number | null
  entropy?: number | null
}

export interface LabelledQuery {
  /** Documents with these review statuses… */
  statuses: ReviewStatus[]
  /** …and (when true) every document with at least one live gold annotation. */
  includeGold: boolean
}

export type RunKind = 'train' | 'retrain' | 'distill' | 'quantize' | 'tag' | 'compare' | 'import' | 'adapt'

export interface RunRecord {
  id: number
  kind: string
  modelId: number | null
  status: string
  params: unknown
  metrics: unknown
}

/**
 * What the workspace decided about the default model that ships with the app (src/main/models/
 * default-model.ts): installed once (and never again, even after the user deleted it), or
 * declined because the workspace already had a model of its own.
 */
export type DefaultModelDecision =
  | { decision: 'installed'; modelId: number; source: string }
  | { decision: 'declined'; reason: string }

/** The workspace's settings by key (the settings table: one JSON value per key). */
export interface WorkspaceSettings {
  defaultModel: DefaultModelDecision
  /**
   * Entity-type renaming applied to every import into this workspace, as the rules the user
   * wrote ("SpecificDisease,DiseaseClass=Disease;GENE=Gene"; core/corpus/type-map).
   */
  importTypeMap: string
  /** The review queue's active-learning strategy (core/active/strategies; default REVIEW_STRATEGY_DEFAULT). */
  reviewStrategy: string
  /**
   * "Auto-improve" (src/main/models/auto-improve.ts): retrain in the background every `every`
   * newly reviewed documents; `baseline` is the reviewed count the next trigger counts from.
   */
  autoImprove: { enabled: boolean; every: number; baseline: number }
}
