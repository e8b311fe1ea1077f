// Where to write each point's name on a scatter or bubble chart so that no two names overlap
// (issue 30, item 5: two students at the same kept F1 had their names printed over each other).
// Chart.js has no label placement, and the data-labels plugin only offsets a label from its own
// point without looking at the others, so this is a small greedy placer: deterministic (the same
// points always give the same picture, so screenshots compare), pure (tested without a canvas; the
// caller passes the text measure).

export interface Box {
  left: number
  top: number
  right: number
  bottom: number
}

export interface LabelRequest {
  text: string
  /** The point's centre and its marker's radius, in canvas pixels. */
  x: number
  y: number
  r: number
}

export interface PlacedLabel {
  text: string
  /** The text's box: draw it left-aligned at (box.left, middle of the box), textBaseline 'middle'. */
  box: Box
  /** True when the label had to move away from its point: draw a leader line to the point. */
  displaced: boolean
}

export interface PlacementOptions {
  /** Width of a text in pixels (ctx.measureText on a canvas, an estimate in tests). */
  measure: (text: string) => number
  /** Height of a line of text. */
  lineHeight: number
  /** Space between a marker and its label. */
  gap?: number
  /** Where labels should stay (the canvas): honoured while some position fits, never at the cost of an overlap. */
  bounds?: Box
  /** Most vertical nudges tried on each side before a label is stacked below the others. */
  maxNudges?: number
}

export const overlaps = (a: Box, b: Box): boolean => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom

const inside = (a: Box, b: Box): boolean => a.left >= b.left && a.right <= b.right && a.top >= b.top && a.bottom <= b.bottom

const shift = (b: Box, dy: number): Box => ({ left: b.left, right: b.right, top: b.top + dy, bottom: b.bottom + dy })

/** The positions around a point, in order of preference: beside it, then above and below, then diagonally. */
function candidates(p: LabelRequest, w: number, h: number, gap: number): Box[] {
  const d = p.r + gap
  const at = (left: number, top: number): Box => ({ left, top, right: left + w, bottom: top + h })
  return [
    at(p.x + d, p.y - h / 2), // right
    at(p.x - d - w, p.y - h / 2), // left
    at(p.x - w / 2, p.y - d - h), // above
    at(p.x - w / 2, p.y + d), // below
    at(p.x + d * 0.7, p.y - d * 0.7 - h), // above right
    at(p.x - d * 0.7 - w, p.y - d * 0.7 - h), // above left
    at(p.x + d * 0.7, p.y + d * 0.7), // below right
    at(p.x - d * 0.7 - w, p.y + d * 0.7), // below left
  ]
}

/**
 * One label per request, in request order (earlier requests get the better spots). A label never
 * overlaps another label; it avoids every marker and stays in `bounds` whenever some position
 * allows it. Tried in turn: the positions around the point; the same moved up or down in steps of
 * half a line; finally, below every label it would touch.
 */
export function placeLabels(requests: LabelRequest[], options: PlacementOptions): PlacedLabel[] {
  const { measure, lineHeight: h, gap = 4, bounds, maxNudges = 12 } = options
  const markers: Box[] = requests.map((p) => ({ left: p.x - p.r, top: p.y - p.r, right: p.x + p.r, bottom: p.y + p.r }))
  const placed: PlacedLabel[] = []
  const freeOfLabels = (b: Box) => placed.every((l) => !overlaps(l.box, b))
  const ideal = (b: Box) => freeOfLabels(b) && markers.every((m) => !overlaps(m, b)) && (!bounds || inside(b, bounds))

  for (const p of requests) {
    const w = measure(p.text)
    const around = candidates(p, w, h, gap)
    let box = around.find(ideal)
    let displaced = false
    if (!box) {
      // Nudged vertically: beside the point first (the line stays readable as belonging to it).
      const step = h / 2
      search: for (let k = 1; k <= maxNudges; k++) {
        for (const sign of [-1, 1]) {
          for (const base of around.slice(0, 4)) {
            const moved = shift(base, sign * k * step)
            if (ideal(moved)) {
              box = moved
              break search
            }
          }
        }
      }
      // Crowded: give up on markers and bounds, never on overlap — below everything in its way.
      if (!box) {
        box = around[0]!
        for (let moved = true; moved; ) {
          moved = false
          for (const l of placed) {
            if (overlaps(l.box, box)) {
              box = shift(box, l.box.bottom - box.top)
              moved = true
            }
          }
        }
      }
      displaced = true
    }
    placed.push({ text: p.text, box, displaced })
  }
  return placed
}
