import { presetConfig } from '@core/model/presets'
import { findPreset, isPresetName, MODEL_PRESETS } from '@shared/recipes'

describe('model presets', () => {
  it('build BERT configs with 64-wide heads and a 4 × hidden feed-forward, as the distillation mapping expects', () => {
    for (const p of MODEL_PRESETS) {
      const c = presetConfig(p.name, { vocabSize: 100 })
      expect([c.numHiddenLayers, c.hiddenSize, c.numAttentionHeads, c.intermediateSize]).toEqual([p.layers, p.hidden, p.heads, p.intermediate])
      expect(c.hiddenSize / c.numAttentionHeads).toBe(64)
      expect(c.intermediateSize).toBe(4 * c.hiddenSize)
      expect(c.vocabSize).toBe(100)
    }
  })

  it('refuses an unknown preset, naming the choices', () => {
    expect(isPresetName('cpu-small')).toBe(true)
    expect(isPresetName('huge')).toBe(false)
    expect(() => findPreset('huge')).toThrow(/unknown model preset 'huge' \(one of cpu-tiny, cpu-small, cpu-medium, bert-base\)/)
  })
})
