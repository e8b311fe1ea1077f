import { describe, expect, it } from 'vitest'
import { applyDocumentRules, DEFAULT_DOCUMENT_RULES, findAbbreviations, longFormStart, NO_DOCUMENT_RULES } from '@core/tag/document-rules'
import type { ScoredMention } from '@core/nlp/examples'

/** A document of space-separated words (a line break where a word is '\n'), its word offsets, and a mention maker by word range. */
function doc(source: string) {
  const words = source.split(' ')
  let text = ''
  const offsets: Array<[number, number]> = []
  for (const w of words) {
    if (w === '\n') {
      text = text.replace(/ $/, '\n')
      continue
    }
    offsets.push([text.length, text.length + w.length])
    text += `${w} `
  }
  text = text.trimEnd()
  const at = (first: number, last: number, type: string, confidence = 0.9): ScoredMention => {
    const start = offsets[first][0]
    const end = offsets[last][1]
    return { start, end, text: text.slice(start, end), type, confidence }
  }
  const texts = (ms: readonly ScoredMention[]) => ms.map((m) => `${m.text}/${m.type}`)
  return { text, offsets, words: offsets.map(([s, e]) => text.slice(s, e)), at, texts }
}

describe('abbreviation definitions (Schwartz & Hearst)', () => {
  it('finds the shortest long form whose letters spell the short form, a word start for its first letter', () => {
    expect(longFormStart('HSP', ['the', 'heat', 'shock', 'protein'])).toBe(1)
    expect(longFormStart('NTG', ['given', 'nitroglycerin'])).toBe(1)
    // "5-FU": the digit is matched too; the hyphen is not a letter to match.
    expect(longFormStart('5-FU', ['with', '5', '-', 'fluorouracil'])).toBe(1)
    expect(longFormStart('XYZ', ['heat', 'shock', 'protein'])).toBeNull()
  })
  it('takes "long form ( SF )" only, with a plausible short form', () => {
    const d = doc('patients given nitroglycerin ( NTG ) or heat shock protein ( HSP ) at ( p < 0 . 05 ) and ( 12 )')
    expect(findAbbreviations(d.words).map((x) => [d.words.slice(x.longStart, x.longEnd).join(' '), d.words.slice(x.shortStart, x.shortEnd).join(' ')])).toEqual([
      ['nitroglycerin', 'NTG'],
      ['heat shock protein', 'HSP'],
    ])
  })
})

