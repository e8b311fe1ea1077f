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
export { StoreError, isStoreError, type StoreErrorCode } from './errors'
export { SCHEMA_VERSION } from './schema'
