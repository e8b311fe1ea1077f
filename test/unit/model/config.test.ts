// config.json bounds (issue 31 F5): an untrusted config must not make the loaders build millions of
// parameter names or allocate gigabytes before the weights are looked at.
import { bertConfigFromHf } from '@core/model/checkpoint-files'
import { CONFIG_LIMITS, countParameters, makeBertConfig, MAX_ENCODER_PARAMETERS, validateConfig } from '@core/model/config'

const BERT_LARGE = { vocabSize: 30522, hiddenSize: 1024, numHiddenLayers: 24, numAttentionHeads: 16, intermediateSize: 4096, maxPositionEmbeddings: 512, typeVocabSize: 2 }

describe('BERT config bounds', () => {
  it('refuses num_hidden_layers 1e6 at once, naming the file and the key', () => {
    const t0 = performance.now()
    expect(() => bertConfigFromHf({ model_type: 'bert', num_hidden_layers: 1_000_000 }, '/m/config.json')).toThrow(
      /^\/m\/config\.json: BERT config: numHiddenLayers is 1000000, more than the 256 this app accepts/,
    )
    expect(performance.now() - t0).toBeLessThan(1000)
  })

  it('accepts bert-large and every size at its limit alone; refuses one above', () => {
    expect(() => makeBertConfig(BERT_LARGE)).not.toThrow()
    for (const [key, max] of Object.entries(CONFIG_LIMITS)) {
      // hidden size must stay a multiple of the heads: give as many heads as divide it.
      const base = { vocabSize: 100, hiddenSize: 64, numHiddenLayers: 1, numAttentionHeads: 1, intermediateSize: 128, maxPositionEmbeddings: 64, typeVocabSize: 2 }
      const at = { ...base, [key]: max, ...(key === 'numAttentionHeads' ? { hiddenSize: max } : {}) }
      expect(() => makeBertConfig(at), key).not.toThrow()
      expect(() => makeBertConfig({ ...at, [key]: max + 1 }), key).toThrow(new RegExp(`${key} is ${max + 1}, more than`))
    }
  })

  it('refuses sizes that are each allowed but together make too many parameters; counts as countParameters does', () => {
    expect(() => makeBertConfig({ ...BERT_LARGE, vocabSize: 1_000_000, hiddenSize: 16_384, numAttentionHeads: 16 })).toThrow(/encoder parameters, more than/)
    // The bound is computed without the name map; it agrees with countParameters (no heads) just below the limit.
    const c = makeBertConfig({ ...BERT_LARGE, numHiddenLayers: 3 })
    const n = countParameters(c, [])
    expect(() => validateConfig(c)).not.toThrow()
    expect(n).toBeLessThan(MAX_ENCODER_PARAMETERS)
    const wide = { ...c, hiddenSize: 4096, numAttentionHeads: 16, intermediateSize: 16_384, numHiddenLayers: 0 }
    const perLayer = countParameters({ ...wide, numHiddenLayers: 1 }, []) - countParameters(wide, [])
    const most = Math.floor((MAX_ENCODER_PARAMETERS - countParameters(wide, [])) / perLayer)
    expect(most).toBeLessThan(CONFIG_LIMITS.numHiddenLayers)
    expect(() => validateConfig({ ...wide, numHiddenLayers: most })).not.toThrow()
    expect(() => validateConfig({ ...wide, numHiddenLayers: most + 1 })).toThrow(/encoder parameters/)
  })
})
