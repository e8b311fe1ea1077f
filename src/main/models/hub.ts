// Models from the Hugging Face ecosystem (issue 28): the plan and download of a Hub model through
// core/hub (the code `fastbioner get` runs), then the import of its snapshot by the registry's own
// models:import; and the models already in the Hugging Face cache on this computer (offline).
// The endpoint, the token and the cache folder come from main (ctx.hub, else process.env), never
// from the renderer; the renderer names a repo id, checked by the contract and again by core/hub.
import { StoreError } from '../../core/store'
import { formatBytes, freeBytes, getModel, HubError, type HubPlan } from '../../core/hub/download'
import { listCachedModels } from '../../core/model/hf-cache'
import type { CachedModelInfo, HubPlanInfo, ModelImportResult } from '@shared/ipc'
import type { Handlers } from '../handlers'
import { throttle } from '../jobs'
import type { ModelRuntime } from './runtime'

type HubChannel = 'models:hubPlan' | 'models:hubDownload' | 'models:cached' | 'models:importCached'

const planInfo = (p: HubPlan): HubPlanInfo => ({
  repoId: p.repoId,
  revision: p.revision,
  commit: p.commit,
  endpoint: p.endpoint,
  cacheDir: p.hub,
  files: p.files.map((f) => ({ name: f.name, size: f.size, state: f.state, partialBytes: f.partialBytes })),
  totalBytes: p.totalBytes,
  downloadBytes: p.downloadBytes,
  freeBytes: freeBytes(p.hub),
})

/** The model's name in the registry: the repo's name (dmis-lab/biobert-v1.1 → biobert-v1.1). */
const nameOf = (repoId: string) => repoId.split('/').pop() || repoId

/**
 * A HubError as the app says it: the CLI's wording ("run the command again", "--cache-dir") made
 * the app's, and a code the renderer can tell apart (not found, bad request, cancelled).
 */
function appError(e: HubError, endpoint: string, repoId: string): StoreError | HubError {
  if (e.kind === 'cancelled') return new StoreError('cancelled', 'Download cancelled: what has arrived is kept, and the next download of this model resumes it')
  if (e.kind === 'gated' || e.kind === 'auth') {
    const intro = e.kind === 'gated' ? `${repoId} is a gated model: the Hub asks you to accept its conditions first.` : `The Hub refused the token in HF_TOKEN for ${repoId}.`
    return new StoreError(
      'invalid_request',
      `${intro} Accept them at ${endpoint}/${repoId} while logged in, create a read token at ${endpoint}/settings/tokens, ` +
        'then quit FastBioNER and start it again with the environment variable HF_TOKEN set to that token.',
    )
  }
  const message = e.message
    .replace(/run the (same )?command again( to resume)?/g, 'download it again$2')
    .replace(/the same command resumes it/g, 'downloading it again resumes it')
    .replace(/; free some space or choose another place with --cache-dir/, '; free some space (or set HF_HUB_CACHE to a folder on another disk and restart FastBioNER)')
  if (e.kind === 'not-found') return new StoreError('not_found', message)
  if (e.kind === 'usage' || e.kind === 'not-a-model') return new StoreError('invalid_request', message)
  // The network, the disk, a corrupted file, the Hub's own trouble: no request of the person's was wrong.
  return new HubError(e.kind, message)
}

