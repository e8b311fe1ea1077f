// The handler table: one async function per contract channel, built from core/. Electron registers it
// with ipcMain.handle; the e2e harness binds the same table into Chromium. Never imports 'electron'.
import { closeSync, existsSync, openSync, readSync, realpathSync } from 'node:fs'
import { mkdir, stat } from 'node:fs/promises'
import { basename, dirname, isAbsolute, relative, resolve } from 'node:path'
import { z } from 'zod'
import {
  contract,
  parseRequest,
  type Channel,
  type FileImportResult,
  type ImportResult,
  type IpcErrorShape,
  type ResponseOf,
  type WorkspaceInfo,
} from '@shared/ipc'
import type { CorpusDocument, CorpusFormat, CorpusIssue } from '@shared/domain'
import { mapMentionTypes, oneFilePerBratPair, parseCorpusText, parseTypeMap, readCorpusFile, WRITABLE_FORMATS, writeCorpus } from '../core/corpus'
import { CorpusError } from '../core/corpus/errors'
import { cancelJob, finishJob, runningJobs, startJob, throttle } from './jobs'
import { writeFileAtomic } from '../core/fs/atomic'
import { isStoreError, LOCK_SUFFIX, StoreError, type Workspace } from '../core/store'
import { createModelHandlers } from './models'
import type { DispatchResult, HandlerContext, Handlers, RequestPayload } from './handlers'

export type { DispatchResult, HandlerContext, Handlers, RequestPayload } from './handlers'

/** Formats written as one file per document (brat: a .txt/.ann pair): the export path is a folder. */
export const FOLDER_FORMATS: readonly CorpusFormat[] = ['brat', 'text']

interface ParsedCorpus {
  documents: CorpusDocument[]
  issues: CorpusIssue[]
}

