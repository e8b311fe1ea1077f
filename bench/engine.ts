// Engine benchmark: forward and training-step throughput of each model preset per engine (the
// onnxruntime trainer and each tfjs backend), next to PyTorch on the same shapes
// (../shared/bench/torch_bert_ref.py).
//
//   npm run bench:engine -- [--presets cpu-small,cpu-tiny] [--seq 64,128] [--batch 16]
//       [--backends onnxruntime,wasm,cpu,tensorflow] [--iters 5] [--budget-s 120] [--no-torch]
//       [--torch-script PATH] [--torch-threads 2] [--threads N] [--profile] [--wait-quiet SECONDS] [--allow-noisy]
//       [--kinds bert,bert-char,word-lstm,char-lm] [--words 32] [--lstm-hidden 300] [--lm-hidden 256] [--lm-bptt 100] [--rounds N]
//
// --rounds N (BERT rows): N rounds, each timing ours and then PyTorch (forward and step), and the
// row gives the medians over rounds, ratios the median of each round's own ratio. This machine's
// speed drifts by 10-25 % from minute to minute (the same command read PyTorch's step at 4 330 and
// 4 862 tok/s within ten minutes), so one pair of measurements minutes apart can say 1.25× or 1.49×;
// alternating pairs compare like with like. The spread of the rounds' ratios is printed below the row;
// rounds that disagree by more than MAX_ROUND_SPREAD give no ratio (bench/torch-ref).
//
// --kinds bert-char adds, per preset and length, the onnxruntime row of the same encoder with the
// character channel (core/model/char-cnn: a character CNN + shape flags per word, added to every
// piece; words of 3-20 of 86 characters as NCBI-disease's, repeated in a batch as text repeats
// them, see charRows): what the channel costs against the plain row. PyTorch has no such model,
// so its columns stay empty there.
//
// --kinds word-lstm adds a row for the word tagger (core/model/word-tagger: word embedding +
// character CNN + shape flags → BiLSTM 2 × --lstm-hidden → CRF; 300 by default, the default-model
// recipe's teachers and student) at batch × --words words: its tagging graph
// (ONNX's LSTM) and its training step (unrolled graph with the CRF + HostAdamW), next to the
// PyTorch model it was built after (bench/torch_word_tagger_ref.py, the Tagger of
// ../shared/bench/torch_bilstm_ref.py) on the same shapes.
//
// --kinds char-lm adds a row for the character language model (core/model/char-lm: forward and
// backward LSTM LMs, --lm-hidden each) at batch streams × --lm-bptt characters, counting both
// directions' characters: the tagging-time graph (ONNX's LSTM over both directions) and a training
// chunk (unrolled graph, cross-entropy, carried state + HostAdamW), next to bench/torch_charlm_ref.py
// --speed (two nn.LSTM models, one per direction) on the same shapes.
//
// A training step is forward (dropout on) + token cross-entropy + backward + AdamW, like the
// PyTorch reference's. onnxruntime: forward = the exported model.onnx graph, step = the training
// graph (core/onnx/training.ts) + HostAdamW, on --threads intra-op threads (default: as torch).
// PyTorch runs with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed from its environment, so
// OpenBLAS picks its kernels for this CPU itself. Times are medians of wall-clock iterations after one
// warm-up; each measurement runs as many iterations (≤ --iters, ≥ 1) as fit in --budget-s, and
// one whose single run is estimated above the budget is skipped with the estimate. The "other
// cores" column is the CPU other processes used while timing: above ~0.15 the numbers are
// disturbed and should be rerun (PyTorch's column is affected the same way).

import { NOISY_CORES, ratioToTorch, roundsRatioToTorch, runTorchRef, torchMissing } from './torch-ref'
import { markLoad, otherCoresSince, waitQuiet } from '../src/core/machine-load'
import { cpus, loadavg } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import * as tf from '@tensorflow/tfjs-core'
import { availableBackends, useBackend, type BackendName } from '../src/core/model/backend'
import { BertTokenClassifier, encoderParamShapes, type BertConfig } from '../src/core/model/bert'
import { Rng } from '../src/core/rng'
import { exportOnnx } from '../src/core/onnx/export'
import { createOrtSession, loadOnnxRuntime } from '../src/core/onnx/session'
import { zipfSampler } from './zipf'
import { collate } from '../src/core/train/batching'
import { OrtGraphRunner, OrtTokenClassifierTrainer, toInt64 } from '../src/core/train/ort'
import { forwardFlops, presetConfig } from '../src/core/model/presets'
import { PRESET_NAMES, type PresetName } from '../src/shared/recipes'
import { WordFeaturizer } from '../src/core/nlp/word-features'
import { charCnnConfig, learnCharVocabulary } from '../src/core/model/char-cnn'
import { initWordTaggerParams, wordBatch, wordBucket, wordTaggerConfig } from '../src/core/model/word-tagger'
import { WordTaggerEngine } from '../src/core/onnx/word-engine'
import { OrtWordTaggerTrainer } from '../src/core/train/word-trainer'
import type * as Ort from 'onnxruntime-node'
import { CHAR_LM_DEFAULTS, CHAR_LM_PARAMS, initCharLmParams, type CharLmDims } from '../src/core/model/char-lm'
import { CHAR_LM_INPUTS, CHAR_LM_STATE_INPUTS, CHAR_LM_STATE_OUTPUTS, charLmStatesGraph, charLmTrainGraph } from '../src/core/onnx/char-lm'
import { HostAdamW } from '../src/core/train/optimizer'
import { WORD_STUDENT } from '../scripts/train-default-plan'

