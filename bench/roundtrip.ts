// Round-trips the shared corpora through the corpus readers and writers and prints a table.
// Usage: npx tsx bench/roundtrip.ts [DATA_DIR]   (default ../shared/data)
import { readdirSync, readFileSync, existsSync, statSync } from 'node:fs'
import { join, resolve, relative } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import type { CorpusDocument, CorpusFormat } from '../src/shared/domain'
import { parseCorpusText, readBrat, readCorpusBuffer, writeBrat, writeCorpus } from '../src/core/corpus'

const dataDir = resolve(process.argv[2] ?? resolve(process.cwd(), '..', 'shared', 'data'))
if (!existsSync(dataDir)) {
  process.stderr.write(`roundtrip: data directory ${dataDir} not found (pass it as the first argument)\n`)
  process.exit(2)
}

interface Row {
  file: string
  via: string
  docs: number
  mentions: number
  warnings: number
  identical: string
  readMs: number
  writeMs: number
  rereadMs: number
}

function inputs(): Array<{ path: string; format: CorpusFormat }> {
  const out: Array<{ path: string; format: CorpusFormat }> = []
  const ncbi = join(dataDir, 'ncbi-disease')
  if (existsSync(ncbi)) for (const f of readdirSync(ncbi).sort()) if (f.endsWith('.pubtator')) out.push({ path: join(ncbi, f), format: 'pubtator' })
  const mtl = join(dataDir, 'mtl-bioner')
  if (existsSync(mtl)) {
    for (const set of readdirSync(mtl).sort()) {
      const dir = join(mtl, set)
      if (!statSync(dir).isDirectory()) continue
      for (const f of readdirSync(dir).sort()) if (f.endsWith('.tsv')) out.push({ path: join(dir, f), format: 'conll' })
    }
  }
  return out
}

function time<T>(fn: () => T): [T, number] {
  const t0 = performance.now()
  const value = fn()
  return [value, performance.now() - t0]
}

function firstDifference(a: CorpusDocument[], b: CorpusDocument[]): string {
  if (a.length !== b.length) return `document count ${a.length} vs ${b.length}`
  for (let i = 0; i < a.length; i++) {
    if (!isDeepStrictEqual(a[i], b[i])) {
      const x = a[i]!
      const y = b[i]!
      if (x.id !== y.id) return `doc ${i}: id ${x.id} vs ${y.id}`
      if (x.text !== y.text) return `doc ${x.id}: text differs`
      if (!isDeepStrictEqual(x.mentions, y.mentions)) return `doc ${x.id}: mentions differ`
      if (!isDeepStrictEqual(x.passages, y.passages)) return `doc ${x.id}: passages differ`
      return `doc ${x.id}: tokens differ`
    }
  }
  return ''
}

const rows: Row[] = []
const notes: string[] = []
for (const { path, format } of inputs()) {
  const name = relative(dataDir, path)
  const bytes = readFileSync(path)
  const [read, readMs] = time(() => readCorpusBuffer(bytes, name, format))
  const docs = read.documents
  const mentions = docs.reduce((n, d) => n + d.mentions.length, 0)
  for (const w of read.issues) notes.push(`${name}: warning: ${w.line !== undefined ? `line ${w.line}: ` : ''}${w.message}`)

  const vias: CorpusFormat[] = format === 'pubtator' ? ['pubtator', 'bioc-json', 'bioc-xml', 'brat'] : ['conll']
  for (const via of vias) {
    let again: CorpusDocument[]
    let writeMs: number
    let rereadMs: number
    if (via === 'brat') {
      const [pairs, w] = time(() => docs.map((d) => writeBrat(d)))
      writeMs = w
      ;[again, rereadMs] = time(() => pairs.flatMap((p, i) => readBrat(p.txt, p.ann, `${docs[i]!.id}.ann`).documents))
      // brat has no passages: compare the rest.
      again = again.map((d, i) => ({ ...d, passages: docs[i]!.passages }))
    } else {
      const [written, w] = time(() => writeCorpus(docs, via))
      writeMs = w
      ;[again, rereadMs] = time(() => parseCorpusText(written.files[0]!.content, name, via).documents)
    }
    const diff = firstDifference(docs, again)
    if (diff) notes.push(`${name} via ${via}: ${diff}`)
    rows.push({ file: name, via, docs: docs.length, mentions, warnings: read.issues.length, identical: diff ? 'NO' : 'yes', readMs, writeMs, rereadMs })
  }
}

const header = ['file', 'via', 'docs', 'mentions', 'warnings', 'identical', 'read ms', 'write ms', 're-read ms']
const table = rows.map((r) => [r.file, r.via, String(r.docs), String(r.mentions), String(r.warnings), r.identical, r.readMs.toFixed(0), r.writeMs.toFixed(0), r.rereadMs.toFixed(0)])
const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)))
const fmt = (cells: string[]): string => '| ' + cells.map((c, i) => (i >= 2 && i !== 5 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ') + ' |'
process.stdout.write([fmt(header), '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|', ...table.map(fmt)].join('\n') + '\n')
if (notes.length > 0) process.stdout.write('\n' + notes.join('\n') + '\n')
process.exitCode = rows.every((r) => r.identical === 'yes') ? 0 : 1
