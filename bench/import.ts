// Import benchmark: N PubTator abstracts → parse (corpus reader) → import into a fresh workspace.
//   npm run bench:import                        10 000 synthetic abstracts (~250 words, ~8 mentions)
//   npm run bench:import -- --docs 20000
//   npm run bench:import -- --from ../shared/data/ncbi-disease/train.pubtator   (replicated up to --docs)
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { readCorpusFile } from '../src/core/corpus'
import { Workspace } from '../src/core/store'
import { Rng } from '../src/core/rng'

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : undefined
}

/** Seeded so that every run benchmarks the same corpus. */
function rng(seed: number): () => number {
  const r = new Rng(seed)
  return () => r.next()
}

const WORDS = (
  'the of and in to a with for was were is patients study results we that by as on from these this are ' +
  'cells expression protein gene mutation clinical analysis treatment risk associated increased levels ' +
  'significantly observed compared group cohort response tumour receptor pathway activity role function ' +
  'using data showed found between higher lower after during may which both mice human model induced'
).split(' ')
const ENTITIES: Array<[string, string, string]> = [
  ['breast cancer', 'Disease', 'D001943'],
  ['cystic fibrosis', 'Disease', 'D003550'],
  ['type 2 diabetes', 'Disease', 'D003924'],
  ['Alzheimer disease', 'Disease', 'D000544'],
  ['hypertension', 'Disease', 'D006973'],
  ['colorectal adenocarcinoma', 'Disease', 'D015179'],
  ['cisplatin', 'Chemical', 'D002945'],
  ['aspirin', 'Chemical', 'D001241'],
  ['tamoxifen', 'Chemical', 'D013629'],
  ['beta-catenin', 'Gene', '1499'],
  ['BRCA1', 'Gene', '672'],
  ['TP53', 'Gene', '7157'],
]

/** One PubTator document: ~12-word title, ~240-word abstract, ~8 mentions at word boundaries. */
function syntheticDoc(id: string, next: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!
  const mentions: string[] = []
  let text = ''
  const part = (words: number, mentionCount: number): string => {
    const at = new Set(Array.from({ length: mentionCount }, () => Math.floor(next() * words)))
    let s = ''
    for (let w = 0; w < words; w++) {
      if (s) s += ' '
      if (at.has(w)) {
        const [name, type, concept] = pick(ENTITIES)
        const start = text.length + s.length
        mentions.push(`${id}\t${start}\t${start + name.length}\t${name}\t${type}\t${concept}`)
        s += name
      } else s += pick(WORDS)
    }
    return `${s}.`
  }
  const title = part(12, 1)
  text = `${title} `
  const abstract = part(238, 7)
  return `${id}|t|${title}\n${id}|a|${abstract}\n${mentions.join('\n')}\n\n`
}

/** Replicates a real PubTator file with fresh ids (`PMID_k`) until `n` documents. */
function replicate(content: string, n: number): string {
  const blocks = content.split(/\n\s*\n/).filter((b) => b.trim())
  const out: string[] = []
  for (let k = 0; out.length < n; k++) {
    for (const b of blocks) {
      if (out.length >= n) break
      out.push(b.replace(/^([^\t|\n]+)(?=[|\t])/gm, `$1_${k}`))
    }
  }
  return `${out.join('\n\n')}\n\n`
}

async function main(): Promise<void> {
  const n = Number(arg('docs') ?? 10_000)
  const from = arg('from')
  const dir = mkdtempSync(join(tmpdir(), 'fastbioner-bench-'))
  try {
    const file = join(dir, 'corpus.pubtator')
    let source: string
    if (from) {
      source = `${resolve(from)} ×${n}`
      writeFileSync(file, replicate(readFileSync(resolve(from), 'utf8'), n))
    } else {
      source = 'synthetic'
      const next = rng(42)
      const parts: string[] = []
      for (let i = 0; i < n; i++) parts.push(syntheticDoc(String(30_000_000 + i), next))
      writeFileSync(file, parts.join(''))
    }
    const mb = statSync(file).size / 1e6

    let t0 = performance.now()
    const { documents, issues } = await readCorpusFile(file, 'pubtator')
    const parseS = (performance.now() - t0) / 1000
    if (issues.some((i) => i.severity === 'error')) throw new Error(`parse errors: ${JSON.stringify(issues.slice(0, 3))}`)
    const mentions = documents.reduce((s, d) => s + d.mentions.length, 0)
    const words = documents.reduce((s, d) => s + d.text.split(/\s+/).length, 0)

    const ws = Workspace.open(join(dir, 'bench.sqlite'), { user: 'bench' })
    let progressCalls = 0
    const cpu0 = process.cpuUsage()
    t0 = performance.now()
    const r = await ws.importDocuments(documents, file, { onProgress: () => void progressCalls++ })
    const importS = (performance.now() - t0) / 1000
    const cpu = process.cpuUsage(cpu0)
    const importCpuS = (cpu.user + cpu.system) / 1e6

    t0 = performance.now()
    ws.listDocuments({ limit: 100 })
    const listMs = performance.now() - t0
    t0 = performance.now()
    const hits = ws.listDocuments({ query: 'cisplatin', limit: 100 }).total
    const searchMs = performance.now() - t0
    ws.close()
    const dbMb = statSync(join(dir, 'bench.sqlite')).size / 1e6

    const rows: Array<[string, string]> = [
      ['source', source],
      ['file MB', mb.toFixed(1)],
      ['docs', String(documents.length)],
      ['imported', String(r.imported)],
      ['duplicates skipped', String(r.duplicates.length)],
      ['parse warnings', String(issues.length)],
      ['progress callbacks', String(progressCalls)],
      ['words/doc', (words / Math.max(1, documents.length)).toFixed(0)],
      ['mentions', String(mentions)],
      ['parse s', parseS.toFixed(2)],
      ['import s', importS.toFixed(2)],
      // Wall time suffers when other processes share the cores; CPU time of this process does not.
      ['import cpu s', importCpuS.toFixed(2)],
      ['docs/s (import)', (r.imported / importS).toFixed(0)],
      ['docs/s (parse+import)', (documents.length / (parseS + importS)).toFixed(0)],
      ['list first page ms', listMs.toFixed(1)],
      [`search "cisplatin" ms (${hits} hits)`, searchMs.toFixed(1)],
      ['workspace MB', dbMb.toFixed(1)],
    ]
    const w = Math.max(...rows.map(([k]) => k.length))
    console.log(`${'metric'.padEnd(w)}  value`)
    console.log(`${'-'.repeat(w)}  ${'-'.repeat(12)}`)
    for (const [k, v] of rows) console.log(`${k.padEnd(w)}  ${v}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
