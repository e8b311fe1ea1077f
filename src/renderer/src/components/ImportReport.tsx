import { useEffect, useRef } from 'react'
import type { ImportReportView } from '../useImport'
import { basename } from '../basename'

/** What an import did, file by file; problems name the file, the line and what is wrong. */
export function ImportReport({ report, onClose }: { report: ImportReportView; onClose: () => void }) {
  const ref = useRef<HTMLDivElement | null>(null)
  const failed = report.result.files.filter((f) => !f.ok)
  useEffect(() => {
    ref.current?.focus()
  }, [report])
  return (
    <div
      ref={ref}
      tabIndex={-1}
      className={`import-report ${failed.length ? 'has-errors' : ''}`}
      role={failed.length ? 'alert' : 'status'}
      data-testid="import-report"
    >
      <div className="import-report-head">
        <h2>
          {report.result.cancelled
            ? 'Import cancelled'
            : failed.length
              ? failed.length === report.result.files.length
                ? `Nothing was imported from ${report.title}`
                : `Some files could not be imported`
              : `Imported ${report.title} with notes`}
        </h2>
        <button type="button" className="icon-close" onClick={onClose} aria-label="Dismiss import report">
          ×
        </button>
      </div>
      {report.result.files.map((f) => (
        <div key={f.file} className="import-file">
          <p className="import-file-name">
            <strong title={f.file}>{basename(f.file)}</strong>{' '}
            {f.ok ? (
              <span className="ok">
                {f.imported} document{f.imported === 1 ? '' : 's'} imported
              </span>
            ) : (
              <span className="bad">not imported — the file is unchanged in your workspace</span>
            )}
          </p>
          {f.duplicates.length > 0 && (
            <p className="muted">
              {f.duplicates.length} already in the workspace, skipped: {f.duplicates.slice(0, 8).join(', ')}
              {f.duplicates.length > 8 ? ', …' : ''}
            </p>
          )}
          {f.conflicts.length > 0 && (
            <p className="import-conflicts" data-testid="import-conflicts">
              {f.conflicts.length} not imported: the workspace{f.conflicts.length === 1 ? ' has a document' : ' has documents'} with{' '}
              {f.conflicts.length === 1 ? 'this id' : 'these ids'} but another text, which {f.conflicts.length === 1 ? 'stays' : 'stay'} as{' '}
              {f.conflicts.length === 1 ? 'it is' : 'they are'} (rename the file's {f.conflicts.length === 1 ? 'id' : 'ids'}, or delete the workspace's{' '}
              {f.conflicts.length === 1 ? 'document' : 'documents'} first, to import {f.conflicts.length === 1 ? 'it' : 'them'}): {f.conflicts.slice(0, 8).join(', ')}
              {f.conflicts.length > 8 ? ', …' : ''}
            </p>
          )}
          {f.reimported.length > 0 && (
            <p className="muted" data-testid="import-reimported">
              {f.reimported.length} had been deleted from the workspace and {f.reimported.length === 1 ? 'was' : 'were'} imported afresh, as
              this file has {f.reimported.length === 1 ? 'it' : 'them'} (the deleted {f.reimported.length === 1 ? 'copy stays' : 'copies stay'}{' '}
              deleted): {f.reimported.slice(0, 8).join(', ')}
              {f.reimported.length > 8 ? ', …' : ''}
            </p>
          )}
          {f.issues.length > 0 && (
            <ul className="issues">
              {f.issues.map((i, n) => (
                <li key={n} className={`issue issue-${i.severity}`} data-testid="import-issue">
                  <span className="issue-sev">{i.severity === 'error' ? 'Error' : 'Warning'}</span>
                  <span className="issue-where">
                    {basename(i.file)}
                    {i.line !== undefined ? `, line ${i.line}` : ''}
                  </span>
                  <span className="issue-msg">{i.message}</span>
                </li>
              ))}
            </ul>
          )}
        </div>
      ))}
    </div>
  )
}
