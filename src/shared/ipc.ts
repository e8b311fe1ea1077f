// The one IPC contract: channel names, request schemas (validated in main), response types.
// Imported by main (validation + handler table), preload (channel whitelist), renderer
// (typed calls) and the e2e harness (binds the same handler table into Chromium).
import { z } from 'zod'
import type {
  Annotation,
  CorpusFormat,
  CorpusIssue,
  DocumentDetail,
  DocumentSummary,
  ReviewStatus,
  Revision,
} from './domain'
import { CORPUS_FORMATS, REVIEW_STATUSES, SUGGESTION_RULES } from './domain'
import { ACTIVE_STRATEGIES, LEARNING_LOOP, WORD_LSTM, type ActiveStrategy } from './recipes'

const corpusFormat = z.enum(CORPUS_FORMATS as [CorpusFormat, ...CorpusFormat[]])
const reviewStatus = z.enum(REVIEW_STATUSES as [ReviewStatus, ...ReviewStatus[]])
const id = z.number().int().positive()
const entityType = z.string().trim().min(1).max(64)
const jobId = z.string().min(1).max(64)
/** Teachers one distillation takes at most: each runs over every training example. */
export const MAX_TEACHERS = 4
const hubRepoId = z
  .string()
  .trim()
  .refine(isHubRepoId, 'not a Hugging Face repo id (org/name, e.g. dmis-lab/biobert-base-cased-v1.2)')
const hubRevision = z.string().trim().min(1).refine(isHubRevision, 'not a branch, tag or commit')

export interface WorkspaceInfo {
  path: string
  documentCount: number
  entityTypes: string[]
  user: string
}

/**
 * Why no workspace is open (the start-up one could not be opened): what the workspace chooser
 * shows. 'locked': another FastBioNER instance has it open; canTakeOver when that instance is on
 * another computer, which cannot be checked from here (workspace:open with takeOver).
 */
export interface WorkspaceProblem {
  path: string
  reason: 'locked' | 'corrupt' | 'newer_schema' | 'missing' | 'other'
  message: string
  canTakeOver: boolean
}

/** workspace:status: the open workspace, or, when none could be opened, why. */
export interface WorkspaceStatus {
  workspace: WorkspaceInfo | null
  problem: WorkspaceProblem | null
}

export interface DocumentListResult {
  documents: DocumentSummary[]
  total: number
  counts: { byStatus: Record<ReviewStatus, number>; byType: Record<string, number> }
}

/** documents:deletePreview and documents:delete: the documents and what goes with them. */
export interface DocumentDeletion {
  ids: number[]
  /** Their ids as imported (PMIDs…), in the order of `ids`. */
  externalIds: string[]
  /** Live accepted annotations of those documents. */
  annotations: number
  /** Of those, the ones a person made or accepted (origin 'person'): work that cannot be re-imported. */
  byPerson: number
  /** Live model suggestions of those documents. */
  suggestions: number
}

/** A deleted document, as the Deleted documents dialog lists it (newest deletion first). */
export interface DeletedDocument {
  id: number
  externalId: string
  title: string
  /** Accepted annotations it holds (they come back with it). */
  annotations: number
  deletedAt: string
  deletedBy: string
}

export interface FileImportResult {
  file: string
  ok: boolean
  imported: number
  /** Documents skipped because their id already exists in the file or the workspace, with the same text. */
  duplicates: string[]
  /** Documents skipped because their id is taken, in the file or the workspace, by another text. */
  conflicts: string[]
  /**
   * Ids of deleted documents that this file brought back as fresh documents (its text and
   * annotations; the deleted copy's annotations do not come back). Counted in `imported`.
   */
  reimported: string[]
  issues: CorpusIssue[]
}

export interface ImportResult {
  cancelled: boolean
  files: FileImportResult[]
}

export interface ExportResult {
  path: string
  documents: number
  mentions: number
  /** brat writes a folder of .txt/.ann pairs; every written file is listed. */
  files: string[]
}

// ---- Models in the loop (tagging, suggestions, retraining, compression) ----

export type ModelKind = 'teacher' | 'student' | 'imported'

export type DistillMode = 'dynamic' | 'fixed' | 'hidden' | 'none'

/**
 * How a student learns from its teachers. 'soft-labels': BERT teachers sharing one tokenizer give
 * their soft labels (averaged; with several, a temperature ramp) and per-teacher feature losses
 * (core/distill). 'teacher-tags': label-level KD for teachers of different kinds or vocabularies
 * (a word tagger among them): each teacher tags the workspace's unreviewed documents once and the
 * student learns those tags beside the reviewed ones (core/train/transfer).
 */
export type DistillMethod = 'soft-labels' | 'teacher-tags'

/**
 * What a distilled student is: 'bert', a smaller copy of the base BERT teacher (as many layers as
 * asked); 'word-tagger', a new word tagger (BiLSTM-CRF, no layers to choose), when every teacher
 * is a word tagger ('teacher-tags' only: their agreed tags).
 */
