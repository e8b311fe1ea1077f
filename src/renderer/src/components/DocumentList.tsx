// The document list: search, filters with counts, and a virtualised list that fetches pages of
// 100 summaries as they scroll into view (workspaces hold thousands of abstracts).
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent, type RefObject } from 'react'
import type { DocumentListResult } from '@shared/ipc'
import type { DocumentSummary, ReviewStatus } from '@shared/domain'
import { api, errorMessage } from '../api'
import { notify } from '../toasts'
import { colourClass } from '../palette'
import { StatusPill } from './StatusPill'
import { ReviewQueueList } from './ReviewQueueList'

export type ListMode = 'all' | 'queue'

export interface ListFilters {
  query: string
  status: ReviewStatus | null
  type: string | null
}

interface Props {
  filters: ListFilters
  onFilters: (f: ListFilters) => void
  /** Bumped when documents or annotations changed. */
  version: number
  currentId: number | null
  onOpen: (id: number) => void
  searchRef: RefObject<HTMLInputElement | null>
  mode: ListMode
  onMode: (m: ListMode) => void
  /** Documents ticked for tagging. */
  selected: ReadonlySet<number>
  onSelected: (next: Set<number>) => void
  /** Tag the ticked documents / every document the filters match; null while that is not possible. */
  onTag: ((scope: 'selected' | 'filtered') => void) | null
  /** Asks to delete these documents (the caller confirms). */
  onDelete: (ids: number[]) => void
  onTotal: (n: number) => void
  /** The queue's order, for j / k and Alt+↑/↓ in queue mode. */
  onQueue: (ids: number[]) => void
}

const PAGE = 100
const ROW_HEIGHT = 64
const OVERSCAN = 6

const STATUS_FILTERS: Array<{ value: ReviewStatus | null; label: string }> = [
  { value: null, label: 'All' },
  { value: 'unreviewed', label: 'Unreviewed' },
  { value: 'in_progress', label: 'In progress' },
  { value: 'done', label: 'Done' },
]

interface ListData {
  filterKey: string
  total: number
  counts: DocumentListResult['counts'] | null
  pages: Map<number, DocumentSummary[]>
}

