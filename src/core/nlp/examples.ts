// Documents -> model inputs (training examples, tagging plans) and model outputs -> mentions.
//
// Words: a document's own tokens (CorpusDocument.tokens, e.g. CoNLL) when it has them, each
// tokenised on its own (HF is_split_into_words); otherwise BERT basic tokens. Labels go on a
// word's first piece; predictions are read from a word's first piece.
//
// Confidence of a predicted mention = mean over its words of the word's top label probability
// (the probability of the label that was chosen for that word), in [0, 1].
import type { CorpusDocument, Mention, SuggestionRule } from '../../shared/domain'
import { alignLabels, IGNORE_INDEX, tagsToChunks, type LabelMap } from './bio'
import { viterbi, type CrfScores } from '../model/crf'
import type { Tokenization, WordPieceTokenizer } from './tokenizer'
import { makeWindows, mergeWindowPredictions, splitSentences, type PieceWindow } from './windows'

export interface Example {
  docId: string
  /** [len]: [CLS] pieces [SEP], unpadded; len <= maxLength. */
  inputIds: Int32Array
  /** [len] all 1 (padding is the batcher's job). */
  attentionMask: Int32Array
  /** [len] all 0. */
  tokenTypeIds: Int32Array
  /** [len] label id on each word's first piece, -100 elsewhere (special tokens, later pieces). */
  labels: Int32Array
  /** [len] document-level word index, -1 for [CLS]/[SEP]. */
  wordIds: Int32Array
  /** [len] 1 on the first piece of a word (where labels/predictions live). */
  wordStarts: Uint8Array
  /** [len * 2] [start, end) character offsets into the document text; [0, 0] for specials. */
  offsets: Int32Array
  /** Pieces [start, end) of the document's tokenisation this example holds. */
  window: PieceWindow
  /** Index of the sentence (sentence level) or 0 (document level). */
  segment: number
}

export interface ExampleOptions {
  /** Sequence length including [CLS] and [SEP]. */
  maxLength: number
  /** Overlap of consecutive windows in pieces; see makeWindows. */
  stride?: number
  /** One example per sentence (splitSentences, never cutting a mention), windowed if longer. */
  sentenceLevel?: boolean
  /** Use CorpusDocument.tokens as words when present. Default true. */
  useDocumentTokens?: boolean
}

type DocLike = Pick<CorpusDocument, 'id' | 'text' | 'mentions'> & {
  tokens?: Array<[number, number]>
  /** Spans a sentence boundary must not cut (sentence level); default the mentions. */
  protect?: ReadonlyArray<{ start: number; end: number }>
}

export function encodeDocument(doc: Pick<CorpusDocument, 'text'> & { tokens?: Array<[number, number]> }, tokenizer: WordPieceTokenizer, useDocumentTokens = true): Tokenization {
  return tokenizer.tokenize(doc.text, useDocumentTokens && doc.tokens ? doc.tokens : undefined)
}

/** Piece ranges [start, end) of the segments examples are made from. */
function segmentsOf(doc: DocLike, enc: Tokenization, sentenceLevel: boolean, useDocumentTokens: boolean): PieceWindow[] {
  const n = enc.ids.length
  if (!sentenceLevel) return n > 0 ? [{ start: 0, end: n }] : []
  const sentences = splitSentences(doc.text, useDocumentTokens ? doc.tokens : undefined, { protect: doc.protect ?? doc.mentions })
  // A piece belongs to the last sentence starting at or before it; pieces are in text order.
  const out: PieceWindow[] = []
  let p = 0
  for (let k = 0; k < sentences.length && p < n; k++) {
    const nextStart = k + 1 < sentences.length ? sentences[k + 1][0] : Infinity
    const s = p
    while (p < n && enc.offsets[p][0] < nextStart) p++
    if (p > s) out.push({ start: s, end: p })
  }
  if (p < n) out.push({ start: p, end: n })
  return out
}

