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
    const afterKey = (type: string) => nextLegend(legendWithUsed(after([]), type, 'person'), [type])
    expect(afterKey('Gene').types).toEqual(['Disease', 'Chemical', 'Gene'])
    expect(afterKey('Disease').types).toEqual(['Disease', 'Chemical', 'Gene'])
    // And a type added later goes after them.
    expect(nextLegend(afterKey('Disease'), ['Disease', 'Species']).types).toEqual(['Disease', 'Chemical', 'Gene', 'Species'])
  })

  it("gives way to an import's own types while no person has used a key", () => {
    expect(after([], ['SpecificDisease', 'Modifier']).types).toEqual(['Modifier', 'SpecificDisease'])
    // An import that holds default types orders them as its own (key 3 is Species, not Gene).
    expect(after([], ['Species', 'Chemical', 'Disease']).types).toEqual(['Disease', 'Chemical', 'Species'])
    // A document opened before the workspace's report arrived does not count as a person's use.
    expect(nextLegend(legendWithUsed(after([]), 'Disease', 'document'), ['Disease', 'Species']).types).toEqual(['Disease', 'Species'])
  })

  it("opens on the workspace's types when it has some, and appends new ones", () => {
    expect(after(['Gene', 'Chemical']).types).toEqual(['Chemical', 'Gene'])
    expect(after(['Gene', 'Chemical'], ['Gene', 'Chemical', 'Disease']).types).toEqual(['Chemical', 'Gene', 'Disease'])
  })

  it("a person's use of a key keeps the defaults for good; new types are appended", () => {
    const used = legendWithUsed(after([]), 'Chemical', 'person')
    expect(used).toEqual({ types: DEFAULT_TYPES, defaults: false })
    // An import then brings types of its own: the keys in use stay, its types come after.
    expect(nextLegend(used, ['Chemical', 'Modifier']).types).toEqual([...DEFAULT_TYPES, 'Modifier'])
    expect(legendWithUsed(used, 'Species', 'person').types).toEqual([...DEFAULT_TYPES, 'Species'])
  })
})
