// A synthetic NER task that a 1-layer, 32-wide BERT learns in a few dozen steps: sentences of
// filler words in which every word of a fixed "disease" class starts an entity (B-), optionally
// continued by "syndrome"/"disease" (I-), which occur nowhere else. (Tail words that are also
// plain words elsewhere need the previous word as context; the tiny model does not learn that
// within the test's time budget.)
import type { CorpusDocument, Mention } from '../../../src/shared/domain'
import { Rng } from '../../../src/core/rng'

export const FILLER = [
  'patients', 'with', 'showed', 'and', 'of', 'in', 'treated', 'no', 'signs', 'were', 'the', 'a', 'after', 'study',
  'cells', 'levels', 'increased', 'reduced', 'risk', 'mice', 'therapy', 'children', 'observed', 'cases', 'family',
  'gene', 'protein', 'expression', 'analysis', 'found',
]
export const ENTITY = ['zorvitis', 'kalemia', 'brunoma', 'feltosis', 'quarnia', 'dravemia', 'lupexia', 'morbitis', 'trenalgia', 'vostoma', 'plexoma', 'sarnitis']
export const TAILS = ['syndrome', 'disease']

export function syntheticVocab(): string[] {
  return ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', '.', ...FILLER, ...ENTITY, ...TAILS]
}

/** Documents of `sentences` sentences each; deterministic per seed. Type "Disease". */
export function syntheticDocs(n: number, seed: number, sentences = 3, prefix = 'doc'): CorpusDocument[] {
  const r = new Rng(seed)
  const rng = (): number => r.next()
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]
  const docs: CorpusDocument[] = []
  for (let d = 0; d < n; d++) {
    let text = ''
    const mentions: Mention[] = []
    for (let s = 0; s < sentences; s++) {
      const len = 5 + Math.floor(rng() * 7)
      const words: Array<{ w: string; ent?: boolean; cont?: boolean }> = []
      for (let k = 0; k < len; k++) {
        const r = rng()
        if (r < 0.15) {
          words.push({ w: pick(ENTITY), ent: true })
          if (rng() < 0.4) words.push({ w: pick(TAILS), cont: true })
        } else {
          words.push({ w: pick(FILLER) })
        }
      }
      if (text.length > 0) text += ' '
      words.forEach((x, k) => {
        const w = k === 0 ? x.w[0].toUpperCase() + x.w.slice(1) : x.w
        if (k > 0) text += ' '
        const start = text.length
        text += w
        if (x.ent) mentions.push({ start, end: text.length, text: w, type: 'Disease' })
        if (x.cont) {
          const m = mentions[mentions.length - 1]
          m.end = text.length
          m.text = text.slice(m.start, m.end)
        }
      })
      text += '.'
    }
    docs.push({ id: `${prefix}${d}`, text, passages: [{ type: 'abstract', offset: 0, length: text.length }], mentions })
  }
  return docs
}

/**
 * One sentence per row, "<lead> <word> in the cells.", the word a mention of its type (null: none);
 * the word tagger's tests pair it with invented words that no other row has.
 */
export function sentenceCorpus(rows: Array<[string, string | null]>, idBase: number): CorpusDocument[] {
  return rows.map(([word, type], i) => {
    const lead = ['The patient showed', 'Signs of', 'We report'][i % 3]
    const text = `${lead} ${word} in the cells.`
    const start = lead.length + 1
    return { id: String(idBase + i), text, passages: [], mentions: type ? [{ start, end: start + word.length, type, text: word }] : [] }
  })
}

/**
 * 60 documents in which each disease is a new word ending in -itis or -oma and each other word of
 * its slot a new word ending in -ment or -ology, so only the spelling tells them apart (the
 * character-channel tests tag unseen words such as 'gandritis' with it).
 */
export function spellingDocs(): CorpusDocument[] {
  const rng = new Rng(7)
  const syllables = ['ka', 'lo', 'mi', 'ru', 'te', 'za', 'po', 'ne', 'vi', 'su', 'da', 'fe']
  const stem = () => Array.from({ length: 2 + rng.int(2) }, () => syllables[rng.int(syllables.length)]).join('')
  return Array.from({ length: 60 }, (_, i) => {
    let text = ''
    const mentions: Mention[] = []
    for (let k = 0; k < 4; k++) {
      const disease = k % 2 === 0
      const word = stem() + (disease ? rng.pick(['itis', 'oma']) : rng.pick(['ment', 'ology']))
      const before = rng.pick(['The patient showed ', 'Signs of ', 'We report '])
      if (disease) mentions.push({ start: text.length + before.length, end: text.length + before.length + word.length, type: 'Disease', text: word })
      text += `${before}${word} in the cells. `
    }
    return { id: String(1000 + i), text: text.trim(), passages: [], mentions }
  })
}
