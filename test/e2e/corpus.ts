// An invented two-type corpus for the model e2e test: made-up disease and chemical words in
// filler sentences, seeded, so a 2-layer model learns it in a few epochs. No real text.
import { Rng } from '../../src/core/rng'

const FILLER = [
  'the', 'patients', 'cells', 'were', 'treated', 'with', 'and', 'showed', 'reduced', 'increased', 'signs', 'of', 'in', 'after', 'study',
  'children', 'risk', 'therapy', 'found', 'observed', 'a', 'family', 'analysis', 'cases', 'no',
]
const DISEASES = ['zorvitis', 'kalemia', 'brunoma', 'vostoma', 'feltosis', 'sarnitis', 'lupexia', 'trenalgia', 'quarnia', 'plexoma']
const CHEMICALS = ['fenoxamil', 'dratrizole', 'quinavor', 'lepromycin', 'tavoxetine', 'borizumab', 'cetrafen', 'morvastin']
/** Chemicals only the "new" documents mention: what a retrained model has to pick up. */
export const NEW_CHEMICALS = ['zantrofen', 'pelorazine', 'ximbutol', 'corvadil']

function rng(seed: number): () => number {
  const r = new Rng(seed)
  return () => r.next()
}

interface Mention {
  start: number
  end: number
  text: string
  type: string
}

function sentence(r: () => number, offset: number, mentions: Mention[], chemicals: string[]): string {
  const words: string[] = []
  let at = offset
  const n = 5 + Math.floor(r() * 6)
  for (let i = 0; i < n; i++) {
    const x = r()
    let w: string
    let type: string | null = null
    if (x < 0.12) {
      w = DISEASES[Math.floor(r() * DISEASES.length)]!
      if (r() < 0.3) w += ' syndrome'
      type = 'Disease'
    } else if (x < 0.22) {
      w = chemicals[Math.floor(r() * chemicals.length)]!
      type = 'Chemical'
    } else w = FILLER[Math.floor(r() * FILLER.length)]!
    if (i === 0) w = w.charAt(0).toUpperCase() + w.slice(1)
    const start = at + (words.length ? words.join(' ').length + 1 : 0)
    if (type) mentions.push({ start, end: start + w.length, text: w, type })
    words.push(w)
  }
  return `${words.join(' ')}.`
}

/** PubTator text: `count` documents with ids from `firstId`; without mentions when `annotated` is false. */
export function inventedCorpus(opts: { firstId: number; count: number; seed: number; annotated: boolean; newChemicals?: boolean }): string {
  const r = rng(opts.seed)
  // New documents name the new chemicals more often than the old ones, so they matter.
  const chemicals = opts.newChemicals ? [...CHEMICALS.slice(0, 4), ...NEW_CHEMICALS, ...NEW_CHEMICALS] : CHEMICALS
  const out: string[] = []
  for (let d = 0; d < opts.count; d++) {
    const id = String(opts.firstId + d)
    const mentions: Mention[] = []
    const title = sentence(r, 0, mentions, chemicals)
    const parts: string[] = []
    let offset = title.length + 1
    for (let k = 0; k < 3; k++) {
      const s = sentence(r, offset, mentions, chemicals)
      parts.push(s)
      offset += s.length + 1
    }
    const abstract = parts.join(' ')
    out.push(`${id}|t|${title}`, `${id}|a|${abstract}`)
    if (opts.annotated) for (const m of mentions) out.push(`${id}\t${m.start}\t${m.end}\t${m.text}\t${m.type}`)
    out.push('')
  }
  return out.join('\n')
}
