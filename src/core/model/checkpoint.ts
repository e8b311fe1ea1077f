// Loading and saving HuggingFace-layout checkpoint directories with the tfjs model (the small
// files are read by ./checkpoint-files):
//   config.json (BertConfig + id2label/label2id + our `fastbioner_heads`), vocab.txt,
//   model.safetensors (HF parameter names, torch layouts), optional tokenizer_config.json,
//   fastbioner.json (our training metadata).
// A BioBERT / PubMedBERT / bert-base-cased download (converted to safetensors) loads as-is; its
// MLM/NSP/pooler weights are ignored and a classifier head is created for the requested labels.

import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import * as tf from '@tensorflow/tfjs-core'
import { removeStaleTempFiles, writeFileAtomic } from '../fs/atomic'
import { BertTokenClassifier } from './bert'
import {
  bertConfigToHf,
  CheckpointError,
  CHARS_FILE,
  charVocabularyText,
  findWeightFiles,
  hasWeightFiles,
  HEADS_KEY,
  METADATA_FILE,
  readCheckpointInfo,
  transpose2d,
} from './checkpoint-files'
import { DEFAULT_HEAD, encoderParamShapes, headParamNames, isLinearWeight, type BertConfig } from './config'
import { crfParamNames, crfParamShapes, type CrfScores } from './crf'
import { nonFiniteProblem } from './finite'
import { dequantizeRows, INT8_SCALE_SUFFIX } from './int8'
import { openWeightFile, serializeSafetensors, type TensorToWrite, type WeightFileReader } from './safetensors'

export {
  bertConfigFromHf,
  bertConfigToHf,
  CheckpointError,
  declaredLowercase,
  HEADS_KEY,
  METADATA_FILE,
  readCheckpointInfo,
  transpose2d,
  type CheckpointInfo,
  type TrainingMetadata,
} from './checkpoint-files'

export interface LoadOptions {
  /**
   * Heads wanted (name → labels). A head stored with exactly these labels is loaded; otherwise a
   * fresh head is initialised (and a note says so). Default: the heads stored in the checkpoint,
   * or, if it has no classifier, a fresh 'default' head with config.json's id2label labels.
   */
  heads?: Record<string, string[]>
  /** Seed for fresh heads. */
  seed?: number
  trainable?: boolean
}

export interface LoadedCheckpoint {
  model: BertTokenClassifier
  vocab: string[]
  lowercase: boolean
  config: BertConfig
  /** Things the loader ignored or created, for the log/UI. */
  notes: string[]
  /** Contents of fastbioner.json, if present. */
  metadata?: Record<string, unknown>
}

export interface SaveOptions {
  /** Written to tokenizer_config.json as do_lower_case. */
  lowercase?: boolean
  /** Written to fastbioner.json (training metadata). */
  metadata?: Record<string, unknown>
  /** Tensors of heads the tfjs model does not hold (the masked-LM head), already in HF layout. */
  extraTensors?: Map<string, TensorToWrite>
  /** config.json `architectures`; default BertForTokenClassification. */
  architectures?: string[]
}

// ------------------------------------------------------------------------------------------
// weights

interface StoredRef {
  file: string
  raw: string
  dtype: string
  shape: number[]
  reader: WeightFileReader
}

/** Opens the weight files (model.safetensors, pytorch_model.bin or their shards), lazily decoded. */
function openWeights(dir: string): Map<string, StoredRef> {
  const out = new Map<string, StoredRef>()
  for (const path of findWeightFiles(dir)) {
    const reader = openWeightFile(path)
    for (const raw of reader.names()) {
      const info = reader.info(raw)!
      if (out.has(raw)) throw new CheckpointError(`${path}: tensor ${raw} is also in ${out.get(raw)!.file}`)
      out.set(raw, { file: path, raw, dtype: info.dtype, shape: info.shape, reader })
    }
  }
  return out
}

const IGNORED = [/^bert\.pooler\./, /^cls\./, /\.position_ids$/]

