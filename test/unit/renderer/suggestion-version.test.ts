// Which model a document's suggestions came from, against the active one.
import { describe, expect, it } from 'vitest'
import type { ModelInfo } from '@shared/ipc'
import { suggestionVersion } from '../../../src/renderer/src/components/suggestion-version'

const model = (id: number, name: string, active: boolean) => ({ id, name, active }) as ModelInfo

describe('suggestionVersion', () => {
  const models = [model(1, 'first', false), model(2, 'first (retrained)', true)]

  it('current when the active model made them', () => {
    expect(suggestionVersion(2, 5, models)).toEqual({ state: 'current' })
  })

  it('outdated when another model made them, naming both', () => {
    expect(suggestionVersion(1, 5, models)).toEqual({ state: 'outdated', fromName: 'first', activeName: 'first (retrained)' })
  })

  it('outdated when the model that made them is gone (deleted, or a discarded retrain)', () => {
    expect(suggestionVersion(9, 1, models)).toMatchObject({ state: 'outdated', activeName: 'first (retrained)' })
    expect(suggestionVersion(null, 1, models)).toMatchObject({ state: 'outdated' })
  })

  it('nothing to mark without suggestions or without an active model', () => {
    expect(suggestionVersion(1, 0, models)).toEqual({ state: 'unknown' })
    expect(suggestionVersion(1, 3, [model(1, 'first', false)])).toEqual({ state: 'unknown' })
  })
})
