// Owns one document's EditorView: builds it, runs the correction commands, persists every change
// (sync.ts) and publishes a small UI snapshot that React subscribes to. React never re-renders the
// text; it only draws the legend, menus and popovers from the snapshot.
import { EditorState, type Transaction } from 'prosemirror-state'
import { EditorView } from 'prosemirror-view'
import { history, undo, redo, undoDepth, redoDepth } from 'prosemirror-history'
import { keymap } from 'prosemirror-keymap'
import type { Annotation, DocumentDetail } from '@shared/domain'
import { api, errorMessage, isApiError } from '../api'
import { Layout } from './layout'
import { documentTokens, TokenIndex, type SnapError } from './tokens'
import {
  buildDoc,
  collectEntities,
  countByType,
  isSuggested,
  keyOfAnnotation,
  overlappingEntities,
  splitOverlapping,
  suggestionsOf,
  type EntitySpan,
} from './entities'
import {
  acceptEntities,
  addEntity,
  collapseSelection,
  confirmedMark,
  moveCursorInto,
  moveEntity,
  removeEntities,
  selectRange,
  setEntityMark,
  type Command,
} from './commands'
import { editorKeymap } from './keymap'
import { type EntityAttrs } from './schema'
import { activePlugin, bioPlugin, getActive, readOnlyPlugin, setShowTags } from './plugins'
import { initialSnapshot, sameNumbers, type ControllerCallbacks, type EntityInfo, type UiSnapshot } from './snapshot'
import { SyncEngine, type DesiredEntity, type PersistedEntity } from './sync'
import { handlesPlugin } from './handles'

export type { ControllerCallbacks, EntityInfo, MessageKind, TypeUse, UiSnapshot } from './snapshot'

let keyCounter = 0
const newKey = (): string => `n${++keyCounter}`

export class EditorController {
  readonly view: EditorView
  readonly documentId: number
  private layout!: Layout
  private tokens!: TokenIndex
  private sync!: SyncEngine
  private entities = new Map<string, EntitySpan>()
  private hidden: Annotation[] = []
  private readonly saved = new Map<string, Annotation>()
  private snapshot: UiSnapshot
  private readonly listeners = new Set<() => void>()
  private destroyed = false
  /** Set when the view could not be brought back in line with the workspace; no more edits. */
  private paused = false
  private lastKeyUndo = 0
  private readonly onWindowPointerUp = () => this.patch({ pointerDown: false })

  constructor(
    mount: HTMLElement,
    detail: DocumentDetail,
    private readonly cb: ControllerCallbacks,
    showTags: boolean,
  ) {
    this.documentId = detail.id
    this.snapshot = initialSnapshot(showTags)
    const state = this.prepare(detail, showTags)
    this.view = new EditorView(mount, {
      state,
      dispatchTransaction: (tr) => this.dispatch(tr),
      attributes: {
        class: 'doc-text',
        role: 'textbox',
        'aria-multiline': 'true',
        'aria-readonly': 'true',
        'aria-label': 'Document text. Select words and press 1 to 9 to annotate; press ? for all shortcuts.',
        spellcheck: 'false',
        autocorrect: 'off',
        autocapitalize: 'off',
        translate: 'no',
      },
      handleClick: (_view, _pos, event) => {
        const el = (event.target as HTMLElement | null)?.closest?.('.entity') as HTMLElement | null
        const key = el?.dataset['id'] ?? null
        this.patch({ popover: key && this.entities.has(key) ? key : null })
        return false
      },
      handleKeyPress: (_view, event) => {
        // Letters would be typing into a read-only text: say what keys do instead (once per burst).
        if (!event.ctrlKey && !event.metaKey && !event.altKey && event.key.length === 1 && !/[1-9?]/.test(event.key)) {
          this.cb.message('info', 'The text is read-only. Select words and press 1–9 to annotate; press ? for all shortcuts.')
          return true
        }
        return false
      },
      handleDOMEvents: {
        mousedown: () => {
          this.patch({ pointerDown: true })
          return false
        },
      },
    })
    window.addEventListener('mouseup', this.onWindowPointerUp)
    this.refresh()
  }

