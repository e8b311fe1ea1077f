import { StrictMode, useState } from 'react'
import { createRoot } from 'react-dom/client'
import 'prosemirror-view/style/prosemirror.css'
import './styles/app.css'
import './styles/editor.css'
import './styles/models.css'
import { App } from './App'

/** A new App per workspace: every list, filter and open document belongs to the workspace it came from. */
function Root() {
  const [generation, setGeneration] = useState(0)
  return <App key={generation} onWorkspaceSwitched={() => setGeneration((g) => g + 1)} />
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Root />
  </StrictMode>,
)
