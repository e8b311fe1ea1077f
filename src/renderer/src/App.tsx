import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from 'react'
import type { WorkspaceInfo } from '@shared/ipc'
import type { ReviewStatus } from '@shared/domain'
import { api, errorMessage, onEvent } from './api'
import { notify } from './toasts'
import { registerTypes } from './palette'
import { DEFAULT_TYPES, NO_LEGEND, legendWithUsed, nextLegend, type Legend } from './legend'
import { Header, VIEWS, type View } from './components/Header'
import { DocumentList, type ListFilters, type ListMode } from './components/DocumentList'
import { DocumentPane, type CurrentDocument } from './components/DocumentPane'
import { HelpPanel } from './components/HelpPanel'
import { PasteDialog } from './components/PasteDialog'
import { TypeMapDialog } from './components/TypeMapDialog'
import { DeletedDocumentsDialog } from './components/DeletedDocumentsDialog'
import { ImportReport } from './components/ImportReport'
import { useImport } from './useImport'
import { useDeleteDocuments } from './useDeleteDocuments'
import type { EditorController, TypeUse } from './editor/controller'
import { activeModel, onJobFinished, refreshModels, runModelJob, useModels, useRunningJobLabel } from './models/store'
import { ModelsView, type TagScope } from './models/ModelsView'
import { RetrainView } from './models/RetrainView'
import { CompressionView } from './models/CompressionView'

function isTypingTarget(el: Element | null): boolean {
  if (!el) return false
  const tag = el.tagName
  return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || (el as HTMLElement).isContentEditable
}

const lastDocKey = (path: string) => `fastbioner:lastDocument:${path}`

