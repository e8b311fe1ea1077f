// The correction loop as every view sees it (the review queue's strategy, Auto-improve, the
// learning curve): one module-level store, read on first use and kept current by main's
// 'learning:changed' events, so the queue, the Retrain view and the header agree.
import { useSyncExternalStore } from 'react'
import type { LearningLoopState, RequestOf } from '@shared/ipc'
import { api, errorMessage, onEvent } from '../api'

let state: LearningLoopState | null = null
let error: string | null = null
const listeners = new Set<() => void>()
let subscribed = false

function set(next: LearningLoopState | null, err: string | null = null): void {
  state = next
  error = err
  for (const l of [...listeners]) l()
}

function subscribe(l: () => void): () => void {
  listeners.add(l)
  if (!subscribed) {
    subscribed = true
    onEvent('learning:changed', (s) => set(s))
    void refreshLearning()
  }
  return () => listeners.delete(l)
}

export function refreshLearning(): Promise<void> {
  return api.learningState().then(
    (s) => set(s),
    (e) => set(state, errorMessage(e)),
  )
}

/** Changes the strategy or Auto-improve; the answer is the new state. Throws what main refused. */
export async function updateLearning(req: RequestOf<'learning:set'>): Promise<LearningLoopState> {
  const s = await api.setLearning(req)
  set(s)
  return s
}

export function useLearning(): { state: LearningLoopState | null; error: string | null } {
  const s = useSyncExternalStore(subscribe, () => state)
  const e = useSyncExternalStore(subscribe, () => error)
  return { state: s, error: e }
}
