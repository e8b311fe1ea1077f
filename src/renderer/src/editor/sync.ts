// Persists every entity change at once. After each transaction the editor's entities are diffed
// against what the workspace holds (`persisted`) and the difference is sent, one call at a time,
// as annotations:create / update / delete. Undo and redo are just more transactions, so they
// persist the same way. A failed call stops the queue and hands the error to `onFailure`, which
// reloads the document from the workspace: the view never shows an edit that was not saved.
import type { Annotation, SuggestionRule } from '@shared/domain'
import type { RequestOf } from '@shared/ipc'
import { api } from '../api'

export type EntityState = 'accepted' | 'suggested'

export interface DesiredEntity {
  start: number
  end: number
  type: string
  /** "suggested" while a model suggestion waits for a person; accepting/rejecting is an edit too. */
  state: EntityState
  /** Model confidence and the document rule behind a suggestion, kept so an undone reject can restore it as it was. */
  confidence: number | null
  rule: SuggestionRule | null
}

export interface PersistedEntity extends DesiredEntity {
  id: number
}

export type SaveState = 'saved' | 'saving' | 'error'

export type Op =
  | { kind: 'delete'; key: string; id: number }
  /** Suggestions that disappeared from the text: rejected (one call for all of them). */
  | { kind: 'reject'; keys: string[]; ids: number[] }
  /** Suggestions that became accepted: one call for all of them. */
  | { kind: 'accept'; keys: string[]; ids: number[] }
  /** An accepted suggestion back to suggested (undo of accept). */
  | { kind: 'unaccept'; key: string; id: number }
  | { kind: 'update'; key: string; id: number; next: DesiredEntity; shrink: boolean }
  | { kind: 'create'; key: string; next: DesiredEntity }

const sameSpan = (a: DesiredEntity, b: DesiredEntity) => a.start === b.start && a.end === b.end && a.type === b.type

/**
 * Deletes and rejects first, then state changes, then shrinking updates, then other updates, then
 * creates: no transient overlap. A key whose state and extent both changed gets its state change
 * first; the caller re-diffs after every call, so the extent follows in a later round.
 */
export function diffEntities(desired: Map<string, DesiredEntity>, persisted: Map<string, PersistedEntity>): Op[] {
  const deletes: Op[] = []
  const reject = { kind: 'reject' as const, keys: [] as string[], ids: [] as number[] }
  const accept = { kind: 'accept' as const, keys: [] as string[], ids: [] as number[] }
  const unaccepts: Op[] = []
  const shrinks: Op[] = []
  const moves: Op[] = []
  const creates: Op[] = []
  for (const [key, p] of persisted) {
    const d = desired.get(key)
    if (!d) {
      if (p.state === 'suggested') {
        reject.keys.push(key)
        reject.ids.push(p.id)
      } else deletes.push({ kind: 'delete', key, id: p.id })
    } else if (d.state !== p.state) {
      if (d.state === 'accepted') {
        accept.keys.push(key)
        accept.ids.push(p.id)
      } else unaccepts.push({ kind: 'unaccept', key, id: p.id })
    } else if (!sameSpan(d, p)) {
      const shrink = d.start >= p.start && d.end <= p.end
      ;(shrink ? shrinks : moves).push({ kind: 'update', key, id: p.id, next: d, shrink })
    }
  }
  for (const [key, d] of desired) if (!persisted.has(key)) creates.push({ kind: 'create', key, next: d })
  return [
    ...(reject.ids.length ? [reject] : []),
    ...deletes,
    ...(accept.ids.length ? [accept] : []),
    ...unaccepts,
    ...shrinks,
    ...moves,
    ...creates,
  ]
}

export interface SyncOptions {
  documentId: number
  /** The editor's entities now, in character offsets. */
  desired: () => Map<string, DesiredEntity>
  onState: (state: SaveState, pending: number) => void
  /** The workspace's answer for an entity after a save (who/when, origin…). */
  onSaved: (key: string, annotation: Annotation | null) => void
  onFailure: (error: unknown) => void
}

export class SyncEngine {
  readonly persisted = new Map<string, PersistedEntity>()
  private running = false
  private dirty = false
  private stopped = false
  private waiters: Array<() => void> = []

  constructor(
    initial: Map<string, PersistedEntity>,
    private readonly opts: SyncOptions,
  ) {
    for (const [k, v] of initial) this.persisted.set(k, { ...v })
  }

  /** Called after every document change. */
  schedule(): void {
    if (this.stopped) return
    this.dirty = true
    if (!this.running) void this.run()
  }

