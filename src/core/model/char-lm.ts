// A character language model of running text (Akbik et al. 2018's contextual string embeddings,
// small): per direction, character embeddings → one LSTM layer → a linear decoder over the
// characters. The forward model reads the text left to right, the backward one right to left; both
// are stored, trained and run stacked as one recurrence [2, ·], as the word tagger's BiLSTM is. A
// word tagger with `charLmHidden` reads, per word, the forward state after the word's last
// character and the backward state after its first (bench/torch_charlm_tagger_ref.py, the PyTorch
// prototype: +2.8 devel F1 on BC5CDR chemicals).
//
// Parameters (tfjs layout [in, out]; direction 0 forward, 1 backward; gates i, f, g, o as PyTorch):
//   char_lm.embeddings.weight [2·V, E]   (direction d's character k in row d·V + k)
//   char_lm.lstm.weight_ih [2, E, 4H]  char_lm.lstm.weight_hh [2, H, 4H]  char_lm.lstm.bias [2, 4H]
//   char_lm.decoder.weight [2, H, V]  char_lm.decoder.bias [2, V]
//
// Text is read by code points; a line break ends a sentence (the unlabelled text has one per
// line), and every sentence the model reads starts after one.

import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { CheckpointError, CONFIG_FILE, METADATA_FILE, readJsonObject, WEIGHTS_FILE } from './checkpoint-files'
import { readSafetensors, serializeSafetensors, type TensorToWrite } from './safetensors'
import { removeStaleTempFiles, writeFileAtomic } from '../fs/atomic'
import { Rng } from '../rng'

export const CHAR_LM_MODEL_TYPE = 'fastbioner-char-lm'

export interface CharLmDims {
  /** V: the characters of the vocabulary, <unk> first. */
  charVocabSize: number
  /** E */
  charDim: number
  /** H of each direction. */
  hidden: number
}

export const CHAR_LM_DEFAULTS = {
  charDim: 64,
  hidden: 512,
  /** Dropout on the LSTM's output, before the decoder. */
  dropout: 0.1,
  /** A character seen fewer times is <unk>. */
  minCount: 20,
} as const

/** Every parameter of a character LM starts with it (in a word tagger's folder too). */
export const CHAR_LM_PREFIX = 'char_lm.'

export const CHAR_LM_PARAMS = {
  embeddings: 'char_lm.embeddings.weight',
  weightIh: 'char_lm.lstm.weight_ih',
  weightHh: 'char_lm.lstm.weight_hh',
  bias: 'char_lm.lstm.bias',
  decoderWeight: 'char_lm.decoder.weight',
  decoderBias: 'char_lm.decoder.bias',
} as const

/** The sentence separator: every sentence is read after one. */
export const SENTENCE_BREAK = '\n'
export const CHAR_LM_UNK = '<unk>'

export function charLmParamShapes(d: CharLmDims): Map<string, number[]> {
  const { charVocabSize: V, charDim: E, hidden: H } = d
  return new Map([
    [CHAR_LM_PARAMS.embeddings, [2 * V, E]],
    [CHAR_LM_PARAMS.weightIh, [2, E, 4 * H]],
    [CHAR_LM_PARAMS.weightHh, [2, H, 4 * H]],
    [CHAR_LM_PARAMS.bias, [2, 4 * H]],
    [CHAR_LM_PARAMS.decoderWeight, [2, H, V]],
    [CHAR_LM_PARAMS.decoderBias, [2, V]],
  ])
}

/** PyTorch's defaults for the same modules: embeddings N(0, 1); LSTM and decoder U(±1/√H), the LSTM's two biases summed. */
export function initCharLmParams(d: CharLmDims, seed: number): Map<string, Float32Array> {
  const rng = new Rng(seed)
  const bound = 1 / Math.sqrt(d.hidden)
  const uniform = (size: number) => Float32Array.from({ length: size }, () => (rng.next() * 2 - 1) * bound)
  const params = new Map<string, Float32Array>()
  for (const [name, shape] of charLmParamShapes(d)) {
    const size = shape.reduce((a, b) => a * b, 1)
    if (name === CHAR_LM_PARAMS.embeddings) params.set(name, rng.normalArray(size, 1))
    else if (name === CHAR_LM_PARAMS.bias) {
      const a = uniform(size)
      const b = uniform(size)
      params.set(name, a.map((v, i) => v + b[i]))
    } else params.set(name, uniform(size))
  }
  return params
}

/** Every character seen at least `minCount` times (the sentence break always), sorted, after <unk>. */
export function charLmVocabulary(counts: ReadonlyMap<string, number>, minCount: number): string[] {
  const kept = [...counts].filter(([ch, n]) => n >= minCount || ch === SENTENCE_BREAK).map(([ch]) => ch)
  if (!kept.includes(SENTENCE_BREAK)) kept.push(SENTENCE_BREAK)
  return [CHAR_LM_UNK, ...kept.sort()]
}

/** Characters → ids of a vocabulary (unknown → 0). */
export class CharLmEncoder {
  private readonly ids = new Map<string, number>()
  constructor(readonly chars: readonly string[]) {
    chars.forEach((ch, i) => {
      if (i > 0) this.ids.set(ch, i)
    })
  }
  id(ch: string): number {
    return this.ids.get(ch) ?? 0
  }
  /** The ids of `text`'s code points. */
  encode(text: string): Uint16Array {
    const cps = Array.from(text)
    return Uint16Array.from(cps, (ch) => this.id(ch))
  }
}

