// The one tagging path: documents → piece windows → an inference engine (onnxruntime or tfjs,
// see ./open) → per-head label probabilities → mentions with confidences, and an uncertainty per
// document. The CLI (tag, eval), the model host, model comparison and evaluation during
// training all tag through here.
//
// Heads: by default every head of the model runs and their mentions are merged (./merge: MT-BioNER,
// one head per corpus); `head` picks one by name.
// Uncertainty = 1 − mean over the document's words (each word's first piece, overlapping windows
// merged as for the mentions) of the top label probability, averaged over the heads used:
// least-confidence sampling, cheap and bounded in [0, 1). Margin and entropy of the same words come
// with it (./uncertainty) for the active-learning strategies of core/active.

import { TRAIN_DEFAULTS } from '../../shared/recipes'
import type { CorpusDocument } from '../../shared/domain'
import type { CrfScores } from '../model/crf'
import { typesOfLabels, type LabelMap } from '../nlp/bio'
import { planTagging, predictionsToMentions, type ScoredMention, type TaggingPlan } from '../nlp/examples'
import type { WordPieceTokenizer } from '../nlp/tokenizer'
import { exampleWords, type WordFeaturizer } from '../nlp/word-features'
import { attachCharInputs, type CharCnnConfig } from '../model/char-cnn'
import { mergeWindowPredictions } from '../nlp/windows'
import type { InferenceEngine } from '../onnx/engine'
import { collate, planBatches } from '../train/batching'
import { applyDocumentRules, DEFAULT_DOCUMENT_RULES, type DocumentRules } from './document-rules'
import { mergeHeadMentions, type HeadMention } from './merge'
import { routeText, type HeadRouter } from './router'
import { UncertaintyAccumulator, type DocumentUncertainty } from './uncertainty'

/** A request the model cannot serve (unknown head, window longer than the model allows). */
export class TaggingError extends Error {
  override name = 'TaggingError'
}

export interface TaggerHead {
  name: string
  labelMap: LabelMap
  /** The head's CRF (core/model/crf): its words are labelled by the Viterbi path. */
  crf?: CrfScores
}

/** How documents are cut into windows; must match how the model was trained. */
export interface WindowSettings {
  /** Pieces per window including [CLS]/[SEP]. */
  maxLength: number
  /** One window sequence per sentence (else per document). */
  sentenceLevel: boolean
  /** Overlap of consecutive windows in pieces (default: core/nlp/windows' choice). */
  stride?: number
}

/** Used when a checkpoint does not record its training settings: the windows training uses. */
export const TAGGING_DEFAULTS = {
  maxLength: TRAIN_DEFAULTS.maxLength,
  sentenceLevel: TRAIN_DEFAULTS.sentenceLevel,
  batchSize: TRAIN_DEFAULTS.evalBatchSize,
  docsPerChunk: 64,
} as const

export interface TagOptions {
  /** Tag with this head only; default: every head, mentions merged. */
  head?: string
  /** Windows per engine call (default 32). */
  batchSize?: number
  /** Documents planned and run together; bounds the memory held for window outputs (default 64). */
  docsPerChunk?: number
  /** After each chunk of documents. */
  onProgress?: (docsDone: number, docsTotal: number) => void
  /** Checked before every engine call; an aborted run throws an AbortError. */
  signal?: AbortSignal
  /**
   * Each result also carries every head's per-word label probabilities (TagResult.wordScores):
   * what knowledge distillation samples its targets from. Off by default: [words × labels]
   * floats a document.
   */
  wordScores?: boolean
  /**
   * Document-level rules over each head's mentions (./document-rules: abbreviations defined in the
   * document, the same chemical tagged everywhere it occurs). Default DEFAULT_DOCUMENT_RULES: what
   * `tag` gives; NO_DOCUMENT_RULES scores the model's own decisions alone.
   */
  documentRules?: DocumentRules
}

/** One head's label probabilities on a document's words (TagOptions.wordScores). */
export interface HeadWordScores {
  head: string
  /** The head's label names: column j of `probs` is labels[j]. */
  labels: readonly string[]
  /** The head's CRF, if it has one (its tags are then a path, not per-word argmaxes). */
  crf?: CrfScores
  /** [start, end) character offsets of each word in the document text. */
  wordOffsets: ReadonlyArray<readonly [number, number]>
  /** 1 where some window held the word; an uncovered word's row is all 0. */
  covered: Uint8Array
  /** [words × labels] row-major: each covered word's label probabilities (its first piece's). */
  probs: Float32Array
}

