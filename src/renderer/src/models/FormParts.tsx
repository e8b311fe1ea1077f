// Pieces the model forms share (train, adapt, retrain).
import { useId, type ReactNode } from 'react'

/** A number of epochs (or passes), 1 to `max`: what is typed is kept within that range. */
export function EpochsField({ label = 'Epochs', max, value, onChange, testId }: { label?: string; max: number; value: number; onChange: (epochs: number) => void; testId?: string }) {
  const id = useId()
  return (
    <div className="form-row">
      <label htmlFor={id}>{label}</label>
      <input id={id} type="number" min={1} max={max} value={value} onChange={(e) => onChange(Math.max(1, Math.min(max, Number(e.target.value) || 1)))} data-testid={testId} />
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
