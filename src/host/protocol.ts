// The message protocol between the main process and the model host process.
//
// main → host: { request id method params }, { cancel id }, { shutdown }
// host → main: { ready pid }, { progress id data }, { result id ok value | error }
//
// Messages are plain data (structured-clone / JSON safe). Each request gets an id; progress and
// the one result carry it. A cancel asks the job to stop at its next check (training: between
// steps); ModelHost kills the process when a cancelled job does not answer in time.
// Imports types only, so both sides can use it without pulling in the other's code.
import type { DistillMethod, DistillMode, EngineInfo, ModelBenchmark, ModelShape, Scores, StudentKind } from '@shared/ipc'
import type { CorpusDocument, CorpusIssue, SuggestionRule } from '@shared/domain'
import type { CompareReport } from '../core/eval/compare'

export type MainToHost =
  | { type: 'request'; id: number; method: HostMethod; params: unknown }
  | { type: 'cancel'; id: number }
  | { type: 'shutdown' }

export type HostToMain =
  | { type: 'ready'; pid: number }
  | { type: 'progress'; id: number; data: unknown }
  | { type: 'result'; id: number; ok: true; value: unknown }
  | { type: 'result'; id: number; ok: false; error: HostErrorShape }

/** An error thrown in the host, as data. `code` follows IpcErrorShape['code']. */
export interface HostErrorShape {
  name: string
  message: string
  code: 'invalid_request' | 'not_found' | 'conflict' | 'corpus_error' | 'cancelled' | 'internal'
  issues?: CorpusIssue[]
}

export type ScoresWithTypes = Scores & { types: Record<string, Scores> }

/** What the registry records about a checkpoint folder (read back after saving it). */
export interface ModelSummary extends ModelShape {
  /** The default head's labels (IOB2). */
  labels: string[]
  /** Entity types of every head's labels (tagging merges all heads), sorted. */
  entityTypes: string[]
}

/** Progress of a training-like job (train, retrain, distill, adapt): one per step, one per epoch end. */
export interface TrainStep {
  kind: 'step' | 'eval'
  step: number
  totalSteps: number
  epoch: number
  epochs: number
  /** A step's loss; at an epoch end the epoch's mean loss, or (adapt) the held-out masked-LM loss. */
  loss: number
  devF1?: number
  /** adaptModel's epoch ends: masked-token accuracy on the held-out sequences. */
  maskedAccuracy?: number
  tokensPerSecond: number
  etaSeconds: number
}

export type JobProgress = ({ kind: 'step' | 'eval' } & TrainStep) | { kind: 'phase'; message: string; done?: number; total?: number }

export interface TrainedCheckpoint {
  cancelled: boolean
  /** A checkpoint was written to the folder (the best epoch so far, even when cancelled). */
  saved: boolean
  summary: ModelSummary | null
  /** Of the saved checkpoint on the devel / held-out documents. */
  devScores: ScoresWithTypes | null
  bestEpoch: number | null
  steps: number
  epochs: number
  seconds: number
  /** Backend that trained it (e.g. wasm, tensorflow-gpu). */
  backend: string
  notes: string[]
  /** Every step's loss, and every epoch end's mean loss with the devel F1 (adapt: held-out loss and accuracy). */
  curve: Array<{ step: number; loss: number; devF1?: number; maskedAccuracy?: number }>
}

/** A document's text for adaptModel: its lines (title, abstract, …). */
export interface TextLines {
  id: string
  lines: string[]
}

export interface TaggedDocument {
  /** The CorpusDocument id sent (the workspace document id as a string). */
  id: string
  /** `rule`: the document rule that added the mention (core/tag/document-rules), else null. */
  mentions: Array<{ start: number; end: number; type: string; confidence: number; rule: SuggestionRule | null }>
  /** 1 − mean over the document's words of the top label probability; null without words. */
  uncertainty: number | null
  /** The same words' margin and entropy scores (core/tag/uncertainty), for the review queue's other strategies. */
  margin: number | null
  entropy: number | null
}

