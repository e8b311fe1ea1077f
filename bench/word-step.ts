// The word tagger's training step that bench/profile-step (--kind word-lstm) and bench/ab-versions
// time: `batch` sentences of `words` words over a lexicon of `vocab` made-up words drawn as text
// uses them (./zipf), labels cycling over three, heads of three labels. One definition, so that both
// benches time the same step. The modules come as an argument: ab-versions loads them from another
// checkout.
import type { Rng } from '../src/core/rng'
import type { WordFeaturizer } from '../src/core/nlp/word-features'
import type { wordBucket, wordTaggerConfig } from '../src/core/model/word-tagger'
import type { zipfSampler } from './zipf'

export interface WordStepModules {
  Rng: typeof Rng
  WordFeaturizer: typeof WordFeaturizer
  wordTaggerConfig: typeof wordTaggerConfig
  wordBucket: typeof wordBucket
  zipfSampler: typeof zipfSampler
}

export function wordStepInputs(m: WordStepModules, o: { vocab: number; batch: number; words: number; lstmHidden: number }) {
  const rng = new m.Rng(1)
  const lexicon = Array.from({ length: o.vocab }, (_, i) => `w${i.toString(36)}`)
  const featurizer = m.WordFeaturizer.learn(lexicon, { maxSize: o.vocab + 2 })
  const config = m.wordTaggerConfig(featurizer, { lstmHidden: o.lstmHidden })
  const draw = m.zipfSampler(o.vocab, rng)
  const sentences = Array.from({ length: o.batch }, () => Array.from({ length: o.words }, () => lexicon[draw()]))
  const T = m.wordBucket(o.words)
  const labels = new Int32Array(o.batch * T).fill(-100)
  sentences.forEach((s, r) => s.forEach((_, t) => (labels[r * T + t] = (r + t) % 3)))
  /** n heads of three labels ('default' alone), and each head's labels for the step. */
  const heads = (n: number) => {
    const list = n === 1 ? [{ name: 'default', numLabels: 3 }] : Array.from({ length: n }, (_, k) => ({ name: `head${k}`, numLabels: 3 }))
    return { list, labels: Object.fromEntries(list.map((h) => [h.name, labels])) as Record<string, Int32Array> }
  }
  return { featurizer, config, sentences, T, heads }
}
