// The model-in-the-loop channels of the handler table: registry, tagging, suggestions, review
// queue, retraining, distillation, comparison — one file per area, over the shared runtime
// (runtime.ts: job slots, host, recovery). Electron-free (api.ts spreads these into the table).
// Heavy work goes to ctx.modelHost (a separate process); this side only reads documents from the
// workspace, chooses the checkpoint folders (<workspace folder>/models/<name>/), and writes results
// in its own transactions. The host never opens the database.
import type { HandlerContext, Handlers } from '../api'
import { compareHandlers } from './compare'
import { distillHandlers } from './distill'
import { registryHandlers } from './registry'
import { retrainHandlers } from './retrain'
import { createModelRuntime, type ModelHandlerDeps } from './runtime'
import { tagHandlers } from './tag'
import { trainHandlers } from './train'

export { splitDocuments, TAG_CHUNK, type ModelHandlerDeps } from './runtime'

export type ModelChannel =
  | 'engine:info'
  | 'models:list'
  | 'dialog:openModelFolder'
  | 'models:import'
  | 'models:setActive'
  | 'models:delete'
  | 'models:train'
  | 'tag:run'
  | 'suggestions:accept'
  | 'suggestions:reject'
  | 'suggestions:acceptAbove'
  | 'review:queue'
  | 'retrain:start'
  | 'retrain:decide'
  | 'distill:start'
  | 'compare:run'

export function createModelHandlers(ctx: HandlerContext, deps: ModelHandlerDeps): Pick<Handlers, ModelChannel> {
  const rt = createModelRuntime(ctx, deps)
  return {
    ...registryHandlers(rt),
    ...trainHandlers(rt),
    ...tagHandlers(rt),
    ...retrainHandlers(rt),
    ...distillHandlers(rt),
    ...compareHandlers(rt),
  }
}
