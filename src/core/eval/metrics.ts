// Entity-level precision / recall / F1 and token accuracy.
//
// evaluateTags is a line-by-line port of conlleval.pl (CoNLL-2000 version, 2000-04-14): the same
// startOfChunk/endOfChunk rules, the same correct-chunk state machine, sentences separated by a
// boundary that counts as "O" and is not a token. Results are fractions in [0, 1] instead of
// percentages; a zero denominator gives 0 (conlleval's convention), so empty predictions have
// precision 0. One deliberate difference: a tag's type is everything after the FIRST "-"
// ("B-Gene-Protein" -> "Gene-Protein"), where conlleval's split(/-/) would keep only "Gene".
//
// evaluateSpans scores character spans per document: a prediction is correct when a gold
// mention has the same start, end and type (duplicates count once).
import { endOfChunk, parseTag, spansToWordTags, startOfChunk, type Span } from '../nlp/bio'
import { BasicTokenizer } from '../nlp/basic-tokenizer'

export interface Prf {
  precision: number
  recall: number
  f1: number
  tp: number
  fp: number
  fn: number
}

export interface EvalResult {
  overall: Prf
  /** Per entity type (types seen in gold or predictions), sorted by name. */
  types: Record<string, Prf>
  /** Correct tags / tokens; 0 when there are no tokens. */
  token_accuracy: number
}

function prf(tp: number, foundGuessed: number, foundCorrect: number): Prf {
  const precision = foundGuessed > 0 ? tp / foundGuessed : 0
  const recall = foundCorrect > 0 ? tp / foundCorrect : 0
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0
  return { precision, recall, f1, tp, fp: foundGuessed - tp, fn: foundCorrect - tp }
}