export type StudentKind = 'bert' | 'word-tagger'

/** What a student learnt from. */
export interface ModelDistillation {
  /** Every teacher in the order given (a BERT student starts as a copy of the base, its parent); id null once that model was deleted. */
  teachers: Array<{ id: number | null; name: string }>
  method: DistillMethod
  /** The KD mode of a 'soft-labels' run; null for 'teacher-tags' (no soft labels). */
  mode: DistillMode | null
}

/** distill:plan: what distill:start would run with these teachers, and which other models could join them. */
export interface DistillPlan {
  /** null: nothing can run with this choice (`problem` says why). */
  method: DistillMethod | null
  /** The student distill:start makes (a word tagger: exactly one, no layers); null when nothing can run. */
  studentKind: StudentKind | null
  /** One sentence on what will run, e.g. "soft labels of 2 teachers averaged, …". */
  summary: string
  problem: string | null
  /** The teacher whose copy initialises the student (a BERT); null when there is none. */
  baseId: number | null
  /** Deepest student allowed: the base's layers (teacher tags) or the shallowest teacher's (soft labels); 0 for a word-tagger student. */
  maxLayers: number
  /** Why distill:start can make no int8 version of this student (a word tagger: the app's int8 job reads BERT folders only); null: it can. */
  int8Unavailable: string | null
  /** Unreviewed documents the teachers would tag (teacher tags only, else 0). */
  unreviewedDocuments: number
  /** Every ready model: whether it can be chosen with the others, and why not. */
  candidates: Array<{ modelId: number; wordTagger: boolean; compatible: boolean; reason: string | null }>
}

export interface Scores {
  precision: number
  recall: number
  f1: number
}

/** How a model was adapted to a workspace's documents (models:adapt). */
export interface ModelAdaptation {
  /** Workspace documents and words of text it continued pretraining on. */
  documents: number
  words: number
  epochs: number
  steps: number
  /** Masked-token accuracy on held-out text after the last epoch (null: too little text to hold any out). */
  heldOutAccuracy: number | null
}

/**
 * What a model folder's fastbioner.json states of the model on public benchmark corpora, as the
 * recipe that built it measured them (the default model: scripts/train-default.ts). Shown beside
 * the workspace's own devel F1, never mixed with it: other documents, other guidelines.
 */
export interface ModelBenchmark {
  split: 'devel' | 'test'
  /** How the model tagged, e.g. "every head merged, document rules on (as tagging does it)". */
  tagging: string
  /** One row per corpus and entity type; f1 in [0, 1]. */
  scores: Array<{ corpus: string; type: string; f1: number }>
}

/** A checkpoint's shape and size: what the registry shows of a model and the host reads back from a saved folder. */
export interface ModelShape {
  layers: number
  hidden: number
  heads: number
  parameters: number
  /** Bytes of model.safetensors. */
  bytes: number
  /** 'int8': a folder written by `fastbioner quantize` (int8 weights, same layers). */
  weights: 'float32' | 'int8'
}

export interface ModelInfo extends ModelShape {
  id: number
  name: string
  kind: ModelKind
  /**
   * A retrained model waiting for retrain:decide (keep → it becomes active, discard → removed).
   * Never active, never used for tagging. Candidates survive a restart; an interrupted retrain
   * leaves no candidate (it is removed when the workspace next opens).
   */
  candidate: boolean
  /** HF-layout checkpoint folder (config.json, vocab.txt, model.safetensors[, model.onnx]). */
  path: string
  entityTypes: string[]
  createdAt: string
  active: boolean
  /** The model it was retrained or distilled from. */
  parentId: number | null
  /** Backend that trained it, e.g. "wasm", "tensorflow-gpu". */
  trainedOn: string | null
  devScores: (Scores & { types: Record<string, Scores> }) | null
  /** e.g. "312 documents (4 210 mentions), 10 % held out". */
  trainingSummary: string | null
  distillation: ModelDistillation | null
  /**
   * A copy of the default model that ships with the app, installed when the workspace had no
   * model (the UI marks it "Default"). Models retrained or distilled from it are not.
   */
  shipped: boolean
  /**
   * Set on a model made by models:adapt (continued masked-LM pretraining of parentId on the
   * workspace's documents); its token-classification heads are the base's, not yet tuned to the
   * adapted encoder.
   */
  adaptation: ModelAdaptation | null
  /** Benchmark scores its folder stated when it was installed (the default model), else null. */
  benchmark: ModelBenchmark | null
}

/** The workspace's import type renaming: the rules as written and what they map. */
export interface ImportTypeMap {
  rules: string
  /** Source type → target type. */
  map: Record<string, string>
}

