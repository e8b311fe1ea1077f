// Shared by the train tests: the plain-JS cpu backend is deterministic and needs no wasm files.
import * as tf from '@tensorflow/tfjs-core'
import '@tensorflow/tfjs-backend-cpu'
import { ensureGradients } from '@core/model/gradients'

export async function useCpuBackend(): Promise<typeof tf> {
  if (tf.getBackend() !== 'cpu') await tf.setBackend('cpu')
  await tf.ready()
  await ensureGradients()
  return tf
}
