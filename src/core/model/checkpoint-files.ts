// The one reader of an HF-layout checkpoint folder's small files, without decoding weights and
// without tfjs (the ONNX exporter, the tagger and the model host use it as well as
// loadCheckpoint):
//   config.json (BertConfig + id2label/label2id + our `fastbioner_heads`), vocab.txt (or
//   tokenizer.json's WordPiece vocabulary), tokenizer_config.json / tokenizer.json (casing),
//   fastbioner.json (our training metadata), and where the weights are: model.safetensors or the
//   shards listed in model.safetensors.index.json, else PyTorch's pytorch_model.bin or the shards
//   of pytorch_model.bin.index.json (read weights-only by ./torch-checkpoint).
// A model folder is untrusted: files are read as regular files by their size with a cap, and the
// shards an index names must resolve inside the folder (or, for a Hugging Face cache snapshot,
// inside its models--org--name root, where the snapshot's symlinks point).

import { closeSync, existsSync, readSync, realpathSync } from 'node:fs'
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { openRegularFile, readRegularFile } from '../fs/read-regular'
import { parseVocabText, vocabFromTokenizerJson } from '../nlp/vocab'
import { DEFAULT_HEAD, validateConfig, type BertConfig } from './config'
import { charCnnFromHf, charCnnToHf, charVocabulary } from './char-cnn'
import type { WordFeaturizer } from '../nlp/word-features'
import type { ModelBenchmark } from '../../shared/ipc'

export class CheckpointError extends Error {
  override name = 'CheckpointError'
}

export const CONFIG_FILE = 'config.json'
export const VOCAB_FILE = 'vocab.txt'
export const WEIGHTS_FILE = 'model.safetensors'
export const WEIGHTS_INDEX_FILE = 'model.safetensors.index.json'
/** PyTorch's weights (torch.save's zip format), read when a folder has no safetensors. */
export const TORCH_WEIGHTS_FILE = 'pytorch_model.bin'
export const TORCH_WEIGHTS_INDEX_FILE = 'pytorch_model.bin.index.json'
/** Our key in config.json: every head's labels in id order. HF ignores unknown keys. */
export const HEADS_KEY = 'fastbioner_heads'
export const METADATA_FILE = 'fastbioner.json'
/** The character vocabulary of a model with characters (a word tagger, a BERT char_cnn): one a line, <pad> and <unk> first. */
export const CHARS_FILE = 'chars.txt'

/** What the training loop records in fastbioner.json; tagging reads maxLength etc. back from it. */
export interface TrainingMetadata {
  head: string
  labels: string[]
  maxLength: number
  stride: number | null
  sentenceLevel: boolean
  epoch: number
  step: number
  seed: number
  batchSize: number
  lr: number
  /** The word tagger's schedule when not constant ('linear': from lr to 0 at the planned last step). */
  lrSchedule?: 'linear'
  dev: { precision: number; recall: number; f1: number } | null
  /** Multi-task runs: the heads trained, one per corpus (`dev` is then their mean). */
  tasks?: string[]
  /** Each head's devel scores at this epoch. */
  devByHead?: Record<string, { precision: number; recall: number; f1: number }>
  /** Checkpoint averaging: the weights are the mean of these epochs' (`epoch` is the last). */
  averagedEpochs?: number[]
  /** Engine that trained and why; real tokens per second of training time. */
  trainer?: string
  trainerReason?: string
  tokensPerSecond?: number
}

type Json = Record<string, unknown>

/** The most a model folder's JSON or vocabulary file may hold (a large tokenizer.json is ~10 MB). */
const MAX_SMALL_FILE = 256 * 1024 * 1024

/** A model folder's small file as text: a regular file of bounded size. */
function readSmallFile(path: string): string {
  return readRegularFile(path, MAX_SMALL_FILE, (file, problem) => new CheckpointError(`${file}: ${problem}`)).toString('utf8')
}

export function readJsonObject(path: string): Json {
  const text = readSmallFile(path)
  try {
    const v = JSON.parse(text)
    if (v == null || typeof v !== 'object' || Array.isArray(v)) throw new Error('not a JSON object')
    return v as Json
  } catch (e) {
    throw new CheckpointError(`${path}: invalid JSON (${(e as Error).message})`)
  }
}

