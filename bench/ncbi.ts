// NCBI-disease benchmark: train a CPU preset from scratch on train.pubtator (WordPiece vocabulary
// learnt from the training text), select the epoch on devel, then score test once.
//
//   npm run bench:ncbi -- [--data DIR] [--preset cpu-tiny] [--epochs 12] [--batch-size 16]
//       [--lr 1e-3] [--max-length 128] [--vocab-size 8000] [--seed 42] [--warmup-ratio 0.1]
//       [--patience N] [--backend wasm|cpu|tensorflow] [--out DIR] [--keep-types] [--doc-level]
//       [--budget-min 20]
//
// --budget-min stops training (cleanly, between steps) when the time is up; the best devel
// checkpoint so far is then scored on test, and the table says training was cut short.
// --data defaults to ../shared/data/ncbi-disease (relative to the project root). All four NCBI
// types are mapped to one type "Disease", as the standard benchmarks do (--keep-types keeps them).
// Prints progress on stderr, a table and one JSON line on stdout.

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import * as tf from '@tensorflow/tfjs-core'
import type { CorpusDocument } from '../src/shared/domain'
import { readCorpusFile } from '../src/core/corpus'
import { initBackend, useBackend, type BackendName } from '../src/core/model/backend'
import { BertTokenClassifier } from '../src/core/model/bert'
import { loadCheckpoint } from '../src/core/model/checkpoint'
import { presetConfig } from '../src/core/model/presets'
import { PRESET_NAMES, type PresetName } from '../src/shared/recipes'
import { buildLabelMap } from '../src/core/nlp/bio'
import { documentsToExamples } from '../src/core/nlp/examples'
import { WordPieceTokenizer } from '../src/core/nlp/tokenizer'
import { trainWordPieceVocab } from '../src/core/nlp/vocab-trainer'
import { evaluate } from '../src/core/eval/evaluate'
import { train } from '../src/core/train/loop'

const { values: a } = parseArgs({
  options: {
    data: { type: 'string', default: resolve(__dirname, '../../shared/data/ncbi-disease') },
    preset: { type: 'string', default: 'cpu-tiny' },
    epochs: { type: 'string', default: '12' },
    'batch-size': { type: 'string', default: '16' },
    lr: { type: 'string', default: '1e-3' },
    'max-length': { type: 'string', default: '128' },
    'vocab-size': { type: 'string', default: '8000' },
    seed: { type: 'string', default: '42' },
    'warmup-ratio': { type: 'string', default: '0.1' },
    'weight-decay': { type: 'string', default: '0.01' },
    patience: { type: 'string' },
    backend: { type: 'string' },
    out: { type: 'string' },
    'keep-types': { type: 'boolean', default: false },
    'doc-level': { type: 'boolean', default: false },
    cased: { type: 'boolean', default: false },
    'budget-min': { type: 'string', default: '20' },
  },
})

function fail(msg: string): never {
  process.stderr.write(`bench:ncbi: ${msg}\n`)
  process.exit(2)
}

const num = (k: keyof typeof a): number => {
  const n = Number(a[k])
  if (!Number.isFinite(n)) fail(`--${k} must be a number`)
  return n
}

async function readSplit(name: string): Promise<CorpusDocument[]> {
  const path = join(a.data!, `${name}.pubtator`)
  try {
    const docs = (await readCorpusFile(path, 'pubtator')).documents
    return a['keep-types'] ? docs : docs.map((d) => ({ ...d, mentions: d.mentions.map((m) => ({ ...m, type: 'Disease' })) }))
  } catch (e) {
    fail(`${path}: ${(e as Error).message} (set --data DIR to the folder holding train/devel/test.pubtator)`)
  }
}

