// The word-level recurrent tagger: per word, a lower-cased word embedding, a character CNN (max
// over the word's characters) and case/shape flags → dropout → BiLSTM → dropout → one linear
// layer per head → CRF (Lample et al. 2016 / Ma & Hovy 2016). Measured on this machine's CPU it
// learns far more from a few thousand labelled sentences than a from-scratch transformer over
// word pieces (docs/ACCURACY.md); it is the project's from-scratch teacher.
//
// Parameters (tfjs layout, [in, out]; the LSTM's two directions stacked on the first axis, forward
// then backward; gates i, f, g, o as PyTorch):
//   embeddings.word_embeddings.weight [Vw, Dw]       char_cnn.char_embeddings.weight [Vc, Dc]
//   char_cnn.conv.weight [w·Dc, F]  char_cnn.conv.bias [F]
//   lstm.weight_ih [2, Din, 4H]  lstm.weight_hh [2, H, 4H]  lstm.bias [2, 4H]
//   classifier.weight [2H, C]  classifier.bias [C]  (classifiers.<head>.* for named heads)
//   crf.transitions [C, C]  crf.start_transitions [C]  crf.end_transitions [C]  (crfs.<head>.*)
//   char_lm.* (./char-lm.ts), with `charLm`: a character language model, frozen, whose states
//   per word (forward after the word's last character, backward after its first) join the inputs.

import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { charCnnParamNames, type CharCnnDims } from './char-cnn-config'
import { crfParamShapes } from './crf'
import { CheckpointError, CHARS_FILE, CONFIG_FILE, HEADS_KEY, headLabelsOf, METADATA_FILE, readCheckpointInfo, readJsonObject, VOCAB_FILE, WEIGHTS_FILE } from './checkpoint-files'
import { readSafetensors, serializeSafetensors, type TensorToWrite } from './safetensors'
import { dequantizeRows, INT8_SCALE_SUFFIX, quantizeRows } from './int8'
import { removeStaleTempFiles, writeFileAtomic } from '../fs/atomic'
import { Rng } from '../rng'
import { SHAPE_FLAGS, WordFeaturizer } from '../nlp/word-features'
import { CHAR_LM_PREFIX, CharLmEncoder, charLmConfigFrom, charLmConfigJson, charLmParamShapes, SENTENCE_BREAK, type CharLmDims } from './char-lm'

export const WORD_TAGGER_MODEL_TYPE = 'fastbioner-word-tagger'

/** Sizes of the word-level tagger (its character CNN's are the BERT channel's); the defaults are WORD_TAGGER_DEFAULTS. */
export interface WordTaggerDims extends CharCnnDims {
  wordVocabSize: number
  wordDim: number
  /** Hidden size of each LSTM direction. */
  lstmHidden: number
  /** A character language model whose per-word states are inputs too (absent: none); its characters, <unk> first. */
  charLm?: CharLmDims & { chars: readonly string[] }
}

/** Width of the features of the character LM's states: both directions. */
export function charLmStateDim(d: Pick<WordTaggerDims, 'charLm'>): number {
  return d.charLm ? 2 * d.charLm.hidden : 0
}

export function wordTaggerInputDim(d: WordTaggerDims): number {
  return d.wordDim + d.charFilters + d.shapeFlags + charLmStateDim(d)
}

/** config.json of a word tagger. */
export interface WordTaggerConfig extends WordTaggerDims {
  modelType: typeof WORD_TAGGER_MODEL_TYPE
  /** Dropout on the input features and on the BiLSTM output. */
  dropout: number
  /** Probability of replacing a word seen once in training by <unk> while training. */
  singletonUnk: number
}

export const WORD_TAGGER_DEFAULTS = {
  wordDim: 100,
  charDim: 30,
  charFilters: 50,
  charWidth: 3,
  maxChars: 25,
  lstmHidden: 200,
  dropout: 0.5,
  singletonUnk: 0.5,
} as const

export function wordTaggerConfig(f: WordFeaturizer, over: Partial<WordTaggerConfig> = {}): WordTaggerConfig {
  return {
    modelType: WORD_TAGGER_MODEL_TYPE,
    wordVocabSize: f.words.length,
    charVocabSize: f.chars.length,
    shapeFlags: SHAPE_FLAGS,
    ...WORD_TAGGER_DEFAULTS,
    ...over,
  }
}

