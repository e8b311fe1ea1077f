// Active learning: tagged documents that are not done, the ones the model is least sure about
// first. Keyboard as in the document list (↑ ↓ PageUp PageDown Home End, Enter opens); j / k and
// Alt+↑ / Alt+↓ follow this order while it is shown.
import { useCallback, useEffect, useRef, useState, type KeyboardEvent } from 'react'
import type { ReviewQueueItem } from '@shared/ipc'
import { api, errorMessage } from '../api'
import { StatusPill } from './StatusPill'

const LIMIT = 500

interface Props {
  version: number
  currentId: number | null
  onOpen: (id: number) => void
  onQueue: (ids: number[]) => void
}

export function ReviewQueueList({ version, currentId, onOpen, onQueue }: Props) {
  const [items, setItems] = useState<ReviewQueueItem[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [active, setActive] = useState(0)
  const listRef = useRef<HTMLDivElement | null>(null)
  const onQueueRef = useRef(onQueue)
  onQueueRef.current = onQueue

  useEffect(() => {
    let alive = true
    api
      .reviewQueue(LIMIT)
      .then((q) => {
        if (!alive) return
        setItems(q)
        setError(null)
        onQueueRef.current(q.map((i) => i.documentId))
      })
      .catch((e) => alive && setError(errorMessage(e)))
    return () => {
      alive = false
    }
  }, [version])

  useEffect(() => () => onQueueRef.current([]), [])

  // Follow the open document.
  useEffect(() => {
    if (!items || currentId === null) return
    const i = items.findIndex((x) => x.documentId === currentId)
    if (i >= 0) setActive(i)
  }, [items, currentId])

  const scrollTo = useCallback((i: number) => {
    listRef.current?.querySelector<HTMLElement>(`[data-index="${i}"]`)?.scrollIntoView({ block: 'nearest' })
  }, [])

  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    if (!items || items.length === 0 || e.altKey || e.ctrlKey || e.metaKey) return
    const page = 8
    let next = active
    if (e.key === 'ArrowDown') next = active + 1
    else if (e.key === 'ArrowUp') next = active - 1
    else if (e.key === 'PageDown') next = active + page
    else if (e.key === 'PageUp') next = active - page
    else if (e.key === 'Home') next = 0
    else if (e.key === 'End') next = items.length - 1
    else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault()
      const it = items[active]
      if (it) onOpen(it.documentId)
      return
    } else return
    e.preventDefault()
    next = Math.max(0, Math.min(items.length - 1, next))
    setActive(next)
    scrollTo(next)
  }

  const max = Math.max(0.0001, ...(items ?? []).map((i) => i.uncertainty))
  const activeItem = items?.[active]

  return (
    <>
      <p className="list-summary queue-summary">
        {items === null && !error
          ? 'Loading…'
          : `${items?.length ?? 0} tagged document${items?.length === 1 ? '' : 's'} to review, least certain first`}
      </p>
      <div
        className="doc-list queue-list"
        ref={listRef}
        // Only a list with options is a listbox (axe aria-required-children).
        role={items?.length ? 'listbox' : undefined}
        tabIndex={items?.length ? 0 : -1}
        aria-label={items?.length ? 'Review queue, most uncertain first' : undefined}
        aria-activedescendant={activeItem ? `queue-row-${activeItem.documentId}` : undefined}
        onKeyDown={onKey}
        data-testid="review-queue"
      >
        {error && <p className="list-empty">Cannot read the review queue: {error}</p>}
        {items?.length === 0 && (
          <p className="list-empty">Nothing to review. Tag documents with a model (Models, or “Tag with model” in a document) to fill this queue.</p>
        )}
        {items?.map((it, i) => (
          <div
            key={it.documentId}
            id={`queue-row-${it.documentId}`}
            role="option"
            aria-selected={it.documentId === currentId}
            className={`queue-row${it.documentId === currentId ? ' is-current' : ''}${i === active ? ' is-active' : ''}`}
            data-index={i}
            data-doc-id={it.documentId}
            data-external-id={it.externalId}
            data-uncertainty={it.uncertainty.toFixed(4)}
            onClick={() => {
              setActive(i)
              onOpen(it.documentId)
            }}
          >
            <div className="doc-row-top">
              <span className="queue-rank">{i + 1}</span>
              <span className="pmid">{it.externalId}</span>
              <StatusPill status={it.status} />
              <span className="doc-row-count" title={`${it.suggestions} model suggestions waiting`}>
                {it.suggestions} <span className="muted">suggested</span>
              </span>
            </div>
            <div className="doc-row-title">{it.title || <span className="muted">(no title)</span>}</div>
            <div className="uncertainty" title={`Uncertainty ${it.uncertainty.toFixed(3)}: 1 − the model's mean confidence over the words`}>
              <span className="uncertainty-label">Uncertainty</span>
              <span className="ubar" aria-hidden="true">
                <span style={{ width: `${Math.round((it.uncertainty / max) * 100)}%` }} />
              </span>
              <span className="uncertainty-value">{it.uncertainty.toFixed(2)}</span>
            </div>
          </div>
        ))}
      </div>
    </>
  )
}
