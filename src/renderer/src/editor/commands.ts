// The entity edits as ProseMirror-style commands, `(state, dispatch) => boolean`: each builds one
// transaction that is its own undo step (it never merges with the previous one) and may put the
// active-entity focus on a key. Without `dispatch` a command only says that it applies. The
// controller decides which command to run and explains refusals (overlaps, token boundaries).
import { closeHistory } from 'prosemirror-history'
import type { Mark } from 'prosemirror-model'
import { TextSelection, type EditorState, type Transaction } from 'prosemirror-state'
import type { EntitySpan } from './entities'
import { activeKey } from './plugins'
import { entityMark, type EntityAttrs } from './schema'

export type Command = (state: EditorState, dispatch?: (tr: Transaction) => void) => boolean

export interface Range {
  from: number
  to: number
}

/** One undoable step built by `build`; the active-entity focus moves to `focusKey` when given. */
function step(build: (tr: Transaction, state: EditorState) => void, focusKey?: string): Command {
  return (state, dispatch) => {
    if (dispatch) {
      const tr = state.tr
      build(tr, state)
      closeHistory(tr)
      if (focusKey) tr.setMeta(activeKey, { key: focusKey })
      dispatch(tr)
    }
    return true
  }
}

/** The mark an edited entity gets: a suggestion a person corrected is a suggestion accepted. */
export function confirmedMark(e: EntitySpan, patch: Partial<EntityAttrs> = {}): Mark {
  const attrs = e.mark.attrs as EntityAttrs
  if (attrs.state !== 'suggested' && Object.keys(patch).length === 0) return e.mark
  return entityMark.create({ ...attrs, ...patch, state: 'accepted' } satisfies EntityAttrs)
}

/** A person's new entity `key` of `type` on `range`, replacing the suggestions `replaced`; the cursor goes to its end. */
export function addEntity(range: Range, key: string, type: string, replaced: readonly EntitySpan[]): Command {
  const mark = entityMark.create({ id: key, type, origin: 'person', state: 'accepted', confidence: null, rule: null } satisfies EntityAttrs)
  return step((tr) => {
    for (const s of replaced) tr.removeMark(s.from, s.to, s.mark)
    tr.addMark(range.from, range.to, mark)
    tr.setSelection(TextSelection.create(tr.doc, range.to))
  }, key)
}

/** Swaps an entity's mark for `mark` (retype, accept), keeping its range and key. */
export function setEntityMark(e: EntitySpan, mark: Mark): Command {
  return step((tr) => {
    tr.removeMark(e.from, e.to, e.mark).addMark(e.from, e.to, mark)
  }, e.key)
}

/** Removes entities (deleting them, or rejecting suggestions). */
export function removeEntities(spans: readonly EntitySpan[]): Command {
  return step((tr) => {
    for (const e of spans) tr.removeMark(e.from, e.to, e.mark)
  })
}

/** Accepts suggestions, all in one step. */
export function acceptEntities(spans: readonly EntitySpan[]): Command {
  return step((tr) => {
    for (const e of spans) tr.removeMark(e.from, e.to, e.mark).addMark(e.from, e.to, confirmedMark(e))
  })
}

/**
 * Gives an entity a new range (edge keys, drag handles), replacing the suggestions `replaced`.
 * cursor 'inside' keeps an empty cursor inside the entity (so the next key acts on it again);
 * 'end' puts the cursor at its end.
 */
export function moveEntity(e: EntitySpan, range: Range, replaced: readonly EntitySpan[], cursor: 'inside' | 'end'): Command {
  return step((tr, state) => {
    tr.removeMark(e.from, e.to, e.mark)
    for (const s of replaced) tr.removeMark(s.from, s.to, s.mark)
    tr.addMark(range.from, range.to, confirmedMark(e))
    const sel = state.selection
    if (cursor === 'end' || (sel.empty && (sel.from < range.from || sel.from > range.to))) {
      tr.setSelection(TextSelection.create(tr.doc, range.to))
    }
  }, e.key)
}

/** Puts the cursor at the start of an entity and makes it the active one (not an undo step). */
export function moveCursorInto(e: EntitySpan): Command {
  return (state, dispatch) => {
    if (dispatch) {
      const tr = state.tr.setSelection(TextSelection.create(state.doc, e.from)).scrollIntoView()
      tr.setMeta(activeKey, { key: e.key })
      dispatch(tr)
    }
    return true
  }
}

/** Selects [from, to) and scrolls to it (not an undo step). */
export function selectRange(range: Range): Command {
  return (state, dispatch) => {
    if (dispatch) dispatch(state.tr.setSelection(TextSelection.create(state.doc, range.from, range.to)).scrollIntoView())
    return true
  }
}

/** Collapses a non-empty selection to its head; false when the selection is already empty. */
export const collapseSelection: Command = (state, dispatch) => {
  const sel = state.selection
  if (sel.empty) return false
  if (dispatch) dispatch(state.tr.setSelection(TextSelection.create(state.doc, sel.head)))
  return true
}
