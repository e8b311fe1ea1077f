export { Workspace } from './workspace'
export type {
  CreateAnnotationInput,
  DefaultModelDecision,
  DocumentSuggestions,
  LabelledQuery,
  ModelConfigSummary,
  ModelRecord,
  ModelStatus,
  ModelUpdate,
  NewModelInput,
  RunKind,
  SuggestionInput,
  ImportOptions,
  ImportSummary,
  ListQuery,
  OpenOptions,
  UpdateAnnotationInput,
  RunRecord,
  WorkspaceSettings,
  WorkspaceSummary,
} from './types'
export { StoreError, isStoreError, WorkspaceOpenError, type StoreErrorCode, type WorkspaceOpenReason } from './errors'
export { LOCK_SUFFIX, WorkspaceLockedError, type LockOwner } from './lock'
export { SCHEMA_VERSION } from './schema'
export type { ReviewCandidate } from './suggestions'
export type { NewLearningPoint } from './learning'
