// Compression: distil a teacher into smaller students (FastBioNER's dynamic-weight KD or a
// baseline), and compare models side by side — accuracy, size, speed, and how the reductions
// measured here stand against FastBioNER's published ones. The two tabs are DistilPanel and
// ComparePanel.
import { useEffect, useState } from 'react'
import { ComparePanel } from './ComparePanel'
import { DistilPanel } from './DistilPanel'
import { refreshModels } from './store'

export function CompressionView({ initialTab = 'distil' }: { initialTab?: 'distil' | 'compare' }) {
  const [tab, setTab] = useState<'distil' | 'compare'>(initialTab)
  const [compareIds, setCompareIds] = useState<number[] | null>(null)
  useEffect(() => {
    void refreshModels()
  }, [])
  return (
    <div className="view compression-view" data-testid="compression-view">
      <div className="view-inner wide">
        <header className="view-head">
          <div>
            <h2>Compression</h2>
            <p className="muted">Distil a large model into smaller, faster students, then measure what each one keeps and gains.</p>
          </div>
          <div className="segmented" role="tablist" aria-label="Compression">
            <button type="button" role="tab" aria-selected={tab === 'distil'} className={tab === 'distil' ? 'is-on' : ''} onClick={() => setTab('distil')} data-testid="tab-distil">
              Distil
            </button>
            <button type="button" role="tab" aria-selected={tab === 'compare'} className={tab === 'compare' ? 'is-on' : ''} onClick={() => setTab('compare')} data-testid="tab-compare">
              Compare models
            </button>
          </div>
        </header>
        {tab === 'distil' ? (
          <DistilPanel
            onCompare={(ids) => {
              setCompareIds(ids)
              setTab('compare')
            }}
          />
        ) : (
          <ComparePanel preset={compareIds} />
        )}
      </div>
    </div>
  )
}
