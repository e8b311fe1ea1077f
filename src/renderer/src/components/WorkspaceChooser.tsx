// Shown instead of the workbench when no workspace is open: the start-up workspace could not be
// opened (another FastBioNER has it open, the file is damaged or from a newer version, its folder
// is missing). Says why, and offers another workspace, a new one, trying again, or — for a lock
// held on another computer, which cannot be checked from here — taking the workspace over.
import { useState } from 'react'
import type { WorkspaceProblem } from '@shared/ipc'
import { api, errorMessage } from '../api'

const TITLES: Record<WorkspaceProblem['reason'], string> = {
  locked: 'This workspace is open in another FastBioNER',
  corrupt: 'This workspace file is damaged',
  newer_schema: 'This workspace was saved by a newer FastBioNER',
  missing: 'This workspace cannot be found',
  other: 'This workspace cannot be opened',
}

export function WorkspaceChooser({ problem, onOpened }: { problem: WorkspaceProblem; onOpened: () => void }) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)

  const attempt = async (open: () => Promise<unknown>) => {
    setBusy(true)
    setError(null)
    try {
      if ((await open()) !== null) onOpened()
    } catch (e) {
      setError(errorMessage(e))
    } finally {
      setBusy(false)
    }
  }
  const choose = (purpose: 'open' | 'create') =>
    attempt(async () => {
      const { path } = await api.chooseWorkspace(purpose)
      return path ? api.openWorkspace(path, purpose === 'create') : null
    })

  return (
    <main className="empty-state workspace-chooser" aria-labelledby="workspace-chooser-title">
      <h1 id="workspace-chooser-title">{TITLES[problem.reason]}</h1>
      <p className="workspace-problem" role="alert">
        {problem.message}
      </p>
      {error && (
        <p className="workspace-problem" role="alert">
          {error}
        </p>
      )}
      <div className="row">
        <button type="button" className="btn primary" disabled={busy} onClick={() => void choose('open')}>
          Open another workspace…
        </button>
        <button type="button" className="btn" disabled={busy} onClick={() => void choose('create')}>
          New workspace…
        </button>
        <button type="button" className="btn" disabled={busy} onClick={() => void attempt(() => api.reopenWorkspace(false))}>
          Try again
        </button>
        {problem.canTakeOver && (
          <button type="button" className="btn" disabled={busy} onClick={() => void attempt(() => api.reopenWorkspace(true))}>
            Take over
          </button>
        )}
      </div>
      <p className="muted">Nothing was changed in {problem.path}.</p>
    </main>
  )
}