// ---- model folder --------------------------------------------------------------------------
// config.json (model_type fastbioner-char-lm, sizes, the characters as a JSON list: they include
// the line break and the space), model.safetensors, fastbioner.json (training record). Files are
// replaced one by one, atomically, config.json last.

export interface CharLmFolder {
  dims: CharLmDims
  dropout: number
  chars: string[]
  params: Map<string, Float32Array>
  metadata?: Record<string, unknown>
}

/** The sizes and characters of a config.json object (a character LM's, or a word tagger's `char_lm`), checked. */
export function charLmConfigFrom(j: Record<string, unknown>, where: string): CharLmDims & { chars: string[] } {
  const size = (key: string, max: number): number => {
    const v = j[key]
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max) throw new CheckpointError(`${where}: ${key} must be an integer in [1, ${max}], got ${JSON.stringify(v)}`)
    return v
  }
  const dims: CharLmDims = { charVocabSize: size('char_vocab_size', 65536), charDim: size('char_dim', 4096), hidden: size('hidden_size', 8192) }
  const chars = j.chars
  if (!Array.isArray(chars) || chars.length !== dims.charVocabSize || chars.some((c, i) => typeof c !== 'string' || (i > 0 && Array.from(c).length !== 1)) || chars[0] !== CHAR_LM_UNK || new Set(chars).size !== chars.length) {
    throw new CheckpointError(`${where}: chars must list ${dims.charVocabSize} distinct single characters, ${CHAR_LM_UNK} first`)
  }
  return { ...dims, chars: chars as string[] }
}

/** config.json's form of a character LM's sizes and characters. */
export function charLmConfigJson(d: CharLmDims, chars: readonly string[]): Record<string, unknown> {
  return { char_vocab_size: d.charVocabSize, char_dim: d.charDim, hidden_size: d.hidden, chars }
}

export function saveCharLm(dir: string, m: CharLmFolder): void {
  mkdirSync(dir, { recursive: true })
  removeStaleTempFiles(dir)
  if (m.chars.length !== m.dims.charVocabSize) throw new CheckpointError(`${dir}: ${m.chars.length} characters for a vocabulary of ${m.dims.charVocabSize}`)
  const tensors = new Map<string, TensorToWrite>()
  for (const [name, shape] of charLmParamShapes(m.dims)) {
    const data = m.params.get(name)
    if (!data) throw new CheckpointError(`${dir}: parameter ${name} has no value`)
    tensors.set(name, { shape, data })
  }
  writeFileAtomic(join(dir, WEIGHTS_FILE), serializeSafetensors(tensors, { format: 'pt' }))
  if (m.metadata) writeFileAtomic(join(dir, METADATA_FILE), [JSON.stringify(m.metadata, null, 2) + '\n'])
  const config = { model_type: CHAR_LM_MODEL_TYPE, ...charLmConfigJson(m.dims, m.chars), dropout: m.dropout }
  writeFileAtomic(join(dir, CONFIG_FILE), [JSON.stringify(config) + '\n'])
}

export function isCharLmFolder(dir: string): boolean {
  try {
    return existsSync(join(dir, CONFIG_FILE)) && readJsonObject(join(dir, CONFIG_FILE)).model_type === CHAR_LM_MODEL_TYPE
  } catch {
    return false
  }
}

/** Reads a character LM folder; every size is checked against config.json and the weights. */
export function loadCharLm(dir: string): CharLmFolder {
  const cfgPath = join(dir, CONFIG_FILE)
  const j = readJsonObject(cfgPath)
  if (j.model_type !== CHAR_LM_MODEL_TYPE) throw new CheckpointError(`${cfgPath}: model_type is not ${CHAR_LM_MODEL_TYPE}`)
  const { chars, ...dims } = charLmConfigFrom(j, cfgPath)
  const dropout = j.dropout
  if (typeof dropout !== 'number' || !(dropout >= 0 && dropout < 1)) throw new CheckpointError(`${cfgPath}: dropout must be a number in [0, 1)`)
  const stored = readSafetensors(join(dir, WEIGHTS_FILE))
  const params = new Map<string, Float32Array>()
  for (const [name, shape] of charLmParamShapes(dims)) {
    const t = stored.tensors.get(name)
    if (!t) throw new CheckpointError(`${join(dir, WEIGHTS_FILE)}: no tensor ${name}`)
    if (t.shape.join() !== shape.join()) throw new CheckpointError(`${join(dir, WEIGHTS_FILE)}: ${name} is [${t.shape}], config.json implies [${shape}]`)
    if (!(t.data instanceof Float32Array)) throw new CheckpointError(`${join(dir, WEIGHTS_FILE)}: ${name} is not float32`)
    const bad = t.data.findIndex((v) => !Number.isFinite(v))
    if (bad >= 0) throw new CheckpointError(`${join(dir, WEIGHTS_FILE)}: ${name} holds a non-finite value at index ${bad}`)
    params.set(name, t.data)
  }
  const metaPath = join(dir, METADATA_FILE)
  return { dims, dropout, chars, params, metadata: existsSync(metaPath) ? readJsonObject(metaPath) : undefined }
}
