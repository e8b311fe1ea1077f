// The tfjs engine behind the same InferenceEngine interface: used when onnxruntime cannot run
// (or when asked for); and the bridge the other way, a tfjs model exported to an ONNX graph in
// memory (devel evaluation during training, the distillation teacher).

import * as tf from '@tensorflow/tfjs-core'
import { initBackend } from '../model/backend'
import type { BertTokenClassifier } from '../model/bert'
import { bertConfigToHf, exportHfTensors, loadCheckpoint } from '../model/checkpoint'
import { exportOnnx, type ExportOptions, type WeightsMap } from './export'
import { readCheckpointFiles } from './checkpoint'
import type { InferenceBatch, InferenceEngine, InferenceResult } from './engine'

function toInt32(a: Int32Array | BigInt64Array | undefined, n: number, what: string): Int32Array {
  if (a == null) return new Int32Array(n)
  if (a.length !== n) throw new Error(`${what} has ${a.length} values, expected batch × seq = ${n}`)
  if (a instanceof Int32Array) return a
  return Int32Array.from(a, (v) => Number(v))
}

/**
 * Wraps a tfjs model as an InferenceEngine. The engine disposes the model with itself unless
 * `ownsModel` is false (a model still being trained, tagged between epochs).
 */
export function tfjsEngineFromModel(model: BertTokenClassifier, backend: string, reason: string, warnings: string[] = [], opts: { ownsModel?: boolean } = {}): InferenceEngine {
  const ownsModel = opts.ownsModel ?? true
  return {
    engine: `tfjs-${backend}`,
    reason,
    warnings,
    async run(b: InferenceBatch): Promise<InferenceResult> {
      const n = b.batch * b.seq
      const ids = toInt32(b.inputIds, n, 'inputIds')
      const mask = toInt32(b.attentionMask, n, 'attentionMask')
      const types = toInt32(b.tokenTypeIds, n, 'tokenTypeIds')
      const out = tf.tidy(() => {
        const r = model.forward({
          inputIds: tf.tensor2d(ids, [b.batch, b.seq], 'int32'),
          attentionMask: tf.tensor2d(mask, [b.batch, b.seq], 'int32'),
          tokenTypeIds: tf.tensor2d(types, [b.batch, b.seq], 'int32'),
          ...(b.chars
            ? {
                charIds: tf.tensor3d(b.chars.charIds, [b.batch, b.seq, b.chars.maxChars], 'int32'),
                shapeFlags: tf.tensor3d(b.chars.shapeFlags, [b.batch, b.seq, b.chars.flags], 'float32'),
              }
            : {}),
        })
        return r.logits as unknown as Record<string, tf.Tensor>
      })
      const logits: Record<string, Float32Array> = {}
      try {
        for (const [h, t] of Object.entries(out)) logits[h] = (await t.data()) as Float32Array
      } finally {
        for (const t of Object.values(out)) t.dispose()
      }
      return { logits }
    },
    async dispose() {
      if (ownsModel) model.dispose()
    },
  }
}

/** Loads the checkpoint with core/model on the backend initBackend picks. */
export async function openTfjsEngine(dir: string): Promise<InferenceEngine> {
  const backend = await initBackend()
  const { model, notes } = await loadCheckpoint(dir, { trainable: false })
  const engine = tfjsEngineFromModel(model, backend.name, `tfjs ${backend.name} backend: ${backend.reason}`, notes)
  return { ...engine, files: readCheckpointFiles(dir).weightPaths }
}

/** The model's weights as they are now, as an ONNX graph in memory (nothing written). */
export function exportModelOnnx(model: BertTokenClassifier, opts: ExportOptions = {}): Uint8Array {
  const weights: WeightsMap = new Map()
  for (const [name, t] of exportHfTensors(model)) weights.set(name, { shape: t.shape, data: t.data as Float32Array })
  return exportOnnx(weights, bertConfigToHf(model.config, model.heads), opts)
}
