// The document schema: a title block and passage blocks of plain text; entities are marks.
// The text itself is read-only (see plugins.ts); only entity marks change.
import { Schema, type Mark } from 'prosemirror-model'
import type { AnnotationOrigin, SuggestionRule } from '@shared/domain'
import { colourClass } from '../palette'

export interface EntityAttrs {
  /**
   * Stable editor key of the entity ("a12" for workspace annotation 12, "n3" for one made here).
   * Not the workspace id: undo/redo must find the very mark it removed, so attrs never change
   * after a save; sync.ts maps keys to workspace ids.
   */
  id: string
  type: string
  origin: AnnotationOrigin
  state: 'accepted' | 'suggested'
  confidence: number | null
  /** The document rule that made a model suggestion (ruleText says it in words). */
  rule: SuggestionRule | null
}

/** "model 0.87": how confidence is written everywhere (hover, popover, suggestion bar). */
export function confidenceLabel(confidence: number | null): string {
  return confidence === null ? 'model' : `model ${confidence.toFixed(2)}`
}

/**
 * Why a document rule added a suggestion, in words; the confidence shown with it is that of the
 * model's mention it copied.
 */
export function ruleText(r: SuggestionRule): string {
  const from = `“${r.from.text}” (characters ${r.from.start}–${r.from.end})`
  return r.rule === 'abbreviation'
    ? `Added by the abbreviation rule: the model tagged ${from} where this document defines the abbreviation, so every use of it gets the same type`
    : `Added by the repeat rule: the model tagged the same words at ${from}, so other occurrences in this document get the same type`
}

function entityTitle(a: EntityAttrs): string {
  if (a.state === 'suggested') {
    return `${a.type} · suggestion, ${confidenceLabel(a.confidence)}${a.rule ? `, ${a.rule.rule} rule` : ''} — A accepts, R rejects; click for details`
  }
  const parts = [a.type, a.origin === 'person' ? 'added by a person' : a.origin === 'gold' ? 'imported (gold)' : 'model']
  if (a.confidence !== null) parts.push(`confidence ${a.confidence.toFixed(2)}`)
  return `${parts.join(' · ')} — click for details`
}

export const schema = new Schema({
  nodes: {
    doc: { content: 'block+' },
    title: {
      group: 'block',
      content: 'text*',
      marks: 'entity',
      toDOM: () => ['h2', { class: 'pm-title' }, 0],
      parseDOM: [{ tag: 'h2' }],
    },
    passage: {
      group: 'block',
      content: 'text*',
      marks: 'entity',
      attrs: { label: { default: '' } },
      toDOM: (node) => ['p', { class: 'pm-passage', 'data-label': node.attrs['label'] || null }, 0],
      parseDOM: [{ tag: 'p' }],
    },
    text: { group: 'inline' },
  },
  marks: {
    entity: {
      attrs: {
        id: {},
        type: {},
        origin: { default: 'person' },
        state: { default: 'accepted' },
        confidence: { default: null },
        rule: { default: null },
      },
      // Entities never nest or overlap: a new entity mark replaces, never stacks.
      excludes: 'entity',
      inclusive: false,
      toDOM: (mark) => {
        const a = mark.attrs as EntityAttrs
        return [
          'span',
          {
            class: `entity ${colourClass(a.type)}${a.state === 'suggested' ? ' is-suggested' : ''}`,
            'data-type': a.type,
            'data-id': a.id,
            'data-origin': a.origin,
            'data-state': a.state,
            'data-confidence': a.confidence === null ? null : a.confidence.toFixed(2),
            'data-rule': a.rule ? a.rule.rule : null,
            title: entityTitle(a),
          },
          0,
        ]
      },
    },
  },
})

export const entityMark = schema.marks['entity']!

export function isEntity(mark: Mark): boolean {
  return mark.type === entityMark
}
