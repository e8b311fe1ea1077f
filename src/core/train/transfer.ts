// The transfer set of sequence-level knowledge distillation (Kim & Rush 2016): unlabelled
// sentences, sampled once, that teacher models tag before the student trains on them with the
// gold corpora (./word-loop's WordTransferSet). The teachers' best label sequences are the
// targets, so a CRF student keeps its own loss; each teacher runs once over the set, not every
// epoch.

import type { CorpusDocument } from '../../shared/domain'
import { readTextDocuments } from '../pretrain/text'
import { Rng } from '../rng'
import type { Tagger } from '../tag/tagger'
import type { WordTransferSet } from './word-loop'

/**
 * Up to `count` lines of the text files (one sentence a line, as pretraining reads them), a
 * uniform sample by reservoir (Algorithm R) so memory stays bounded on PubMed-sized input and the
 * sample does not favour the files read first; all lines, in order, when count is not given.
 */
export async function sampleTransferSentences(paths: readonly string[], count: number | undefined, seed: number): Promise<string[]> {
  const rng = new Rng(seed)
  const kept: string[] = []
  let seen = 0
  for await (const doc of readTextDocuments(paths)) {
    for (const line of doc.lines) {
      seen++
      if (count === undefined || kept.length < count) kept.push(line)
      else {
        const j = Math.floor(rng.next() * seen)
        if (j < count) kept[j] = line
      }
    }
  }
  return kept
}

/** One document per sentence (no mentions): what the tagger and the examples path take. */
export function transferDocuments(sentences: readonly string[]): CorpusDocument[] {
  return sentences.map((text, i) => ({ id: `transfer-${i + 1}`, text, passages: [{ type: 'sentence', offset: 0, length: text.length }], mentions: [] }))
}

export interface TransferTeacher {
  /** The student's head this teacher labels for. */
  head: string
  tagger: Tagger
  /** The teacher's own head to run (default: the one named `head`, else its only head). */
  teacherHead?: string
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

/** Every teacher tags every document once (its Viterbi path where it has a CRF). */
export async function labelTransferSet(
  documents: readonly CorpusDocument[],
  teachers: readonly TransferTeacher[],
  onProgress?: (head: string, done: number, total: number) => void,
  chunk = 256,
): Promise<WordTransferSet> {
  const mentions: WordTransferSet['mentions'] = {}
  for (const t of teachers) {
    if (t.head in mentions) throw new Error(`two teachers for head '${t.head}'`)
    const head = teacherHeadFor(t)
    const out: Array<CorpusDocument['mentions']> = []
    for (let i = 0; i < documents.length; i += chunk) {
      const results = await t.tagger.tag(documents.slice(i, i + chunk), { head })
      for (const r of results) out.push(r.mentions.map(({ start, end, type, text }) => ({ start, end, type, text })))
      onProgress?.(t.head, out.length, documents.length)
    }
    mentions[t.head] = out
  }
  return { documents, mentions }
}