/** `onWorkspaceSwitched`: another workspace is open now; the root remounts the app for it. */
export function App({ onWorkspaceSwitched }: { onWorkspaceSwitched: () => void }) {
  const [info, setInfo] = useState<WorkspaceInfo | null>(null)
  const [legendState, setLegendState] = useState<Legend>(NO_LEGEND)
  const legend = legendState.types
  const [filters, setFilters] = useState<ListFilters>({ query: '', status: null, type: null })
  const [listVersion, setListVersion] = useState(0)
  const [currentId, setCurrentId] = useState<number | null>(null)
  const [current, setCurrent] = useState<CurrentDocument | null>(null)
  const [helpOpen, setHelpOpen] = useState(false)
  const [pasteOpen, setPasteOpen] = useState(false)
  const [typeMapOpen, setTypeMapOpen] = useState(false)
  const [deletedOpen, setDeletedOpen] = useState(false)
  const [showTags, setShowTags] = useState(() => localStorage.getItem('fastbioner:showTags') === '1')
  const controllerRef = useRef<EditorController | null>(null)
  const legendRef = useRef<string[]>(legend)
  legendRef.current = legend
  const legendStateRef = useRef(legendState)
  legendStateRef.current = legendState
  const searchRef = useRef<HTMLInputElement | null>(null)
  const [view, setView] = useState<View>('documents')
  const [listMode, setListMode] = useState<ListMode>('all')
  const [selected, setSelected] = useState<Set<number>>(() => new Set())
  const [filteredTotal, setFilteredTotal] = useState(0)
  const queueRef = useRef<number[]>([])
  const onQueue = useCallback((ids: number[]) => {
    queueRef.current = ids
  }, [])
  const { models } = useModels()
  const runningJobLabel = useRunningJobLabel()
  const currentModel = activeModel(models)

  const refreshInfo = useCallback(async () => {
    try {
      const next = await api.workspaceInfo()
      setInfo(next)
      setLegendState((prev) => {
        const out = nextLegend(prev, next.entityTypes)
        registerTypes(out.types)
        return out
      })
      return next
    } catch (e) {
      notify('error', `Cannot read the workspace: ${errorMessage(e)}`)
      return null
    }
  }, [])

  const refreshList = useCallback(() => setListVersion((v) => v + 1), [])
  // Saves come one after another; refresh the list (counts, status) once they settle.
  const refreshTimer = useRef<ReturnType<typeof setTimeout> | null>(null)
  const afterSave = useCallback(() => {
    // The workspace starts the review of a document when it is first edited.
    setCurrent((c) => (c && c.status === 'unreviewed' ? { ...c, status: 'in_progress' } : c))
    if (refreshTimer.current) clearTimeout(refreshTimer.current)
    refreshTimer.current = setTimeout(() => {
      setListVersion((v) => v + 1)
      void refreshInfo()
    }, 300)
  }, [refreshInfo])

  // Start: workspace info, then reopen the document the user had open.
  useEffect(() => {
    void refreshInfo().then((ws) => {
      if (!ws) return
      const last = Number(localStorage.getItem(lastDocKey(ws.path)))
      if (Number.isInteger(last) && last > 0) setCurrentId(last)
    })
  }, [refreshInfo])

  useEffect(() => {
    if (info && currentId !== null) localStorage.setItem(lastDocKey(info.path), String(currentId))
  }, [info, currentId])

  const typeUsed = useCallback((type: string, by: TypeUse) => {
    const next = legendWithUsed(legendStateRef.current, type, by)
    if (next === legendStateRef.current) return
    legendStateRef.current = next
    legendRef.current = next.types
    registerTypes(next.types)
    setLegendState(next)
  }, [])

  const openIdRef = useRef(currentId)
  openIdRef.current = currentId
  const openDocument = useCallback((id: number) => {
    // Enter on the open document's row goes back into its text (a new one takes the focus itself).
    if (id === openIdRef.current) controllerRef.current?.focus()
    else setCurrentId(id)
  }, [])

  const switchWorkspace = useCallback(
    async (purpose: 'open' | 'create') => {
      const verb = purpose === 'create' ? 'create' : 'open'
      try {
        const { path } = await api.chooseWorkspace(purpose)
        if (!path) return
        // Edits still being saved belong to the workspace being left.
        await controllerRef.current?.flush()
        const next = await api.openWorkspace(path, purpose === 'create')
        notify('success', `${purpose === 'create' ? 'Created' : 'Opened'} the workspace ${next.path} (${next.documentCount} document${next.documentCount === 1 ? '' : 's'}).`)
        onWorkspaceSwitched()
      } catch (e) {
        notify('error', `Could not ${verb} the workspace: ${errorMessage(e)}`)
      }
    },
    [onWorkspaceSwitched],
  )

  const documentsChanged = useCallback(async () => {
    await refreshInfo()
    refreshList()
  }, [refreshInfo, refreshList])

  const importer = useImport(documentsChanged)

  const unselect = useCallback((ids: readonly number[]) => {
    setSelected((prev) => {
      if (!ids.some((id) => prev.has(id))) return prev
      const next = new Set(prev)
      for (const id of ids) next.delete(id)
      return next
    })
  }, [])
  const openOrNone = useCallback((id: number | null) => {
    if (id === null) setCurrent(null)
    setCurrentId(id)
  }, [])
  const flushEdits = useCallback(async () => {
    await controllerRef.current?.flush()
  }, [])
  const deletion = useDeleteDocuments({ currentId, open: openOrNone, flush: flushEdits, changed: documentsChanged, unselect })

  const goNeighbor = useCallback(
    async (direction: 'next' | 'previous') => {
      // In "Most uncertain first", next / previous follow the queue.
      if (listMode === 'queue') {
        const q = queueRef.current
        if (q.length === 0) {
          notify('info', 'The review queue is empty.')
          return
        }
        const i = currentId === null ? -1 : q.indexOf(currentId)
        const j = direction === 'next' ? i + 1 : i < 0 ? q.length - 1 : i - 1
        if (j < 0 || j >= q.length) {
          notify('info', direction === 'next' ? 'This is the last document in the review queue.' : 'This is the first document in the review queue.')
          return
        }
        setCurrentId(q[j]!)
        return
      }
      try {
        let id: number | null
        if (currentId === null) {
          const first = await api.listDocuments({ status: 'unreviewed', limit: 1 })
          id = first.documents[0]?.id ?? null
        } else id = (await api.neighbor(currentId, direction, true)).id
        if (id === null) {
          notify('info', direction === 'next' ? 'No unreviewed document after this one.' : 'No unreviewed document before this one.')
          return
        }
        setCurrentId(id)
      } catch (e) {
        notify('error', `Cannot move to the ${direction} document: ${errorMessage(e)}`)
      }
    },
    [currentId, listMode],
  )

  // ---- models in the loop

  useEffect(() => {
    // The default model is copied into a workspace without a model in the background: it may
    // arrive after the first read.
    const off = onEvent('models:changed', ({ model }) => {
      void refreshModels()
      notify('success', `${model.name} is installed${model.active ? ' and active' : ''}: import abstracts and tag them with it, or train your own in Models.`)
    })
    void refreshModels()
    return off
  }, [])

  // Auto-improve works in main: when its background round ends the active model may be new and the
  // unreviewed documents re-tagged. The lists follow; the open document is redrawn only if it is
  // unreviewed (its suggestions were replaced) — one being reviewed keeps its own, marked outdated.
  useEffect(() => {
    let wasRunning = false
    return onEvent('learning:changed', (s) => {
      void refreshModels()
      if (wasRunning && !s.autoImprove.running) {
        setListVersion((v) => v + 1)
        void refreshInfo()
        const c = controllerRef.current
        if (c) {
          void api
            .getDocument(c.documentId)
            .then((d) => (d.status === 'unreviewed' && controllerRef.current === c ? c.reload() : undefined))
            .catch(() => undefined)
        }
      }
      wasRunning = s.autoImprove.running
    })
  }, [refreshInfo])

  // After any model job: lists, counts and the open document may have changed.
  useEffect(
    () =>
      onJobFinished((kind) => {
        if (kind === 'tag') {
          setListVersion((v) => v + 1)
          void refreshInfo()
        }
        if (kind !== 'compare') void refreshModels()
      }),
    [refreshInfo],
  )

  const tag = useCallback(
    async (scope: TagScope) => {
      if (!currentModel) {
        notify('warning', 'No active model yet. Train or import one in Models (Ctrl+2), then tag.')
        return
      }
      await controllerRef.current?.flush()
      let documentIds: number[] | undefined
      let label: string
      try {
        if (scope === 'document') {
          if (currentId === null) return
          documentIds = [currentId]
          label = `Tagging ${current?.externalId ?? 'this document'}`
        } else if (scope === 'selected') {
          documentIds = [...selected]
          label = `Tagging ${documentIds.length} selected document${documentIds.length === 1 ? '' : 's'}`
        } else if (scope === 'filtered') {
          documentIds = await filteredIds(filters)
          label = `Tagging ${documentIds.length} listed document${documentIds.length === 1 ? '' : 's'}`
        } else label = 'Tagging the workspace'
      } catch (e) {
        notify('error', `Cannot list the documents to tag: ${errorMessage(e)}`)
        return
      }
      if (documentIds && documentIds.length === 0) return
      const openId = controllerRef.current?.documentId ?? null
      const r = await runModelJob('tag', label, (jobId) => api.tag({ jobId, ...(documentIds ? { documentIds } : {}) }))
      // The open document shows its new suggestions (its undo history ends here: tagging replaced them).
      if (openId !== null && (!documentIds || documentIds.includes(openId)) && controllerRef.current?.documentId === openId) {
        await controllerRef.current.reload().catch(() => undefined)
      }
      if (!r) return
      if (r.cancelled) notify('warning', `Tagging cancelled after ${r.documents} document${r.documents === 1 ? '' : 's'}; their suggestions are kept.`)
      else {
        notify(
          'success',
          `Tagged ${r.documents} document${r.documents === 1 ? '' : 's'}: ${r.suggestions} suggestion${r.suggestions === 1 ? '' : 's'}` +
            `${r.dropped ? ` (${r.dropped} overlapping accepted annotations left out)` : ''}, ${r.msPerDocument.toFixed(0)} ms per document on ${r.engine}.`,
        )
      }
      if (scope === 'selected') setSelected(new Set())
    },
    [currentModel, currentId, current, selected, filters],
  )

  const tagUnavailable = !currentModel ? 'Train or import a model first (Models, Ctrl+2)' : runningJobLabel ? `${runningJobLabel} is running` : null

  const afterWorkspaceAccept = useCallback(() => {
    void controllerRef.current?.reload().catch(() => undefined)
    setListVersion((v) => v + 1)
    void refreshInfo()
  }, [refreshInfo])

  const setStatus = useCallback(
    async (status: ReviewStatus) => {
      // While the next document loads, `current` is still the previous one: never act on it.
      if (!current || current.id !== currentId) return
      try {
        // Edits still on their way are saved first, so "done" always covers them.
        await controllerRef.current?.flush()
        const summary = await api.setStatus(current.id, status)
        setCurrent((c) => (c && c.id === summary.id ? { ...c, status: summary.status } : c))
        refreshList()
        notify(
          'success',
          status === 'done'
            ? `Marked ${current.externalId} as done. Alt+↓ opens the next unreviewed document.`
            : `Reopened ${current.externalId} for review.`,
        )
      } catch (e) {
        notify('error', `Could not change the review status: ${errorMessage(e)}`)
      }
    },
    [current, currentId, refreshList],
  )

  const toggleDone = useCallback(() => {
    if (!current) return
    void setStatus(current.status === 'done' ? 'in_progress' : 'done')
  }, [current, setStatus])

  const toggleTags = useCallback(() => {
    setShowTags((v) => {
      localStorage.setItem('fastbioner:showTags', v ? '0' : '1')
      return !v
    })
  }, [])

  // Global shortcuts. Keys the editor handles itself are marked defaultPrevented by ProseMirror.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = document.activeElement
      const inEditor = !!target?.closest?.('.doc-text')
      const typing = isTypingTarget(target) && !inEditor
      const mod = e.ctrlKey || e.metaKey
      // These two work everywhere, the text included (ProseMirror marks Enter as handled, so the
      // check for defaultPrevented comes after them).
      if (document.querySelector('.modal')) {
        if (e.key === '?' && document.querySelector('.modal.help')) setHelpOpen(false)
        return
      }
      if (mod && !e.altKey && !e.shiftKey && /^[1-4]$/.test(e.key)) {
        e.preventDefault()
        setView(VIEWS[Number(e.key) - 1]!.view)
        return
      }
      if (view !== 'documents') {
        if (e.key === '?' && !typing && !mod && !e.altKey && !e.defaultPrevented) {
          e.preventDefault()
          setHelpOpen((v) => !v)
        }
        return
      }
      if (e.altKey && !mod && !e.shiftKey && (e.key === 'ArrowDown' || e.key === 'ArrowUp')) {
        e.preventDefault()
        void goNeighbor(e.key === 'ArrowDown' ? 'next' : 'previous')
        return
      }
      if (mod && !e.altKey && e.key === 'Enter') {
        if (typing && target?.tagName === 'TEXTAREA') return
        e.preventDefault()
        if (e.shiftKey) {
          if (current && current.status !== 'done') void setStatus('done').then(() => goNeighbor('next'))
          else void goNeighbor('next')
        } else toggleDone()
        return
      }
      if (e.defaultPrevented || typing || mod || e.altKey) return
      if (e.key === '?') {
        e.preventDefault()
        setHelpOpen((v) => !v)
      } else if (!inEditor && (e.key === 'j' || e.key === 'k')) {
        e.preventDefault()
        void goNeighbor(e.key === 'j' ? 'next' : 'previous')
      } else if (!inEditor && e.key === '/') {
        e.preventDefault()
        searchRef.current?.focus()
      } else if (!inEditor && e.key === 'e') {
        e.preventDefault()
        controllerRef.current?.focus()
      }
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [goNeighbor, toggleDone, setStatus, current, view])

  const legendTypes = useMemo(() => (legend.length ? legend : DEFAULT_TYPES), [legend])

  const exportCorpus = useCallback(async (format: 'pubtator' | 'conll' | 'bioc-json' | 'brat', label: string) => {
    try {
      await controllerRef.current?.flush()
      const { path } = await api.chooseExportPath(format)
      if (!path) return
      notify('info', `Exporting ${label}…`, 'export')
      const r = await api.exportCorpus({ path, format })
      notify('success', `Exported ${r.documents} documents and ${r.mentions} entities as ${label} to ${r.path}`, 'export')
    } catch (e) {
      notify('error', `Export failed: ${errorMessage(e)}`, 'export')
    }
  }, [])

  return (
    <div className="app">
      <Header
        info={info}
        job={importer.job}
        onImport={() => void importer.importFiles()}
        onPaste={() => setPasteOpen(true)}
        onExport={exportCorpus}
        onCancelJob={importer.cancel}
        onHelp={() => setHelpOpen(true)}
        onSwitchWorkspace={(purpose) => void switchWorkspace(purpose)}
        onTypeMap={() => setTypeMapOpen(true)}
        onDeletedDocuments={() => setDeletedOpen(true)}
        view={view}
        onView={setView}
      />
      {/* Each view's tab panel sits in the page's one main landmark: a labelled panel outside every
          landmark is content axe's region rule (and a landmark reader) cannot reach. */}
      <main className="workspace-main" hidden={view !== 'documents'}>
        <div className="workspace" id="view-documents" role="tabpanel" aria-labelledby="tab-documents">
          <DocumentList
            filters={filters}
            onFilters={setFilters}
            version={listVersion}
            currentId={currentId}
            onOpen={openDocument}
            searchRef={searchRef}
            mode={listMode}
            onMode={setListMode}
            selected={selected}
            onSelected={setSelected}
            onTag={tagUnavailable ? null : (scope) => void tag(scope)}
            onDelete={deletion.request}
            onTotal={setFilteredTotal}
            onQueue={onQueue}
          />
          <section className="main" aria-label="Document">
            {importer.report && <ImportReport report={importer.report} onClose={importer.clearReport} />}
            {currentId !== null ? (
              <DocumentPane
                key={currentId}
                id={currentId}
                legend={legendTypes}
                legendRef={legendRef}
                showTags={showTags}
                onToggleTags={toggleTags}
                onTypeUsed={typeUsed}
                current={current}
                onPersisted={afterSave}
                onCurrent={setCurrent}
                onToggleDone={toggleDone}
                onNeighbor={goNeighbor}
                controllerRef={controllerRef}
                onMissing={() => setCurrentId(null)}
                onTag={tagUnavailable ? null : () => void tag('document')}
                tagHint={tagUnavailable ?? `Tag this document with ${currentModel?.name ?? 'the active model'}: its suggestions appear dashed`}
              />
            ) : (
              <EmptyState
                documentCount={info?.documentCount ?? 0}
                onImport={() => void importer.importFiles()}
                onPaste={() => setPasteOpen(true)}
                onNext={() => void goNeighbor('next')}
              />
            )}
          </section>
        </div>
      </main>
      {view === 'models' && (
        <ViewHost view="models">
          <ModelsView
            selectedCount={selected.size}
            filteredCount={filteredTotal}
            currentDocument={current?.externalId ?? null}
            onTag={(scope) => void tag(scope)}
            onWorkspaceChanged={afterWorkspaceAccept}
            onOpenRetrain={() => setView('retrain')}
          />
        </ViewHost>
      )}
      {view === 'retrain' && (
        <ViewHost view="retrain">
          <RetrainView />
        </ViewHost>
      )}
      {view === 'compression' && (
        <ViewHost view="compression">
          <CompressionView />
        </ViewHost>
      )}
      {deletion.dialog}
      {helpOpen && <HelpPanel onClose={() => setHelpOpen(false)} legend={legendTypes} />}
      {typeMapOpen && <TypeMapDialog onClose={() => setTypeMapOpen(false)} />}
      {deletedOpen && (
        <DeletedDocumentsDialog
          onClose={() => setDeletedOpen(false)}
          onRestored={(ids) => {
            void documentsChanged()
            if (currentId === null && ids.length) setCurrentId(ids[0]!)
          }}
        />
      )}
      {pasteOpen && (
        <PasteDialog
          onClose={() => setPasteOpen(false)}
          onSubmit={async (name, content, format) => {
            setPasteOpen(false)
            await importer.importText(name, content, format)
          }}
        />
      )}
    </div>
  )
}

