// Reads what the ONNX export needs from an HF checkpoint directory (config.json +
// model.safetensors, or the shards of model.safetensors.index.json) into a plain weights map in
// torch layout, and scans model.onnx files for their metadata without decoding the graph.
// Safetensors decoding is core/model's (it imports no tfjs); the exporter itself stays
// independent of the tfjs model.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { join } from 'node:path'
import { onnx } from 'onnx-proto'
import { dequantizeRows, INT8_SCALE_SUFFIX } from '../model/int8'
import { CONFIG_FILE, findWeightFiles } from '../model/checkpoint-files'
import { nonFiniteProblem } from '../model/finite'
import { openRegularFile, readRegularFile } from '../fs/read-regular'
import { readSafetensors } from '../model/safetensors'
import type { WeightsMap } from './weights'
import { FileError } from '../fs/file-error'

export const ONNX_FILE = 'model.onnx'

/** A problem with a file on disk; the message names the file. */
export class OnnxFileError extends FileError {
  override name = 'OnnxFileError'
}

function errnoText(e: unknown): string {
  return (e as NodeJS.ErrnoException).code ?? (e as Error).message
}

/** The most config.json may hold: a model's configuration is a few kB. */
const MAX_CONFIG_BYTES = 16 * 1024 * 1024

export interface CheckpointFiles {
  dir: string
  configPath: string
  /** model.safetensors, or every shard listed in model.safetensors.index.json (sorted). */
  weightPaths: string[]
  configBytes: Uint8Array
  config: Record<string, unknown>
}

/** Locates the checkpoint's files and reads config.json (small); weights are read separately. */
export function readCheckpointFiles(dir: string): CheckpointFiles {
  const configPath = join(dir, CONFIG_FILE)
  // A regular file read by its size with a cap: the folder is untrusted (a FIFO, a device).
  const configBytes: Uint8Array = readRegularFile(configPath, MAX_CONFIG_BYTES, (file, problem) => new OnnxFileError(file, `cannot read the model configuration: ${problem}`))
  let config: Record<string, unknown>
  try {
    config = JSON.parse(new TextDecoder().decode(configBytes))
  } catch (e) {
    throw new OnnxFileError(configPath, `is not valid JSON (${(e as Error).message})`)
  }
  if (config === null || typeof config !== 'object' || Array.isArray(config)) throw new OnnxFileError(configPath, 'is not a JSON object')
  const weightPaths = findWeightFiles(dir)
  // The export streams the weight files whole to fingerprint them: each must be a regular file
  // (model.safetensors linked to /dev/zero would be hashed forever, a FIFO would block).
  for (const path of weightPaths) closeSync(openRegularFile(path, (file, problem) => new OnnxFileError(file, problem)).fd)
  return { dir, configPath, weightPaths, configBytes, config }
}

/**
 * Float tensors of the checkpoint under HF names, torch layout. Old TF-converted names
 * (LayerNorm.gamma/beta) are renamed; integer buffers (position_ids) are skipped. A NaN or an
 * infinity (in a float tensor or an int8 tensor's scales) is refused naming the file and the
 * tensor (../model/finite.ts): the graph would score everything NaN and tag nothing.
 */
