// Taggers on an engine: for a checkpoint folder (onnxruntime, else tfjs: core/onnx/session), or
// for a tfjs model in memory (evaluation between training epochs).

import { existsSync } from 'node:fs'
import { join } from 'node:path'
import * as tf from '@tensorflow/tfjs-core'
import type { BertTokenClassifier } from '../model/bert'
import { readCrfScores } from '../model/checkpoint'
import { findWeightFiles, headLabelsOf, METADATA_FILE, readCheckpointInfo, VOCAB_FILE, WEIGHTS_FILE, WEIGHTS_INDEX_FILE, type CheckpointInfo } from '../model/checkpoint-files'
import { headParamNames } from '../model/config'
import { readSafetensorsNames } from '../model/safetensors'
import { labelMapFromLabels } from '../nlp/bio'
import { makeBertConfig } from '../model/bert'
import { crfParamNames } from '../model/crf'
import { folderHeadLabels, headsOf, isWordTaggerFolder, loadWordTagger, WORD_TAGGER_PIECE_VOCAB, type WordTaggerFolder } from '../model/word-tagger'
import { WordTaggerEngine } from '../onnx/word-engine'
import { QUANTIZATION_KEY, type QuantizationInfo } from '../onnx/quantize'
import { WordPieceTokenizer } from '../nlp/tokenizer'
import type { InferenceEngine } from '../onnx/engine'
import { openInferenceEngine, openOrtEngineFromBytes, type OpenEngineOptions } from '../onnx/session'
import { exportModelOnnx, tfjsEngineFromModel } from '../onnx/tfjs'
import { routersOf, type HeadRouter } from './router'
import { checkMaxLength, TAGGING_DEFAULTS, Tagger, TaggingError, type TaggerHead, type WindowSettings } from './tagger'

/** The heads of a model in memory, with their CRF scores as they are now. */
function modelHeads(model: BertTokenClassifier): TaggerHead[] {
  return [...model.heads].map(([name, info]) => ({ name, labelMap: labelMapFromLabels(info.labels), crf: model.crfScores(name) }))
}

export interface OpenTaggerOptions {
  /** Engine preference (default: onnxruntime when it loads, or FASTBIONER_INFERENCE). */
  engine?: 'onnx' | 'tfjs'
  /** Override the window settings the checkpoint's training recorded. */
  maxLength?: number
  stride?: number
  /** 'memory': export the ONNX graph on every open and cache nothing (core/onnx/session). Default 'auto'. */
  export?: OpenEngineOptions['export']
  /** onnxruntime intra-op threads and spinning (core/onnx/session). */
  threads?: number
  spin?: boolean
  logger?: (line: string) => void
  /** Tests inject engines. */
  openEngine?: (dir: string, opts: OpenEngineOptions) => Promise<InferenceEngine>
}

/** A tagger for a checkpoint folder, with what was read from its small files. */
export interface CheckpointTagger extends Tagger {
  checkpoint: CheckpointInfo
}

/** Window settings of a checkpoint: as trained, else the defaults (128 pieces, by sentence). */
export function windowSettingsOf(info: Pick<CheckpointInfo, 'training' | 'config'>, override: Partial<WindowSettings> = {}): WindowSettings {
  return {
    maxLength: override.maxLength ?? info.training.maxLength ?? Math.min(TAGGING_DEFAULTS.maxLength, info.config.maxPositionEmbeddings),
    sentenceLevel: override.sentenceLevel ?? info.training.sentenceLevel ?? TAGGING_DEFAULTS.sentenceLevel,
    stride: override.stride ?? info.training.stride ?? undefined,
  }
}

/**
 * Refuses a folder that cannot tag (before anything heavy is loaded): a head without entity
 * labels or without trained weights would otherwise "tag" with nothing or with a fresh random
 * head. Pretraining, ELECTRA and word-vector outputs are encoders to fine-tune first. `head`:
 * only that head is used.
 */
