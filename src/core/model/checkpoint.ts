// HuggingFace-layout checkpoint directories:
//   config.json (BertConfig + id2label/label2id + our `fastbioner_heads`), vocab.txt,
//   model.safetensors (HF parameter names, torch layouts), optional tokenizer_config.json,
//   fastbioner.json (our training metadata).
// A BioBERT / PubMedBERT / bert-base-cased download (converted to safetensors) loads as-is; its
// MLM/NSP/pooler weights are ignored and a classifier head is created for the requested labels.

import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import * as tf from '@tensorflow/tfjs-core'
import { removeStaleTempFiles, writeFileAtomic } from '../fs/atomic'
import {
  BertTokenClassifier,
  DEFAULT_HEAD,
  encoderParamShapes,
  headParamNames,
  isLinearWeight,
  validateConfig,
  type BertConfig,
} from './bert'
import { dequantizeRows, INT8_SCALE_SUFFIX } from './int8'
import { SafetensorsReader, serializeSafetensors, type TensorToWrite } from './safetensors'

export class CheckpointError extends Error {
  override name = 'CheckpointError'
}

/** Our key in config.json: every head's labels in id order. HF ignores unknown keys. */
export const HEADS_KEY = 'fastbioner_heads'
export const METADATA_FILE = 'fastbioner.json'

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
}

// ------------------------------------------------------------------------------------------
// config.json

type Json = Record<string, unknown>

function readJson(path: string): Json {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (e) {
    throw new CheckpointError(`${path}: cannot read (${(e as Error).message})`)
  }
  try {
    const v = JSON.parse(text)
    if (v == null || typeof v !== 'object' || Array.isArray(v)) throw new Error('not a JSON object')
    return v as Json
  } catch (e) {
    throw new CheckpointError(`${path}: invalid JSON (${(e as Error).message})`)
  }
}

/** HF BertConfig JSON → BertConfig, with HF's defaults for absent keys. */
export function bertConfigFromHf(j: Json, file = 'config.json'): BertConfig {
  const modelType = j.model_type ?? 'bert'
  if (modelType !== 'bert') throw new CheckpointError(`${file}: model_type '${String(modelType)}' is not supported (only 'bert')`)
  const act = j.hidden_act ?? 'gelu'
  if (act !== 'gelu') {
    throw new CheckpointError(`${file}: hidden_act '${String(act)}' is not supported (only 'gelu', the exact erf GELU)`)
  }
  const pet = j.position_embedding_type ?? 'absolute'
  if (pet !== 'absolute') throw new CheckpointError(`${file}: position_embedding_type '${String(pet)}' is not supported (only 'absolute')`)
  const num = (key: string, def: number): number => {
    const v = j[key]
    if (v === undefined || v === null) return def
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new CheckpointError(`${file}: ${key} must be a number, got ${JSON.stringify(v)}`)
    return v
  }
  const cd = j.classifier_dropout
  const config: BertConfig = {
    vocabSize: num('vocab_size', 30522),
    hiddenSize: num('hidden_size', 768),
    numHiddenLayers: num('num_hidden_layers', 12),
    numAttentionHeads: num('num_attention_heads', 12),
    intermediateSize: num('intermediate_size', 3072),
    hiddenAct: 'gelu',
    hiddenDropoutProb: num('hidden_dropout_prob', 0.1),
    attentionProbsDropoutProb: num('attention_probs_dropout_prob', 0.1),
    maxPositionEmbeddings: num('max_position_embeddings', 512),
    typeVocabSize: num('type_vocab_size', 2),
    initializerRange: num('initializer_range', 0.02),
    layerNormEps: num('layer_norm_eps', 1e-12),
    padTokenId: num('pad_token_id', 0),
    classifierDropout: typeof cd === 'number' ? cd : null,
  }
  try {
    validateConfig(config)
  } catch (e) {
    throw new CheckpointError(`${file}: ${(e as Error).message}`)
  }
  return config
}