// ------------------------------------------------------------------------------------------
// config.json

/** HF BertConfig JSON → BertConfig, with HF's defaults for absent keys. */
export function bertConfigFromHf(j: Json, file = CONFIG_FILE): BertConfig {
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
    const charCnn = charCnnFromHf(j.char_cnn)
    if (charCnn) config.charCnn = charCnn
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
    ...(c.charCnn ? { char_cnn: charCnnToHf(c.charCnn) } : {}),
    id2label: Object.fromEntries(labels.map((l, i) => [String(i), l])),
    label2id: Object.fromEntries(labels.map((l, i) => [l, i])),
    [HEADS_KEY]: Object.fromEntries([...heads].map(([name, h]) => [name, h.labels])),
  }
}

// ------------------------------------------------------------------------------------------
// vocab / tokenizer settings

/**
 * The WordPiece vocabulary and the file it came from: vocab.txt (HF load_vocab), else
 * tokenizer.json, whose ids are checked by vocabFromTokenizerJson (errors name tokenizer.json).
 */
function readVocab(dir: string, notes: string[]): { vocab: string[]; file: string } {
  const vocabPath = join(dir, VOCAB_FILE)
  if (existsSync(vocabPath)) return { vocab: parseVocabText(readSmallFile(vocabPath)), file: vocabPath }
  const tokJson = join(dir, 'tokenizer.json')
  if (existsSync(tokJson)) {
    const vocab = vocabFromTokenizerJson(readJsonObject(tokJson), tokJson)
    notes.push('vocab.txt absent: vocabulary taken from tokenizer.json')
    return { vocab, file: tokJson }
  }
  throw new CheckpointError(`${vocabPath}: missing (the WordPiece vocabulary is needed to tokenize)`)
}

/** do_lower_case as a checkpoint folder states it (tokenizer_config.json, else tokenizer.json), if it does. */
export function declaredLowercase(dir: string): boolean | undefined {
  const tc = join(dir, 'tokenizer_config.json')
  if (existsSync(tc)) {
    const v = readJsonObject(tc).do_lower_case
    if (typeof v === 'boolean') return v
  }
  const tj = join(dir, 'tokenizer.json')
  if (existsSync(tj)) {
    const n = readJsonObject(tj).normalizer as { type?: string; lowercase?: boolean } | null
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
    const arch = readJsonObject(join(dir, CONFIG_FILE)).architectures
    if (Array.isArray(arch) && arch.includes('BertForTokenClassification')) cls = 'AutoModelForTokenClassification'
  } catch {
    // no usable config: keep AutoModel
  }
  return `python -c "from transformers import ${cls} as M; d=r'${dir.replace(/'/g, "\\'")}'; M.from_pretrained(d).save_pretrained(d, safe_serialization=True)"`
}

/**
 * Where a model folder's files may resolve: the folder itself, or for a Hugging Face cache
 * snapshot (…/models--org--name/snapshots/<revision>, whose files are symlinks into ../../blobs)
 * the models--org--name root.
 */
function containmentRoot(dir: string): string {
  const real = realpathSync(dir)
  const parent = dirname(real)
  if (basename(parent) === 'snapshots' && basename(dirname(parent)).startsWith('models--')) return dirname(parent)
  return real
}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel !== '' && rel !== '..' && !rel.startsWith('..' + sep) && !isAbsolute(rel)
}

