import { StrictMode, useEffect, useState } from 'react'
import type { WorkspaceProblem } from '@shared/ipc'
import { createRoot } from 'react-dom/client'
import 'prosemirror-view/style/prosemirror.css'
import './styles/app.css'
import './styles/editor.css'
import './styles/models.css'
import { App } from './App'
import { api } from './api'
import { WorkspaceChooser } from './components/WorkspaceChooser'

/**
 * A new App per workspace: every list, filter and open document belongs to the workspace it came
 * from. When no workspace could be opened at start-up, the workspace chooser says why instead.
 */
function Root() {
  const [generation, setGeneration] = useState(0)
  const [problem, setProblem] = useState<WorkspaceProblem | null | undefined>(undefined)
  useEffect(() => {
    let alive = true
    api
      .workspaceStatus()
      .then((s) => alive && setProblem(s.problem))
      // An older shell without workspace:status: the App reports what it cannot read.
      .catch(() => alive && setProblem(null))
    return () => {
      alive = false
    }
  }, [generation])
  if (problem === undefined) return null
  const next = () => setGeneration((g) => g + 1)
  if (problem) return <WorkspaceChooser key={generation} problem={problem} onOpened={next} />
  return <App key={generation} onWorkspaceSwitched={next} />
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Root />
  </StrictMode>,
)
