// How unsure a model is about a document, from each word's label distribution. Least confidence
// is what the review queue orders by (store/suggestions keeps it per document); margin and
// entropy are the other classic token-level uncertainty scores (Settles & Craven 2008), kept
// beside it so that active-learning strategies (core/active) can be compared on one tagging pass.

/** Per-document uncertainties, each the mean over words and so bounded in [0, 1]. */
export interface DocumentUncertainty {
  /** 1 − mean top probability: the queue's score. */
  leastConfidence: number
  /** 1 − mean (top − second) probability: small margins between the two best labels count. */
  margin: number
  /** Mean entropy of the word's labels divided by log(labels): the whole distribution counts. */
  entropy: number
}

/** Sums word scores of one document (over every head used) and averages them at the end. */
export class UncertaintyAccumulator {
  private top = 0
  private margin = 0
  private entropy = 0
  private n = 0
  /** A probability that was not a number (weights that overflow): the result must say so. */
  private invalid = false

  /** One word: `probs[offset .. offset + C)` is its label distribution. */
  add(probs: ArrayLike<number>, offset: number, C: number): void {
    let best = 0
    let second = 0
    let h = 0
    for (let j = 0; j < C; j++) {
      const p = probs[offset + j]
      if (Number.isNaN(p)) this.invalid = true
      if (p > best) {
        second = best
        best = p
      } else if (p > second) second = p
      if (p > 0) h -= p * Math.log(p)
    }
    this.top += best
    this.margin += best - second
    // One label: no choice, no entropy (log 1 = 0 would divide by zero).
    this.entropy += C > 1 ? h / Math.log(C) : 0
    this.n++
  }

  get words(): number {
    return this.n
  }

  /**
   * Null for a document without words; NaN everywhere when a probability was NaN, so that callers
   * that check for finite scores (host/jobs/tag) refuse the model instead of queueing a guess.
   */
  result(): DocumentUncertainty | null {
    if (this.n === 0) return null
    if (this.invalid) return { leastConfidence: NaN, margin: NaN, entropy: NaN }
    const clamp = (x: number) => Math.min(1, Math.max(0, x))
    return { leastConfidence: clamp(1 - this.top / this.n), margin: clamp(1 - this.margin / this.n), entropy: clamp(this.entropy / this.n) }
  }
}
