// Int8 model folders: a float checkpoint's Linear weights (and, by default, its word-embedding
// table) stored as per-row int8 + float32 scales (core/model/int8.ts) in model.safetensors, with
// the rest copied. Everything that loads a model folder loads it: the ONNX exporter writes an
// int8 graph from it (dynamic uint8 activations × int8 weights, see ExportOptions.int8MatMul),
// the engine exports and caches it like any checkpoint (graph-cache.ts; the model.onnx written
// here only measures the int8 graph; a damaged model.safetensors is refused naming the file), and the float readers
// (tfjs engine, compare, the app's registry) dequantize it.
//
// What stays float32: LayerNorm, softmax, GELU and every activation between the int8 GEMMs;
// biases; position and token-type embeddings (small), the classifier heads (tiny, and the
// logits come straight out of them) and the character channel (core/model/char-cnn.ts: a few
// thousand values, its chars.txt copied with the other small files).

import { createHash } from 'node:crypto'
import { copyFileSync, createReadStream, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, rmdirSync, statSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { writeFileAtomic } from '../fs/atomic'
import { INT8_SCALE_SUFFIX, quantizeRows } from '../model/int8'
import { readSafetensors, serializeSafetensors, type TensorToWrite } from '../model/safetensors'
import { CONFIG_FILE, inheritedMetadata, METADATA_FILE, readMetadata, WEIGHTS_FILE, WEIGHTS_INDEX_FILE } from '../model/checkpoint-files'
import { ONNX_FILE, OnnxFileError, readCheckpointFiles } from './checkpoint'
import { isWordTaggerFolder, loadWordTagger, saveWordTagger, WORD_TAGGER_EMBEDDINGS } from '../model/word-tagger'
import { DEFAULT_INT8_MATMUL, exportCheckpointToOnnx, type Int8MatMul, type WeightsMap } from './export'

/** Key in fastbioner.json (and in model.safetensors' __metadata__) describing the quantization. */
export const QUANTIZATION_KEY = 'quantization'

export interface QuantizeOptions {
  /** 8 (default): int8 −127…127; 7: −63…63 (before the graph took uint8 weights on CPUs without VNNI, export.ts Int8Weights, it avoided their 16-bit saturation). */
  bits?: 7 | 8
  /** Also quantize the word-embedding table (default true; it is most of a small model's bytes). */
  embeddings?: boolean
  /** Operators of the int8 graph (default DEFAULT_INT8_MATMUL). */
  int8MatMul?: Int8MatMul
  /** A word tagger: its BiLSTM runs with int8 weights too (QuantizationInfo.int8Lstm). */
  int8Lstm?: boolean
}

/** Provenance written to the int8 folder's fastbioner.json under `quantization`. */
export interface QuantizationInfo {
  format: 'int8-per-row-symmetric'
  /** BERT: int8 GEMMs; a word tagger: int8 storage only, dequantized when loaded. */
  activations: 'dynamic uint8 per call' | 'float32 (weights dequantized when loaded)'
  bits: 7 | 8
  /** Names of the tensors stored as int8. */
  int8Tensors: string[]
  /**
   * A word tagger whose BiLSTM runs with int8 weights (onnxruntime's DynamicQuantizeLSTM, a scale
   * per gate column, quantized when the model loads: the file keeps them float32). Absent: float.
   */
  int8Lstm?: boolean
  parent: { dir: string; name: string; sha256: string; bytes: number }
  createdAt: string
  tool: string
  /** Filled by the CLI when --calibrate ran. */
  calibration?: Record<string, unknown>
}

export class QuantizeError extends Error {
  override name = 'QuantizeError'
}

/** Encoder Linear weights (HF names, with or without the 'bert.' prefix). */
const LINEAR = /^(?:bert\.)?encoder\.layer\.\d+\.(?:attention\.self\.(?:query|key|value)|attention\.output\.dense|intermediate\.dense|output\.dense)\.weight$/
const WORD_EMBEDDINGS = /^(?:bert\.)?embeddings\.word_embeddings\.weight$/

/** Whether a parameter is stored as int8 under these options. */
export function quantizedParameter(name: string, opts: QuantizeOptions = {}): boolean {
  return LINEAR.test(name) || ((opts.embeddings ?? true) && WORD_EMBEDDINGS.test(name))
}

/**
 * The weights map with the chosen parameters quantized (`int8` set, `data` = what the int8
 * values stand for). Torch layout in and out: rows of a Linear weight are output channels.
 */
export function quantizeWeights(weights: WeightsMap, opts: QuantizeOptions = {}): WeightsMap {
  const out: WeightsMap = new Map()
  for (const [name, w] of weights) {
    if (!quantizedParameter(name, opts) || w.shape.length !== 2) {
      out.set(name, w)
      continue
    }
    const [rows, cols] = w.shape
    const q = quantizeRows(w.data, rows, cols, opts.bits ?? 8)
    const data = new Float32Array(rows * cols)
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) data[r * cols + c] = q.values[r * cols + c] * q.scale[r]
    out.set(name, { shape: w.shape, data, int8: q })
  }
  return out
}

