import type { CorpusDocument, Mention } from '@shared/domain'
import { CorpusError, IssueLog } from './errors'
import { checkedMention, OffsetMap, parseOffset, q, splitLines, stem, type OffsetUnit, type ReadOptions, type ReadResult } from './util'

interface TextBound {
  id: string
  line: number
  mention: Mention
}

/**
 * brat standoff: `fileName`'s stem names the document; `txt` is its text (kept byte for byte, so
 * offsets stay valid), `ann` its annotations. T lines become mentions (`T1<TAB>Type start end<TAB>text`);
 * a discontinuous span (`start end;start end`) is kept as the outer span, with a warning.
 * N lines (`N1<TAB>Reference T1 db:id<TAB>name`) give the concept id, verbatim ("MeSH:D001").
 * Other lines (R, E, A, M, *, #) are skipped.
 *
 * brat counts offsets in the .txt as saved; if they only fit once CRLF line ends are read as LF
 * (the file was re-saved on Windows after annotation), the LF text is used, with a warning.
 */
export function readBrat(txt: string, ann: string, fileName: string, options: ReadOptions = {}): ReadResult {
  const text = txt.charCodeAt(0) === 0xfeff ? txt.slice(1) : txt
  try {
    return readBratWith(text, ann, fileName, options)
  } catch (error) {
    if (!(error instanceof CorpusError) || !text.includes('\r\n')) throw error
    let retry: ReadResult
    try {
      retry = readBratWith(text.replace(/\r\n/g, '\n'), ann, fileName, options)
    } catch {
      throw error
    }
    return { documents: retry.documents, issues: [{ severity: 'warning', file: fileName, message: 'offsets fit the text only with CRLF line ends read as LF; using LF' }, ...retry.issues] }
  }
}

function readBratWith(text: string, ann: string, fileName: string, options: ReadOptions): ReadResult {
  const log: IssueLog = new IssueLog(fileName, options.textOnly)
  const lines = splitLines(ann)
  const bounds = new Map<string, TextBound>()
  const order: TextBound[] = []
  const norms: Array<{ line: number; target: string; ref: string }> = []

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const lineNo = i + 1
    if (line.trim() === '') continue
    const kind = line[0]
    if (kind === 'T') {
      const cols = line.split('\t')
      if (cols.length < 3) {
        log.error(lineNo, `truncated line ${q(line)}: expected T<id><TAB>Type start end<TAB>text`)
        continue
      }
      const id = cols[0]!.trim()
      const middle = cols[1]!.trim()
      const coveredText = cols.slice(2).join('\t')
      const space = middle.indexOf(' ')
      if (space < 0) {
        log.error(lineNo, `truncated line ${q(line)}: expected Type start end after ${id}`)
        continue
      }
      const type = middle.slice(0, space)
      const fragments: Array<[number, number]> = []
      let bad = false
      for (const fragment of middle.slice(space + 1).split(';')) {
        const parts = fragment.trim().split(/\s+/)
        const start = parseOffset(parts[0] ?? '')
        const end = parseOffset(parts[1] ?? '')
        if (parts.length !== 2 || start === undefined || end === undefined) {
          log.error(lineNo, `offsets ${q(fragment.trim())} of ${id} are not two non-negative integers`)
          bad = true
          break
        }
        fragments.push([start, end])
      }
      if (bad) continue
      if (bounds.has(id)) {
        log.warn(lineNo, `duplicate annotation id ${id} (first on line ${bounds.get(id)!.line}); keeping the first`)
        continue
      }
      const start = Math.min(...fragments.map((f) => f[0]))
      const end = Math.max(...fragments.map((f) => f[1]))
      let expected: string | undefined = coveredText
      if (fragments.length > 1) {
        for (const [s, e] of fragments) {
          if (s >= e || e > text.length) {
            log.error(lineNo, `fragment ${s}-${e} of ${id} is empty or lies outside the document text (length ${text.length})`)
            bad = true
          }
        }
        if (bad) continue
        const joined = fragments.map(([s, e]) => text.slice(s, e)).join(' ')
        if (joined !== coveredText) {
          log.error(lineNo, `text of ${id} does not match the document text: expected ${q(coveredText)}, found ${q(joined)}`)
          continue
        }
        log.warn(lineNo, `${id} is discontinuous (${fragments.map(([s, e]) => `${s}-${e}`).join(', ')}); kept as the outer span ${start}-${end}`)
        expected = undefined
      }
      const m = checkedMention(log, lineNo, text, start, end, type, undefined, expected, '', options.offsets)
      if (!m) continue
      const bound = { id, line: lineNo, mention: m }
      bounds.set(id, bound)
      order.push(bound)
    } else if (kind === 'N') {
      const cols = line.split('\t')
      const parts = (cols[1] ?? '').trim().split(/\s+/)
      if (parts.length < 3) {
        log.warn(lineNo, `normalisation line ${q(line)} is not 'N<id><TAB>Reference T<id> db:id'; ignored`)
        continue
      }
      norms.push({ line: lineNo, target: parts[1]!, ref: parts.slice(2).join(' ') })
    } else if (!'REAM*#'.includes(kind!)) {
      log.warn(lineNo, `unrecognised line ${q(line)} ignored`)
    }
  }

  const normalised = new Map<string, number>()
  for (const n of norms) {
    const bound = bounds.get(n.target)
    if (!bound) {
      log.warn(n.line, `normalisation refers to unknown annotation ${n.target}; ignored`)
    } else if (normalised.has(n.target)) {
      log.warn(n.line, `second normalisation of ${n.target} (first on line ${normalised.get(n.target)}); keeping the first`)
    } else {
      normalised.set(n.target, n.line)
      bound.mention.conceptId = n.ref
    }
  }

  const issues = log.finish()
  options.onProgress?.(1, 1)
  // Mention objects are rebuilt so conceptId sits last, as every other reader writes it.
  const mentions = order.map(({ mention: m }) =>
    m.conceptId !== undefined ? { start: m.start, end: m.end, text: m.text, type: m.type, conceptId: m.conceptId } : m,
  )
  const document: CorpusDocument = { id: stem(fileName), text, passages: [], mentions }
  return { documents: [document], issues }
}

