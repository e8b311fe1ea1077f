// Choosing an entity type: a button per legend type (1–9 on the first nine) and a field for any
// other name. The selection menu (annotate the selected words) and the entity popover (retype
// an entity) show the same picker. The field's draft is the caller's state, so it outlives the
// picker while the menu or popover is hidden.
import { colourClass } from '../palette'

interface Props {
  types: string[]
  /** The entity's type, shown pressed (the popover); none for a selection. */
  current?: string
  onPick(type: string): void
  draft: string
  onDraftChange(draft: string): void
  /** A non-blank name typed into the field and submitted. */
  onOther(name: string): void
  /** The name field: its element id, its (screen-reader) label and its submit button's text. */
  field: { id: string; label: string; submit: string }
}

export function TypePicker({ types, current, onPick, draft, onDraftChange, onOther, field }: Props) {
  return (
    <>
      <div className="type-buttons">
        {types.map((t, i) => (
          <button
            key={t}
            type="button"
            className={`type-btn${current !== undefined && t === current ? ' is-current' : ''}`}
            aria-pressed={current !== undefined ? t === current : undefined}
            data-type={t}
            onClick={() => onPick(t)}
          >
            {i < 9 && <kbd>{i + 1}</kbd>}
            <span className={`swatch ${colourClass(t)}`} aria-hidden="true" />
            {t}
          </button>
        ))}
      </div>
      <form
        className="new-type"
        onSubmit={(e) => {
          e.preventDefault()
          if (draft.trim()) onOther(draft)
        }}
      >
        <label htmlFor={field.id} className="visually-hidden">
          {field.label}
        </label>
        <input id={field.id} value={draft} maxLength={64} placeholder="Other type…" onChange={(e) => onDraftChange(e.target.value)} />
        <button type="submit" className="btn small" disabled={!draft.trim()}>
          {field.submit}
        </button>
      </form>
    </>
  )
}