export function checkTaggingHeads(dir: string, head?: string): void {
  // A word tagger's folder is checked whole when it opens (loadWordTagger): every head has labels and weights.
  if (isWordTaggerFolder(dir)) {
    const heads = folderHeadLabels(dir)
    if (head !== undefined && !(head in heads)) throw new TaggingError(`model has no head '${head}' (heads: ${Object.keys(heads).join(', ')})`)
    return
  }
  const heads = Object.entries(headLabelsOf(readCheckpointInfo(dir))).filter(([name]) => head === undefined || name === head)
  const files = [WEIGHTS_FILE, WEIGHTS_INDEX_FILE].some((f) => existsSync(join(dir, f))) ? findWeightFiles(dir) : []
  // A folder the engine reads without safetensors (model.onnx alone) has no names to check.
  const stored = files.length ? new Set(files.flatMap((f) => readSafetensorsNames(f))) : null
  const problems: string[] = []
  for (const [name, labels] of heads) {
    let types: string[]
    try {
      types = labelMapFromLabels(labels).types
    } catch (e) {
      problems.push(`head '${name}' has labels ${labels.join(', ')}, not entity labels (${(e as Error).message})`)
      continue
    }
    if (types.length === 0) problems.push(`head '${name}' has no entity labels (only ${labels.join(', ')})`)
    else if (stored && !stored.has(headParamNames(name).weight)) problems.push(`head '${name}' has no trained weights (${headParamNames(name).weight})`)
  }
  if (problems.length) {
    throw new TaggingError(
      `${dir} is not a token-classification model: ${problems.join('; ')}. A pretrained encoder (pretrain, wordvec, ELECTRA output) tags nothing until it is fine-tuned: ` +
        `fastbioner train --init ${dir} --train FILE --dev FILE --out DIR`,
    )
  }
}

/** Opens the checkpoint in `dir` on the fastest engine that loads (or the one preferred). */
export async function openTagger(dir: string, opts: OpenTaggerOptions = {}): Promise<CheckpointTagger> {
  if (isWordTaggerFolder(dir)) return openWordTagger(dir, opts)
  const info = readCheckpointInfo(dir)
  const tokenizer = new WordPieceTokenizer(info.vocab, { lowercase: info.lowercase, source: join(dir, VOCAB_FILE) })
  const headLabels = headLabelsOf(info)
  const crf = readCrfScores(dir, headLabels)
  const heads = Object.entries(headLabels).map(([name, labels]) => {
    let labelMap
    try {
      labelMap = labelMapFromLabels(labels)
    } catch (e) {
      // Labels from an untrusted config.json: the error names the folder (the app's tag job too).
      throw new TaggingError(`${dir}: head '${name}' has labels ${labels.join(', ')}, not entity labels (${(e as Error).message})`)
    }
    return { name, labelMap, crf: crf[name] }
  })
  const windows = windowSettingsOf(info, { maxLength: opts.maxLength, stride: opts.stride })
  // Before the engine (and perhaps an ONNX export) is paid for.
  checkMaxLength(windows.maxLength, info.config.maxPositionEmbeddings)
  const open = opts.openEngine ?? openInferenceEngine
  const engine = await open(dir, { prefer: opts.engine, export: opts.export, threads: opts.threads, spin: opts.spin, logger: opts.logger })
  const chars = info.config.charCnn && info.chars ? { config: info.config.charCnn, vocab: info.chars } : null
  return Object.assign(new Tagger(engine, tokenizer, heads, windows, info.config.maxPositionEmbeddings, chars, routersOf(info.metadata?.routers, join(dir, METADATA_FILE), Object.keys(headLabels))), { checkpoint: info })
}

/** The longest window a word tagger is given, in words (its recurrence has no position limit). */
export const WORD_TAGGER_MAX_WORDS = 512

