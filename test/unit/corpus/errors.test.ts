import { CorpusError, formatIssue } from '@core/corpus'

describe('CorpusError', () => {
  it('names file, line and problem in its message', () => {
    const error = CorpusError.at('train.pubtator', 12, 'mention offsets 50-60 lie outside the document text (length 40)')
    expect(error).toBeInstanceOf(Error)
    expect(error.name).toBe('CorpusError')
    expect(error.message).toBe('train.pubtator:12: mention offsets 50-60 lie outside the document text (length 40)')
    expect(error.issues).toEqual([{ severity: 'error', file: 'train.pubtator', line: 12, message: 'mention offsets 50-60 lie outside the document text (length 40)' }])
    expect(error.file).toBe('train.pubtator')
    expect(error.line).toBe(12)
  })

  it('leaves the line out when there is none and counts further errors', () => {
    const error = new CorpusError([
      { severity: 'warning', file: 'a.xml', line: 1, message: 'w' },
      { severity: 'error', file: 'a.xml', message: 'first' },
      { severity: 'error', file: 'a.xml', line: 9, message: 'second' },
    ])
    expect(error.message).toBe('a.xml: first (and 1 more error)')
    expect(error.errors).toHaveLength(2)
    expect(formatIssue({ severity: 'warning', file: 'f', line: 3, message: 'm' })).toBe('f:3: m')
  })
})