export function readCheckpointWeights(weightPaths: string[], bytes?: Buffer[]): WeightsMap {
  const out: WeightsMap = new Map()
  for (const [i, path] of weightPaths.entries()) {
    let tensors
    try {
      tensors = readSafetensors(path, undefined, bytes?.[i]).tensors
    } catch (e) {
      // SafetensorsError messages already start with the file name.
      if ((e as Error).name === 'SafetensorsError') throw new OnnxFileError(path, (e as Error).message.replace(`${path}: `, ''))
      throw new OnnxFileError(path, `cannot read the model weights (${errnoText(e)})`)
    }
    for (const [raw, t] of tensors) {
      if (raw.endsWith(INT8_SCALE_SUFFIX) && tensors.get(raw.slice(0, -INT8_SCALE_SUFFIX.length))?.dtype === 'I8') continue
      const name = raw.replace(/LayerNorm\.gamma$/, 'LayerNorm.weight').replace(/LayerNorm\.beta$/, 'LayerNorm.bias')
      if (t.dtype === 'I8') {
        // An int8 model folder: keep the int8 values for the quantized graph, and their float
        // meaning for everything that wants floats.
        const s = tensors.get(raw + INT8_SCALE_SUFFIX)
        const rows = t.shape[0] ?? 1
        if (!s || !(s.data instanceof Float32Array) || s.shape.length !== 1 || s.shape[0] !== rows) {
          throw new OnnxFileError(path, `int8 tensor ${raw} needs a float32 ${raw}${INT8_SCALE_SUFFIX} of shape [${rows}]${s ? `, found ${s.dtype}[${s.shape}]` : ''}`)
        }
        const problem = nonFiniteProblem(s.data)
        if (problem) throw new OnnxFileError(path, `tensor ${raw}${INT8_SCALE_SUFFIX} ${problem}; model weights must be finite numbers`)
        const values = Int8Array.from(t.data)
        out.set(name, { shape: t.shape, data: dequantizeRows(values, s.data, rows, values.length / rows), int8: { values, scale: s.data } })
        continue
      }
      if (!(t.data instanceof Float32Array)) continue
      const problem = nonFiniteProblem(t.data)
      if (problem) throw new OnnxFileError(path, `tensor ${raw} ${problem}; model weights must be finite numbers`)
      out.set(name, { shape: t.shape, data: t.data })
    }
  }
  return out
}

/**
 * metadata_props of an ONNX file, read by walking the top-level ModelProto fields and skipping
 * the graph (field 7) by its length: a few small reads even for a 400 MB model. Throws an
 * OnnxFileError when the file is not a well-formed ModelProto at that level (e.g. truncated).
 */
export function readOnnxMetadata(path: string): Record<string, string> {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch (e) {
    throw new OnnxFileError(path, `cannot open (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`)
  }
  try {
    const size = fstatSync(fd).size
    const meta: Record<string, string> = {}
    let sawGraph = false
    let pos = 0
    const buf = Buffer.alloc(10)
    const varint = (): number => {
      const n = readSync(fd, buf, 0, 10, pos)
      let result = 0
      let mul = 1
      for (let i = 0; i < n; i++) {
        const b = buf[i]
        result += (b & 0x7f) * mul
        mul *= 128
        if ((b & 0x80) === 0) {
          pos += i + 1
          return result
        }
      }
      throw new OnnxFileError(path, `not an ONNX model: bad varint at byte ${pos}`)
    }
    while (pos < size) {
      const tag = varint()
      const field = Math.floor(tag / 8)
      const wire = tag & 7
      if (field === 0) throw new OnnxFileError(path, `not an ONNX model: field 0 at byte ${pos}`)
      if (wire === 0) varint()
      else if (wire === 1) pos += 8
      else if (wire === 5) pos += 4
      else if (wire === 2) {
        const len = varint()
        if (pos + len > size) throw new OnnxFileError(path, `truncated or corrupt ONNX model: field ${field} needs ${len} bytes at byte ${pos}, the file has ${size}`)
        if (field === 7) sawGraph = true
        if (field === 14) {
          const entry = Buffer.alloc(len)
          readSync(fd, entry, 0, len, pos)
          const kv = onnx.StringStringEntryProto.decode(entry)
          meta[kv.key] = kv.value
        }
        pos += len
      } else throw new OnnxFileError(path, `not an ONNX model: wire type ${wire} at byte ${pos}`)
    }
    if (pos !== size) throw new OnnxFileError(path, `truncated ONNX model (${size} bytes)`)
    if (!sawGraph) throw new OnnxFileError(path, 'not an ONNX model: no graph')
    return meta
  } finally {
    closeSync(fd)
  }
}