  // ----------------------------------------------------------------------------------------------
  // Store for React (useSyncExternalStore)

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  getSnapshot = (): UiSnapshot => this.snapshot

  private patch(p: Partial<UiSnapshot>): void {
    let changed = false
    for (const k of Object.keys(p) as Array<keyof UiSnapshot>) {
      if (this.snapshot[k] !== p[k]) changed = true
    }
    if (!changed) return
    this.snapshot = { ...this.snapshot, ...p }
    for (const l of this.listeners) l()
  }

  // ----------------------------------------------------------------------------------------------
  // Setup

  private prepare(detail: DocumentDetail, showTags: boolean): EditorState {
    this.patch({ suggestionModelId: detail.suggestionModelId })
    this.layout = Layout.build(detail.text, detail.passages ?? [])
    this.tokens = TokenIndex.build(this.layout, documentTokens(detail.text, detail.tokens))
    const { shown, hidden } = splitOverlapping(detail.annotations)
    this.hidden = hidden
    this.saved.clear()
    const initial = new Map<string, PersistedEntity>()
    for (const a of shown) {
      const key = keyOfAnnotation(a.id)
      initial.set(key, { id: a.id, start: a.start, end: a.end, type: a.type, state: a.state, confidence: a.confidence, rule: a.rule })
      this.saved.set(key, a)
      this.cb.typeUsed(a.type, 'document')
    }
    this.sync?.stop()
    const engine: SyncEngine = new SyncEngine(initial, {
      documentId: detail.id,
      // A replaced engine (after a reload) must never act on the new document state.
      desired: () => (this.sync === engine ? this.desired() : new Map(engine.persisted)),
      onState: (save, pending) => {
        this.patch({ save, pending })
        if (save === 'saved') this.cb.persisted()
      },
      onSaved: (key, annotation) => {
        if (annotation) this.saved.set(key, annotation)
        else this.saved.delete(key)
        this.patch({ revision: this.snapshot.revision + 1 })
      },
      onFailure: (e) => void this.recover(e),
    })
    this.sync = engine
    const doc = buildDoc(this.layout, shown)
    return EditorState.create({
      doc,
      plugins: [
        keymap(
          editorKeymap({
            keyboardUndo: () => {
              this.lastKeyUndo = Date.now()
            },
            deleteAtSelection: () => this.deleteAtSelection(),
            enter: () => this.enterKey(),
            escape: () => this.escapeKey(),
            adjustActive: (edge, dir) => this.adjustActive(edge, dir),
            decideActive: (accept) => this.decideActive(accept),
            gotoSuggestion: (dir) => void this.gotoSuggestion(dir),
            typeKey: (n) => this.typeKey(n),
          }),
        ),
        readOnlyPlugin((kind) => {
          // Edit menu → Undo/Redo arrives as beforeinput; the keyboard shortcut already ran.
          if (Date.now() - this.lastKeyUndo < 500) return
          if (kind === 'undo') this.undo()
          else this.redo()
        }),
        history(),
        bioPlugin(this.tokens, showTags),
        activePlugin(),
        handlesPlugin(this.tokens, { commit: (key, from, to) => this.setBounds(key, from, to) }),
      ],
    })
  }

  /** Enter: the type menu for a selection, else the active entity's details. */
  private enterKey(): void {
    if (!this.view.state.selection.empty) this.patch({ focusMenu: this.snapshot.focusMenu + 1 })
    else if (this.snapshot.active) {
      this.patch({ popover: this.snapshot.active.key, focusPopover: this.snapshot.focusPopover + 1 })
    } else this.cb.message('info', 'Select some words first (Shift+Arrow keys), or move the cursor into an entity.')
  }

  /** Escape: closes the details, else collapses the selection. */
  private escapeKey(): boolean {
    if (this.snapshot.popover) {
      this.patch({ popover: null })
      return true
    }
    return this.run(collapseSelection)
  }