export function createHandlers(ctx: HandlerContext): Handlers {
  // Grants by purpose: what a dialog returned may be used only for what that dialog was for, and
  // once: 'read' (open dialogs) is spent by the request that reads the file (an import, a retrain's
  // extra corpus, a model import), 'write' (the save dialog) by one export, 'workspace' (the
  // chooser) by one open. A renderer that was taken over cannot reuse an old answer.
  const grants = new Map<string, Set<GrantUse>>()
  const grant = (paths: string[], use: GrantUse = 'read'): string[] => {
    for (const p of paths) {
      const full = resolve(p)
      grants.set(full, (grants.get(full) ?? new Set()).add(use))
    }
    return paths
  }
  const requireGranted = (path: string, purpose: string, use: GrantUse = 'read'): string => {
    const full = resolve(path)
    if (ctx.restrictPathsToDialogs && !grants.get(full)?.has(use)) {
      throw new StoreError('invalid_request', `${purpose} refused: ${full} was not chosen in ${DIALOG_OF[use]}`)
    }
    return full
  }
  /** The paths of one request that reads them, each checked and then spent. */
  const takeReadGrants = (paths: readonly string[], purpose: string): string[] => {
    const full = [...new Set(paths.map((p) => requireGranted(p, purpose)))]
    for (const f of full) spend(f, 'read')
    return full
  }
  const spend = (full: string, use: GrantUse): void => {
    grants.get(full)?.delete(use)
  }
  /** The open workspace, or null when none could be opened (the window shows the chooser). */
  const currentWorkspace = (): Workspace | null => (ctx.workspaceProblem?.() ? null : ctx.workspace())
  const info = (ws: Workspace): WorkspaceInfo => ({ ...ws.info(), user: ctx.user })

  /**
   * Imports each source in turn, all-or-nothing per source: a bad source is reported and the next
   * one still imports; cancelling rolls back the source in flight and skips the rest.
   */
  async function runImport(
    jobId: string,
    sources: Array<{
      label: string
      sourceFile: string
      load: (onProgress: (done: number, total: number) => void) => ParsedCorpus | Promise<ParsedCorpus>
    }>,
  ): Promise<ImportResult> {
    const controller = startJob(jobId)
    const { signal } = controller
    const progress = throttle((done: number, total: number, message: string) =>
      ctx.emit('job:progress', { jobId, done, total, message }),
    )
    const files: FileImportResult[] = []
    let cancelled = false
    let lastTotal = 0
    const typeMap = parseTypeMap(ctx.workspace().setting('importTypeMap') ?? '')
    try {
      for (const [i, src] of sources.entries()) {
        if (signal.aborted) {
          cancelled = true
          break
        }
        const name = basename(src.label)
        const which = sources.length > 1 ? ` (file ${i + 1} of ${sources.length})` : ''
        progress(0, 0, `Reading ${name}${which}`)
        let parsed: ParsedCorpus
        try {
          parsed = await src.load((done, total) => progress(done, total, `Reading ${name}${which}`))
        } catch (e) {
          files.push(failed(src.label, e))
          continue
        }
        if (parsed.issues.some((x) => x.severity === 'error')) {
          files.push({ file: src.label, ok: false, imported: 0, duplicates: [], conflicts: [], reimported: [], issues: parsed.issues })
          continue
        }
        if (typeMap.size > 0) parsed = { ...parsed, documents: mapMentionTypes(parsed.documents, typeMap) }
        const total = parsed.documents.length
        lastTotal = total
        try {
          const r = await ctx.workspace().importDocuments(parsed.documents, src.sourceFile, {
            signal,
            onProgress: (done) => progress(done, total, `Importing ${name}${which}: ${done} of ${total} documents`),
          })
          progress.flush()
          files.push({ file: src.label, ok: true, imported: r.imported, duplicates: r.duplicates, conflicts: r.conflicts, reimported: r.reimported, issues: parsed.issues })
        } catch (e) {
          progress.flush()
          if (isStoreError(e) && e.code === 'cancelled') {
            cancelled = true
            files.push({
              file: src.label,
              ok: false,
              imported: 0,
              duplicates: [],
              conflicts: [],
              reimported: [],
              issues: [
                ...parsed.issues,
                { severity: 'warning', file: src.label, message: 'Import cancelled: nothing from this file was imported' },
              ],
            })
            break
          }
          files.push(failed(src.label, e, parsed.issues))
        }
      }
    } finally {
      finishJob(jobId)
    }
    progress.flush()
    ctx.emit('job:progress', {
      jobId,
      done: cancelled ? 0 : lastTotal,
      total: lastTotal,
      message: cancelled ? 'Import cancelled' : 'Import finished',
    })
    return { cancelled, files }
  }

  const models = createModelHandlers(ctx, { grant, takeReadGrants })
  // The shell opened its first workspace (or failed to: the window shows the chooser) before building this table.
  if (!ctx.workspaceProblem?.()) void models.installDefaultModel()

  const table: Handlers = {
    ...models.handlers,
    async 'workspace:info'() {
      return info(ctx.workspace())
    },
    async 'workspace:status'() {
      const problem = ctx.workspaceProblem?.() ?? null
      return { workspace: problem ? null : info(ctx.workspace()), problem }
    },
    async 'workspace:open'(req) {
      const path = req.path === undefined ? undefined : requireGranted(req.path, 'Opening a workspace', 'workspace')
      // Closing the workspace under a running job would cancel an import or lose a model's results.
      const running = runningJobs()
      if (running.length || currentWorkspace()?.importing) {
        throw new StoreError('conflict', 'A job is still running (import, training, tagging…); wait for it to finish or cancel it first')
      }
      if (path !== undefined && req.create && existsSync(path)) {
        throw new StoreError('conflict', `${path} already exists: open it with "Open workspace…" or choose a new name`)
      }
      if (path !== undefined && req.create === false && !existsSync(path)) {
        throw new StoreError('not_found', `${path} does not exist: create it with "New workspace…"`)
      }
      const ws = ctx.openWorkspace(path, { takeOver: req.takeOver })
      if (path !== undefined) spend(path, 'workspace')
      void models.installDefaultModel()
      return info(ws)
    },
    async 'dialog:chooseWorkspace'(req) {
      if (!ctx.dialogs.chooseWorkspace) throw new Error('This shell has no workspace dialog')
      const path = await ctx.dialogs.chooseWorkspace(req.purpose)
      if (path) grant([path], 'workspace')
      return { path }
    },

    async 'documents:list'(req) {
      return ctx.workspace().listDocuments(req)
    },
    async 'documents:get'(req) {
      return ctx.workspace().getDocument(req.id)
    },
    async 'documents:setStatus'(req) {
      return ctx.workspace().setStatus(req.id, req.status)
    },
    async 'documents:neighbor'(req) {
      return { id: ctx.workspace().neighbor(req.id, req.direction, req.unreviewedOnly) }
    },
    async 'documents:history'(req) {
      return ctx.workspace().history(req.id)
    },
    async 'documents:deletePreview'(req) {
      return ctx.workspace().deletionImpact(req.ids)
    },
    async 'documents:delete'(req) {
      return ctx.workspace().deleteDocuments(req.ids)
    },
    async 'documents:restore'(req) {
      return { restored: ctx.workspace().restoreDocuments(req.ids) }
    },
    async 'documents:listDeleted'(req) {
      return ctx.workspace().deletedDocuments(req.limit)
    },

    async 'annotations:create'(req) {
      return ctx.workspace().createAnnotation(req)
    },
    async 'annotations:update'(req) {
      return ctx.workspace().updateAnnotation(req)
    },
    async 'annotations:delete'(req) {
      return ctx.workspace().deleteAnnotation(req.id)
    },
    async 'annotations:restore'(req) {
      return ctx.workspace().restoreRevision(req.revisionId)
    },

    async 'dialog:openCorpusFiles'() {
      return { paths: grant(await ctx.dialogs.openCorpusFiles()) }
    },
    async 'dialog:saveExport'(req) {
      const path = await ctx.dialogs.saveExport(req.format)
      if (path) grant([path], 'write')
      return { path }
    },

    async 'import:files'(req) {
      return runImport(
        req.jobId,
        oneFilePerBratPair(takeReadGrants(req.paths, 'Import')).map((full) => {
          return {
            label: full,
            sourceFile: full,
            load: (onProgress: (done: number, total: number) => void) => readCorpusFile(full, req.format, { onProgress }),
          }
        }),
      )
    },
    async 'import:text'(req) {
      return runImport(req.jobId, [
        {
          label: req.name,
          sourceFile: req.name,
          load: (onProgress) => parseCorpusText(req.content, req.name, req.format, { onProgress }),
        },
      ])
    },
    async 'import:getTypeMap'() {
      const rules = ctx.workspace().setting('importTypeMap') ?? ''
      return { rules, map: Object.fromEntries(parseTypeMap(rules)) }
    },
    async 'import:setTypeMap'(req) {
      let map: Map<string, string>
      try {
        map = parseTypeMap(req.rules)
      } catch (e) {
        throw new StoreError('invalid_request', (e as Error).message)
      }
      const rules = req.rules.trim()
      ctx.workspace().setSetting('importTypeMap', rules)
      return { rules, map: Object.fromEntries(map) }
    },
    async 'jobs:cancel'(req) {
      return { cancelled: cancelJob(req.jobId) }
    },

    async 'export:write'(req) {
      if (!WRITABLE_FORMATS.includes(req.format)) {
        throw new StoreError('invalid_request', `${req.format} can be read but not written; choose ${WRITABLE_FORMATS.join(', ')}`)
      }
      const docs = ctx.workspace().exportDocuments(req.documentIds)
      const mentions = docs.reduce((n, d) => n + d.mentions.length, 0)
      const { files } = await writeCorpus(docs, req.format)
      const target = requireGranted(req.path, 'Export', 'write')
      const protectedFiles = protectedTargets(ctx.workspace())
      refuseProtected(target, protectedFiles)
      if (FOLDER_FORMATS.includes(req.format)) {
        const st = await stat(target).catch(() => null)
        if (st && !st.isDirectory()) {
          throw new StoreError('invalid_request', `${target} exists and is not a folder; ${req.format} exports a folder of files`)
        }
        await mkdir(target, { recursive: true })
        const written: string[] = []
        for (const f of files) {
          // Names derive from document ids, which come from imported files: keep them inside the folder.
          const p = resolve(target, f.name)
          const rel = relative(target, p)
          if (!rel || rel.startsWith('..') || isAbsolute(rel)) {
            throw new StoreError('invalid_request', `Refusing to write "${f.name}" outside ${target}`)
          }
          refuseProtected(p, protectedFiles)
          await mkdir(dirname(p), { recursive: true })
          writeFileAtomic(p, [f.content])
          written.push(p)
        }
        spend(target, 'write')
        return { path: target, documents: docs.length, mentions, files: written }
      }
      if (files.length !== 1) throw new Error(`The ${req.format} writer produced ${files.length} files; expected one`)
      await mkdir(dirname(target), { recursive: true })
      writeFileAtomic(target, [files[0]!.content])
      spend(target, 'write')
      return { path: target, documents: docs.length, mentions, files: [target] }
    },
  }
  // Auto-improve counts reviewed documents: after each request that can change the count, it checks.
  for (const channel of REVIEW_CHANNELS) {
    const handler = table[channel] as (req: never) => Promise<unknown>
    ;(table as Record<Channel, unknown>)[channel] = async (req: never) => {
      const out = await handler(req)
      models.reviewChanged()
      return out
    }
  }
  return table
}

