// "Models on this computer": BERT-family models already in the Hugging Face cache (downloaded by
// transformers, huggingface_hub or "Get a model from Hugging Face…"), read offline, each imported
// into the workspace in one click.
import { useEffect, useState } from 'react'
import type { CachedModelInfo } from '@shared/ipc'
import { call, errorMessage } from '../api'
import { notify } from '../toasts'
import { DataTable, type ColumnHead } from '../components/DataTable'
import { formatBytes, refreshModels } from './store'
import { useHubDownload } from './GetModelDialog'

const COLUMNS: ColumnHead[] = [['Repository'], ['Revision'], ['Layers × width', 'num'], ['Size', 'num'], ['Entity head'], [<span className="visually-hidden">Actions</span>]]

export function CachedModels({ busy }: { busy: boolean }) {
  const [models, setModels] = useState<CachedModelInfo[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [importing, setImporting] = useState<string | null>(null)
  const download = useHubDownload()

  const load = async () => {
    try {
      setModels(await call('models:cached', {}))
      setError(null)
    } catch (e) {
      setError(errorMessage(e))
    }
  }
  // Again after a download ends: it put a model in the cache.
  useEffect(() => {
    void load()
  }, [download?.state])

  const importOne = async (m: CachedModelInfo) => {
    setImporting(m.repoId)
    try {
      const r = await call('models:importCached', { repoId: m.repoId })
      await refreshModels()
      const notes = r.notes ?? []
      notify('success', `Imported ${r.name} from the Hugging Face cache (${r.layers} layers × ${r.hidden}).${notes.length ? ` ${notes.join(' ')}` : ''}`)
    } catch (e) {
      notify('error', `Could not import ${m.repoId}: ${errorMessage(e)}`)
    } finally {
      setImporting(null)
    }
  }

  return (
    <section className="card" aria-labelledby="cached-title" data-testid="cached-models">
      <div className="card-head">
        <h3 id="cached-title">Models on this computer</h3>
        <button type="button" className="btn small" onClick={() => void load()} data-testid="cached-refresh">
          Look again
        </button>
      </div>
      <p className="card-text">
        BERT models already in the Hugging Face cache (from <em>transformers</em>, <em>huggingface_hub</em> or a download here), found without the
        network. Importing copies one into this workspace; one without an entity head gets a new head for this workspace's entity types.
      </p>
      {error && <p className="form-error">Cannot read the Hugging Face cache: {error}</p>}
      {models && models.length === 0 && <p className="muted">No BERT model in the Hugging Face cache.</p>}
      {models && models.length > 0 && (
        <DataTable name="cached-table" testId="cached-table" columns={COLUMNS}>
          {models.map((m) => (
            <tr key={m.repoId} data-repo-id={m.repoId}>
              <td>
                <strong>{m.repoId}</strong>
              </td>
              <td>
                <code title={m.dir}>{m.revision.slice(0, 10)}</code>
              </td>
              <td className="num">
                {m.layers} × {m.hidden}
              </td>
              <td className="num">{formatBytes(m.bytes)}</td>
              <td>{m.tokenClassifier ? 'yes: tags as it is' : 'no: fine-tune it'}</td>
              <td>
                <button
                  type="button"
                  className="btn small"
                  disabled={busy || importing !== null}
                  onClick={() => void importOne(m)}
                  aria-label={`Import ${m.repoId}`}
                  data-action="import-cached"
                >
                  {importing === m.repoId ? 'Importing…' : 'Import'}
                </button>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  )
}