/** A view beside the documents: the page's one main landmark while it shows, holding the tab panel of its header tab. */
function ViewHost({ view, children }: { view: View; children: ReactNode }) {
  return (
    <main className="view-host">
      <div id={`view-${view}`} role="tabpanel" aria-labelledby={`tab-${view}`}>
        {children}
      </div>
    </main>
  )
}

function EmptyState(props: { documentCount: number; onImport: () => void; onPaste: () => void; onNext: () => void }) {
  if (props.documentCount === 0) {
    return (
      <div className="empty-state">
        <h2>Your workspace is empty</h2>
        <p>
          Import abstracts to review: PubTator, CoNLL (IOB2), BioC XML or JSON, brat, PubMed XML or plain text. Everything stays on
          this computer.
        </p>
        <div className="row">
          <button type="button" className="btn primary" onClick={props.onImport}>
            Import files…
          </button>
          <button type="button" className="btn" onClick={props.onPaste}>
            Paste text…
          </button>
        </div>
      </div>
    )
  }
  return (
    <div className="empty-state">
      <h2>No document open</h2>
      <p>Pick a document from the list, or start with the first one that has not been reviewed.</p>
      <div className="row">
        <button type="button" className="btn primary" onClick={props.onNext}>
          Open first unreviewed <kbd>Alt</kbd>+<kbd>↓</kbd>
        </button>
      </div>
      <p className="muted">
        Press <kbd>?</kbd> for keyboard shortcuts.
      </p>
    </div>
  )
}

/** Ids of every document the list's filters match (tag "all in the list"). */
async function filteredIds(filters: ListFilters): Promise<number[]> {
  const out: number[] = []
  const base = {
    ...(filters.query.trim() ? { query: filters.query.trim() } : {}),
    ...(filters.status ? { status: filters.status } : {}),
    ...(filters.type ? { type: filters.type } : {}),
  }
  for (let offset = 0; ; offset += 5000) {
    const page = await api.listDocuments({ ...base, offset, limit: 5000 })
    for (const d of page.documents) out.push(d.id)
    if (page.documents.length < 5000 || out.length >= page.total) return out
  }
}