/** models:import: the registered model plus what the loader noticed (e.g. a fresh classifier head). */
export interface ModelImportResult extends ModelInfo {
  /**
   * Human-readable notes, e.g. "no classifier in the checkpoint: a new head for Chemical, Disease
   * was created; retrain it on reviewed documents before tagging".
   */
  notes: string[]
}

/**
 * A Hugging Face Hub repo id as huggingface_hub's validate_repo_id allows it: org/name (or a legacy
 * name without org), letters, digits, '.', '_', '-'; never '..' or '--' (so it cannot leave the
 * cache folder it names) and at most 96 characters. Checked in the contract and again in core/hub.
 */
export function isHubRepoId(repoId: string): boolean {
  return /^[A-Za-z0-9][\w.-]*(\/[A-Za-z0-9][\w.-]*)?$/.test(repoId) && !repoId.includes('--') && !repoId.includes('..') && repoId.length <= 96
}

/** A branch, tag or commit: '/'-separated parts of letters, digits, '.', '_', '-', never '.' or '..'. */
export function isHubRevision(revision: string): boolean {
  const parts = revision.split('/')
  return revision.length <= 255 && parts.every((p) => /^[\w.-]+$/.test(p) && p !== '.' && p !== '..')
}

/** One file of a Hub download plan (models:hubPlan). */
export interface HubFileInfo {
  name: string
  size: number
  /** Already in the Hugging Face cache, partly there (an interrupted download, resumed), or not. */
  state: 'cached' | 'partial' | 'missing'
  partialBytes: number
}

/** models:hubPlan: what a download of repoId@revision would fetch, before any byte is downloaded. */
export interface HubPlanInfo {
  repoId: string
  revision: string
  commit: string
  /** The Hub asked (HF_ENDPOINT in the app's environment, else https://huggingface.co). */
  endpoint: string
  /** The Hugging Face cache folder the files go to (shared with transformers). */
  cacheDir: string
  files: HubFileInfo[]
  totalBytes: number
  /** What remains to download (a partial file counts for its missing part). */
  downloadBytes: number
  /** Free bytes where the cache is. */
  freeBytes: number
}

/** models:hubDownload: the download, then the import of its snapshot (models:import). */
export interface HubDownloadResult {
  cancelled: boolean
  repoId: string
  commit: string | null
  downloadedBytes: number
  /** The snapshot folder in the Hugging Face cache (null when cancelled before the plan). */
  snapshot: string | null
  /** The imported model (null when cancelled). */
  model: ModelImportResult | null
}

/** models:cached: a BERT-family model found in the Hugging Face cache on this computer. */
export interface CachedModelInfo {
  repoId: string
  revision: string
  /** Its snapshot folder. */
  dir: string
  layers: number
  hidden: number
  /** config.json names BertForTokenClassification: it can tag as it is (else a head is added on import). */
  tokenClassifier: boolean
  /** Bytes of the weight files. */
  bytes: number
}

export interface EngineInfo {
  /** TensorFlow.js backend for training: tensorflow-gpu, tensorflow, wasm or cpu. */
  trainingBackend: string
  trainingBackendReason: string
  /** Inference engine for tagging, e.g. onnxruntime-cpu, or tfjs-wasm when ORT cannot load. */
  inferenceEngine: string
  inferenceEngineReason: string
}

export interface TagResult {
  cancelled: boolean
  /** Documents tagged (and written) before the end or the cancel. */
  documents: number
  /** Suggestions stored. */
  suggestions: number
  /** Model mentions not stored because they overlap an accepted annotation. */
  dropped: number
  /** e.g. onnxruntime-cpu, tfjs-wasm. */
  engine: string
  engineReason: string
  msPerDocument: number
  modelId: number
}

export interface ReviewQueueItem {
  documentId: number
  externalId: string
  title: string
  status: ReviewStatus
  /**
   * From the last tag:run over the document: 1 − mean over its words of the top label
   * probability (least-confidence sampling; 0 = sure of every word, at most 1 − 1/labels).
   */
  uncertainty: number
  /** The same tagging's margin and entropy scores (core/tag/uncertainty); null when tagged before they were stored. */
  margin: number | null
  entropy: number | null
  /** Live suggestions in the document. */
  suggestions: number
  /** The model whose tagging made its suggestions (null: unknown or deleted). */
  modelId: number | null
}

/** One finished retrain on the learning curve: F1 on the fixed held-out documents before and after it. */
export interface LearningCurvePoint {
  id: number
  /** The retrained model (null once deleted or discarded). */
  modelId: number | null
  baseModelId: number | null
  /** 'auto': started by Auto-improve. */
  trigger: 'manual' | 'auto'
  /** Reviewed documents (done or in progress) when it ran, held-out ones included. */
  reviewed: number
  heldOut: number
  f1Before: number
  f1After: number
  at: string
}

/**
 * learning:get — the correction loop of the open workspace: the review queue's strategy,
 * Auto-improve and its background retrain, the fixed held-out set and the learning curve.
 */