/**
 * Requests after which the reviewed count may have changed: a document became reviewed (done, or
 * in progress on its first edit), or reviewed documents were deleted or restored.
 */
const REVIEW_CHANNELS = [
  'documents:setStatus',
  'documents:delete',
  'documents:restore',
  'annotations:create',
  'annotations:update',
  'annotations:delete',
  'annotations:restore',
  'suggestions:accept',
  'suggestions:reject',
  'suggestions:acceptAbove',
] as const satisfies readonly Channel[]

type GrantUse = 'read' | 'write' | 'workspace'

const DIALOG_OF: Record<GrantUse, string> = {
  read: 'a file dialog (each answer is good for one use: choose the file again)',
  write: 'a save dialog for this export (each save dialog answer is good for one export)',
  workspace: 'the workspace dialog',
}

/** Same file? Case-insensitive where the usual file systems are (macOS, Windows). */
const samePathKey = (p: string): string => (process.platform === 'darwin' || process.platform === 'win32' ? p.toLowerCase() : p)

/** The path and, when it exists, where its links lead. */
function pathKeys(p: string): string[] {
  const keys = [samePathKey(resolve(p))]
  try {
    keys.push(samePathKey(realpathSync.native(p)))
  } catch {
    // does not exist (yet): nothing to follow
  }
  return keys
}

