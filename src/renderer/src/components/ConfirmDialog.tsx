import type { ReactNode } from 'react'
import { Modal } from './Modal'

interface Props {
  title: string
  /** What happens, and what cannot be taken back. */
  children: ReactNode
  confirmLabel: string
  cancelLabel?: string
  onConfirm: () => void
  onCancel: () => void
  /** 'danger' for a destructive action. */
  tone?: 'danger' | 'primary'
  testId?: string
  confirmTestId?: string
}

/**
 * A question before an action that changes a lot at once. The cancel button comes first, so it
 * takes the focus (Modal focuses the first button): Enter right after opening keeps things as they are.
 */
export function ConfirmDialog({ title, children, confirmLabel, cancelLabel = 'Cancel', onConfirm, onCancel, tone = 'primary', testId, confirmTestId }: Props) {
  return (
    <Modal title={title} onClose={onCancel} testId={testId}>
      <div className="form">
        {children}
        <div className="form-actions">
          <button type="button" className="btn" onClick={onCancel}>
            {cancelLabel}
          </button>
          <button type="button" className={`btn ${tone}`} onClick={onConfirm} data-testid={confirmTestId}>
            {confirmLabel}
          </button>
        </div>
      </div>
    </Modal>
  )
}
