import { useState, type ReactNode } from 'react'
import { colourClass } from '../palette'

interface Props {
  legend: string[]
  counts: Record<string, number>
  total: number
  /** Whether a selection or an active entity would receive a clicked type. */
  canAssign: boolean
  onAssign: (type: string) => void
  onAddType: (type: string) => void
  /** Drawn at the end of the row (what the cursor is on). */
  status?: ReactNode
}

export function Legend(props: Props) {
  const [adding, setAdding] = useState(false)
  const [draft, setDraft] = useState('')
  const types = [...props.legend, ...Object.keys(props.counts).filter((t) => !props.legend.includes(t))]
  return (
    <div className="legend" role="group" aria-label="Entity types in this document" data-testid="legend">
      <span className="legend-total">
        <strong>{props.total}</strong> entit{props.total === 1 ? 'y' : 'ies'}
      </span>
      <ul className="legend-items">
        {types.map((t, i) => {
          const n = props.counts[t] ?? 0
          return (
            <li key={t}>
              <button
                type="button"
                className={`legend-item${n === 0 ? ' is-empty' : ''}`}
                onMouseDown={(e) => e.preventDefault() /* keep the editor's selection */}
                onClick={() => props.onAssign(t)}
                title={props.canAssign ? `Annotate the selection as ${t}${i < 9 ? ` (key ${i + 1})` : ''}` : `Select words, then press ${i < 9 ? i + 1 : 'Enter'}`}
                data-type={t}
              >
                {i < 9 && <kbd className="legend-key">{i + 1}</kbd>}
                <span className={`swatch ${colourClass(t)}`} aria-hidden="true" />
                <span className="legend-name">{t}</span>
                <span className="legend-count" data-testid={`legend-count-${t}`}>
                  {n}
                </span>
              </button>
            </li>
          )
        })}
        <li>
          {adding ? (
            <form
              className="legend-add"
              onSubmit={(e) => {
                e.preventDefault()
                const t = draft.trim()
                if (t) props.onAddType(t)
                setDraft('')
                setAdding(false)
              }}
            >
              <label className="visually-hidden" htmlFor="legend-new-type">
                New entity type
              </label>
              <input
                id="legend-new-type"
                autoFocus
                value={draft}
                maxLength={64}
                placeholder="e.g. Species"
                onChange={(e) => setDraft(e.target.value)}
                onKeyDown={(e) => {
                  if (e.key === 'Escape') {
                    e.preventDefault()
                    setAdding(false)
                  }
                }}
              />
              <button type="submit" className="btn small">
                Add
              </button>
            </form>
          ) : (
            <button type="button" className="legend-item legend-new" onClick={() => setAdding(true)}>
              + Type
            </button>
          )}
        </li>
      </ul>
      {props.status}
    </div>
  )
}
