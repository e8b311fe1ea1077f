// Which model a document's suggestions came from, against the active one: suggestions made by
// another model are marked outdated (and offered a refresh), never shown as if the current model
// had made them. Pure, so it is unit-tested without a window.
import type { ModelInfo } from '@shared/ipc'

export type SuggestionVersion =
  | { state: 'current' | 'unknown' }
  | { state: 'outdated'; fromName: string; activeName: string }

/**
 * `suggestionModelId`: DocumentDetail.suggestionModelId. 'unknown' when there is nothing to compare
 * (no suggestions, or no active model); a document with suggestions whose model is no longer in the
 * registry (deleted, or a retrain discarded) is outdated too.
 */
export function suggestionVersion(suggestionModelId: number | null, suggestions: number, models: readonly ModelInfo[]): SuggestionVersion {
  const active = models.find((m) => m.active)
  if (suggestions === 0 || !active) return { state: 'unknown' }
  if (suggestionModelId === active.id) return { state: 'current' }
  const from = suggestionModelId === null ? undefined : models.find((m) => m.id === suggestionModelId)
  return { state: 'outdated', fromName: from?.name ?? 'a model no longer in this workspace', activeName: active.name }
}
