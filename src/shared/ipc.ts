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
} from './model'
import { CORPUS_FORMATS, REVIEW_STATUSES } from './model'

const corpusFormat = z.enum(CORPUS_FORMATS as [CorpusFormat, ...CorpusFormat[]])
const reviewStatus = z.enum(REVIEW_STATUSES as [ReviewStatus, ...ReviewStatus[]])
const id = z.number().int().positive()
const entityType = z.string().trim().min(1).max(64)
const jobId = z.string().min(1).max(64)

export interface WorkspaceInfo {
  path: string
  documentCount: number
  entityTypes: string[]
  user: string
}

export interface DocumentListResult {
  documents: DocumentSummary[]
  total: number
  counts: { byStatus: Record<ReviewStatus, number>; byType: Record<string, number> }
}

export interface FileImportResult {
  file: string
  ok: boolean
  imported: number
  /** Documents skipped because their id already exists in the file or the workspace. */
  duplicates: string[]
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

export const contract = {
  'workspace:info': { request: z.object({}).strict() },
  'workspace:open': { request: z.object({ path: z.string().min(1).optional() }).strict() },

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

  'annotations:create': {
    request: z
      .object({
        documentId: id,
        start: z.number().int().min(0),
        end: z.number().int().min(1),
        type: entityType,
        conceptId: z.string().max(200).nullable().optional(),
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
      })
      .strict(),
  },
  'annotations:delete': { request: z.object({ id }).strict() },

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

  'export:write': {
    request: z
      .object({ path: z.string().min(1), format: corpusFormat, documentIds: z.array(id).optional() })
      .strict(),
  },
} as const

export interface ContractResponses {
  'workspace:info': WorkspaceInfo
  'workspace:open': WorkspaceInfo
  'documents:list': DocumentListResult
  'documents:get': DocumentDetail
  'documents:setStatus': DocumentSummary
  'documents:neighbor': { id: number | null }
  'documents:history': Revision[]
  'annotations:create': Annotation
  'annotations:update': Annotation
  'annotations:delete': { id: number }
  'dialog:openCorpusFiles': { paths: string[] }
  'dialog:saveExport': { path: string | null }
  'import:files': ImportResult
  'import:text': ImportResult
  'jobs:cancel': { cancelled: boolean }
  'export:write': ExportResult
}

export type Channel = keyof typeof contract
export type RequestOf<C extends Channel> = z.input<(typeof contract)[C]['request']>
export type ResponseOf<C extends Channel> = ContractResponses[C]
export const CHANNELS = Object.keys(contract) as Channel[]

/** Events pushed from main to the renderer. */
export interface EventPayloads {
  'job:progress': { jobId: string; done: number; total: number; message: string }
}
export type EventName = keyof EventPayloads
export const EVENT_NAMES: EventName[] = ['job:progress']

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
