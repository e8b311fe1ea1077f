// Inference speed: onnxruntime-node (CPU) vs tfjs (wasm) vs PyTorch on random BERT token
// classifiers, batch 16 × seq 64 / 128, plus batch-1 latency for one ~300-token abstract.
//
//   npm run bench:infer -- [--shapes 12x768,12x256,6x256,4x256,3x256] [--seqs 64,128]
//     [--batch 16] [--iters 20] [--warmup 3] [--threads N] [--engines ort,tfjs,torch]
//     [--ort-variants pure] [--tfjs-iters 3] [--abstract 4x256,4x768] [--abstract-tokens 300]
//     [--torch-script ../shared/bench/torch_bert_ref.py] [--python /usr/bin/python3] [--json out.json]
//     [--wait-quiet SECONDS]   (before each timing, wait up to SECONDS for other processes to idle)
//     [--rounds R]             (alternate ORT and PyTorch R times per shape; best round counts)
//
// ORT variants: pure (plain ONNX, the default export), fused (all com.microsoft contrib ops),
// or a '+'-joined subset of attention, skipLayerNorm, biasGelu; int8 (the `fastbioner quantize`
// graph: int8 Linear weights and word embeddings, DEFAULT_INT8_MATMUL) or int8@<op> with op one of
// DynamicQuantizeMatMul, MatMulInteger, MatMulIntegerToFloat; a '/nospin' suffix stops ORT's
// worker threads from spinning between operators (session.intra_op.allow_spinning = 0); with int8,
// a '/s8' or '/u8' suffix gives the weights as int8 or uint8 (export.ts Int8Weights; default this
// CPU's, DEFAULT_INT8_WEIGHTS), e.g. int8/s8 against int8/u8 on a CPU without VNNI.
// Shapes are LAYERSxHIDDEN; heads = hidden / 64, intermediate = 4 × hidden, vocab 28996,
// 3 labels, as torch_bert_ref.py. Timings are medians of `iters` runs after `warmup` runs;
// "load" is the CPU (in cores) that other processes used while we timed: above ~0.15 the
// numbers are disturbed. PyTorch runs in the same command, right after ORT, per shape.

import { runTorchRef, torchMissing } from './torch-ref'
import { writeFileSync } from 'node:fs'
import { markLoad, otherCoresSince, waitQuiet } from '../src/core/machine-load'
import { availableParallelism } from 'node:os'
import { resolve } from 'node:path'
import * as ort from 'onnxruntime-node'
import { DEFAULT_INT8_MATMUL, exportOnnx, INT8_MATMULS, type FusedOps, type Int8MatMul, type Int8Weights, type OnnxBertConfig, type WeightsMap } from '../src/core/onnx/export'
import { quantizeWeights } from '../src/core/onnx/quantize'

interface Args {
  shapes: Array<[number, number]>
  seqs: number[]
  batch: number
  iters: number
  warmup: number
  threads: number
  engines: Set<string>
  ortVariants: string[]
  tfjsIters: number
  tfjsBackend: string
  abstract: Array<[number, number]>
  abstractTokens: number
  torchScript: string
  python: string
  json?: string
  quietS: number
  rounds: number
}

