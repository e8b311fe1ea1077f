// The legend's types, in order: they give the number keys 1–9, so a key never changes its type
// while the app is open. An empty workspace shows the usual three types so that the keys work
// before anything exists.
import { sortTypes } from './palette'
import type { TypeUse } from './editor/snapshot'

export const DEFAULT_TYPES = ['Disease', 'Chemical', 'Gene']

export interface Legend {
  types: string[]
  /** The legend is DEFAULT_TYPES standing in for a workspace that had no types of its own. */
  defaults: boolean
}

export const NO_LEGEND: Legend = { types: [], defaults: false }

/**
 * The legend after the workspace reported `workspaceTypes`. The defaults give way to the
 * workspace's own types only while no person has used one of their keys: when an import brings
 * types into an empty workspace. Once a person has, the defaults stay, and every type new to the
 * legend is appended after them.
 */
export function nextLegend(prev: Legend, workspaceTypes: readonly string[]): Legend {
  if (prev.types.length === 0) {
    if (workspaceTypes.length === 0) return { types: [...DEFAULT_TYPES], defaults: true }
    return { types: sortTypes(workspaceTypes), defaults: false }
  }
  if (prev.defaults && workspaceTypes.length > 0) return { types: sortTypes(workspaceTypes), defaults: false }
  const added = sortTypes(workspaceTypes).filter((t) => !prev.types.includes(t))
  return added.length ? { types: [...prev.types, ...added], defaults: prev.defaults } : prev
}

/**
 * The legend after `type` was used: a type it lacks is appended. A person's use of a default key
 * keeps the defaults for good; a document that merely holds the type does not.
 */
export function legendWithUsed(prev: Legend, type: string, by: TypeUse): Legend {
  if (!prev.types.includes(type)) return { types: [...prev.types, type], defaults: false }
  return prev.defaults && by === 'person' ? { ...prev, defaults: false } : prev
}