/** Maps a stored name to our HF name; null = ignore. Tolerates a missing 'bert.' prefix and gamma/beta. */
function normalizeName(raw: string): string | null {
  let n = raw
  if (/LayerNorm\.gamma$/.test(n)) n = n.replace(/gamma$/, 'weight')
  else if (/LayerNorm\.beta$/.test(n)) n = n.replace(/beta$/, 'bias')
  if (/^(embeddings|encoder|pooler)\./.test(n)) n = `bert.${n}`
  if (IGNORED.some((r) => r.test(n))) return null
  return n
}

/**
 * A stored tensor as float32: F32/F16/BF16 as they are, an int8 tensor of an int8 model folder
 * dequantized with its `<name>_scale` (core/model/int8.ts), so every engine and tool that loads
 * float weights also loads a quantized folder (with the values the int8 graph computes with).
 * A NaN or an infinity is refused with the file and tensor named (./finite.ts).
 */
function readFloatOrInt8(stored: Map<string, StoredRef>, t: StoredRef): Float32Array {
  const floats = readFloatOrInt8Unchecked(stored, t)
  const problem = nonFiniteProblem(floats)
  if (problem) throw new CheckpointError(`${t.file}: tensor ${t.raw} ${problem}; model weights must be finite numbers`)
  return floats
}

function readFloatOrInt8Unchecked(stored: Map<string, StoredRef>, t: StoredRef): Float32Array {
  const v = t.reader.read(t.raw)
  if (v.data instanceof Float32Array) return v.data
  if (t.dtype === 'I8') {
    const s = stored.get(t.raw + INT8_SCALE_SUFFIX)
    const rows = t.shape[0] ?? 1
    if (!s || s.dtype !== 'F32' || s.shape.length !== 1 || s.shape[0] !== rows) {
      throw new CheckpointError(`${t.file}: int8 tensor ${t.raw} needs a float32 ${t.raw}${INT8_SCALE_SUFFIX} of shape [${rows}]${s ? `, found ${s.dtype}[${s.shape}]` : ''}`)
    }
    return dequantizeRows(v.data, s.reader.read(s.raw).data, rows, v.data.length / rows)
  }
  throw new CheckpointError(`${t.file}: tensor ${t.raw} has integer dtype ${t.dtype}, expected floating point`)
}