/** A mention with its confidence; `head` names the head that found it when several ran. */
export type TaggedMention = ScoredMention & { head?: string }

export interface TagResult {
  /** Sorted by start. */
  mentions: TaggedMention[]
  /** Least-confidence uncertainty in [0, 1]; null for a document without words. */
  uncertainty: number | null
  /** Least confidence (= uncertainty), margin and entropy of the same words; null without words. */
  uncertainties: DocumentUncertainty | null
  /** Word pieces run through the engine ([CLS]/[SEP] included, padding not). */
  pieces: number
  /** With TagOptions.wordScores: each head run's word probabilities, in the order of the heads. */
  wordScores?: HeadWordScores[]
}

export function checkMaxLength(maxLength: number, maxPositionEmbeddings: number): void {
  if (!Number.isInteger(maxLength) || maxLength < 3) throw new TaggingError(`max length must be an integer >= 3, got ${maxLength}`)
  if (maxLength > maxPositionEmbeddings) {
    throw new TaggingError(`max length ${maxLength} exceeds the model's max_position_embeddings ${maxPositionEmbeddings}`)
  }
}

/** Row-wise softmax of [rows, C] logits. */
function softmaxRows(logits: Float32Array, rows: number, C: number): Float32Array {
  const out = new Float32Array(rows * C)
  for (let r = 0; r < rows; r++) {
    const o = r * C
    let max = -Infinity
    for (let j = 0; j < C; j++) max = Math.max(max, logits[o + j])
    let z = 0
    for (let j = 0; j < C; j++) z += out[o + j] = Math.exp(logits[o + j] - max)
    for (let j = 0; j < C; j++) out[o + j] /= z
  }
  return out
}

export class Tagger {
  constructor(
    readonly engine: InferenceEngine,
    readonly tokenizer: WordPieceTokenizer,
    /** Every head the engine outputs, in the model's order. */
    readonly heads: readonly TaggerHead[],
    readonly windows: WindowSettings,
    maxPositionEmbeddings: number,
    /** An encoder with a character channel: its config and character vocabulary (chars.txt). */
    readonly chars: { config: CharCnnConfig; vocab: WordFeaturizer } | null = null,
    /** Types several heads tag under different guidelines: which head's mentions a document keeps (./router; checked against the heads by routersOf). */
    readonly routers: readonly HeadRouter[] = [],
  ) {
    if (heads.length === 0) throw new TaggingError('the model has no classification head')
    checkMaxLength(windows.maxLength, maxPositionEmbeddings)
  }

  get headNames(): string[] {
    return this.heads.map((h) => h.name)
  }

  /** The heads a run uses: all, or the one named. */
  private select(head: string | undefined): readonly TaggerHead[] {
    if (head === undefined) return this.heads
    const h = this.heads.find((x) => x.name === head)
    if (!h) throw new TaggingError(`model has no head '${head}' (heads: ${this.headNames.join(', ')})`)
    return [h]
  }