interface Args {
  presets: PresetName[]
  seqs: number[]
  batch: number
  backends: Array<BackendName | 'onnxruntime'>
  threads: number
  iters: number
  warmup: number
  budgetS: number
  torch: boolean
  /** Print ratios to PyTorch even when other processes used more than NOISY_CORES while timing. */
  allowNoisy: boolean
  torchScript: string
  torchThreads: number
  vocab: number
  profile: boolean
  quietS: number
  kinds: Array<'bert' | 'bert-char' | 'word-lstm' | 'char-lm'>
  words: number
  lstmHidden: number
  wordTorchScript: string
  lmHidden: number
  lmBptt: number
  charLmTorchScript: string
  rounds: number
}

function parseArgs(argv: string[]): Args {
  const repo = resolve(dirname(process.argv[1] ?? '.'), '..')
  const a: Args = {
    presets: ['cpu-tiny', 'cpu-small', 'cpu-medium', 'bert-base'],
    seqs: [64, 128],
    batch: 16,
    backends: ['onnxruntime', ...availableBackends()],
    threads: 0,
    iters: 5,
    warmup: 1,
    budgetS: 120,
    torch: true,
    allowNoisy: false,
    torchScript: join(repo, '..', 'shared', 'bench', 'torch_bert_ref.py'),
    torchThreads: cpus().length,
    vocab: 28996,
    profile: false,
    quietS: 0,
    kinds: ['bert', 'word-lstm'],
    words: 32,
    lstmHidden: WORD_STUDENT.lstmHidden,
    wordTorchScript: join(repo, 'bench', 'torch_word_tagger_ref.py'),
    lmHidden: 256,
    lmBptt: 100,
    charLmTorchScript: join(repo, 'bench', 'torch_charlm_ref.py'),
    rounds: 1,
  }
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i]
    const v = () => {
      const x = argv[++i]
      if (x === undefined) throw new Error(`${k} needs a value`)
      return x
    }
    if (k === '--presets') a.presets = v().split(',') as PresetName[]
    else if (k === '--seq') a.seqs = v().split(',').map(Number)
    else if (k === '--batch') a.batch = Number(v())
    else if (k === '--backends') a.backends = v().split(',') as Args['backends']
    else if (k === '--threads') a.threads = Number(v())
    else if (k === '--iters') a.iters = Number(v())
    else if (k === '--warmup') a.warmup = Number(v())
    else if (k === '--budget-s') a.budgetS = Number(v())
    else if (k === '--no-torch') a.torch = false
    else if (k === '--torch-script') a.torchScript = resolve(v())
    else if (k === '--torch-threads') a.torchThreads = Number(v())
    else if (k === '--vocab') a.vocab = Number(v())
    else if (k === '--profile') a.profile = true
    else if (k === '--wait-quiet') a.quietS = Number(v())
    else if (k === '--kinds') a.kinds = v().split(',') as Args['kinds']
    else if (k === '--words') a.words = Number(v())
    else if (k === '--lstm-hidden') a.lstmHidden = Number(v())
    else if (k === '--lm-hidden') a.lmHidden = Number(v())
    else if (k === '--lm-bptt') a.lmBptt = Number(v())
    else if (k === '--allow-noisy') a.allowNoisy = true
    else if (k === '--rounds') a.rounds = Math.max(1, Number(v()))
    else throw new Error(`unknown argument ${k}`)
  }
  for (const p of a.presets) if (!PRESET_NAMES.includes(p)) throw new Error(`unknown preset ${p} (${PRESET_NAMES.join(', ')})`)
  if (!a.threads) a.threads = a.torchThreads
  return a
}

/** 86 distinct characters, NCBI-disease's count (the character table's size). */
const NCBI_LIKE_CHARS = [Array.from({ length: 86 }, (_, i) => String.fromCodePoint(0x21 + i)).join('')]

/** Waits for a quiet machine before a timing (machine-load's waitQuiet), and says when it never came. */
function quietBeforeTiming(maxS: number): void {
  const other = waitQuiet(maxS)
  if (maxS > 0 && other != null && other >= 0.25) console.log(`  (machine still busy after ${maxS} s: ${other.toFixed(2)} other cores; timing anyway)`)
}

interface Timing {
  msMedian: number
  tokPerS: number
  /** Tokens per second of this process's CPU time: what a quiet machine would give a single-threaded backend. */
  tokPerCpuS: number
  otherCores: number | null
  iters: number
}

