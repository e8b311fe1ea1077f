import { describe, expect, it } from 'vitest'
import { mapMentionTypes, parseTypeMap, unusedSources } from '@core/corpus'
import type { CorpusDocument } from '../../../src/shared/domain'

const doc: CorpusDocument = {
  id: 'd1',
  text: 'BRCA1 loss causes breast cancer.',
  passages: [{ type: 'abstract', offset: 0, length: 32 }],
  mentions: [
    { start: 0, end: 5, text: 'BRCA1', type: 'GENE' },
    { start: 18, end: 31, text: 'breast cancer', type: 'SpecificDisease' },
  ],
}

describe('type mapping', () => {
  it('parses several rules, joined by ; or given separately', () => {
    const m = parseTypeMap(['SpecificDisease, DiseaseClass,Modifier,CompositeMention=Disease;GENE=Gene', 'Chem=Chemical'])
    expect(Object.fromEntries(m)).toEqual({ SpecificDisease: 'Disease', DiseaseClass: 'Disease', Modifier: 'Disease', CompositeMention: 'Disease', GENE: 'Gene', Chem: 'Chemical' })
  })

  it('rejects malformed rules and a source mapped twice, naming the rule', () => {
    expect(() => parseTypeMap('Disease')).toThrow(/'Disease' is not SOURCE/)
    expect(() => parseTypeMap('=Disease')).toThrow(/not SOURCE/)
    expect(() => parseTypeMap('A,,B=X')).toThrow(/not SOURCE/)
    expect(() => parseTypeMap('A=')).toThrow(/not SOURCE/)
    expect(() => parseTypeMap('A=X;A=Y')).toThrow(/'A' is mapped to both 'X' and 'Y'/)
    expect(parseTypeMap('A=X;A=X').get('A')).toBe('X')
  })

  it('renames mention types without touching offsets or the input', () => {
    const map = parseTypeMap('SpecificDisease=Disease;GENE=Gene')
    const [out] = mapMentionTypes([doc], map)
    expect(out.mentions.map((m) => [m.type, m.start, m.end, m.text])).toEqual([
      ['Gene', 0, 5, 'BRCA1'],
      ['Disease', 18, 31, 'breast cancer'],
    ])
    for (const m of out.mentions) expect(out.text.slice(m.start, m.end)).toBe(m.text)
    expect(doc.mentions[0].type).toBe('GENE')
  })

  it('reports sources that occur in no document', () => {
    expect(unusedSources([doc], parseTypeMap('GENE=Gene;DiseaseClass=Disease'))).toEqual(['DiseaseClass'])
  })
})