const headPrefix = (head: string): string => (head === 'default' ? 'classifier' : `classifiers.${head}`)

/** Parameter names and shapes of a word tagger with these heads (CRF scores included). */
/** The word-embedding table: most of a word tagger's bytes, what its int8 form stores as int8. */
export const WORD_TAGGER_EMBEDDINGS = 'embeddings.word_embeddings.weight'

export function wordTaggerParamShapes(c: WordTaggerConfig, heads: ReadonlyArray<{ name: string; numLabels: number }>): Map<string, number[]> {
  const H = c.lstmHidden
  const shapes = new Map<string, number[]>([
    [WORD_TAGGER_EMBEDDINGS, [c.wordVocabSize, c.wordDim]],
    ['char_cnn.char_embeddings.weight', [c.charVocabSize, c.charDim]],
    ['char_cnn.conv.weight', [c.charWidth * c.charDim, c.charFilters]],
    ['char_cnn.conv.bias', [c.charFilters]],
    ['lstm.weight_ih', [2, wordTaggerInputDim(c), 4 * H]],
    ['lstm.weight_hh', [2, H, 4 * H]],
    ['lstm.bias', [2, 4 * H]],
  ])
  if (c.charLm) for (const [name, shape] of charLmParamShapes(c.charLm)) shapes.set(name, shape)
  for (const h of heads) {
    shapes.set(`${headPrefix(h.name)}.weight`, [2 * H, h.numLabels])
    shapes.set(`${headPrefix(h.name)}.bias`, [h.numLabels])
    for (const [name, shape] of crfParamShapes(h.name, h.numLabels)) shapes.set(name, shape)
  }
  return shapes
}

/**
 * PyTorch's default initialisation of the same modules: embeddings N(0, 1), Conv1d / Linear /
 * LSTM uniform ±1/√fan_in (the LSTM's two biases summed), CRF scores zero.
 */
export function initWordTaggerParams(c: WordTaggerConfig, heads: ReadonlyArray<{ name: string; numLabels: number }>, seed: number): Map<string, Float32Array> {
  const rng = new Rng(seed)
  const uniform = (size: number, bound: number) => {
    const out = new Float32Array(size)
    for (let i = 0; i < size; i++) out[i] = (rng.next() * 2 - 1) * bound
    return out
  }
  const params = new Map<string, Float32Array>()
  for (const [name, shape] of wordTaggerParamShapes(c, heads)) {
    const size = shape.reduce((a, b) => a * b, 1)
    let value: Float32Array
    if (name.endsWith('embeddings.weight')) value = rng.normalArray(size, 1)
    else if (name.startsWith('char_cnn.conv.')) value = uniform(size, 1 / Math.sqrt(c.charWidth * c.charDim))
    else if (name === 'lstm.bias') {
      const a = uniform(size, 1 / Math.sqrt(c.lstmHidden))
      const b = uniform(size, 1 / Math.sqrt(c.lstmHidden))
      value = a.map((v, i) => v + b[i])
    } else if (name.startsWith('lstm.')) value = uniform(size, 1 / Math.sqrt(c.lstmHidden))
    else if (name.startsWith('classifier')) value = uniform(size, 1 / Math.sqrt(2 * c.lstmHidden))
    else if (name.startsWith(CHAR_LM_PREFIX)) value = new Float32Array(size) // the language model's own weights are set from it
    else value = new Float32Array(size) // CRF scores
    params.set(name, value)
  }
  return params
}

/** A batch of sentences at word level, padded to `steps` words. */
export interface WordBatch {
  batchSize: number
  /** Padded word positions (the graph's bucket). */
  steps: number
  /** [B, T] real word count of each row. */
  lengths: number[]
  wordIds: BigInt64Array
  /** [B, T, maxChars] */
  charIds: BigInt64Array
  /** [B, T, SHAPE_FLAGS] */
  shapes: Float32Array
  /** [B·T]: row b·T + t holds b·T + (len_b − 1 − t) for t < len_b, else itself. */
  reverseIndex: BigInt64Array
  /** Real words in the batch. */
  numWords: number
  /** With a character LM, in training: its states of each word [B, T, 2H_lm], computed once per sentence (the trainer fills them). */
  charLmStates?: Float32Array
}