/** One warm-up run, then up to `iters` timed runs, as many as fit in the budget (at least one). */
function measureWithin(run: () => void, iters: number, budgetS: number, tokens: number, quietS = 0): Timing {
  quietBeforeTiming(quietS)
  const s = performance.now()
  run()
  const warm = (performance.now() - s) / 1000
  return measure(run, Math.max(1, Math.min(iters, Math.floor((budgetS - warm) / warm))), 0, tokens)
}

function measure(run: () => void, iters: number, warmup: number, tokens: number): Timing {
  for (let i = 0; i < warmup; i++) run()
  const times: number[] = []
  const cpuTimes: number[] = []
  const mark = markLoad()
  for (let i = 0; i < iters; i++) {
    const s = performance.now()
    const c = process.cpuUsage()
    run()
    const cu = process.cpuUsage(c)
    times.push(performance.now() - s)
    cpuTimes.push((cu.user + cu.system) / 1000)
  }
  const other = otherCoresSince(mark)
  times.sort((x, y) => x - y)
  cpuTimes.sort((x, y) => x - y)
  const med = times[Math.floor(times.length / 2)]
  const cpuMed = cpuTimes[Math.floor(cpuTimes.length / 2)]
  return { msMedian: med, tokPerS: (tokens / med) * 1000, tokPerCpuS: (tokens / cpuMed) * 1000, otherCores: other, iters }
}

/** measureWithin for async work (onnxruntime runs). */
async function measureWithinAsync(run: () => Promise<void>, iters: number, budgetS: number, tokens: number, quietS = 0): Promise<Timing> {
  quietBeforeTiming(quietS)
  const s = performance.now()
  await run()
  const warm = (performance.now() - s) / 1000
  const n = Math.max(1, Math.min(iters, Math.floor((budgetS - warm) / warm)))
  const times: number[] = []
  const cpuTimes: number[] = []
  const mark = markLoad()
  for (let i = 0; i < n; i++) {
    const st = performance.now()
    const c = process.cpuUsage()
    await run()
    const cu = process.cpuUsage(c)
    times.push(performance.now() - st)
    cpuTimes.push((cu.user + cu.system) / 1000)
  }
  const other = otherCoresSince(mark)
  times.sort((x, y) => x - y)
  cpuTimes.sort((x, y) => x - y)
  const med = times[Math.floor(times.length / 2)]
  return { msMedian: med, tokPerS: (tokens / med) * 1000, tokPerCpuS: (tokens / cpuTimes[Math.floor(cpuTimes.length / 2)]) * 1000, otherCores: other, iters: n }
}

/** BERT-init parameters (tfjs layout) without a tfjs backend. */
function randomParams(c: BertConfig, numLabels: number): Map<string, Float32Array> {
  const rng = new Rng(1)
  const shapes = encoderParamShapes(c)
  shapes.set('classifier.weight', [c.hiddenSize, numLabels])
  shapes.set('classifier.bias', [numLabels])
  const out = new Map<string, Float32Array>()
  for (const [name, shape] of shapes) {
    const n = shape.reduce((x, y) => x * y, 1)
    out.set(name, name.includes('LayerNorm') ? new Float32Array(n).fill(name.endsWith('.weight') ? 1 : 0) : name.endsWith('.bias') ? new Float32Array(n) : rng.normalArray(n, 0.02))
  }
  return out
}

/** [n, maxChars] character ids: n positions, each one word of a random lexicon drawn as text uses them. */
function charRows(maxChars: number, charVocab: number, n: number): Int32Array {
  const rng = new Rng(7)
  const lexicon = Array.from({ length: 8385 }, () => Array.from({ length: 3 + rng.int(18) }, () => 2 + rng.int(charVocab - 2)))
  const draw = zipfSampler(lexicon.length, rng)
  const out = new Int32Array(n * maxChars)
  for (let p = 0; p < n; p++) out.set(lexicon[draw()].slice(0, maxChars), p * maxChars)
  return out
}

