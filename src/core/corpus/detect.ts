import type { CorpusFormat } from '@shared/domain'
import { CorpusError } from './errors'
import { extension, isGzipped, stripBom } from './util'

const PUBTATOR_TITLE = /^[^\t|]+\|t\|/
const PUBTATOR_SECTION = /^[^\t|]+\|[A-Za-z]\|/
const CONLL_TAG = /^(?:O|[BIESLU](?:-\S+)?)$/
const CONLL_EXTENSIONS = new Set(['.tsv', '.conll', '.conll03', '.iob', '.iob2', '.bio', '.bioes', '.bilou'])

/** Extensions of the files the readers take (brat: the .txt/.ann pair; .txt alone is plain text). */
const CORPUS_EXTENSIONS = new Set(['.xml', '.bioc', '.pubtator', '.json', '.txt', '.ann', ...CONLL_EXTENSIONS])

/** Whether a file name looks like a corpus file the readers take, gzipped or not (a folder's corpus files). */
export function isCorpusFileName(fileName: string): boolean {
  return CORPUS_EXTENSIONS.has(extension(isGzipped(fileName) ? fileName.slice(0, -3) : fileName))
}

/**
 * The format an output file's name asks for, gzipped or not: `.pubtator`; `.conll`, `.tsv`, `.iob`
 * and the other CoNLL extensions; `.json` (BioC JSON); `.xml`, `.bioc` (BioC XML). Null when the
 * name says nothing sure (`.txt` is plain text or PubTator, `.ann` half of a brat pair, none, or
 * `-` for standard output).
 */
export function formatOfOutputName(fileName: string): CorpusFormat | null {
  const ext = extension(isGzipped(fileName) ? fileName.slice(0, -3) : fileName)
  if (ext === '.pubtator') return 'pubtator'
  if (CONLL_EXTENSIONS.has(ext)) return 'conll'
  if (ext === '.json') return 'bioc-json'
  if (ext === '.xml' || ext === '.bioc') return 'bioc-xml'
  return null
}

/**
 * Chooses a reader from the file name and the first part of the content (`head`, any length;
 * 64 KiB is plenty). Unmistakable content wins over the extension (a `.txt` of `ID|t|` lines is
 * PubTator); a `.xml` or `.json` file that is neither PubMed nor BioC is an error rather than text.
 * A `.txt` next to a `.ann` is brat, but that needs the file system: see readCorpusFile.
 * A `.gz` name is judged by what is inside (`x.json.gz` by `.json`); `head` is the uncompressed text.
 */
export function detectFormat(fileName: string, head: string): CorpusFormat {
  const ext = extension(isGzipped(fileName) ? fileName.slice(0, -3) : fileName)
  if (ext === '.ann') return 'brat'
  const content = stripBom(head).trimStart()

  if (content.startsWith('<')) {
    if (/<PubmedArticleSet[\s>]|<PubmedArticle[\s>]|<PubmedBookArticle[\s>]|<!DOCTYPE\s+PubmedArticleSet/.test(content)) return 'pubmed-xml'
    if (/<collection[\s>]|<!DOCTYPE\s+collection/.test(content)) return 'bioc-xml'
    throw CorpusError.at(fileName, 1, 'XML that is neither PubMed (<PubmedArticleSet>) nor BioC (<collection>)')
  }
  if (content.startsWith('{') || content.startsWith('[')) {
    if (/"(?:documents|passages|PubTator3)"\s*:/.test(content)) return 'bioc-json'
    if (ext === '.json' || ext === '') throw CorpusError.at(fileName, 1, 'JSON without a "documents" array: not a BioC JSON collection')
  }
  if (ext === '.json') throw CorpusError.at(fileName, 1, 'the .json file does not start with a JSON object')
  if (ext === '.xml' || ext === '.bioc') throw CorpusError.at(fileName, 1, 'the .xml file does not start with an XML element')
  if (looksLikePubtator(content)) return 'pubtator'
  if (ext === '.pubtator') return 'pubtator'
  if (CONLL_EXTENSIONS.has(ext)) return 'conll'
  if (looksLikeConll(content)) return 'conll'
  return 'text'
}

/**
 * The first non-blank line is `ID|t|…` and most of the following ones are PubTator lines too
 * (`ID|a|…`, or tab-separated mention/relation lines). One line alone decides nothing: prose
 * can contain `para|t|x`.
 */
function looksLikePubtator(content: string): boolean {
  const head = content.slice(0, 65536)
  const lines = head.split('\n')
  if (head.length === 65536 && lines.length > 1) lines.pop() // cut off mid-line
  const nonBlank = lines.map((l) => l.replace(/\r$/, '')).filter((l) => l.trim() !== '').slice(0, 200)
  if (nonBlank.length === 0 || !PUBTATOR_TITLE.test(nonBlank[0]!)) return false
  if (nonBlank.length === 1) return true
  let shaped = 0
  for (const line of nonBlank) if (PUBTATOR_SECTION.test(line) || line.split('\t').length >= 3) shaped++
  return shaped / nonBlank.length >= 0.9
}

/** Most of the first non-blank lines are `token … tag` with an IOB/BIOES tag last. */
function looksLikeConll(content: string): boolean {
  const lines = content
    .slice(0, 65536)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .slice(0, 50)
  if (lines.length === 0) return false
  let tagged = 0
  for (const line of lines) {
    const cols = line.split(/\s+/)
    if (cols[0] === '-DOCSTART-' || (cols.length >= 2 && CONLL_TAG.test(cols[cols.length - 1]!))) tagged++
  }
  return tagged / lines.length >= 0.9
}
