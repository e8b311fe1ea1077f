import { createHash } from 'node:crypto'
import type { Passage } from '@shared/domain'
import { CorpusError } from './errors'
import { stem, stripBom, type ReadOptions, type ReadResult } from './util'

/** A first line up to this long, followed by a blank line, is taken as the title. */
const MAX_TITLE_LENGTH = 300

/**
 * Plain text → one document without mentions. Line ends are normalised to LF and trailing
 * whitespace dropped (there are no offsets to keep). Paragraphs (separated by blank lines) become
 * "paragraph" passages; a short first line followed by a blank line becomes the "title".
 * The id is the file name's stem, or `text-<sha1 prefix>` when there is no name.
 */
export function readText(content: string, fileName: string, options: ReadOptions = {}): ReadResult {
  const text = stripBom(content).replace(/\r\n?/g, '\n').trimEnd()
  if (text.trim() === '') throw CorpusError.at(fileName || '(pasted text)', 1, 'the text is empty')
  const passages: Passage[] = []
  const separator = /\n[ \t\f\v]*\n\s*/g
  let from = 0
  const add = (start: number, end: number): void => {
    while (start < end && /\s/.test(text[start]!)) start++
    if (start < end) passages.push({ type: 'paragraph', offset: start, length: end - start })
  }
  for (const m of text.matchAll(separator)) {
    add(from, m.index!)
    from = m.index! + m[0].length
  }
  add(from, text.length)
  const first = passages[0]
  if (first && passages.length > 1 && first.length <= MAX_TITLE_LENGTH && !text.slice(first.offset, first.offset + first.length).includes('\n')) {
    first.type = 'title'
  }
  const name = fileName ? stem(fileName).trim() : ''
  const id = name !== '' ? name : `text-${createHash('sha1').update(text).digest('hex').slice(0, 12)}`
  options.onProgress?.(1, 1)
  return { documents: [{ id, text, passages, mentions: [] }], issues: [] }
}
