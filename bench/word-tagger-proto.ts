// Prototype run of the word-level recurrent tagger on one IOB corpus of ../shared/data/mtl-bioner:
// devel F1 (conlleval chunks, Viterbi) after each epoch, words/s of training.
//   npx tsx bench/word-tagger-proto.ts --corpus NCBI-disease-IOB --epochs 30 --minutes 20 --threads 1 --seed 1 --out DIR
import { readFileSync, mkdirSync, appendFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { tagsToChunks } from '../src/core/nlp/bio'
import { WordFeaturizer } from '../src/core/nlp/word-features'
import { initWordTaggerParams, wordBatch, wordBucket, wordTaggerConfig } from '../src/core/model/word-tagger'
import { crfParamNames, viterbi } from '../src/core/model/crf'
import { OrtWordTaggerTrainer } from '../src/core/train/word-trainer'
import { Rng, deriveSeed } from '../src/core/rng'

const { values: a } = parseArgs({
  options: {
    corpus: { type: 'string', default: 'NCBI-disease-IOB' },
    data: { type: 'string', default: join(__dirname, '..', '..', 'shared', 'data', 'mtl-bioner') },
    epochs: { type: 'string', default: '30' },
    minutes: { type: 'string', default: '20' },
    threads: { type: 'string', default: '1' },
    seed: { type: 'string', default: '1' },
    batch: { type: 'string', default: '16' },
    lr: { type: 'string', default: '2e-3' },
    out: { type: 'string', default: '/tmp/word-tagger-proto' },
  },
})

type Sent = { words: string[]; tags: string[] }
function readIob(path: string): Sent[] {
  const out: Sent[] = []
  let cur: Sent = { words: [], tags: [] }
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.trim()) {
      if (cur.words.length) out.push(cur)
      cur = { words: [], tags: [] }
      continue
    }
    const parts = line.split('\t')
    if (parts[0] === '-DOCSTART-') continue
    cur.words.push(parts[0])
    cur.tags.push(parts[parts.length - 1])
  }
  if (cur.words.length) out.push(cur)
  return out
}

async function main() {
  const dir = join(a.data!, a.corpus!)
  const train = readIob(join(dir, 'train.tsv'))
  const dev = readIob(join(dir, 'devel.tsv'))
  mkdirSync(a.out!, { recursive: true })
  const logFile = join(a.out!, 'log.txt')
  const log = (m: string) => {
    const line = `${new Date().toISOString().slice(11, 19)} ${m}`
    console.log(line)
    appendFileSync(logFile, line + '\n')
  }
  const labels = [...new Set(train.flatMap((s) => s.tags))].sort()
  const lab = new Map(labels.map((l, i) => [l, i]))
  const f = WordFeaturizer.learn(train.flatMap((s) => s.words))
  const config = wordTaggerConfig(f)
  const heads = [{ name: 'default', numLabels: labels.length }]
  const seed = Number(a.seed)
  const params = initWordTaggerParams(config, heads, seed)
  const threads = Number(a.threads)
  const trainer = new OrtWordTaggerTrainer({ config, heads, params, optimizer: { lr: Number(a.lr), weightDecay: 0, maxGradNorm: 5 }, threads })
  const evaluator = new OrtWordTaggerTrainer({ config, heads, params, optimizer: { lr: 0 }, threads, dropout: false })
  log(`${a.corpus}: ${train.length} train / ${dev.length} devel sentences; ${f.words.length} words, ${f.chars.length} chars; labels ${labels.join(' ')}`)
  const crfN = crfParamNames('default')

  const devF1 = async (): Promise<number> => {
    let tp = 0
    let np = 0
    let ng = 0
    const order = dev.map((_, i) => i).sort((x, y) => dev[x].words.length - dev[y].words.length)
    for (let i = 0; i < order.length; i += 64) {
      const idx = order.slice(i, i + 64)
      const T = wordBucket(Math.max(...idx.map((k) => dev[k].words.length)))
      const b = wordBatch(f, config, idx.map((k) => dev[k].words), T)
      const em = (await evaluator.emissions(b, 0)).default
      const C = labels.length
      const crf = { transitions: params.get(crfN.transitions)!, start: params.get(crfN.start)!, end: params.get(crfN.end)! }
      idx.forEach((k, r) => {
        const n = dev[k].words.length
        const path = viterbi(em.subarray(r * T * C, (r * T + n) * C), n, C, crf)
        const pred = tagsToChunks(Array.from(path, (p) => labels[p]))
        const gold = tagsToChunks(dev[k].tags)
        const key = (c: { type: string; start: number; end: number }) => `${c.type}|${c.start}|${c.end}`
        const g = new Set(gold.map(key))
        tp += pred.filter((c) => g.has(key(c))).length
        np += pred.length
        ng += gold.length
      })
    }
    const p = np ? tp / np : 0
    const r = ng ? tp / ng : 0
    return p + r ? (2 * p * r) / (p + r) : 0
  }

  const t0 = Date.now()
  const deadline = t0 + Number(a.minutes) * 60_000
  const B = Number(a.batch)
  let best = { f1: -1, epoch: 0 }
  const unkRng = new Rng(deriveSeed(seed, 7))
  for (let epoch = 1; epoch <= Number(a.epochs); epoch++) {
    const rng = new Rng(deriveSeed(seed, epoch))
    const keyed = train.map((s, i) => ({ i, k: s.words.length + rng.next() }))
    keyed.sort((x, y) => x.k - y.k)
    const batches: number[][] = []
    for (let i = 0; i < keyed.length; i += B) batches.push(keyed.slice(i, i + B).map((x) => x.i))
    rng.shuffle(batches)
    const te = Date.now()
    let words = 0
    let loss = 0
    for (let s = 0; s < batches.length; s++) {
      const idx = batches[s]
      const T = wordBucket(Math.max(...idx.map((k) => train[k].words.length)))
      const b = wordBatch(f, config, idx.map((k) => train[k].words), T, unkRng)
      const y = new Int32Array(b.batchSize * T).fill(-100)
      idx.forEach((k, r) => train[k].tags.forEach((t, j) => (y[r * T + j] = lab.get(t)!)))
      const r = await trainer.step(b, { default: y }, deriveSeed(seed, epoch, s))
      loss += r.loss
      words += b.numWords
    }
    const secs = (Date.now() - te) / 1000
    const f1 = await devF1()
    if (f1 > best.f1) best = { f1, epoch }
    log(`epoch ${epoch} loss ${(loss / batches.length).toFixed(4)} devel F1 ${f1.toFixed(4)} (${Math.round(words / secs)} words/s train, ${secs.toFixed(0)} s) best ${best.f1.toFixed(4)}@${best.epoch} elapsed ${((Date.now() - t0) / 60000).toFixed(1)} min`)
    if (Date.now() > deadline) {
      log('time budget reached')
      break
    }
  }
  writeFileSync(join(a.out!, 'result.json'), JSON.stringify({ corpus: a.corpus, seed, best, minutes: (Date.now() - t0) / 60000 }, null, 1))
  await trainer.dispose()
  await evaluator.dispose()
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
