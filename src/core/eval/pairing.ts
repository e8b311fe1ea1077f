// Pairs the documents of a gold file with those of a prediction file before scoring.
//
// Documents are matched by id when both files carry ids of their own. CoNLL (and text, brat)
// documents have none: their ids are made from the file name ("gold-1"), so a prediction file
// of another name would never match. Those are matched by position, as conlleval and seqeval do,
// and the prediction's tokens must spell the gold text: a mismatch is an error naming the line.
import type { CorpusDocument, CorpusFormat, Mention } from '@shared/domain'
import { CorpusError } from '../corpus/errors'
import { q } from '../corpus/util'
import { evaluateSpans, type EvalResult, type GoldDocument, type PredictedDocument } from './metrics'

/** Formats whose readers make document ids up from the file name. */
const FORMATS_WITHOUT_IDS: ReadonlySet<CorpusFormat> = new Set(['conll', 'text', 'brat'])

export function hasOwnDocumentIds(format: CorpusFormat): boolean {
  return !FORMATS_WITHOUT_IDS.has(format)
}

export interface ScoredCorpus {
  path: string
  format: CorpusFormat
  documents: CorpusDocument[]
  /** 1-based file line of token `token` of document `doc`, when the format has token lines (CoNLL). */
  tokenLine?: (doc: number, token: number) => number | undefined
}

export interface PairingOptions {
  warn?: (message: string) => void
}

/** Scores a prediction file against a gold file: by position or by id (see the file comment). */
export function scoreCorpora(gold: ScoredCorpus, pred: ScoredCorpus, options: PairingOptions = {}): EvalResult {
  const warn = options.warn ?? (() => {})
  const sameIdsInOrder = gold.documents.length === pred.documents.length && gold.documents.every((g, i) => g.id === pred.documents[i]!.id)
  if (sameIdsInOrder || !hasOwnDocumentIds(gold.format) || !hasOwnDocumentIds(pred.format)) {
    const byPosition = alignByPosition(gold, pred, warn)
    return evaluateSpans(
      gold.documents.map((g, i): GoldDocument => ({ id: String(i), text: g.text, mentions: g.mentions, tokens: g.tokens })),
      byPosition.map((mentions, i): PredictedDocument => ({ id: String(i), mentions })),
    )
  }
  const dg = firstDuplicateId(gold.documents)
  if (dg !== undefined) throw CorpusError.at(gold.path, undefined, `document id ${dg} appears twice; ids must be unique unless the prediction file lists the same documents in the same order`)
  const dp = firstDuplicateId(pred.documents)
  if (dp !== undefined) throw CorpusError.at(pred.path, undefined, `document id ${dp} appears twice`)
  const byId = new Map(gold.documents.map((g) => [g.id, g]))
  const unknown = pred.documents.filter((p) => !byId.has(p.id)).length
  if (unknown > 0) warn(`${pred.path}: ${unknown} document(s) not in ${gold.path}; their mentions count as false positives`)
  // A prediction file cut short (or of a subset) scores every missing document's mentions as misses.
  const predIds = new Set(pred.documents.map((p) => p.id))
  const missing = gold.documents.filter((g) => !predIds.has(g.id))
  if (missing.length > 0) {
    const first = missing.slice(0, 3).map((g) => g.id).join(', ')
    warn(`${pred.path}: ${missing.length} document(s) of ${gold.path} missing (${first}${missing.length > 3 ? ', …' : ''}); their gold mentions count as false negatives`)
  }
  for (const p of pred.documents) {
    const g = byId.get(p.id)
    if (g && g.text !== p.text) warn(`document ${p.id}: text differs between gold and prediction; offsets may not be comparable`)
  }
  return evaluateSpans(gold.documents, pred.documents)
}

function firstDuplicateId(docs: CorpusDocument[]): string | undefined {
  const seen = new Set<string>()
  for (const d of docs) {
    if (seen.has(d.id)) return d.id
    seen.add(d.id)
  }
  return undefined
}

/**
 * The predicted mentions of each gold document, in gold offsets. Same text: taken as they are.
 * Different text with tokens (CoNLL re-joins its tokens with spaces): each predicted token is
 * found in the gold text after the previous one, skipping only whitespace, and the mention
 * offsets are carried over token by token; with the tokens on the gold side, the other way round.
 */
