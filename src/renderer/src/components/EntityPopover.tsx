// Details and corrections for one entity: retype, move either edge by a token, delete; who changed
// it last and when. Opened by clicking an entity or pressing Enter with the cursor in it.
import { useEffect, useRef, useState, type KeyboardEvent } from 'react'
import type { SuggestionRule } from '@shared/domain'
import { colourClass } from '../palette'
import { confidenceLabel, ruleText } from '../editor/schema'
import { Floating, revealBelowText, type FloatingPanelProps } from './Floating'
import { TypePicker } from './TypePicker'

const WIDTH = 380

/** Moving an edge by a token: Alt+Shift+arrow, or the popover's buttons (in their order). */
const EDGE_MOVES = [
  { key: 'ArrowLeft', edge: 'start', change: 'extend', label: '← Extend', title: 'Extend the start by one token (Alt+Shift+←)' },
  { key: 'ArrowDown', edge: 'start', change: 'shrink', label: 'Shrink →', title: 'Shrink from the start by one token (Alt+Shift+↓)' },
  { key: 'ArrowUp', edge: 'end', change: 'shrink', label: '← Shrink', title: 'Shrink from the end by one token (Alt+Shift+↑)' },
  { key: 'ArrowRight', edge: 'end', change: 'extend', label: 'Extend →', title: 'Extend the end by one token (Alt+Shift+→)' },
] as const
type EdgeMove = (typeof EDGE_MOVES)[number]

/** Who or what made the entity, in words (the popover and the cursor line say it the same way). */
export function originText(origin: string, confidence: number | null, state: string, rule: SuggestionRule | null = null): string {
  const byRule = rule ? ` (${rule.rule} rule)` : ''
  if (state === 'suggested') return `Model suggestion${byRule}, not yet accepted · ${confidenceLabel(confidence)}`
  const base = origin === 'gold' ? 'Imported annotation (gold)' : origin === 'model' ? 'Model prediction' : 'Added by a person'
  const conf = confidence !== null ? ` · ${origin === 'person' ? 'accepted from ' : ''}${confidenceLabel(confidence)}${byRule}` : ''
  return `${base}${conf}`
}

function when(iso: string): string {
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return iso
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
}