/**
 * The character LM's view of a batch: each sentence's words joined by spaces, after a line break,
 * forward and reversed. `ids` [2, B, L] (direction d's character k as row d·V + k of the stacked
 * table), `lengths` [B] (characters per row, the line break included), `positions` [2, B·T]: per
 * word, the row of [B·L] whose state it reads: forward, after the word's last character; backward,
 * after its first (padding words read row 0).
 */
export interface CharLmInputs {
  ids: BigInt64Array
  lengths: Int32Array
  positions: BigInt64Array
  /** L */
  steps: number
}

const charLmEncoders = new WeakMap<readonly string[], CharLmEncoder>()

export function charLmInputs(lm: NonNullable<WordTaggerDims['charLm']>, sentences: readonly (readonly string[])[], steps: number): CharLmInputs {
  let encoder = charLmEncoders.get(lm.chars)
  if (!encoder) charLmEncoders.set(lm.chars, (encoder = new CharLmEncoder(lm.chars)))
  const B = sentences.length
  const T = steps
  const V = lm.charVocabSize
  const texts = sentences.map((words) => Array.from(words.join(' ')))
  const L = 1 + Math.max(1, ...texts.map((t) => t.length))
  const ids = new BigInt64Array(2 * B * L)
  const lengths = new Int32Array(B)
  const positions = new BigInt64Array(2 * B * T)
  const breakId = encoder.id(SENTENCE_BREAK)
  texts.forEach((chars, b) => {
    const n = chars.length
    lengths[b] = n + 1
    ids[b * L] = BigInt(breakId)
    ids[(B + b) * L] = BigInt(breakId + V)
    for (let i = 0; i < n; i++) {
      const k = encoder.id(chars[i])
      ids[b * L + 1 + i] = BigInt(k)
      ids[(B + b) * L + n - i] = BigInt(k + V) // reversed: character i at n − i
    }
    let start = 0
    sentences[b].forEach((w, t) => {
      const len = Array.from(w).length
      positions[b * T + t] = BigInt(b * L + start + len) // forward: after the last character (index s + len, the line break first)
      positions[(B + b) * T + t] = BigInt(b * L + n - start) // backward: after the first (index n − s)
      start += len + 1
    })
  })
  return { ids, lengths, positions, steps: L }
}

/** The bucket a sentence of n words runs in: the next multiple of 8 (fewer graphs, little padding). */
export function wordBucket(n: number): number {
  return Math.max(8, Math.ceil(n / 8) * 8)
}

/**
 * Features of `sentences` (each a list of words) padded to `steps` words. `unk` (training) replaces
 * each singleton word by <unk> with the config's probability.
 */
export function wordBatch(f: WordFeaturizer, c: WordTaggerConfig, sentences: readonly (readonly string[])[], steps: number, unk?: Rng): WordBatch {
  const B = sentences.length
  const T = steps
  const wordIds = new BigInt64Array(B * T)
  const charIds = new BigInt64Array(B * T * c.maxChars)
  const shapes = new Float32Array(B * T * SHAPE_FLAGS)
  const reverseIndex = new BigInt64Array(B * T)
  const out = { wordIds, charIds, shapes }
  let numWords = 0
  const lengths = sentences.map((words, b) => {
    const n = words.length
    if (n > T) throw new Error(`word batch: a sentence of ${n} words does not fit ${T} steps`)
    for (let t = 0; t < T; t++) reverseIndex[b * T + t] = BigInt(b * T + (t < n ? n - 1 - t : t))
    words.forEach((w, t) => {
      f.encodeWord(w, b * T + t, c.maxChars, out)
      if (unk && f.singletons.has(Number(wordIds[b * T + t])) && unk.next() < c.singletonUnk) wordIds[b * T + t] = 1n
    })
    numWords += n
    return n
  })
  return { batchSize: B, steps: T, lengths, wordIds, charIds, shapes, reverseIndex, numWords }
}