function alignByPosition(gold: ScoredCorpus, pred: ScoredCorpus, warn: (message: string) => void): Mention[][] {
  if (gold.documents.length !== pred.documents.length) {
    throw CorpusError.at(
      pred.path,
      undefined,
      `${pred.documents.length} documents, but ${gold.path} has ${gold.documents.length}; documents without ids of their own (${pred.format === 'conll' || gold.format === 'conll' ? 'CoNLL' : pred.format}) are matched by position, so both files must hold the same documents in the same order`,
    )
  }
  return gold.documents.map((g, d) => {
    const p = pred.documents[d]!
    if (p.text === g.text) return p.mentions
    const toGold = new Map<number, number>()
    if (p.tokens) {
      const at = placeTokens(p.text, p.tokens, g.text, (k, cursor, found) =>
        mismatch(gold, pred, d, k, cursor, `token ${q(p.text.slice(...p.tokens![k]!))} does not match the gold text, which has ${found} there`),
      )
      const rest = g.text.slice(at.end).trim()
      if (rest !== '') throw mismatch(gold, pred, d, p.tokens.length - 1, at.end, `the document ends here, but the gold text goes on with ${q(rest)}`)
      p.tokens.forEach(([s, e], k) => toGold.set(s, at.starts[k]!).set(e, at.starts[k]! + e - s))
    } else if (g.tokens) {
      // The tokens are on the gold side (CoNLL gold, a PubTator or BioC prediction): the other way round.
      const at = placeTokens(g.text, g.tokens, p.text, (k, _cursor, found) =>
        CorpusError.at(
          gold.path,
          gold.tokenLine?.(d, k),
          `token ${q(g.text.slice(...g.tokens![k]!))} is not in document ${d + 1} of ${pred.path}, which has ${found} there; the files are matched by position and must hold the same words`,
        ),
      )
      const rest = p.text.slice(at.end).trim()
      if (rest !== '') throw CorpusError.at(pred.path, undefined, `document ${d + 1} goes on with ${q(rest)} after the last token of document ${d + 1} of ${gold.path}`)
      g.tokens.forEach(([s, e], k) => toGold.set(at.starts[k]!, s).set(at.starts[k]! + e - s, e))
    } else {
      warn(`document ${d + 1} (${p.id}): text differs between gold and prediction; offsets may not be comparable`)
      return p.mentions
    }
    const mentions: Mention[] = []
    for (const m of p.mentions) {
      const start = toGold.get(m.start)
      const end = toGold.get(m.end)
      if (start === undefined || end === undefined) {
        warn(`document ${d + 1} (${p.id}): mention ${m.start}-${m.end} does not start and end on token boundaries; ignored`)
        continue
      }
      mentions.push({ ...m, start, end, text: g.text.slice(start, end) })
    }
    return mentions
  })
}

/**
 * Where each token of `text` lies in `other`: each is found after the previous one, skipping only
 * whitespace. `fail` makes the error for token k, which `other` does not have at `cursor` (where
 * it has `found`, quoted). `end` is the offset in `other` after the last token.
 */
function placeTokens(
  text: string,
  tokens: ReadonlyArray<readonly [number, number]>,
  other: string,
  fail: (k: number, cursor: number, found: string) => Error,
): { starts: number[]; end: number } {
  const starts: number[] = []
  let cursor = 0
  for (const [k, [s, e]] of tokens.entries()) {
    const token = text.slice(s, e)
    while (cursor < other.length && /\s/.test(other[cursor]!)) cursor++
    if (!other.startsWith(token, cursor)) {
      const found = /^\S*/.exec(other.slice(cursor))![0]
      throw fail(k, cursor, found === '' ? 'nothing more' : q(found))
    }
    starts.push(cursor)
    cursor += token.length
  }
  return { starts, end: cursor }
}

function mismatch(gold: ScoredCorpus, pred: ScoredCorpus, d: number, k: number, goldOffset: number, problem: string): CorpusError {
  const goldTokens = gold.documents[d]!.tokens
  const goldToken = goldTokens ? goldTokens.findIndex(([, e]) => e > goldOffset) : -1
  const goldLine = goldToken >= 0 ? gold.tokenLine?.(d, goldToken) : undefined
  const where = goldLine !== undefined ? `${gold.path}:${goldLine}` : `document ${d + 1} of ${gold.path}`
  return CorpusError.at(pred.path, pred.tokenLine?.(d, k), `${problem} (${where}); the files are matched by position and must hold the same tokens`)
}
