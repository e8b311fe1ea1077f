// Words drawn as text uses them: the k-th commonest with probability ∝ 1/k (Zipf, exponent 1).
// Benchmarks of the word tagger draw their sentences so: a batch of text repeats words, which the
// character CNN computes once each (core/onnx/char-cnn), and uniform draws from a lexicon would
// hide that. Over NCBI-disease's 8 385 training words, 16 sentences of 25 words drawn so hold 0.59
// distinct words, as 16 of its real sentences do (0.59).

import type { Rng } from '../src/core/rng'

/** A sampler of indices 0..n−1 with P(k) ∝ 1/(k+1). */
export function zipfSampler(n: number, rng: Rng): () => number {
  const cdf = new Float64Array(n)
  let total = 0
  for (let k = 0; k < n; k++) cdf[k] = total += 1 / (k + 1)
  return () => {
    const u = rng.next() * total
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cdf[mid] < u) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}
