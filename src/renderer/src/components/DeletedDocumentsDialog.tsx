// The workspace's deleted documents (Workspace → Deleted documents…), newest deletion first, each
// with Restore: the way back once the Undo on the delete's message has gone.
import { useEffect, useState } from 'react'
import type { DeletedDocument } from '@shared/ipc'
import { plural } from '@shared/plural'
import { api, errorMessage } from '../api'
import { notify } from '../toasts'
import { formatDate } from '../models/store'
import { Modal } from './Modal'

export function DeletedDocumentsDialog(props: { onClose: () => void; onRestored: (ids: number[]) => void }) {
  const [listed, setListed] = useState<{ documents: DeletedDocument[]; total: number } | null>(null)
  const [failed, setFailed] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [version, setVersion] = useState(0)
  useEffect(() => {
    let alive = true
    api
      .deletedDocuments()
      .then((r) => alive && setListed(r))
      .catch((e) => alive && setFailed(errorMessage(e)))
    return () => {
      alive = false
    }
  }, [version])

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
      setVersion((v) => v + 1)
    }
  }

  return (
    <Modal title="Deleted documents" onClose={props.onClose} className="history-dialog" testId="deleted-documents">
      {failed ? (
        <p className="form-error" role="alert">
          Cannot read the deleted documents: {failed}
        </p>
      ) : !listed ? (
        <p className="muted">Reading…</p>
      ) : listed.total === 0 ? (
        <p className="muted">No document of this workspace has been deleted.</p>
      ) : (
        <>
          <p className="muted">
            Restored documents come back as they were: their annotations, suggestions and review status.
            {listed.total > listed.documents.length ? ` The ${listed.documents.length} most recent of ${listed.total} are listed.` : ''}
          </p>
          <div className="table-wrap history-wrap" tabIndex={0} role="region" aria-label="Deleted documents">
            <table className="data-table history-table" data-testid="deleted-table">
              <caption className="visually-hidden">Deleted documents, the most recently deleted first</caption>
              <thead>
                <tr>
                  <th scope="col">ID</th>
                  <th scope="col">Title</th>
                  <th scope="col">Entities</th>
                  <th scope="col">Deleted</th>
                  <th scope="col">
                    <span className="visually-hidden">Restore</span>
                  </th>
                </tr>
              </thead>
              <tbody>
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
              </tbody>
            </table>
          </div>
        </>
      )}
    </Modal>
  )
}
