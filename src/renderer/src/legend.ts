// The legend's types, in order: they give the number keys 1–9, so a key never changes its type
// while the app is open. An empty workspace shows the usual three types so that the keys work
// before anything exists.
import { sortTypes } from './palette'

export const DEFAULT_TYPES = ['Disease', 'Chemical', 'Gene']

export interface Legend {
  types: string[]
  /** The legend is DEFAULT_TYPES standing in for a workspace that had no types of its own. */
  defaults: boolean
}

export const NO_LEGEND: Legend = { types: [], defaults: false }

/**
 * The legend after the workspace reported `workspaceTypes`. The defaults give way to the
 * workspace's own types only while none of them was used: when an import brings types of its
 * own into an empty workspace. Once the workspace holds a default type (a person pressed its key),
 * the defaults stay, and every type new to the legend is appended after them.
 */
export function nextLegend(prev: Legend, workspaceTypes: readonly string[]): Legend {
  if (prev.types.length === 0) {
    if (workspaceTypes.length === 0) return { types: [...DEFAULT_TYPES], defaults: true }
    return { types: sortTypes(workspaceTypes), defaults: false }
  }
  if (prev.defaults && workspaceTypes.length > 0 && !workspaceTypes.some((t) => DEFAULT_TYPES.includes(t))) {
    return { types: sortTypes(workspaceTypes), defaults: false }
  }
  const added = sortTypes(workspaceTypes).filter((t) => !prev.types.includes(t))
  const defaults = prev.defaults && workspaceTypes.length === 0
  if (added.length === 0 && defaults === prev.defaults) return prev
  return { types: added.length ? [...prev.types, ...added] : prev.types, defaults }
}

/** The legend after a person used `type` (a new type is appended; the defaults then stay). */
export function legendWithUsed(prev: Legend, type: string): Legend {
  if (prev.types.includes(type)) return prev.defaults ? { ...prev, defaults: false } : prev
  return { types: [...prev.types, type], defaults: false }
}
