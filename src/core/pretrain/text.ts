// Unlabelled text for language-model pretraining, read as a stream of documents.
//
// Plain text (`.txt`, `.txt.gz`) is the common case and can be far larger than memory
// (PubMed-scale dumps), so it is read line by line; a blank line ends a document. Every other
// corpus format the importers understand is read through core/corpus and contributes its
// passages' text (mentions are ignored).

import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { CorpusDocument } from '@shared/domain'
import { openCorpusStream } from '../corpus'
import { CorpusError, fsProblem } from '../corpus/errors'
import { textLines } from '../corpus/stream'

/** One document: its lines (sentences or paragraphs) in order, and where it came from. */
export interface TextDocument {
  file: string
  /** 1-based line of the document's first line (plain text) or 0 for corpus formats. */
  line: number
  lines: string[]
}

/** A line longer than this is refused: it is almost always a binary or minified file, and one
 * such line would otherwise be held whole in memory. */
export const MAX_LINE_CHARS = 1_000_000

const PLAIN_TEXT = /\.txt(\.gz)?$/i
/** Corpus formats, each also gzipped (PubMed baseline files are .xml.gz), and a brat .ann. */
const CORPUS_FILE = /\.(pubtator|tsv|conll|iob|iob2|bioc|xml|json)(\.gz)?$|\.ann$/i

/** Expands files and folders (recursively, sorted) into the readable files they contain. */
export async function listTextFiles(paths: readonly string[]): Promise<string[]> {
  const out: string[] = []
  for (const p of paths) {
    let info
    try {
      info = await stat(p)
    } catch (err) {
      throw CorpusError.at(p, undefined, `cannot read: ${fsProblem(err)}`)
    }
    if (info.isDirectory()) {
      const names = (await readdir(p)).sort()
      const inner = await listTextFiles(names.filter((n) => !n.startsWith('.')).map((n) => join(p, n)))
      out.push(...inner.filter((f) => PLAIN_TEXT.test(f) || CORPUS_FILE.test(f)))
    } else {
      out.push(p)
    }
  }
  return out
}

/** Streams the documents of every file, in order. Errors name the file and line. */
export async function* readTextDocuments(paths: readonly string[]): AsyncGenerator<TextDocument> {
  const files = await listTextFiles(paths)
  if (files.length === 0) throw CorpusError.at(paths.join(', '), undefined, 'no text files found')
  for (const file of files) {
    if (PLAIN_TEXT.test(file) || !CORPUS_FILE.test(file)) yield* readPlainText(file)
    else yield* readCorpusText(file)
  }
}

async function* readPlainText(file: string): AsyncGenerator<TextDocument> {
  let current: TextDocument | null = null
  let nonEmpty = 0
  // textLines refuses a line past the limit while reading it, before it is whole in memory.
  for await (const { line, lineNo } of textLines(file, { maxLineChars: MAX_LINE_CHARS })) {
    const text = line.trim()
    if (text === '') {
      if (current) yield current
      current = null
      continue
    }
    nonEmpty++
    current ??= { file, line: lineNo, lines: [] }
    current.lines.push(text)
  }
  if (current) yield current
  if (nonEmpty === 0) throw CorpusError.at(file, undefined, 'the text is empty')
}

async function* readCorpusText(file: string): AsyncGenerator<TextDocument> {
  // Streamed where the format allows (PubMed and BioC XML record by record, .gz as it is read):
  // a baseline file is far larger than its documents need to be in memory at once.
  const { documents } = await openCorpusStream(file)
  for await (const doc of documents) {
    const lines = documentLines(doc)
    if (lines.length > 0) yield { file, line: 0, lines }
  }
}

/**
 * A corpus or workspace document as pretraining lines: one per passage (title, abstract), or one
 * per line of its text when it has no passages; white space collapsed, empty lines left out.
 */
export function documentLines(doc: Pick<CorpusDocument, 'text' | 'passages'>): string[] {
  const parts = doc.passages.length ? doc.passages.map((p) => doc.text.slice(p.offset, p.offset + p.length)) : doc.text.split(/\r?\n/)
  return parts.map((l) => l.replace(/\s+/g, ' ').trim()).filter((l) => l !== '')
}

/** Words (white-space separated) in the lines: what the app's minimum amount of text counts. */
export function wordCount(lines: Iterable<string>): number {
  let n = 0
  for (const line of lines) {
    const t = line.trim()
    if (t) n += t.split(/\s+/).length
  }
  return n
}
