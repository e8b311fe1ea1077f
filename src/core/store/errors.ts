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
