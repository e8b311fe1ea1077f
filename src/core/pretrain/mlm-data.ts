// Masked-LM training data: sentences packed into sequences, and BERT whole-word masking.
//
// Packing fills each sequence with consecutive lines of one document (up to maxLength with
// [CLS] … [SEP]), so short biomedical sentences do not waste most of a sequence on padding and
// the model still sees sentence-to-sentence context. Masks are drawn per (seed, epoch, sequence)
// so every epoch masks differently yet a run replays exactly.

import { IGNORE_INDEX } from '../train/batching'
import { deriveSeed, Rng } from '../rng'
import type { WordPieceTokenizer } from '../nlp/tokenizer'
import type { TextDocument } from './text'

/** One packed sequence: piece ids with [CLS] first and [SEP] last. */
export interface PackedSequence {
  ids: Int32Array
  /** 1 where a piece starts a word (the unit of whole-word masking); 0 for "##" pieces and specials. */
  wordStart: Uint8Array
}

export interface PackOptions {
  /** Sequence length including [CLS] and [SEP]; default 128. */
  maxLength?: number
}

/**
 * Packs documents into sequences. A line that does not fit into an unfinished sequence starts the
 * next one; a line longer than a whole sequence is cut at word boundaries (mid-word only when a
 * single word is longer than a sequence).
 */
export function* packDocuments(docs: Iterable<TextDocument>, tokenizer: WordPieceTokenizer, opts: PackOptions = {}): Generator<PackedSequence> {
  const maxLength = opts.maxLength ?? 128
  if (!Number.isInteger(maxLength) || maxLength < 8) throw new RangeError(`maxLength must be an integer ≥ 8 (got ${maxLength})`)
  const budget = maxLength - 2
  for (const doc of docs) {
    let ids: number[] = []
    let starts: number[] = []
    const flush = function* (): Generator<PackedSequence> {
      if (ids.length > 0) yield finish(ids, starts, tokenizer)
      ids = []
      starts = []
    }
    for (const line of doc.lines) {
      const t = tokenizer.tokenize(line)
      if (t.ids.length === 0) continue
      const lineStarts = t.wordIndex.map((w, k) => (k === 0 || t.wordIndex[k - 1] !== w ? 1 : 0))
      if (ids.length + t.ids.length > budget) yield* flush()
      let from = 0
      while (t.ids.length - from > budget) {
        // Cut at the last word start that keeps the chunk within budget.
        let cut = from + budget
        while (cut > from + 1 && lineStarts[cut] !== 1) cut--
        if (cut === from + 1 && lineStarts[cut] !== 1) cut = from + budget
        ids.push(...t.ids.slice(from, cut))
        starts.push(...lineStarts.slice(from, cut))
        starts[starts.length - (cut - from)] = 1
        yield* flush()
        from = cut
      }
      ids.push(...t.ids.slice(from))
      starts.push(...lineStarts.slice(from))
      if (from > 0) starts[starts.length - (t.ids.length - from)] = 1
    }
    yield* flush()
  }
}

function finish(ids: number[], starts: number[], tokenizer: WordPieceTokenizer): PackedSequence {
  const out = new Int32Array(ids.length + 2)
  const ws = new Uint8Array(ids.length + 2)
  out[0] = tokenizer.clsId
  out.set(ids, 1)
  out[ids.length + 1] = tokenizer.sepId
  ws.set(starts, 1)
  return { ids: out, wordStart: ws }
}

export interface MaskOptions {
  /** Fraction of words chosen for prediction; default 0.15. */
  maskProbability?: number
  maskId: number
  vocabSize: number
  /** Ids never drawn as a random replacement ([PAD], [UNK], [CLS], [SEP], [MASK]). */
  specialIds: readonly number[]
}

export interface MaskedSequence {
  /** [seq] ids with the chosen words replaced. */
  inputIds: Int32Array
  /** [seq] the original id where the loss applies, IGNORE_INDEX elsewhere. */
  labels: Int32Array
}

/**
 * BERT whole-word masking: round(p · words) words (at least one) are chosen; each chosen word is,
 * as a whole, replaced by [MASK] (80 %), by random pieces (10 %) or kept (10 %), and all its
 * pieces are predicted. Deciding per word rather than per piece keeps "whole word" true also for
 * the 10 % cases.
 */
export function wholeWordMask(seq: PackedSequence, rng: Rng, opts: MaskOptions): MaskedSequence {
  const p = opts.maskProbability ?? 0.15
  const n = seq.ids.length
  const inputIds = Int32Array.from(seq.ids)
  const labels = new Int32Array(n).fill(IGNORE_INDEX)
  const words: Array<[number, number]> = []
  // Positions 0 and n-1 are [CLS] and [SEP]; a "##" piece extends the word before it.
  for (let k = 1; k < n - 1; k++) {
    if (seq.wordStart[k] === 1 || words.length === 0) words.push([k, k + 1])
    else words[words.length - 1][1] = k + 1
  }
  if (words.length === 0) return { inputIds, labels }
  const count = Math.max(1, Math.round(p * words.length))
  const order = rng.shuffle(words.map((_, i) => i))
  const special = new Set(opts.specialIds)
  for (let c = 0; c < count; c++) {
    const [from, to] = words[order[c]]
    const r = rng.next()
    for (let k = from; k < to; k++) {
      labels[k] = seq.ids[k]
      if (r < 0.8) inputIds[k] = opts.maskId
      else if (r < 0.9) inputIds[k] = randomNonSpecial(rng, opts.vocabSize, special)
    }
  }
  return { inputIds, labels }
}

function randomNonSpecial(rng: Rng, vocabSize: number, special: ReadonlySet<number>): number {
  for (;;) {
    const id = rng.int(vocabSize)
    if (!special.has(id)) return id
  }
}

/** The generator for one sequence's mask in one epoch: independent of batch order and resume. */
export function maskRng(seed: number, epoch: number, sequenceIndex: number): Rng {
  return new Rng(deriveSeed(seed, 0x4d4c4d, epoch, sequenceIndex))
}

/**
 * The held-out rule: every `every`-th sequence (by packing order) is held out; deterministic so a
 * resumed run holds out the same ones.
 */
export function heldOutEvery(every: number): (sequenceIndex: number) => boolean {
  if (!Number.isInteger(every) || every < 2) throw new RangeError(`heldOutEvery must be an integer ≥ 2 (got ${every})`)
  return (sequenceIndex) => sequenceIndex % every === every - 1
}

/** The default rule: every 100th sequence (1 %). */
export const isHeldOut = heldOutEvery(100)