  /** 1–9: the legend's type on that key. */
  private typeKey(n: number): void {
    const type = this.cb.legendTypes()[n - 1]
    if (!type) this.cb.message('info', `No entity type is on key ${n}. Use Enter to pick or type one.`)
    else this.assignType(type)
  }

  // ----------------------------------------------------------------------------------------------
  // Transactions

  private dispatch(tr: Transaction): void {
    if (this.destroyed) return
    if (this.paused && tr.docChanged) {
      this.cb.message('error', 'Editing is paused because this document could not be reloaded. Reopen it from the list.')
      return
    }
    const before = this.view.state
    const state = before.apply(tr)
    this.view.updateState(state)
    if (state.doc !== before.doc) {
      this.refresh()
      this.sync.schedule()
    } else this.refreshSelection()
  }

  /** Recompute entities and everything derived from the document. */
  private refresh(): void {
    this.entities = collectEntities(this.view.state.doc)
    const counts = countByType(this.entities)
    const suggested = suggestionsOf(this.entities)
    const confidences = suggested.map((e) => (e.mark.attrs['confidence'] as number | null) ?? 0).sort((a, b) => b - a)
    const popover = this.snapshot.popover && this.entities.has(this.snapshot.popover) ? this.snapshot.popover : null
    this.patch({
      counts,
      total: this.entities.size - suggested.length,
      suggestions: suggested.length,
      ruleSuggestions: suggested.filter((e) => e.mark.attrs['rule'] !== null).length,
      confidences: sameNumbers(confidences, this.snapshot.confidences) ? this.snapshot.confidences : confidences,
      hidden: this.hidden,
      popover,
      revision: this.snapshot.revision + 1,
    })
    this.refreshSelection()
  }

  private refreshSelection(): void {
    const state = this.view.state
    const sel = state.selection
    const cur = this.snapshot.selection
    const selection = sel.empty ? null : cur && cur.from === sel.from && cur.to === sel.to ? cur : { from: sel.from, to: sel.to }
    const active = getActive(state)
    this.patch({
      selection,
      active,
      canUndo: undoDepth(state) > 0,
      canRedo: redoDepth(state) > 0,
    })
  }

  private desired(): Map<string, DesiredEntity> {
    const out = new Map<string, DesiredEntity>()
    for (const e of this.entities.values()) {
      const attrs = e.mark.attrs as EntityAttrs
      out.set(e.key, {
        start: this.layout.posToChar(e.from),
        end: this.layout.posToChar(e.to),
        type: e.type,
        state: attrs.state,
        confidence: attrs.confidence,
        rule: attrs.rule,
      })
    }
    return out
  }

  /** Runs a command (commands.ts) on the view. */
  private run(command: Command): boolean {
    return command(this.view.state, this.view.dispatch)
  }

  // ----------------------------------------------------------------------------------------------
  // Queries

  get text(): string {
    return this.layout.text
  }

  entityInfo(key: string): EntityInfo | null {
    const e = this.entities.get(key)
    if (!e) return null
    const start = this.layout.posToChar(e.from)
    const end = this.layout.posToChar(e.to)
    return {
      key,
      from: e.from,
      to: e.to,
      start,
      end,
      text: this.layout.text.slice(start, end),
      attrs: e.mark.attrs as EntityAttrs,
      saved: this.saved.get(key) ?? null,
    }
  }

  /** The snapped range a type would be assigned to, for previews. */
  snapSelection(): { from: number; to: number; text: string } | SnapError | null {
    const sel = this.view.state.selection
    if (sel.empty) return null
    const snapped = this.tokens.snap(sel.from, sel.to)
    if ('error' in snapped) return snapped
    return { ...snapped, text: this.layout.text.slice(this.layout.posToChar(snapped.from), this.layout.posToChar(snapped.to)) }
  }

  private quote(from: number, to: number): string {
    const s = this.layout.text.slice(this.layout.posToChar(from), this.layout.posToChar(to)).replace(/\s+/g, ' ')
    return `“${s.length > 50 ? `${s.slice(0, 49)}…` : s}”`
  }

