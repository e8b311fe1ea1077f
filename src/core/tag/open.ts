// Taggers on an engine: for a checkpoint folder (onnxruntime, else tfjs: core/onnx/session), or
// for a tfjs model in memory (evaluation between training epochs).

import { join } from 'node:path'
import * as tf from '@tensorflow/tfjs-core'
import type { BertTokenClassifier } from '../model/bert'
import { readCrfScores } from '../model/checkpoint'
import { headLabelsOf, readCheckpointInfo, VOCAB_FILE, type CheckpointInfo } from '../model/checkpoint-files'
import { labelMapFromLabels } from '../nlp/bio'
import { WordPieceTokenizer } from '../nlp/tokenizer'
import type { InferenceEngine } from '../onnx/engine'
import { openInferenceEngine, openOrtEngineFromBytes, type OpenEngineOptions } from '../onnx/session'
import { exportModelOnnx, tfjsEngineFromModel } from '../onnx/tfjs'
import { checkMaxLength, TAGGING_DEFAULTS, Tagger, type TaggerHead, type WindowSettings } from './tagger'

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
  /** 'memory': never write model.onnx into the folder (core/onnx/session). Default 'auto'. */
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

/** Opens the checkpoint in `dir` on the fastest engine that loads (or the one preferred). */
export async function openTagger(dir: string, opts: OpenTaggerOptions = {}): Promise<CheckpointTagger> {
  const info = readCheckpointInfo(dir)
  const tokenizer = new WordPieceTokenizer(info.vocab, { lowercase: info.lowercase, source: join(dir, VOCAB_FILE) })
  const headLabels = headLabelsOf(info)
  const crf = readCrfScores(dir, headLabels)
  const heads = Object.entries(headLabels).map(([name, labels]) => ({ name, labelMap: labelMapFromLabels(labels), crf: crf[name] }))
  const windows = windowSettingsOf(info, { maxLength: opts.maxLength, stride: opts.stride })
  // Before the engine (and perhaps an ONNX export) is paid for.
  checkMaxLength(windows.maxLength, info.config.maxPositionEmbeddings)
  const open = opts.openEngine ?? openInferenceEngine
  const engine = await open(dir, { prefer: opts.engine, export: opts.export, threads: opts.threads, spin: opts.spin, logger: opts.logger })
  return Object.assign(new Tagger(engine, tokenizer, heads, windows, info.config.maxPositionEmbeddings), { checkpoint: info })
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
  return new Tagger(engine, tokenizer, heads, settings, model.config.maxPositionEmbeddings)
}

/**
 * A tagger for a model in memory, on tfjs. Disposing the tagger leaves the model alive.
 * Window settings default to 128 pieces (capped by the model) and sentence level.
 */
export function taggerForModel(model: BertTokenClassifier, tokenizer: WordPieceTokenizer, windows: Partial<WindowSettings> = {}): Tagger {
  const engine = tfjsEngineFromModel(model, tf.getBackend(), 'tfjs, model in memory', [], { ownsModel: false })
  const heads = modelHeads(model)
  const settings = windowSettingsOf({ training: {}, config: model.config }, windows)
  return new Tagger(engine, tokenizer, heads, settings, model.config.maxPositionEmbeddings)
}