  /** Resolves when everything scheduled so far is saved (or the engine stopped). */
  flush(): Promise<void> {
    if (this.stopped || (!this.running && !this.dirty)) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  get busy(): boolean {
    return this.running || this.dirty
  }

  /** No further saves (document closed or reloaded after a failure). */
  stop(): void {
    this.stopped = true
    this.release()
  }

  private release(): void {
    const w = this.waiters
    this.waiters = []
    for (const f of w) f()
  }

  private async run(): Promise<void> {
    this.running = true
    try {
      while (this.dirty && !this.stopped) {
        this.dirty = false
        // One call at a time, re-diffing after each: edits made meanwhile join the same queue.
        for (;;) {
          if (this.stopped) return
          const ops = diffEntities(this.opts.desired(), this.persisted)
          if (ops.length === 0) break
          this.opts.onState('saving', ops.length)
          await this.apply(ops[0]!)
        }
      }
      if (!this.stopped) this.opts.onState('saved', 0)
    } catch (e) {
      this.stopped = true
      this.opts.onState('error', 0)
      this.opts.onFailure(e)
    } finally {
      this.running = false
      if (!this.dirty || this.stopped) this.release()
      else void this.run()
    }
  }

  private async apply(op: Op): Promise<void> {
    const { documentId } = this.opts
    if (op.kind === 'delete') {
      await api.deleteAnnotation(op.id)
      this.persisted.delete(op.key)
      this.opts.onSaved(op.key, null)
    } else if (op.kind === 'reject') {
      await api.rejectSuggestions(op.ids)
      for (const key of op.keys) {
        this.persisted.delete(key)
        this.opts.onSaved(key, null)
      }
    } else if (op.kind === 'accept') {
      await api.acceptSuggestions(op.ids)
      for (const key of op.keys) {
        const cur = this.persisted.get(key)
        if (cur) this.persisted.set(key, { ...cur, state: 'accepted' })
      }
      // suggestions:accept answers with a count only: read back who/when for the popover.
      const detail = await api.getDocument(documentId).catch(() => null)
      for (const [i, key] of op.keys.entries()) {
        const saved = detail?.annotations.find((a) => a.id === op.ids[i])
        if (saved) this.opts.onSaved(key, saved)
      }
    } else if (op.kind === 'unaccept') {
      const saved = await api.updateAnnotation(withState({ id: op.id }, 'suggested'))
      const cur = this.persisted.get(op.key)!
      this.persisted.set(op.key, { ...cur, state: 'suggested' })
      this.opts.onSaved(op.key, saved)
    } else if (op.kind === 'update') {
      const cur = this.persisted.get(op.key)!
      const req: { id: number; start?: number; end?: number; type?: string } = { id: op.id }
      if (op.next.start !== cur.start) req.start = op.next.start
      if (op.next.end !== cur.end) req.end = op.next.end
      if (op.next.type !== cur.type) req.type = op.next.type
      // The workspace accepts a suggestion that is edited unless told otherwise; a suggestion's
      // type or bounds change without a decision only on undo (retype, then undo), so say so.
      const saved = await api.updateAnnotation(op.next.state === 'suggested' ? withState(req, 'suggested') : req)
      // What we asked for, not the echo (a normalised echo must not look like a new difference),
      // except the state, which is the workspace's decision.
      this.persisted.set(op.key, { id: op.id, ...op.next, state: saved.state, confidence: cur.confidence, rule: cur.rule })
      this.opts.onSaved(op.key, saved)
    } else {
      const { start, end, type, state, confidence, rule } = op.next
      // A suggestion reappearing is an undone reject: it comes back as the model's suggestion.
      const req =
        state === 'suggested' ? withState({ documentId, start, end, type, confidence, rule, origin: 'model' }, 'suggested') : { documentId, start, end, type }
      const saved = await api.createAnnotation(req as RequestOf<'annotations:create'>)
      this.persisted.set(op.key, { id: saved.id, ...op.next })
      this.opts.onSaved(op.key, saved)
    }
  }
}

/**
 * Adds `state` to an annotations:update / annotations:create request. Undoing an accept (state
 * back to "suggested") and undoing a reject (the suggestion restored, with origin "model" and its
 * confidence) need the contract to carry these fields (the store already does); the cast keeps
 * this file compiling against a contract without them, and main refuses such a request with
 * invalid_request, which the engine reports like any failed save (the view reloads).
 */
function withState<T extends object>(req: T, state: EntityState): RequestOf<'annotations:update'> & RequestOf<'annotations:create'> {
  return { ...req, state } as unknown as RequestOf<'annotations:update'> & RequestOf<'annotations:create'>
}