export function hubHandlers(rt: ModelRuntime, importModel: Handlers['models:import']): Pick<Handlers, HubChannel> {
  const { ctx, deps, workspace, begin } = rt
  const env = () => ctx.hub?.env ?? process.env
  const endpointOf = () => (env().HF_ENDPOINT || 'https://huggingface.co').replace(/\/+$/, '')
  const common = () => ({ env: env(), home: ctx.hub?.home, fetch: ctx.hub?.fetch })
  const cached = (): CachedModelInfo[] => listCachedModels(env(), ctx.hub?.home).map((m) => ({ ...m }))

  const run = async <T>(repoId: string, signal: AbortSignal, f: () => Promise<T>): Promise<T> => {
    try {
      return await f()
    } catch (e) {
      if (signal.aborted) throw new StoreError('cancelled', 'Download cancelled: what has arrived is kept, and the next download of this model resumes it')
      if (e instanceof HubError) throw appError(e, endpointOf(), repoId)
      throw e
    }
  }

  return {
    async 'models:hubPlan'(req) {
      const { signal, end } = begin(req.jobId ?? null, 'none', `Asking the Hub about ${req.repoId}`)
      try {
        return await run(req.repoId, signal, async () => {
          let plan: HubPlan | undefined
          const r = await getModel({ ...common(), repoId: req.repoId, revision: req.revision, signal, dryRun: true, onPlan: (p) => (plan = p) })
          // HF_HUB_OFFLINE or no network: core found the model in the cache, without a plan.
          if (!plan) throw new StoreError('conflict', `The Hub cannot be reached (or HF_HUB_OFFLINE is set); ${req.repoId} is already in the Hugging Face cache: import it from "Models on this computer" (${r.dir})`)
          return planInfo(plan)
        })
      } finally {
        end()
      }
    },

    async 'models:hubDownload'(req) {
      const { jobId, repoId } = req
      const { signal, end } = begin(jobId, 'none', `Downloading ${repoId}`)
      const progress = throttle((done: number, total: number, message: string) => ctx.emit('job:progress', { jobId, done, total, message }), 200)
      // The throttle keeps the newest suppressed event until the next call: on a slow or stalled
      // connection that call may not come for long, so the newest is delivered twice a second.
      const trailing = setInterval(() => progress.flush(), 500)
      let ended = false
      const finish = () => {
        if (!ended) end()
        ended = true
      }
      try {
        const got = await run(repoId, signal, () =>
          getModel({
            ...common(),
            repoId,
            revision: req.revision,
            signal,
            onPlan: (p) => progress(p.totalBytes - p.downloadBytes, p.totalBytes, `Downloading ${repoId}: ${formatBytes(p.downloadBytes)} to download`),
            onProgress: (p) =>
              progress(p.doneBytes, p.totalBytes, `Downloading ${repoId}: ${p.file} (${formatBytes(p.doneBytes)} of ${formatBytes(p.totalBytes)})`),
          }),
        ).catch((e: unknown) => {
          progress.flush()
          if (e instanceof StoreError && e.code === 'cancelled') return null
          throw e
        })
        progress.flush()
        if (!got) return { cancelled: true, repoId, commit: null, downloadedBytes: 0, snapshot: null, model: null }
        // The import is the registry's own job, under the same job id (so jobs:cancel still reaches it).
        finish()
        ctx.emit('job:progress', { jobId, done: 0, total: 0, message: `Importing ${repoId}` })
        deps.grant([got.dir])
        let model: ModelImportResult
        try {
          model = await importModel({ path: got.dir, name: req.name ?? workspace().uniqueModelName(nameOf(repoId)), jobId })
        } catch (e) {
          if (e instanceof StoreError && e.code === 'cancelled') return { cancelled: true, repoId, commit: got.commit, downloadedBytes: got.downloadedBytes, snapshot: got.dir, model: null }
          throw e
        }
        return { cancelled: false, repoId, commit: got.commit, downloadedBytes: got.downloadedBytes, snapshot: got.dir, model }
      } finally {
        clearInterval(trailing)
        finish()
      }
    },

    async 'models:cached'() {
      return cached()
    },

    async 'models:importCached'(req) {
      const found = cached().find((m) => m.repoId === req.repoId)
      if (!found) throw new StoreError('not_found', `${req.repoId} is not in the Hugging Face cache on this computer (or is not a BERT model this app reads)`)
      deps.grant([found.dir])
      return importModel({ path: found.dir, name: req.name ?? workspace().uniqueModelName(nameOf(req.repoId)), ...(req.jobId ? { jobId: req.jobId } : {}) })
    },
  }
}