// ---- model folder --------------------------------------------------------------------------
// config.json (model_type fastbioner-word-tagger, sizes, fastbioner_heads: each head's labels), words.txt and
// chars.txt (the vocabularies, one entry per line, <pad> and <unk> first), vocab.txt (the special
// tokens only, so the one tagging path's word splitter gives each word exactly one piece and
// windows count words), model.safetensors (the parameters above), fastbioner.json (training
// record). Files are replaced one by one, atomically, config.json last.

export const WORDS_FILE = 'words.txt'
export { CHARS_FILE }
/** vocab.txt of a word tagger: each word becomes one [UNK] piece. */
export const WORD_TAGGER_PIECE_VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']

const CONFIG_KEYS: Array<[keyof WordTaggerDims | 'dropout' | 'singletonUnk', string, number]> = [
  ['wordVocabSize', 'word_vocab_size', 1e7],
  ['wordDim', 'word_dim', 4096],
  ['charVocabSize', 'char_vocab_size', 1e6],
  ['charDim', 'char_dim', 4096],
  ['charFilters', 'char_filters', 4096],
  ['charWidth', 'char_width', 31],
  ['maxChars', 'max_chars', 1000],
  ['shapeFlags', 'shape_flags', SHAPE_FLAGS],
  ['lstmHidden', 'lstm_hidden', 4096],
  ['dropout', 'dropout', 1],
  ['singletonUnk', 'singleton_unk', 1],
]

/** config.json key of the character LM's sizes and characters. */
const CHAR_LM_KEY = 'char_lm'

export interface WordTaggerFolder {
  config: WordTaggerConfig
  featurizer: WordFeaturizer
  /** Head name → its labels. */
  heads: Record<string, string[]>
  params: Map<string, Float32Array>
  metadata?: Record<string, unknown>
  /** As loaded: the parameters the folder stored as int8 rows (dequantized in `params`). */
  storedInt8?: string[]
}

export function headsOf(heads: Record<string, readonly string[]>): Array<{ name: string; numLabels: number }> {
  return Object.entries(heads).map(([name, labels]) => ({ name, numLabels: labels.length }))
}

/** True when `dir/config.json` declares a word tagger (a BERT folder, or none, is false). */
/**
 * A BERT character channel that starts as this word tagger's character CNN (distillation from a
 * word tagger, issue 25: "the student's channel initialised from the teacher's"): its character
 * vocabulary, sizes, and the embeddings and convolution under the channel's names (both in our
 * [in, out] layout); the projection is the student's own and starts at zero.
 */
export function charChannelOf(m: Pick<WordTaggerFolder, 'config' | 'featurizer' | 'params'>): { chars: WordFeaturizer; dims: Pick<CharCnnDims, 'charDim' | 'charFilters' | 'charWidth' | 'maxChars'>; params: Map<string, Float32Array> } {
  const n = charCnnParamNames()
  const take = (name: string) => m.params.get(name) ?? (() => { throw new Error(`word tagger has no ${name}`) })()
  return {
    chars: new WordFeaturizer(['<pad>', '<unk>'], m.featurizer.chars),
    dims: { charDim: m.config.charDim, charFilters: m.config.charFilters, charWidth: m.config.charWidth, maxChars: m.config.maxChars },
    params: new Map([
      [n.embeddings, take('char_cnn.char_embeddings.weight')],
      [`${n.conv}.weight`, take('char_cnn.conv.weight')],
      [`${n.conv}.bias`, take('char_cnn.conv.bias')],
    ]),
  }
}

export function isWordTaggerFolder(dir: string): boolean {
  const path = join(dir, CONFIG_FILE)
  if (!existsSync(path)) return false
  try {
    return readJsonObject(path).model_type === WORD_TAGGER_MODEL_TYPE
  } catch {
    return false
  }
}

function vocabLines(list: readonly string[], what: string, dir: string): string {
  const bad = list.findIndex((t) => /[\n\r]/.test(t))
  if (bad >= 0) throw new CheckpointError(`${dir}: ${what} entry ${bad + 1} contains a line break`)
  return list.join('\n') + '\n'
}

/**
 * Writes the folder. `int8` names 2-D parameters to store as per-row int8 + float32 scales
 * (model/int8, the layout of BERT int8 folders): the loader dequantizes them, so only the bytes on
 * disk change, not the arithmetic.
 */
