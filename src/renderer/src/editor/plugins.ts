// ProseMirror plugins: read-only text, B/I/O token decorations, the active-entity highlight.
import { Plugin, PluginKey, type EditorState, type Transaction } from 'prosemirror-state'
import { Decoration, DecorationSet, type EditorView } from 'prosemirror-view'
import type { Node as PMNode } from 'prosemirror-model'
import { entityMark } from './schema'
import type { TokenIndex } from './tokens'

const MARK_STEPS = new Set(['addMark', 'removeMark'])

function stepType(step: unknown): string {
  return (step as { toJSON(): { stepType: string } }).toJSON().stepType
}

/**
 * The text never changes: only entity mark steps may pass. The view stays `editable` so the caret,
 * keyboard selection and focus work; typing, pasting, dropping, cutting and composition are refused.
 * A refused DOM edit is redrawn by ProseMirror (the view notices the damaged DOM and resyncs).
 */
export function readOnlyPlugin(onHistoryInput: (kind: 'undo' | 'redo') => void): Plugin {
  return new Plugin({
    filterTransaction: (tr) => !tr.docChanged || tr.steps.every((s) => MARK_STEPS.has(stepType(s))),
    props: {
      handleTextInput: () => true,
      handlePaste: () => true,
      handleDrop: () => true,
      handleDOMEvents: {
        beforeinput: (_view, event) => {
          event.preventDefault()
          const kind = (event as InputEvent).inputType
          if (kind === 'historyUndo') onHistoryInput('undo')
          else if (kind === 'historyRedo') onHistoryInput('redo')
          return true
        },
        cut: (_view, event) => {
          event.preventDefault()
          return true
        },
        dragstart: (_view, event) => {
          event.preventDefault()
          return true
        },
      },
    },
  })
}

// ------------------------------------------------------------------------------------------------
// B/I/O decorations

export const bioKey = new PluginKey<BioState>('bio')

interface BioState {
  showTags: boolean
  decorations: DecorationSet
}

/** Decorations for tokens overlapping [from, to): B/I classes inside entities; tags when shown. */
function tokenDecorations(doc: PMNode, tokens: TokenIndex, showTags: boolean, from: number, to: number): Decoration[] {
  const out: Decoration[] = []
  const [i0, i1] = tokens.overlapping(from, to)
  if (i1 < i0) return out
  // Walk the entity marks of the affected blocks once, then assign tokens in order.
  const spans: Array<{ from: number; to: number; type: string; key: string }> = []
  const lo = tokens.from[i0]!
  const hi = tokens.to[i1]!
  doc.nodesBetween(lo, hi, (node, pos) => {
    if (!node.isText) return true
    const m = node.marks.find((x) => x.type === entityMark)
    if (!m) return false
    const key = m.attrs['id'] as string
    const last = spans[spans.length - 1]
    if (last && last.key === key && last.to === pos) last.to = pos + node.nodeSize
    else spans.push({ from: pos, to: pos + node.nodeSize, type: m.attrs['type'] as string, key })
    return false
  })
  let si = 0
  for (let i = i0; i <= i1; i++) {
    const a = tokens.from[i]!
    const b = tokens.to[i]!
    while (si < spans.length && spans[si]!.to <= a) si++
    const span = si < spans.length && spans[si]!.from < b ? spans[si]! : null
    if (span) {
      // B: no earlier token overlaps this entity. Independent of where a partial redraw starts.
      const tag = i === 0 || tokens.to[i - 1]! <= span.from ? 'B' : 'I'
      const attrs: Record<string, string> = { class: `tok tok-${tag}` }
      if (showTags) attrs['data-bio'] = `${tag}-${span.type}`
      out.push(Decoration.inline(a, b, attrs))
    } else if (showTags) {
      out.push(Decoration.inline(a, b, { class: 'tok tok-O', 'data-bio': 'O' }))
    }
  }
  return out
}

/**
 * Built once per document and per "Show BIO tags" toggle; an entity edit only redraws the
 * tokens its steps touched (mark steps never move positions, so the rest stays as it is).
 */
export function bioPlugin(tokens: TokenIndex, showTags: boolean): Plugin<BioState> {
  return new Plugin<BioState>({
    key: bioKey,
    state: {
      init: (_config, state) => ({
        showTags,
        decorations: DecorationSet.create(state.doc, tokenDecorations(state.doc, tokens, showTags, 0, state.doc.content.size)),
      }),
      apply: (tr: Transaction, prev: BioState, _old: EditorState, state: EditorState): BioState => {
        const toggle = tr.getMeta(bioKey) as { showTags: boolean } | undefined
        if (toggle && toggle.showTags !== prev.showTags) {
          return {
            showTags: toggle.showTags,
            decorations: DecorationSet.create(
              state.doc,
              tokenDecorations(state.doc, tokens, toggle.showTags, 0, state.doc.content.size),
            ),
          }
        }
        if (!tr.docChanged) return prev
        let set = prev.decorations.map(tr.mapping, tr.doc)
        for (const step of tr.steps) {
          const json = (step as unknown as { toJSON(): { from?: number; to?: number } }).toJSON()
          if (json.from === undefined || json.to === undefined) continue
          // Widen to whole tokens, and to the token before (its B/I role can depend on us).
          const [i0, i1] = tokens.overlapping(json.from, json.to)
          const from = i1 >= i0 ? Math.min(json.from, tokens.from[Math.max(0, i0 - 1)]!) : json.from
          const to = i1 >= i0 ? Math.max(json.to, tokens.to[Math.min(tokens.length - 1, i1 + 1)]!) : json.to
          const stale = set.find(from, to).filter((d) => d.from < to && d.to > from)
          set = set.remove(stale)
          set = set.add(state.doc, tokenDecorations(state.doc, tokens, prev.showTags, from, to))
        }
        return { showTags: prev.showTags, decorations: set }
      },
    },
    props: {
      decorations: (state) => bioKey.getState(state)?.decorations,
    },
  })
}

