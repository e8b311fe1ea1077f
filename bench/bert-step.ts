// The encoder's token-classification step that bench/ab-step and bench/ab-versions (--kind bert)
// time: a preset's encoder over a 28 996-piece vocabulary, seeded random weights, and one batch of
// `batch` × `seq` pieces with labels cycling over three (one head of three labels). One definition,
// so that both benches time the same step. The modules come as an argument: ab-versions loads them
// from another checkout.
import type { Rng } from '../src/core/rng'
import type { encoderParamShapes } from '../src/core/model/bert'
import type { presetConfig } from '../src/core/model/presets'
import type { collate } from '../src/core/train/batching'
import type { PresetName } from '../src/shared/recipes'

export interface BertStepModules {
  Rng: typeof Rng
  encoderParamShapes: typeof encoderParamShapes
  presetConfig: typeof presetConfig
  collate: typeof collate
}

export function bertStepInputs(m: BertStepModules, o: { preset: PresetName; batch: number; seq: number }) {
  const vocab = 28996
  const config = m.presetConfig(o.preset, { vocabSize: vocab, maxPositionEmbeddings: 512 })
  const shapes = m.encoderParamShapes(config).set('classifier.weight', [config.hiddenSize, 3]).set('classifier.bias', [3])
  /** Fresh weights, the same numbers on every call (LayerNorm scales 1, the rest small). */
  const params = () => {
    const rng = new m.Rng(3)
    return new Map([...shapes].map(([n, s]) => [n, Float32Array.from({ length: s.reduce((a, b) => a * b, 1) }, () => (n.includes('LayerNorm.weight') ? 1 : 0.02 * (rng.next() - 0.5)))]))
  }
  const ids = Int32Array.from({ length: o.batch * o.seq }, (_, i) => 1 + ((i * 7919) % (vocab - 1)))
  const examples = Array.from({ length: o.batch }, (_, r) => ({ inputIds: ids.subarray(r * o.seq, (r + 1) * o.seq), labels: Int32Array.from({ length: o.seq }, (_, i) => (r + i) % 3) }))
  const batch = m.collate(examples, examples.map((_, i) => i))
  return { config, params, batch, heads: [{ name: 'default', numLabels: 3 }] }
}
