// The document's model suggestions at a glance: how many, "accept all ≥ threshold" (one undoable
// step), and moving between them. Drawn from the controller's snapshot only.
import type { EditorController, UiSnapshot } from '../editor/controller'
import { notify } from '../toasts'
import { ThresholdSlider, useStoredThreshold } from './ThresholdSlider'
import { confidenceLabel } from '../editor/schema'
import type { SuggestionVersion } from './suggestion-version'

interface Props {
  controller: EditorController
  snap: UiSnapshot
  /** Whether the suggestions are the active model's (suggestion-version.ts). */
  version: SuggestionVersion
  /** Tags the document again with the active model; null while that cannot run (the reason in refreshHint). */
  onRefresh: (() => void) | null
  refreshHint: string
}

export function SuggestionBar({ controller, snap, version, onRefresh, refreshHint }: Props) {
  const [threshold, setThreshold] = useStoredThreshold()
  const above = snap.confidences.filter((c) => c >= threshold - 1e-9).length
  const lowest = snap.confidences[snap.confidences.length - 1]
  const highest = snap.confidences[0]
  const at = snap.active ? controller.entityInfo(snap.active.key) : null
  const atSuggestion = at && at.attrs.state === 'suggested' ? at : null
  return (
    <>
      {version.state === 'outdated' && (
        <p className="suggestions-outdated" data-testid="suggestions-outdated">
          <strong>Outdated:</strong> these suggestions came from {version.fromName}; the active model is {version.activeName}.{' '}
          <button type="button" className="btn small" onClick={() => onRefresh?.()} disabled={!onRefresh} title={refreshHint} data-testid="refresh-suggestions">
            Refresh with {version.activeName}
          </button>
        </p>
      )}
      <div
        className={`suggestion-bar${version.state === 'outdated' ? ' is-outdated' : ''}`}
        role="group"
        aria-label="Model suggestions"
        data-testid="suggestion-bar"
        data-count={snap.suggestions}
        data-version={version.state}
      >
        <span className="suggestion-count">
          <strong className="suggestion-sample" data-testid="suggestion-count" title="Suggestions are drawn with a dashed outline">
            {snap.suggestions}
          </strong>
          suggestion{snap.suggestions === 1 ? '' : 's'}
          {highest !== undefined && lowest !== undefined && (
            <span className="muted" title="Lowest and highest model confidence">
              {' '}
              · model {lowest === highest ? lowest.toFixed(2) : `${lowest.toFixed(2)}–${highest.toFixed(2)}`}
            </span>
          )}
          {snap.ruleSuggestions > 0 && (
            <span
              className="muted"
              data-testid="rule-suggestion-count"
              title="Copied by a document rule from a mention the model tagged, with that mention's confidence: open one to see which"
            >
              {' '}
              · {snap.ruleSuggestions} by document rules
            </span>
          )}
        </span>
        <span className="threshold-row compact">
          <ThresholdSlider label="Accept all ≥" value={threshold} onChange={setThreshold} testId="threshold" />
          <button
            type="button"
            className="btn small primary"
            disabled={above === 0}
            onClick={() => {
              const n = controller.acceptAbove(threshold)
              notify('success', `Accepted ${n} suggestion${n === 1 ? '' : 's'} with confidence ≥ ${threshold.toFixed(2)}. Ctrl+Z undoes it.`)
              controller.focus()
            }}
            data-testid="accept-above"
          >
            Accept {above}
          </button>
        </span>
        <span className="suggestion-nav">
          <button
            type="button"
            className="btn small"
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => {
              controller.gotoSuggestion('previous')
              controller.focus()
            }}
            title="Previous suggestion (p)"
          >
            {/* The name includes the visible key (axe label-content-name-mismatch): "Previous suggestion p". */}
            <span aria-hidden="true">‹</span> <span className="visually-hidden">Previous suggestion</span> <kbd>p</kbd>
          </button>
          <button
            type="button"
            className="btn small"
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => {
              controller.gotoSuggestion('next')
              controller.focus()
            }}
            title="Next suggestion (n)"
          >
            <span className="visually-hidden">Next suggestion</span> <kbd>n</kbd> <span aria-hidden="true">›</span>
          </button>
        </span>
        <span className={`suggestion-at${atSuggestion ? ' is-on' : ''}`} data-testid="suggestion-at">
          {atSuggestion ? (
            <>
              <strong>
                {atSuggestion.attrs.type} · {confidenceLabel(atSuggestion.attrs.confidence)}
              </strong>{' '}
              <kbd>a</kbd> accept · <kbd>r</kbd> reject
            </>
          ) : (
            <span className="muted">
              <kbd>n</kbd> goes to the next suggestion
            </span>
          )}
        </span>
      </div>
    </>
  )
}