export function saveWordTagger(dir: string, m: WordTaggerFolder, opts: { int8?: readonly string[] } = {}): void {
  mkdirSync(dir, { recursive: true })
  removeStaleTempFiles(dir)
  const shapes = wordTaggerParamShapes(m.config, headsOf(m.heads))
  const int8 = new Set(opts.int8 ?? [])
  const tensors = new Map<string, TensorToWrite>()
  for (const [name, shape] of shapes) {
    const data = m.params.get(name)
    if (!data) throw new CheckpointError(`${dir}: parameter ${name} has no value`)
    if (int8.delete(name)) {
      if (shape.length !== 2) throw new CheckpointError(`${dir}: parameter ${name} is not a matrix; it cannot be stored as int8 rows`)
      const q = quantizeRows(data, shape[0], shape[1])
      tensors.set(name, { shape, data: q.values, dtype: 'I8' })
      tensors.set(name + INT8_SCALE_SUFFIX, { shape: [shape[0]], data: q.scale })
    } else tensors.set(name, { shape, data })
  }
  if (int8.size) throw new CheckpointError(`${dir}: no parameter ${[...int8].join(', ')} to store as int8`)
  writeFileAtomic(join(dir, WEIGHTS_FILE), serializeSafetensors(tensors, { format: 'pt' }))
  writeFileAtomic(join(dir, WORDS_FILE), [vocabLines(m.featurizer.words, 'word list', dir)])
  writeFileAtomic(join(dir, CHARS_FILE), [vocabLines(m.featurizer.chars, 'character list', dir)])
  writeFileAtomic(join(dir, VOCAB_FILE), [WORD_TAGGER_PIECE_VOCAB.join('\n') + '\n'])
  if (m.metadata) writeFileAtomic(join(dir, METADATA_FILE), [JSON.stringify(m.metadata, null, 2) + '\n'])
  const json: Record<string, unknown> = { model_type: WORD_TAGGER_MODEL_TYPE, architectures: ['FastBioNERWordTagger'] }
  for (const [key, name] of CONFIG_KEYS) json[name] = m.config[key]
  if (m.config.charLm) json[CHAR_LM_KEY] = charLmConfigJson(m.config.charLm, m.config.charLm.chars)
  // The key BERT folders use, so what reads only head labels (readCheckpointInfo) reads these too.
  json[HEADS_KEY] = m.heads
  writeFileAtomic(join(dir, CONFIG_FILE), [JSON.stringify(json, null, 2) + '\n'])
}

function readLines(path: string): string[] {
  const lines = readFileSync(path, 'utf8').split('\n')
  if (lines.at(-1) === '') lines.pop()
  return lines.map((l) => l.replace(/\r$/, ''))
}

/** Each head's labels of any model folder this product makes (a BERT checkpoint or a word tagger). */
export function folderHeadLabels(dir: string): Record<string, string[]> {
  if (isWordTaggerFolder(dir)) return readWordTaggerHeads(dir)
  return headLabelsOf(readCheckpointInfo(dir))
}

/** The heads and their labels from a word tagger's config.json (without reading the weights). */
export function readWordTaggerHeads(dir: string): Record<string, string[]> {
  const cfgPath = join(dir, CONFIG_FILE)
  return headLabelsFrom(readJsonObject(cfgPath)[HEADS_KEY], cfgPath)
}

function headLabelsFrom(heads: unknown, cfgPath: string): Record<string, string[]> {
  if (!heads || typeof heads !== 'object' || Array.isArray(heads) || Object.keys(heads).length === 0) throw new CheckpointError(`${cfgPath}: ${HEADS_KEY} must map each head to its labels`)
  for (const [name, labels] of Object.entries(heads)) {
    if (!Array.isArray(labels) || labels.length < 1 || labels.some((l) => typeof l !== 'string')) throw new CheckpointError(`${cfgPath}: head ${name} must list its labels as strings`)
  }
  return heads as Record<string, string[]>
}