/** Labels of the default head from id2label, in id order; null when absent. */
function labelsFromId2Label(j: Json, file: string): string[] | null {
  const m = j.id2label
  if (m == null) return null
  if (typeof m !== 'object' || Array.isArray(m)) throw new CheckpointError(`${file}: id2label is not an object`)
  const entries = Object.entries(m as Record<string, unknown>).map(([k, v]) => [Number(k), String(v)] as const)
  entries.sort((a, b) => a[0] - b[0])
  entries.forEach(([id], i) => {
    if (id !== i) throw new CheckpointError(`${file}: id2label ids must be 0..${entries.length - 1}, found ${id}`)
  })
  return entries.map(([, v]) => v)
}

function headsFromConfig(j: Json, file: string): Record<string, string[]> | null {
  const h = j[HEADS_KEY]
  if (h == null) return null
  if (typeof h !== 'object' || Array.isArray(h)) throw new CheckpointError(`${file}: ${HEADS_KEY} is not an object`)
  const out: Record<string, string[]> = {}
  for (const [name, labels] of Object.entries(h as Record<string, unknown>)) {
    if (!Array.isArray(labels) || !labels.every((l) => typeof l === 'string')) {
      throw new CheckpointError(`${file}: ${HEADS_KEY}.${name} must be a list of label strings`)
    }
    out[name] = labels as string[]
  }
  return out
}

export function bertConfigToHf(c: BertConfig, heads: Map<string, { labels: string[] }>): Json {
  const first = heads.get(DEFAULT_HEAD) ?? heads.values().next().value
  const labels = first?.labels ?? []
  return {
    architectures: ['BertForTokenClassification'],
    model_type: 'bert',
    vocab_size: c.vocabSize,
    hidden_size: c.hiddenSize,
    num_hidden_layers: c.numHiddenLayers,
    num_attention_heads: c.numAttentionHeads,
    intermediate_size: c.intermediateSize,
    hidden_act: c.hiddenAct,
    hidden_dropout_prob: c.hiddenDropoutProb,
    attention_probs_dropout_prob: c.attentionProbsDropoutProb,
    max_position_embeddings: c.maxPositionEmbeddings,
    type_vocab_size: c.typeVocabSize,
    initializer_range: c.initializerRange,
    layer_norm_eps: c.layerNormEps,
    pad_token_id: c.padTokenId,
    position_embedding_type: 'absolute',
    classifier_dropout: c.classifierDropout,
    id2label: Object.fromEntries(labels.map((l, i) => [String(i), l])),
    label2id: Object.fromEntries(labels.map((l, i) => [l, i])),
    [HEADS_KEY]: Object.fromEntries([...heads].map(([name, h]) => [name, h.labels])),
  }
}

// ------------------------------------------------------------------------------------------
// vocab / tokenizer settings

function readVocab(dir: string, notes: string[]): string[] {
  const vocabPath = join(dir, 'vocab.txt')
  if (existsSync(vocabPath)) {
    const lines = readFileSync(vocabPath, 'utf8').split('\n')
    if (lines.length && lines[lines.length - 1] === '') lines.pop()
    return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
  }
  const tokJson = join(dir, 'tokenizer.json')
  if (existsSync(tokJson)) {
    const model = (readJson(tokJson).model ?? {}) as { type?: string; vocab?: Record<string, number> }
    if (model.type === 'WordPiece' && model.vocab) {
      const vocab: string[] = []
      for (const [tok, id] of Object.entries(model.vocab)) vocab[id] = tok
      if (vocab.some((t) => t === undefined)) throw new CheckpointError(`${tokJson}: WordPiece vocab ids have gaps`)
      notes.push('vocab.txt absent: vocabulary taken from tokenizer.json')
      return vocab
    }
  }
  throw new CheckpointError(`${vocabPath}: missing (the WordPiece vocabulary is needed to tokenize)`)
}

