import type { WorkspaceProblem } from '@shared/ipc'

// Typed workspace errors. `code` matches IpcErrorShape['code'] so the handler table can pass it through.
export type StoreErrorCode = 'not_found' | 'conflict' | 'invalid_request' | 'cancelled'

export class StoreError extends Error {
  override readonly name = 'StoreError'
  constructor(
    readonly code: StoreErrorCode,
    message: string,
  ) {
    super(message)
  }
}

export function isStoreError(e: unknown): e is StoreError {
  // Duck-typed too: a second copy of this module (bundler, alias vs relative path) breaks instanceof.
  return (
    e instanceof StoreError ||
    (e instanceof Error && e.name === 'StoreError' && typeof (e as { code?: unknown }).code === 'string')
  )
}

/** Why a workspace could not be opened: what the workspace chooser tells the user. */
export type WorkspaceOpenReason = WorkspaceProblem['reason']

/** A workspace that could not be opened, with the reason (Workspace.open). */
export class WorkspaceOpenError extends StoreError {
  constructor(
    readonly reason: WorkspaceOpenReason,
    message: string,
    /** 'locked' by an instance on another host, which cannot be checked from here: the user may take over. */
    readonly canTakeOver = false,
  ) {
    super(reason === 'missing' ? 'not_found' : reason === 'locked' ? 'conflict' : 'invalid_request', message)
  }
}
