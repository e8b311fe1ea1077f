import type { ReviewStatus } from '@shared/domain'

const LABEL: Record<ReviewStatus, string> = { unreviewed: 'Unreviewed', in_progress: 'In progress', done: 'Done' }

export function StatusPill({ status }: { status: ReviewStatus }) {
  return (
    <span className={`pill pill-${status}`} data-status={status}>
      {status === 'done' && <span aria-hidden="true">✓ </span>}
      {LABEL[status]}
    </span>
  )
}