export function DocumentList(props: Props) {
  const { filters, onFilters, version, currentId, onOpen, selected, onSelected } = props
  const [queryInput, setQueryInput] = useState(filters.query)
  const filterKey = JSON.stringify([filters.query.trim(), filters.status, filters.type])
  const [data, setData] = useState<ListData>({ filterKey: '', total: 0, counts: null, pages: new Map() })
  const [loading, setLoading] = useState(true)
  const [scrollTop, setScrollTop] = useState(0)
  const [viewport, setViewport] = useState(600)
  const [activeIndex, setActiveIndex] = useState(0)
  const scrollRef = useRef<HTMLDivElement | null>(null)
  const inflight = useRef(new Set<string>())
  const dataRef = useRef(data)
  dataRef.current = data

  // Debounced search.
  useEffect(() => {
    if (queryInput === filters.query) return
    const t = setTimeout(() => onFilters({ ...filters, query: queryInput }), 200)
    return () => clearTimeout(t)
  }, [queryInput, filters, onFilters])

  const request = useCallback(
    (page: number) => ({
      ...(filters.query.trim() ? { query: filters.query.trim() } : {}),
      ...(filters.status ? { status: filters.status } : {}),
      ...(filters.type ? { type: filters.type } : {}),
      offset: page * PAGE,
      limit: PAGE,
    }),
    [filters],
  )

  const fetchPage = useCallback(
    async (page: number, key: string, replace: boolean) => {
      const id = `${key}#${version}#${page}`
      if (inflight.current.has(id)) return
      inflight.current.add(id)
      try {
        const r = await api.listDocuments(request(page))
        setData((d) => {
          if (!replace && d.filterKey !== key) return d
          const pages = replace && d.filterKey !== key ? new Map<number, DocumentSummary[]>() : new Map(d.pages)
          pages.set(page, r.documents)
          return { filterKey: key, total: r.total, counts: r.counts, pages }
        })
      } catch (e) {
        notify('error', `Cannot list documents: ${errorMessage(e)}`)
      } finally {
        inflight.current.delete(id)
        setLoading(false)
      }
    },
    [request, version],
  )

  // New filters: start over at the top. New version: refetch the pages we hold, in place.
  const lastKey = useRef<string | null>(null)
  useEffect(() => {
    if (lastKey.current !== filterKey) {
      lastKey.current = filterKey
      setLoading(true)
      setActiveIndex(0)
      if (scrollRef.current) scrollRef.current.scrollTop = 0
      setScrollTop(0)
      void fetchPage(0, filterKey, true)
    } else {
      const held = [...dataRef.current.pages.keys()]
      for (const p of held.length ? held : [0]) void fetchPage(p, filterKey, true)
    }
  }, [filterKey, version, fetchPage])

  // The list element is new each time "All documents" comes back from the review queue.
  useLayoutEffect(() => {
    const el = scrollRef.current
    if (!el) return
    const ro = new ResizeObserver(() => setViewport(el.clientHeight))
    ro.observe(el)
    setViewport(el.clientHeight)
    setScrollTop(el.scrollTop)
    return () => ro.disconnect()
  }, [props.mode])

  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN)
  const last = Math.min(data.total - 1, Math.ceil((scrollTop + viewport) / ROW_HEIGHT) + OVERSCAN)

  // Fetch the pages the visible rows need.
  useEffect(() => {
    if (data.filterKey !== filterKey || data.total === 0) return
    for (let p = Math.floor(first / PAGE); p <= Math.floor(Math.max(first, last) / PAGE); p++) {
      if (!data.pages.has(p)) void fetchPage(p, filterKey, false)
    }
  }, [first, last, data, filterKey, fetchPage])

  const rowAt = useCallback(
    (i: number): DocumentSummary | undefined => data.pages.get(Math.floor(i / PAGE))?.[i % PAGE],
    [data.pages],
  )

  const scrollToIndex = (i: number) => {
    const el = scrollRef.current
    if (!el) return
    const top = i * ROW_HEIGHT
    if (top < el.scrollTop) el.scrollTop = top
    else if (top + ROW_HEIGHT > el.scrollTop + el.clientHeight) el.scrollTop = top + ROW_HEIGHT - el.clientHeight
  }

  // Keep the open document's row active so arrow keys continue from it.
  useEffect(() => {
    if (currentId === null) return
    for (const [p, rows] of data.pages) {
      const j = rows.findIndex((r) => r.id === currentId)
      if (j >= 0) {
        setActiveIndex(p * PAGE + j)
        return
      }
    }
  }, [currentId, data.pages])

  const toggle = (id: number) => {
    const next = new Set(selected)
    if (next.has(id)) next.delete(id)
    else next.add(id)
    onSelected(next)
  }

  const total = data.total
  const onTotal = props.onTotal
  useEffect(() => onTotal(total), [total, onTotal])

  const onListKey = (e: KeyboardEvent<HTMLDivElement>) => {
    if (data.total === 0) return
    if (e.key === 'x' && !e.altKey && !e.ctrlKey && !e.metaKey) {
      const row = rowAt(activeIndex)
      if (row) {
        e.preventDefault()
        toggle(row.id)
      }
      return
    }
    // Delete: the selected documents when there are any (as "Delete selected"), else the active row.
    if (e.key === 'Delete' && !e.altKey && !e.ctrlKey && !e.metaKey) {
      const row = rowAt(activeIndex)
      const ids = selected.size > 0 ? [...selected] : row ? [row.id] : []
      if (ids.length) {
        e.preventDefault()
        props.onDelete(ids)
      }
      return
    }
    let next = activeIndex
    if (e.key === 'ArrowDown') next = activeIndex + 1
    else if (e.key === 'ArrowUp') next = activeIndex - 1
    else if (e.key === 'PageDown') next = activeIndex + Math.max(1, Math.floor(viewport / ROW_HEIGHT) - 1)
    else if (e.key === 'PageUp') next = activeIndex - Math.max(1, Math.floor(viewport / ROW_HEIGHT) - 1)
    else if (e.key === 'Home') next = 0
    else if (e.key === 'End') next = data.total - 1
    else if (e.key === 'Enter' || e.key === ' ') {
      const row = rowAt(activeIndex)
      if (row) {
        e.preventDefault()
        onOpen(row.id)
      }
      return
    } else return
    if (e.altKey || e.ctrlKey || e.metaKey) return
    e.preventDefault()
    next = Math.max(0, Math.min(data.total - 1, next))
    setActiveIndex(next)
    scrollToIndex(next)
  }

  const counts = data.counts
  const typeOptions = useMemo(() => {
    const entries = Object.entries(counts?.byType ?? {})
    if (filters.type && !entries.some(([t]) => t === filters.type)) entries.push([filters.type, 0])
    return entries.sort((a, b) => a[0].localeCompare(b[0]))
  }, [counts, filters.type])
  const rows: Array<{ i: number; row: DocumentSummary | undefined }> = []
  for (let i = first; i <= last; i++) rows.push({ i, row: rowAt(i) })
  const activeRow = rowAt(activeIndex)
  // A listbox must own options: while none is drawn (empty list, first page loading) the element is
  // a plain scroll area, so screen readers are not told about an empty list box.
  const hasOptions = rows.some((r) => r.row)

  return (
    <section className="sidebar" aria-label="Documents">
      <div className="list-mode" role="tablist" aria-label="List">
        <button
          type="button"
          role="tab"
          aria-selected={props.mode === 'all'}
          className={`seg${props.mode === 'all' ? ' is-on' : ''}`}
          onClick={() => props.onMode('all')}
          data-testid="mode-all"
        >
          All documents
        </button>
        <button
          type="button"
          role="tab"
          aria-selected={props.mode === 'queue'}
          className={`seg${props.mode === 'queue' ? ' is-on' : ''}`}
          onClick={() => props.onMode('queue')}
          title="Tagged documents in the order of the chosen strategy: the model's least certain first by default (active learning)"
          data-testid="mode-queue"
        >
          Review queue
        </button>
      </div>
      {props.mode === 'queue' ? (
        <ReviewQueueList version={version} currentId={currentId} onOpen={onOpen} onQueue={props.onQueue} />
      ) : (
        <>
      <div className="sidebar-filters">
        <label className="search">
          <span className="visually-hidden">Search documents by text or PMID</span>
          <input
            ref={props.searchRef}
            type="search"
            placeholder="Search text or PMID  ( / )"
            value={queryInput}
            onChange={(e) => setQueryInput(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'ArrowDown') {
                e.preventDefault()
                scrollRef.current?.focus()
              } else if (e.key === 'Escape' && queryInput) {
                e.preventDefault()
                setQueryInput('')
              }
            }}
            data-testid="search"
          />
        </label>
        <div className="status-filter" role="group" aria-label="Review status">
          {STATUS_FILTERS.map((s) => {
            const n = s.value === null ? sumCounts(counts?.byStatus) : counts?.byStatus[s.value]
            return (
              <button
                key={s.label}
                type="button"
                className={`seg${filters.status === s.value ? ' is-on' : ''}`}
                aria-pressed={filters.status === s.value}
                onClick={() => onFilters({ ...filters, status: s.value })}
                data-status={s.value ?? 'all'}
              >
                <span>{s.label}</span>
                <span className="seg-count">{n ?? '–'}</span>
              </button>
            )
          })}
        </div>
        <div className="type-filter" role="group" aria-label="Entity type" data-testid="type-filter">
          <span className="type-filter-label">Type</span>
          <button
            type="button"
            className={`chip${filters.type === null ? ' is-on' : ''}`}
            aria-pressed={filters.type === null}
            onClick={() => onFilters({ ...filters, type: null })}
          >
            All
          </button>
          {typeOptions.map(([t, n]) => (
            <button
              key={t}
              type="button"
              className={`chip${filters.type === t ? ' is-on' : ''}`}
              aria-pressed={filters.type === t}
              onClick={() => onFilters({ ...filters, type: filters.type === t ? null : t })}
              title={`${n} document${n === 1 ? '' : 's'} with ${t} entities`}
              data-type={t}
            >
              <span className={`swatch ${colourClass(t)}`} aria-hidden="true" />
              {t}
              <span className="chip-count">{n}</span>
            </button>
          ))}
        </div>
      </div>
      <div className="list-summary">
        <span aria-live="polite">{loading ? 'Loading…' : `${data.total} document${data.total === 1 ? '' : 's'}`}</span>
        {selected.size > 0 ? (
          <span className="selection-actions" data-testid="selection-actions">
            <strong>{selected.size} selected</strong>
            <button type="button" className="link-btn" onClick={() => props.onTag?.('selected')} disabled={!props.onTag} data-testid="tag-selected">
              Tag selected
            </button>
            <button
              type="button"
              className="link-btn danger"
              onClick={() => props.onDelete([...selected])}
              title="Delete the selected documents (Delete in the list); undo is offered right after"
              data-testid="delete-selected"
            >
              Delete…
            </button>
            <button type="button" className="link-btn" onClick={() => onSelected(new Set())}>
              Clear
            </button>
          </span>
        ) : (
          data.total > 0 && (
            <button
              type="button"
              className="link-btn"
              onClick={() => props.onTag?.('filtered')}
              disabled={!props.onTag}
              title="Tag every document in this list with the active model"
              data-testid="tag-filtered"
            >
              Tag {filters.query || filters.status || filters.type ? 'these' : 'all'} {data.total}
            </button>
          )
        )}
      </div>
      <div
        className="doc-list"
        ref={scrollRef}
        role={hasOptions ? 'listbox' : undefined}
        tabIndex={hasOptions ? 0 : -1}
        aria-label={hasOptions ? 'Documents' : undefined}
        aria-describedby={hasOptions ? 'doc-list-keys' : undefined}
        aria-activedescendant={hasOptions && activeRow ? `doc-row-${activeRow.id}` : undefined}
        onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
        onKeyDown={onListKey}
        data-testid="document-list"
      >
        <div className="doc-list-inner" style={{ height: data.total * ROW_HEIGHT }}>
          {rows.map(({ i, row }) =>
            row ? (
              <div
                key={row.id}
                id={`doc-row-${row.id}`}
                role="option"
                aria-selected={row.id === currentId}
                aria-checked={selected.has(row.id)}
                aria-posinset={i + 1}
                aria-setsize={data.total}
                className={`doc-row${row.id === currentId ? ' is-current' : ''}${i === activeIndex ? ' is-active' : ''}${selected.has(row.id) ? ' is-selected' : ''}`}
                style={{ top: i * ROW_HEIGHT, height: ROW_HEIGHT }}
                onClick={(e) => {
                  setActiveIndex(i)
                  if (e.ctrlKey || e.metaKey) toggle(row.id)
                  else onOpen(row.id)
                }}
                data-doc-id={row.id}
                data-external-id={row.externalId}
              >
                {/* A control inside an option is a nested control (axe nested-interactive): the tick is
                    drawn here for the mouse, and the option itself carries it (aria-checked, key x). */}
                <span
                  className={`row-check${selected.has(row.id) ? ' is-checked' : ''}`}
                  aria-hidden="true"
                  title="Select for tagging (x)"
                  onClick={(e) => {
                    e.stopPropagation()
                    setActiveIndex(i)
                    toggle(row.id)
                  }}
                  data-testid="row-check"
                />
                <div className="doc-row-top">
                  <span className="pmid">{row.externalId}</span>
                  <StatusPill status={row.status} />
                  <span
                    className="doc-row-count"
                    title={`${row.annotationCount} ${row.annotationCount === 1 ? 'entity' : 'entities'}: ${row.types.join(', ') || 'none'}`}
                    data-testid="row-count"
                  >
                    {row.annotationCount} <span className="muted">{row.annotationCount === 1 ? 'entity' : 'entities'}</span>
                  </span>
                  {row.suggestionCount > 0 && (
                    <span className="doc-row-count" title="Model suggestions waiting for accept or reject" data-testid="row-suggestions">
                      {row.suggestionCount} <span className="muted">suggested</span>
                    </span>
                  )}
                </div>
                <div className="doc-row-title">{row.title || <span className="muted">(no title)</span>}</div>
              </div>
            ) : (
              <div key={`ph-${i}`} className="doc-row placeholder" style={{ top: i * ROW_HEIGHT, height: ROW_HEIGHT }} aria-hidden="true" />
            ),
          )}
        </div>
        <span id="doc-list-keys" className="visually-hidden">
          Enter opens the document; x selects it for tagging; Delete deletes the selected documents, or this one.
        </span>
        {!loading && data.total === 0 && (
          <p className="list-empty">{filters.query || filters.status || filters.type ? 'No document matches these filters.' : 'No documents yet.'}</p>
        )}
      </div>
        </>
      )}
    </section>
  )
}

function sumCounts(c: Record<string, number> | undefined): number | undefined {
  if (!c) return undefined
  return Object.values(c).reduce((a, b) => a + b, 0)
}
