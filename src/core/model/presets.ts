// Encoder configs for the presets of src/shared/recipes.ts (shapes and the reasons for them are
// there), and the FLOP count used by the benchmarks.

import { findPreset, type PresetName } from '@shared/recipes'
import { makeBertConfig, type BertConfig } from './bert'

/** A full config for a preset; `overrides` sets vocabSize, dropout etc. */
export function presetConfig(name: PresetName, overrides: Partial<BertConfig> = {}): BertConfig {
  const p = findPreset(name)
  return makeBertConfig({
    numHiddenLayers: p.layers,
    hiddenSize: p.hidden,
    numAttentionHeads: p.heads,
    intermediateSize: p.intermediate,
    ...overrides,
  })
}

/** Matmul FLOPs of one forward pass (2·MAC), the same count as torch_bert_ref.py. */
export function forwardFlops(c: Pick<BertConfig, 'numHiddenLayers' | 'hiddenSize' | 'intermediateSize'>, batch: number, seq: number, numLabels = 3): number {
  const t = batch * seq
  const h = c.hiddenSize
  const perLayer = t * (2 * 4 * h * h + 2 * 2 * h * c.intermediateSize) + batch * 2 * 2 * seq * seq * h
  return c.numHiddenLayers * perLayer + t * 2 * h * numLabels
}
