import { useEffect, useRef, useState } from 'react'
import type { WorkspaceInfo } from '@shared/ipc'
import type { JobView } from '../useImport'
import { dismiss, useToasts } from '../toasts'
import { useModelJob } from '../models/store'
import { JobProgressBar } from '../models/JobViews'

export type View = 'documents' | 'models' | 'retrain' | 'compression'

export const VIEWS: Array<{ view: View; label: string; key: string }> = [
  { view: 'documents', label: 'Documents', key: '1' },
  { view: 'models', label: 'Models', key: '2' },
  { view: 'retrain', label: 'Retrain', key: '3' },
  { view: 'compression', label: 'Compression', key: '4' },
]

export type ExportFormat = 'pubtator' | 'conll' | 'bioc-json' | 'brat'

export const EXPORT_FORMATS: Array<{ format: ExportFormat; label: string; hint: string }> = [
  { format: 'pubtator', label: 'PubTator', hint: 'title|abstract lines and tab-separated mentions' },
  { format: 'conll', label: 'CoNLL (IOB2)', hint: 'one token per line with B-/I-/O tags' },
  { format: 'bioc-json', label: 'BioC JSON', hint: 'passages and annotations as JSON' },
  { format: 'brat', label: 'brat', hint: 'a folder of .txt and .ann files' },
]

interface Props {
  info: WorkspaceInfo | null
  job: JobView | null
  onImport: () => void
  onPaste: () => void
  onExport: (format: ExportFormat, label: string) => void
  onCancelJob: () => void
  onHelp: () => void
  /** Opens ('open') or creates ('create') another workspace; disabled while a job runs. */
  onSwitchWorkspace: (purpose: 'open' | 'create') => void
  /** Opens the import type-renaming rules of this workspace. */
  onTypeMap: () => void
  /** Opens the list of deleted documents, to restore them. */
  onDeletedDocuments: () => void
  view: View
  onView: (v: View) => void
}

export function Header(props: Props) {
  const { info, job } = props
  const { job: modelJob } = useModelJob()
  return (
    <header className="app-header">
      <div className="brand">
        <span className="brand-mark" aria-hidden="true" />
        <div className="brand-text">
          <h1>FastBioNER Workbench</h1>
          <p className="workspace-path" title={info?.path ?? ''} data-testid="workspace-path">
            {info ? (
              <>
                <span className="label">Workspace</span> <bdi className="path">{info.path}</bdi>
                <span className="sep" aria-hidden="true">·</span>
                {info.documentCount} document{info.documentCount === 1 ? '' : 's'}
                <span className="sep" aria-hidden="true">·</span>
                {info.user}
              </>
            ) : (
              'Opening workspace…'
            )}
          </p>
        </div>
      </div>
      <ViewTabs view={props.view} onView={props.onView} />
      <div className="header-status" aria-live="polite">
        {job && <JobProgress job={job} onCancel={props.onCancelJob} />}
        {modelJob && !modelJob.finished && <JobProgressBar job={modelJob} compact testId="header-model-job" />}
      </div>
      <nav className="header-actions" aria-label="Workspace actions">
        <WorkspaceMenu onSwitch={props.onSwitchWorkspace} onTypeMap={props.onTypeMap} onDeleted={props.onDeletedDocuments} disabled={!!job || (!!modelJob && !modelJob.finished)} />
        <button type="button" className="btn primary" onClick={props.onImport} disabled={!!job}>
          Import…
        </button>
        <button type="button" className="btn" onClick={props.onPaste} disabled={!!job}>
          Paste text…
        </button>
        <ExportMenu onExport={props.onExport} disabled={!info || info.documentCount === 0} />
        <button type="button" className="btn icon" onClick={props.onHelp} aria-label="Keyboard shortcuts (?)" title="Keyboard shortcuts (?)">
          ?
        </button>
      </nav>
      <Toasts />
    </header>
  )
}

/** The views, as tabs: arrow keys move between them, Ctrl+1 … Ctrl+4 from anywhere. */
function ViewTabs({ view, onView }: { view: View; onView: (v: View) => void }) {
  const onKeyDown = (e: React.KeyboardEvent<HTMLDivElement>) => {
    if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight' && e.key !== 'Home' && e.key !== 'End') return
    e.preventDefault()
    const i = VIEWS.findIndex((v) => v.view === view)
    const n =
      e.key === 'Home' ? 0 : e.key === 'End' ? VIEWS.length - 1 : (i + (e.key === 'ArrowRight' ? 1 : -1) + VIEWS.length) % VIEWS.length
    onView(VIEWS[n]!.view)
    ;(e.currentTarget.querySelectorAll<HTMLButtonElement>('[role="tab"]')[n] ?? null)?.focus()
  }
  return (
    <div className="view-tabs" role="tablist" aria-label="Views" onKeyDown={onKeyDown}>
      {VIEWS.map((v) => (
        <button
          key={v.view}
          type="button"
          role="tab"
          id={`tab-${v.view}`}
          aria-selected={view === v.view}
          aria-controls={`view-${v.view}`}
          tabIndex={view === v.view ? 0 : -1}
          className={`view-tab${view === v.view ? ' is-on' : ''}`}
          onClick={() => onView(v.view)}
          title={`${v.label} (Ctrl+${v.key})`}
          data-view={v.view}
        >
          {v.label}
        </button>
      ))}
    </div>
  )
}

