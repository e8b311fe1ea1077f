// The engineInfo job: the training backend and the inference engine the active model opens with.
import type { EngineInfo } from '@shared/ipc'
import { ensureBackend, type Job } from './common'
import { cachedTagger } from './taggers'

export const engineInfo: Job<'engineInfo'> = async ({ modelDir }) => {
  const b = await ensureBackend()
  const out: EngineInfo = { trainingBackend: b.name, trainingBackendReason: b.reason, inferenceEngine: '', inferenceEngineReason: '' }
  if (modelDir) {
    try {
      const t = await cachedTagger(modelDir)
      out.inferenceEngine = t.engine.engine
      out.inferenceEngineReason = t.engine.reason
      return out
    } catch (e) {
      out.inferenceEngineReason = `cannot open the active model (${(e as Error).message}); `
    }
  }
  const prefer = process.env.FASTBIONER_INFERENCE?.trim().toLowerCase()
  if (prefer === 'tfjs') {
    out.inferenceEngine = `tfjs-${b.name}`
    out.inferenceEngineReason += 'tfjs preferred by FASTBIONER_INFERENCE'
    return out
  }
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ort = require('onnxruntime-node') as { env?: { versions?: { common?: string } } }
    out.inferenceEngine = 'onnxruntime-cpu'
    out.inferenceEngineReason += `onnxruntime-node ${ort.env?.versions?.common ?? ''} loads; the execution provider is chosen when a model is opened`
  } catch (e) {
    out.inferenceEngine = `tfjs-${b.name}`
    out.inferenceEngineReason += `onnxruntime-node cannot load (${(e as Error).message.split('\n')[0]}); tagging runs on tfjs`
  }
  return out
}