export interface LearningLoopState {
  strategy: ActiveStrategy
  /** REVIEW_STRATEGY_DEFAULT, for the window to say which one is the default. */
  defaultStrategy: ActiveStrategy
  autoImprove: {
    enabled: boolean
    /** Retrain after every this many newly reviewed documents. */
    every: number
    /** Newly reviewed since the last automatic retrain started (or since the switch was turned on). */
    reviewedSince: number
    /** An automatic retrain (then the re-tagging of the unreviewed documents) runs in the background. */
    running: boolean
    /** Its job id while it runs (jobs:cancel stops it), else null. */
    jobId: string | null
    /**
     * `every` more documents were reviewed while one ran, or while another model job held the
     * training slot: coalesced into ONE further retrain (on everything reviewed by then) that
     * starts when the slot is free — never several.
     */
    queued: boolean
    /** What happened last, for the window ("Kept … : held-out F1 61.0 → 64.2"), or null. */
    lastOutcome: string | null
  }
  /** The fixed held-out set: how many reviewed documents measure every retrain and are never trained on. */
  heldOut: { documents: number; reviewed: number; every: number; min: number }
  curve: LearningCurvePoint[]
}

export interface TrainingCurvePoint {
  step: number
  loss: number
  devF1?: number
}

export interface RetrainResult {
  cancelled: boolean
  /** e.g. a fresh head because the reviewed documents have entity types the base lacks. */
  notes: string[]
  /** The new model, kept aside until the user keeps or discards it. */
  candidate: ModelInfo | null
  baseModelId: number
  before: Scores & { types: Record<string, Scores> }
  after: (Scores & { types: Record<string, Scores> }) | null
  trainDocuments: number
  heldOutDocuments: number
  curve: TrainingCurvePoint[]
}

/** models:adapt: the adapted model (null when cancelled) and its held-out masked-LM scores per epoch. */
export interface ModelAdaptResult {
  cancelled: boolean
  model: ModelInfo | null
  heldOut: Array<{ epoch: number; loss: number; accuracy: number }>
  notes: string[]
}

export interface ComparisonRow {
  modelId: number
  name: string
  /** The teachers a student learnt from (ModelInfo.distillation); null for a model not distilled. */
  distillation: ModelDistillation | null
  layers: number
  weights: 'float32' | 'int8'
  parameters: number
  /** Bytes of the files the inference engine loaded (the ONNX graph on onnxruntime). */
  bytes: number
  overall: Scores
  types: Record<string, Scores>
  medianMsPerDocument: number
  tokensPerSecond: number
  /** Which engine/backend ran the measurement (onnxruntime-cpu, tfjs-wasm, …). */
  engine: string
  /** Why that engine (provider, threads, fallbacks). */
  engineReason: string
  /**
   * Relative to the first row (the teacher): fractions, e.g. 0.988 retention, 0.393 size reduction;
   * the first row has 1, 0, 0. Compare with PUBLISHED_FASTBIONER (src/shared/published.ts).
   */
  f1Retention: number
  sizeReduction: number
  timeReduction: number
}

export interface ComparisonReport {
  rows: ComparisonRow[]
  documents: number
  measuredAt: string
  machine: string
}