export async function loadCheckpoint(dir: string, opts: LoadOptions = {}): Promise<LoadedCheckpoint> {
  const info = readCheckpointInfo(dir)
  const { configPath, config, vocab, lowercase, metadata } = info
  const notes = [...info.notes]

  const stored = openWeights(dir)
  const byName = new Map<string, StoredRef>()
  const ignored: string[] = []
  for (const [raw, t] of stored) {
    // Per-row scales of int8 tensors are read with their tensor (see take()).
    if (raw.endsWith(INT8_SCALE_SUFFIX) && stored.get(raw.slice(0, -INT8_SCALE_SUFFIX.length))?.dtype === 'I8') continue
    const n = normalizeName(raw)
    if (n == null) {
      ignored.push(raw)
      continue
    }
    byName.set(n, { ...t, raw })
  }
  if (ignored.length) {
    const groups = new Set(ignored.map((n) => (n.startsWith('cls.') ? 'cls.* (pre-training heads)' : n.includes('pooler') ? 'pooler' : n)))
    notes.push(`ignored ${ignored.length} tensor(s) not used for token classification: ${[...groups].join(', ')}`)
  }

  const params = new Map<string, tf.Tensor>()
  const take = (name: string, expected: number[]): tf.Tensor => {
    const t = byName.get(name)
    if (!t) throw new CheckpointError(`${dir}: tensor ${name} is missing from the checkpoint`)
    const linear = isLinearWeight(name)
    // Stored (torch) shape: Linear weights are [out, in].
    const want = linear ? [expected[1], expected[0]] : expected
    if (!tf.util.arraysEqual(t.shape, want)) {
      throw new CheckpointError(`${t.file}: tensor ${t.raw} has shape [${t.shape}], expected [${want}] from config.json`)
    }
    const floats = readFloatOrInt8(stored, t)
    const data = linear ? transpose2d(floats, want[0], want[1]) : floats
    byName.delete(name)
    return tf.tensor(data, expected, 'float32')
  }

  try {
    for (const [name, shape] of encoderParamShapes(config)) params.set(name, take(name, shape))

    // Heads present in the file.
    const storedHeads = new Map<string, number>() // name → number of labels
    for (const [name, t] of byName) {
      const m = /^(?:classifier|classifiers\.([A-Za-z0-9_-]+))\.weight$/.exec(name)
      if (m) storedHeads.set(m[1] ?? DEFAULT_HEAD, t.shape[0])
    }
    const cfgHeads = info.configHeads ?? {}
    const id2label = info.id2label
    const storedLabels = (head: string): string[] | null => cfgHeads[head] ?? (head === DEFAULT_HEAD ? id2label : null)

    let wanted: Record<string, string[]>
    if (opts.heads) wanted = opts.heads
    else if (storedHeads.size) {
      wanted = {}
      for (const [head, n] of storedHeads) {
        const labels = storedLabels(head)
        if (!labels) throw new CheckpointError(`${configPath}: no labels for stored head '${head}' (${HEADS_KEY} or id2label)`)
        if (labels.length !== n) {
          throw new CheckpointError(`${configPath}: head '${head}' has ${labels.length} labels but tensor ${headParamNames(head).weight} has ${n} rows`)
        }
        wanted[head] = labels
      }
    } else {
      // A pretraining checkpoint (BertForMaskedLM) stores an empty id2label: one 'O' label then.
      wanted = { [DEFAULT_HEAD]: id2label?.length ? id2label : ['O'] }
    }
    const fresh: string[] = []
    const crfHeads: string[] = []
    for (const [head, labels] of Object.entries(wanted)) {
      const n = headParamNames(head)
      const have = storedLabels(head)
      if (storedHeads.has(head) && have && have.length === labels.length && have.every((l, i) => l === labels[i])) {
        params.set(n.weight, take(n.weight, [config.hiddenSize, labels.length]))
        params.set(n.bias, take(n.bias, [labels.length]))
        // A head trained with a CRF (./crf) keeps it: its transitions belong to its labels.
        const crf = crfParamShapes(head, labels.length)
        const stored = [...crf.keys()].filter((name) => byName.has(name))
        if (stored.length === crf.size) {
          for (const [name, shape] of crf) params.set(name, take(name, shape))
          crfHeads.push(head)
        } else if (stored.length) throw new CheckpointError(`${dir}: head '${head}' has ${stored.join(', ')} but not all of ${[...crf.keys()].join(', ')}`)
      } else {
        fresh.push(head)
        notes.push(
          storedHeads.has(head)
            ? `head '${head}': stored labels differ from the requested ${labels.length}; initialised a fresh head`
            : `head '${head}': no classifier in the checkpoint; initialised a fresh head with ${labels.length} labels`,
        )
      }
    }
    for (const head of storedHeads.keys()) {
      if (!(head in wanted)) notes.push(`head '${head}' in the checkpoint was not requested; ignored`)
      const n = headParamNames(head)
      const c = crfParamNames(head)
      for (const name of [n.weight, n.bias, c.transitions, c.start, c.end]) byName.delete(name)
    }
    for (const [name, t] of byName) {
      if (name.startsWith('bert.')) throw new CheckpointError(`${t.file}: tensor ${t.raw} is not part of a BERT encoder with this config.json (${config.numHiddenLayers} layers)`)
      notes.push(`ignored unknown tensor ${t.raw}`)
    }

    const loadedHeads = Object.fromEntries(Object.entries(wanted).filter(([h]) => !fresh.includes(h)))
    const model = new BertTokenClassifier(config, params, loadedHeads, { trainable: opts.trainable, seed: opts.seed, crfHeads, charVocab: info.chars })
    fresh.forEach((head, i) => model.setHead(head, wanted[head], (opts.seed ?? 0) + 1 + i))
    return { model, vocab, lowercase, config, notes, metadata }
  } catch (e) {
    for (const t of params.values()) if (!t.isDisposed) t.dispose()
    throw e
  }
}

/**
 * The CRF scores of the heads that have one, read from the weight files alone (taggers on
 * onnxruntime never load the encoder into tfjs). heads: name → labels, as config.json gives them.
 */
