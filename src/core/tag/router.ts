// Which head's guideline a document follows, when several heads of one model tag the same entity
// type. NCBI-disease and BC5CDR annotate Disease under guidelines that disagree (a tagger trained on
// either scores under 0.5 F1 on the other's devel set, docs/ACCURACY.md), so one head trained on
// both follows neither; two heads do, but a merged output cannot hold both. The router decides per
// document, from its words, which head's training corpus it resembles — genetic-disease abstracts
// read like NCBI-disease, drug-effect abstracts like BC5CDR — and keeps that head's mentions of the
// type only. A multinomial naive Bayes over lower-cased words (add-one smoothing): trained on the
// two train sets, it routed every NCBI-disease and BC5CDR-disease devel document (10 sentences
// each, as eval reads them) to its own corpus's head, 93 / 93 and 459 / 459 (docs/ACCURACY.md,
// session 34). Written here: the classifier is twenty lines,
// and its parameters live in the model folder's fastbioner.json, which must be checked as
// untrusted input (routersOf), not handed to a library's deserialiser.

import { CheckpointError } from '../model/checkpoint-files'
import { typesOfLabels } from '../nlp/bio'

export interface HeadRouter {
  /** The entity type the heads share. */
  type: string
  /** The heads that tag `type`, in the order of every per-head array below. */
  heads: string[]
  /** log P(head): the share of the training documents. */
  logPriors: number[]
  /** Per lower-cased word: log P(word | head) for each head. */
  words: Record<string, number[]>
}

/** Words as the router reads them: runs of letters and digits, lower-cased. */
export function routerWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) as string[]
}

/** Words seen fewer times than this in all training documents are left out of the router (its size). */
const MIN_WORD_COUNT = 2

/** A router from each head's training documents (their texts). */
export function trainHeadRouter(type: string, corpora: ReadonlyArray<{ head: string; texts: readonly string[] }>): HeadRouter {
  if (corpora.length < 2) throw new Error(`a router for ${type} needs two heads or more`)
  // A head without documents would get log P(head) = −∞, which JSON cannot hold.
  const empty = corpora.filter((c) => c.texts.length === 0).map((c) => c.head)
  if (empty.length) throw new Error(`head(s) ${empty.join(', ')} tag ${type} like another head but have no training documents to tell their corpus apart by`)
  const counts = corpora.map(({ texts }) => {
    const c = new Map<string, number>()
    for (const t of texts) for (const w of routerWords(t)) c.set(w, (c.get(w) ?? 0) + 1)
    return c
  })
  const total = new Map<string, number>()
  for (const c of counts) for (const [w, n] of c) total.set(w, (total.get(w) ?? 0) + n)
  const vocab = [...total].filter(([, n]) => n >= MIN_WORD_COUNT).map(([w]) => w).sort()
  const docs = corpora.map((c) => c.texts.length)
  const allDocs = docs.reduce((a, b) => a + b, 0)
  const words: Record<string, number[]> = Object.create(null)
  const denominators = counts.map((c) => vocab.reduce((s, w) => s + (c.get(w) ?? 0), 0) + vocab.length)
  // Four decimals: the JSON stays about half as large (8 520 words for the two disease corpora).
  const round = (x: number) => Math.round(x * 1e4) / 1e4
  for (const w of vocab) words[w] = counts.map((c, h) => round(Math.log(((c.get(w) ?? 0) + 1) / denominators[h])))
  return { type, heads: corpora.map((c) => c.head), logPriors: docs.map((d) => round(Math.log(d / allDocs))), words }
}

/** The head whose corpus the text resembles most (ties: the first listed). */
export function routeText(router: HeadRouter, text: string): string {
  const score = [...router.logPriors]
  for (const w of routerWords(text)) {
    const lp = Object.hasOwn(router.words, w) ? router.words[w] : undefined
    if (lp) lp.forEach((v, h) => (score[h] += v))
  }
  let best = 0
  for (let h = 1; h < score.length; h++) if (score[h] > score[best]) best = h
  return router.heads[best]
}

const MAX_ROUTER_HEADS = 16
const MAX_ROUTER_WORDS = 200_000
const MAX_WORD_CHARS = 100