async function main(): Promise<void> {
  const preset = a.preset as PresetName
  if (!PRESET_NAMES.includes(preset)) fail(`unknown --preset ${a.preset} (${PRESET_NAMES.join(', ')})`)
  const backend = a.backend ? await useBackend(a.backend as BackendName) : await initBackend({ logger: (l) => process.stderr.write(l + '\n') })
  const t0 = performance.now()
  const [trainDocs, devDocs, testDocs] = [await readSplit('train'), await readSplit('devel'), await readSplit('test')]
  const lowercase = !a.cased
  const vocab = trainWordPieceVocab(
    trainDocs.map((d) => d.text),
    { vocabSize: num('vocab-size'), lowercase },
  )
  const tokenizer = new WordPieceTokenizer(vocab.tokens, { lowercase })
  const labelMap = buildLabelMap(new Set(trainDocs.flatMap((d) => d.mentions.map((m) => m.type))))
  const seed = num('seed')
  const model = BertTokenClassifier.random(presetConfig(preset, { vocabSize: vocab.tokens.length }), seed, { default: labelMap.labels })
  const params = model.numParameters()
  const maxLength = num('max-length')
  const sentenceLevel = !a['doc-level']
  const out = a.out ?? mkdtempSync(join(tmpdir(), 'fastbioner-bench-ncbi-'))
  process.stderr.write(
    `bench:ncbi: ${preset} (${(params / 1e6).toFixed(2)}M params, vocab ${vocab.tokens.length}), ${trainDocs.length}/${devDocs.length}/${testDocs.length} documents, backend ${backend.name}\n`,
  )

  let last = 0
  const budget = new AbortController()
  const timer = setTimeout(() => {
    process.stderr.write(`  time budget of ${a['budget-min']} min reached: stopping after this step\n`)
    budget.abort()
  }, num('budget-min') * 60_000)
  const res = await train({
    model,
    tokenizer,
    train: trainDocs,
    dev: devDocs,
    outDir: out,
    epochs: num('epochs'),
    batchSize: num('batch-size'),
    lr: num('lr'),
    warmupRatio: num('warmup-ratio'),
    weightDecay: num('weight-decay'),
    seed,
    maxLength,
    sentenceLevel,
    patience: a.patience ? num('patience') : undefined,
    signal: budget.signal,
    onProgress: (p) => {
      const now = performance.now()
      if (p.kind === 'eval') process.stderr.write(`  epoch ${p.epoch}/${p.epochs} loss ${p.loss.toFixed(4)} devel F1 ${p.devF1!.toFixed(4)} (${((now - t0) / 1000).toFixed(0)}s)\n`)
      else if (now - last > 15000) {
        last = now
        process.stderr.write(`  step ${p.step}/${p.totalSteps} loss ${p.loss.toFixed(4)} ${p.tokensPerSecond.toFixed(0)} tok/s eta ${p.etaSeconds.toFixed(0)}s\n`)
      }
    },
  })
  clearTimeout(timer)
  model.dispose()
  if (res.bestEpoch === null) fail(`no epoch finished within --budget-min ${a['budget-min']}; raise it or use a smaller --preset`)

  // Test once, with the selected (best devel) checkpoint.
  const best = await loadCheckpoint(out)
  const testTokens = documentsToExamples(testDocs, tokenizer, labelMap, { maxLength, sentenceLevel }).reduce((s, e) => s + e.inputIds.length, 0)
  const ti = performance.now()
  const test = await evaluate(best.model, tokenizer, testDocs, { maxLength, sentenceLevel, batchSize: 32 })
  const inferSeconds = (performance.now() - ti) / 1000
  best.model.dispose()
  if (!a.out) rmSync(out, { recursive: true, force: true })
  const wall = (performance.now() - t0) / 1000

  const bestEpoch = res.epochs.find((e) => e.epoch === res.bestEpoch)
  const rows: Array<[string, string]> = [
    ['preset', `${preset} (${(params / 1e6).toFixed(2)}M params)`],
    ['backend', backend.name],
    ['epochs run / best', `${res.epochs.length} of ${num('epochs')} / ${res.bestEpoch}${res.cancelled ? ' (time budget hit)' : ''}`],
    ['devel P / R / F1 (best)', bestEpoch?.dev ? `${f(bestEpoch.dev.precision)} / ${f(bestEpoch.dev.recall)} / ${f(bestEpoch.dev.f1)}` : '-'],
    ['test P / R / F1', `${f(test.overall.precision)} / ${f(test.overall.recall)} / ${f(test.overall.f1)}`],
    ['test token accuracy', f(test.token_accuracy)],
    ['train time', `${res.trainSeconds.toFixed(0)} s (${res.steps} steps)`],
    ['train tokens/s', res.tokensPerSecond.toFixed(0)],
    ['devel eval time', `${res.evalSeconds.toFixed(0)} s`],
    ['test tagging tokens/s', (testTokens / inferSeconds).toFixed(0)],
    ['wall time', `${wall.toFixed(0)} s`],
  ]
  const w = Math.max(...rows.map((r) => r[0].length))
  process.stdout.write(`\nNCBI-disease (${a['keep-types'] ? 'four types' : 'one type Disease'}, exact spans), trained from scratch\n`)
  process.stdout.write(`| ${'measure'.padEnd(w)} | value |\n|${'-'.repeat(w + 2)}|-------|\n`)
  for (const [k, v] of rows) process.stdout.write(`| ${k.padEnd(w)} | ${v} |\n`)
  process.stdout.write(`  per epoch: ${res.epochs.map((e) => `${e.epoch}:${e.loss.toFixed(3)}/${e.dev ? f(e.dev.f1) : '-'}`).join(' ')}\n`)
  process.stdout.write(
    JSON.stringify({
      bench: 'ncbi',
      preset,
      params,
      backend: backend.name,
      settings: { epochs: num('epochs'), batchSize: num('batch-size'), lr: num('lr'), maxLength, vocabSize: vocab.tokens.length, seed, sentenceLevel },
      epochs: res.epochs,
      bestEpoch: res.bestEpoch,
      cutByBudget: res.cancelled,
      test: { precision: test.overall.precision, recall: test.overall.recall, f1: test.overall.f1, token_accuracy: test.token_accuracy },
      trainSeconds: res.trainSeconds,
      trainTokensPerSecond: res.tokensPerSecond,
      testTokensPerSecond: testTokens / inferSeconds,
      wallSeconds: wall,
      numTensorsAtEnd: tf.memory().numTensors,
    }) + '\n',
  )
}

function f(x: number): string {
  return x.toFixed(4)
}

main().catch((e) => {
  process.stderr.write(`bench:ncbi: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`)
  process.exit(1)
})