/** do_lower_case as a checkpoint folder states it (tokenizer_config.json, else tokenizer.json), if it does. */
export function declaredLowercase(dir: string): boolean | undefined {
  const tc = join(dir, 'tokenizer_config.json')
  if (existsSync(tc)) {
    const v = readJson(tc).do_lower_case
    if (typeof v === 'boolean') return v
  }
  const tj = join(dir, 'tokenizer.json')
  if (existsSync(tj)) {
    const n = readJson(tj).normalizer as { type?: string; lowercase?: boolean } | null
    if (n && n.type === 'BertNormalizer' && typeof n.lowercase === 'boolean') return n.lowercase
  }
  return undefined
}

/**
 * do_lower_case from tokenizer_config.json, else tokenizer.json's BertNormalizer, else inferred
 * from the vocabulary: a vocabulary with capitalised pieces is cased. (HF's BertTokenizer
 * defaults to lowercasing when nothing says otherwise, which silently breaks cased models such
 * as BioBERT-cased whose downloads lack tokenizer_config.json.)
 */
function readLowercase(dir: string, vocab: string[], notes: string[]): boolean {
  const declared = declaredLowercase(dir)
  if (declared !== undefined) return declared
  const cased = vocab.some((t) => !/^\[[A-Za-z0-9_]+\]$/.test(t) && /[A-Z]/.test(t))
  notes.push(`do_lower_case not given: vocabulary looks ${cased ? 'cased' : 'uncased'}, lowercase=${!cased}`)
  return !cased
}

// ------------------------------------------------------------------------------------------
// weights

function convertHint(dir: string): string {
  let cls = 'AutoModel'
  try {
    const arch = readJson(join(dir, 'config.json')).architectures
    if (Array.isArray(arch) && arch.includes('BertForTokenClassification')) cls = 'AutoModelForTokenClassification'
  } catch {
    // no usable config: keep AutoModel
  }
  return `python -c "from transformers import ${cls} as M; d=r'${dir.replace(/'/g, "\\'")}'; M.from_pretrained(d).save_pretrained(d, safe_serialization=True)"`
}

interface StoredRef {
  file: string
  raw: string
  dtype: string
  shape: number[]
  reader: SafetensorsReader
}

/** Opens model.safetensors, or the shards listed in model.safetensors.index.json (lazily decoded). */
function openWeights(dir: string): Map<string, StoredRef> {
  const single = join(dir, 'model.safetensors')
  const index = join(dir, 'model.safetensors.index.json')
  const out = new Map<string, StoredRef>()
  const add = (path: string) => {
    const reader = SafetensorsReader.open(path)
    for (const raw of reader.names()) {
      const info = reader.info(raw)!
      out.set(raw, { file: path, raw, dtype: info.dtype, shape: info.shape, reader })
    }
  }
  if (existsSync(single)) {
    add(single)
    return out
  }
  if (existsSync(index)) {
    const map = readJson(index).weight_map as Record<string, string> | undefined
    if (!map || typeof map !== 'object') throw new CheckpointError(`${index}: weight_map missing`)
    for (const shard of new Set(Object.values(map))) {
      const p = join(dir, shard)
      if (!existsSync(p)) throw new CheckpointError(`${p}: shard listed in ${index} is missing`)
      add(p)
    }
    return out
  }
  for (const bin of ['pytorch_model.bin', 'tf_model.h5', 'flax_model.msgpack', 'model.ckpt.index']) {
    if (existsSync(join(dir, bin))) {
      throw new CheckpointError(
        `${join(dir, bin)}: FastBioNER reads weights only from model.safetensors (pickled/other formats can run code or need their framework). ` +
          `Convert once with Python and transformers installed: ${convertHint(dir)}`,
      )
    }
  }
  throw new CheckpointError(`${single}: missing (no model weights in ${dir})`)
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

/** torch [out, in] → ours [in, out] (and back: the transpose is its own inverse given shapes). */
export function transpose2d(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length)
  const B = 32
  for (let i0 = 0; i0 < rows; i0 += B) {
    const i1 = Math.min(i0 + B, rows)
    for (let j0 = 0; j0 < cols; j0 += B) {
      const j1 = Math.min(j0 + B, cols)
      for (let i = i0; i < i1; i++) for (let j = j0; j < j1; j++) out[j * rows + i] = data[i * cols + j]
    }
  }
  return out
}

