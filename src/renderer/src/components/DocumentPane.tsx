import { useEffect, useLayoutEffect, useRef, useState, useSyncExternalStore, type MutableRefObject } from 'react'
import type { DocumentDetail, ReviewStatus } from '@shared/domain'
import { api, errorMessage, isApiError } from '../api'
import { notify } from '../toasts'
import { EditorController, type TypeUse, type UiSnapshot } from '../editor/controller'
import { StatusPill } from './StatusPill'
import { Legend } from './Legend'
import { SelectionMenu } from './SelectionMenu'
import { EntityPopover } from './EntityPopover'
import { HiddenAnnotations } from './HiddenAnnotations'
import { SuggestionBar } from './SuggestionBar'
import { CursorEntity } from './CursorEntity'
import { HistoryDialog } from './HistoryDialog'
import { suggestionVersion } from './suggestion-version'
import { useModels } from '../models/store'

export interface CurrentDocument {
  id: number
  externalId: string
  title: string
  status: ReviewStatus
}

interface Props {
  id: number
  current: CurrentDocument | null
  legend: string[]
  legendRef: MutableRefObject<string[]>
  showTags: boolean
  onToggleTags: () => void
  onTypeUsed: (type: string, by: TypeUse) => void
  onPersisted: () => void
  onCurrent: (c: CurrentDocument | null) => void
  onToggleDone: () => void
  onNeighbor: (direction: 'next' | 'previous') => void
  controllerRef: MutableRefObject<EditorController | null>
  onMissing: () => void
  /** Tag this document with the active model (null: no active model, or a model job runs). */
  onTag: (() => void) | null
  tagHint: string
}

const noSubscribe = () => () => undefined
const noSnapshot = () => null

