import type { EditorView } from 'prosemirror-view'

/** Where to put a floating panel under text position `pos`, in the coordinates of `page`. */
export function placeBelow(view: EditorView, pos: number, page: HTMLElement, width: number): { left: number; top: number } {
  const size = view.state.doc.content.size
  const c = view.coordsAtPos(Math.max(0, Math.min(size, pos)), -1)
  const box = page.getBoundingClientRect()
  const left = Math.max(8, Math.min(c.left - box.left - 16, box.width - width - 8))
  return { left, top: c.bottom - box.top + 8 }
}
