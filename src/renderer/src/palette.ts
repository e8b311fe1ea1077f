// Entity colours. The CSP forbids inline style attributes (ProseMirror's toDOM uses setAttribute),
// so colours are a fixed set of CSS classes `ent-c0`…`ent-c9` (styles/editor.css) and each type is
// given a slot. A slot, once given, never changes during a session, so rendered spans stay right.

export const PALETTE_SIZE = 10

/** The common biomedical types always get the same colour, whatever else the workspace holds. */
const CANONICAL: Record<string, number> = {
  disease: 0,
  chemical: 1,
  gene: 2,
  geneorgeneproduct: 2,
  species: 3,
  organism: 3,
  mutation: 4,
  sequencevariant: 4,
  variant: 4,
  cellline: 5,
}

/** Preferred legend order: the canonical types first, then the rest alphabetically. */
const ORDER = ['disease', 'chemical', 'gene', 'geneorgeneproduct', 'species', 'organism', 'mutation', 'sequencevariant', 'variant', 'cellline']

function hash(s: string): number {
  let h = 2166136261
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 16777619)
  }
  return h >>> 0
}

const slots = new Map<string, number>()

/** The palette slot of `type`: canonical, else the first free slot from the name's hash. */
export function colourSlot(type: string): number {
  const known = slots.get(type)
  if (known !== undefined) return known
  const canonical = CANONICAL[type.toLowerCase()]
  const used = new Set(slots.values())
  let slot: number
  if (canonical !== undefined && !used.has(canonical)) slot = canonical
  else {
    const start = canonical ?? hash(type) % PALETTE_SIZE
    slot = start
    for (let i = 0; i < PALETTE_SIZE; i++) {
      const s = (start + i) % PALETTE_SIZE
      if (!used.has(s)) {
        slot = s
        break
      }
    }
  }
  slots.set(type, slot)
  return slot
}

export function colourClass(type: string): string {
  return `ent-c${colourSlot(type)}`
}

/** Sorts types for the legend (and thus the number keys 1–9): canonical types first. */
export function sortTypes(types: Iterable<string>): string[] {
  const rank = (t: string) => {
    const i = ORDER.indexOf(t.toLowerCase())
    return i < 0 ? ORDER.length : i
  }
  return [...new Set(types)].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
}

/** Registers types in legend order so that slots are given deterministically. */
export function registerTypes(types: string[]): void {
  // Canonical types first so that a hashed type never takes a canonical slot they would need.
  for (const t of types) if (CANONICAL[t.toLowerCase()] !== undefined) colourSlot(t)
  for (const t of types) colourSlot(t)
}