/**
 * Files an export must never write: the open workspace's database with its journal, WAL, shared
 * memory and lock files, and every file its documents were imported from; each mapped to why.
 */
function protectedTargets(ws: Workspace): Map<string, string> {
  const out = new Map<string, string>()
  for (const suffix of ['', '-wal', '-shm', '-journal', LOCK_SUFFIX]) {
    for (const k of pathKeys(ws.path + suffix)) out.set(k, "is the open workspace's database (or one of its files)")
  }
  for (const f of ws.sourceFiles()) {
    if (isAbsolute(f)) for (const k of pathKeys(f)) out.set(k, 'is a file documents were imported from')
  }
  return out
}

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1')

function refuseProtected(target: string, protectedFiles: Map<string, string>): void {
  for (const k of pathKeys(target)) {
    const why = protectedFiles.get(k)
    if (why) throw new StoreError('invalid_request', `Export refused: ${target} ${why}; choose another file`)
  }
  // Any SQLite database (another workspace): never replaced by an export.
  let head: Buffer | null = null
  try {
    const fd = openSync(target, 'r')
    try {
      head = Buffer.alloc(SQLITE_MAGIC.length)
      if (readSync(fd, head, 0, head.length, 0) < head.length) head = null
    } finally {
      closeSync(fd)
    }
  } catch {
    // missing or unreadable (a folder, a new name): not a database
  }
  if (head?.equals(SQLITE_MAGIC)) throw new StoreError('invalid_request', `Export refused: ${target} is an SQLite database (a workspace?); choose another file`)
}

