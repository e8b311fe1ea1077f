import { useEffect, useState } from 'react'
import { api, errorMessage } from '../api'
import { notify } from '../toasts'
import { Modal } from './Modal'

/** Edits the workspace's entity-type renaming for imports (import:getTypeMap / import:setTypeMap). */
export function TypeMapDialog({ onClose }: { onClose: () => void }) {
  const [rules, setRules] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [saving, setSaving] = useState(false)
  useEffect(() => {
    api.getImportTypeMap().then(
      (r) => setRules(r.rules.split(';').join('\n')), // one rule a line, as typed
      (e) => setError(errorMessage(e)),
    )
  }, [])
  return (
    <Modal title="Rename entity types on import" onClose={onClose} className="type-map" testId="type-map-dialog">
      <form
        className="form"
        onSubmit={async (e) => {
          e.preventDefault()
          if (rules === null) return
          setSaving(true)
          try {
            const r = await api.setImportTypeMap(rules)
            const n = Object.keys(r.map).length
            notify('success', n ? `Imports will rename ${n} entity type${n === 1 ? '' : 's'}.` : 'Imports keep entity types as they are.')
            onClose()
          } catch (err) {
            setError(errorMessage(err))
          } finally {
            setSaving(false)
          }
        }}
      >
        <p className="muted">
          Corpora name the same type differently: NCBI-disease has four disease subtypes, BC2GM says GENE. Rules rename types
          as documents are imported into this workspace; documents already here keep theirs. One rule per line (or separated
          by <code>;</code>): the types to rename, separated by commas, then <code>=</code> and the new name.
        </p>
        <div className="form-row">
          <label htmlFor="type-map-rules">Rules</label>
          <textarea
            id="type-map-rules"
            rows={5}
            value={rules ?? ''}
            disabled={rules === null}
            onChange={(e) => {
              setRules(e.target.value)
              setError(null)
            }}
            placeholder={'SpecificDisease,DiseaseClass,Modifier,CompositeMention=Disease\nGENE=Gene'}
            spellCheck={false}
            aria-invalid={error !== null}
            aria-describedby={error ? 'type-map-error' : undefined}
          />
        </div>
        {error && (
          <p className="form-error" id="type-map-error" role="alert">
            {error}
          </p>
        )}
        <div className="form-actions">
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="btn primary" disabled={rules === null || saving}>
            Save
          </button>
        </div>
      </form>
    </Modal>
  )
}
