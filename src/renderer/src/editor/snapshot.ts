// What the controller publishes to React (useSyncExternalStore) and what it asks of its host.
import type { Annotation } from '@shared/domain'
import type { ActiveEntity } from './plugins'
import type { EntityAttrs } from './schema'
import type { SaveState } from './sync'

export type TypeUse = 'person' | 'document'

export type MessageKind = 'info' | 'success' | 'warning' | 'error'

export interface ControllerCallbacks {
  /** Types in legend order: key 1 is the first. */
  legendTypes(): string[]
  message(kind: MessageKind, text: string): void
  /** A type was used that the legend may not list yet: by a person's edit, or in a document just opened. */
  typeUsed(type: string, by: TypeUse): void
  /** A batch of edits reached the workspace (refresh counts, status). */
  persisted(): void
}

export interface UiSnapshot {
  /** Non-empty selection (ProseMirror positions). */
  selection: { from: number; to: number } | null
  active: ActiveEntity | null
  /** Key of the entity whose popover is open. */
  popover: string | null
  /** Bumped when the keyboard asks to move focus into the type menu / the popover. */
  focusMenu: number
  focusPopover: number
  /** Accepted entities per type, and their number (suggestions are counted apart). */
  counts: Record<string, number>
  total: number
  /** Model suggestions waiting for a decision, and their confidences (highest first). */
  suggestions: number
  confidences: number[]
  /** How many of the suggestions a document rule added (EntityAttrs.rule). */
  ruleSuggestions: number
  save: SaveState
  pending: number
  canUndo: boolean
  canRedo: boolean
  /** Overlapping workspace annotations that cannot be drawn inline. */
  hidden: Annotation[]
  pointerDown: boolean
  showTags: boolean
  /** Bumped on every entity or metadata change. */
  revision: number
  /** The model whose tagging made the document's suggestions (as last read from the workspace); null: unknown. */
  suggestionModelId: number | null
}

export interface EntityInfo {
  key: string
  from: number
  to: number
  start: number
  end: number
  text: string
  attrs: EntityAttrs
  /** The workspace's record (who/when); null until a new entity is saved. */
  saved: Annotation | null
}

export function initialSnapshot(showTags: boolean): UiSnapshot {
  return {
    selection: null,
    active: null,
    popover: null,
    focusMenu: 0,
    focusPopover: 0,
    counts: {},
    total: 0,
    suggestions: 0,
    confidences: [],
    ruleSuggestions: 0,
    save: 'saved',
    pending: 0,
    canUndo: false,
    canRedo: false,
    hidden: [],
    pointerDown: false,
    showTags,
    revision: 0,
    suggestionModelId: null,
  }
}

/** Same numbers in the same order (keeps the snapshot's array identity when nothing changed). */
export function sameNumbers(a: number[], b: number[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