export const contract = {
  'workspace:info': { request: z.object({}).strict() },
  /** The open workspace or, when the start-up one could not be opened, the reason (the window then shows the workspace chooser). */
  'workspace:status': { request: z.object({}).strict() },
  /**
   * Opens another workspace (closing this one). The path must come from dialog:chooseWorkspace.
   * `create: true` makes a new workspace and refuses a path that exists; `create: false` refuses a
   * path that does not exist; without it the workspace is opened or created. Without a path, the
   * start-up workspace is opened again. `takeOver` takes a workspace over from an instance on
   * another computer whose lock cannot be checked (WorkspaceProblem.canTakeOver). Refused while an
   * import or model job runs.
   */
  'workspace:open': {
    request: z.object({ path: z.string().min(1).optional(), create: z.boolean().optional(), takeOver: z.boolean().optional() }).strict(),
  },
  /** The OS dialog for a workspace file: an existing one ('open') or a new one ('create'); null when cancelled. */
  'dialog:chooseWorkspace': { request: z.object({ purpose: z.enum(['open', 'create']) }).strict() },

  'documents:list': {
    request: z
      .object({
        query: z.string().max(500).optional(),
        status: reviewStatus.optional(),
        type: entityType.optional(),
        offset: z.number().int().min(0).optional(),
        limit: z.number().int().min(1).max(5000).optional(),
      })
      .strict(),
  },
  'documents:get': { request: z.object({ id }).strict() },
  'documents:setStatus': { request: z.object({ id, status: reviewStatus }).strict() },
  'documents:neighbor': {
    request: z.object({ id, direction: z.enum(['next', 'previous']), unreviewedOnly: z.boolean() }).strict(),
  },
  'documents:history': { request: z.object({ id }).strict() },
  /** What documents:delete of these documents would take away; nothing changes. */
  'documents:deletePreview': { request: z.object({ ids: z.array(id).min(1).max(100_000) }).strict() },
  /**
   * Deletes documents, all or none: every read (list, counts, review queue, search, export,
   * training data) skips them from then on. Reversible with documents:restore.
   */
  'documents:delete': { request: z.object({ ids: z.array(id).min(1).max(100_000) }).strict() },
  /** Brings deleted documents back exactly as they were (the undo of documents:delete). */
  'documents:restore': { request: z.object({ ids: z.array(id).min(1).max(100_000) }).strict() },
  /** The deleted documents that can still be restored, newest deletion first (at most `limit`). */
  'documents:listDeleted': { request: z.object({ limit: z.number().int().min(1).max(10_000).optional() }).strict() },

  'annotations:create': {
    request: z
      .object({
        documentId: id,
        start: z.number().int().min(0),
        end: z.number().int().min(1),
        type: entityType,
        conceptId: z.string().max(200).nullable().optional(),
        // Set only when undo restores a rejected model suggestion; new entities are the person's.
        origin: z.enum(['gold', 'model', 'person']).optional(),
        confidence: z.number().min(0).max(1).nullable().optional(),
        // The document rule behind that suggestion; its source span is checked against the document by the store.
        rule: z
          .object({
            rule: z.enum(SUGGESTION_RULES),
            from: z.object({ start: z.number().int().min(0), end: z.number().int().min(1), text: z.string().max(10_000) }).strict(),
          })
          .strict()
          .nullable()
          .optional(),
        state: z.enum(['accepted', 'suggested']).optional(),
      })
      .strict()
      .refine((r) => r.end > r.start, 'end must be after start'),
  },
  'annotations:update': {
    request: z
      .object({
        id,
        start: z.number().int().min(0).optional(),
        end: z.number().int().min(1).optional(),
        type: entityType.optional(),
        conceptId: z.string().max(200).nullable().optional(),
        /** 'suggested' is how undo takes back an accepted suggestion. */
        state: z.enum(['accepted', 'suggested']).optional(),
      })
      .strict(),
  },
  'annotations:delete': { request: z.object({ id }).strict() },
  /** From the history: the annotation as it was before this revision, its latest (null when that deletes it). */
  'annotations:restore': { request: z.object({ revisionId: id }).strict() },

  /** Opens the OS file dialog (Electron) and returns the chosen paths; [] when cancelled. */
  'dialog:openCorpusFiles': { request: z.object({}).strict() },
  /** Opens the OS save dialog; null when cancelled. */
  'dialog:saveExport': { request: z.object({ format: corpusFormat }).strict() },

  'import:files': {
    request: z
      .object({ jobId, paths: z.array(z.string().min(1)).min(1).max(1000), format: corpusFormat.optional() })
      .strict(),
  },
  'import:text': {
    request: z
      .object({
        jobId,
        name: z.string().min(1).max(500),
        content: z.string().max(256 * 1024 * 1024),
        format: corpusFormat.optional(),
      })
      .strict(),
  },
  'jobs:cancel': { request: z.object({ jobId }).strict() },
  /** The workspace's entity-type renaming for imports (rules text; '' = none). */
  'import:getTypeMap': { request: z.object({}).strict() },
  /**
   * Sets it after checking the rules ("A,B=X;C=Y"); bad rules are an invalid_request naming the
   * rule. Applies to the imports that follow, never to documents already in the workspace.
   */
  'import:setTypeMap': { request: z.object({ rules: z.string().max(4000) }).strict() },

  'engine:info': { request: z.object({}).strict() },
  'models:list': { request: z.object({}).strict() },
  /** Opens the OS folder dialog for an HF checkpoint folder; null when cancelled. */
  'dialog:openModelFolder': { request: z.object({}).strict() },
  /**
   * Imports an HF checkpoint folder (copied into <workspace folder>/models/<name>/). A folder with
   * a token-classification head imports as 'imported'; a bare encoder (BioBERT, PubMedBERT,
   * bert-base-cased) imports as a 'teacher' with a fresh head for the workspace's entity types.
   * With a `jobId`, jobs:cancel stops it (error code 'cancelled'; nothing is added).
   */
  'models:import': {
    request: z.object({ path: z.string().min(1), name: z.string().trim().min(1).max(100).optional(), jobId: jobId.optional() }).strict(),
  },
  /**
   * The only channels that reach the network, and only when the person asks: the plan of a
   * download from the Hugging Face Hub (files, sizes, what is cached, free space) from its model
   * info; nothing is written. The endpoint (HF_ENDPOINT), token (HF_TOKEN) and cache folder come
   * from main's environment, never from the request. With a jobId, jobs:cancel stops it.
   */
  'models:hubPlan': { request: z.object({ repoId: hubRepoId, revision: hubRevision.optional(), jobId: jobId.optional() }).strict() },
  /**
   * Downloads repoId@revision (default main) into the Hugging Face cache (core/hub: resumed where an
   * earlier download stopped, each file checked against the Hub's sha256), then imports the
   * snapshot as models:import does. job:progress: bytes done of the total; jobs:cancel stops it
   * (what arrived is kept and the next download resumes it; no model is added).
   */
  'models:hubDownload': {
    request: z.object({ jobId, repoId: hubRepoId, revision: hubRevision.optional(), name: z.string().trim().min(1).max(100).optional() }).strict(),
  },
  /** BERT-family models in the Hugging Face cache on this computer (offline: no network). */
  'models:cached': { request: z.object({}).strict() },
  /** Imports a model of models:cached by its repo id (as models:import; the folder is found in main). */
  'models:importCached': {
    request: z.object({ repoId: hubRepoId, name: z.string().trim().min(1).max(100).optional(), jobId: jobId.optional() }).strict(),
  },
  'models:setActive': { request: z.object({ id }).strict() },
  'models:delete': { request: z.object({ id }).strict() },
  /**
   * Trains a new model on the workspace's accepted annotations (documents done or in progress, and
   * documents with gold annotations); 10 % of them (seeded) are held out for the per-epoch devel
   * F1 and model selection. Either from scratch with `preset` (one of bert-base, cpu-medium,
   * cpu-small, cpu-tiny), or from a ready model's encoder with `baseModelId` (e.g. one made by
   * models:adapt, or an imported BioBERT): its vocabulary and windows, a head for the workspace's
   * types (its own kept when the labels match); the base stays as it is.
   */
  'models:train': {
    request: z
      .object({
        jobId,
        name: z.string().trim().min(1).max(100),
        preset: z.string().min(1).max(40).optional(),
        baseModelId: id.optional(),
        epochs: z.number().int().min(1).max(100).optional(),
        seed: z.number().int().min(0).optional(),
        /**
         * preset word-lstm only: start its word table from this file of word vectors (chosen with
         * dialog:openWordVectors; word2vec / fastText / GloVe text, .gz too, e.g. made by
         * `fastbioner wordvec --vec`). Its words join the vocabulary; the word size becomes the file's.
         */
        wordVectorsPath: z.string().min(1).max(4096).optional(),
      })
      .strict()
      .refine((r) => (r.preset === undefined) !== (r.baseModelId === undefined), 'give either preset (from scratch) or baseModelId (from a model), not both')
      .refine((r) => r.wordVectorsPath === undefined || r.preset === WORD_LSTM, `wordVectorsPath is for the ${WORD_LSTM} preset (a new word tagger)`),
  },
  /** Opens the OS file dialog for a word-vector file (models:train's wordVectorsPath); null when cancelled. */
  'dialog:openWordVectors': { request: z.object({}).strict() },

  /**
   * "Adapt to my documents": continues masked-LM pretraining (whole-word masking) of a ready model
   * on the text of every workspace document (titles and abstracts, annotations unused) and
   * registers the result as a new model: kind 'teacher', parentId = the base, ModelInfo.adaptation
   * set, the base's vocabulary and token-classification heads kept (the heads are not tuned to the
   * adapted encoder: retrain:start from it, or models:train with baseModelId, makes a tagger of it).
   * The base folder is only read. train:progress per step and, at each epoch end, maskedAccuracy
   * on held-out text. Cancel (jobs:cancel) leaves no model. Refused (invalid_request) when the
   * workspace has fewer than ADAPT_RECIPE.minWords words. Default 3 epochs, at most
   * ADAPT_RECIPE.maxSteps steps.
   */
  'models:adapt': {
    request: z
      .object({
        jobId,
        baseModelId: id,
        name: z.string().trim().min(1).max(100).optional(),
        epochs: z.number().int().min(1).max(10).optional(),
        seed: z.number().int().min(0).optional(),
      })
      .strict(),
  },

  /**
   * Tags documents with a model (default: the active one). documentIds absent = every document
   * not marked done. Suggestions replace the document's previous ones; overlaps with accepted
   * annotations are dropped. Progress: job:progress with etaSeconds; cancel: jobs:cancel.
   */
  'tag:run': {
    request: z
      .object({ jobId, documentIds: z.array(id).max(100000).optional(), modelId: id.optional() })
      .strict(),
  },
  /** Accepted suggestions become person-confirmed annotations (origin 'person', confidence kept, revision by the user). */
  'suggestions:accept': { request: z.object({ ids: z.array(id).min(1).max(100000) }).strict() },
  'suggestions:reject': { request: z.object({ ids: z.array(id).min(1).max(100000) }).strict() },
  'suggestions:acceptAbove': {
    request: z.object({ threshold: z.number().min(0).max(1), documentId: id.optional() }).strict(),
  },
  /** Tagged documents not done, in the order of the workspace's strategy (learning:set; active learning). */
  'review:queue': { request: z.object({ limit: z.number().int().min(1).max(1000).optional() }).strict() },
  /** The correction loop's state (LearningLoopState). */
  'learning:get': { request: z.object({}).strict() },
  /**
   * Sets the review queue's strategy and/or Auto-improve (persisted in the workspace). Turning
   * Auto-improve on starts counting from the documents reviewed now.
   */
  'learning:set': {
    request: z
      .object({
        strategy: z.enum(ACTIVE_STRATEGIES).optional(),
        autoImprove: z
          .object({ enabled: z.boolean().optional(), every: z.number().int().min(1).max(LEARNING_LOOP.autoImproveMaxEvery).optional() })
          .strict()
          .optional(),
      })
      .strict(),
  },

  /**
   * Fine-tunes a ready model on the reviewed documents (done + in progress; accepted annotations),
   * optionally plus corpus files chosen with dialog:openCorpusFiles, holding out the workspace's
   * fixed held-out set (LEARNING_LOOP: about one reviewed document in five by a seeded hash of its
   * id, at least three; never trained on) to score the base BEFORE and the result AFTER (last
   * epoch); train:progress gives the live curve (devF1 on the held-out documents at each epoch
   * end). A finished run adds a point to the learning curve (learning:get). The result is a
   * candidate (ModelInfo.candidate) until retrain:decide. Cancel (jobs:cancel): the base is
   * untouched, the partial candidate removed. Default 3 epochs.
   */
  'retrain:start': {
    request: z
      .object({
        jobId,
        baseModelId: id,
        epochs: z.number().int().min(1).max(50).optional(),
        /** Also train on these corpus files (chosen with dialog:openCorpusFiles). */
        extraCorpusPaths: z.array(z.string().min(1)).max(20).optional(),
        seed: z.number().int().min(0).optional(),
      })
      .strict(),
  },
  /** Keep the retrained candidate (it becomes active) or discard it (its files are removed). */
  'retrain:decide': { request: z.object({ candidateId: id, keep: z.boolean() }).strict() },

  /**
   * Distils the teachers into one student per layer count (see distill:plan for the method and
   * the deepest student allowed) on the workspace's labelled documents (10 % held out for devel),
   * registering each as kind 'student' with parentId = the base teacher and every teacher in its
   * distillation info. train:progress carries a label ("4-layer student"). Cancel keeps the
   * students already finished. Default 3 epochs. `mode` applies to soft labels; a 'teacher-tags'
   * run ignores it, and several teachers refuse mode 'none' (it uses no teacher).
   * Word-tagger teachers alone (plan studentKind 'word-tagger'): one new word tagger, so `layers`
   * is left out (given, the request is refused), and so is int8 (see distill:plan's
   * int8Unavailable); every other choice needs layers. Their default epochs are a from-scratch word tagger's.
   * int8: after each student, also its int8 version (core/onnx/quantize), registered as a
   * 'student' with weights 'int8', parentId = the float student, scored on the same held-out
   * documents through its int8 graph; `students` lists it right after its float parent.
   */
  'distill:start': {
    request: z
      .object({
        jobId,
        teacherIds: z.array(id).min(1).max(MAX_TEACHERS),
        layers: z.array(z.union([z.literal(6), z.literal(4), z.literal(3), z.literal(2), z.literal(1)])).min(1).max(5).optional(),
        mode: z.enum(['dynamic', 'fixed', 'hidden', 'none']),
        epochs: z.number().int().min(1).max(50).optional(),
        seed: z.number().int().min(0).optional(),
        int8: z.boolean().optional(),
      })
      .strict(),
  },
  /** What distill:start would run with these teachers (none: the candidates alone). Reads the models' folders, runs nothing. */
  'distill:plan': { request: z.object({ teacherIds: z.array(id).max(MAX_TEACHERS) }).strict() },
  /**
   * Measures the models (the first is the reference) on documentIds, else the documents marked
   * done, else (none done) the gold-annotated ones: size, P/R/F1, median ms per document and the
   * engine of each measurement. Cancel stops the measuring process (error code 'cancelled').
   */
  'compare:run': {
    request: z.object({ jobId, modelIds: z.array(id).min(1).max(20), documentIds: z.array(id).optional() }).strict(),
  },

  'export:write': {
    request: z
      .object({ path: z.string().min(1), format: corpusFormat, documentIds: z.array(id).optional() })
      .strict(),
  },
} as const