export function DocumentPane(props: Props) {
  const { id } = props
  const [detail, setDetail] = useState<DocumentDetail | null>(null)
  const [failed, setFailed] = useState<string | null>(null)
  const [controller, setController] = useState<EditorController | null>(null)
  const mountRef = useRef<HTMLDivElement | null>(null)
  const pageRef = useRef<HTMLDivElement | null>(null)
  const propsRef = useRef(props)
  propsRef.current = props
  const [, setLayoutTick] = useState(0)
  const [historyOpen, setHistoryOpen] = useState(false)

  useEffect(() => {
    let alive = true
    setDetail(null)
    setFailed(null)
    api
      .getDocument(id)
      .then((d) => alive && setDetail(d))
      .catch((e) => {
        if (!alive) return
        if (isApiError(e) && e.code === 'not_found') {
          propsRef.current.onMissing()
          return
        }
        setFailed(errorMessage(e))
      })
    return () => {
      alive = false
    }
  }, [id])

  useLayoutEffect(() => {
    const mount = mountRef.current
    if (!detail || !mount) return
    const started = performance.now()
    const c = new EditorController(
      mount,
      detail,
      {
        legendTypes: () => propsRef.current.legendRef.current,
        message: (kind, text) => notify(kind, text),
        typeUsed: (t, by) => propsRef.current.onTypeUsed(t, by),
        persisted: () => propsRef.current.onPersisted(),
      },
      propsRef.current.showTags,
    )
    mount.dataset['renderMs'] = String(Math.round(performance.now() - started))
    propsRef.current.controllerRef.current = c
    setController(c)
    propsRef.current.onCurrent({ id: detail.id, externalId: detail.externalId, title: detail.title, status: detail.status })
    c.focus()
    return () => {
      c.destroy()
      if (propsRef.current.controllerRef.current === c) propsRef.current.controllerRef.current = null
      setController(null)
    }
  }, [detail])

  useEffect(() => {
    controller?.setShowTags(props.showTags)
  }, [controller, props.showTags])

  // Menus are placed from text coordinates: recompute when the text reflows.
  useEffect(() => {
    const el = pageRef.current
    if (!el) return
    const ro = new ResizeObserver(() => setLayoutTick((t) => t + 1))
    ro.observe(el)
    return () => ro.disconnect()
  }, [])

  const snap = useSyncExternalStore(controller?.subscribe ?? noSubscribe, controller?.getSnapshot ?? noSnapshot)
  const { models } = useModels()
  const version = suggestionVersion(snap?.suggestionModelId ?? null, snap?.suggestions ?? 0, models)
  const status = props.current?.id === id ? props.current.status : detail?.status

  if (failed) {
    return (
      <div className="empty-state" role="alert">
        <h2>This document could not be opened</h2>
        <p>{failed}</p>
      </div>
    )
  }

  return (
    <section
      className={`doc-pane${version.state === 'outdated' ? ' has-outdated-suggestions' : ''}`}
      aria-busy={!detail}
      data-testid="document-pane"
      data-doc-id={id}
      data-suggestions-version={version.state}
    >
      <div className="doc-toolbar">
        <div className="doc-ident">
          <span className="pmid-label">{detail ? (/^\d+$/.test(detail.externalId) ? 'PMID' : 'ID') : ''}</span>
          <span className="pmid" data-testid="doc-external-id">
            {detail?.externalId ?? '…'}
          </span>
          {status && <StatusPill status={status} />}
          {snap && <SaveIndicator snap={snap} />}
        </div>
        <div className="doc-actions">
          <button
            type="button"
            className="btn small"
            onClick={() => props.onTag?.()}
            disabled={!props.onTag || !detail}
            title={props.tagHint}
            data-testid="tag-document"
          >
            <span aria-hidden="true">◇</span> Tag with model
          </button>
          <span className="toolbar-sep" aria-hidden="true" />
          <button
            type="button"
            className="btn small"
            onClick={() => controller?.undo()}
            disabled={!snap?.canUndo}
            title="Undo (Ctrl+Z)"
          >
            ↶ Undo
          </button>
          <button
            type="button"
            className="btn small"
            onClick={() => controller?.redo()}
            disabled={!snap?.canRedo}
            title="Redo (Ctrl+Shift+Z or Ctrl+Y)"
          >
            ↷ Redo
          </button>
          <button
            type="button"
            className="btn small"
            onClick={() => {
              // The trail must include the edits still being saved.
              void (controller?.flush() ?? Promise.resolve()).finally(() => setHistoryOpen(true))
            }}
            disabled={!detail}
            title="Every change to this document's annotations: who, when, before and after"
            data-testid="history-button"
          >
            History…
          </button>
          <label className="switch" title="Show the B/I/O tag of every token">
            <input type="checkbox" checked={props.showTags} onChange={props.onToggleTags} data-testid="bio-toggle" />
            <span>Show BIO tags</span>
          </label>
          <span className="toolbar-sep" aria-hidden="true" />
          {/* Names where Previous / Next go; a bare "Unreviewed" here read as this document's status. */}
          <span className="toolbar-label" id="neighbor-label">
            Go to unreviewed:
          </span>
          <button
            type="button"
            className="btn small"
            onClick={() => props.onNeighbor('previous')}
            title="Previous unreviewed document (Alt+↑, or k)"
            aria-describedby="neighbor-label"
          >
            ↑ Previous
          </button>
          <button
            type="button"
            className="btn small"
            onClick={() => props.onNeighbor('next')}
            title="Next unreviewed document (Alt+↓, or j)"
            aria-describedby="neighbor-label"
          >
            ↓ Next
          </button>
          <button
            type="button"
            className={`btn small ${status === 'done' ? '' : 'primary'}`}
            onClick={props.onToggleDone}
            disabled={!detail}
            title={status === 'done' ? 'Reopen for review (Ctrl+Enter)' : 'Mark as done (Ctrl+Enter)'}
            data-testid="mark-done"
          >
            {status === 'done' ? 'Reopen' : '✓ Mark done'}
          </button>
        </div>
      </div>
      {controller && snap && (
        <Legend
          legend={props.legend}
          counts={snap.counts}
          total={snap.total}
          canAssign={!!snap.selection || !!snap.active}
          onAssign={(t) => {
            controller.assignType(t)
            controller.focus()
          }}
          onAddType={(t) => props.onTypeUsed(t, 'person')}
          status={<CursorEntity controller={controller} snap={snap} legend={props.legend} />}
        />
      )}
      {controller && snap && snap.suggestions > 0 && (
        <SuggestionBar controller={controller} snap={snap} version={version} onRefresh={props.onTag} refreshHint={props.tagHint} />
      )}
      {controller && snap && snap.hidden.length > 0 && <HiddenAnnotations controller={controller} hidden={snap.hidden} text={controller.text} />}
      <div className="doc-scroll">
        <div className={`doc-page${props.showTags ? ' show-tags' : ''}`} ref={pageRef}>
          {!detail && <p className="muted loading">Loading document…</p>}
          <div ref={mountRef} className="doc-mount" data-testid="editor" />
          {controller && snap && (
            <>
              <SelectionMenu controller={controller} snap={snap} legend={props.legend} pageRef={pageRef} />
              <EntityPopover controller={controller} snap={snap} legend={props.legend} pageRef={pageRef} />
            </>
          )}
        </div>
      </div>
      {historyOpen && detail && (
        <HistoryDialog
          documentId={detail.id}
          externalId={detail.externalId}
          text={detail.text}
          onClose={() => setHistoryOpen(false)}
          onRestore={async (revisionId) => {
            // Queued edits first, so the history and the restore see them; then redraw from the workspace.
            await controller?.flush()
            await api.restoreRevision(revisionId)
            await controller?.reload()
            props.onPersisted()
          }}
        />
      )}
    </section>
  )
}

function SaveIndicator({ snap }: { snap: UiSnapshot }) {
  const text =
    snap.save === 'saving' ? `Saving${snap.pending > 1 ? ` ${snap.pending} changes` : ''}…` : snap.save === 'error' ? 'Not saved' : 'All changes saved'
  return (
    <span className={`save save-${snap.save}`} data-testid="save-state" data-state={snap.save} role="status">
      <span className="save-dot" aria-hidden="true" />
      {text}
    </span>
  )
}