describe('document rules over one head’s mentions', () => {
  it('an abbreviation whose long form was tagged is tagged everywhere, with the long form’s type and confidence', () => {
    const d = doc('Nitroglycerin ( NTG ) was given . \n NTG caused headache in NTG users .')
    const out = applyDocumentRules(d.text, d.offsets, [d.at(0, 0, 'Chemical', 0.8), d.at(9, 9, 'Disease')], DEFAULT_DOCUMENT_RULES)
    expect(d.texts(out)).toEqual(['Nitroglycerin/Chemical', 'NTG/Chemical', 'NTG/Chemical', 'headache/Disease', 'NTG/Chemical'])
    expect(out.filter((m) => m.text === 'NTG').map((m) => m.confidence)).toEqual([0.8, 0.8, 0.8])
    expect(out.every((m) => d.text.slice(m.start, m.end) === m.text)).toBe(true)
  })
  it('the short form tagged at its definition spreads as well; a long-form mention starting a little earlier counts', () => {
    const d = doc('acute renal failure ( ARF ) . ARF again . and doxorubicin ( DOX ) . DOX')
    const out = applyDocumentRules(d.text, d.offsets, [d.at(0, 2, 'Disease'), d.at(13, 13, 'Chemical')], { abbreviations: true, consistentTypes: [] })
    expect(d.texts(out)).toEqual(['acute renal failure/Disease', 'ARF/Disease', 'ARF/Disease', 'DOX/Chemical', 'DOX/Chemical'])
    // For "RF" Schwartz & Hearst choose "renal failure"; the head's mention starts a word earlier.
    const e = doc('with acute renal failure ( RF ) then RF')
    expect(e.texts(applyDocumentRules(e.text, e.offsets, [e.at(1, 3, 'Disease')], DEFAULT_DOCUMENT_RULES))).toEqual(['acute renal failure/Disease', 'RF/Disease', 'RF/Disease'])
  })
  it('takes back mentions of a short form whose definition the head did not tag', () => {
    const d = doc('optical coherence tomography ( OCT ) showed OCT lesions')
    const out = applyDocumentRules(d.text, d.offsets, [d.at(7, 7, 'Chemical'), d.at(8, 8, 'Disease')], DEFAULT_DOCUMENT_RULES)
    expect(d.texts(out)).toEqual(['lesions/Disease'])
  })
  it('copies a chemical to its untagged occurrences, not across a line break, not over another mention, and not other types', () => {
    const d = doc('lead and lead acetate ; \n lead poisoning and Ca ; Ca and tumor and tumor')
    const mentions = [d.at(0, 0, 'Chemical'), d.at(2, 3, 'Chemical'), d.at(8, 8, 'Chemical'), d.at(12, 12, 'Disease')]
    const out = applyDocumentRules(d.text, d.offsets, mentions, DEFAULT_DOCUMENT_RULES)
    // "lead" of "lead acetate" is inside a mention; the second line's "lead" gets one; "Ca" is too short; Disease is not copied.
    expect(d.texts(out)).toEqual(['lead/Chemical', 'lead acetate/Chemical', 'lead/Chemical', 'Ca/Chemical', 'tumor/Disease'])
    const twoWords = doc('lead acetate and lead acetate')
    expect(twoWords.texts(applyDocumentRules(twoWords.text, twoWords.offsets, [twoWords.at(0, 1, 'Chemical')], DEFAULT_DOCUMENT_RULES))).toEqual(['lead acetate/Chemical', 'lead acetate/Chemical'])
    const crossing = doc('lead acetate and lead \n acetate')
    expect(applyDocumentRules(crossing.text, crossing.offsets, [crossing.at(0, 1, 'Chemical')], DEFAULT_DOCUMENT_RULES)).toHaveLength(1)
  })
  it('each copy names the rule and the model mention it stems from; the model’s own mentions name none', () => {
    const d = doc('Nitroglycerin ( NTG ) and lead . \n NTG with lead')
    const out = applyDocumentRules(d.text, d.offsets, [d.at(0, 0, 'Chemical', 0.8), d.at(5, 5, 'Chemical', 0.7)], DEFAULT_DOCUMENT_RULES)
    const source = { start: 0, end: 'Nitroglycerin'.length, text: 'Nitroglycerin' }
    const lead = d.at(5, 5, 'Chemical')
    expect(out.map((m) => [m.text, m.rule ?? null])).toEqual([
      ['Nitroglycerin', null],
      ['NTG', { rule: 'abbreviation', from: source }],
      ['lead', null],
      ['NTG', { rule: 'abbreviation', from: source }],
      ['lead', { rule: 'repeat', from: { start: lead.start, end: lead.end, text: 'lead' } }],
    ])
  })
  it('off, or on a document without words, the mentions are as decoded', () => {
    const d = doc('Nitroglycerin ( NTG ) and NTG')
    const mentions = [d.at(0, 0, 'Chemical')]
    expect(applyDocumentRules(d.text, d.offsets, mentions, NO_DOCUMENT_RULES)).toEqual(mentions)
    expect(applyDocumentRules('', [], [], DEFAULT_DOCUMENT_RULES)).toEqual([])
  })
  it('a mention off the word boundaries is kept and never copied', () => {
    const d = doc('lead and lead')
    const partial = { start: 1, end: 4, text: 'ead', type: 'Chemical', confidence: 0.5 }
    expect(applyDocumentRules(d.text, d.offsets, [partial], DEFAULT_DOCUMENT_RULES)).toEqual([partial])
  })
  it('copies every repeat on a long document with many mention texts', () => {
    const d = doc(Array.from({ length: 20_000 }, (_, i) => `chem${i % 500}`).join(' '))
    const mentions = Array.from({ length: 500 }, (_, i) => d.at(i, i, 'Chemical'))
    const out = applyDocumentRules(d.text, d.offsets, mentions, DEFAULT_DOCUMENT_RULES)
    expect(out).toHaveLength(20_000)
    expect(out[19_999]).toMatchObject({ text: 'chem499', type: 'Chemical', start: d.offsets[19_999][0] })
  })
})
