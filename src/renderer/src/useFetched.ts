// A value read from main for a view: null while it is on its way, the error's words if it failed,
// and reload() to read it again (after a change the view made). An answer that arrives after the
// view has gone, or after a newer read began, is dropped.
import { useCallback, useEffect, useState } from 'react'
import { errorMessage } from './api'

export function useFetched<T>(load: () => Promise<T>, deps: readonly unknown[]): { value: T | null; failed: string | null; reload: () => void } {
  const [value, setValue] = useState<T | null>(null)
  const [failed, setFailed] = useState<string | null>(null)
  const [version, setVersion] = useState(0)
  useEffect(() => {
    let alive = true
    load()
      .then((v) => alive && setValue(v))
      .catch((e) => alive && setFailed(errorMessage(e)))
    return () => {
      alive = false
    }
    // `load` is the caller's closure over `deps`.
  }, [...deps, version])
  const reload = useCallback(() => setVersion((v) => v + 1), [])
  return { value, failed, reload }
}
