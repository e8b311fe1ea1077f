// The model-in-the-loop channels of the handler table: registry, tagging, suggestions, review
// queue, retraining, distillation, adaptation, comparison — one file per area, over the shared runtime
// (runtime.ts: job slots, host, recovery) — and the default model's installation
// (default-model.ts). Electron-free (api.ts spreads these into the table).
// Heavy work goes to ctx.modelHost (a separate process); this side only reads documents from the
// workspace, chooses the checkpoint folders (<workspace folder>/models/<name>/), and writes results
// in its own transactions. The host never opens the database.
import type { ModelInfo } from '@shared/ipc'
import type { HandlerContext, Handlers } from '../handlers'
import { adaptHandlers } from './adapt'
import { compareHandlers } from './compare'
import { defaultModelInstaller } from './default-model'
import { distillHandlers } from './distill'
import { hubHandlers } from './hub'
import { registryHandlers } from './registry'
import { learningLoop } from './learning'
import { retrainJobs } from './retrain'
import { createModelRuntime, type ModelHandlerDeps } from './runtime'
import { tagHandlers } from './tag'
import { trainHandlers } from './train'

export { splitDocuments, TAG_CHUNK, type ModelHandlerDeps } from './runtime'

export type ModelChannel =
  | 'engine:info'
  | 'models:list'
  | 'dialog:openModelFolder'
  | 'models:import'
  | 'models:hubPlan'
  | 'models:hubDownload'
  | 'models:cached'
  | 'models:importCached'
  | 'models:setActive'
  | 'models:delete'
  | 'models:train'
  | 'dialog:openWordVectors'
  | 'models:adapt'
  | 'tag:run'
  | 'suggestions:accept'
  | 'suggestions:reject'
  | 'suggestions:acceptAbove'
  | 'review:queue'
  | 'learning:get'
  | 'learning:set'
  | 'retrain:start'
  | 'retrain:decide'
  | 'distill:start'
  | 'distill:plan'
  | 'compare:run'

export interface ModelHandlers {
  handlers: Pick<Handlers, ModelChannel>
  /**
   * Installs the default model that ships with the app into the open workspace when it has no
   * model (default-model.ts); call after opening a workspace. Never rejects.
   */
  installDefaultModel(): Promise<ModelInfo | null>
  /** Call after a request that may change which documents are reviewed (Auto-improve counts them). */
  reviewChanged(): void
}

export function createModelHandlers(ctx: HandlerContext, deps: ModelHandlerDeps): ModelHandlers {
  const rt = createModelRuntime(ctx, deps)
  const registry = registryHandlers(rt)
  const tag = tagHandlers(rt)
  const retrain = retrainJobs(rt, () => loop.changed())
  const loop = learningLoop(rt, { retrain, tag: tag['tag:run'] })
  return {
    handlers: {
      ...registry,
      ...hubHandlers(rt, registry['models:import']),
      ...trainHandlers(rt),
      ...adaptHandlers(rt),
      ...tag,
      ...retrain.handlers,
      ...loop.handlers,
      ...distillHandlers(rt),
      ...compareHandlers(rt),
    },
    installDefaultModel: defaultModelInstaller(rt),
    reviewChanged: loop.reviewChanged,
  }
}
