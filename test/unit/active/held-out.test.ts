// The correction loop's fixed held-out set: which reviewed documents measure retraining.
import { describe, expect, it } from 'vitest'
import { heldOutKey, splitHeldOut, type HeldOutRule } from '@core/active/held-out'

const RULE: HeldOutRule = { every: 5, seed: 7, min: 3 }
const ids = (n: number, from = 1) => Array.from({ length: n }, (_, i) => from + i)
const split = (docIds: number[], rule = RULE) => splitHeldOut(docIds, (d) => d, rule)

describe('splitHeldOut', () => {
  it('holds out about one document in `every`, each decided by its own id', () => {
    const { train, heldOut } = split(ids(2000))
    expect(heldOut.length).toBeGreaterThan(2000 / 5 - 60)
    expect(heldOut.length).toBeLessThan(2000 / 5 + 60)
    expect(train.length + heldOut.length).toBe(2000)
    expect(heldOut.every((id) => heldOutKey(id, RULE.seed) < 1 / 5)).toBe(true)
    expect(train.every((id) => heldOutKey(id, RULE.seed) >= 1 / 5)).toBe(true)
  })

  it('is the same for the same seed and another for another seed', () => {
    expect(split(ids(300)).heldOut).toEqual(split(ids(300)).heldOut)
    expect(split(ids(300), { ...RULE, seed: 8 }).heldOut).not.toEqual(split(ids(300)).heldOut)
  })

  it('holds out at least `min` documents and always leaves one to train on', () => {
    for (const n of [2, 3, 4, 5, 6, 10]) {
      const { train, heldOut } = split(ids(n))
      expect(heldOut.length).toBe(Math.min(n - 1, Math.max(RULE.min, heldOut.filter((id) => heldOutKey(id, RULE.seed) < 0.2).length)))
      expect(heldOut.length).toBeGreaterThanOrEqual(Math.min(RULE.min, n - 1))
      expect(train.length).toBeGreaterThanOrEqual(1)
    }
    expect(split([42])).toEqual({ train: [42], heldOut: [] })
    expect(split([])).toEqual({ train: [], heldOut: [] })
  })

  it('never moves a trained-on document into the held-out part as more documents are reviewed', () => {
    // Reviewed in a shuffled order, one at a time, past the first `min + 1`.
    const order = ids(400).sort((a, b) => heldOutKey(a, 99) - heldOutKey(b, 99))
    const trainedOn = new Set<number>()
    for (let n = RULE.min + 2; n <= order.length; n++) {
      const { train, heldOut } = split(order.slice(0, n))
      for (const id of heldOut) expect(trainedOn.has(id), `document ${id} was trained on before being held out (n = ${n})`).toBe(false)
      for (const id of train) trainedOn.add(id)
    }
  })

  it('keeps the documents of the caller, in their order, whatever their ids', () => {
    const docs = ids(30, 1000).map((id) => ({ id: String(id) }))
    const { train, heldOut } = splitHeldOut(docs, (d) => Number(d.id), RULE)
    expect([...train, ...heldOut].map((d) => d.id).sort()).toEqual(docs.map((d) => d.id).sort())
    expect(train.map((d) => Number(d.id))).toEqual([...train.map((d) => Number(d.id))].sort((a, b) => a - b))
  })
})