/**
 * A stored tensor as float32: F32/F16/BF16 as they are, an int8 tensor of an int8 model folder
 * dequantized with its `<name>_scale` (core/model/int8.ts), so every engine and tool that loads
 * float weights also loads a quantized folder (with the values the int8 graph computes with).
 */
function readFloatOrInt8(stored: Map<string, StoredRef>, t: StoredRef): Float32Array {
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
  const notes: string[] = []
  const configPath = join(dir, 'config.json')
  if (!existsSync(configPath)) throw new CheckpointError(`${configPath}: missing (not a HuggingFace model directory)`)
  const hf = readJson(configPath)
  const config = bertConfigFromHf(hf, configPath)
  const vocab = readVocab(dir, notes)
  if (vocab.length > config.vocabSize) {
    throw new CheckpointError(`${join(dir, 'vocab.txt')}: ${vocab.length} tokens but config.json vocab_size is ${config.vocabSize}`)
  }
  const lowercase = readLowercase(dir, vocab, notes)
  const metaPath = join(dir, METADATA_FILE)
  const metadata = existsSync(metaPath) ? readJson(metaPath) : undefined

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
    const cfgHeads = headsFromConfig(hf, configPath) ?? {}
    const id2label = labelsFromId2Label(hf, configPath)
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
      wanted = { [DEFAULT_HEAD]: id2label ?? ['O'] }
    }
    const fresh: string[] = []
    for (const [head, labels] of Object.entries(wanted)) {
      const n = headParamNames(head)
      const have = storedLabels(head)
      if (storedHeads.has(head) && have && have.length === labels.length && have.every((l, i) => l === labels[i])) {
        params.set(n.weight, take(n.weight, [config.hiddenSize, labels.length]))
        params.set(n.bias, take(n.bias, [labels.length]))
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
      byName.delete(n.weight)
      byName.delete(n.bias)
    }
    for (const [name, t] of byName) {
      if (name.startsWith('bert.')) throw new CheckpointError(`${t.file}: tensor ${t.raw} is not part of a BERT encoder with this config.json (${config.numHiddenLayers} layers)`)
      notes.push(`ignored unknown tensor ${t.raw}`)
    }

    const loadedHeads = Object.fromEntries(Object.entries(wanted).filter(([h]) => !fresh.includes(h)))
    const model = new BertTokenClassifier(config, params, loadedHeads, { trainable: opts.trainable, seed: opts.seed })
    fresh.forEach((head, i) => model.setHead(head, wanted[head], (opts.seed ?? 0) + 1 + i))
    return { model, vocab, lowercase, config, notes, metadata }
  } catch (e) {
    for (const t of params.values()) if (!t.isDisposed) t.dispose()
    throw e
  }
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
 * Writes model.safetensors, vocab.txt, config.json, tokenizer_config.json (when lowercase is
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
  writeFileAtomic(join(dir, 'model.safetensors'), serializeSafetensors(exportHfTensors(model), { format: 'pt' }))
  writeFileAtomic(join(dir, 'vocab.txt'), [vocab.join('\n') + '\n'])
  if (opts.lowercase !== undefined) {
    const tc = { tokenizer_class: 'BertTokenizer', do_lower_case: opts.lowercase, model_max_length: model.config.maxPositionEmbeddings }
    writeFileAtomic(join(dir, 'tokenizer_config.json'), [JSON.stringify(tc, null, 2) + '\n'])
  }
  writeFileAtomic(join(dir, 'config.json'), [JSON.stringify(bertConfigToHf(model.config, model.heads), null, 2) + '\n'])
  if (opts.metadata) writeFileAtomic(join(dir, METADATA_FILE), [JSON.stringify(opts.metadata, null, 2) + '\n'])
}