function JobProgress({ job, onCancel }: { job: JobView; onCancel: () => void }) {
  const pct = job.total > 0 ? Math.round((job.done / job.total) * 100) : null
  return (
    <div className="job" data-testid="import-progress">
      <div className="job-text">
        <span className="job-label">{job.message || `Importing ${job.label}…`}</span>
        {pct !== null && <span className="job-pct">{pct}%</span>}
      </div>
      <progress max={job.total || 1} value={job.total ? job.done : undefined} aria-label="Import progress" />
      <button type="button" className="btn small" onClick={onCancel} disabled={job.cancelling}>
        {job.cancelling ? 'Cancelling…' : 'Cancel'}
      </button>
    </div>
  )
}

interface MenuItem {
  key: string
  label: string
  hint: string
  /** data-* attributes of the item, for tests. */
  data?: Record<string, string>
  onSelect: () => void
}

/** A button that opens a menu: focus moves in, arrow keys move, Esc closes, a click outside closes. */
function MenuButton(props: { label: string; title: string; items: MenuItem[]; disabled: boolean; testId?: string }) {
  const [open, setOpen] = useState(false)
  const ref = useRef<HTMLDivElement | null>(null)
  const buttonRef = useRef<HTMLButtonElement | null>(null)

  useEffect(() => {
    if (!open) return
    const first = ref.current?.querySelector<HTMLButtonElement>('[role="menuitem"]')
    first?.focus()
    const onDown = (e: MouseEvent) => {
      if (!ref.current?.contains(e.target as Node)) setOpen(false)
    }
    window.addEventListener('mousedown', onDown)
    return () => window.removeEventListener('mousedown', onDown)
  }, [open])

  const onKeyDown = (e: React.KeyboardEvent) => {
    const items = [...(ref.current?.querySelectorAll<HTMLButtonElement>('[role="menuitem"]') ?? [])]
    const i = items.indexOf(document.activeElement as HTMLButtonElement)
    if (e.key === 'Escape') {
      e.preventDefault()
      e.stopPropagation()
      setOpen(false)
      buttonRef.current?.focus()
    } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault()
      const next = (i + (e.key === 'ArrowDown' ? 1 : -1) + items.length) % items.length
      items[next]?.focus()
    }
  }

  return (
    <div className="menu-anchor" ref={ref} onKeyDown={onKeyDown}>
      <button
        type="button"
        className="btn"
        ref={buttonRef}
        aria-haspopup="menu"
        aria-expanded={open}
        disabled={props.disabled}
        onClick={() => setOpen((v) => !v)}
        data-testid={props.testId}
      >
        {props.label} <span aria-hidden="true">▾</span>
      </button>
      {open && (
        <div className="menu" role="menu" aria-label={props.title}>
          <p className="menu-title">{props.title}</p>
          {props.items.map((item) => (
            <button
              type="button"
              role="menuitem"
              key={item.key}
              className="menu-item"
              {...Object.fromEntries(Object.entries(item.data ?? {}).map(([k, v]) => [`data-${k}`, v]))}
              onClick={() => {
                setOpen(false)
                buttonRef.current?.focus()
                item.onSelect()
              }}
            >
              <span className="menu-item-label">{item.label}</span>
              <span className="menu-item-hint">{item.hint}</span>
            </button>
          ))}
        </div>
      )}
    </div>
  )
}

function ExportMenu({ onExport, disabled }: { onExport: Props['onExport']; disabled: boolean }) {
  return (
    <MenuButton
      label="Export…"
      title="Export all documents as"
      disabled={disabled}
      items={EXPORT_FORMATS.map((f) => ({
        key: f.format,
        label: f.label,
        hint: f.hint,
        data: { format: f.format },
        onSelect: () => onExport(f.format, f.label),
      }))}
    />
  )
}

/** Open another workspace file or create a new one (the shell's own file dialogs choose the path). */
function WorkspaceMenu({
  onSwitch,
  onTypeMap,
  onDeleted,
  disabled,
}: {
  onSwitch: Props['onSwitchWorkspace']
  onTypeMap: () => void
  onDeleted: () => void
  disabled: boolean
}) {
  return (
    <MenuButton
      label="Workspace"
      title="Workspace"
      disabled={disabled}
      testId="workspace-menu"
      items={[
        { key: 'open', label: 'Open workspace…', hint: 'another .sqlite workspace file', data: { action: 'open-workspace' }, onSelect: () => onSwitch('open') },
        { key: 'create', label: 'New workspace…', hint: 'an empty workspace in a new file', data: { action: 'new-workspace' }, onSelect: () => onSwitch('create') },
        { key: 'type-map', label: 'Rename types on import…', hint: 'e.g. SpecificDisease → Disease, GENE → Gene', data: { action: 'type-map' }, onSelect: onTypeMap },
        { key: 'deleted', label: 'Deleted documents…', hint: 'restore documents deleted from this workspace', data: { action: 'deleted-documents' }, onSelect: onDeleted },
      ]}
    />
  )
}

function Toasts() {
  const toasts = useToasts()
  return (
    <div className="toasts" data-testid="toasts">
      {toasts.map((t) => (
        <div
          key={t.id}
          className={`toast toast-${t.kind}${t.action ? ' has-action' : ''}`}
          role={t.kind === 'error' || t.kind === 'warning' ? 'alert' : 'status'}
        >
          <span className="toast-icon" aria-hidden="true">
            {t.kind === 'error' ? '!' : t.kind === 'warning' ? '!' : t.kind === 'success' ? '✓' : 'i'}
          </span>
          <p className="toast-text">{t.text}</p>
          {t.action && (
            <button
              type="button"
              className="btn toast-action"
              onClick={() => {
                dismiss(t.id)
                t.action!.run()
              }}
              data-testid="toast-action"
            >
              {t.action.label}
            </button>
          )}
          <button type="button" className="toast-close" onClick={() => dismiss(t.id)} aria-label="Dismiss message">
            ×
          </button>
        </div>
      ))}
    </div>
  )
}