/** The shards an index's weight_map names, each a file inside the folder (see containmentRoot). */
function listedShards(dir: string, index: string): string[] {
  const map = readJsonObject(index).weight_map
  if (map == null || typeof map !== 'object' || Array.isArray(map)) throw new CheckpointError(`${index}: weight_map missing`)
  const names = new Set<string>()
  for (const [tensor, shard] of Object.entries(map as Record<string, unknown>)) {
    if (typeof shard !== 'string' || shard === '') throw new CheckpointError(`${index}: weight_map.${tensor} is ${JSON.stringify(shard)}, not a file name`)
    names.add(shard)
  }
  if (!names.size) throw new CheckpointError(`${index}: weight_map is empty`)
  const folder = resolve(dir)
  let root: string | undefined
  return [...names].sort().map((shard) => {
    const p = resolve(folder, shard)
    if (isAbsolute(shard) || !isInside(folder, p)) throw new CheckpointError(`${index}: weight_map names ${JSON.stringify(shard)}, which is outside the model folder`)
    if (!existsSync(p)) throw new CheckpointError(`${p}: shard listed in ${index} is missing`)
    root ??= containmentRoot(folder)
    const real = realpathSync(p)
    if (!isInside(root, real)) throw new CheckpointError(`${index}: weight_map names ${JSON.stringify(shard)}, which resolves to ${real}, outside ${root}`)
    return p
  })
}

/**
 * The files holding the weights: model.safetensors, or every shard listed in
 * model.safetensors.index.json (sorted); else pytorch_model.bin or the shards of
 * pytorch_model.bin.index.json (./safetensors reads them through ./torch-checkpoint). A folder
 * with only other frameworks' weights gets the one-line conversion command.
 */
export function findWeightFiles(dir: string): string[] {
  const single = join(dir, WEIGHTS_FILE)
  const index = join(dir, WEIGHTS_INDEX_FILE)
  if (existsSync(single)) return [single]
  if (existsSync(index)) return listedShards(dir, index)
  if (existsSync(join(dir, TORCH_WEIGHTS_FILE))) return [torchZipOrHint(dir, join(dir, TORCH_WEIGHTS_FILE))]
  if (existsSync(join(dir, TORCH_WEIGHTS_INDEX_FILE))) return listedShards(dir, join(dir, TORCH_WEIGHTS_INDEX_FILE)).map((p) => torchZipOrHint(dir, p))
  for (const other of ['tf_model.h5', 'flax_model.msgpack', 'model.ckpt.index']) {
    if (existsSync(join(dir, other))) {
      throw new CheckpointError(
        `${join(dir, other)}: FastBioNER reads weights from model.safetensors or pytorch_model.bin (other formats need their framework). ` +
          `Convert once with Python and transformers installed: ${convertHint(dir)}`,
      )
    }
  }
  throw new CheckpointError(`${single}: missing (no model weights in ${dir})`)
}

/**
 * A .bin file that does not start as a zip archive (torch.save's legacy format, or something
 * else under that name) cannot be read here: say so with the one-line conversion command.
 * Anything unreadable is left to the weight reader, which names the problem.
 */
function torchZipOrHint(dir: string, path: string): string {
  let fd: number
  try {
    fd = openRegularFile(path, (file, problem) => new CheckpointError(`${file}: ${problem}`)).fd
  } catch {
    return path
  }
  try {
    const head = Buffer.alloc(4)
    const n = readSync(fd, head, 0, 4, 0)
    if (n === 4 && head.readUInt32LE(0) === 0x04034b50) return path
  } finally {
    closeSync(fd)
  }
  throw new CheckpointError(
    `${path}: not in torch.save's zip format (PyTorch 1.6 or later), the only pytorch_model.bin FastBioNER reads (weights only); ` +
      `use the model's model.safetensors, or convert once with Python and transformers installed: ${convertHint(dir)}`,
  )
}

/** True when the folder holds weights findWeightFiles would find (without reading them). */
export function hasWeightFiles(dir: string): boolean {
  return [WEIGHTS_FILE, WEIGHTS_INDEX_FILE, TORCH_WEIGHTS_FILE, TORCH_WEIGHTS_INDEX_FILE].some((f) => existsSync(join(dir, f)))
}

/** torch [out, in] → ours [in, out] (and back: the transpose is its own inverse given shapes). */
export function transpose2d(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length)
  // Blocked so both sides stay in cache for BERT-base sized matrices.
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

// ------------------------------------------------------------------------------------------
// everything but the weights

