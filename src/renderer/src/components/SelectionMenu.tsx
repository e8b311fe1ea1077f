// The type menu for a selection: appears when words are selected (after the mouse is released);
// Enter moves the keyboard into it. Number keys work here as in the text.
import { useEffect, useRef, useState, type KeyboardEvent } from 'react'
import { Floating, revealBelowText, type FloatingPanelProps } from './Floating'
import { TypePicker } from './TypePicker'

const WIDTH = 420

export function SelectionMenu({ controller, snap, legend, pageRef }: FloatingPanelProps) {
  const ref = useRef<HTMLDivElement | null>(null)
  const [draft, setDraft] = useState('')
  const [dismissed, setDismissed] = useState<string | null>(null)
  const sel = snap.selection
  const selKey = sel ? `${sel.from}:${sel.to}` : null
  const visible = !!sel && !snap.pointerDown && !snap.popover && dismissed !== selKey

  useEffect(() => {
    if (visible && ref.current) revealBelowText(ref.current)
  }, [visible, selKey])

  useEffect(() => {
    if (!visible || snap.focusMenu === 0) return
    ref.current?.querySelector<HTMLButtonElement>('button[data-type]')?.focus()
    // Only a new request (the counter) moves focus, not every re-render.
  }, [snap.focusMenu])

  if (!visible || !sel || !pageRef.current) return null
  const preview = controller.snapSelection()
  // A selection of spaces alone (a stray drag or double-click between words) offers nothing to annotate.
  if (preview && 'noWord' in preview) return null

  const close = () => {
    setDismissed(selKey)
    controller.focus()
  }
  const assign = (t: string) => {
    if (controller.assignType(t)) setDraft('')
    controller.focus()
  }
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const inInput = (e.target as HTMLElement).tagName === 'INPUT'
    if (e.key === 'Escape') {
      e.preventDefault()
      close()
    } else if (!inInput && /^[1-9]$/.test(e.key) && !e.ctrlKey && !e.metaKey && !e.altKey) {
      const t = legend[Number(e.key) - 1]
      if (t) {
        e.preventDefault()
        assign(t)
      }
    } else if (!inInput && e.key.length === 1 && /\S/.test(e.key) && !e.ctrlKey && !e.metaKey && !e.altKey) {
      // Typing a name goes straight into "Other type…" (the key press lands there).
      ref.current?.querySelector<HTMLInputElement>('input')?.focus()
    } else if (!inInput && (e.key === 'ArrowDown' || e.key === 'ArrowUp' || e.key === 'ArrowRight' || e.key === 'ArrowLeft')) {
      const items = [...(ref.current?.querySelectorAll<HTMLElement>('button[data-type], input') ?? [])]
      const i = items.indexOf(document.activeElement as HTMLElement)
      const step = e.key === 'ArrowDown' || e.key === 'ArrowRight' ? 1 : -1
      items[(i + step + items.length) % items.length]?.focus()
      e.preventDefault()
    }
  }

  return (
    <Floating
      ref={ref}
      view={controller.view}
      pos={sel.to}
      page={pageRef.current}
      width={WIDTH}
      className="type-menu"
      aria-label="Annotate the selection"
      onKeyDown={onKeyDown}
      data-testid="type-menu"
    >
      {preview && 'error' in preview ? (
        <p className="floating-note warn">{preview.error}</p>
      ) : (
        <p className="floating-title">
          Annotate <q className="quote">{preview?.text}</q> as
        </p>
      )}
      <TypePicker types={legend} onPick={assign} onOther={assign} draft={draft} onDraftChange={setDraft} field={{ id: 'menu-new-type', label: 'New entity type', submit: 'Add' }} />
      <p className="floating-hint">
        <kbd>1</kbd>–<kbd>9</kbd> choose · type a name for a new type · <kbd>Esc</kbd> close
      </p>
    </Floating>
  )
}
