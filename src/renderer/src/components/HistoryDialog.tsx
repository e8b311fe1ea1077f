// A document's revision trail (documents:history), newest first: when, who (a person, or a model
// when its tagging run made the change), what happened, and the annotation before and after.
import { useState } from 'react'
import type { Revision } from '@shared/domain'
import { api, errorMessage } from '../api'
import { notify } from '../toasts'
import { formatDate } from '../models/store'
import { Modal } from './Modal'
import { useFetched } from '../useFetched'
import { Fetched } from './Fetched'
import { DataTable, type ColumnHead } from './DataTable'

type Snapshot = NonNullable<Revision['before']>

/** Tagging runs record their changes as `model:<model name>` (src/main/models/tag.ts). */
const MODEL_PREFIX = 'model:'

export function describeAuthor(by: string): { kind: 'model' | 'person'; name: string } {
  return by.startsWith(MODEL_PREFIX) ? { kind: 'model', name: by.slice(MODEL_PREFIX.length) } : { kind: 'person', name: by }
}

/** What a revision did, in the words the app uses elsewhere (suggest, accept, reject). */
export function describeChange(r: Revision): string {
  const { before, after } = r
  if (r.action === 'create') {
    if (after?.origin === 'gold') return 'Imported'
    return after?.state === 'suggested' ? 'Suggested' : 'Added'
  }
  if (r.action === 'delete') {
    if (before?.state !== 'suggested') return 'Deleted'
    return describeAuthor(r.by).kind === 'model' ? 'Replaced by a new tagging' : 'Rejected'
  }
  if (before?.state === 'suggested' && after?.state === 'accepted') {
    const edited = before.type !== after.type || before.start !== after.start || before.end !== after.end
    return edited ? 'Corrected and accepted' : 'Accepted'
  }
  if (before?.state === 'accepted' && after?.state === 'suggested') return 'Accept undone'
  return 'Changed'
}

function SnapshotCell({ s, text }: { s: Snapshot | null; text: string }) {
  if (!s) return <span className="muted">–</span>
  const quote = text.slice(s.start, s.end).replace(/\s+/g, ' ')
  return (
    <span className="history-snapshot">
      <strong>{s.type}</strong> “{quote.length > 60 ? `${quote.slice(0, 59)}…` : quote}”{' '}
      <span className="muted">
        {s.start}–{s.end}
        {s.state === 'suggested' ? ` · suggested${s.confidence !== null ? ` ${s.confidence.toFixed(2)}` : ''}` : ''}
        {s.conceptId ? ` · ${s.conceptId}` : ''}
      </span>
    </span>
  )
}

/** The revisions that are their annotation's latest (only those can be restored), of a newest-first list. */
export function restorableRevisions(newestFirst: readonly Revision[]): Set<number> {
  const seen = new Set<number>()
  const out = new Set<number>()
  for (const r of newestFirst) {
    if (!seen.has(r.annotationId)) out.add(r.id)
    seen.add(r.annotationId)
  }
  return out
}

const HISTORY_COLUMNS: ColumnHead[] = [['When'], ['Who'], ['Change'], ['Before'], ['After'], [<span className="visually-hidden">Restore</span>]]

interface HistoryProps {
  documentId: number
  externalId: string
  text: string
  onClose: () => void
  /** Puts the annotation back as it was before revision `revisionId`; rejects with the reason it could not. */
  onRestore: (revisionId: number) => Promise<void>
}

export function HistoryDialog(props: HistoryProps) {
  const fetched = useFetched(async () => [...(await api.history(props.documentId))].reverse(), [props.documentId])
  const { reload } = fetched
  const revisions = fetched.value
  const [restoring, setRestoring] = useState<number | null>(null)
  const restorable = revisions ? restorableRevisions(revisions) : new Set<number>()
  const restore = async (r: Revision) => {
    setRestoring(r.id)
    try {
      await props.onRestore(r.id)
      const s = r.before ?? r.after
      notify('success', `Restored ${s ? `“${props.text.slice(s.start, s.end)}”` : 'the annotation'} as it was before: ${describeChange(r).toLowerCase()} undone.`)
    } catch (e) {
      notify('error', `Could not restore: ${errorMessage(e)}`)
    } finally {
      setRestoring(null)
      reload()
    }
  }
  return (
    <Modal title={`History of ${props.externalId}`} onClose={props.onClose} className="history-dialog" testId="history-dialog">
      <Fetched fetched={fetched} what="the history" isEmpty={(r) => r.length === 0} empty="No annotation of this document has changed yet.">
        {(revisions) => (
          <DataTable
            name="history-table"
            testId="history-table"
            columns={HISTORY_COLUMNS}
            caption="Every change to this document's annotations, newest first"
            region={{ label: 'Revisions', className: 'history-wrap' }}
          >
            {revisions.map((r) => {
              const who = describeAuthor(r.by)
              return (
                <tr key={r.id} data-revision-id={r.id} data-action={r.action} data-author-kind={who.kind}>
                  <td className="nowrap">{formatDate(r.at)}</td>
                  <td>
                    <span className={`author author-${who.kind}`}>{who.kind === 'model' ? 'Model' : 'Person'}</span> {who.name}
                  </td>
                  <td>{describeChange(r)}</td>
                  <td>
                    <SnapshotCell s={r.before} text={props.text} />
                  </td>
                  <td>
                    <SnapshotCell s={r.after} text={props.text} />
                  </td>
                  <td>
                    {restorable.has(r.id) ? (
                      <button
                        type="button"
                        className="btn small"
                        onClick={() => void restore(r)}
                        disabled={restoring !== null}
                        title="Put this annotation back as it was before this change"
                        data-action="restore"
                      >
                        Restore before
                      </button>
                    ) : (
                      <span className="muted" title="Changed again later: restore the later change first">
                        –
                      </span>
                    )}
                  </td>
                </tr>
              )
            })}
          </DataTable>
        )}
      </Fetched>
    </Modal>
  )
}