  /**
   * Why [from, to) cannot hold an entity (overlap with a drawn or hidden annotation), or null.
   * Suggestions in the way are not a problem: the person's entity replaces them (see `replacing`).
   */
  private overlapProblem(from: number, to: number, except?: string): string | null {
    const clash = overlappingEntities(this.entities, from, to, except).find((e) => !isSuggested(e))
    if (clash) {
      return `${this.quote(from, to)} overlaps the ${clash.type} entity ${this.quote(clash.from, clash.to)}. Entities may not overlap: delete or shrink ${this.quote(clash.from, clash.to)} first.`
    }
    const start = this.layout.posToChar(from)
    const end = this.layout.posToChar(to)
    const hidden = this.hidden.find((a) => a.state !== 'suggested' && a.start < end && a.end > start)
    if (hidden) {
      const q = this.layout.text.slice(hidden.start, hidden.end)
      return `${this.quote(from, to)} overlaps the ${hidden.type} annotation “${q}” listed under “Overlapping annotations”. Delete it first.`
    }
    return null
  }

  // ----------------------------------------------------------------------------------------------
  // Commands (each returns whether it changed anything)

  /** Number key / menu: annotate the selection, or retype the active entity. */
  assignType(rawType: string): boolean {
    const type = rawType.trim()
    if (!type) return false
    if (type.length > 64) {
      this.cb.message('warning', 'An entity type is at most 64 characters long.')
      return false
    }
    const sel = this.view.state.selection
    if (sel.empty) {
      const active = this.snapshot.active
      if (!active) {
        this.cb.message('info', 'Select the words to annotate first (drag, double-click or Shift+Arrow keys).')
        return false
      }
      return this.retype(active.key, type)
    }
    const snapped = this.tokens.snap(sel.from, sel.to)
    if ('error' in snapped) {
      this.cb.message('warning', snapped.error)
      return false
    }
    const same = [...this.entities.values()].find((e) => e.from === snapped.from && e.to === snapped.to)
    if (same) return this.retype(same.key, type)
    const problem = this.overlapProblem(snapped.from, snapped.to)
    if (problem) {
      this.cb.message('warning', `Not added: ${problem}`)
      return false
    }
    const replaced = this.suggestionsIn(snapped.from, snapped.to).length
    this.cb.typeUsed(type, 'person')
    this.run(addEntity(snapped, newKey(), type, this.suggestionsIn(snapped.from, snapped.to)))
    if (replaced) this.cb.message('info', `Replaced ${replaced} overlapping model suggestion${replaced === 1 ? '' : 's'} (Ctrl+Z brings ${replaced === 1 ? 'it' : 'them'} back).`)
    return true
  }

  /** The suggestions overlapping [from, to) (except `except`): a person's entity there replaces them. */
  private suggestionsIn(from: number, to: number, except?: string): EntitySpan[] {
    return overlappingEntities(this.entities, from, to, except).filter(isSuggested)
  }

  retype(key: string, rawType: string): boolean {
    const type = rawType.trim()
    const e = this.entities.get(key)
    if (!e || !type || e.type === type) return false
    this.cb.typeUsed(type, 'person')
    return this.run(setEntityMark(e, confirmedMark(e, { type })))
  }

  remove(key: string): boolean {
    const e = this.entities.get(key)
    if (!e) return false
    this.run(removeEntities([e]))
    if (this.snapshot.popover === key) this.patch({ popover: null })
    return true
  }

  /** Delete/Backspace: the active entity, else every entity the selection touches. */
  deleteAtSelection(): void {
    const active = this.snapshot.active
    if (active) {
      this.remove(active.key)
      return
    }
    const sel = this.view.state.selection
    const hit = sel.empty ? [] : overlappingEntities(this.entities, sel.from, sel.to)
    if (hit.length === 0) {
      this.cb.message('info', 'The text is read-only. To delete an entity, put the cursor in it and press Delete.')
      return
    }
    this.run(removeEntities(hit))
    this.cb.message('info', `Deleted ${hit.length} entities.`)
  }

