// Messages for the status area. Errors stay until dismissed; the rest fade after a while.
import { useSyncExternalStore } from 'react'

export type ToastKind = 'info' | 'success' | 'warning' | 'error'

/** A button on the message, e.g. "Undo" after a delete; running it dismisses the message. */
export interface ToastAction {
  label: string
  run: () => void
}

export interface Toast {
  id: number
  kind: ToastKind
  text: string
  /** A later message with the same key replaces this one (e.g. "Exporting…" → "Exported"). */
  key?: string
  action?: ToastAction
}

const LIFETIME: Record<ToastKind, number | null> = { info: 6000, success: 6000, warning: 12000, error: null }
/** A message with an action stays long enough to reach its button by keyboard (F6 / Tab) or mouse. */
const ACTION_LIFETIME = 20000
const MAX = 3

let toasts: Toast[] = []
let nextId = 1
const listeners = new Set<() => void>()

function emit(): void {
  for (const l of listeners) l()
}

export function notify(kind: ToastKind, text: string, key?: string, action?: ToastAction): void {
  const id = nextId++
  // The same message twice is shown once (e.g. a key held down); a keyed message replaces its predecessor.
  const rest = toasts.filter((t) => t.text !== text && (key === undefined || t.key !== key))
  // Errors are never pushed out by newer messages; the oldest other message goes first.
  const next = [...rest, { id, kind, text, ...(key ? { key } : {}), ...(action ? { action } : {}) }]
  while (next.length > MAX) {
    const i = next.findIndex((t) => t.kind !== 'error')
    next.splice(i < 0 ? 0 : i, 1)
  }
  toasts = next
  emit()
  const life = action && LIFETIME[kind] !== null ? ACTION_LIFETIME : LIFETIME[kind]
  if (life !== null) setTimeout(() => dismiss(id), life)
}

export function dismiss(id: number): void {
  const before = toasts.length
  toasts = toasts.filter((t) => t.id !== id)
  if (toasts.length !== before) emit()
}

export function useToasts(): Toast[] {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l)
      return () => listeners.delete(l)
    },
    () => toasts,
  )
}
