// Two or more versions of the code (checkouts, e.g. `git worktree add ../base <commit>` beside this
// one), each loaded into this one process, their word-tagger training steps run in turns: every
// round times a few steps of each version, so the machine's drift (PyTorch's own speed has moved
// 67 % within a session here) hits them alike. Medians and quartiles of the rounds. Quiet machine
// only; the order of the versions is the order given, so run it again reversed.
//
//   npx tsx bench/ab-versions.ts --roots ../base,. [--words 64] [--heads 1,4] [--batch 16] [--lstm-hidden 300] [--threads 2] [--rounds 15] [--iters 4]
//   npx tsx bench/ab-versions.ts --roots ../base,. --kind bert [--preset cpu-small] [--seq 128] [--batch 16] [--threads 2] [--rounds 15] [--iters 4]
//
// A checkout needs its own node_modules (a link to this one's will do). --kind word-lstm (the
// default): the word tagger's step (core/train/word-trainer); --kind bert: the encoder's token
// classification step (core/train/ort), one head of 3 labels, on the batch bench/ab-step.ts uses.
import { existsSync } from 'node:fs'
import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { benchCli } from './cli'
import type { PresetName } from '../src/shared/recipes'
import { wordStepInputs } from './word-step'
import { bertStepInputs } from './bert-step'

const { fail, positiveInt } = benchCli('ab-versions')

function options(argv: string[]) {
  const o = { roots: [] as string[], kind: 'word-lstm' as 'word-lstm' | 'bert', preset: 'cpu-small' as PresetName, seq: 128, words: 64, heads: [1, 4], batch: 16, lstmHidden: 300, threads: 2, rounds: 15, iters: 4 }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    const v = () => argv[++i] ?? fail(`${a} needs a value`)
    if (a === '--roots') o.roots = v().split(',').map((r) => resolve(r))
    else if (a === '--kind') {
      const k = v()
      if (k === 'word-lstm' || k === 'bert') o.kind = k
      else fail(`--kind is word-lstm or bert, not ${k}`)
    } else if (a === '--preset') o.preset = v() as PresetName
    else if (a === '--seq') o.seq = positiveInt(v(), a)
    else if (a === '--words') o.words = positiveInt(v(), a)
    else if (a === '--heads') o.heads = v().split(',').map((h) => positiveInt(h, a))
    else if (a === '--batch') o.batch = positiveInt(v(), a)
    else if (a === '--lstm-hidden') o.lstmHidden = positiveInt(v(), a)
    else if (a === '--threads') o.threads = positiveInt(v(), a)
    else if (a === '--rounds') o.rounds = positiveInt(v(), a)
    else if (a === '--iters') o.iters = positiveInt(v(), a)
    else fail(`unknown option ${a}`)
  }
  if (o.roots.length < 2) fail('--roots needs two checkouts or more, comma-separated')
  for (const r of o.roots) if (!existsSync(resolve(r, 'src/core/train/word-trainer.ts'))) fail(`${r} is not a checkout of this project (no src/core/train/word-trainer.ts)`)
  return o
}

const at = (root: string, p: string) => import(pathToFileURL(resolve(root, p)).href)

/** One version's modules, imported from its own checkout (a separate module graph per root). */
async function load(root: string) {
  const [{ Rng }, { OrtWordTaggerTrainer }, { WordFeaturizer }, wt, { zipfSampler }] = await Promise.all([
    at(root, 'src/core/rng.ts'), at(root, 'src/core/train/word-trainer.ts'), at(root, 'src/core/nlp/word-features.ts'), at(root, 'src/core/model/word-tagger.ts'), at(root, 'bench/zipf.ts'),
  ])
  return { Rng, OrtWordTaggerTrainer, WordFeaturizer, zipfSampler, ...wt }
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

type Variant = { name: string; firstStepS: number; step: () => Promise<unknown>; dispose: () => Promise<void>; ms: number[] }

/** The encoder's step in one version, on the same weights and batch in every version (./bert-step). */
async function bertVariant(root: string, o: ReturnType<typeof options>): Promise<Variant> {
  const [{ Rng }, { encoderParamShapes }, { presetConfig }, { collate }, { OrtTokenClassifierTrainer }] = await Promise.all([
    at(root, 'src/core/rng.ts'), at(root, 'src/core/model/bert.ts'), at(root, 'src/core/model/presets.ts'), at(root, 'src/core/train/batching.ts'), at(root, 'src/core/train/ort.ts'),
  ])
  const { config, params, batch, heads } = bertStepInputs({ Rng, encoderParamShapes, presetConfig, collate }, o)
  const trainer = await OrtTokenClassifierTrainer.create({ config, heads, params: params(), optimizer: { lr: 5e-5 }, threads: o.threads, executionProviders: ['cpu'] })
  let i = 0
  const t0 = performance.now()
  await trainer.step(batch, { default: batch.labels }, i++)
  return { name: `${root} · ${o.preset}`, firstStepS: (performance.now() - t0) / 1000, step: () => trainer.step(batch, { default: batch.labels }, i++), dispose: () => trainer.dispose(), ms: [] }
}

async function main(): Promise<void> {
  const o = options(process.argv.slice(2))
  const vocab = 25000
  const variants: Variant[] = []
  for (const root of o.roots) {
    if (o.kind === 'bert') {
      variants.push(await bertVariant(root, o))
      continue
    }
    const m = await load(root)
    // The same sentences and labels for every version (./word-step, with the version's own modules).
    const { featurizer, config, sentences, T, heads: headsOf } = wordStepInputs(m, { vocab, batch: o.batch, words: o.words, lstmHidden: o.lstmHidden })
    const batch = m.wordBatch(featurizer, config, sentences, T, new m.Rng(0))
    for (const n of o.heads) {
      const { list: heads, labels: byHead } = headsOf(n)
      const trainer = new m.OrtWordTaggerTrainer({ config, heads, params: m.initWordTaggerParams(config, heads, 1), optimizer: { lr: 2e-3, weightDecay: 0, maxGradNorm: 5 }, threads: o.threads, executionProviders: ['cpu'] })
      let i = 0
      const t0 = performance.now()
      await trainer.step(batch, byHead, i++) // opens the bucket's session
      variants.push({ name: `${root} · ${n} head(s)`, firstStepS: (performance.now() - t0) / 1000, step: () => trainer.step(batch, byHead, i++), dispose: () => trainer.dispose(), ms: [] })
    }
  }
  for (const v of variants) for (let k = 0; k < 2; k++) await v.step()
  for (let r = 0; r < o.rounds; r++) {
    for (const v of variants) {
      const t0 = performance.now()
      for (let k = 0; k < o.iters; k++) await v.step()
      v.ms.push((performance.now() - t0) / o.iters)
    }
  }
  const what = o.kind === 'bert' ? `encoder step (${o.preset}), ${o.batch} × ${o.seq} pieces` : `word-tagger step, ${o.batch} × ${o.words} words, 2 × ${o.lstmHidden}`
  console.log(`# ${what}, ${o.threads} threads; ${o.rounds} rounds × ${o.iters} steps each, in turns; load ${loadavg()[0].toFixed(2)}`)
  console.log('| version · heads | median ms | quartiles | first step (opens the session) |\n|---|---|---|---|')
  for (const v of variants) {
    const s = [...v.ms].sort((a, b) => a - b)
    console.log(`| ${v.name} | ${quantile(s, 0.5).toFixed(1)} | ${quantile(s, 0.25).toFixed(1)}–${quantile(s, 0.75).toFixed(1)} | ${v.firstStepS.toFixed(1)} s |`)
  }
  for (const v of variants) await v.dispose()
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
