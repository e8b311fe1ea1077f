// Batch-tagging throughput (fastbioner tag --out-dir, core/batch/run) and what it means for all of
// PubMed: abstracts per second per core with the default model (or --model), streamed from
// gzipped PubTator files built from the NCBI-disease abstracts, and the projected wall time
// for the PubMed baseline (≈ 38 M records) on N nodes, one single-threaded shard per core.
//
//   npm run bench:batch -- [--model DIR] [--copies 4] [--threads 1,2] [--records 38000000]
//     [--cores-per-node 32] [--nodes 1,10,50,100]
//
// The projection assumes shards scale linearly with cores (independent processes, no shared
// state except the file system) and PubMed records as long as NCBI-disease abstracts (titles
// with abstracts; records without an abstract are shorter, so it errs long). Load: other
// processes on this machine slow it; the load average is printed with the figures.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { gzipSync } from 'node:zlib'
import { readPubtator, writePubtator } from '../src/core/corpus'
import { expandInputs, tagFiles } from '../src/core/batch/run'
import { findDefaultModel } from '../src/core/model/default-model'
import { openTagger } from '../src/core/tag/open'

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : fallback
}

async function main(): Promise<void> {
  const data = resolve(__dirname, '../../shared/data/ncbi-disease')
  const modelDir = arg('model', '') || findDefaultModel().dir
  if (!modelDir) throw new Error('no --model and no default model installed')
  const copies = Number(arg('copies', '4'))
  const threadsList = arg('threads', '1,2').split(',').map(Number)
  const records = Number(arg('records', '38000000'))
  const coresPerNode = Number(arg('cores-per-node', '32'))
  const nodes = arg('nodes', '1,10,50,100').split(',').map(Number)

  const docs = ['train', 'devel', 'test'].flatMap((s) => readPubtator(readFileSync(join(data, `${s}.pubtator`), 'utf8'), `${s}.pubtator`).documents)
  const dir = mkdtempSync(join(tmpdir(), 'bench-batch-'))
  try {
    const inDir = join(dir, 'in')
    mkdirSync(inDir)
    for (let c = 0; c < copies; c++) {
      writeFileSync(join(inDir, `pubmed-sample-${c}.pubtator.gz`), gzipSync(writePubtator(docs.map((d) => ({ ...d, id: `${c}${d.id}`, mentions: [] })))))
    }
    const inputs = expandInputs([inDir])
    const total = docs.length * copies
    console.log(`model ${modelDir}; ${inputs.length} gzipped PubTator files, ${total} abstracts (NCBI-disease, ${copies} copies)`)
    console.log('| threads | abstracts/s | abstracts/s per core | pieces/s | load before | load after |')
    console.log('|---|---|---|---|---|---|')
    let perCore = 0
    for (const threads of threadsList) {
      const tagger = await openTagger(modelDir, { engine: 'onnx', export: 'memory', threads })
      const l0 = loadavg()[0]
      const r = await tagFiles({ inputs, outDir: join(dir, `out-${threads}`), format: 'pubtator', shard: { index: 0, count: 1 }, tagger, model: 'bench' })
      await tagger.dispose()
      const pieces = r.files.reduce((a, f) => a + f.pieces, 0)
      const rate = r.documents / r.seconds
      if (threads === 1) perCore = rate
      console.log(`| ${threads} | ${rate.toFixed(1)} | ${(rate / threads).toFixed(1)} | ${Math.round(pieces / r.seconds)} | ${l0.toFixed(2)} | ${loadavg()[0].toFixed(2)} |`)
    }
    if (perCore > 0) {
      console.log(`\nProjection for ${records.toLocaleString('en')} records at ${perCore.toFixed(1)} abstracts/s per core (one 1-thread shard per core, ${coresPerNode} cores per node):`)
      console.log('| nodes | cores | wall time |')
      console.log('|---|---|---|')
      for (const n of nodes) {
        const hours = records / (perCore * coresPerNode * n) / 3600
        const wall = hours >= 48 ? `${(hours / 24).toFixed(1)} days` : hours >= 1 ? `${hours.toFixed(1)} h` : `${(hours * 60).toFixed(1)} min`
        console.log(`| ${n} | ${n * coresPerNode} | ${wall} |`)
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e))
  process.exit(1)
})
