// The panels that float under the text: the selection menu and the entity popover. Each is a
// dialog placed below a text position; clicking it keeps the text's selection (only its input
// fields take the focus by mouse).
import type { EditorView } from 'prosemirror-view'
import type { HTMLAttributes, MouseEvent, RefObject } from 'react'
import type { EditorController, UiSnapshot } from '../editor/controller'

/** What the document pane gives each floating panel. */
export interface FloatingPanelProps {
  controller: EditorController
  snap: UiSnapshot
  legend: string[]
  pageRef: RefObject<HTMLDivElement | null>
}

/** Where to put a floating panel under text position `pos`, in the coordinates of `page`. */
function placeBelow(view: EditorView, pos: number, page: HTMLElement, width: number): { left: number; top: number } {
  const size = view.state.doc.content.size
  const c = view.coordsAtPos(Math.max(0, Math.min(size, pos)), -1)
  const box = page.getBoundingClientRect()
  const left = Math.max(8, Math.min(c.left - box.left - 16, box.width - width - 8))
  return { left, top: c.bottom - box.top + 8 }
}

const keepTextSelection = (e: MouseEvent<HTMLDivElement>) => {
  if ((e.target as HTMLElement).tagName !== 'INPUT') e.preventDefault()
}

type Props = Omit<HTMLAttributes<HTMLDivElement>, 'className' | 'style' | 'role' | 'onMouseDown'> & {
  ref: RefObject<HTMLDivElement | null>
  view: EditorView
  /** The text position the panel sits under. */
  pos: number
  page: HTMLElement
  width: number
  className: string
  [data: `data-${string}`]: string | undefined
}

export function Floating({ ref, view, pos, page, width, className, children, ...attributes }: Props) {
  const { left, top } = placeBelow(view, pos, page, width)
  return (
    <div ref={ref} className={`floating ${className}`} style={{ left, top, width }} role="dialog" onMouseDown={keepTextSelection} {...attributes}>
      {children}
    </div>
  )
}