  /** Mentions, uncertainty and pieces of each document, in input order. */
  async tag(docs: readonly CorpusDocument[], opts: TagOptions = {}): Promise<TagResult[]> {
    const heads = this.select(opts.head)
    const batchSize = opts.batchSize ?? TAGGING_DEFAULTS.batchSize
    const chunk = Math.max(1, opts.docsPerChunk ?? TAGGING_DEFAULTS.docsPerChunk)
    const exOpts = { maxLength: this.windows.maxLength, stride: this.windows.stride, sentenceLevel: this.windows.sentenceLevel }
    const out: TagResult[] = []
    for (let d0 = 0; d0 < docs.length; d0 += chunk) {
      const part = docs.slice(d0, d0 + chunk)
      const plans: TaggingPlan[] = part.map((doc) => planTagging(doc, this.tokenizer, heads[0].labelMap, exOpts))
      if (this.chars) plans.forEach((p, i) => attachCharInputs(p.examples, part[i].text, this.chars!.vocab, this.chars!.config))
      const flat: Array<{ plan: number; ex: number }> = []
      plans.forEach((p, i) => p.examples.forEach((_, k) => flat.push({ plan: i, ex: k })))
      const exs = flat.map((f) => plans[f.plan].examples[f.ex])
      // probs[head][plan][example]: [len, labels] row-major, row 0 = [CLS]
      const probs = heads.map(() => plans.map((p) => new Array<Float32Array>(p.examples.length)))
      const pieces = part.map(() => 0)
      // Sorted by length: batches waste little on padding; outputs go back by index.
      for (const idx of planBatches(exs.map((e) => e.inputIds.length), { batchSize, shuffle: false })) {
        if (opts.signal?.aborted) throw new DOMException('tagging cancelled', 'AbortError')
        const h = collate(exs, idx, { padTokenId: this.tokenizer.padId })
        const words = this.engine.needsWords ? idx.map((e) => exampleWords(exs[e], part[flat[e].plan].text)) : undefined
        const res = await this.engine.run({ inputIds: h.inputIds, attentionMask: h.attentionMask, tokenTypeIds: h.tokenTypeIds, batch: h.batchSize, seq: h.seqLen, words, chars: h.chars })
        for (const e of idx) pieces[flat[e].plan] += exs[e].inputIds.length
        heads.forEach((head, k) => {
          const logits = res.logits[head.name]
          if (!logits) throw new TaggingError(`the engine gave no logits for head '${head.name}'`)
          const C = head.labelMap.labels.length
          idx.forEach((e, r) => {
            const len = exs[e].inputIds.length
            const f = flat[e]
            probs[k][f.plan][f.ex] = softmaxRows(logits.subarray(r * h.seqLen * C, (r * h.seqLen + len) * C), len, C)
          })
        })
      }
      const rules = opts.documentRules ?? DEFAULT_DOCUMENT_RULES
      part.forEach((doc, i) => out.push(decode(doc, plans[i], heads, probs.map((p) => p[i]), pieces[i], opts.wordScores ?? false, rules, this.routers)))
      opts.onProgress?.(Math.min(docs.length, d0 + chunk), docs.length)
    }
    return out
  }

  async dispose(): Promise<void> {
    await this.engine.dispose()
  }
}

/** Mentions (merged over heads) and uncertainty of one document from its windows' probabilities. */
function decode(doc: CorpusDocument, plan: TaggingPlan, heads: readonly TaggerHead[], probs: Float32Array[][], pieces: number, wordScores: boolean, rules: DocumentRules, routers: readonly HeadRouter[]): TagResult {
  // Rules per head before the merge: each head is its own layer (./merge), its abbreviations and
  // repeated chemicals decided by its own mentions.
  const perHead: ScoredMention[][] = heads.map((head, k) =>
    applyDocumentRules(doc.text, plan.encoding.wordOffsets, predictionsToMentions(doc, { ...plan, labelMap: head.labelMap }, probs[k], { crf: head.crf }), rules),
  )
  // A routed type keeps the mentions of the head its router picks for this document; the other
  // heads' words stop counting for its uncertainty when every type they tag was routed away.
  const routedAway = heads.map(() => new Set<string>())
  if (heads.length > 1) {
    for (const r of routers) {
      const chosen = routeText(r, doc.text)
      heads.forEach((h, k) => {
        if (h.name !== chosen && r.heads.includes(h.name)) routedAway[k].add(r.type)
      })
    }
    heads.forEach((_, k) => {
      if (routedAway[k].size) perHead[k] = perHead[k].filter((m) => !routedAway[k].has(m.type))
    })
  }
  const silenced = heads.map((h, k) => routedAway[k].size > 0 && typesOfLabels(h.labelMap.labels).every((t) => routedAway[k].has(t)))
  const mentions: TaggedMention[] | HeadMention[] = heads.length === 1 ? perHead[0] : mergeHeadMentions(heads.map((h, k) => ({ head: h.name, mentions: perHead[k] })))
  const acc = new UncertaintyAccumulator()
  const numWords = plan.encoding.wordOffsets.length
  const scores: HeadWordScores[] = []
  heads.forEach((head, k) => {
    const C = head.labelMap.labels.length
    const merged = plan.examples.length ? mergeWindowPredictions(plan.windows, probs[k], plan.encoding.wordIndex, numWords, C) : { scores: new Float32Array(numWords * C), covered: new Uint8Array(numWords) }
    if (!silenced[k]) for (let w = 0; w < numWords; w++) if (merged.covered[w]) acc.add(merged.scores, w * C, C)
    if (wordScores) scores.push({ head: head.name, labels: head.labelMap.labels, crf: head.crf, wordOffsets: plan.encoding.wordOffsets, covered: merged.covered, probs: merged.scores })
  })
  const uncertainties = acc.result()
  return { mentions, uncertainty: uncertainties?.leastConfidence ?? null, uncertainties, pieces, ...(wordScores ? { wordScores: scores } : {}) }
}