export function setShowTags(view: EditorView, showTags: boolean): void {
  view.dispatch(view.state.tr.setMeta(bioKey, { showTags }).setMeta('addToHistory', false))
}

// ------------------------------------------------------------------------------------------------
// Active entity: the one a command acted on last (until the selection moves), else the one under
// the caret / holding the selection. Highlighted, and the target of keys like Delete or 1–9.

export interface ActiveEntity {
  key: string
  from: number
  to: number
  type: string
}

interface ActiveState {
  active: ActiveEntity | null
  /** Set by a command (e.g. after creating an entity); kept while the selection stays put. */
  forced: { key: string; anchor: number; head: number } | null
  decorations: DecorationSet
}

export const activeKey = new PluginKey<ActiveState>('active-entity')

/** Entity spans of the textblock around `pos`: contiguous runs of one entity key. */
function blockEntities(doc: PMNode, pos: number): ActiveEntity[] {
  const $pos = doc.resolve(pos)
  const block = $pos.depth > 0 ? $pos.node(1) : null
  if (!block) return []
  const base = $pos.start(1)
  const out: ActiveEntity[] = []
  block.forEach((child, offset) => {
    const m = child.marks.find((x) => x.type === entityMark)
    if (!m) return
    const key = m.attrs['id'] as string
    const from = base + offset
    const last = out[out.length - 1]
    if (last && last.key === key && last.to === from) last.to = from + child.nodeSize
    else out.push({ key, from, to: from + child.nodeSize, type: m.attrs['type'] as string })
  })
  return out
}

function findByKey(doc: PMNode, key: string): ActiveEntity | null {
  let found: ActiveEntity | null = null
  doc.descendants((node, pos) => {
    if (found && !node.isText) return false
    if (!node.isText) return true
    const m = node.marks.find((x) => x.type === entityMark && x.attrs['id'] === key)
    if (m) {
      if (found) found.to = pos + node.nodeSize
      else found = { key, from: pos, to: pos + node.nodeSize, type: m.attrs['type'] as string }
    }
    return false
  })
  return found
}

function deriveActive(state: EditorState, forced: ActiveState['forced']): ActiveEntity | null {
  const sel = state.selection
  if (forced && sel.anchor === forced.anchor && sel.head === forced.head) {
    const e = findByKey(state.doc, forced.key)
    if (e) return e
  }
  const spans = blockEntities(state.doc, sel.from)
  if (sel.empty) {
    return spans.find((e) => e.from <= sel.from && sel.from < e.to) ?? spans.find((e) => e.to === sel.from) ?? null
  }
  return spans.find((e) => e.from <= sel.from && sel.to <= e.to) ?? null
}

function sameActive(a: ActiveEntity | null, b: ActiveEntity | null): boolean {
  return a === b || (!!a && !!b && a.key === b.key && a.from === b.from && a.to === b.to && a.type === b.type)
}

export function activePlugin(): Plugin<ActiveState> {
  return new Plugin<ActiveState>({
    key: activeKey,
    state: {
      init: (_c, state) => {
        const active = deriveActive(state, null)
        return { active, forced: null, decorations: decorate(state.doc, active) }
      },
      apply: (tr, prev, _old, state) => {
        const force = tr.getMeta(activeKey) as { key: string } | undefined
        if (!force && !tr.docChanged && !tr.selectionSet) return prev
        const forced = force
          ? { key: force.key, anchor: state.selection.anchor, head: state.selection.head }
          : prev.forced && prev.forced.anchor === state.selection.anchor && prev.forced.head === state.selection.head
            ? prev.forced
            : null
        const active = deriveActive(state, forced)
        if (sameActive(active, prev.active) && !tr.docChanged) return { ...prev, forced }
        return { active, forced, decorations: decorate(state.doc, active) }
      },
    },
    props: {
      decorations: (state) => activeKey.getState(state)?.decorations,
    },
  })
}

function decorate(doc: PMNode, active: ActiveEntity | null): DecorationSet {
  if (!active) return DecorationSet.empty
  return DecorationSet.create(doc, [Decoration.inline(active.from, active.to, { class: 'entity-active' })])
}

export function getActive(state: EditorState): ActiveEntity | null {
  return activeKey.getState(state)?.active ?? null
}
