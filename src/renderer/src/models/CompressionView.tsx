// Compression: distil a teacher into smaller students (FastBioNER's dynamic-weight KD or a
// baseline), and compare models side by side — accuracy, size, speed, and how the reductions
// measured here stand against FastBioNER's published ones. The two tabs are DistilPanel and
// ComparePanel.
import { useEffect, useState } from 'react'
import { ComparePanel } from './ComparePanel'
import { DistilPanel } from './DistilPanel'
import { refreshModels } from './store'
import { ViewFrame } from './ViewFrame'

export function CompressionView({ initialTab = 'distil' }: { initialTab?: 'distil' | 'compare' }) {
  const [tab, setTab] = useState<'distil' | 'compare'>(initialTab)
  const [compareIds, setCompareIds] = useState<number[] | null>(null)
  useEffect(() => {
    void refreshModels()
  }, [])
  return (
    <ViewFrame
      name="compression-view"
      title="Compression"
      intro="Distil a large model into smaller, faster students, then measure what each one keeps and gains."
      wide
      aside={
        <div className="segmented" role="tablist" aria-label="Compression">
          <button type="button" role="tab" aria-selected={tab === 'distil'} className={tab === 'distil' ? 'is-on' : ''} onClick={() => setTab('distil')} data-testid="tab-distil">
            Distil
          </button>
          <button type="button" role="tab" aria-selected={tab === 'compare'} className={tab === 'compare' ? 'is-on' : ''} onClick={() => setTab('compare')} data-testid="tab-compare">
            Compare models
          </button>
        </div>
      }
    >
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
    </ViewFrame>
  )
}
