import { readText } from '@core/corpus'
import { corpusError, fixture } from './helpers'

describe('readText', () => {
  it('makes one document with a title and paragraphs', () => {
    const { documents, issues } = readText(fixture('note.txt'), 'notes/note.txt')
    expect(issues).toEqual([])
    const doc = documents[0]!
    expect(doc.id).toBe('note')
    expect(doc.mentions).toEqual([])
    expect(doc.passages.map((p) => [p.type, doc.text.slice(p.offset, p.offset + p.length)])).toEqual([
      ['title', 'Notes on a tremor clinic'],
      ['paragraph', 'The first paragraph talks about tremor.\nIt spans two lines.'],
      ['paragraph', 'A second paragraph mentions ataxia.'],
    ])
  })

  it('has no title when the first paragraph is long or alone, normalises CRLF, and names unnamed text by a hash', () => {
    const one = readText('Just one paragraph\r\nover two lines.\r\n', '').documents[0]!
    expect(one.text).toBe('Just one paragraph\nover two lines.')
    expect(one.passages).toEqual([{ type: 'paragraph', offset: 0, length: one.text.length }])
    expect(one.id).toMatch(/^text-[0-9a-f]{12}$/)
    const long = readText(`${'word '.repeat(100)}\n\nSecond.`, 'x.txt').documents[0]!
    expect(long.passages.map((p) => p.type)).toEqual(['paragraph', 'paragraph'])
  })

  it('rejects empty text', () => {
    expect(corpusError(() => readText('  \n\n ', 'e.txt')).message).toBe('e.txt:1: the text is empty')
  })
})