/** Validates `payload` against the contract, runs the handler, and turns any failure into data. */
export async function dispatch<C extends Channel>(
  handlers: Handlers,
  channel: C,
  payload: unknown,
): Promise<DispatchResult<ResponseOf<C>>> {
  try {
    if (typeof channel !== 'string' || !Object.hasOwn(contract, channel)) {
      throw new StoreError('invalid_request', `Unknown channel "${String(channel)}"`)
    }
    const req = parseRequest(channel, payload)
    const handler = handlers[channel] as (r: RequestPayload<C>) => Promise<ResponseOf<C>>
    return { ok: true, value: await handler(req) }
  } catch (e) {
    return { ok: false, error: toIpcError(e, channel) }
  }
}

export function toIpcError(e: unknown, channel?: string): IpcErrorShape {
  if (e instanceof z.ZodError || (e instanceof Error && e.name === 'ZodError' && 'issues' in e)) {
    const issues = (e as z.ZodError).issues
    const detail = issues.map((i) => `${i.path.length ? i.path.join('.') : 'request'}: ${i.message}`).join('; ')
    return { code: 'invalid_request', message: `Invalid ${channel ?? ''} request: ${detail}`.replace('  ', ' ') }
  }
  if (isCorpusError(e)) {
    return { code: 'corpus_error', message: e.message, issues: e.issues.map((i) => ({ ...i })) }
  }
  if (isStoreError(e)) return { code: e.code, message: e.message }
  if (e instanceof Error && (e as { code?: unknown }).code === 'SQLITE_BUSY') {
    return { code: 'conflict', message: 'The workspace is busy (another program is writing to it); try again' }
  }
  // Damage after the workspace opened (quick_check found none then): say what it is and what to do.
  if (e instanceof Error && /^SQLITE_(CORRUPT|NOTADB)/.test(String((e as { code?: unknown }).code))) {
    console.error(`[api] ${channel ?? ''} failed:`, e)
    return { code: 'internal', message: `The workspace file is damaged (${e.message}): restore a backup of it or open another workspace` }
  }
  const message = e instanceof Error ? e.message : String(e)
  console.error(`[api] ${channel ?? ''} failed:`, e)
  return { code: 'internal', message: message || 'Internal error' }
}

function isCorpusError(e: unknown): e is Error & { issues: CorpusIssue[] } {
  return (
    e instanceof CorpusError ||
    (e instanceof Error && e.name === 'CorpusError' && Array.isArray((e as { issues?: unknown }).issues))
  )
}

/** A source that could not be imported, with the reason as issues the user can act on. */
function failed(file: string, e: unknown, earlier: CorpusIssue[] = []): FileImportResult {
  let issues: CorpusIssue[]
  if (isCorpusError(e)) issues = e.issues.map((i) => ({ ...i }))
  else if (e instanceof Error && (e as NodeJS.ErrnoException).code === 'ENOENT') {
    issues = [{ severity: 'error', file, message: 'File not found' }]
  } else issues = [{ severity: 'error', file, message: e instanceof Error ? e.message : String(e) }]
  if (issues.length === 0) issues = [{ severity: 'error', file, message: e instanceof Error ? e.message : String(e) }]
  return { file, ok: false, imported: 0, duplicates: [], conflicts: [], reimported: [], issues: [...earlier, ...issues] }
}
