import { useState } from 'react'
import type { CorpusFormat } from '@shared/domain'
import { Modal } from './Modal'

interface Props {
  onClose: () => void
  onSubmit: (name: string, content: string, format: CorpusFormat | undefined) => void | Promise<void>
}

const FORMATS: Array<{ value: CorpusFormat | ''; label: string }> = [
  { value: '', label: 'Detect automatically' },
  { value: 'text', label: 'Plain text (one document)' },
  { value: 'pubtator', label: 'PubTator' },
  { value: 'conll', label: 'CoNLL (IOB2)' },
  { value: 'bioc-json', label: 'BioC JSON' },
  { value: 'bioc-xml', label: 'BioC XML' },
  { value: 'pubmed-xml', label: 'PubMed XML' },
]

/** A name that does not collide with an earlier paste (the name becomes the document id). */
function defaultName(): string {
  const d = new Date()
  const p = (n: number) => String(n).padStart(2, '0')
  return `pasted-${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`
}

export function PasteDialog({ onClose, onSubmit }: Props) {
  const [name, setName] = useState(defaultName)
  const [format, setFormat] = useState<CorpusFormat | ''>('')
  const [content, setContent] = useState('')
  return (
    <Modal title="Paste text" onClose={onClose} className="paste" testId="paste-dialog">
      <form
        className="form"
        onSubmit={(e) => {
          e.preventDefault()
          if (content.trim()) void onSubmit(name.trim() || defaultName(), content, format || undefined)
        }}
      >
        <div className="form-row">
          <label htmlFor="paste-name">Name (becomes the document id for plain text)</label>
          <input id="paste-name" value={name} maxLength={500} onChange={(e) => setName(e.target.value)} />
        </div>
        <div className="form-row">
          <label htmlFor="paste-format">Format</label>
          <select id="paste-format" value={format} onChange={(e) => setFormat(e.target.value as CorpusFormat | '')}>
            {FORMATS.map((f) => (
              <option key={f.value} value={f.value}>
                {f.label}
              </option>
            ))}
          </select>
        </div>
        <div className="form-row">
          <label htmlFor="paste-content">Text</label>
          <textarea
            id="paste-content"
            autoFocus
            rows={12}
            value={content}
            onChange={(e) => setContent(e.target.value)}
            placeholder="Paste an abstract, or a PubTator / CoNLL / BioC document…"
            spellCheck={false}
          />
        </div>
        <div className="form-actions">
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="btn primary" disabled={!content.trim()}>
            Import
          </button>
        </div>
      </form>
    </Modal>
  )
}
