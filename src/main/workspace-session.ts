// The one open workspace of a shell (Electron's src/main/index.ts, the e2e harness, integration
// tests): opened at start-up without ever throwing — a workspace that cannot be opened (locked by
// another instance, corrupt, newer schema, missing) leaves no workspace and a WorkspaceProblem that
// the window shows in the workspace chooser — and switched by workspace:open. Electron-free.
import { resolve } from 'node:path'
import type { WorkspaceProblem } from '@shared/ipc'
import { isStoreError, StoreError, Workspace, WorkspaceOpenError } from '../core/store'

/** The problem to show for an error of Workspace.open. */
export function workspaceProblem(path: string, e: unknown): WorkspaceProblem {
  const message = e instanceof Error ? e.message : String(e)
  if (e instanceof WorkspaceOpenError) return { path, reason: e.reason, message, canTakeOver: e.canTakeOver }
  return { path, reason: 'other', message, canTakeOver: false }
}

export class WorkspaceSession {
  private ws: Workspace | null = null
  private failure: WorkspaceProblem | null = null

  private constructor(
    /** The start-up workspace, opened again by workspace:open without a path. */
    readonly defaultPath: string,
    readonly user: string,
  ) {}

  /** Opens the start-up workspace; a failure is kept as `problem` (and logged), never thrown. */
  static start(defaultPath: string, user: string): WorkspaceSession {
    const s = new WorkspaceSession(defaultPath, user)
    try {
      s.open()
    } catch (e) {
      console.error(`[workspace] ${(e as Error).message}`)
    }
    return s
  }

  /** Why no workspace is open; null while one is. */
  get problem(): WorkspaceProblem | null {
    return this.ws ? null : this.failure
  }

  /** The open workspace; a StoreError saying why when none is. */
  current(): Workspace {
    if (this.ws) return this.ws
    throw new StoreError('not_found', `No workspace is open: ${this.failure?.message ?? 'none was opened'}`)
  }

  /**
   * Opens `path` (default: the start-up workspace) and then closes the previous one, which stays
   * open when the new one cannot be opened. Opening the open workspace again closes it first
   * (it holds the lock).
   */
  open(path?: string, opts: { takeOver?: boolean } = {}): Workspace {
    const file = resolve(path ?? this.defaultPath)
    if (this.ws && this.ws.path === file) {
      this.ws.close()
      this.ws = null
    }
    let next: Workspace
    try {
      next = Workspace.open(file, { user: this.user, takeOver: opts.takeOver })
    } catch (e) {
      if (!this.ws) this.failure = workspaceProblem(file, e)
      throw isStoreError(e) ? e : new StoreError('invalid_request', `Cannot open workspace ${file}: ${(e as Error).message}`)
    }
    this.ws?.close()
    this.ws = next
    this.failure = null
    return next
  }

  /** Closes the open workspace (releasing its lock). */
  close(): void {
    this.ws?.close()
  }
}
