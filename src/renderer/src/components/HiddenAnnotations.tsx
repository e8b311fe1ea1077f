import type { Annotation } from '@shared/domain'
import type { EditorController } from '../editor/controller'
import { colourClass } from '../palette'

/**
 * Imported annotations that overlap others cannot be drawn (entities here never overlap); they
 * are listed so nothing in the workspace is invisible, and can be shown or deleted.
 */
export function HiddenAnnotations({ controller, hidden, text }: { controller: EditorController; hidden: Annotation[]; text: string }) {
  return (
    <div className="hidden-annotations" role="note" data-testid="hidden-annotations">
      <p>
        <strong>
          {hidden.length} overlapping annotation{hidden.length === 1 ? '' : 's'}
        </strong>{' '}
        from the source cannot be drawn in the text, because entities may not overlap. Delete the wrong one to resolve it.
      </p>
      <ul>
        {hidden.map((a) => (
          <li key={a.id}>
            <span className={`swatch ${colourClass(a.type)}`} aria-hidden="true" /> {a.type} <q>{text.slice(a.start, a.end)}</q>{' '}
            {a.state === 'suggested' && <span className="suggestion-tag">suggestion{a.confidence !== null ? ` ${a.confidence.toFixed(2)}` : ''}</span>}
            <span className="muted">
              ({a.start}–{a.end})
            </span>
            <button
              type="button"
              className="btn small"
              onClick={() => {
                const r = controller.charRange(a.start, a.end)
                controller.reveal(r.from, r.to)
              }}
            >
              Show
            </button>
            <button type="button" className="btn small danger" onClick={() => void controller.deleteHidden(a)}>
              {a.state === 'suggested' ? 'Reject' : 'Delete'}
            </button>
          </li>
        ))}
      </ul>
    </div>
  )
}
