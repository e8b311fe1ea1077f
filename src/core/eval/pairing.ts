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
 * offsets are carried over token by token.
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
    if (!p.tokens) {
      warn(`document ${d + 1} (${p.id}): text differs between gold and prediction; offsets may not be comparable`)
      return p.mentions
    }
    const toGold = new Map<number, number>()
    let cursor = 0
    for (let k = 0; k < p.tokens.length; k++) {
      const [s, e] = p.tokens[k]!
      const token = p.text.slice(s, e)
      while (cursor < g.text.length && /\s/.test(g.text[cursor]!)) cursor++
      if (!g.text.startsWith(token, cursor)) {
        const found = /^\S*/.exec(g.text.slice(cursor))![0]
        throw mismatch(gold, pred, d, k, cursor, `token ${q(token)} does not match the gold text, which has ${found === '' ? 'nothing more' : q(found)} there`)
      }
      toGold.set(s, cursor)
      toGold.set(e, cursor + token.length)
      cursor += token.length
    }
    const rest = g.text.slice(cursor).trim()
    if (rest !== '') throw mismatch(gold, pred, d, p.tokens.length - 1, cursor, `the document ends here, but the gold text goes on with ${q(rest)}`)
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

function mismatch(gold: ScoredCorpus, pred: ScoredCorpus, d: number, k: number, goldOffset: number, problem: string): CorpusError {
  const goldTokens = gold.documents[d]!.tokens
  const goldToken = goldTokens ? goldTokens.findIndex(([, e]) => e > goldOffset) : -1
  const goldLine = goldToken >= 0 ? gold.tokenLine?.(d, goldToken) : undefined
  const where = goldLine !== undefined ? `${gold.path}:${goldLine}` : `document ${d + 1} of ${gold.path}`
  return CorpusError.at(pred.path, pred.tokenLine?.(d, k), `${problem} (${where}); the files are matched by position and must hold the same tokens`)
}