export interface ContractResponses {
  'workspace:info': WorkspaceInfo
  'workspace:status': WorkspaceStatus
  'workspace:open': WorkspaceInfo
  'documents:list': DocumentListResult
  'documents:get': DocumentDetail
  'documents:setStatus': DocumentSummary
  'documents:neighbor': { id: number | null }
  'documents:history': Revision[]
  'documents:deletePreview': DocumentDeletion
  'documents:delete': DocumentDeletion
  'documents:restore': { restored: DocumentSummary[] }
  'documents:listDeleted': { documents: DeletedDocument[]; total: number }
  'annotations:create': Annotation
  'annotations:update': Annotation
  'annotations:delete': { id: number }
  'annotations:restore': Annotation | null
  'dialog:openCorpusFiles': { paths: string[] }
  'dialog:chooseWorkspace': { path: string | null }
  'dialog:saveExport': { path: string | null }
  'import:files': ImportResult
  'import:text': ImportResult
  'jobs:cancel': { cancelled: boolean }
  'import:getTypeMap': ImportTypeMap
  'import:setTypeMap': ImportTypeMap
  'export:write': ExportResult
  'engine:info': EngineInfo
  'models:list': ModelInfo[]
  'dialog:openModelFolder': { path: string | null }
  'models:import': ModelImportResult
  'models:hubPlan': HubPlanInfo
  'models:hubDownload': HubDownloadResult
  'models:cached': CachedModelInfo[]
  'models:importCached': ModelImportResult
  'models:setActive': ModelInfo
  'models:delete': { id: number }
  'models:train': { cancelled: boolean; model: ModelInfo | null }
  'dialog:openWordVectors': { path: string | null }
  'models:adapt': ModelAdaptResult
  'tag:run': TagResult
  'suggestions:accept': { accepted: number }
  'suggestions:reject': { rejected: number }
  'suggestions:acceptAbove': { accepted: number }
  'review:queue': ReviewQueueItem[]
  'learning:get': LearningLoopState
  'learning:set': LearningLoopState
  'retrain:start': RetrainResult
  'retrain:decide': { kept: boolean; model: ModelInfo | null }
  'distill:start': { cancelled: boolean; students: ModelInfo[] }
  'distill:plan': DistillPlan
  'compare:run': ComparisonReport
}