/** True when the folder's model.safetensors holds int8 tensors (a quantized model folder). */
export function isInt8Folder(dir: string): boolean {
  const meta = readMetadata(dir)
  return !!meta && typeof meta[QUANTIZATION_KEY] === 'object' && meta[QUANTIZATION_KEY] !== null
}

async function sha256Files(paths: string[]): Promise<string> {
  const h = createHash('sha256')
  for (const path of paths) {
    h.update(`${basename(path)}\n`)
    await new Promise<void>((res, rej) => {
      const s = createReadStream(path, { highWaterMark: 1 << 22 })
      s.on('data', (chunk) => h.update(chunk))
      s.on('error', (e) => rej(new OnnxFileError(path, `cannot read (${(e as NodeJS.ErrnoException).code ?? e.message})`)))
      s.on('end', () => res())
    })
  }
  return h.digest('hex')
}

export interface QuantizeFolderResult {
  dir: string
  info: QuantizationInfo
  /** Bytes of the float and the int8 model.onnx (what the inference engine loads); a word tagger has none. */
  floatOnnxBytes?: number
  int8OnnxBytes?: number
  int8WeightsBytes: number
}

export interface QuantizeFolderOptions extends QuantizeOptions {
  /**
   * Runs on the finished folder (still under its temporary name) before it is moved into place;
   * may add `calibration` to the returned info or throw to abandon the folder (e.g. when the
   * accuracy does not hold). Nothing is left behind on a throw.
   */
  check?: (tmpDir: string, info: QuantizationInfo) => Promise<Record<string, unknown> | undefined>
}

/**
 * Writes the int8 version of the float checkpoint `src` to `out`, which must not exist or be an
 * empty directory (a user's files are never replaced). The folder is assembled under a
 * temporary sibling name and renamed into place, so `out` is either complete or absent.
 */
