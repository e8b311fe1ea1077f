import { detectFormat } from '@core/corpus'
import { corpusError, fixture } from './helpers'

describe('detectFormat', () => {
  it.each([
    ['sample.pubtator', fixture('sample.pubtator'), 'pubtator'],
    ['data.txt', fixture('sample.pubtator'), 'pubtator'],
    ['train.tsv', fixture('sample.conll'), 'conll'],
    ['x.iob2', 'a\tO\n', 'conll'],
    ['x.conll', 'anything', 'conll'],
    ['noext', fixture('spaces.conll'), 'conll'],
    ['tagged.txt', 'Aspirin\tB-Chemical\nworks\tO\n', 'conll'],
    ['efetch.xml', fixture('pubmed.xml'), 'pubmed-xml'],
    ['download', fixture('pubmed.xml'), 'pubmed-xml'],
    ['c.xml', fixture('bioc.xml'), 'bioc-xml'],
    ['c.bioc', '\uFEFF<?xml version="1.0"?>\n<collection><source/></collection>', 'bioc-xml'],
    ['c.json', fixture('bioc.json'), 'bioc-json'],
    ['pubtator3.json', '{"PubTator3": []}', 'bioc-json'],
    ['doc.ann', 'T1\tX 0 1\ta\n', 'brat'],
    ['note.txt', fixture('note.txt'), 'text'],
    ['pasted', 'Some words pasted from a paper.', 'text'],
    // One PubTator-like line is not enough (issue 11, item 12).
    ['notes.txt', 'para|t|x\nThe second paragraph is prose, not an abstract line.\nSo is this one.\n', 'text'],
    ['notes2.txt', 'Prose first.\n9|t|then something like a title\n', 'text'],
    ['one-title.txt', '9|t|A title-only document\n\n10|t|And another\n10|a|With an abstract.\n10\t0\t3\tAnd\tX\n', 'pubtator'],
  ] as const)('%s → %s', (name, head, format) => {
    expect(detectFormat(name, head)).toBe(format)
  })

  it('refuses XML and JSON that are neither PubMed nor BioC', () => {
    expect(corpusError(() => detectFormat('x.xml', '<html></html>')).message).toMatch(/^x\.xml:1: XML that is neither PubMed/)
    expect(corpusError(() => detectFormat('x.json', '{"rows": []}')).message).toMatch(/^x\.json:1: JSON without a "documents" array/)
  })
})
