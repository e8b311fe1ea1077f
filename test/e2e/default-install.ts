// A stand-in for the shipped default model in e2e runs: a tiny random multi-head checkpoint in
// a folder of its own (what FASTBIONER_DEFAULT_MODEL / the harness's defaultModel option name).
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import type { ModelBenchmark } from '@shared/ipc'
import { BertTokenClassifier, makeBertConfig } from '../../src/core/model/bert'
import { saveCheckpoint } from '../../src/core/model/checkpoint'
import { buildLabelMap } from '../../src/core/nlp/bio'
import { syntheticVocab } from '../unit/train/synthetic'
import { useCpuBackend } from '../unit/train/tfSetup'

/** Writes the checkpoint (one head per entry: head → entity types; fastbioner.json's benchmark when given) and returns its folder. */
export async function tinyDefaultModel(prefix: string, heads: Record<string, string[]>, benchmark?: ModelBenchmark): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const tf = await useCpuBackend()
  ;(tf.backend() as unknown as { firstUse: boolean }).firstUse = false
  const vocab = syntheticVocab()
  const config = makeBertConfig({ vocabSize: vocab.length, hiddenSize: 32, numHiddenLayers: 1, numAttentionHeads: 2, intermediateSize: 64, maxPositionEmbeddings: 64 })
  const model = BertTokenClassifier.random(config, 4, Object.fromEntries(Object.entries(heads).map(([h, types]) => [h, buildLabelMap(types).labels])))
  await saveCheckpoint(dir, model, vocab, { lowercase: true, ...(benchmark ? { metadata: { benchmark } } : {}) })
  model.dispose()
  return dir
}

/** Closes every toast (they cover the lower right of the window in screenshots). */
export async function dismissToasts(page: Page): Promise<void> {
  await page.locator('.toast-close').evaluateAll((els) => els.forEach((e) => (e as HTMLElement).click()))
}
