// The types of the handler table, apart from its implementation (api.ts), so that the handler
// files under models/ and the table that assembles them do not import each other.
import type { z } from 'zod'
import type { Channel, EventName, EventPayloads, IpcErrorShape, ResponseOf, WorkspaceProblem, contract } from '@shared/ipc'
import type { CorpusFormat } from '@shared/domain'
import type { Workspace } from '../core/store'
import type { ModelHost } from '../host/client'
import type { HubFetch } from '../core/hub/http'

/** Finds the default model that ships with the app (core/model/default-model.ts findDefaultModel). */
export type DefaultModelFinder = () => { dir: string | null; searched: string[] }

export interface HandlerContext {
  /**
   * The open workspace (the shell keeps at most one open: src/main/workspace-session.ts); throws a
   * StoreError when none is (see workspaceProblem).
   */
  workspace: () => Workspace
  /**
   * Opens `path` (default: defaultWorkspacePath), closes the previous one, and returns it.
   * takeOver: from an instance on another host that holds its lock.
   */
  openWorkspace(path?: string, opts?: { takeOver?: boolean }): Workspace
  /** Why no workspace is open (the start-up one failed to open); null or absent while one is. */
  workspaceProblem?(): WorkspaceProblem | null
  emit<E extends EventName>(event: E, payload: EventPayloads[E]): void
  dialogs: {
    openCorpusFiles(): Promise<string[]>
    saveExport(format: CorpusFormat): Promise<string | null>
    /** Chooses a workspace file, an existing one or a new one (dialog:chooseWorkspace); null when cancelled. */
    chooseWorkspace?(purpose: 'open' | 'create'): Promise<string | null>
    /** Chooses an HF checkpoint folder (dialog:openModelFolder); null when cancelled. */
    openModelFolder?(): Promise<string | null>
    /** Chooses a word-vector file (dialog:openWordVectors); null when cancelled. */
    openWordVectors?(): Promise<string | null>
  }
  /**
   * Where model work runs (tagging, training, retraining, distillation, comparison): a separate
   * process. Electron: utilityProcess (src/main/index.ts); plain Node (tests, the e2e harness):
   * `createNodeModelHost()` from src/host/node.ts. Without it the model channels fail.
   */
  modelHost?: ModelHost
  /**
   * Where the default model that ships with the app is (findDefaultModel from
   * core/model/default-model.ts). When set, the workspace open when the table is built and every
   * one opened later get a copy of it if they have no model (src/main/models/default-model.ts).
   * Unset (most tests): workspaces start without a model.
   */
  findDefaultModel?: DefaultModelFinder
  /**
   * The Hugging Face Hub and cache for models:hubPlan / hubDownload / cached / importCached: the
   * environment read for HF_ENDPOINT, HF_TOKEN, HF_HUB_CACHE, HF_HOME (default process.env), the
   * home folder (default the user's), and the transport (the Electron shell passes one over its
   * `net`, which honours the system's proxy settings; default: undici with HTTPS_PROXY). Set in
   * main only: a request never names an endpoint, a token or a folder.
   */
  hub?: { env?: NodeJS.ProcessEnv; home?: string; fetch?: HubFetch }
  user: string
  defaultWorkspacePath: string
  /**
   * When true (the Electron shell), file paths in requests must have come back from this session's
   * own dialogs, so a compromised renderer cannot read or overwrite arbitrary files.
   */
  restrictPathsToDialogs?: boolean
}

/** A request after validation (zod output: defaults applied, strings trimmed). */
export type RequestPayload<C extends Channel> = z.output<(typeof contract)[C]['request']>

export type Handlers = { [C in Channel]: (req: RequestPayload<C>) => Promise<ResponseOf<C>> }

/** What crosses IPC / Playwright bindings: plain data, never a thrown Error. */
export type DispatchResult<T> = { ok: true; value: T } | { ok: false; error: IpcErrorShape }

