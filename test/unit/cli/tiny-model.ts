// A tiny random-weight token classifier saved as a checkpoint folder, for CLI tests that tag:
// its mentions are arbitrary but deterministic, which is all those tests need.
import { join } from 'node:path'
import { useBackend } from '@core/model/backend'
import { BertTokenClassifier, makeBertConfig } from '@core/model/bert'
import { saveCheckpoint } from '@core/model/checkpoint'
import { buildLabelMap } from '@core/nlp/bio'
import { syntheticVocab } from '../train/synthetic'

/** Saves the model in dir/name; `heads: {}` saves an encoder without a token-classification head. */
export async function saveTinyModel(dir: string, name = 'model', heads: Record<string, string[]> = { default: buildLabelMap(['Disease']).labels }, seed = 11): Promise<string> {
  await useBackend('wasm')
  const vocab = syntheticVocab()
  const config = makeBertConfig({ vocabSize: vocab.length, hiddenSize: 32, numHiddenLayers: 1, numAttentionHeads: 2, intermediateSize: 64, maxPositionEmbeddings: 64 })
  const model = BertTokenClassifier.random(config, seed, heads)
  const out = join(dir, name)
  try {
    await saveCheckpoint(out, model, vocab, { lowercase: true, metadata: { training: { maxLength: 32, sentenceLevel: true } } })
  } finally {
    model.dispose()
  }
  return out
}