export interface CheckpointInfo {
  dir: string
  configPath: string
  /** config.json as stored. */
  hf: Json
  config: BertConfig
  vocab: string[]
  lowercase: boolean
  /** fastbioner_heads from config.json; null when absent (a plain HF checkpoint). */
  configHeads: Record<string, string[]> | null
  /** The default head's labels from id2label; null when absent. */
  id2label: string[] | null
  /** Contents of fastbioner.json, if present. */
  metadata?: Json
  /** metadata.training (empty when the checkpoint was not trained here). */
  training: Partial<TrainingMetadata>
  /** Things inferred (casing, vocabulary source), for the log/UI. */
  notes: string[]
  /** chars.txt of an encoder with a character channel (config.char_cnn); null without one. */
  chars: WordFeaturizer | null
}

/** fastbioner.json of a model folder; undefined when there is none (a CheckpointError when it is not a JSON object). */
export function readMetadata(dir: string): Json | undefined {
  const metaPath = join(dir, METADATA_FILE)
  return existsSync(metaPath) ? readJsonObject(metaPath) : undefined
}

/**
 * fastbioner.json's training record, with the window settings tagging takes from it checked
 * (an untrusted folder's stride of "/dev/zero" would otherwise fail deep in the windowing code
 * with no file named): maxLength an integer in [3, max_position_embeddings], stride null or an
 * integer in [0, maxLength - 3], sentenceLevel a boolean.
 */
function trainingOf(metadata: Json | undefined, file: string, config: BertConfig): Partial<TrainingMetadata> {
  const t = metadata?.training
  if (t === undefined || t === null) return {}
  if (typeof t !== 'object' || Array.isArray(t)) throw new CheckpointError(`${file}: training must be an object, got ${JSON.stringify(t)}`)
  const training = t as Partial<TrainingMetadata>
  const bad = (key: string, want: string) => new CheckpointError(`${file}: training.${key} must be ${want}, got ${JSON.stringify((t as Json)[key])?.slice(0, 100)}`)
  const { maxLength, stride, sentenceLevel } = training
  if (maxLength !== undefined && (!Number.isInteger(maxLength) || maxLength < 3 || maxLength > config.maxPositionEmbeddings)) {
    throw bad('maxLength', `an integer from 3 to the model's max_position_embeddings ${config.maxPositionEmbeddings}`)
  }
  if (stride !== undefined && stride !== null) {
    const most = (maxLength ?? config.maxPositionEmbeddings) - 3
    if (!Number.isInteger(stride) || stride < 0 || stride > most) throw bad('stride', `null or an integer from 0 to ${most}`)
  }
  if (sentenceLevel !== undefined && typeof sentenceLevel !== 'boolean') throw bad('sentenceLevel', 'true or false')
  return training
}

/** Bounds on a stated benchmark: it is only shown, so a folder cannot make the registry hold much. */
const MAX_BENCHMARK_ROWS = 32
const MAX_BENCHMARK_TEXT = 120

/**
 * fastbioner.json's `benchmark` (ModelBenchmark: what the recipe that built the model measured on
 * public corpora), checked; null when the file states none. A CheckpointError naming the file and
 * the key when it is not one.
 */
export function benchmarkOf(metadata: Json | undefined, file: string): ModelBenchmark | null {
  const b = metadata?.benchmark
  if (b === undefined || b === null) return null
  const bad = (key: string, want: string, got: unknown) => new CheckpointError(`${file}: benchmark${key} must be ${want}, got ${JSON.stringify(got)?.slice(0, 100)}`)
  if (typeof b !== 'object' || Array.isArray(b)) throw bad('', 'an object', b)
  const { split, tagging, scores } = b as Json
  if (split !== 'devel' && split !== 'test') throw bad('.split', '"devel" or "test"', split)
  const text = (v: unknown) => typeof v === 'string' && v.length > 0 && v.length <= MAX_BENCHMARK_TEXT
  if (!text(tagging)) throw bad('.tagging', `a text of 1 to ${MAX_BENCHMARK_TEXT} characters`, tagging)
  if (!Array.isArray(scores) || scores.length === 0 || scores.length > MAX_BENCHMARK_ROWS) throw bad('.scores', `a list of 1 to ${MAX_BENCHMARK_ROWS} rows`, scores)
  return {
    split,
    tagging: tagging as string,
    scores: scores.map((r: unknown, i) => {
      const row = (r ?? {}) as Json
      if (typeof r !== 'object' || Array.isArray(r) || !text(row.corpus) || !text(row.type)) throw bad(`.scores[${i}]`, `{corpus, type, f1} with texts of 1 to ${MAX_BENCHMARK_TEXT} characters`, r)
      if (typeof row.f1 !== 'number' || !(row.f1 >= 0 && row.f1 <= 1)) throw bad(`.scores[${i}].f1`, 'a number from 0 to 1', row.f1)
      return { corpus: row.corpus as string, type: row.type as string, f1: row.f1 }
    }),
  }
}

