// The one "accept suggestions with confidence at least …" slider, used by the document's
// SuggestionBar and the Models view's workspace-wide accept. Both share one remembered value.
import { useId, useState } from 'react'

const THRESHOLD_KEY = 'fastbioner:acceptThreshold'
/** Below 0.5 a model suggestion is more likely wrong than right; accepting in bulk makes no sense there. */
const MIN = 0.5
const DEFAULT = 0.9

export function storedThreshold(): number {
  const v = Number(localStorage.getItem(THRESHOLD_KEY))
  return Number.isFinite(v) && v >= MIN && v <= 1 ? v : DEFAULT
}

export function storeThreshold(v: number): void {
  localStorage.setItem(THRESHOLD_KEY, String(v))
}

/** The threshold, starting from the remembered one; setting it remembers it. */
export function useStoredThreshold(): [number, (v: number) => void] {
  const [threshold, setThreshold] = useState(storedThreshold)
  return [
    threshold,
    (v: number) => {
      setThreshold(v)
      storeThreshold(v)
    },
  ]
}

/** Label, range input and value; the caller lays them out (a `.threshold-row`). */
export function ThresholdSlider(props: { label: string; value: number; onChange: (v: number) => void; testId?: string }) {
  const id = useId()
  return (
    <>
      <label htmlFor={id}>{props.label}</label>
      <input
        id={id}
        type="range"
        min={MIN}
        max={1}
        step={0.01}
        value={props.value}
        onChange={(e) => props.onChange(Number(e.target.value))}
        data-testid={props.testId}
        aria-valuetext={props.value.toFixed(2)}
      />
      <output htmlFor={id} className="threshold-value">
        {props.value.toFixed(2)}
      </output>
    </>
  )
}
