// The model registry channels: engine info, list, import a checkpoint folder, activate, delete.
import { basename } from 'node:path'
import { TRAIN_DEFAULTS } from '@shared/recipes'
import type { ModelImportResult } from '@shared/ipc'
import { buildLabelMap } from '../../core/nlp/bio'
import { StoreError, type ModelRecord } from '../../core/store'
import type { Handlers } from '../handlers'
import { type ModelRuntime, savedFolderFields, toInfo } from './runtime'

export function registryHandlers(rt: ModelRuntime): Pick<Handlers, 'engine:info' | 'models:list' | 'dialog:openModelFolder' | 'models:import' | 'models:setActive' | 'models:delete'> {
  const { ctx, deps, host, workspace, removeFolder, releaseHostFiles, begin, isInUse, reserve, abandonJob, finishRun } = rt
  return {
    async 'engine:info'() {
      const ws = workspace()
      // Loads (and may export) the active model: a minute for a large one, never forever.
      return host().request('engineInfo', { modelDir: ws.activeModel()?.path ?? null }, { timeoutMs: 120_000 })
    },

    async 'models:list'() {
      return workspace().listModels().map(toInfo)
    },

    async 'dialog:openModelFolder'() {
      if (!ctx.dialogs.openModelFolder) throw new Error('This shell has no model folder dialog')
      const path = await ctx.dialogs.openModelFolder()
      if (path) deps.grant([path])
      return { path }
    },

    async 'models:import'(req): Promise<ModelImportResult> {
      const [source] = deps.takeReadGrants([req.path], 'Importing a model')
      const ws = workspace()
      const name = req.name ?? ws.uniqueModelName(basename(source) || 'imported model')
      const types = ws.entityTypes()
      // Registered before the first await, so jobs:cancel finds it at once; with a job id the
      // user can cancel it (and a stuck read is stopped that way), without one the host's watchdog stops it.
      const { signal, job, end } = begin(req.jobId ?? null, 'none', `Importing ${name}`)
      let rec: ModelRecord | null = null
      let runId: number | null = null
      try {
        rec = await reserve(ws, { name, kind: 'imported' })
        job.models.add(rec.id)
        runId = job.runId = ws.startRun('import', rec.id, { source })
        const r = await host().request(
          'importModel',
          { source, dest: rec.path, headLabels: types.length ? buildLabelMap(types).labels : null, seed: TRAIN_DEFAULTS.seed },
          req.jobId ? { signal } : {},
        )
        const model = ws.updateModel(rec.id, {
          status: 'ready',
          kind: r.freshHead ? 'teacher' : 'imported',
          ...savedFolderFields(r.summary),
          trainedOn: null,
          trainingSummary: r.freshHead
            ? `Imported from ${source}: pre-trained encoder with a new, untrained head for ${r.summary.entityTypes.join(', ')}`
            : `Imported from ${source}`,
        })
        finishRun(ws, runId, 'done', { notes: r.notes })
        return { ...toInfo(model), notes: r.notes }
      } catch (e) {
        if (await abandonJob(ws, runId, rec, e)) throw new StoreError('cancelled', `Import of ${source} cancelled: no model was added`)
        throw e
      } finally {
        end()
      }
    },

    async 'models:setActive'(req) {
      return toInfo(workspace().setActiveModel(req.id))
    },

    async 'models:delete'(req) {
      const ws = workspace()
      const rec = ws.getModel(req.id)
      if (isInUse(rec.id)) {
        throw new StoreError('conflict', `Model "${rec.name}" is in use by a running job; wait for it to finish or cancel it first`)
      }
      if (rec.status === 'training') throw new StoreError('conflict', `Model "${rec.name}" is still being written`)
      await releaseHostFiles(rec.path)
      ws.deleteModel(rec.id)
      await removeFolder(ws, rec.path)
      return { id: rec.id }
    },
  }
}
