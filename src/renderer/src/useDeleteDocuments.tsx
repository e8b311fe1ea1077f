// Deleting documents from the list: a confirmation that says what goes, the delete, the next
// document to open, and "Undo" on the message that follows (documents:restore brings them back
// exactly; the workspace keeps them, flagged deleted, until then and after).
import { useCallback, useState, type ReactNode } from 'react'
import type { DocumentDeletion } from '@shared/ipc'
import { plural } from '@shared/plural'
import { api, errorMessage } from './api'
import { notify } from './toasts'
import { ConfirmDialog } from './components/ConfirmDialog'

interface Options {
  /** The open document (it may be one of those deleted). */
  currentId: number | null
  /** Opens a document, or none. */
  open: (id: number | null) => void
  /** Saves edits still on their way, so the delete (and its undo) covers them. */
  flush: () => Promise<void>
  /** The list, its counts and the workspace's types changed. */
  changed: () => void
  /** The deleted documents are no longer selected. */
  unselect: (ids: readonly number[]) => void
}

/** Returns `request(ids)`, which asks and deletes, and the dialog to render. */
export function useDeleteDocuments({ currentId, open, flush, changed, unselect }: Options): { request: (ids: number[]) => void; dialog: ReactNode } {
  const [pending, setPending] = useState<DocumentDeletion | null>(null)

  const request = useCallback(
    (ids: number[]) => {
      if (ids.length === 0) return
      void (async () => {
        try {
          await flush()
          setPending(await api.deletePreview(ids))
        } catch (e) {
          notify('error', `Cannot delete: ${errorMessage(e)}`)
        }
      })()
    },
    [flush],
  )

  const confirm = useCallback(
    async (what: DocumentDeletion) => {
      setPending(null)
      const wasOpen = currentId !== null && what.ids.includes(currentId) ? currentId : null
      let done: DocumentDeletion
      try {
        done = await api.deleteDocuments(what.ids)
      } catch (e) {
        notify('error', `Could not delete ${describe(what)}: ${errorMessage(e)}`)
        return
      }
      unselect(done.ids)
      if (wasOpen !== null) open(await nextAfter(wasOpen))
      changed()
      const undo = async () => {
        try {
          await api.restoreDocuments(done.ids)
          changed()
          if (wasOpen !== null) open(wasOpen)
          notify('success', `Restored ${describe(done)} with ${plural(done.annotations, 'annotation')}.`, 'delete-documents')
        } catch (e) {
          notify('error', `Could not restore ${describe(done)}: ${errorMessage(e)}`, 'delete-documents')
        }
      }
      notify(
        'success',
        `Deleted ${describe(done)}${done.annotations ? ` and ${plural(done.annotations, 'annotation')}` : ''}.`,
        'delete-documents',
        { label: 'Undo', run: () => void undo() },
      )
    },
    [currentId, open, changed, unselect],
  )

  const dialog = pending && (
    <ConfirmDialog
      title={`Delete ${describe(pending)}?`}
      confirmLabel={`Delete ${plural(pending.ids.length, 'document')}`}
      cancelLabel={pending.ids.length === 1 ? 'Keep it' : 'Keep them'}
      tone="danger"
      onConfirm={() => void confirm(pending)}
      onCancel={() => setPending(null)}
      testId="confirm-delete-documents"
      confirmTestId="confirm-delete-documents-button"
    >
      <DeletionSummary what={pending} />
    </ConfirmDialog>
  )
  return { request, dialog }
}

function DeletionSummary({ what }: { what: DocumentDeletion }) {
  const shown = what.externalIds.slice(0, 5)
  return (
    <>
      <p>
        {what.ids.length === 1 ? 'It leaves' : 'They leave'} the list, the review queue, exports and the training data, with{' '}
        <strong data-testid="delete-annotations">{plural(what.annotations, 'annotation')}</strong>
        {what.annotations > 0 && (
          <>
            {' '}
            (<strong data-testid="delete-by-person">{what.byPerson}</strong> made or accepted by a person)
          </>
        )}
        {what.suggestions > 0 && <> and {plural(what.suggestions, 'model suggestion')}</>}.
      </p>
      {what.ids.length > 1 && (
        <p className="muted">
          {shown.join(', ')}
          {what.externalIds.length > shown.length ? `, and ${what.externalIds.length - shown.length} more` : ''}
        </p>
      )}
      <p className="muted">
        Undo is offered right after, and Workspace → Deleted documents… restores later; importing a deleted document's file again brings it back as a fresh
        document.
      </p>
    </>
  )
}

/** "document 1002" or "3 documents". */
function describe(what: DocumentDeletion): string {
  return what.ids.length === 1 ? `document ${what.externalIds[0]}` : plural(what.ids.length, 'document')
}

/** The document after a deleted one (by import order), else the one before, else none. */
async function nextAfter(id: number): Promise<number | null> {
  try {
    return (await api.neighbor(id, 'next', false)).id ?? (await api.neighbor(id, 'previous', false)).id
  } catch {
    return null
  }
}