/** onnxruntime forward (exported graph) and training step (training graph + HostAdamW). */
async function benchOrt(a: Args, cfg: BertConfig, seq: number): Promise<{ fwd: Timing; tr: Timing | null; peakRssMb: number }> {
  const ort = await loadOnnxRuntime()
  const params = randomParams(cfg, 3)
  const tokens = a.batch * seq
  const shapes = encoderParamShapes(cfg).set('classifier.weight', [cfg.hiddenSize, 3]).set('classifier.bias', [3])
  const weights = new Map([...params].map(([n, d]) => [n, { shape: shapes.get(n)!, data: d }]))
  const { session } = await createOrtSession(ort, exportOnnx(weights, cfg as unknown as Record<string, unknown>, { linearLayout: 'in_out' }), ['cpu'], a.threads, { spin: false })
  const ids = Int32Array.from({ length: tokens }, (_, i) => 1 + ((i * 7919) % (a.vocab - 1)))
  const dims = [a.batch, seq]
  // With a character channel: every piece reads a word of 3-20 random characters (no padding
  // rows), the words drawn as text uses them (./zipf) from a lexicon of NCBI-disease's size, so a
  // batch repeats words as real text does and the once-per-distinct-word CNN saves what it would.
  const cc = cfg.charCnn
  const charIds = cc ? charRows(cc.maxChars, cc.charVocabSize, tokens) : null
  const flags = cc ? Float32Array.from({ length: tokens * cc.shapeFlags }, (_, i) => (i % 3 === 0 ? 1 : 0)) : null
  const feeds = {
    input_ids: new ort.Tensor('int64', toInt64(ids), dims),
    attention_mask: new ort.Tensor('int64', toInt64(new Int32Array(tokens).fill(1)), dims),
    token_type_ids: new ort.Tensor('int64', new BigInt64Array(tokens), dims),
    ...(cc && charIds && flags ? { char_ids: new ort.Tensor('int64', toInt64(charIds), [...dims, cc.maxChars]), shape_flags: new ort.Tensor('float32', flags, [...dims, cc.shapeFlags]) } : {}),
  }
  const fwd = await measureWithinAsync(async () => void (await session.run(feeds)), a.iters, a.budgetS, tokens, a.quietS)
  await session.release()
  const estStep = (4 * fwd.msMedian) / 1000
  let tr: Timing | null = null
  if (estStep <= a.budgetS) {
    const trainer = await OrtTokenClassifierTrainer.create({ config: cfg, heads: [{ name: 'default', numLabels: 3 }], params, optimizer: { lr: 5e-5 }, threads: a.threads, executionProviders: ['cpu'] })
    const examples = Array.from({ length: a.batch }, (_, r) => ({
      inputIds: ids.subarray(r * seq, (r + 1) * seq),
      labels: Int32Array.from({ length: seq }, (_, i) => (r + i) % 3),
      ...(cc && charIds && flags ? { charIds: charIds.subarray(r * seq * cc.maxChars, (r + 1) * seq * cc.maxChars), shapeFlags: flags.subarray(r * seq * cc.shapeFlags, (r + 1) * seq * cc.shapeFlags) } : {}),
    }))
    const batch = collate(examples, examples.map((_, i) => i))
    let seed = 0
    tr = await measureWithinAsync(async () => void (await trainer.step(batch, { default: batch.labels }, seed++)), a.iters, a.budgetS, tokens, a.quietS)
    await trainer.dispose()
  }
  return { fwd, tr, peakRssMb: process.resourceUsage().maxRSS / 1024 }
}

/** The word tagger: tagging graph forward and training step on sentences of a.words words drawn as text uses them (./zipf). */
async function benchWordTagger(a: Args): Promise<{ fwd: Timing; tr: Timing }> {
  const rng = new Rng(1)
  // NCBI-disease's sizes: 8 387 training words, 86 characters, 3 labels.
  const words = Array.from({ length: 8385 }, (_, i) => `w${i.toString(36)}`)
  const featurizer = WordFeaturizer.learn(words)
  const config = wordTaggerConfig(featurizer, { lstmHidden: a.lstmHidden })
  const heads = [{ name: 'default', numLabels: 3 }]
  const params = initWordTaggerParams(config, heads, 1)
  const draw = zipfSampler(words.length, rng)
  const sentences = Array.from({ length: a.batch }, () => Array.from({ length: a.words }, () => words[draw()]))
  const tokens = a.batch * a.words
  const engine = new WordTaggerEngine(config, featurizer, heads, params, { threads: a.threads })
  const positions = Array.from({ length: a.words }, (_, i) => i + 1)
  const batch = { inputIds: new Int32Array(a.batch * (a.words + 2)), attentionMask: new Int32Array(a.batch * (a.words + 2)).fill(1), batch: a.batch, seq: a.words + 2, words: sentences.map((texts) => ({ positions, texts })) }
  const fwd = await measureWithinAsync(async () => void (await engine.run(batch)), a.iters, a.budgetS, tokens, a.quietS)
  await engine.dispose()
  const trainer = new OrtWordTaggerTrainer({ config, heads, params, optimizer: { lr: 2e-3, weightDecay: 0, maxGradNorm: 5 }, threads: a.threads, executionProviders: ['cpu'] })
  const T = wordBucket(a.words)
  const wb = wordBatch(featurizer, config, sentences, T)
  const labels = new Int32Array(a.batch * T).fill(-100)
  sentences.forEach((s, r) => s.forEach((_, t) => (labels[r * T + t] = (r + t) % 3)))
  let seed = 0
  const tr = await measureWithinAsync(async () => void (await trainer.step(wb, { default: labels }, seed++)), a.iters, a.budgetS, tokens, a.quietS)
  await trainer.dispose()
  return { fwd, tr }
}

