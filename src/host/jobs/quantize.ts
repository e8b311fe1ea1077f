// The quantize job: the int8 version of a float model folder (core/onnx/quantize), scored on the
// held-out documents through its int8 ONNX graph.
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { QuantizeError, quantizeModelFolder } from '../../core/onnx/quantize'
import { ensureBackend, HostInputError, phase, scoreSaved, type Job } from './common'

export const quantize: Job<'quantize'> = async (p, ctx) => {
  // tfjs reads the folder for its summary (and is the engine when onnxruntime cannot load).
  await ensureBackend()
  const t0 = performance.now()
  const outExisted = existsSync(p.outDir)
  phase(ctx, 'Writing the int8 weights and graph')
  try {
    await quantizeModelFolder(p.modelDir, p.outDir)
  } catch (e) {
    // quantizeModelFolder leaves outDir as it was on any error; OnnxFileError (a missing or
    // damaged model file) is already a user error for the server.
    if (e instanceof QuantizeError) throw new HostInputError(e.message)
    throw e
  }
  try {
    phase(ctx, `Scoring the int8 model on ${p.dev.length} held-out documents`, 0, p.dev.length)
    const { summary, devScores } = await scoreSaved(p.outDir, p.dev, {
      engine: 'onnx',
      signal: ctx.signal,
      onProgress: (done, total) => phase(ctx, `Scoring the int8 model on ${total} held-out documents`, done, total),
    })
    return { summary, devScores, seconds: (performance.now() - t0) / 1000 }
  } catch (e) {
    // Cancelled or failed while scoring: put outDir back as it was (absent, or the empty folder
    // the caller made) rather than leave a model nobody registered.
    rmSync(p.outDir, { recursive: true, force: true })
    if (outExisted) mkdirSync(p.outDir, { recursive: true })
    throw e
  }
}
