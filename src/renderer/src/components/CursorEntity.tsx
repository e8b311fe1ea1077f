// What the cursor is on, in words. The text is one ProseMirror textbox, so a screen reader reads
// the characters but not the entity marks around them; this line says the type (by name and
// number key, not only by colour), the text and its origin — person, import, or model with its
// confidence — and, being a status region, is announced whenever the caret enters an entity.
import type { EditorController, UiSnapshot } from '../editor/controller'
import { originText } from './EntityPopover'

interface Props {
  controller: EditorController
  snap: UiSnapshot
  legend: string[]
}

export function CursorEntity({ controller, snap, legend }: Props) {
  const at = snap.active ? controller.entityInfo(snap.active.key) : null
  const key = at ? legend.indexOf(at.attrs.type) : -1
  const suggested = at?.attrs.state === 'suggested'
  return (
    <p className="cursor-entity" role="status" data-testid="cursor-entity" data-entity-key={at?.key}>
      {at && (
        <>
          <span className="visually-hidden">{suggested ? 'Suggestion: ' : 'Entity: '}</span>
          <strong className="cursor-entity-type">{at.attrs.type}</strong>{' '}
          {key >= 0 && key < 9 && (
            <kbd title={`Key ${key + 1} assigns ${at.attrs.type}`}>
              <span className="visually-hidden">key </span>
              {key + 1}
            </kbd>
          )}{' '}
          <q className="quote">{at.text}</q>
          <span className="muted">
            {' '}
            · {originText(at.attrs.origin, at.attrs.confidence, at.attrs.state, at.attrs.rule)}
          </span>
          <span className="visually-hidden">
            {suggested ? '. Press a to accept, r to reject, Enter for details.' : '. Press Enter for details, Delete to remove.'}
          </span>
        </>
      )}
    </p>
  )
}
