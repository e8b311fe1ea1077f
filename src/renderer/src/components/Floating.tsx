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

/** Room kept above a panel when scrolling to it: the line of text it sits under (and its hover label). */
const TEXT_ABOVE_PANEL = 56

/**
 * Scrolls the panel's scroll container so that as much of the panel shows as fits without taking
 * the text it is about out of view: a panel taller than the room below its line (an entity
 * popover near the bottom, or one with a rule's explanation) keeps its line on screen and lets
 * the rest be scrolled to, where scrollIntoView pushed the entity under the toolbars.
 */
export function revealBelowText(panel: HTMLElement): void {
  let scroller = panel.parentElement
  while (scroller && !/(auto|scroll)/.test(getComputedStyle(scroller).overflowY)) scroller = scroller.parentElement
  if (!scroller) return
  const view = scroller.getBoundingClientRect()
  const box = panel.getBoundingClientRect()
  const lineTop = box.top - TEXT_ABOVE_PANEL
  if (lineTop < view.top) scroller.scrollTop -= view.top - lineTop
  else if (box.bottom > view.bottom) scroller.scrollTop += Math.min(box.bottom - view.bottom + 8, lineTop - view.top)
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