/** The character LM: its tagging-time graph and a training chunk on random characters (94 of them, as the unlabelled text's vocabulary). */
async function benchCharLm(a: Args): Promise<{ fwd: Timing; tr: Timing }> {
  const dims: CharLmDims = { charVocabSize: 94, charDim: CHAR_LM_DEFAULTS.charDim, hidden: a.lmHidden }
  const B = a.batch
  const T = a.lmBptt
  const H = dims.hidden
  const tokens = 2 * B * T
  const rng = new Rng(3)
  const params = initCharLmParams(dims, 1)
  const ids = BigInt64Array.from({ length: 2 * B * T }, (_, i) => BigInt(1 + rng.int(dims.charVocabSize - 1) + (i >= B * T ? dims.charVocabSize : 0)))
  const next = BigInt64Array.from({ length: 2 * B * T }, () => BigInt(rng.int(dims.charVocabSize)))
  const states = await OrtGraphRunner.open(charLmStatesGraph(dims), { threads: a.threads, executionProviders: ['cpu'], spin: false })
  const ort = states.ort
  const fwdFeeds = {
    [CHAR_LM_INPUTS.ids]: new ort.Tensor('int64', ids, [2, B, T]),
    [CHAR_LM_INPUTS.lengths]: new ort.Tensor('int32', new Int32Array(B).fill(T), [B]),
    [CHAR_LM_INPUTS.positions]: new ort.Tensor('int64', new BigInt64Array(2 * B), [2, B]),
  }
  const fwd = await measureWithinAsync(async () => void (await states.outputs(params, fwdFeeds)), a.iters, a.budgetS, tokens, a.quietS)
  await states.dispose()
  const train = await OrtGraphRunner.open(charLmTrainGraph({ dims, steps: T, dropout: true }), { threads: a.threads, executionProviders: ['cpu'] })
  const optimizer = new HostAdamW(params, { lr: 2e-3, weightDecay: 0, maxGradNorm: 1 }, { rowGradients: [CHAR_LM_PARAMS.embeddings] })
  const mask = new Float32Array(2 * B * T * H)
  let h: Ort.Tensor = new ort.Tensor('float32', new Float32Array(2 * B * H), [2, B, H])
  let c: Ort.Tensor = new ort.Tensor('float32', new Float32Array(2 * B * H), [2, B, H])
  const tr = await measureWithinAsync(
    async () => {
      const r = await train.run(optimizer.params, {
        char_ids: new ort.Tensor('int64', ids, [2, B, T]),
        next_ids: new ort.Tensor('int64', next, [2, B, T]),
        [CHAR_LM_STATE_INPUTS.h]: h,
        [CHAR_LM_STATE_INPUTS.c]: c,
        'dropout.output': new ort.Tensor('float32', rng.fillDropoutMask(mask, CHAR_LM_DEFAULTS.dropout), [2, B * T, H]),
      }, optimizer.gradientBuffers)
      optimizer.applyGradients(r.grads, r.gradNormSq, { rows: r.rowGrads })
      h = r.outputs[CHAR_LM_STATE_OUTPUTS.h]
      c = r.outputs[CHAR_LM_STATE_OUTPUTS.c]
    },
    a.iters,
    a.budgetS,
    tokens,
    a.quietS,
  )
  await train.dispose()
  return { fwd, tr }
}

interface TorchResult {
  tokPerS: number
  other: number | null
  core: string | null
}

function runTorch(a: Args, preset: PresetName, seq: number, mode: 'infer' | 'train'): TorchResult | string {
  const c = presetConfig(preset)
  const flops = forwardFlops(c, a.batch, seq) * (mode === 'train' ? 3 : 1)
  // Enough iterations for a stable median without blowing the budget (torch is fast).
  const iters = Math.max(3, Math.min(20, Math.round(5e11 / flops)))
  const args = [
    '--layers', c.numHiddenLayers, '--hidden', c.hiddenSize, '--heads', c.numAttentionHeads,
    '--intermediate', c.intermediateSize, '--vocab', a.vocab, '--batch', a.batch, '--seq-len', seq,
    '--threads', a.torchThreads, '--mode', mode, '--iters', iters, '--warmup', 2,
  ]
  quietBeforeTiming(a.quietS)
  try {
    const j = runTorchRef<{ tokens_per_s: number; other_procs_cpu_cores_avg: number | null; openblas_core: string | null }>(a.torchScript, args, { timeoutMs: a.budgetS * 4 * 1000 })
    return { tokPerS: j.tokens_per_s, other: j.other_procs_cpu_cores_avg, core: j.openblas_core }
  } catch (e) {
    return `torch failed: ${(e as Error).message}`
  }
}

function fmt(n: number | null | undefined, digits = 0): string {
  if (n == null || !Number.isFinite(n)) return '–'
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(digits || (n < 10 ? 2 : 1))
}