export async function quantizeModelFolder(src: string, out: string, opts: QuantizeFolderOptions = {}): Promise<QuantizeFolderResult> {
  const srcDir = resolve(src)
  const outDir = resolve(out)
  if (srcDir === outDir) throw new QuantizeError(`${outDir}: the int8 model needs its own folder (--out must differ from --model)`)
  if (existsSync(outDir)) {
    if (!statSync(outDir).isDirectory()) throw new QuantizeError(`${outDir}: exists and is not a directory`)
    if (readdirSync(outDir).length) throw new QuantizeError(`${outDir}: exists and is not empty; choose a new folder (nothing is overwritten)`)
  }
  const srcMeta = inheritedMetadata(readMetadata(srcDir), { sameHeads: true })
  if (srcMeta[QUANTIZATION_KEY]) throw new QuantizeError(`${join(srcDir, METADATA_FILE)}: ${srcDir} is already an int8 model; quantize its float parent (${(srcMeta[QUANTIZATION_KEY] as { parent?: { dir?: string } }).parent?.dir ?? 'unknown'})`)
  if (isWordTaggerFolder(srcDir)) return quantizeWordTagger(srcDir, outDir, opts, srcMeta)
  if (opts.int8Lstm) throw new QuantizeError(`${srcDir}: not a word tagger; int8 LSTM weights apply to a word tagger's BiLSTM`)
  const files = readCheckpointFiles(srcDir)

  const parentSha = await sha256Files([files.configPath, ...files.weightPaths])
  const tensorsOut = new Map<string, TensorToWrite>()
  const int8Tensors: string[] = []
  for (const path of files.weightPaths) {
    let contents
    try {
      contents = readSafetensors(path)
    } catch (e) {
      throw new OnnxFileError(path, (e as Error).message.replace(`${path}: `, ''))
    }
    for (const [name, t] of contents.tensors) {
      if (t.dtype === 'I8' || name.endsWith(INT8_SCALE_SUFFIX)) throw new QuantizeError(`${path}: tensor ${name} is already int8; quantize the float model`)
      if (t.data instanceof Float32Array && t.shape.length === 2 && quantizedParameter(name, opts)) {
        const q = quantizeRows(t.data, t.shape[0], t.shape[1], opts.bits ?? 8)
        tensorsOut.set(name, { shape: t.shape, data: q.values, dtype: 'I8' })
        tensorsOut.set(name + INT8_SCALE_SUFFIX, { shape: [t.shape[0]], data: q.scale })
        int8Tensors.push(name)
      } else {
        tensorsOut.set(name, { shape: t.shape, data: t.data, dtype: t.dtype === 'I64' ? 'I64' : t.data instanceof Float32Array ? 'F32' : 'I32' })
      }
    }
  }
  if (!int8Tensors.some((n) => LINEAR.test(n))) throw new QuantizeError(`${files.weightPaths.join(', ')}: no BERT encoder Linear weights to quantize`)

  const info: QuantizationInfo = {
    format: 'int8-per-row-symmetric',
    activations: 'dynamic uint8 per call',
    bits: opts.bits ?? 8,
    int8Tensors: int8Tensors.sort(),
    parent: { dir: srcDir, name: basename(srcDir), sha256: parentSha, bytes: files.weightPaths.reduce((a, p) => a + statSync(p).size, 0) },
    createdAt: new Date().toISOString(),
    tool: 'fastbioner quantize',
  }

  const tmp = tempSibling(outDir)
  try {
    // Tokenizer, config and other small files travel as they are; weights, exports and training
    // state (optimizer.safetensors: float moments of the parent, useless for an int8 model) do not.
    const skip = new Set([WEIGHTS_FILE, WEIGHTS_INDEX_FILE, ONNX_FILE, METADATA_FILE, ...files.weightPaths.map((p) => basename(p))])
    for (const entry of readdirSync(srcDir, { withFileTypes: true })) {
      if (!entry.isFile() || skip.has(entry.name) || entry.name.startsWith('.') || /\.(safetensors|onnx)$/.test(entry.name)) continue
      copyFileSync(join(srcDir, entry.name), join(tmp, entry.name))
    }
    if (!existsSync(join(tmp, CONFIG_FILE))) throw new QuantizeError(`${files.configPath}: was not copied`)
    const writeMeta = () => writeQuantizedMetadata(tmp, srcMeta, info)
    writeFileAtomic(join(tmp, WEIGHTS_FILE), serializeSafetensors(tensorsOut, { format: 'pt', 'fastbioner.quantization': info.format, 'fastbioner.parent_sha256': parentSha }))
    writeMeta()
    const exported = await exportCheckpointToOnnx(tmp, { int8MatMul: opts.int8MatMul ?? DEFAULT_INT8_MATMUL })
    await runCheck(tmp, info, opts, writeMeta)
    moveIntoPlace(tmp, outDir)
    const floatOnnx = join(srcDir, ONNX_FILE)
    return {
      dir: outDir,
      info,
      floatOnnxBytes: existsSync(floatOnnx) ? statSync(floatOnnx).size : undefined,
      int8OnnxBytes: exported.bytes,
      int8WeightsBytes: statSync(join(outDir, WEIGHTS_FILE)).size,
    }
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true })
    throw e
  }
}