export function readCrfScores(dir: string, heads: Record<string, readonly string[]>): Record<string, CrfScores> {
  // A folder the engine reads without weights (an exported model.onnx alone) has no CRF.
  if (!hasWeightFiles(dir)) return {}
  const stored = openWeights(dir)
  const out: Record<string, CrfScores> = {}
  for (const [head, labels] of Object.entries(heads)) {
    const shapes = crfParamShapes(head, labels.length)
    const present = [...shapes.keys()].filter((n) => stored.has(n))
    if (present.length === 0) continue
    if (present.length !== shapes.size) throw new CheckpointError(`${dir}: head '${head}' has ${present.join(', ')} but not all of ${[...shapes.keys()].join(', ')}`)
    const read = (name: string): Float32Array => {
      const t = stored.get(name)!
      const want = shapes.get(name)!
      if (!tf.util.arraysEqual(t.shape, want)) throw new CheckpointError(`${t.file}: tensor ${name} has shape [${t.shape}], expected [${want}] for head '${head}' (${labels.length} labels)`)
      return readFloatOrInt8(stored, t)
    }
    const n = crfParamNames(head)
    out[head] = { transitions: read(n.transitions), start: read(n.start), end: read(n.end) }
  }
  return out
}

/** Every parameter in HF layout (torch shapes), ready for safetensors. */
export function exportHfTensors(model: BertTokenClassifier): Map<string, TensorToWrite> {
  const out = new Map<string, TensorToWrite>()
  for (const [name, v] of model.variables()) {
    const data = v.dataSync() as Float32Array
    if (isLinearWeight(name)) {
      const [inDim, outDim] = v.shape
      out.set(name, { shape: [outDim, inDim], data: transpose2d(data, inDim, outDim) })
    } else {
      out.set(name, { shape: [...v.shape], data: Float32Array.from(data) })
    }
  }
  return out
}

/**
 * Writes model.safetensors, vocab.txt (and chars.txt with a character channel), config.json, tokenizer_config.json (when lowercase is
 * given) and fastbioner.json (when metadata is given). Each file is replaced atomically; the
 * config goes last so a reader never sees a config that promises weights not yet written.
 */
export async function saveCheckpoint(dir: string, model: BertTokenClassifier, vocab: string[], opts: SaveOptions = {}): Promise<void> {
  if (vocab.length > model.config.vocabSize) {
    throw new CheckpointError(`${dir}: vocabulary has ${vocab.length} tokens but the model's vocab_size is ${model.config.vocabSize}`)
  }
  const bad = vocab.findIndex((t) => t.includes('\n') || t.includes('\r'))
  if (bad >= 0) throw new CheckpointError(`${dir}: vocabulary entry ${bad + 1} contains a line break`)
  mkdirSync(dir, { recursive: true })
  removeStaleTempFiles(dir)
  const tensors = exportHfTensors(model)
  for (const [name, t] of opts.extraTensors ?? []) tensors.set(name, t)
  writeFileAtomic(join(dir, 'model.safetensors'), serializeSafetensors(tensors, { format: 'pt' }))
  writeFileAtomic(join(dir, 'vocab.txt'), [vocab.join('\n') + '\n'])
  if (model.charVocab) writeFileAtomic(join(dir, CHARS_FILE), [charVocabularyText(model.charVocab.chars, dir)])
  if (opts.lowercase !== undefined) {
    const tc = { tokenizer_class: 'BertTokenizer', do_lower_case: opts.lowercase, model_max_length: model.config.maxPositionEmbeddings }
    writeFileAtomic(join(dir, 'tokenizer_config.json'), [JSON.stringify(tc, null, 2) + '\n'])
  }
  const hfConfig = bertConfigToHf(model.config, model.heads)
  if (opts.architectures) hfConfig.architectures = opts.architectures
  writeFileAtomic(join(dir, 'config.json'), [JSON.stringify(hfConfig, null, 2) + '\n'])
  if (opts.metadata) writeFileAtomic(join(dir, METADATA_FILE), [JSON.stringify(opts.metadata, null, 2) + '\n'])
}