export type Channel = keyof typeof contract
export type RequestOf<C extends Channel> = z.input<(typeof contract)[C]['request']>
export type ResponseOf<C extends Channel> = ContractResponses[C]
export const CHANNELS = Object.keys(contract) as Channel[]

/** Events pushed from main to the renderer. */
export interface EventPayloads {
  'job:progress': { jobId: string; done: number; total: number; message: string; etaSeconds?: number }
  /**
   * Training/distillation steps: drives the live loss curve. Events with devF1 are the end-of-epoch
   * evaluations (loss = the epoch's mean loss then).
   */
  'train:progress': {
    jobId: string
    /** Which model is training, e.g. "4-layer student" in a distill:start job with several. */
    label?: string
    step: number
    totalSteps: number
    epoch: number
    loss: number
    devF1?: number
    /** models:adapt's epoch ends: masked-token accuracy on held-out text (loss = the held-out masked-LM loss then). */
    maskedAccuracy?: number
    tokensPerSecond: number
    etaSeconds: number
  }
  /**
   * The registry changed without a request from the window: the default model that ships with the
   * app was installed into the open workspace (it had no model) and is ready to tag.
   */
  'models:changed': { reason: 'default-model'; model: ModelInfo }
  /**
   * The correction loop changed without a request from the window: Auto-improve started, queued
   * or finished a background retrain (its model may now be active and the documents re-tagged),
   * or a retrain added a learning-curve point.
   */
  'learning:changed': LearningLoopState
}
export type EventName = keyof EventPayloads
export const EVENT_NAMES: EventName[] = ['job:progress', 'train:progress', 'models:changed', 'learning:changed']

/** What crosses the IPC boundary: errors travel as data so their code and issues survive. */
export type IpcResult<T> = { ok: true; value: T } | { ok: false; error: IpcErrorShape }

/**
 * The bridge the preload exposes as `window.api` (and the e2e harness emulates).
 * The renderer wraps it (src/renderer/src/api.ts) to throw typed errors.
 */
export interface BridgeApi {
  invoke<C extends Channel>(channel: C, request: RequestOf<C>): Promise<IpcResult<ResponseOf<C>>>
  on<E extends EventName>(event: E, listener: (payload: EventPayloads[E]) => void): () => void
}

export const BRIDGE_GLOBAL = 'api'

/** Errors cross IPC as plain objects; `code` lets the renderer tell a bad request from a failure. */
export interface IpcErrorShape {
  code: 'invalid_request' | 'not_found' | 'conflict' | 'corpus_error' | 'cancelled' | 'internal'
  message: string
  issues?: CorpusIssue[]
}

export function parseRequest<C extends Channel>(channel: C, payload: unknown): z.output<(typeof contract)[C]['request']> {
  return contract[channel].request.parse(payload) as z.output<(typeof contract)[C]['request']>
}