/** fastbioner.json of an int8 folder: the parent's metadata and the quantization record. */
function writeQuantizedMetadata(dir: string, srcMeta: Record<string, unknown>, info: QuantizationInfo): void {
  writeFileAtomic(join(dir, METADATA_FILE), [JSON.stringify({ ...srcMeta, [QUANTIZATION_KEY]: info }, null, 2) + '\n'])
}

/** The caller's check on the finished folder; its calibration record is kept (`persist` rewrites the metadata). */
async function runCheck(tmp: string, info: QuantizationInfo, opts: QuantizeFolderOptions, persist: () => void): Promise<void> {
  if (!opts.check) return
  const calibration = await opts.check(tmp, info)
  if (calibration) {
    info.calibration = calibration
    persist()
  }
}

/** An empty temporary sibling of `outDir`, where the folder is assembled before the rename. */
function tempSibling(outDir: string): string {
  mkdirSync(dirname(outDir), { recursive: true })
  const tmp = join(dirname(outDir), `.${basename(outDir)}.fastbioner-tmp-${process.pid}-${Date.now().toString(36)}`)
  mkdirSync(tmp)
  return tmp
}

function moveIntoPlace(tmp: string, outDir: string): void {
  if (existsSync(outDir)) rmdirSync(outDir) // empty (checked by the caller); fails rather than lose a file written since
  renameSync(tmp, outDir)
}

/**
 * A word tagger's int8 folder: its word-embedding table (most of its bytes: 100 floats a word)
 * as int8 rows, one scale per word; the BiLSTM, character CNN and heads stay float32 (a fifth of
 * the bytes). The tagging graph runs on the dequantized table, so only the size changes; with
 * int8Lstm the BiLSTM, the bulk of the tagging time, also runs with int8 weights.
 */
async function quantizeWordTagger(srcDir: string, outDir: string, opts: QuantizeFolderOptions, srcMeta: Record<string, unknown>): Promise<QuantizeFolderResult> {
  if (opts.bits === 7) throw new QuantizeError(`${srcDir}: a word tagger computes in float32 (its int8 table is dequantized when loaded); --bits 7 does not apply`)
  if (opts.embeddings === false) throw new QuantizeError(`${srcDir}: a word tagger's int8 form is its word-embedding table; with float embeddings there is nothing to quantize`)
  const weights = join(srcDir, WEIGHTS_FILE)
  const model = loadWordTagger(srcDir)
  if (model.storedInt8?.length) throw new QuantizeError(`${weights}: already holds int8 tensors; quantize the float model`)
  const int8Tensors = [WORD_TAGGER_EMBEDDINGS]
  const info: QuantizationInfo = {
    format: 'int8-per-row-symmetric',
    activations: 'float32 (weights dequantized when loaded)',
    bits: 8,
    int8Tensors,
    ...(opts.int8Lstm ? { int8Lstm: true } : {}),
    parent: { dir: srcDir, name: basename(srcDir), sha256: await sha256Files([join(srcDir, CONFIG_FILE), weights]), bytes: statSync(weights).size },
    createdAt: new Date().toISOString(),
    tool: 'fastbioner quantize',
  }
  const tmp = tempSibling(outDir)
  try {
    saveWordTagger(tmp, { ...model, metadata: { ...srcMeta, [QUANTIZATION_KEY]: info } }, { int8: int8Tensors })
    // The calibration only adds to the metadata: the weights written above stay.
    await runCheck(tmp, info, opts, () => writeQuantizedMetadata(tmp, srcMeta, info))
    moveIntoPlace(tmp, outDir)
    return { dir: outDir, info, int8WeightsBytes: statSync(join(outDir, WEIGHTS_FILE)).size }
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true })
    throw e
  }
}