/**
 * The routers a model folder states (fastbioner.json `routers`), checked: it comes from a file a
 * user may have been sent. Heads must be among `headNames`; a type is routed once.
 */
export function routersOf(value: unknown, file: string, headNames: readonly string[]): HeadRouter[] {
  if (value === undefined || value === null) return []
  const fail = (what: string): never => {
    throw new CheckpointError(`${file}: routers${what.startsWith('[') ? '' : ' '}${what}`)
  }
  if (!Array.isArray(value)) fail('must be a list')
  const out: HeadRouter[] = []
  for (const [i, r] of (value as unknown[]).entries()) {
    if (typeof r !== 'object' || r === null) fail(`[${i}] must be an object`)
    const { type, heads, logPriors, words } = r as Record<string, unknown>
    if (typeof type !== 'string' || !type || type.length > MAX_WORD_CHARS) fail(`[${i}].type must be a type name`)
    if (out.some((o) => o.type === type)) fail(`[${i}]: ${type as string} is routed twice`)
    if (!Array.isArray(heads) || heads.length < 2 || heads.length > MAX_ROUTER_HEADS || !heads.every((h) => typeof h === 'string' && headNames.includes(h)) || new Set(heads).size !== heads.length) {
      fail(`[${i}].heads must name 2 to ${MAX_ROUTER_HEADS} distinct heads of the model (${headNames.join(', ')})`)
    }
    const n = (heads as string[]).length
    const isRow = (v: unknown) => Array.isArray(v) && v.length === n && v.every((x) => typeof x === 'number' && Number.isFinite(x) && x <= 0)
    if (!isRow(logPriors)) fail(`[${i}].logPriors must hold ${n} finite log-probabilities`)
    if (typeof words !== 'object' || words === null || Array.isArray(words)) fail(`[${i}].words must be an object`)
    const entries = Object.entries(words as object)
    if (entries.length > MAX_ROUTER_WORDS) fail(`[${i}].words holds ${entries.length} words (at most ${MAX_ROUTER_WORDS})`)
    const checked: Record<string, number[]> = Object.create(null)
    for (const [w, row] of entries) {
      if (w.length > MAX_WORD_CHARS) fail(`[${i}].words has a word of ${w.length} characters (at most ${MAX_WORD_CHARS})`)
      if (!isRow(row)) fail(`[${i}].words["${w.slice(0, 40)}"] must hold ${n} finite log-probabilities`)
      checked[w] = row as number[]
    }
    out.push({ type: type as string, heads: [...(heads as string[])], logPriors: [...(logPriors as number[])], words: checked })
  }
  return out
}

/**
 * A router for every entity type that two or more heads tag (each head trained on its own
 * corpora), from the texts of each head's training documents. None when every type has one head.
 * A document that several of the type's heads train on (a head of one corpus beside a head of
 * every corpus of the type) routes to the most specialised of them, the one with the fewest
 * training documents: it reads like that head's corpus, and the wider head has its other
 * corpora to be recognised by.
 */
export function headRouters(tasks: ReadonlyArray<{ head: string; train: ReadonlyArray<{ text: string }> }>, labels: Readonly<Record<string, readonly string[]>>): HeadRouter[] {
  const headsOfType = new Map<string, string[]>()
  for (const [head, l] of Object.entries(labels)) for (const t of typesOfLabels(l)) headsOfType.set(t, [...(headsOfType.get(t) ?? []), head])
  return [...headsOfType]
    .filter(([, heads]) => heads.length > 1)
    .map(([type, heads]) => {
      const texts = new Map(heads.map((head) => [head, tasks.filter((t) => t.head === head).flatMap((t) => t.train.map((d) => d.text))]))
      const read = new Map(heads.map((head) => [head, new Set(texts.get(head))]))
      return trainHeadRouter(type, heads.map((head) => {
        const narrower = heads.filter((other) => other !== head && read.get(other)!.size < read.get(head)!.size).map((other) => read.get(other)!)
        return { head, texts: texts.get(head)!.filter((text) => !narrower.some((docs) => docs.has(text))) }
      }))
    })
}