export function EntityPopover({ controller, snap, legend, pageRef }: FloatingPanelProps) {
  const ref = useRef<HTMLDivElement | null>(null)
  const [draft, setDraft] = useState('')
  const key = snap.popover
  const info = key ? controller.entityInfo(key) : null

  useEffect(() => {
    if (snap.focusPopover === 0) return
    // A suggestion's first question is accept or reject: its Accept comes first in the popover.
    ref.current?.querySelector<HTMLButtonElement>('button[data-action="accept"], button[data-type]')?.focus()
  }, [snap.focusPopover])

  // A popover near the bottom of the window is scrolled to, its entity kept in view (Floating).
  useEffect(() => {
    if (key && ref.current) revealBelowText(ref.current)
  }, [key])

  if (!key || !info || !pageRef.current) return null
  const types = legend.includes(info.attrs.type) ? legend : [...legend, info.attrs.type]
  const suggested = info.attrs.state === 'suggested'

  const close = () => {
    controller.openPopover(null)
    controller.focus()
  }
  /** Accept or reject the suggestion; the text takes the focus back. */
  const decide = (accept: boolean) => {
    controller.decideActive(accept)
    controller.focus()
  }
  const act = (fn: () => void) => {
    fn()
    // Stay in the popover when it was reached by keyboard; otherwise give the text the focus back.
    if (!ref.current?.contains(document.activeElement)) controller.focus()
  }
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const inInput = (e.target as HTMLElement).tagName === 'INPUT'
    if (e.key === 'Escape') {
      e.preventDefault()
      close()
      return
    }
    if (inInput) return
    if (/^[1-9]$/.test(e.key) && !e.ctrlKey && !e.metaKey && !e.altKey) {
      const t = legend[Number(e.key) - 1]
      if (t) {
        e.preventDefault()
        controller.retype(key, t)
      }
    } else if (e.key === 'Delete' || e.key === 'Backspace') {
      e.preventDefault()
      controller.remove(key)
      controller.focus()
    } else if (suggested && (e.key === 'a' || e.key === 'r') && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault()
      decide(e.key === 'a')
    } else if (e.altKey && e.shiftKey) {
      const move = EDGE_MOVES.find((m) => m.key === e.key)
      if (move) {
        e.preventDefault()
        controller.adjust(key, move.edge, move.change)
      }
    }
  }

  const edgeButton = (move: EdgeMove) => (
    <button
      key={move.key}
      type="button"
      className="btn small"
      data-action={`${move.change}-${move.edge}`}
      onClick={() => act(() => controller.adjust(key, move.edge, move.change))}
      title={move.title}
    >
      {move.label}
    </button>
  )

  const saved = info.saved
  return (
    <Floating
      ref={ref}
      view={controller.view}
      pos={info.to}
      page={pageRef.current}
      width={WIDTH}
      className="entity-popover"
      aria-label={`Entity ${info.text}`}
      onKeyDown={onKeyDown}
      data-testid="entity-popover"
      data-entity-key={key}
      data-state={info.attrs.state}
    >
      <div className="popover-head">
        <span className={`swatch ${colourClass(info.attrs.type)}`} aria-hidden="true" />
        <strong className="popover-type">{info.attrs.type}</strong>
        <q className="quote popover-text" title={info.text}>
          {info.text}
        </q>
        <button type="button" className="icon-close" onClick={close} aria-label="Close (Esc)" title="Close (Esc)">
          ×
        </button>
      </div>

      {suggested && (
        <div className="popover-suggestion" data-testid="suggestion-decision">
          <p>
            <span className="suggestion-tag">Suggestion</span> <strong data-testid="suggestion-confidence">{confidenceLabel(info.attrs.confidence)}</strong>
            <span className="muted"> · not in the annotations until you accept it</span>
          </p>
          {info.attrs.rule && (
            <p className="suggestion-rule" data-testid="suggestion-rule">
              {ruleText(info.attrs.rule)}
            </p>
          )}
          <div className="row">
            <button type="button" className="btn small primary" onClick={() => decide(true)} data-action="accept">
              ✓ Accept <kbd>a</kbd>
            </button>
            <button type="button" className="btn small danger" onClick={() => decide(false)} data-action="reject">
              ✕ Reject <kbd>r</kbd>
            </button>
          </div>
        </div>
      )}

      <div className="popover-section">
        <span className="section-label">Type</span>
        <TypePicker
          types={types}
          current={info.attrs.type}
          onPick={(t) => act(() => controller.retype(key, t))}
          draft={draft}
          onDraftChange={setDraft}
          onOther={(name) => {
            if (controller.retype(key, name)) setDraft('')
          }}
          field={{ id: 'popover-new-type', label: 'Other entity type', submit: 'Set' }}
        />
      </div>

      <div className="popover-section">
        <span className="section-label">Boundaries · one token at a time</span>
        <div className="bounds">
          <span className="bounds-edge">Start</span>
          {EDGE_MOVES.slice(0, 2).map(edgeButton)}
          <span className="bounds-edge">End</span>
          {EDGE_MOVES.slice(2).map(edgeButton)}
        </div>
        <p className="floating-hint">
          Keys: <kbd>Alt</kbd>+<kbd>Shift</kbd>+<kbd>←</kbd> <kbd>→</kbd> extend, <kbd>↓</kbd> <kbd>↑</kbd> shrink start / end
        </p>
      </div>

      <div className="popover-meta" data-testid="entity-meta">
        <p>
          {originText(saved?.origin ?? info.attrs.origin, saved ? saved.confidence : info.attrs.confidence, saved?.state ?? info.attrs.state, saved ? saved.rule : info.attrs.rule)}
          {saved?.conceptId ? ` · concept ${saved.conceptId}` : ''}
        </p>
        {saved ? (
          <p>
            Last changed by <strong>{saved.updatedBy}</strong>, <time dateTime={saved.updatedAt}>{when(saved.updatedAt)}</time>
            <span className="muted">
              {' '}
              · characters {info.start}–{info.end}
            </span>
          </p>
        ) : (
          <p>{snap.save === 'saving' ? 'Saving…' : 'Not saved yet'}</p>
        )}
      </div>

      <div className="popover-foot">
        {suggested ? (
          <span className="popover-note">Retyping or moving an edge accepts it too.</span>
        ) : (
          <button
            type="button"
            className="btn small danger"
            onClick={() => {
              controller.remove(key)
              controller.focus()
            }}
            data-action="delete"
          >
            Delete entity <kbd>Del</kbd>
          </button>
        )}
        <button type="button" className="btn small" onClick={close}>
          Close <kbd>Esc</kbd>
        </button>
      </div>
    </Floating>
  )
}
