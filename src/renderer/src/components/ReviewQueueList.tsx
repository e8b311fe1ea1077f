// Active learning: tagged documents that are not done, in the order of the workspace's strategy
// (least confidence unless the person chose another; src/shared/recipes.ts STRATEGY_LABELS).
// Keyboard as in the document list (↑ ↓ PageUp PageDown Home End, Enter opens); j / k and
// Alt+↑ / Alt+↓ follow this order while it is shown.
import { useCallback, useEffect, useId, useRef, useState, type KeyboardEvent } from 'react'
import type { ReviewQueueItem } from '@shared/ipc'
import { ACTIVE_STRATEGIES, STRATEGY_LABELS, type ActiveStrategy } from '@shared/recipes'
import { api, errorMessage } from '../api'
import { notify } from '../toasts'
import { updateLearning, useLearning } from '../models/learning-store'
import { useModels } from '../models/store'
import { StatusPill } from './StatusPill'
import { suggestionVersion } from './suggestion-version'

/** The score a strategy ranks by, shown on each row; order, random and diverse show least confidence. */
function shownScore(it: ReviewQueueItem, strategy: ActiveStrategy): { name: string; value: number | null; why: string } {
  if (strategy === 'margin') return { name: 'Margin', value: it.margin, why: '1 − the mean gap between the two best labels' }
  if (strategy === 'entropy') return { name: 'Entropy', value: it.entropy, why: 'the mean spread of the label probabilities' }
  return { name: 'Uncertainty', value: it.uncertainty, why: "1 − the model's mean confidence over the words" }
}

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
  const { state: loop } = useLearning()
  const { models } = useModels()
  const strategy = loop?.strategy ?? null
  const strategyId = useId()

  useEffect(() => {
    if (strategy === null) return
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
  }, [version, strategy])

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

  const shown = strategy ?? 'least-confidence'
  const max = Math.max(0.0001, ...(items ?? []).map((i) => shownScore(i, shown).value ?? 0))
  const activeItem = items?.[active]
  const label = STRATEGY_LABELS[shown]

  const choose = async (next: ActiveStrategy) => {
    try {
      await updateLearning({ strategy: next })
    } catch (e) {
      notify('error', `Cannot change the queue's order: ${errorMessage(e)}`)
    }
  }

  return (
    <>
      <div className="queue-strategy">
        <label htmlFor={strategyId}>Order</label>
        <select
          id={strategyId}
          value={strategy ?? ''}
          disabled={strategy === null}
          onChange={(e) => void choose(e.target.value as ActiveStrategy)}
          data-testid="queue-strategy"
        >
          {strategy === null && <option value="">…</option>}
          {ACTIVE_STRATEGIES.map((s) => (
            <option key={s} value={s}>
              {STRATEGY_LABELS[s].name}
              {loop?.defaultStrategy === s ? ' (default)' : ''}
            </option>
          ))}
        </select>
      </div>
      {loop?.autoImprove.enabled && (
        <p className="list-summary auto-improve-line" data-testid="queue-auto-improve">
          {loop.autoImprove.running
            ? 'Auto-improve is retraining in the background; keep reviewing.'
            : `Auto-improve: ${loop.autoImprove.reviewedSince} of ${loop.autoImprove.every} reviewed towards the next retrain.`}
        </p>
      )}
      <p className="list-summary queue-summary" data-testid="queue-summary" data-strategy={strategy ?? ''}>
        {items === null && !error
          ? 'Loading…'
          : `${items?.length ?? 0} tagged document${items?.length === 1 ? '' : 's'} to review: ${label.description}`}
      </p>
      <div
        className="doc-list queue-list"
        ref={listRef}
        // Only a list with options is a listbox (axe aria-required-children).
        role={items?.length ? 'listbox' : undefined}
        tabIndex={items?.length ? 0 : -1}
        aria-label={items?.length ? `Review queue, ${label.name.toLowerCase()}` : undefined}
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
              {suggestionVersion(it.modelId, it.suggestions, models).state === 'outdated' ? (
                <span
                  className="doc-row-count"
                  title={`${it.suggestions} suggestions made by another model than the active one: open the document to refresh them`}
                  data-testid="queue-outdated"
                >
                  {it.suggestions} <span className="queue-outdated">outdated</span>
                </span>
              ) : (
                <span className="doc-row-count" title={`${it.suggestions} model suggestions waiting`}>
                  {it.suggestions} <span className="muted">suggested</span>
                </span>
              )}
            </div>
            <div className="doc-row-title">{it.title || <span className="muted">(no title)</span>}</div>
            <Score score={shownScore(it, shown)} max={max} />
          </div>
        ))}
      </div>
    </>
  )
}

function Score({ score, max }: { score: { name: string; value: number | null; why: string }; max: number }) {
  const v = score.value
  return (
    <div className="uncertainty" title={v === null ? `${score.name}: not known (tagged before it was recorded; tag again)` : `${score.name} ${v.toFixed(3)}: ${score.why}`}>
      <span className="uncertainty-label">{score.name}</span>
      <span className="ubar" aria-hidden="true">
        <span style={{ width: `${v === null ? 0 : Math.round((v / max) * 100)}%` }} />
      </span>
      <span className="uncertainty-value">{v === null ? '–' : v.toFixed(2)}</span>
    </div>
  )
}