/**
 * fastbioner.json for a model made from this one (retrained, adapted, quantized): its records, less
 * what was measured on this model alone (its benchmark), which the new model's weights no longer
 * match, and, unless the new model keeps every head (`sameHeads`: quantized, adapted), its head
 * routers (core/tag/router), which name heads a retrained model no longer has.
 */
export function inheritedMetadata(metadata: Json | undefined, { sameHeads }: { sameHeads: boolean }): Json {
  const { benchmark: _measuredOnTheSource, routers, ...records } = metadata ?? {}
  return sameHeads && routers !== undefined ? { ...records, routers } : records
}

/** Reads and checks config.json, the vocabulary, casing and fastbioner.json of a checkpoint folder. */
export function readCheckpointInfo(dir: string): CheckpointInfo {
  const notes: string[] = []
  const configPath = join(dir, CONFIG_FILE)
  if (!existsSync(configPath)) throw new CheckpointError(`${configPath}: missing (not a HuggingFace model directory)`)
  const hf = readJsonObject(configPath)
  const config = bertConfigFromHf(hf, configPath)
  const { vocab, file: vocabFile } = readVocab(dir, notes)
  if (vocab.length > config.vocabSize) {
    throw new CheckpointError(`${vocabFile}: ${vocab.length} tokens but config.json vocab_size is ${config.vocabSize}`)
  }
  const lowercase = readLowercase(dir, vocab, notes)
  const metadata = readMetadata(dir)
  const training = trainingOf(metadata, join(dir, METADATA_FILE), config)
  const chars = config.charCnn ? readCharVocabulary(dir, config.charCnn.charVocabSize) : null
  return { dir, configPath, hf, config, vocab, lowercase, configHeads: headsFromConfig(hf, configPath), id2label: labelsFromId2Label(hf, configPath), metadata, training, notes, chars }
}

/** chars.txt, checked against the size config.json gives it. */
export function readCharVocabulary(dir: string, size: number): WordFeaturizer {
  const path = join(dir, CHARS_FILE)
  if (!existsSync(path)) throw new CheckpointError(`${path}: missing (config.json has char_cnn, whose character vocabulary this is)`)
  const lines = readSmallFile(path).split('\n')
  if (lines.at(-1) === '') lines.pop()
  const chars = lines.map((l) => l.replace(/\r$/, ''))
  if (chars.length !== size) throw new CheckpointError(`${path}: ${chars.length} characters, config.json says ${size}`)
  try {
    return charVocabulary(chars)
  } catch (e) {
    throw new CheckpointError(`${path}: ${(e as Error).message}`)
  }
}

/** chars.txt's text; a character that is a line break cannot be stored. */
export function charVocabularyText(chars: readonly string[], dir: string): string {
  const bad = chars.findIndex((t) => /[\n\r]/.test(t))
  if (bad >= 0) throw new CheckpointError(`${dir}: character list entry ${bad + 1} contains a line break`)
  return chars.join('\n') + '\n'
}

/**
 * Labels of every head config.json names: fastbioner_heads, else id2label as the default head
 * (['O'] when config.json has neither).
 */
export function headLabelsOf(info: Pick<CheckpointInfo, 'configHeads' | 'id2label'>): Record<string, string[]> {
  if (info.configHeads && Object.keys(info.configHeads).length) return info.configHeads
  return { [DEFAULT_HEAD]: info.id2label?.length ? info.id2label : ['O'] }
}