/** Reads a word tagger folder; every size is checked against config.json and the weights. */
export function loadWordTagger(dir: string): WordTaggerFolder {
  const cfgPath = join(dir, CONFIG_FILE)
  const j = readJsonObject(cfgPath)
  if (j.model_type !== WORD_TAGGER_MODEL_TYPE) throw new CheckpointError(`${cfgPath}: model_type is not ${WORD_TAGGER_MODEL_TYPE}`)
  const config = { modelType: WORD_TAGGER_MODEL_TYPE } as WordTaggerConfig
  for (const [key, name, max] of CONFIG_KEYS) {
    const v = j[name]
    const fraction = key === 'dropout' || key === 'singletonUnk'
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > max || (!fraction && (!Number.isInteger(v) || v < 1))) {
      throw new CheckpointError(`${cfgPath}: ${name} must be ${fraction ? 'a number in [0, 1]' : `an integer in [1, ${max}]`}, got ${JSON.stringify(v)}`)
    }
    ;(config as unknown as Record<string, number>)[key] = v
  }
  if (config.charWidth % 2 !== 1) throw new CheckpointError(`${cfgPath}: char_width must be odd, got ${config.charWidth}`)
  const lm = j[CHAR_LM_KEY]
  if (lm !== undefined) {
    if (!lm || typeof lm !== 'object' || Array.isArray(lm)) throw new CheckpointError(`${cfgPath}: ${CHAR_LM_KEY} must be an object`)
    config.charLm = charLmConfigFrom(lm as Record<string, unknown>, `${cfgPath} ${CHAR_LM_KEY}`)
  }
  const headLabels = headLabelsFrom(j[HEADS_KEY], cfgPath)
  const words = readLines(join(dir, WORDS_FILE))
  const chars = readLines(join(dir, CHARS_FILE))
  if (words.length !== config.wordVocabSize) throw new CheckpointError(`${join(dir, WORDS_FILE)}: ${words.length} words, config.json says ${config.wordVocabSize}`)
  if (chars.length !== config.charVocabSize) throw new CheckpointError(`${join(dir, CHARS_FILE)}: ${chars.length} characters, config.json says ${config.charVocabSize}`)
  let featurizer: WordFeaturizer
  try {
    featurizer = new WordFeaturizer(words, chars)
  } catch (e) {
    throw new CheckpointError(`${dir}: ${(e as Error).message}`)
  }
  const stored = readSafetensors(join(dir, WEIGHTS_FILE))
  const params = new Map<string, Float32Array>()
  const storedInt8: string[] = []
  for (const [name, shape] of wordTaggerParamShapes(config, headsOf(headLabels))) {
    const t = stored.tensors.get(name)
    if (!t) throw new CheckpointError(`${join(dir, WEIGHTS_FILE)}: no tensor ${name}`)
    if (t.shape.join() !== shape.join()) throw new CheckpointError(`${join(dir, WEIGHTS_FILE)}: ${name} is [${t.shape}], config.json implies [${shape}]`)
    let data: Float32Array
    if (t.dtype === 'I8') {
      // An int8 folder (fastbioner quantize): rows × their scales.
      const scale = stored.tensors.get(name + INT8_SCALE_SUFFIX)
      if (!scale || !(scale.data instanceof Float32Array) || scale.shape.join() !== String(shape[0])) throw new CheckpointError(`${join(dir, WEIGHTS_FILE)}: int8 tensor ${name} needs a float32 ${name}${INT8_SCALE_SUFFIX} of [${shape[0]}]`)
      data = dequantizeRows(t.data, scale.data, shape[0], shape[1])
      storedInt8.push(name)
    } else if (t.data instanceof Float32Array) data = t.data
    else throw new CheckpointError(`${join(dir, WEIGHTS_FILE)}: ${name} is not a float tensor`)
    for (let i = 0; i < data.length; i++) {
      if (!Number.isFinite(data[i])) throw new CheckpointError(`${join(dir, WEIGHTS_FILE)}: ${name} holds a non-finite value at index ${i}`)
    }
    params.set(name, data)
  }
  const metaPath = join(dir, METADATA_FILE)
  const metadata = existsSync(metaPath) ? readJsonObject(metaPath) : undefined
  return { config, featurizer, heads: headLabels, params, metadata, storedInt8 }
}