function buildExample(docId: string, enc: Tokenization, labels: Int32Array | null, win: PieceWindow, segment: number, tokenizer: WordPieceTokenizer): Example {
  const len = win.end - win.start + 2
  const ex: Example = {
    docId,
    inputIds: new Int32Array(len),
    attentionMask: new Int32Array(len).fill(1),
    tokenTypeIds: new Int32Array(len),
    labels: new Int32Array(len).fill(IGNORE_INDEX),
    wordIds: new Int32Array(len).fill(-1),
    wordStarts: new Uint8Array(len),
    offsets: new Int32Array(len * 2),
    window: win,
    segment,
  }
  ex.inputIds[0] = tokenizer.clsId
  ex.inputIds[len - 1] = tokenizer.sepId
  for (let p = win.start; p < win.end; p++) {
    const q = p - win.start + 1
    const w = enc.wordIndex[p]
    ex.inputIds[q] = enc.ids[p]
    ex.wordIds[q] = w
    ex.offsets[2 * q] = enc.offsets[p][0]
    ex.offsets[2 * q + 1] = enc.offsets[p][1]
    const first = p === 0 || enc.wordIndex[p - 1] !== w
    if (first && w >= 0) ex.wordStarts[q] = 1
    if (labels !== null) ex.labels[q] = labels[p]
  }
  return ex
}

/**
 * Training/evaluation examples, in document order, then segment and window order. With
 * stride > 0 the words in a window overlap are labelled in both windows (as HF does).
 * Mentions of types missing from labelMap are trained as O; nested mentions keep the outer one.
 */
export function documentsToExamples(docs: Iterable<DocLike>, tokenizer: WordPieceTokenizer, labelMap: LabelMap, opts: ExampleOptions): Example[] {
  const useTokens = opts.useDocumentTokens ?? true
  const out: Example[] = []
  for (const doc of docs) {
    const enc = encodeDocument(doc, tokenizer, useTokens)
    const labels = alignLabels(doc.mentions, enc.offsets, enc.wordIndex, labelMap)
    segmentsOf(doc, enc, opts.sentenceLevel ?? false, useTokens).forEach((seg, k) => {
      for (const win of makeWindows(enc.wordIndex, opts, seg.start, seg.end)) out.push(buildExample(doc.id, enc, labels, win, k, tokenizer))
    })
  }
  return out
}

export interface TaggingPlan {
  docId: string
  labelMap: LabelMap
  encoding: Tokenization
  /** Piece ranges decoded separately (sentences, or the whole document). */
  segments: PieceWindow[]
  /** windows[k] is examples[k].window. */
  windows: PieceWindow[]
  /** Model inputs, labels all -100. */
  examples: Example[]
}

export function planTagging(
  doc: Pick<CorpusDocument, 'id' | 'text'> & { tokens?: Array<[number, number]>; mentions?: Mention[] },
  tokenizer: WordPieceTokenizer,
  labelMap: LabelMap,
  opts: ExampleOptions,
): TaggingPlan {
  const useTokens = opts.useDocumentTokens ?? true
  const d: DocLike = { id: doc.id, text: doc.text, tokens: doc.tokens, mentions: [] }
  const enc = encodeDocument(d, tokenizer, useTokens)
  const segments = segmentsOf(d, enc, opts.sentenceLevel ?? false, useTokens)
  const examples: Example[] = []
  segments.forEach((seg, k) => {
    for (const win of makeWindows(enc.wordIndex, opts, seg.start, seg.end)) examples.push(buildExample(doc.id, enc, null, win, k, tokenizer))
  })
  return { docId: doc.id, labelMap, encoding: enc, segments, windows: examples.map((e) => e.window), examples }
}

export interface ScoredMention extends Mention {
  /** Mean over the mention's words of the chosen label's probability (a rule's copy: its source's). */
  confidence: number
  /** Set when a document rule (core/tag/document-rules) added the mention. */
  rule?: SuggestionRule
}

export interface DecodeOptions {
  /** The scores are logits: softmax each row first. Default false (probabilities). */
  logits?: boolean
  /** A line break between two words ends any entity (CoNLL sentence breaks). Default true. */
  breakAtNewlines?: boolean
  /** The head's CRF: each run of words takes its Viterbi path instead of per-word argmax labels. */
  crf?: CrfScores
}

/**
 * Mentions from model output. perWindowProbs[k] is the output for plan.examples[k]: row-major
 * [seqLen, numLabels] with row 0 = [CLS] (padding rows allowed). Each word takes the label of
 * its first piece from the window where that piece is farthest from an edge; tags are decoded
 * with conlleval's chunk rules per run of words (a segment, cut at line breaks). With a CRF the
 * run's labels are its Viterbi path over log-probabilities (the same path as over the logits:
 * log-softmax only shifts each word's scores by a constant), and a word's confidence is the
 * probability of the label it was given.
 */
