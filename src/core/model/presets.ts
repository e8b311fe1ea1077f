// Encoder shapes. 'bert-base' is HF's BERT-base (BioBERT, PubMedBERT and bert-base-cased share
// it) and is what teachers look like; the cpu-* presets are students sized to train on a
// laptop with the wasm backend (one core: tfjs-backend-wasm has no threads in Node).
//
// Sizing, measured with `npm run bench:engine` on a 2-vCPU Xeon, wasm + SIMD on one core, batch
// 16 × 64 tokens, vocabulary 28,996, tokens per CPU-second (the machine was shared; see the
// engine report for the full table):
//   cpu-tiny    2 × 128:  forward ~8-13k tok/s, train ~1.8-2k tok/s  (NCBI-disease epoch ≈ 1 min)
//   cpu-small   4 × 256:  forward ~2.0k tok/s,  train ~500 tok/s     (epoch ≈ 4-5 min)
//   cpu-medium  6 × 384:  forward ~0.7k tok/s,  train ~180 tok/s     (epoch ≈ 12 min)
//   bert-base  12 × 768:  forward ~80 tok/s; a training step ~3 min (teachers only)
// Why these widths:
//  - wasm's XNNPACK GEMM runs at ~15-20 GFLOP/s on one core for 256-wide and wider layers but
//    drops to ~8-10 for 128-wide ones, so cpu-tiny is mostly a smoke-test size; 256 is the
//    narrowest width that keeps the matmuls efficient, and 4 layers keep an epoch in minutes.
//  - head size 64 everywhere (as BERT), so student heads line up with a BERT-base teacher's for
//    attention distillation; widths are multiples of 64, intermediate = 4 × hidden as in BERT.
//  - the per-step cost that does not shrink with width (Adam over the 28,996 × H word
//    embeddings, dropout masks, attention products at ~6 GFLOP/s) is why narrower models gain
//    less than their FLOP count suggests.
// The vocabulary size comes from the tokenizer (vocab.txt), not from the preset.

import { makeBertConfig, type BertConfig } from './bert'

export type PresetName = 'bert-base' | 'cpu-medium' | 'cpu-small' | 'cpu-tiny'

export interface Preset {
  name: PresetName
  description: string
  encoder: Pick<BertConfig, 'numHiddenLayers' | 'hiddenSize' | 'numAttentionHeads' | 'intermediateSize'>
}

export const PRESETS: Readonly<Record<PresetName, Preset>> = {
  'bert-base': {
    name: 'bert-base',
    description: 'BERT-base shape (12 × 768, 12 heads): BioBERT/PubMedBERT teachers; too slow to train on a CPU',
    encoder: { numHiddenLayers: 12, hiddenSize: 768, numAttentionHeads: 12, intermediateSize: 3072 },
  },
  'cpu-medium': {
    name: 'cpu-medium',
    description: '6 × 384, 6 heads: best accuracy that still trains overnight on a laptop',
    encoder: { numHiddenLayers: 6, hiddenSize: 384, numAttentionHeads: 6, intermediateSize: 1536 },
  },
  'cpu-small': {
    name: 'cpu-small',
    description: '4 × 256, 4 heads: default student, trains in minutes per epoch on a laptop',
    encoder: { numHiddenLayers: 4, hiddenSize: 256, numAttentionHeads: 4, intermediateSize: 1024 },
  },
  'cpu-tiny': {
    name: 'cpu-tiny',
    description: '2 × 128, 2 heads: quick experiments and smoke tests',
    encoder: { numHiddenLayers: 2, hiddenSize: 128, numAttentionHeads: 2, intermediateSize: 512 },
  },
}

export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[]

/** A full config for a preset; `overrides` sets vocabSize, dropout etc. */
export function presetConfig(name: PresetName, overrides: Partial<BertConfig> = {}): BertConfig {
  const p = PRESETS[name]
  if (!p) throw new Error(`unknown model preset '${name}' (${PRESET_NAMES.join(', ')})`)
  return makeBertConfig({ ...p.encoder, ...overrides })
}

/** Matmul FLOPs of one forward pass (2·MAC), the same count as torch_bert_ref.py. */
export function forwardFlops(c: Pick<BertConfig, 'numHiddenLayers' | 'hiddenSize' | 'intermediateSize'>, batch: number, seq: number, numLabels = 3): number {
  const t = batch * seq
  const h = c.hiddenSize
  const perLayer = t * (2 * 4 * h * h + 2 * 2 * h * c.intermediateSize) + batch * 2 * 2 * seq * seq * h
  return c.numHiddenLayers * perLayer + t * 2 * h * numLabels
}
