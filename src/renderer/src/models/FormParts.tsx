// Pieces the model forms share (train, adapt, retrain).
import { useEffect, useId, useState, type ReactNode } from 'react'

/**
 * A number of epochs (or passes), 1 to `max`. The field shows what is typed, which may be empty or
 * out of range on the way to a number (clamping each keystroke turned Backspace, then "5" into
 * "15"); the form gets each whole number in range at once, and the clamped value on leaving it.
 */
export function EpochsField({ label = 'Epochs', max, value, onChange, testId }: { label?: string; max: number; value: number; onChange: (epochs: number) => void; testId?: string }) {
  const id = useId()
  const [text, setText] = useState(String(value))
  useEffect(() => {
    setText((shown) => (Number(shown) === value ? shown : String(value)))
  }, [value])
  const inRange = (n: number) => Number.isInteger(n) && n >= 1 && n <= max
  return (
    <div className="form-row">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="number"
        min={1}
        max={max}
        value={text}
        onChange={(e) => {
          setText(e.target.value)
          const n = Number(e.target.value)
          if (e.target.value !== '' && inRange(n)) onChange(n)
        }}
        onBlur={() => {
          const n = Math.max(1, Math.min(max, Math.round(Number(text)) || 1))
          setText(String(n))
          onChange(n)
        }}
        data-testid={testId}
      />
    </div>
  )
}

/** The form's buttons: Cancel when the form can be closed, and the submit button (`children`). */
export function FormActions({ onCancel, disabled, testId, children }: { onCancel?: () => void; disabled: boolean; testId: string; children: ReactNode }) {
  return (
    <div className="form-actions">
      {onCancel && (
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
      )}
      <button type="submit" className="btn primary" disabled={disabled} data-testid={testId}>
        {children}
      </button>
    </div>
  )
}
