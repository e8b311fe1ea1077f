// Renaming entity types on import (`--map-types` in the CLI, the app's import option): corpora
// name the same type differently (NCBI-disease's four subtypes are all diseases; BC2GM says GENE)
// and a model trained on several of them needs one name per type.
import type { CorpusDocument } from '@shared/domain'

/** Source type → target type. */
export type TypeMap = ReadonlyMap<string, string>

/**
 * Parses "A,B,C=X" rules, several joined by ';' (or given as separate strings):
 * "SpecificDisease,DiseaseClass,Modifier,CompositeMention=Disease;GENE=Gene".
 * Throws naming the bad rule; a source mapped to two targets is an error.
 */
export function parseTypeMap(specs: string | readonly string[]): Map<string, string> {
  const map = new Map<string, string>()
  const rules = (typeof specs === 'string' ? [specs] : specs).flatMap((s) => s.split(';')).map((r) => r.trim()).filter((r) => r.length > 0)
  for (const rule of rules) {
    const eq = rule.lastIndexOf('=')
    const target = rule.slice(eq + 1).trim()
    const sources = rule.slice(0, Math.max(0, eq)).split(',').map((s) => s.trim())
    if (eq <= 0 || !target || sources.some((s) => !s)) throw new Error(`type mapping '${rule}' is not SOURCE[,SOURCE…]=TARGET`)
    for (const s of sources) {
      const before = map.get(s)
      if (before !== undefined && before !== target) throw new Error(`type mapping: '${s}' is mapped to both '${before}' and '${target}'`)
      map.set(s, target)
    }
  }
  return map
}

/** The documents with their mentions' types renamed (new objects; unmapped types stay as they are). */
export function mapMentionTypes(docs: readonly CorpusDocument[], map: TypeMap): CorpusDocument[] {
  if (map.size === 0) return [...docs]
  return docs.map((d) => ({ ...d, mentions: d.mentions.map((m) => (map.has(m.type) ? { ...m, type: map.get(m.type)! } : m)) }))
}

/** Source types of the map that occur nowhere in the documents (likely a typo; worth a warning). */
export function unusedSources(docs: readonly CorpusDocument[], map: TypeMap): string[] {
  const seen = new Set(docs.flatMap((d) => d.mentions.map((m) => m.type)))
  return [...map.keys()].filter((s) => !seen.has(s))
}