export function predictionsToMentions(
  doc: Pick<CorpusDocument, 'text'>,
  plan: TaggingPlan,
  perWindowProbs: ReadonlyArray<ArrayLike<number>>,
  opts: DecodeOptions = {},
): ScoredMention[] {
  const { labelMap, encoding: enc } = plan
  const numLabels = labelMap.labels.length
  const numWords = enc.wordOffsets.length
  const merged = mergeWindowPredictions(plan.windows, perWindowProbs, enc.wordIndex, numWords, numLabels)
  const oId = labelMap.label2id.O
  // Probabilities of each covered word (softmax of logits when given those).
  const probs = new Float64Array(numWords * numLabels)
  for (let w = 0; w < numWords; w++) {
    if (!merged.covered[w]) continue
    const base = w * numLabels
    if (!opts.logits) {
      for (let j = 0; j < numLabels; j++) probs[base + j] = merged.scores[base + j]
      continue
    }
    let max = -Infinity
    for (let j = 0; j < numLabels; j++) max = Math.max(max, merged.scores[base + j])
    let z = 0
    for (let j = 0; j < numLabels; j++) z += probs[base + j] = Math.exp(merged.scores[base + j] - max)
    for (let j = 0; j < numLabels; j++) probs[base + j] /= z
  }
  // Segment of each word (by its first piece); -1 for words without pieces.
  const wordSeg = new Int32Array(numWords).fill(-1)
  plan.segments.forEach((seg, k) => {
    for (let p = seg.start; p < seg.end; p++) {
      const w = enc.wordIndex[p]
      if (w >= 0 && wordSeg[w] < 0) wordSeg[w] = k
    }
  })
  const breakNl = opts.breakAtNewlines ?? true
  const out: ScoredMention[] = []
  let runStart = 0
  for (let w = 0; w <= numWords; w++) {
    const boundary =
      w === numWords ||
      (w > runStart &&
        (wordSeg[w] !== wordSeg[w - 1] ||
          wordSeg[w] < 0 ||
          (breakNl && /[\r\n]/.test(doc.text.slice(enc.wordOffsets[w - 1][1], enc.wordOffsets[w][0])))))
    if (!boundary) continue
    const { tags, conf } = runLabels(probs, merged.covered, runStart, w, numLabels, oId, labelMap.labels, opts.crf)
    for (const c of tagsToChunks(tags)) {
      if (c.type === '') continue
      const a = runStart + c.start
      const b = runStart + c.end
      let sum = 0
      for (let k = c.start; k < c.end; k++) sum += conf[k]
      const start = enc.wordOffsets[a][0]
      const end = enc.wordOffsets[b - 1][1]
      out.push({ start, end, text: doc.text.slice(start, end), type: c.type, confidence: sum / (b - a) })
    }
    runStart = w
  }
  return out.sort((x, y) => x.start - y.start || x.end - y.end)
}

/**
 * Tags and confidences of words [from, to): per-word argmax, or the Viterbi path of each stretch
 * of covered words when the head has a CRF. Words no window covered are 'O'.
 */
function runLabels(
  probs: Float64Array,
  covered: ArrayLike<boolean | number>,
  from: number,
  to: number,
  C: number,
  oId: number,
  labels: readonly string[],
  crf: CrfScores | undefined,
): { tags: string[]; conf: Float64Array } {
  const tags: string[] = new Array(to - from).fill('O')
  const conf = new Float64Array(to - from)
  const give = (w: number, j: number) => {
    tags[w - from] = j === oId ? 'O' : labels[j]
    conf[w - from] = probs[w * C + j]
  }
  for (let w = from; w < to; ) {
    if (!covered[w]) {
      w++
      continue
    }
    let end = w
    while (end < to && covered[end]) end++
    if (crf) {
      const em = new Float64Array((end - w) * C)
      for (let i = 0; i < em.length; i++) em[i] = Math.log(Math.max(probs[w * C + i], 1e-30))
      viterbi(em, end - w, C, crf).forEach((j, t) => give(w + t, j))
    } else {
      for (let k = w; k < end; k++) {
        let best = 0
        for (let j = 1; j < C; j++) if (probs[k * C + j] > probs[k * C + best]) best = j
        give(k, best)
      }
    }
    w = end
  }
  return { tags, conf }
}
