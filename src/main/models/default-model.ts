// The default model that ships with the app (core/model/default-model.ts says where it is
// installed): a workspace without a model of its own gets a copy of it, registered as
// "Default model (<its types>)" and active, so "Tag all" works right after the first import.
//
// Decided once per workspace and remembered there (setting 'defaultModel'): installed, or
// declined because the workspace already had a model. So a default model the user deleted never
// comes back, and a workspace with its own tagger never gets one. Nothing is remembered when no
// default model is installed (logged once) or the copy failed (logged; tried again next time the
// workspace opens).
//
// The copy is deliberate: the installation's folder is read-only, and the workspace's models are
// its own to retrain and delete. It runs as a host job like models:import, without blocking the
// request that opened the workspace; the window learns of the result from 'models:changed'.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { TRAIN_DEFAULTS } from '@shared/recipes'
import type { ModelInfo } from '@shared/ipc'
import { folderHeadLabels } from '../../core/model/word-tagger'
import { labelMapFromLabels } from '../../core/nlp/bio'
import type { ModelRecord, Workspace } from '../../core/store'
import { type ModelRuntime, savedFolderFields, toInfo } from './runtime'

/** Where the default model is (FASTBIONER_DEFAULT_MODEL, the installation, the checkout), or why not. */
import type { DefaultModelFinder } from '../handlers'

export type { DefaultModelFinder }

export const MODEL_CARD_FILE = 'MODEL_CARD.md'

/**
 * The entity types a checkpoint's heads tag, in head order, each once: heads ncbi (Disease),
 * bc5cdr (Chemical, Disease) and bc2gm (Gene) give ['Disease', 'Chemical', 'Gene'].
 */
export function headEntityTypes(dir: string): string[] {
  const types: string[] = []
  for (const labels of Object.values(folderHeadLabels(dir))) {
    for (const t of labelMapFromLabels(labels).types) if (!types.includes(t)) types.push(t)
  }
  return types
}

export const defaultModelName = (types: readonly string[]) => `Default model (${types.join(', ')})`

export function defaultModelInstaller(rt: ModelRuntime) {
  const { ctx, host, begin, reserve, discard, finishRun, writable } = rt
  let reportedMissing = false
  /** Installations in flight, by workspace file: a second request for the same one joins it. */
  const inFlight = new Map<string, Promise<ModelInfo | null>>()

  /**
   * Decides synchronously (declined, or nothing installed) before its first await, so a caller
   * sees those outcomes as soon as it returns; only the copy itself is asynchronous.
   */
  async function install(ws: Workspace, find: DefaultModelFinder): Promise<ModelInfo | null> {
    if (ws.setting('defaultModel')) return null
    // Ready models and retrain candidates: either means the user has a model of their own.
    const own = ws.listModels()[0]
    if (own) {
      if (ws.importing) await writable(ws, new AbortController().signal)
      if (!ws.isOpen) return null
      ws.setSetting('defaultModel', { decision: 'declined', reason: `the workspace already had a model ("${own.name}")` })
      return null
    }
    const { dir, searched } = find()
    if (!dir) {
      if (!reportedMissing) {
        reportedMissing = true
        console.warn(`[models] no default model is installed (looked in ${searched.join(', ')}): new workspaces start without a model`)
      }
      return null
    }
    // Reads config.json's heads: a folder that is not a checkpoint fails here, before any copy.
    const types = headEntityTypes(dir)
    if (types.length === 0) throw new Error(`${join(dir, 'config.json')}: the default model has no token-classification labels`)
    const name = ws.uniqueModelName(defaultModelName(types))
    const { signal, job, end } = begin(null, 'none', `Installing ${name}`)
    let rec: ModelRecord | null = null
    let runId: number | null = null
    try {
      // A document import holds the write lock for its whole transaction: wait for it.
      await writable(ws, signal)
      if (!ws.isOpen) return null
      rec = await reserve(ws, { name, kind: 'imported', shipped: true })
      job.models.add(rec.id)
      await writable(ws, signal)
      runId = job.runId = ws.startRun('import', rec.id, { source: dir, defaultModel: true })
      const r = await host().request('importModel', { source: dir, dest: rec.path, headLabels: null, seed: TRAIN_DEFAULTS.seed, keepFiles: true })
      await writable(ws, signal)
      const card = existsSync(join(rec.path, MODEL_CARD_FILE)) ? `; its model card is ${MODEL_CARD_FILE} in the model folder` : ''
      const model = ws.updateModel(rec.id, {
        status: 'ready',
        ...savedFolderFields(r.summary),
        trainedOn: null,
        trainingSummary: `The default model that ships with the app, copied from ${dir}${card}`,
        benchmark: r.benchmark,
      })
      ws.setSetting('defaultModel', { decision: 'installed', modelId: model.id, source: dir })
      finishRun(ws, runId, 'done', { notes: r.notes })
      const info = toInfo(model)
      ctx.emit('models:changed', { reason: 'default-model', model: info })
      return info
    } catch (e) {
      if (runId !== null) finishRun(ws, runId, 'failed', { error: (e as Error).message })
      if (rec) {
        await writable(ws, signal)
        await discard(ws, rec)
      }
      throw e
    } finally {
      end()
    }
  }

  /**
   * Installs the default model into the open workspace when it needs one (see the file comment).
   * Never rejects: a failure is logged and the workspace stays as it was. Resolves with the
   * installed model, or null when none was installed.
   */
  return function installDefaultModel(): Promise<ModelInfo | null> {
    const find = ctx.findDefaultModel
    if (!find) return Promise.resolve(null)
    let ws: Workspace
    try {
      ws = rt.workspace()
    } catch (e) {
      console.error(`[models] default model: cannot read the workspace: ${(e as Error).message}`)
      return Promise.resolve(null)
    }
    const running = inFlight.get(ws.path)
    if (running) return running
    const p = install(ws, find)
      .catch((e: unknown) => {
        console.error(`[models] the default model was not installed into ${ws.path}: ${(e as Error).message}`)
        return null
      })
      .finally(() => inFlight.delete(ws.path))
    inFlight.set(ws.path, p)
    return p
  }
}
