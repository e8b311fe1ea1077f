// Drag handles on the edges of the active entity: drag a handle to move that edge; it snaps to
// token boundaries and shows the new extent while dragging. The keyboard equivalent is
// Alt+Shift+arrows (controller.ts); both end in the same boundary command.
import { Plugin, PluginKey, type EditorState } from 'prosemirror-state'
import { Decoration, DecorationSet, type EditorView } from 'prosemirror-view'
import { activeKey } from './plugins'
import type { TokenIndex } from './tokens'

type DragRange = { from: number; to: number } | null

export const dragKey = new PluginKey<DragRange>('edge-drag')

export interface HandleCallbacks {
  /** Called on release with the snapped new range of entity `key`. */
  commit(key: string, from: number, to: number): void
}

function handle(edge: 'start' | 'end', onDown: (edge: 'start' | 'end', e: MouseEvent) => void): HTMLElement {
  const el = document.createElement('span')
  el.className = `edge-handle edge-${edge}`
  el.contentEditable = 'false'
  el.setAttribute('aria-hidden', 'true')
  el.title = edge === 'start' ? 'Drag to move the start (Alt+Shift+← / ↓)' : 'Drag to move the end (Alt+Shift+→ / ↑)'
  el.addEventListener('mousedown', (e) => onDown(edge, e))
  return el
}

export function handlesPlugin(tokens: TokenIndex, cb: HandleCallbacks): Plugin {
  let viewRef: EditorView | null = null

  const startDrag = (edge: 'start' | 'end', e: MouseEvent) => {
    const view = viewRef
    if (!view || e.button !== 0) return
    e.preventDefault()
    e.stopPropagation()
    const active = activeKey.getState(view.state)?.active
    if (!active) return
    const { key, from, to } = active
    let range = { from, to }
    const move = (ev: MouseEvent) => {
      const hit = view.posAtCoords({ left: ev.clientX, top: ev.clientY })
      if (!hit) return
      const p = hit.pos
      if (edge === 'start') {
        let k = tokens.firstEndingAfter(p)
        // Keep at least one token and stay in the entity's passage.
        const last = tokens.lastStartingBefore(to)
        if (k > last) k = last
        if (k < 0 || tokens.block[k] !== tokens.block[last]) return
        range = { from: tokens.from[k]!, to }
      } else {
        let k = tokens.lastStartingBefore(p)
        const first = tokens.firstEndingAfter(from)
        if (k < first) k = first
        if (k >= tokens.length || tokens.block[k] !== tokens.block[first]) return
        range = { from, to: tokens.to[k]! }
      }
      view.dispatch(view.state.tr.setMeta(dragKey, range).setMeta('addToHistory', false))
    }
    const up = () => {
      window.removeEventListener('mousemove', move)
      window.removeEventListener('mouseup', up)
      view.dispatch(view.state.tr.setMeta(dragKey, null).setMeta('addToHistory', false))
      if (range.from !== from || range.to !== to) cb.commit(key, range.from, range.to)
    }
    window.addEventListener('mousemove', move)
    window.addEventListener('mouseup', up)
  }

  return new Plugin<DragRange>({
    key: dragKey,
    state: {
      init: (): DragRange => null,
      apply: (tr, prev): DragRange => {
        const meta = tr.getMeta(dragKey) as DragRange | undefined
        return meta === undefined ? prev : meta
      },
    },
    view: (view) => {
      viewRef = view
      return {
        destroy: () => {
          viewRef = null
        },
      }
    },
    props: {
      decorations: (state: EditorState) => {
        const active = activeKey.getState(state)?.active
        const drag = dragKey.getState(state)
        if (!active && !drag) return null
        const decos: Decoration[] = []
        if (active) {
          decos.push(
            Decoration.widget(active.from, () => handle('start', startDrag), { side: -1, key: `start-${active.key}`, ignoreSelection: true, stopEvent: () => true }),
            Decoration.widget(active.to, () => handle('end', startDrag), { side: 1, key: `end-${active.key}`, ignoreSelection: true, stopEvent: () => true }),
          )
        }
        if (drag) decos.push(Decoration.inline(drag.from, drag.to, { class: 'drag-preview' }))
        return DecorationSet.create(state.doc, decos)
      },
    },
  })
}
