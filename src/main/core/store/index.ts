export { Workspace } from './workspace'
export type {
  CreateAnnotationInput,
  ImportOptions,
  ImportSummary,
  ListQuery,
  OpenOptions,
  UpdateAnnotationInput,
  WorkspaceSummary,
} from './workspace'
export { StoreError, isStoreError, type StoreErrorCode } from './errors'
export { SCHEMA_VERSION } from './schema'
