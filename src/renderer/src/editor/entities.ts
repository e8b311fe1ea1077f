// Building the ProseMirror document from a DocumentDetail and reading entities back out of it.
import type { Node as PMNode, Mark } from 'prosemirror-model'
import type { Annotation } from '@shared/domain'
import type { Layout } from './layout'
import { entityMark, schema, type EntityAttrs } from './schema'

export interface EntitySpan {
  key: string
  /** ProseMirror range [from, to). */
  from: number
  to: number
  type: string
  mark: Mark
}

export const keyOfAnnotation = (id: number): string => `a${id}`

/**
 * Annotations that can be shown inline: no two overlap (imported gold data may nest or overlap;
 * the marks cannot). The rest are returned as `hidden` and listed beside the text. Accepted
 * annotations are placed first, so a model suggestion never hides what a person or the gold
 * data holds.
 */
export function splitOverlapping(annotations: Annotation[]): { shown: Annotation[]; hidden: Annotation[] } {
  const order = (list: Annotation[]) => [...list].sort((a, b) => a.start - b.start || b.end - a.end || a.id - b.id)
  const shown: Annotation[] = []
  const hidden: Annotation[] = []
  let reach = -1
  for (const a of order(annotations.filter((x) => x.state !== 'suggested'))) {
    if (a.start >= reach) {
      shown.push(a)
      reach = a.end
    } else hidden.push(a)
  }
  const placed = [...shown]
  for (const a of order(annotations.filter((x) => x.state === 'suggested'))) {
    if (placed.some((p) => p.start < a.end && p.end > a.start)) hidden.push(a)
    else {
      shown.push(a)
      placed.push(a)
    }
  }
  return { shown: order(shown), hidden }
}

export function attrsOf(a: Annotation): EntityAttrs {
  return { id: keyOfAnnotation(a.id), type: a.type, origin: a.origin, state: a.state, confidence: a.confidence, rule: a.rule }
}

/** The document: one block per layout segment, annotation spans as entity marks. */
export function buildDoc(layout: Layout, shown: Annotation[]): PMNode {
  const text = layout.text
  const blocks = layout.segments.map((seg) => {
    const inside = shown.filter((a) => a.start < seg.end && a.end > seg.start)
    const nodes: PMNode[] = []
    let cursor = seg.start
    for (const a of inside) {
      const s = Math.max(a.start, seg.start)
      const e = Math.min(a.end, seg.end)
      if (s > cursor) nodes.push(schema.text(text.slice(cursor, s)))
      if (e > s) nodes.push(schema.text(text.slice(s, e), [entityMark.create(attrsOf(a))]))
      cursor = Math.max(cursor, e)
    }
    if (seg.end > cursor) nodes.push(schema.text(text.slice(cursor, seg.end)))
    const type = seg.kind === 'title' ? schema.nodes['title']! : schema.nodes['passage']!
    return type.create(seg.kind === 'title' ? null : { label: seg.label }, nodes)
  })
  return schema.nodes['doc']!.create(null, blocks)
}

/** Every entity in document order, keyed by its editor key (a split span is merged). */
export function collectEntities(doc: PMNode): Map<string, EntitySpan> {
  const out = new Map<string, EntitySpan>()
  doc.forEach((block, offset) => {
    const base = offset + 1
    block.forEach((child, childOffset) => {
      for (const mark of child.marks) {
        if (mark.type !== entityMark) continue
        const key = mark.attrs['id'] as string
        const from = base + childOffset
        const to = from + child.nodeSize
        const cur = out.get(key)
        if (cur) {
          cur.from = Math.min(cur.from, from)
          cur.to = Math.max(cur.to, to)
        } else out.set(key, { key, from, to, type: mark.attrs['type'] as string, mark })
      }
    })
  })
  return out
}

/** Entities overlapping [from, to), optionally ignoring one key. */
export function overlappingEntities(entities: Map<string, EntitySpan>, from: number, to: number, except?: string): EntitySpan[] {
  const out: EntitySpan[] = []
  for (const e of entities.values()) if (e.key !== except && e.from < to && e.to > from) out.push(e)
  return out
}

/** The entity under a collapsed cursor: one containing it, else one ending right at it. */
export function entityAtPos(entities: Map<string, EntitySpan>, pos: number): EntitySpan | null {
  let ending: EntitySpan | null = null
  for (const e of entities.values()) {
    if (e.from <= pos && pos < e.to) return e
    if (e.to === pos) ending = e
  }
  return ending
}

export const isSuggested = (e: EntitySpan): boolean => e.mark.attrs['state'] === 'suggested'

/** Accepted entities per type (suggestions are counted apart, see `suggestionsOf`). */
export function countByType(entities: Map<string, EntitySpan>): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const e of entities.values()) if (!isSuggested(e)) counts[e.type] = (counts[e.type] ?? 0) + 1
  return counts
}

/** The suggestions in document order. */
export function suggestionsOf(entities: Map<string, EntitySpan>): EntitySpan[] {
  return [...entities.values()].filter(isSuggested).sort((a, b) => a.from - b.from)
}
