// The transfer set of sequence-level knowledge distillation (Kim & Rush 2016): unlabelled
// sentences, sampled once, that teacher models tag before the student trains on them with the
// gold corpora (./word-loop's WordTransferSet). The teachers' best label sequences are the
// targets, so a CRF student keeps its own loss; each teacher runs once over the set, not every
// epoch. Posterior targets keep each teacher's word distributions instead, from which every step
// draws label paths (structure-level distillation, Wang et al. 2020): still one label a word.

import type { CorpusDocument } from '../../shared/domain'
import { readTextDocuments } from '../pretrain/text'
import { Rng } from '../rng'
import type { CrfScores } from '../model/crf'
import { NO_DOCUMENT_RULES } from '../tag/document-rules'
import type { HeadWordScores, Tagger } from '../tag/tagger'
import type { WordPosteriors, WordTransferSet } from './word-loop'
import { documentsDigest, transferTagKey, type TransferTagStore } from './transfer-tags'

/**
 * Up to `count` lines of the text files (one sentence a line, as pretraining reads them), a
 * uniform sample by reservoir (Algorithm R) so memory stays bounded on PubMed-sized input and the
 * sample does not favour the files read first; all lines, in order, when count is not given.
 *
 * `linesPerPassage` > 1 samples runs of that many consecutive lines of one text document instead
 * (a file, or its part between blank lines, cut into runs from its first line; its last run may be
 * shorter), joined by line breaks, about count / linesPerPassage of them: a model trained on windows over documents
 * (--doc-level) then sees the neighbouring sentences of text kept in document order, as the
 * unlabelled corpus here is, and its teachers tag each sentence with that context.
 */
export async function sampleTransferSentences(paths: readonly string[], count: number | undefined, seed: number, linesPerPassage = 1): Promise<string[]> {
  const rng = new Rng(seed)
  const wanted = count === undefined ? undefined : Math.ceil(count / linesPerPassage)
  const kept: string[] = []
  let seen = 0
  const offer = (passage: string) => {
    seen++
    if (wanted === undefined || kept.length < wanted) kept.push(passage)
    else {
      const j = Math.floor(rng.next() * seen)
      if (j < wanted) kept[j] = passage
    }
  }
  for await (const doc of readTextDocuments(paths)) {
    for (let i = 0; i < doc.lines.length; i += linesPerPassage) offer(doc.lines.slice(i, i + linesPerPassage).join('\n'))
  }
  return kept
}

/** One document per sampled sentence or passage (no mentions): what the tagger and the examples path take. */
export function transferDocuments(sentences: readonly string[]): CorpusDocument[] {
  return sentences.map((text, i) => ({ id: `transfer-${i + 1}`, text, passages: [{ type: 'sentence', offset: 0, length: text.length }], mentions: [] }))
}

export interface TransferTeacher {
  /** The student's head this teacher labels for. */
  head: string
  tagger: Tagger
  /** The teacher's own head to run (default: the one named `head`, else its only head). */
  teacherHead?: string
  /** Content fingerprint of the teacher's model (config and weights): with a store, its tags are kept under it. */
  fingerprint?: string
}

/** The teacher head that labels for `head`: the one of that name, else the model's only head. */
export function teacherHeadFor(t: Pick<TransferTeacher, 'head' | 'tagger' | 'teacherHead'>): string {
  const names = t.tagger.headNames
  if (t.teacherHead !== undefined) {
    if (!names.includes(t.teacherHead)) throw new Error(`teacher for '${t.head}' has no head '${t.teacherHead}' (heads: ${names.join(', ')})`)
    return t.teacherHead
  }
  if (names.includes(t.head)) return t.head
  if (names.length === 1) return names[0]
  throw new Error(`teacher for '${t.head}' has several heads (${names.join(', ')}) and none is named '${t.head}'`)
}

type TransferMention = CorpusDocument['mentions'][number]

/**
 * The mentions that more than half of the lists contain (same start, end and type): a span
 * majority vote of an ensemble of teachers, whose labels beat any one teacher's (measured with
 * `npm run bench:ensemble`). Two kept mentions never overlap: each has a majority of the lists,
 * two majorities share a list, and no list holds two overlapping mentions. Sorted by start.
 */
export function majorityMentions(lists: ReadonlyArray<readonly TransferMention[]>): TransferMention[] {
  if (lists.length === 1) return [...lists[0]]
  const votes = new Map<string, { mention: TransferMention; count: number }>()
  for (const list of lists) {
    const seen = new Set<string>() // a list naming one span twice votes once
    for (const mention of list) {
      const key = `${mention.start}:${mention.end}:${mention.type}`
      if (seen.has(key)) continue
      seen.add(key)
      const v = votes.get(key)
      if (v) v.count++
      else votes.set(key, { mention, count: 1 })
    }
  }
  return [...votes.values()].filter((v) => 2 * v.count > lists.length).map((v) => v.mention).sort((a, b) => a.start - b.start)
}

