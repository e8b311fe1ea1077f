// The workspace's deleted documents (Workspace → Deleted documents…), newest deletion first, each
// with Restore: the way back once the Undo on the delete's message has gone.
import { useState } from 'react'
import type { DeletedDocument } from '@shared/ipc'
import { plural } from '@shared/plural'
import { api, errorMessage } from '../api'
import { notify } from '../toasts'
import { formatDate } from '../models/store'
import { Modal } from './Modal'
import { useFetched } from '../useFetched'
import { Fetched } from './Fetched'
import { DataTable, type ColumnHead } from './DataTable'

const DELETED_COLUMNS: ColumnHead[] = [['ID'], ['Title'], ['Entities'], ['Deleted'], [<span className="visually-hidden">Restore</span>]]

export function DeletedDocumentsDialog(props: { onClose: () => void; onRestored: (ids: number[]) => void }) {
  const fetched = useFetched(() => api.deletedDocuments(), [])
  const { reload } = fetched
  const [busy, setBusy] = useState(false)

  const restore = async (docs: DeletedDocument[]) => {
    setBusy(true)
    try {
      const { restored } = await api.restoreDocuments(docs.map((d) => d.id))
      const named = restored.length === 1 ? `document ${restored[0]!.externalId}` : plural(restored.length, 'document')
      notify('success', `Restored ${named} with ${plural(docs.reduce((n, d) => n + d.annotations, 0), 'annotation')}.`)
      props.onRestored(restored.map((d) => d.id))
    } catch (e) {
      notify('error', `Could not restore: ${errorMessage(e)}`)
    } finally {
      setBusy(false)
      reload()
    }
  }

  return (
    <Modal title="Deleted documents" onClose={props.onClose} className="history-dialog" testId="deleted-documents">
      <Fetched fetched={fetched} what="the deleted documents" isEmpty={(l) => l.total === 0} empty="No document of this workspace has been deleted.">
        {(listed) => (
          <>
            <p className="muted">
              Restored documents come back as they were: their annotations, suggestions and review status.
              {listed.total > listed.documents.length ? ` The ${listed.documents.length} most recent of ${listed.total} are listed.` : ''}
            </p>
            <DataTable
              name="history-table"
              testId="deleted-table"
              columns={DELETED_COLUMNS}
              caption="Deleted documents, the most recently deleted first"
              region={{ label: 'Deleted documents', className: 'history-wrap' }}
            >
              {listed.documents.map((d) => (
                <tr key={d.id} data-doc-id={d.id}>
                  <td className="nowrap">{d.externalId}</td>
                  <td>{d.title || <span className="muted">(no title)</span>}</td>
                  <td>{d.annotations}</td>
                  <td className="nowrap">
                    {formatDate(d.deletedAt)} <span className="muted">by {d.deletedBy}</span>
                  </td>
                  <td>
                    <button type="button" className="btn small" disabled={busy} onClick={() => void restore([d])} data-action="restore-document">
                      Restore
                    </button>
                  </td>
                </tr>
              ))}
            </DataTable>
          </>
        )}
      </Fetched>
    </Modal>
  )
}
