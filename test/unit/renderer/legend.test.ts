import { DEFAULT_TYPES, NO_LEGEND, legendWithUsed, nextLegend, type Legend } from '../../../src/renderer/src/legend'

/** The legend after each workspace report in turn, from an app just opened. */
function after(...reports: string[][]): Legend {
  return reports.reduce((l, types) => nextLegend(l, types), NO_LEGEND)
}

describe('legend (the number keys)', () => {
  it('offers the usual three types in an empty workspace', () => {
    expect(after([])).toEqual({ types: DEFAULT_TYPES, defaults: true })
  })

  it('keeps every key where it was after the first annotation of an empty workspace', () => {
    // Key 3 (Gene) first: Gene must not become key 1, Disease and Chemical must stay offered.
    expect(after([], ['Gene']).types).toEqual(['Disease', 'Chemical', 'Gene'])
    expect(after([], ['Disease']).types).toEqual(['Disease', 'Chemical', 'Gene'])
    // And a type added later goes after them.
    expect(after([], ['Disease'], ['Disease', 'Species']).types).toEqual(['Disease', 'Chemical', 'Gene', 'Species'])
  })

  it("gives way to an import's own types when none of the defaults was used", () => {
    expect(after([], ['SpecificDisease', 'Modifier']).types).toEqual(['Modifier', 'SpecificDisease'])
    // Once a default type exists in the workspace, an import's types are appended instead.
    expect(after([], ['Gene'], ['Gene', 'Modifier']).types).toEqual(['Disease', 'Chemical', 'Gene', 'Modifier'])
  })

  it("opens on the workspace's types when it has some, and appends new ones", () => {
    expect(after(['Gene', 'Chemical']).types).toEqual(['Chemical', 'Gene'])
    expect(after(['Gene', 'Chemical'], ['Gene', 'Chemical', 'Disease']).types).toEqual(['Chemical', 'Gene', 'Disease'])
  })

  it('a type a person used is kept (appended) and ends the defaults', () => {
    const shown = after([])
    const used = legendWithUsed(shown, 'Chemical')
    expect(used).toEqual({ types: DEFAULT_TYPES, defaults: false })
    // The workspace then reports foreign types only (the person's save not yet counted): keys stay.
    expect(nextLegend(used, ['Modifier']).types).toEqual([...DEFAULT_TYPES, 'Modifier'])
    expect(legendWithUsed(used, 'Species').types).toEqual([...DEFAULT_TYPES, 'Species'])
  })
})
