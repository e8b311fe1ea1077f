import { overlaps, placeLabels, type Box, type LabelRequest } from '../../../src/renderer/src/models/label-placement'
import { Rng } from '@core/rng'

/** The canvas estimate the tests measure with: 7 px per character of a 12 px bold font. */
const measure = (text: string) => 7 * text.length
const options = { measure, lineHeight: 14, bounds: { left: 0, top: 0, right: 600, bottom: 300 } }

function expectNoOverlap(boxes: Box[]): void {
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      expect(overlaps(boxes[i]!, boxes[j]!), `labels ${i} and ${j}: ${JSON.stringify([boxes[i], boxes[j]])}`).toBe(false)
    }
  }
}

describe('placeLabels', () => {
  it('puts a lone label right of its point, vertically centred, its width measured', () => {
    const [label] = placeLabels([{ text: '6 layers', x: 100, y: 100, r: 7 }], options)
    expect(label!.box).toEqual({ left: 111, top: 93, right: 111 + 56, bottom: 107 })
    expect(label!.displaced).toBe(false)
  })

  it('separates the names of two students at the same kept F1 (issue 30, screenshot 20)', () => {
    const requests: LabelRequest[] = [
      { text: 'tiny-e2e (retrained) → 1 layers', x: 300, y: 40, r: 7 },
      { text: 'tiny-e2e (retrained) → 1 layers · int8', x: 340, y: 40, r: 7 },
      { text: '6 layers', x: 320, y: 60, r: 7 },
    ]
    const placed = placeLabels(requests, options)
    expectNoOverlap(placed.map((l) => l.box))
    // No name covers another point's marker either, and all stay on the canvas.
    for (const l of placed) {
      for (const p of requests) expect(overlaps(l.box, { left: p.x - p.r, top: p.y - p.r, right: p.x + p.r, bottom: p.y + p.r })).toBe(false)
      expect(l.box.left).toBeGreaterThanOrEqual(0)
      expect(l.box.right).toBeLessThanOrEqual(600)
      expect(l.box.top).toBeGreaterThanOrEqual(0)
    }
  })

  it('never overlaps two labels, however crowded the points', () => {
    const seeded = new Rng(7)
    const random = () => seeded.next()
    for (let trial = 0; trial < 50; trial++) {
      const n = 2 + Math.floor(random() * 14)
      // Points within a 60 × 30 px patch: far more text than room around them.
      const requests = Array.from({ length: n }, (_, i) => ({
        text: `model ${i}${'x'.repeat(Math.floor(random() * 20))}`,
        x: 270 + random() * 60,
        y: 135 + random() * 30,
        r: 3 + random() * 10,
      }))
      const placed = placeLabels(requests, options)
      expect(placed.map((l) => l.text)).toEqual(requests.map((r) => r.text))
      expectNoOverlap(placed.map((l) => l.box))
      for (const [i, l] of placed.entries()) expect(l.box.right - l.box.left).toBe(measure(requests[i]!.text))
    }
  })

  it('never overlaps two labels when every point is the same point, off the canvas edge', () => {
    const requests = Array.from({ length: 30 }, (_, i) => ({ text: `student ${i}`, x: 590, y: 5, r: 6 }))
    const placed = placeLabels(requests, options)
    expectNoOverlap(placed.map((l) => l.box))
    expect(placed.some((l) => l.displaced)).toBe(true)
  })

  it('is deterministic: the same points give the same picture', () => {
    const requests = Array.from({ length: 8 }, (_, i) => ({ text: `m${i} layers`, x: 200 + 5 * i, y: 100 + (i % 3) * 4, r: 5 }))
    expect(placeLabels(requests, options)).toEqual(placeLabels(requests, options))
  })
})