function parseArgs(argv: string[]): Args {
  const m = new Map<string, string>()
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`)
    const [k, v] = a.includes('=') ? a.slice(2).split('=', 2) : [a.slice(2), argv[++i]]
    if (v === undefined) throw new Error(`--${k} needs a value`)
    m.set(k, v)
  }
  const shapes = (s: string) =>
    s.split(',').filter(Boolean).map((x) => {
      const [l, h] = x.toLowerCase().split('x').map(Number)
      if (!(l > 0 && h > 0 && h % 64 === 0)) throw new Error(`shape ${x}: want LAYERSxHIDDEN with hidden a multiple of 64`)
      return [l, h] as [number, number]
    })
  return {
    shapes: shapes(m.get('shapes') ?? '12x768,12x256,6x256,4x256,3x256'),
    seqs: (m.get('seqs') ?? '64,128').split(',').map(Number),
    batch: Number(m.get('batch') ?? 16),
    iters: Number(m.get('iters') ?? 20),
    warmup: Number(m.get('warmup') ?? 3),
    threads: Number(m.get('threads') ?? availableParallelism()),
    engines: new Set((m.get('engines') ?? 'ort,tfjs,torch').split(',')),
    ortVariants: (m.get('ort-variants') ?? 'pure').split(','),
    tfjsIters: Number(m.get('tfjs-iters') ?? 3),
    tfjsBackend: m.get('tfjs-backend') ?? 'wasm',
    abstract: shapes(m.get('abstract') ?? '4x256,4x768'),
    abstractTokens: Number(m.get('abstract-tokens') ?? 300),
    torchScript: resolve(m.get('torch-script') ?? '../shared/bench/torch_bert_ref.py'),
    python: m.get('python') ?? '/usr/bin/python3',
    json: m.get('json'),
    quietS: Number(m.get('wait-quiet') ?? 0),
    rounds: Number(m.get('rounds') ?? 1),
  }
}

function variantFusion(variant: string): boolean | FusedOps {
  const v = variant.split('/')[0]
  if (v === 'pure' || v.startsWith('int8')) return false
  if (v === 'fused') return true
  const f: FusedOps = {}
  for (const k of v.split('+')) {
    if (k !== 'attention' && k !== 'skipLayerNorm' && k !== 'biasGelu') throw new Error(`ORT variant ${v}: unknown fusion ${k}`)
    f[k] = true
  }
  return f
}

const VOCAB = 28996
const LABELS = 3

function configFor(layers: number, hidden: number, maxPos = 512): OnnxBertConfig {
  return {
    vocabSize: VOCAB,
    hiddenSize: hidden,
    numHiddenLayers: layers,
    numAttentionHeads: hidden / 64,
    intermediateSize: 4 * hidden,
    maxPositionEmbeddings: maxPos,
    typeVocabSize: 2,
    layerNormEps: 1e-12,
    hiddenAct: 'gelu',
  }
}

/** Random weights, torch layout; uniform with BERT's std 0.02 (timing does not depend on values). */
function randomWeights(c: OnnxBertConfig, seed: number): WeightsMap {
  let s = seed >>> 0 || 1
  const fill = (n: number, scale: number, offset = 0) => {
    const a = new Float32Array(n)
    for (let i = 0; i < n; i++) {
      s ^= s << 13
      s ^= s >>> 17
      s ^= s << 5
      a[i] = offset + ((s >>> 0) / 4294967296 - 0.5) * scale
    }
    return a
  }
  const w: WeightsMap = new Map()
  const t = (name: string, shape: number[], kind: 'w' | 'b' | 'g') => {
    const n = shape.reduce((x, y) => x * y, 1)
    w.set(name, { shape, data: kind === 'w' ? fill(n, 0.0693) : kind === 'g' ? new Float32Array(n).fill(1) : new Float32Array(n) })
  }
  const H = c.hiddenSize
  const I = c.intermediateSize
  t('bert.embeddings.word_embeddings.weight', [c.vocabSize, H], 'w')
  t('bert.embeddings.position_embeddings.weight', [c.maxPositionEmbeddings, H], 'w')
  t('bert.embeddings.token_type_embeddings.weight', [c.typeVocabSize, H], 'w')
  t('bert.embeddings.LayerNorm.weight', [H], 'g')
  t('bert.embeddings.LayerNorm.bias', [H], 'b')
  for (let l = 0; l < c.numHiddenLayers; l++) {
    const p = `bert.encoder.layer.${l}`
    for (const n of ['query', 'key', 'value']) {
      t(`${p}.attention.self.${n}.weight`, [H, H], 'w')
      t(`${p}.attention.self.${n}.bias`, [H], 'b')
    }
    t(`${p}.attention.output.dense.weight`, [H, H], 'w')
    t(`${p}.attention.output.dense.bias`, [H], 'b')
    t(`${p}.attention.output.LayerNorm.weight`, [H], 'g')
    t(`${p}.attention.output.LayerNorm.bias`, [H], 'b')
    t(`${p}.intermediate.dense.weight`, [I, H], 'w')
    t(`${p}.intermediate.dense.bias`, [I], 'b')
    t(`${p}.output.dense.weight`, [H, I], 'w')
    t(`${p}.output.dense.bias`, [H], 'b')
    t(`${p}.output.LayerNorm.weight`, [H], 'g')
    t(`${p}.output.LayerNorm.bias`, [H], 'b')
  }
  t('classifier.weight', [LABELS, H], 'w')
  t('classifier.bias', [LABELS], 'b')
  return w
}

interface Timing {
  medianMs: number
  tokensPerS: number
  /** Average cores used by other processes while timing; null where unknown. */
  load: number | null
}

async function timeIt(fn: () => Promise<void>, warmup: number, iters: number, tokens: number): Promise<Timing> {
  for (let i = 0; i < warmup; i++) await fn()
  const mark = markLoad()
  const times: number[] = []
  for (let i = 0; i < iters; i++) {
    const t = performance.now()
    await fn()
    times.push(performance.now() - t)
  }
  const load = otherCoresSince(mark)
  times.sort((a, b) => a - b)
  const medianMs = times.length % 2 ? times[times.length >> 1] : (times[times.length / 2 - 1] + times[times.length / 2]) / 2
  return { medianMs, tokensPerS: (tokens * iters) / times.reduce((a, b) => a + b, 0) * 1000, load }
}

function feeds(batch: number, seq: number): Record<string, ort.Tensor> {
  const n = batch * seq
  const ids = new BigInt64Array(n)
  for (let i = 0; i < n; i++) ids[i] = BigInt(1 + ((i * 7919) % (VOCAB - 1)))
  return {
    input_ids: new ort.Tensor('int64', ids, [batch, seq]),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(n).fill(1n), [batch, seq]),
    token_type_ids: new ort.Tensor('int64', new BigInt64Array(n), [batch, seq]),
  }
}

async function ortSession(w: WeightsMap, c: OnnxBertConfig, variant: string, threads: number): Promise<{ session: ort.InferenceSession; exportMs: number; mb: number }> {
  const t = performance.now()
  const v = variant.split('/')[0]
  let int8MatMul: Int8MatMul | undefined
  if (v.startsWith('int8')) {
    int8MatMul = (v.split('@')[1] ?? DEFAULT_INT8_MATMUL) as Int8MatMul
    if (!INT8_MATMULS.includes(int8MatMul)) throw new Error(`ORT variant ${v}: int8 op must be one of ${INT8_MATMULS.join(', ')}`)
    w = quantizeWeights(w)
  }
  const flags = variant.split('/').slice(1)
  for (const f of flags) {
    if (f !== 'nospin' && f !== 's8' && f !== 'u8') throw new Error(`ORT variant ${variant}: unknown suffix /${f} (nospin, s8, u8)`)
    if (f !== 'nospin' && !v.startsWith('int8')) throw new Error(`ORT variant ${variant}: /${f} applies to int8 variants only`)
  }
  const int8Weights: Int8Weights | undefined = flags.includes('s8') ? 'int8' : flags.includes('u8') ? 'uint8' : undefined
  const bytes = exportOnnx(w, c, { fused: variantFusion(variant), int8MatMul, int8Weights })
  const exportMs = performance.now() - t
  const session = await ort.InferenceSession.create(bytes, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    logSeverityLevel: 3,
    ...(flags.includes('nospin') ? { extra: { session: { intra_op: { allow_spinning: '0' } } } } : {}),
  })
  return { session, exportMs, mb: bytes.length / 2 ** 20 }
}

let torchNote = ''
function torchAvailable(a: Args): boolean {
  const missing = torchMissing(a.torchScript, a.python)
  if (missing) torchNote = `PyTorch skipped: ${missing}`
  return missing === null
}

function runTorch(a: Args, layers: number, hidden: number, batch: number, seq: number, iters: number, warmup: number): Timing & { core?: string } {
  const j = runTorchRef<{ ms_per_batch_median: number; tokens_per_s: number; other_procs_cpu_cores_avg?: number; openblas_core?: string }>(
    a.torchScript,
    ['--layers', layers, '--hidden', hidden, '--heads', hidden / 64, '--intermediate', 4 * hidden, '--vocab', VOCAB, '--batch', batch, '--seq-len', seq,
      '--threads', a.threads, '--mode', 'infer', '--iters', iters, '--warmup', warmup, '--num-labels', LABELS],
    { python: a.python },
  )
  return { medianMs: j.ms_per_batch_median, tokensPerS: j.tokens_per_s, load: j.other_procs_cpu_cores_avg ?? null, core: j.openblas_core }
}

type TfjsRunner = { run(): Promise<void>; dispose(): void; backend: string }
let tfjsNote = ''
async function tfjsRunner(a: Args, layers: number, hidden: number, batch: number, seq: number): Promise<TfjsRunner | null> {
  let backendMod: typeof import('../src/core/model/backend')
  let bertMod: typeof import('../src/core/model/bert')
  let tf: typeof import('@tensorflow/tfjs-core')
  try {
    backendMod = await import('../src/core/model/backend')
    bertMod = await import('../src/core/model/bert')
    tf = await import('@tensorflow/tfjs-core')
  } catch (e) {
    tfjsNote = `tfjs skipped: core/model not loadable (${(e as Error).message.split('\n')[0]})`
    return null
  }
  const info = await backendMod.useBackend(a.tfjsBackend as 'wasm')
  const model = bertMod.BertTokenClassifier.random(
    bertMod.makeBertConfig({ numHiddenLayers: layers, hiddenSize: hidden, numAttentionHeads: hidden / 64, intermediateSize: 4 * hidden, vocabSize: VOCAB }),
    1,
    { default: ['O', 'B', 'I'] },
  )
  const n = batch * seq
  const ids = tf.tensor2d(Int32Array.from({ length: n }, (_, i) => 1 + ((i * 7919) % (VOCAB - 1))), [batch, seq], 'int32')
  const mask = tf.ones([batch, seq], 'int32') as import('@tensorflow/tfjs-core').Tensor2D
  const types = tf.zeros([batch, seq], 'int32') as import('@tensorflow/tfjs-core').Tensor2D
  return {
    backend: `${info.name}${info.threads ? `, ${info.threads} thread${info.threads === 1 ? '' : 's'}` : ''}`,
    async run() {
      const out = tf.tidy(() => model.forward({ inputIds: ids, attentionMask: mask, tokenTypeIds: types }).logits.default)
      await out.data()
      out.dispose()
    },
    dispose() {
      model.dispose()
      ids.dispose()
      mask.dispose()
      types.dispose()
    },
  }
}

const fmtMs = (t?: Timing | null) => (t ? t.medianMs.toFixed(1) : '–')
const fmtTok = (t?: Timing | null) => (t ? Math.round(t.tokensPerS).toString() : '–')
const fmtLoad = (t?: Timing | null) => (t && t.load != null ? t.load.toFixed(2) : '–')

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2))
  const useTorch = a.engines.has('torch') && torchAvailable(a)
  const useTfjs = a.engines.has('tfjs')
  console.log(`# bench:infer — onnxruntime-node ${ort.env.versions?.common ?? ''}, ${a.threads} threads, batch ${a.batch}, iters ${a.iters} (tfjs ${a.tfjsIters}), warmup ${a.warmup}`)
  const rows: Array<Record<string, unknown>> = []
  const header = ['shape', 'seq', ...a.ortVariants.flatMap((v) => [`ORT ${v} ms`, 'tok/s', 'load']), 'tfjs ms', 'tok/s', 'torch ms', 'tok/s', 'load', 'ORT/torch']
  const table: string[][] = []

  for (const [layers, hidden] of a.shapes) {
    const c = configFor(layers, hidden)
    const w = randomWeights(c, layers * 1000 + hidden)
    const sessions: Array<{ v: string; session: ort.InferenceSession; exportMs: number; mb: number }> = []
    for (const v of a.ortVariants) sessions.push({ v, ...(await ortSession(w, c, v, a.threads)) })
    for (const seq of a.seqs) {
      const tokens = a.batch * seq
      const f = feeds(a.batch, seq)
      // Rounds alternate ORT and PyTorch so both see the same machine; the best round counts.
      const ortT: Timing[] = []
      let torchT: (Timing & { core?: string }) | null = null
      for (let round = 0; round < a.rounds; round++) {
        waitQuiet(a.quietS)
        for (let k = 0; k < sessions.length; k++) {
          const t = await timeIt(async () => void (await sessions[k].session.run(f)), a.warmup, a.iters, tokens)
          if (!ortT[k] || t.medianMs < ortT[k].medianMs) ortT[k] = t
        }
        if (useTorch) {
          try {
            waitQuiet(a.quietS)
            const t = runTorch(a, layers, hidden, a.batch, seq, a.iters, a.warmup)
            if (!torchT || t.medianMs < torchT.medianMs) torchT = t
          } catch (e) {
            torchNote = `PyTorch failed: ${(e as Error).message.split('\n')[0]}`
          }
        }
      }
      let tfT: Timing | null = null
      if (useTfjs) {
        const r = await tfjsRunner(a, layers, hidden, a.batch, seq)
        if (r) {
          tfT = await timeIt(() => r.run(), 1, a.tfjsIters, tokens)
          tfjsNote = `tfjs backend: ${r.backend}`
          r.dispose()
        }
      }
      const best = Math.min(...ortT.map((t) => t.medianMs))
      const ratio = torchT ? (torchT.medianMs / best).toFixed(2) + '×' : '–'
      table.push([`${layers}×${hidden}`, String(seq), ...ortT.flatMap((t) => [fmtMs(t), fmtTok(t), fmtLoad(t)]), fmtMs(tfT), fmtTok(tfT), fmtMs(torchT), fmtTok(torchT), fmtLoad(torchT), ratio])
      rows.push({ layers, hidden, seq, batch: a.batch, ort: Object.fromEntries(sessions.map((s, i) => [s.v, ortT[i]])), tfjs: tfT, torch: torchT, exportMs: sessions.map((s) => s.exportMs), onnxMB: sessions[0]?.mb })
      console.error(`done ${layers}×${hidden} seq ${seq}: ${table[table.length - 1].join(' | ')}`)
    }
    for (const s of sessions) await s.session.release()
  }

  // Batch-1 latency for one abstract (~300 word pieces), as the tagger runs it.
  const latency: string[][] = []
  for (const [layers, hidden] of a.abstract) for (const variant of a.ortVariants) {
    const c = configFor(layers, hidden)
    const { session } = await ortSession(randomWeights(c, 7), c, variant, a.threads)
    const f = feeds(1, a.abstractTokens)
    let t: Timing | null = null
    let tt: Timing | null = null
    for (let round = 0; round < a.rounds; round++) {
      waitQuiet(a.quietS)
      const r = await timeIt(async () => void (await session.run(f)), a.warmup, Math.max(a.iters, 30), a.abstractTokens)
      if (!t || r.medianMs < t.medianMs) t = r
      if (useTorch) {
        try {
          waitQuiet(a.quietS)
          const r2 = runTorch(a, layers, hidden, 1, a.abstractTokens, Math.max(a.iters, 30), a.warmup)
          if (!tt || r2.medianMs < tt.medianMs) tt = r2
        } catch (e) {
          torchNote = `PyTorch failed: ${(e as Error).message.split('\n')[0]}`
        }
      }
    }
    await session.release()
    if (!t) continue
    latency.push([`${layers}×${hidden}`, variant, t.medianMs.toFixed(1), fmtLoad(t), fmtMs(tt), t.medianMs < 50 ? 'yes' : 'no'])
    rows.push({ abstract: true, layers, hidden, variant, tokens: a.abstractTokens, ort: t, torch: tt })
  }

  const print = (head: string[], body: string[][]) => {
    console.log(`| ${head.join(' | ')} |`)
    console.log(`|${head.map(() => '---').join('|')}|`)
    for (const r of body) console.log(`| ${r.join(' | ')} |`)
  }
  console.log(`\n## batch ${a.batch}: median ms per batch and tokens/s (load = other processes' CPU cores while timing)\n`)
  print(header, table)
  console.log(`\n## one abstract: batch 1 × ${a.abstractTokens} tokens (goal < 50 ms)\n`)
  print(['shape', 'ORT variant', 'ORT ms', 'load', 'torch ms', '< 50 ms'], latency)
  for (const note of [tfjsNote, torchNote]) if (note) console.log(`\nnote: ${note}`)
  if (a.json) writeFileSync(a.json, JSON.stringify(rows, null, 2))
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
