// Typed calls over window.api (the preload bridge, or the e2e harness's emulation of it).
// Every call resolves with the response value or throws ApiError: `{ok:false}` never leaks to the UI.
import type {
  BridgeApi,
  Channel,
  EventName,
  EventPayloads,
  IpcErrorShape,
  IpcResult,
  RequestOf,
  ResponseOf,
} from '@shared/ipc'
import type { CorpusIssue } from '@shared/domain'

export class ApiError extends Error {
  override readonly name = 'ApiError'
  readonly code: IpcErrorShape['code']
  readonly issues: CorpusIssue[]

  constructor(shape: IpcErrorShape) {
    super(shape.message)
    this.code = shape.code
    this.issues = shape.issues ?? []
  }
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError
}

/** A message a person can act on, whatever was thrown. */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message || e.name
  return String(e)
}

function bridge(): BridgeApi {
  const api = window.api
  if (!api || typeof api.invoke !== 'function') {
    throw new ApiError({
      code: 'internal',
      message: 'The workbench bridge (window.api) is missing: the app was not started by FastBioNER.',
    })
  }
  return api
}

export async function call<C extends Channel>(channel: C, request: RequestOf<C>): Promise<ResponseOf<C>> {
  let result: IpcResult<ResponseOf<C>>
  try {
    result = await bridge().invoke(channel, request)
  } catch (e) {
    if (e instanceof ApiError) throw e
    throw new ApiError({ code: 'internal', message: `${channel} failed: ${errorMessage(e)}` })
  }
  if (!result || typeof result !== 'object' || typeof (result as { ok?: unknown }).ok !== 'boolean') {
    throw new ApiError({ code: 'internal', message: `${channel} returned an unexpected answer` })
  }
  if (result.ok) return result.value
  throw new ApiError(result.error)
}

/** Subscribes to a main-process event; returns the unsubscribe function. */
export function onEvent<E extends EventName>(event: E, listener: (payload: EventPayloads[E]) => void): () => void {
  const api = window.api
  if (!api || typeof api.on !== 'function') return () => undefined
  return api.on(event, listener)
}

export const api = {
  workspaceInfo: () => call('workspace:info', {}),
  chooseWorkspace: (purpose: 'open' | 'create') => call('dialog:chooseWorkspace', { purpose }),
  openWorkspace: (path: string, create: boolean) => call('workspace:open', { path, create }),
  /** The open workspace, or why none could be opened at start-up (the window then shows the chooser). */
  workspaceStatus: () => call('workspace:status', {}),
  /** Opens the start-up workspace again; takeOver: from an instance on another computer. */
  reopenWorkspace: (takeOver: boolean) => call('workspace:open', takeOver ? { takeOver } : {}),
  listDocuments: (req: RequestOf<'documents:list'>) => call('documents:list', req),
  getDocument: (id: number) => call('documents:get', { id }),
  setStatus: (id: number, status: RequestOf<'documents:setStatus'>['status']) => call('documents:setStatus', { id, status }),
  neighbor: (id: number, direction: 'next' | 'previous', unreviewedOnly = true) =>
    call('documents:neighbor', { id, direction, unreviewedOnly }),
  history: (id: number) => call('documents:history', { id }),
  deletePreview: (ids: number[]) => call('documents:deletePreview', { ids }),
  deleteDocuments: (ids: number[]) => call('documents:delete', { ids }),
  restoreDocuments: (ids: number[]) => call('documents:restore', { ids }),
  deletedDocuments: () => call('documents:listDeleted', {}),
  createAnnotation: (req: RequestOf<'annotations:create'>) => call('annotations:create', req),
  updateAnnotation: (req: RequestOf<'annotations:update'>) => call('annotations:update', req),
  deleteAnnotation: (id: number) => call('annotations:delete', { id }),
  restoreRevision: (revisionId: number) => call('annotations:restore', { revisionId }),
  chooseCorpusFiles: () => call('dialog:openCorpusFiles', {}),
  chooseExportPath: (format: RequestOf<'dialog:saveExport'>['format']) => call('dialog:saveExport', { format }),
  importFiles: (req: RequestOf<'import:files'>) => call('import:files', req),
  importText: (req: RequestOf<'import:text'>) => call('import:text', req),
  cancelJob: (jobId: string) => call('jobs:cancel', { jobId }),
  getImportTypeMap: () => call('import:getTypeMap', {}),
  // One rule a line reads as well as ';'-separated rules.
  setImportTypeMap: (rules: string) => call('import:setTypeMap', { rules: rules.split('\n').map((l) => l.trim()).filter(Boolean).join(';') }),
  exportCorpus: (req: RequestOf<'export:write'>) => call('export:write', req),

  // Models in the loop
  engineInfo: () => call('engine:info', {}),
  listModels: () => call('models:list', {}),
  chooseModelFolder: () => call('dialog:openModelFolder', {}),
  importModel: (req: RequestOf<'models:import'>) => call('models:import', req),
  setActiveModel: (id: number) => call('models:setActive', { id }),
  deleteModel: (id: number) => call('models:delete', { id }),
  trainModel: (req: RequestOf<'models:train'>) => call('models:train', req),
  chooseWordVectors: () => call('dialog:openWordVectors', {}),
  adaptModel: (req: RequestOf<'models:adapt'>) => call('models:adapt', req),
  tag: (req: RequestOf<'tag:run'>) => call('tag:run', req),
  acceptSuggestions: (ids: number[]) => call('suggestions:accept', { ids }),
  rejectSuggestions: (ids: number[]) => call('suggestions:reject', { ids }),
  acceptAbove: (threshold: number, documentId?: number) =>
    call('suggestions:acceptAbove', { threshold, ...(documentId !== undefined ? { documentId } : {}) }),
  reviewQueue: (limit?: number) => call('review:queue', limit !== undefined ? { limit } : {}),
  learningState: () => call('learning:get', {}),
  setLearning: (req: RequestOf<'learning:set'>) => call('learning:set', req),
  retrain: (req: RequestOf<'retrain:start'>) => call('retrain:start', req),
  decideRetrain: (candidateId: number, keep: boolean) => call('retrain:decide', { candidateId, keep }),
  distill: (req: RequestOf<'distill:start'>) => call('distill:start', req),
  distillPlan: (teacherIds: number[]) => call('distill:plan', { teacherIds }),
  compare: (req: RequestOf<'compare:run'>) => call('compare:run', req),
}

export function newJobId(): string {
  const c = globalThis.crypto
  if (c && typeof c.randomUUID === 'function') return c.randomUUID()
  return `job-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`
}
