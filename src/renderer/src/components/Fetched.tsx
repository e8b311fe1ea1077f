// What a view shows of a value read with useFetched: why it could not be read, that it is being
// read, that there is nothing, or the value itself.
import type { ReactNode } from 'react'

export function Fetched<T>(props: {
  fetched: { value: T | null; failed: string | null }
  /** For "Cannot read the …": what was read. */
  what: string
  isEmpty: (value: T) => boolean
  empty: ReactNode
  children: (value: T) => ReactNode
}) {
  const { value, failed } = props.fetched
  if (failed) {
    return (
      <p className="form-error" role="alert">
        Cannot read {props.what}: {failed}
      </p>
    )
  }
  if (value === null) return <p className="muted">Reading {props.what}…</p>
  if (props.isEmpty(value)) return <p className="muted">{props.empty}</p>
  return <>{props.children(value)}</>
}