/** A tagger for a word tagger's folder (core/model/word-tagger): its own engine, words as pieces. */
function openWordTagger(dir: string, opts: OpenTaggerOptions): CheckpointTagger {
  const m = loadWordTagger(dir)
  const training = ((m.metadata?.training ?? {}) as CheckpointInfo['training']) ?? {}
  // What the rest of the product reads of a checkpoint (sizes for comparison, heads, settings).
  const config = makeBertConfig({ vocabSize: m.config.wordVocabSize, hiddenSize: 2 * m.config.lstmHidden, numHiddenLayers: 1, numAttentionHeads: 1, intermediateSize: 4 * m.config.lstmHidden, maxPositionEmbeddings: WORD_TAGGER_MAX_WORDS })
  const info: CheckpointInfo = { dir, configPath: join(dir, 'config.json'), hf: {}, config, vocab: WORD_TAGGER_PIECE_VOCAB, lowercase: false, configHeads: m.heads, id2label: null, metadata: m.metadata, training, notes: [], chars: null }
  const int8Lstm = (m.metadata?.[QUANTIZATION_KEY] as QuantizationInfo | undefined)?.int8Lstm === true
  const routers = routersOf(m.metadata?.routers, join(dir, METADATA_FILE), Object.keys(m.heads))
  const tagger = wordTaggerFor(m, windowSettingsOf(info, { maxLength: opts.maxLength, stride: opts.stride }), { threads: opts.threads, int8Lstm, routers }, [join(dir, 'model.safetensors')])
  return Object.assign(tagger, { checkpoint: info })
}

/** A tagger for a word tagger in memory or loaded; its engine reads `m.params` on every call. */
export function wordTaggerFor(m: Pick<WordTaggerFolder, 'config' | 'featurizer' | 'heads' | 'params'>, windows: WindowSettings, opts: { threads?: number; cacheCharLmStates?: boolean; int8Lstm?: boolean; routers?: readonly HeadRouter[] } = {}, files: string[] = []): Tagger {
  const tokenizer = new WordPieceTokenizer(WORD_TAGGER_PIECE_VOCAB, { lowercase: false })
  const heads = Object.entries(m.heads).map(([name, labels]) => {
    const n = crfParamNames(name)
    const transitions = m.params.get(n.transitions)
    const crf = transitions ? { transitions, start: m.params.get(n.start)!, end: m.params.get(n.end)! } : undefined
    return { name, labelMap: labelMapFromLabels(labels), crf }
  })
  const engine = new WordTaggerEngine(m.config, m.featurizer, headsOf(m.heads), m.params, opts, files)
  return new Tagger(engine, tokenizer, heads, windows, WORD_TAGGER_MAX_WORDS, null, opts.routers)
}

/**
 * A tagger for a model in memory on onnxruntime: the weights as they are now, exported to an
 * ONNX graph in memory (a fraction of a second for the student sizes), several times faster
 * than the tfjs forward for devel evaluation between training epochs.
 */
export async function ortTaggerForModel(model: BertTokenClassifier, tokenizer: WordPieceTokenizer, windows: Partial<WindowSettings> = {}, opts: { threads?: number } = {}): Promise<Tagger> {
  const engine = await openOrtEngineFromBytes(exportModelOnnx(model), 'model in memory', opts)
  const heads = modelHeads(model)
  const settings = windowSettingsOf({ training: {}, config: model.config }, windows)
  return new Tagger(engine, tokenizer, heads, settings, model.config.maxPositionEmbeddings, modelChars(model))
}

/** The character channel of a model in memory, for its Tagger; null without one. */
function modelChars(model: BertTokenClassifier): Tagger['chars'] {
  return model.config.charCnn && model.charVocab ? { config: model.config.charCnn, vocab: model.charVocab } : null
}

/**
 * A tagger for a model in memory, on tfjs. Disposing the tagger leaves the model alive.
 * Window settings default to 128 pieces (capped by the model) and sentence level.
 */
export function taggerForModel(model: BertTokenClassifier, tokenizer: WordPieceTokenizer, windows: Partial<WindowSettings> = {}): Tagger {
  const engine = tfjsEngineFromModel(model, tf.getBackend(), 'tfjs, model in memory', [], { ownsModel: false })
  const heads = modelHeads(model)
  const settings = windowSettingsOf({ training: {}, config: model.config }, windows)
  return new Tagger(engine, tokenizer, heads, settings, model.config.maxPositionEmbeddings, modelChars(model))
}