  adjust(key: string, edge: 'start' | 'end', dir: 'extend' | 'shrink'): boolean {
    const e = this.entities.get(key)
    if (!e) return false
    const next = this.tokens.adjust(e.from, e.to, edge, dir)
    if ('error' in next) {
      this.cb.message('warning', next.error)
      return false
    }
    if (dir === 'extend') {
      const problem = this.overlapProblem(next.from, next.to, key)
      if (problem) {
        this.cb.message('warning', `Not extended: ${problem}`)
        return false
      }
    }
    // Keep the cursor in the entity so the next key press acts on it again.
    return this.run(moveEntity(e, next, dir === 'extend' ? this.suggestionsIn(next.from, next.to, key) : [], 'inside'))
  }

  /** New extent for an entity (drag handles); the range is already on token boundaries. */
  setBounds(key: string, from: number, to: number): boolean {
    const e = this.entities.get(key)
    if (!e || to <= from || (e.from === from && e.to === to)) return false
    const problem = this.overlapProblem(from, to, key)
    if (problem) {
      this.cb.message('warning', `Not changed: ${problem}`)
      return false
    }
    this.run(moveEntity(e, { from, to }, this.suggestionsIn(from, to, key), 'end'))
    this.view.focus()
    return true
  }

  adjustActive(edge: 'start' | 'end', dir: 'extend' | 'shrink'): void {
    const key = this.snapshot.popover ?? this.snapshot.active?.key
    if (!key) {
      this.cb.message('info', 'Put the cursor in an entity (or click it) to move its edges.')
      return
    }
    this.adjust(key, edge, dir)
  }

  // ----------------------------------------------------------------------------------------------
  // Model suggestions. Accepting swaps the mark for an accepted one (same key), rejecting removes
  // it: both are ordinary undoable steps, and sync.ts turns them into suggestions:accept / reject.

  accept(key: string): boolean {
    const e = this.entities.get(key)
    if (!e || !isSuggested(e)) return false
    return this.run(setEntityMark(e, confirmedMark(e)))
  }

  reject(key: string): boolean {
    const e = this.entities.get(key)
    if (!e || !isSuggested(e)) return false
    return this.remove(key)
  }

  /** Accepts every suggestion with confidence ≥ threshold in one undoable step; returns how many. */
  acceptAbove(threshold: number): number {
    // The same comparison as the count the suggestion bar shows (a float threshold from a slider).
    const hit = suggestionsOf(this.entities).filter((e) => ((e.mark.attrs['confidence'] as number | null) ?? 0) >= threshold - 1e-9)
    if (hit.length === 0) return 0
    this.run(acceptEntities(hit))
    return hit.length
  }

  /** `a` / `r`: decide the suggestion under the cursor (or whose details are open). */
  decideActive(accept: boolean): void {
    const key = this.snapshot.popover ?? this.snapshot.active?.key
    const e = key ? this.entities.get(key) : undefined
    if (!e || !isSuggested(e)) {
      this.cb.message(
        'info',
        `Put the cursor in a model suggestion (dashed outline) to ${accept ? 'accept' : 'reject'} it; n / p move to the next / previous one.`,
      )
      return
    }
    const text = this.quote(e.from, e.to)
    const withDetails = this.snapshot.popover !== null
    if (accept) this.accept(e.key)
    else this.reject(e.key)
    // Straight on to the next one: reviewing suggestions is a run of a / r presses.
    if (this.gotoSuggestion('next', true) && withDetails) this.patch({ popover: this.snapshot.active?.key ?? null })
    this.cb.message('success', `${accept ? 'Accepted' : 'Rejected'} ${text} (${e.type}).`)
  }