function sortedKeys(...maps: Map<string, number>[]): string[] {
  const keys = new Set<string>()
  for (const m of maps) for (const k of m.keys()) keys.add(k)
  return [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

const inc = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1)

/** conlleval over sentences of tags: gold[i] and pred[i] are one sentence, same length. */
export function evaluateTags(gold: ReadonlyArray<readonly string[]>, pred: ReadonlyArray<readonly string[]>): EvalResult {
  if (gold.length !== pred.length) throw new Error(`evaluateTags: ${gold.length} gold sentences but ${pred.length} predicted`)
  let correctChunk = 0
  let foundCorrect = 0
  let foundGuessed = 0
  let correctTags = 0
  let tokenCounter = 0
  const correctChunkT = new Map<string, number>()
  const foundCorrectT = new Map<string, number>()
  const foundGuessedT = new Map<string, number>()
  let inCorrect = false
  let lastCorrect = 'O'
  let lastCorrectType = ''
  let lastGuessed = 'O'
  let lastGuessedType = ''

  const step = (goldTag: string, predTag: string, boundary: boolean) => {
    let { prefix: correct, type: correctType } = parseTag(goldTag)
    let { prefix: guessed, type: guessedType } = parseTag(predTag)
    if (boundary) {
      correct = guessed = 'O'
      correctType = guessedType = ''
    }
    const endCorrect = endOfChunk(lastCorrect, correct, lastCorrectType, correctType)
    const endGuessed = endOfChunk(lastGuessed, guessed, lastGuessedType, guessedType)
    if (inCorrect) {
      if (endCorrect && endGuessed && lastGuessedType === lastCorrectType) {
        inCorrect = false
        correctChunk++
        inc(correctChunkT, lastCorrectType)
      } else if (endCorrect !== endGuessed || guessedType !== correctType) {
        inCorrect = false
      }
    }
    const startCorrect = startOfChunk(lastCorrect, correct, lastCorrectType, correctType)
    const startGuessed = startOfChunk(lastGuessed, guessed, lastGuessedType, guessedType)
    if (startCorrect && startGuessed && guessedType === correctType) inCorrect = true
    if (startCorrect) {
      foundCorrect++
      inc(foundCorrectT, correctType)
    }
    if (startGuessed) {
      foundGuessed++
      inc(foundGuessedT, guessedType)
    }
    if (!boundary) {
      if (correct === guessed && guessedType === correctType) correctTags++
      tokenCounter++
    }
    lastGuessed = guessed
    lastCorrect = correct
    lastGuessedType = guessedType
    lastCorrectType = correctType
  }

  gold.forEach((g, i) => {
    const p = pred[i]
    if (g.length !== p.length) throw new Error(`evaluateTags: sentence ${i} has ${g.length} gold tags but ${p.length} predicted`)
    for (let k = 0; k < g.length; k++) step(g[k], p[k], false)
    step('O', 'O', true)
  })
  if (inCorrect) {
    correctChunk++
    inc(correctChunkT, lastCorrectType)
  }

  const types: Record<string, Prf> = {}
  for (const t of sortedKeys(foundCorrectT, foundGuessedT)) {
    if (t === '') continue // conlleval does not report the empty type
    types[t] = prf(correctChunkT.get(t) ?? 0, foundGuessedT.get(t) ?? 0, foundCorrectT.get(t) ?? 0)
  }
  return {
    overall: prf(correctChunk, foundGuessed, foundCorrect),
    types,
    token_accuracy: tokenCounter > 0 ? correctTags / tokenCounter : 0,
  }
}

export interface GoldDocument {
  id: string
  text: string
  mentions: readonly Span[]
  /** Words for token accuracy; BERT basic tokens (cased) of the text when absent. */
  tokens?: ReadonlyArray<readonly [number, number]>
}

export interface PredictedDocument {
  id: string
  mentions: readonly Span[]
}

/**
 * Exact span matching per document. A predicted document missing from `predDocs` predicts
 * nothing; predictions for documents not in `goldDocs` are all false positives. Token accuracy
 * compares IOB2 word tags derived from the gold and the predicted spans (spansToWordTags).
 */
export function evaluateSpans(goldDocs: Iterable<GoldDocument>, predDocs: Iterable<PredictedDocument>): EvalResult {
  const preds = new Map<string, PredictedDocument>()
  for (const d of predDocs) {
    if (preds.has(d.id)) throw new Error(`evaluateSpans: predicted document ${d.id} appears twice`)
    preds.set(d.id, d)
  }
  const tp = new Map<string, number>()
  const nGold = new Map<string, number>()
  const nPred = new Map<string, number>()
  const seenGold = new Set<string>()
  let correctTags = 0
  let tokenCount = 0
  let basic: BasicTokenizer | null = null
  const keyOf = (m: Span) => `${m.start}\u0000${m.end}\u0000${m.type}`
  const countSet = (mentions: readonly Span[], into: Map<string, number>): Map<string, Span> => {
    const set = new Map<string, Span>()
    for (const m of mentions) if (!set.has(keyOf(m))) set.set(keyOf(m), m)
    for (const m of set.values()) inc(into, m.type)
    return set
  }
  for (const g of goldDocs) {
    if (seenGold.has(g.id)) throw new Error(`evaluateSpans: gold document ${g.id} appears twice`)
    seenGold.add(g.id)
    const p = preds.get(g.id)
    const goldSet = countSet(g.mentions, nGold)
    const predSet = countSet(p?.mentions ?? [], nPred)
    for (const [k, m] of predSet) if (goldSet.has(k)) inc(tp, m.type)

    let words = g.tokens
    if (words === undefined) {
      basic ??= new BasicTokenizer({ lowercase: false })
      words = basic.tokenize(g.text).map((t) => [t.start, t.end] as [number, number])
    }
    const goldTags = spansToWordTags([...goldSet.values()], words).tags
    const predTags = spansToWordTags([...predSet.values()], words).tags
    for (let k = 0; k < goldTags.length; k++) if (goldTags[k] === predTags[k]) correctTags++
    tokenCount += goldTags.length
  }
  for (const [id, p] of preds) if (!seenGold.has(id)) countSet(p.mentions, nPred)

  const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0)
  const types: Record<string, Prf> = {}
  for (const t of sortedKeys(nGold, nPred)) types[t] = prf(tp.get(t) ?? 0, nPred.get(t) ?? 0, nGold.get(t) ?? 0)
  return {
    overall: prf(sum(tp), sum(nPred), sum(nGold)),
    types,
    token_accuracy: tokenCount > 0 ? correctTags / tokenCount : 0,
  }
}