/** What a transfer sentence teaches a head: its teachers' vote, or draws from their posteriors. */
export type TransferTargets = 'vote' | 'posterior'

/**
 * Every teacher tags every document once (its Viterbi path where it has a CRF). A head with
 * several teachers (an ensemble, e.g. one model per seed) learns the mentions most of them agree
 * on (majorityMentions). targets 'posterior' also keeps each teacher's per-word label
 * log-probabilities, with its labels and CRF (WordTransferSet.posteriors), which the training
 * steps sample their targets from; the vote stays, for the words a teacher did not score.
 * With `store`, a teacher that has a fingerprint is read from it when it tagged these documents
 * before, and its tags are put there otherwise (./transfer-tags: a resumed run tags nothing again).
 */
export async function labelTransferSet(
  documents: readonly CorpusDocument[],
  teachers: readonly TransferTeacher[],
  onProgress?: (head: string, done: number, total: number, stored?: boolean) => void,
  chunk = 256,
  opts: { targets?: TransferTargets; store?: TransferTagStore } = {},
): Promise<WordTransferSet> {
  const posterior = opts.targets === 'posterior'
  const byHead = new Map<string, Array<Array<CorpusDocument['mentions']>>>()
  const posteriors: NonNullable<WordTransferSet['posteriors']> = {}
  // A document's word offsets, shared by the teachers that split it into the same words.
  const sharedOffsets: Int32Array[] = []
  // The sentences' share of every teacher's key, hashed once (30 000 sentences: about 4 MB).
  const digest = opts.store && !posterior ? documentsDigest(documents) : ''
  for (const t of teachers) {
    const head = teacherHeadFor(t)
    // Posterior targets need every word's scores, which are not stored: those teachers always tag.
    const key = opts.store && t.fingerprint && !posterior ? transferTagKey(digest, { head: t.head, teacherHead: head, fingerprint: t.fingerprint }) : undefined
    const stored = key ? opts.store!.get(key, documents) : undefined
    if (stored) {
      byHead.set(t.head, [...(byHead.get(t.head) ?? []), stored])
      onProgress?.(t.head, documents.length, documents.length, true)
      continue
    }
    const out: Array<CorpusDocument['mentions']> = []
    const scored: WordPosteriors[] = []
    let labels: readonly string[] = []
    let crf: CrfScores | undefined
    for (let i = 0; i < documents.length; i += chunk) {
      // The teachers' own decisions, without the document rules: a transfer document is one
      // sentence, so the rules have little to see, and the recipe's records were made without
      // them. (A copied mention may straddle a sentence split; transferExamples cuts every head
      // around every head's mentions, so the heads' examples still line up.)
      const results = await t.tagger.tag(documents.slice(i, i + chunk), { head, wordScores: posterior, documentRules: NO_DOCUMENT_RULES })
      for (const r of results) {
        out.push(r.mentions.map(({ start, end, type, text }) => ({ start, end, type, text })))
        if (!posterior) continue
        const ws = r.wordScores?.[0]
        if (!ws) throw new Error(`teacher for '${t.head}' gave no word scores (posterior targets need them)`)
        ;({ labels, crf } = ws)
        scored.push(wordPosteriors(ws, sharedOffsets, scored.length))
      }
      onProgress?.(t.head, out.length, documents.length)
    }
    byHead.set(t.head, [...(byHead.get(t.head) ?? []), out])
    if (key) opts.store!.put(key, t.head, out)
    if (posterior) posteriors[t.head] = [...(posteriors[t.head] ?? []), { labels, crf, documents: scored }]
  }
  const mentions: WordTransferSet['mentions'] = {}
  for (const [head, perTeacher] of byHead) mentions[head] = documents.map((_, i) => majorityMentions(perTeacher.map((p) => p[i])))
  return posterior ? { documents, mentions, posteriors } : { documents, mentions }
}

/** The covered words of one document's scores: their offsets and label log-probabilities. */
function wordPosteriors(ws: HeadWordScores, sharedOffsets: Int32Array[], doc: number): WordPosteriors {
  const C = ws.labels.length
  let n = 0
  for (let w = 0; w < ws.covered.length; w++) n += ws.covered[w]
  const offsets = new Int32Array(2 * n)
  const logProbs = new Float32Array(n * C)
  for (let w = 0, k = 0; w < ws.covered.length; w++) {
    if (!ws.covered[w]) continue
    offsets[2 * k] = ws.wordOffsets[w][0]
    offsets[2 * k + 1] = ws.wordOffsets[w][1]
    for (let j = 0; j < C; j++) logProbs[k * C + j] = Math.log(ws.probs[w * C + j])
    k++
  }
  const prev = sharedOffsets[doc]
  if (prev && prev.length === offsets.length && prev.every((x, i) => x === offsets[i])) return { offsets: prev, logProbs }
  sharedOffsets[doc] = offsets
  return { offsets, logProbs }
}