/** Every host method: params, result and progress payload. */
export interface HostMethods {
  /** Liveness and round-trip test. */
  ping: { params: { echo?: string }; result: { pid: number; echo: string | null }; progress: never }
  /** Waits cooperatively (checks cancel every tick): protocol tests. */
  sleep: { params: { ms: number; tickMs?: number }; result: { sleptMs: number; cancelled: boolean }; progress: { elapsedMs: number } }
  /** Blocks the host's event loop (ignores cancel): tests of the kill-after-grace path. */
  block: { params: { ms: number }; result: { blockedMs: number }; progress: never }
  /** Exits the process at once: crash-recovery tests. */
  crash: { params: { exitCode?: number }; result: never; progress: never }
  /** Training backend (initBackend) and the inference engine for modelDir (or what would run). */
  engineInfo: { params: { modelDir: string | null }; result: EngineInfo; progress: never }
  /**
   * Validates an HF folder with loadCheckpoint and writes it to dest in our layout. Without a
   * classifier (a bare BioBERT) a head for headLabels is created (error when headLabels is null).
   * keepFiles: copy every file of the folder as it is (the shipped default model: f16 weights,
   * its model.onnx and model card) instead of saving the loaded model; a folder without a
   * classifier is refused then.
   */
  importModel: {
    params: { source: string; dest: string; headLabels: string[] | null; seed: number; keepFiles?: boolean }
    /** benchmark: with keepFiles (the default model), what the folder's fastbioner.json states (checked); else null. */
    result: { summary: ModelSummary; notes: string[]; freshHead: boolean; backend: string; benchmark: ModelBenchmark | null }
    progress: JobProgress
  }
  /**
   * Trains a new model: from scratch with a preset (WordPiece vocabulary learnt from the training
   * text), or, with initDir, fine-tuning that model's encoder with its vocabulary (the folder is
   * only read; its default head is kept when its labels are the workspace's, else a new one).
   */
  trainModel: {
    params: {
      dir: string
      /** From scratch; ignored with initDir. */
      preset?: string
      initDir?: string
      train: CorpusDocument[]
      dev: CorpusDocument[]
      epochs: number
      seed: number
      lr?: number
      batchSize?: number
      maxLength?: number
      vocabSize?: number
      /** preset word-lstm: a word-vector file its word table starts from (core/nlp/word-vectors). */
      wordVectors?: string
      /** Source metadata written into fastbioner.json. */
      metadata?: Record<string, unknown>
    }
    result: TrainedCheckpoint
    progress: JobProgress
  }
  /** Tags documents with the model in modelDir; the engine stays cached for the next call. */
  tag: {
    params: { modelDir: string; docs: CorpusDocument[] }
    result: { engine: string; engineReason: string; docs: TaggedDocument[] }
    progress: never
  }
  /**
   * Fine-tunes the base model into candidateDir: scores the base on heldOut, trains (devF1 per
   * epoch on heldOut), saves the last epoch, scores it. The base folder is only read.
   */
  retrain: {
    params: {
      baseDir: string
      candidateDir: string
      train: CorpusDocument[]
      heldOut: CorpusDocument[]
      /** Corpus files added to the training split (never to the held-out one). */
      extraCorpusPaths: string[]
      epochs: number
      /** Optimizer-step budget (RETRAIN_RECIPE.maxSteps); default: every epoch in full. */
      maxSteps?: number
      seed: number
      lr?: number
    }
    result: TrainedCheckpoint & { before: ScoresWithTypes; after: ScoresWithTypes | null; extraDocuments: number }
    progress: JobProgress
  }
  /**
   * Distils the teachers into an n-layer student in outDir, a copy of teacherDirs[base] (a BERT):
   * 'soft-labels' through core/distill (several teachers: averaged, temperature ramp, per-teacher
   * feature losses); 'teacher-tags': every teacher tags `unlabelled` once and the student trains
   * on `train` plus one copy with the mentions most teachers agree on (core/train/transfer's
   * sequence-level KD). studentKind 'word-tagger' (word-tagger teachers alone, 'teacher-tags'):
   * the student is a new word tagger instead, and base, layers and mode do not apply.
   */
  distill: {
    params: {
      teacherDirs: string[]
      studentKind: StudentKind
      /** BERT student: the teacher it is a copy of. */
      base: number
      method: DistillMethod
      outDir: string
      /** BERT student: its layers. */
      layers: number
      mode: DistillMode
      train: CorpusDocument[]
      dev: CorpusDocument[]
      /** teacher-tags: the documents the teachers tag (their mentions are ignored). */
      unlabelled?: CorpusDocument[]
      epochs: number
      seed: number
      lr?: number
    }
    /** teacher-tags: taggedMentions, the mentions each teacher found in `unlabelled`; agreedMentions, those more than half of them found (what the student learnt). */
    result: TrainedCheckpoint & { layerMap: number[]; taggedMentions?: number[]; agreedMentions?: number }
    progress: JobProgress
  }
  /**
   * Continues masked-LM pretraining of the model in baseDir on the documents' text, into outDir
   * (core/pretrain with init + keepHeads: the base's vocabulary and token-classification heads are
   * kept, the base folder only read). Refuses a base without a [MASK] piece in its vocabulary and
   * text under minWords words. A cancelled or failed run leaves outDir empty.
   */
  adaptModel: {
    params: {
      baseDir: string
      outDir: string
      documents: TextLines[]
      minWords: number
      epochs: number
      maxSteps: number
      batchSize: number
      maxLength: number
      heldOutEvery: number
      seed: number
      lr?: number
      /** Written into fastbioner.json as `adapted` (the workspace, the base model's name…). */
      provenance: Record<string, unknown>
    }
    result: TrainedCheckpoint & {
      words: number
      documents: number
      sequences: number
      heldOutSequences: number
      /** Per epoch end, on the held-out sequences. */
      heldOut: Array<{ epoch: number; loss: number; accuracy: number; predicted: number }>
      firstLoss: number | null
      lastLoss: number | null
      tokensPerSecond: number
      lr: number
    }
    progress: JobProgress
  }
  /**
   * Writes the int8 version of the float model in modelDir to outDir (core/onnx/quantize: absent
   * or empty; complete or left as it was) and scores it on dev through its int8 ONNX graph.
   */
  quantize: {
    params: { modelDir: string; outDir: string; dev: CorpusDocument[] }
    result: { summary: ModelSummary; devScores: ScoresWithTypes | null; seconds: number }
    progress: JobProgress
  }
  /** compareModels (core/eval/compare) over the folders, the first as the reference. */
  compare: {
    params: { dirs: string[]; names: string[]; gold: CorpusDocument[] }
    result: CompareReport
    progress: JobProgress
  }
  /** Closes cached inference engines (of one folder, or all): before deleting a model's files. */
  release: { params: { dir: string | null }; result: { released: number }; progress: never }
}

export type HostMethod = keyof HostMethods
export type HostParams<M extends HostMethod> = HostMethods[M]['params']
export type HostResult<M extends HostMethod> = HostMethods[M]['result']
export type HostProgress<M extends HostMethod> = HostMethods[M]['progress']

export const HOST_METHODS: readonly HostMethod[] = [
  'ping',
  'sleep',
  'block',
  'crash',
  'engineInfo',
  'importModel',
  'trainModel',
  'tag',
  'retrain',
  'distill',
  'quantize',
  'compare',
  'adaptModel',
  'release',
]
