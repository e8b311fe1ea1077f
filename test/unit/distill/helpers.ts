// Tiny models and data for the distillation tests (synthetic corpus from the train tests).
import * as tf from '@tensorflow/tfjs-core'
import { BertTokenClassifier, makeBertConfig, type BertConfig } from '@core/model/bert'
import { buildLabelMap } from '@core/nlp/bio'
import { WordPieceTokenizer } from '@core/nlp/tokenizer'
import { syntheticDocs, syntheticVocab } from '../train/synthetic'

export const vocab = syntheticVocab()
export const tokenizer = new WordPieceTokenizer(vocab, { lowercase: true })
export const labels = buildLabelMap(['Disease']).labels
export { syntheticDocs }

export function tinyConfig(layers: number, hidden = 32, heads = 2, extra: Partial<BertConfig> = {}): BertConfig {
  return makeBertConfig({
    vocabSize: vocab.length, hiddenSize: hidden, numHiddenLayers: layers, numAttentionHeads: heads, intermediateSize: hidden * 2,
    maxPositionEmbeddings: 64, ...extra,
  })
}

export function tinyModel(layers: number, seed = 7, hidden = 32, heads: Record<string, string[]> = { default: labels }, extra: Partial<BertConfig> = {}): BertTokenClassifier {
  return BertTokenClassifier.random(tinyConfig(layers, hidden, 2, extra), seed, heads)
}

export function values(t: tf.Tensor): number[] {
  return Array.from(t.dataSync())
}