async function main() {
  const a = parseArgs(process.argv.slice(2))
  const torchSkipped = a.torch ? torchMissing(a.torchScript) : 'disabled (--no-torch)'
  console.log(`# engine bench: batch ${a.batch}, seq ${a.seqs.join('/')}, vocab ${a.vocab}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load ${loadavg()[0].toFixed(2)}`)
  if (torchSkipped) console.log(`note: PyTorch column skipped: ${torchSkipped}`)
  const ratio = (ours: number | null | undefined, theirs: number | null | undefined, others: readonly number[]) => ratioToTorch(ours, theirs, others, a.allowNoisy)
  const rows: string[] = []
  const header = '| preset | backend | seq | fwd tok/s | train tok/s | train/fwd | fwd tok/cpu-s | train tok/cpu-s | train/fwd cpu | torch fwd | torch train | fwd vs torch | train vs torch | other cores |'
  const torchCache = new Map<string, TorchResult | string>()
  const torchFor = (preset: PresetName, seq: number, mode: 'infer' | 'train') => {
    const key = `${preset}/${seq}/${mode}`
    if (!torchCache.has(key)) torchCache.set(key, runTorch(a, preset, seq, mode))
    return torchCache.get(key)!
  }

  const torchCells = (preset: PresetName, seq: number) => {
    let tFwd: TorchResult | string = 'skipped'
    let tTrain: TorchResult | string = 'skipped'
    if (!torchSkipped) {
      tFwd = torchFor(preset, seq, 'infer')
      tTrain = torchFor(preset, seq, 'train')
    }
    return { tFwd, tTrain }
  }
  const ortKinds = (['bert', 'bert-char'] as const).filter((k) => a.kinds.includes(k))
  for (const backend of a.kinds.includes('bert') || a.kinds.includes('bert-char') ? a.backends : []) {
    if (backend === 'onnxruntime') {
      console.log(`engine onnxruntime: CPU execution provider, ${a.threads} intra-op thread(s)`)
      for (const preset of a.presets) {
        for (const seq of a.seqs) for (const kind of ortKinds) {
          const plain = presetConfig(preset, { vocabSize: a.vocab, maxPositionEmbeddings: Math.max(512, seq), hiddenDropoutProb: 0.1, attentionProbsDropoutProb: 0.1 })
          const cfg = kind === 'bert-char' ? { ...plain, charCnn: charCnnConfig(learnCharVocabulary(NCBI_LIKE_CHARS)) } : plain
          // Rounds: ours, then PyTorch (not cached: each round times it again).
          const rounds: Array<{ fwd: Timing; tr: Timing | null; tFwd: TorchResult | string; tTrain: TorchResult | string }> = []
          let peakRssMb = 0
          for (let r = 0; r < a.rounds; r++) {
            const ours = await benchOrt(a, cfg, seq)
            peakRssMb = Math.max(peakRssMb, ours.peakRssMb)
            if (r > 0) torchCache.clear()
            rounds.push({ ...ours, ...(kind === 'bert-char' ? { tFwd: 'skipped', tTrain: 'skipped' } : torchCells(preset, seq)) })
          }
          const tv = (r: TorchResult | string) => (typeof r === 'string' ? null : r.tokPerS)
          const med = (xs: Array<number | null | undefined>): number | null => {
            const v = xs.filter((x): x is number => x != null && Number.isFinite(x)).sort((x, y) => x - y)
            if (!v.length) return null
            const h = Math.floor(v.length / 2)
            return v.length % 2 ? v[h] : (v[h - 1] + v[h]) / 2
          }
          const fwdTok = med(rounds.map((r) => r.fwd.tokPerS))!
          const trTok = med(rounds.map((r) => r.tr?.tokPerS))
          const stepOverFwd = med(rounds.map((r) => (r.tr ? r.tr.msMedian / r.fwd.msMedian : null)))
          const fwdCpu = med(rounds.map((r) => r.fwd.tokPerCpuS))!
          const trCpu = med(rounds.map((r) => r.tr?.tokPerCpuS))
          const torchFwd = med(rounds.map((r) => tv(r.tFwd)))
          const torchTrain = med(rounds.map((r) => tv(r.tTrain)))
          const others = rounds.flatMap((r) => [r.fwd.otherCores, r.tr?.otherCores, ...[r.tFwd, r.tTrain].map((t) => (typeof t === 'string' ? null : t.other))]).filter((x): x is number => x != null)
          // A ratio: the median of each round's ours ÷ PyTorch (ratioToTorch still withholds it when noisy).
          const roundRatios = (ours: (r: (typeof rounds)[number]) => number | null | undefined, theirs: (r: (typeof rounds)[number]) => number | null) => rounds.map((r) => { const o = ours(r); const t = theirs(r); return o != null && t != null && t > 0 ? o / t : null })
          const fwdRatios = roundRatios((r) => r.fwd.tokPerS, (r) => tv(r.tFwd))
          const trRatios = roundRatios((r) => r.tr?.tokPerS, (r) => tv(r.tTrain))
          const ratioCell = (ratios: Array<number | null>) => roundsRatioToTorch(ratios, others, a.allowNoisy)
          const row = `| ${preset}${kind === 'bert-char' ? ' + characters' : ''} | onnxruntime (${a.threads} thr) | ${seq} | ${fmt(fwdTok)} | ${trTok != null ? fmt(trTok) : 'skipped'} | ${stepOverFwd != null ? `${fmt(stepOverFwd, 2)}×` : '–'} | ${fmt(fwdCpu)} | ${trCpu != null ? fmt(trCpu) : '–'} | ${trCpu != null ? `${fmt(fwdCpu / trCpu, 2)}×` : '–'} | ${fmt(torchFwd)} | ${fmt(torchTrain)} | ${ratioCell(fwdRatios)} | ${ratioCell(trRatios)} | ${others.length ? Math.max(...others).toFixed(2) : '–'} |`
          rows.push(row)
          console.log(row + ` peak RSS ${Math.round(peakRssMb)} MB`)
          if (a.rounds > 1) {
            const list = (xs: Array<number | null>) => xs.map((x) => (x == null ? '–' : `${x.toFixed(3)}×`)).join(', ')
            console.log(`  ${a.rounds} rounds: train vs torch ${list(trRatios)}; fwd vs torch ${list(fwdRatios)}; step/fwd ${list(rounds.map((r) => (r.tr ? r.tr.msMedian / r.fwd.msMedian : null)))}`)
          }
          const { tFwd, tTrain } = rounds[rounds.length - 1]
          for (const r of [tFwd, tTrain]) if (typeof r === 'string' && r !== 'skipped') console.log(`  ${r}`)
          if (typeof tTrain !== 'string') console.log(`  torch OpenBLAS core: ${tTrain.core ?? '?'}`)
        }
      }
      continue
    }
    let info
    try {
      info = await useBackend(backend)
    } catch (e) {
      console.log(`note: backend ${backend} unavailable: ${(e as Error).message}`)
      continue
    }
    console.log(`backend ${info.name}: ${info.reason}`)
    let gflops: number | null = null // achieved forward GFLOP/s so far, to predict cost
    for (const preset of a.presets) {
      for (const seq of a.seqs) {
        const cfg = presetConfig(preset, { vocabSize: a.vocab, maxPositionEmbeddings: Math.max(512, seq) })
        const fwdFlops = forwardFlops(cfg, a.batch, seq)
        const estFwd = gflops ? fwdFlops / (gflops * 1e9) : 0
        if (estFwd > a.budgetS) {
          rows.push(`| ${preset} | ${backend} | ${seq} | skipped (est. ${Math.round(estFwd)} s per forward > budget ${a.budgetS} s) | | | | | | | | | | |`)
          console.log(rows[rows.length - 1])
          continue
        }
        const model = BertTokenClassifier.random(cfg, 1, { default: ['O', 'B', 'I'] })
        const tokens = a.batch * seq
        const idsArr = Int32Array.from({ length: tokens }, (_, i) => 1 + ((i * 7919) % (a.vocab - 1)))
        const inputIds = tf.tensor2d(idsArr, [a.batch, seq], 'int32')
        const attentionMask = tf.ones([a.batch, seq], 'int32') as tf.Tensor2D
        const labels = tf.oneHot(tf.tensor1d(Int32Array.from({ length: tokens }, (_, i) => i % 3), 'int32'), 3)
        const opt = tf.train.adam(5e-5)
        const forward = () =>
          tf.tidy(() => {
            model.forward({ inputIds, attentionMask }).logits.default.dataSync()
          })
        const step = () =>
          tf.tidy(() => {
            const cost = opt.minimize(
              () => {
                const out = model.forward({ inputIds, attentionMask }, { training: true })
                const logp = tf.logSoftmax(tf.reshape(out.logits.default, [tokens, 3]))
                return tf.neg(tf.mean(tf.sum(tf.mul(logp, labels), -1))) as tf.Scalar
              },
              true,
              model.trainableVariables(),
            )
            cost!.dataSync()
          })
        // Iterations are bounded by the budget: warm-up once, then as many as fit (≥ 1).
        const fwd = measureWithin(forward, a.iters, a.budgetS, tokens, a.quietS)
        gflops = fwdFlops / (fwd.msMedian / 1000) / 1e9
        // A step costs ~3-4 forwards; skip rather than overrun when even one would not fit.
        const estStep = (4 * fwd.msMedian) / 1000
        const tr = estStep > a.budgetS ? null : measureWithin(step, a.iters, a.budgetS, tokens, a.quietS)
        if (a.profile && tr) {
          const prof = await tf.profile(() => step())
          const agg = new Map<string, number>()
          // Op scopes ('…__op', 'unnamed scope') are listed beside their kernels: count kernels only.
          for (const k of prof.kernels) if (!k.name.endsWith('__op') && k.name !== 'unnamed scope') agg.set(k.name, (agg.get(k.name) ?? 0) + (k.kernelTimeMs as number))
          const total = [...agg.values()].reduce((x, y) => x + y, 0)
          console.log(`  profile ${preset} ${backend} seq ${seq}: ` + [...agg].sort((x, y) => y[1] - x[1]).slice(0, 8).map(([k, ms]) => `${k} ${((100 * ms) / total).toFixed(0)}%`).join(', '))
        }
        tf.dispose([inputIds, attentionMask, labels])
        opt.dispose()
        model.dispose()

        const { tFwd, tTrain } = torchCells(preset, seq)
        const tv = (r: TorchResult | string) => (typeof r === 'string' ? null : r.tokPerS)
        const others = [fwd.otherCores, tr?.otherCores, ...[tFwd, tTrain].map((r) => (typeof r === 'string' ? null : r.other))].filter((x): x is number => x != null)
        const its = (t: Timing) => (t.iters < a.iters ? ` (${t.iters} it)` : '')
        const trainCell = tr ? `${fmt(tr.tokPerS)}${its(tr)}` : `skipped (est. ${Math.round(estStep)} s/step)`
        const cpuCols = `${fmt(fwd.tokPerCpuS)} | ${tr ? fmt(tr.tokPerCpuS) : '–'} | ${tr ? `${fmt(fwd.tokPerCpuS / tr.tokPerCpuS, 2)}×` : '–'}`
        const row = `| ${preset} | ${backend} | ${seq} | ${fmt(fwd.tokPerS)}${its(fwd)} | ${trainCell} | ${tr ? `${fmt(tr.msMedian / fwd.msMedian, 2)}×` : '–'} | ${cpuCols} | ${fmt(tv(tFwd))} | ${fmt(tv(tTrain))} | ${ratio(fwd.tokPerS, tv(tFwd), others)} | ${ratio(tr?.tokPerS, tv(tTrain), others)} | ${others.length ? Math.max(...others).toFixed(2) : '–'} |`
        rows.push(row)
        console.log(row)
        for (const r of [tFwd, tTrain]) if (typeof r === 'string' && r !== 'skipped') console.log(`  ${r}`)
      }
    }
  }
  /** A recurrent kind's row: ours timed by `bench`, PyTorch's by its reference script with `torchArgs` (+ --threads, --iters). */
  const recurrentRow = async (model: string, unit: string, bench: Promise<{ fwd: Timing; tr: Timing }>, script: string, torchArgs: (mode: 'infer' | 'train') => Array<string | number>, torchIters: number) => {
    const { fwd, tr } = await bench
    const torch = (mode: 'infer' | 'train') => {
      if (torchSkipped) return null
      try {
        return runTorchRef<{ tokens_per_s: number; other_procs_cpu_cores_avg: number | null; openblas_core: string | null }>(script, [...torchArgs(mode), '--threads', a.torchThreads, '--iters', torchIters])
      } catch (e) {
        console.log(`  ${(e as Error).message}`)
        return null
      }
    }
    const [tFwd, tTrain] = [torch('infer'), torch('train')]
    const others = [fwd.otherCores, tr.otherCores, tFwd?.other_procs_cpu_cores_avg, tTrain?.other_procs_cpu_cores_avg].filter((x): x is number => x != null)
    const row = `| ${model} | onnxruntime (${a.threads} thr) | ${unit} | ${fmt(fwd.tokPerS)} | ${fmt(tr.tokPerS)} | ${fmt(tr.msMedian / fwd.msMedian, 2)}× | ${fmt(fwd.tokPerCpuS)} | ${fmt(tr.tokPerCpuS)} | ${fmt(fwd.tokPerCpuS / tr.tokPerCpuS, 2)}× | ${fmt(tFwd?.tokens_per_s)} | ${fmt(tTrain?.tokens_per_s)} | ${ratio(fwd.tokPerS, tFwd?.tokens_per_s, others)} | ${ratio(tr.tokPerS, tTrain?.tokens_per_s, others)} | ${others.length ? Math.max(...others).toFixed(2) : '–'} |`
    rows.push(row)
    console.log(row)
    if (tTrain) console.log(`  torch OpenBLAS core: ${tTrain.openblas_core ?? '?'}`)
  }
  if (a.kinds.includes('word-lstm')) {
    await recurrentRow(`word-lstm 2 × ${a.lstmHidden}`, `${a.words} words`, benchWordTagger(a), a.wordTorchScript, (mode) => ['--batch', a.batch, '--words', a.words, '--hidden', a.lstmHidden, '--mode', mode], a.iters * 4)
  }
  if (a.kinds.includes('char-lm')) {
    await recurrentRow(`char-lm 2 × ${a.lmHidden}`, `${a.lmBptt} chars`, benchCharLm(a), a.charLmTorchScript, (mode) => ['--speed', mode, '--batch', a.batch, '--bptt', a.lmBptt, '--hidden', a.lmHidden], a.iters)
  }
  console.log('')
  console.log(header)
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|')
  for (const r of rows) console.log(r)
  console.log('')
  console.log(`fwd/train vs torch = our wall-clock tokens/s ÷ PyTorch's (torch on ${a.torchThreads} thread(s), OpenBLAS). tok/cpu-s = tokens per second of this process's CPU time (for the single-threaded wasm/cpu backends, the quiet-machine throughput). "other cores" = max CPU other processes used while timing: above ${NOISY_CORES} the wall-clock columns are disturbed and the ratios to PyTorch are left out${a.allowNoisy ? ' (printed anyway: --allow-noisy)' : ' (--allow-noisy prints them)'}.`)
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e)
  process.exit(1)
})
