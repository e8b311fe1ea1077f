import { useCallback, useEffect, useRef, useState } from 'react'
import type { ImportResult } from '@shared/ipc'
import type { CorpusFormat } from '@shared/domain'
import { api, errorMessage, isApiError, newJobId, onEvent } from './api'
import { notify } from './toasts'
import { basename } from './basename'

export interface JobView {
  jobId: string
  label: string
  done: number
  total: number
  message: string
  cancelling: boolean
}

export interface ImportReportView {
  title: string
  result: ImportResult
}

export function useImport(afterImport: () => Promise<void>) {
  const [job, setJob] = useState<JobView | null>(null)
  const [report, setReport] = useState<ImportReportView | null>(null)
  const jobRef = useRef<string | null>(null)

  useEffect(
    () =>
      onEvent('job:progress', (p) => {
        if (p.jobId !== jobRef.current) return
        setJob((j) => (j && j.jobId === p.jobId ? { ...j, done: p.done, total: p.total, message: p.message } : j))
      }),
    [],
  )

  const run = useCallback(
    async (label: string, start: (jobId: string) => Promise<ImportResult>) => {
      if (jobRef.current) {
        notify('warning', 'An import is already running; wait for it or cancel it first.')
        return
      }
      const jobId = newJobId()
      jobRef.current = jobId
      setReport(null)
      setJob({ jobId, label, done: 0, total: 0, message: `Reading ${label}…`, cancelling: false })
      try {
        const result = await start(jobId)
        const imported = result.files.reduce((n, f) => n + f.imported, 0)
        const failed = result.files.filter((f) => !f.ok)
        const duplicates = result.files.reduce((n, f) => n + f.duplicates.length, 0)
        const reimported = result.files.reduce((n, f) => n + f.reimported.length, 0)
        const conflicts = result.files.reduce((n, f) => n + f.conflicts.length, 0)
        const warnings = result.files.some((f) => f.issues.length > 0)
        const importedFrom = `Imported ${imported} document${imported === 1 ? '' : 's'} from ${label}`
        if (result.cancelled) notify('warning', `Import cancelled. ${imported} documents were imported before it stopped.`)
        else if (failed.length === 0 && conflicts > 0) {
          notify(
            'warning',
            `${importedFrom}; ${conflicts} not imported: ` +
              `${conflicts === 1 ? 'its id belongs' : 'their ids belong'} to ${conflicts === 1 ? 'a document' : 'documents'} with another text (see the report).`,
          )
        } else if (failed.length === 0) {
          notify(
            'success',
            importedFrom +
              (duplicates ? ` (${duplicates} already in the workspace ${duplicates === 1 ? 'was' : 'were'} skipped)` : '') +
              (reimported ? `; ${reimported} deleted earlier came back as ${reimported === 1 ? 'a fresh document' : 'fresh documents'}` : '') +
              '.',
          )
        }
        if (failed.length || warnings || duplicates || conflicts || reimported || result.cancelled) setReport({ title: label, result })
        if (imported > 0) await afterImport()
      } catch (e) {
        // A corpus error for the whole request still names file and line.
        if (isApiError(e) && e.issues.length) {
          setReport({
            title: label,
            result: { cancelled: false, files: [{ file: e.issues[0]!.file, ok: false, imported: 0, duplicates: [], conflicts: [], reimported: [], issues: e.issues }] },
          })
        } else notify('error', `Import failed: ${errorMessage(e)}`)
      } finally {
        jobRef.current = null
        setJob(null)
      }
    },
    [afterImport],
  )

  const importFiles = useCallback(async () => {
    let paths: string[]
    try {
      paths = (await api.chooseCorpusFiles()).paths
    } catch (e) {
      notify('error', `Cannot open the file chooser: ${errorMessage(e)}`)
      return
    }
    if (paths.length === 0) return
    const label = paths.length === 1 ? basename(paths[0]!) : `${paths.length} files`
    await run(label, (jobId) => api.importFiles({ jobId, paths }))
  }, [run])

  const importText = useCallback(
    async (name: string, content: string, format: CorpusFormat | undefined) => {
      await run(name, (jobId) => api.importText({ jobId, name, content, ...(format ? { format } : {}) }))
    },
    [run],
  )

  const cancel = useCallback(async () => {
    const jobId = jobRef.current
    if (!jobId) return
    setJob((j) => (j ? { ...j, cancelling: true, message: 'Cancelling…' } : j))
    try {
      const { cancelled } = await api.cancelJob(jobId)
      if (!cancelled) notify('info', 'The import had already finished; nothing to cancel.')
    } catch (e) {
      notify('error', `Cannot cancel the import: ${errorMessage(e)}`)
    }
  }, [])

  return { job, report, importFiles, importText, cancel, clearReport: () => setReport(null) }
}