/**
 * One document as a brat pair. Mentions become T1…Tn in order; a mention that spans a line break
 * is written as fragments split at the break (brat's own convention), which reads back as the
 * same outer span. Concept ids become N lines (`Reference Tn <conceptId>`), verbatim.
 */
export function writeBrat(doc: CorpusDocument, options: { offsets?: OffsetUnit } = {}): { txt: string; ann: string } {
  const text = doc.text
  const map = OffsetMap.of(text)
  const lines: string[] = []
  const normLines: string[] = []
  doc.mentions.forEach((m, i) => {
    const id = `T${i + 1}`
    const fragments: Array<[number, number]> = []
    let from = m.start
    for (let k = m.start; k <= m.end; k++) {
      if (k === m.end || text[k] === '\n' || text[k] === '\r') {
        if (k > from) fragments.push([from, k])
        from = k + 1
      }
    }
    if (fragments.length === 0) fragments.push([m.start, m.end])
    const offsets = fragments.map(([s, e]) => `${map.write(s, options.offsets)} ${map.write(e, options.offsets)}`).join(';')
    // Fragments hold no line breaks; tabs may stay, the reader rejoins the columns after the second tab.
    const covered = fragments.map(([s, e]) => text.slice(s, e)).join(' ')
    lines.push(`${id}\t${m.type.replace(/\s+/g, '_')} ${offsets}\t${covered}`)
    if (m.conceptId !== undefined && m.conceptId !== '') {
      normLines.push(`N${normLines.length + 1}\tReference ${id} ${m.conceptId.replace(/\s+/g, '_')}\t${m.text.replace(/[\t\n\r]/g, ' ')}`)
    }
  })
  const all = [...lines, ...normLines]
  return { txt: text, ann: all.length > 0 ? all.join('\n') + '\n' : '' }
}