  /** Moves the cursor into the next / previous suggestion (wrapping); false when there is none. */
  gotoSuggestion(dir: 'next' | 'previous', quiet = false): boolean {
    const list = suggestionsOf(this.entities)
    if (list.length === 0) {
      if (!quiet) this.cb.message('info', 'No model suggestions left in this document.')
      return false
    }
    const at = this.view.state.selection.from
    const target =
      dir === 'next'
        ? (list.find((e) => e.from > at) ?? list[0]!)
        : ([...list].reverse().find((e) => e.from < at) ?? list[list.length - 1]!)
    this.run(moveCursorInto(target))
    if (this.snapshot.popover) this.patch({ popover: target.key })
    return true
  }

  undo(): void {
    undo(this.view.state, this.view.dispatch)
  }

  redo(): void {
    redo(this.view.state, this.view.dispatch)
  }

  openPopover(key: string | null, focus = false): void {
    this.patch({ popover: key, ...(focus ? { focusPopover: this.snapshot.focusPopover + 1 } : {}) })
  }

  requestMenuFocus(): void {
    this.patch({ focusMenu: this.snapshot.focusMenu + 1 })
  }

  setShowTags(on: boolean): void {
    setShowTags(this.view, on)
    this.patch({ showTags: on })
  }

  focus(): void {
    if (!this.destroyed) this.view.focus()
  }

  /** Selects an entity's text range (e.g. from the hidden list) and scrolls to it. */
  reveal(from: number, to: number): void {
    this.run(selectRange({ from, to }))
    this.view.focus()
  }

  /** Character offsets to positions (for hidden annotations). */
  charRange(start: number, end: number): { from: number; to: number } {
    return { from: this.layout.charToPos(start, 'start'), to: this.layout.charToPos(end, 'end') }
  }

  flush(): Promise<void> {
    return this.sync.flush()
  }

  get saving(): boolean {
    return this.sync.busy
  }

  /** Deletes (a suggestion: rejects) an overlapping annotation that is not drawn, then redraws. */
  async deleteHidden(a: Annotation): Promise<void> {
    await this.flush()
    try {
      if (a.state === 'suggested') await api.rejectSuggestions([a.id])
      else await api.deleteAnnotation(a.id)
      await this.reload()
      this.cb.persisted()
      this.cb.message('success', a.state === 'suggested' ? 'Rejected the overlapping suggestion.' : 'Deleted the overlapping annotation.')
    } catch (e) {
      this.cb.message('error', `Could not delete the annotation: ${errorMessage(e)}`)
    }
  }

  /** Redraws from the workspace (history is cleared: it described the replaced state). */
  async reload(): Promise<void> {
    // Edits still queued are saved first, so the reloaded state contains them.
    await this.sync.flush()
    const detail = await api.getDocument(this.documentId)
    if (this.destroyed) return
    const popover = this.snapshot.popover
    const state = this.prepare(detail, this.snapshot.showTags)
    this.view.updateState(state)
    this.patch({ save: 'saved', pending: 0, popover: null })
    this.refresh()
    if (popover && this.entities.has(popover)) this.patch({ popover })
  }

  private async recover(error: unknown): Promise<void> {
    const raw = errorMessage(error).trim()
    const why = /[.!?]$/.test(raw) ? raw : `${raw}.`
    if (this.destroyed) {
      this.cb.message('error', `A change to the document you just left was NOT saved: ${why} Reopen it to check.`)
      return
    }
    const conflict = isApiError(error) && error.code === 'conflict'
    try {
      await this.reload()
      this.cb.message(
        'error',
        `Your last change was NOT saved${conflict ? ' (it conflicts with the workspace)' : ''}: ${why} The document now shows what the workspace holds.`,
      )
    } catch (e) {
      this.paused = true
      this.cb.message(
        'error',
        `Your last change was NOT saved: ${why} Reloading the document also failed (${errorMessage(e)}), so editing is paused: reopen the document.`,
      )
    }
  }

  /**
   * Closes the view. Saves still queued carry on (they only need the last entity set); a failure
   * after this point is still reported, never dropped.
   */
  destroy(): void {
    this.destroyed = true
    window.removeEventListener('mouseup', this.onWindowPointerUp)
    this.view.destroy()
    this.listeners.clear()
  }
}
