// The document text's keys. Every key maps to a controller action; undo and redo go straight to
// prosemirror-history. Shown to the user in HelpPanel (keep the two in step).
import { redo, undo } from 'prosemirror-history'
import type { Command } from './commands'

export interface KeyActions {
  /** Called before a keyboard undo/redo, so the Edit menu's echo of it (beforeinput) is ignored. */
  keyboardUndo(): void
  /** Delete / Backspace. */
  deleteAtSelection(): void
  /** Enter: the type menu for a selection, else the active entity's details. */
  enter(): void
  /** Escape: closes the details or collapses the selection; false when there was nothing to do. */
  escape(): boolean
  adjustActive(edge: 'start' | 'end', dir: 'extend' | 'shrink'): void
  /** a / r on a model suggestion. */
  decideActive(accept: boolean): void
  gotoSuggestion(dir: 'next' | 'previous'): void
  /** 1–9: the legend's type on that key. */
  typeKey(n: number): void
}

export function editorKeymap(a: KeyActions): Record<string, Command> {
  const history = (command: Command): Command => (state, dispatch) => {
    a.keyboardUndo()
    command(state, dispatch)
    return true
  }
  const k: Record<string, Command> = {
    'Mod-z': history(undo),
    'Mod-Shift-z': history(redo),
    'Mod-y': history(redo),
    Backspace: () => (a.deleteAtSelection(), true),
    Delete: () => (a.deleteAtSelection(), true),
    Enter: () => (a.enter(), true),
    Escape: () => a.escape(),
    'Alt-Shift-ArrowLeft': () => (a.adjustActive('start', 'extend'), true),
    'Alt-Shift-ArrowRight': () => (a.adjustActive('end', 'extend'), true),
    'Alt-Shift-ArrowDown': () => (a.adjustActive('start', 'shrink'), true),
    'Alt-Shift-ArrowUp': () => (a.adjustActive('end', 'shrink'), true),
    // Model suggestions: accept / reject the one under the cursor, move between them.
    a: () => (a.decideActive(true), true),
    r: () => (a.decideActive(false), true),
    n: () => (a.gotoSuggestion('next'), true),
    p: () => (a.gotoSuggestion('previous'), true),
  }
  for (let n = 1; n <= 9; n++) k[String(n)] = () => (a.typeKey(n), true)
  return k
}
