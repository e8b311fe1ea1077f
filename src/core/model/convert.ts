// One-time conversion of a model folder's PyTorch weights (pytorch_model.bin or its shards) to
// model.safetensors, so that later loads skip the pickle: the tensors keep their names, dtypes
// (fp16/bf16 bits as stored) and values; tied weights are written once per name, as
// safetensors has no sharing. The other files of the folder are left as they are.

import { join } from 'node:path'
import { CheckpointError, findWeightFiles, WEIGHTS_FILE } from './checkpoint-files'
import { isTorchWeightFile, openWeightFile, SafetensorsReader, writeSafetensors, type RawTensorToWrite } from './safetensors'

export interface ConversionResult {
  /** The PyTorch files read. */
  from: string[]
  /** The model.safetensors written. */
  to: string
  tensors: number
  bytes: number
}

export function convertWeightsToSafetensors(dir: string): ConversionResult {
  const from = findWeightFiles(dir)
  if (!from.every(isTorchWeightFile)) throw new CheckpointError(`${from[0]}: the folder's weights are already safetensors; nothing to convert`)
  const tensors = new Map<string, RawTensorToWrite>()
  const origin = new Map<string, string>()
  for (const file of from) {
    const reader = openWeightFile(file)
    for (const name of reader.names()) {
      if (origin.has(name)) throw new CheckpointError(`${file}: tensor ${name} is also in ${origin.get(name)}`)
      origin.set(name, file)
      tensors.set(name, reader.raw(name))
    }
  }
  if (!tensors.size) throw new CheckpointError(`${from.join(', ')}: no tensors to convert`)
  const to = join(dir, WEIGHTS_FILE)
  writeSafetensors(to, tensors, { format: 'pt' })
  // Read back: the file that later loads will open must hold every tensor.
  const back = SafetensorsReader.open(to)
  if (back.names().length !== tensors.size) throw new CheckpointError(`${to}: holds ${back.names().length} tensors after writing ${tensors.size}`)
  return { from, to, tensors: tensors.size, bytes: [...tensors.values()].reduce((a, t) => a + t.bytes.byteLength, 0) }
}
