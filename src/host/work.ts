// The model jobs, run inside the model host process: import, train, tag, retrain, distil,
// quantize (int8), compare, adapt (continued masked-LM pretraining on the workspace's documents). Everything here may take seconds to hours and holds hundreds of MB; none of it runs
// on the process that serves IPC. The host writes checkpoint folders the main process chose; it
// never touches the workspace database (documents come in the request, results go back in the
// reply and main writes them in its own transactions).
//
// One file per job under jobs/ (their shared helpers in jobs/common.ts, the tagger cache in
// jobs/taggers.ts); this is the table server.ts loads on the first model request.
import type { HostMethods } from './protocol'
import type { Job } from './jobs/common'
import { adaptModel } from './jobs/adapt'
import { compare } from './jobs/compare'
import { distill } from './jobs/distill'
import { engineInfo } from './jobs/engine-info'
import { importModel } from './jobs/import-model'
import { quantize } from './jobs/quantize'
import { release } from './jobs/release'
import { retrain } from './jobs/retrain'
import { tag } from './jobs/tag'
import { trainModel } from './jobs/train'

export const JOBS: { [M in keyof HostMethods]?: Job<M> } = {
  engineInfo,
  importModel,
  trainModel,
  tag,
  retrain,
  distill,
  quantize,
  compare,
  adaptModel,
  release,
}
