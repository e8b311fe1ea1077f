// Where an onnxruntime training step of the BERT encoder goes (issue 29): the host's parts (the
// dropout masks, the graph run including the copy of its outputs, AdamW) timed apart over
// --iters steps, and onnxruntime's own profile of the same graph run, kernel time summed by
// operator type. Run it on a quiet machine; it prints the load.
//
//   npx tsx bench/profile-step.ts [--preset cpu-small] [--batch 16] [--seq 128] [--vocab 28996] [--threads 2] [--iters 5] [--top N] [--spin]
//   npx tsx bench/profile-step.ts --kind word-lstm [--batch 16] [--words 32] [--vocab 25000] [--lstm-hidden 300] [--heads 1] [--threads 2]
//
// --kind word-lstm: the word tagger's step (featurizing the batch, the unrolled training graph
// of its length bucket, AdamW) on sentences over a vocabulary of --vocab words, drawn as text uses them (./zipf);
// --heads N: N heads of 3 labels, each with its CRF (the default model's student has 4).
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import type * as Ort from 'onnxruntime-node'
import { encoderParamShapes, type BertConfig } from '../src/core/model/bert'
import { presetConfig } from '../src/core/model/presets'
import { Rng } from '../src/core/rng'
import { loadOnnxRuntime } from '../src/core/onnx/session'
import { collate } from '../src/core/train/batching'
import { dropoutMasks, OrtGraphRunner, OrtTokenClassifierTrainer } from '../src/core/train/ort'
import { OrtWordTaggerTrainer } from '../src/core/train/word-trainer'
import { WordFeaturizer } from '../src/core/nlp/word-features'
import { initWordTaggerParams, wordBatch, wordBucket, wordTaggerConfig } from '../src/core/model/word-tagger'
import type { PresetName } from '../src/shared/recipes'
import { zipfSampler } from './zipf'
import { wordStepInputs } from './word-step'
import { WORD_STUDENT } from '../scripts/train-default-plan'

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback
}

const PROFILE_PREFIX = 'fastbioner-step-profile'
const PROFILED_RUNS = 3
/** --spin: the profiled session's workers spin between operators as the trainer's do (OrtSessionOptions.spin); else they sleep, and a kernel's time includes waking them. */
const SPIN = process.argv.includes('--spin')

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

/** The operators that are matrix products: a step's floor, since they run near the cores' peak (issue 29). */
const PRODUCT_OPS = new Set(['Gemm', 'MatMul', 'FusedMatMul'])

/**
 * onnxruntime's profile of `model` run PROFILED_RUNS times on `feeds` after two warm-up runs: kernel
 * time by operator type, printed; then the matrix products' share and what a step of `tokens` would
 * reach if nothing but its products took time (`stepMs`, the measured step, for the ratio).
 */
async function profileGraph(model: Uint8Array, feeds: Record<string, Ort.Tensor>, threads: number, tokens: number, stepMs: number): Promise<void> {
  const ort = await loadOnnxRuntime()
  const prof = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], graphOptimizationLevel: 'all', intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential', logSeverityLevel: 3,
    enableProfiling: true, profileFilePrefix: join(tmpdir(), PROFILE_PREFIX), extra: { session: { intra_op: { allow_spinning: SPIN ? '1' : '0' } } },
  })
  // The first two runs grow the arena and fault its pages in (the second still took 1.3 s against
  // 0.22 s for the later ones at cpu-small): not counted (their events end where the second model_run ends).
  for (let i = 0; i < 2 + PROFILED_RUNS; i++) await prof.run(feeds)
  // onnxruntime-node's endProfiling returns nothing: the trace is the newest file with the prefix.
  ;(prof as unknown as { endProfiling: () => void }).endProfiling()
  await prof.release()
  const file = readdirSync(tmpdir())
    .filter((f) => f.startsWith(PROFILE_PREFIX) && f.endsWith('.json'))
    .map((f) => join(tmpdir(), f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]
  const events = JSON.parse(readFileSync(file, 'utf8')) as Array<{ cat: string; name: string; ts: number; dur: number; args?: { op_name?: string; input_type_shape?: unknown[]; output_type_shape?: unknown[] } }>
  const runs = events.filter((e) => e.cat === 'Session' && e.name === 'model_run').sort((a, b) => a.ts - b.ts)
  const warmEnd = runs.length > 2 ? runs[1].ts + runs[1].dur : -Infinity
  const counted = runs.slice(2).map((r) => r.dur / 1000)
  const byOp = new Map<string, number>()
  const byNode = new Map<string, number>()
  let kernel = 0
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || e.ts < warmEnd) continue
    const op = e.args?.op_name ?? '?'
    byOp.set(op, (byOp.get(op) ?? 0) + e.dur)
    // The training graph's nodes are unnamed: an operator and its shapes name a kind of site.
    const shapes = (xs: unknown[] | undefined) => (xs ?? []).map((x) => JSON.stringify(Object.values(x as object)[0])).join(' ')
    const site = `${op} ${shapes(e.args?.input_type_shape)} → ${shapes(e.args?.output_type_shape)}`
    byNode.set(site, (byNode.get(site) ?? 0) + e.dur)
    kernel += e.dur
  }
  rmSync(file, { force: true })
  const products = [...byOp].filter(([op]) => PRODUCT_OPS.has(op)).reduce((a, [, us]) => a + us, 0) / PROFILED_RUNS / 1000
  console.log(`\nonnxruntime kernel time per run: ${(kernel / PROFILED_RUNS / 1000).toFixed(1)} ms (${PROFILED_RUNS} runs after two warm-ups; each run ${counted.map((ms) => ms.toFixed(0)).join(' / ')} ms, profiled, workers ${SPIN ? 'spinning' : 'sleeping'} between operators)`)
  for (const [op, us] of [...byOp].sort((x, y) => y[1] - x[1]).slice(0, 18)) console.log(`| ${op} | ${(us / PROFILED_RUNS / 1000).toFixed(1)} ms | ${((100 * us) / kernel).toFixed(1)} % |`)
  const top = Number(arg('top', '0'))
  if (top > 0) {
    console.log(`\nthe ${top} costliest sites (an operator with its input and output shapes, summed over the nodes):`)
    for (const [site, us] of [...byNode].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`| ${site} | ${(us / PROFILED_RUNS / 1000).toFixed(2)} ms |`)
  }
  // The bound of every cut outside the products: the step if only they took time.
  console.log(`\nmatrix products (${[...PRODUCT_OPS].join(', ')}): ${products.toFixed(1)} ms per run (${((100 * products) / stepMs).toFixed(0)} % of the ${stepMs.toFixed(1)} ms step); a step of products alone: ${Math.round(tokens / (products / 1000))} tok/s, ${(stepMs / products).toFixed(2)}× this step's speed`)
}

/** Prints the phases' medians; returns the median step (ms). */
function printPhases(title: string, phases: Record<string, number[]>, tokens: number): number {
  const total = median(phases['step (all)'])
  console.log(`# ${title}, load ${loadavg()[0].toFixed(2)}; median of ${phases['step (all)'].length} steps`)
  for (const [k, v] of Object.entries(phases)) console.log(`| ${k} | ${median(v).toFixed(1)} ms | ${((100 * median(v)) / total).toFixed(0)} % |`)
  console.log(`train tok/s (median step): ${Math.round(tokens / (total / 1000))}`)
  return total
}

async function wordLstm(): Promise<void> {
  const batch = Number(arg('batch', '16'))
  const words = Number(arg('words', '32'))
  const vocab = Number(arg('vocab', '25000'))
  const threads = Number(arg('threads', '2'))
  const iters = Number(arg('iters', '5'))
  // The BiLSTM's width: the default-model recipe's unless --lstm-hidden.
  const { featurizer, config, sentences, T, heads: headsOf } = wordStepInputs({ Rng, WordFeaturizer, wordTaggerConfig, wordBucket, zipfSampler }, { vocab, batch, words, lstmHidden: Number(arg('lstm-hidden', String(WORD_STUDENT.lstmHidden))) })
  const { list: heads, labels } = headsOf(Number(arg('heads', '1')))
  const params = initWordTaggerParams(config, heads, 1)
  const trainer = new OrtWordTaggerTrainer({ config, heads, params, optimizer: { lr: 2e-3, weightDecay: 0, maxGradNorm: 5 }, threads, executionProviders: ['cpu'] })
  // The feeds and timing of the graph run, from inside the runner.
  const run = OrtGraphRunner.prototype.run
  let feeds: Record<string, Ort.Tensor> = {}
  let model: Uint8Array | null = null
  let runMs = 0
  OrtGraphRunner.prototype.run = async function (this: OrtGraphRunner, p, inputs) {
    const t0 = performance.now()
    const out = await run.call(this, p, inputs)
    runMs = performance.now() - t0
    feeds = { ...inputs }
    for (const q of this.graph.params) feeds[q.name] = new this.ort.Tensor('float32', p.get(q.name)!, q.shape)
    model = this.graph.model
    return out
  }
  const phases: Record<string, number[]> = { 'step (all)': [], 'featurize the batch (host)': [], 'graph run (with output copies)': [], 'AdamW and the rest (host)': [] }
  for (let i = 0; i <= iters; i++) {
    const t0 = performance.now()
    const wb = wordBatch(featurizer, config, sentences, T, new Rng(i))
    const t1 = performance.now()
    await trainer.step(wb, labels, i)
    const t2 = performance.now()
    if (i === 0) continue // warm-up (opens the bucket's session)
    phases['step (all)'].push(t2 - t0)
    phases['featurize the batch (host)'].push(t1 - t0)
    phases['graph run (with output copies)'].push(runMs)
    phases['AdamW and the rest (host)'].push(t2 - t1 - runMs)
  }
  OrtGraphRunner.prototype.run = run
  await trainer.dispose()
  const stepMs = printPhases(`word-lstm 2 × ${config.lstmHidden}, ${heads.length} head(s), batch ${batch} × ${words} words, vocabulary ${vocab}, ${threads} threads`, phases, batch * words)
  if (model) await profileGraph(model, feeds, threads, batch * words, stepMs)
}

async function main(): Promise<void> {
  if (arg('kind', 'bert') === 'word-lstm') return wordLstm()
  const preset = arg('preset', 'cpu-small') as PresetName
  const batch = Number(arg('batch', '16'))
  const seq = Number(arg('seq', '128'))
  const vocab = Number(arg('vocab', '28996'))
  const threads = Number(arg('threads', '2'))
  const iters = Number(arg('iters', '5'))
  const cfg: BertConfig = presetConfig(preset, { vocabSize: vocab, maxPositionEmbeddings: Math.max(512, seq) })
  const rng = new Rng(3)
  const shapes = encoderParamShapes(cfg).set('classifier.weight', [cfg.hiddenSize, 3]).set('classifier.bias', [3])
  const params = new Map([...shapes].map(([n, s]) => [n, Float32Array.from({ length: s.reduce((a, b) => a * b, 1) }, () => (n.includes('LayerNorm.weight') ? 1 : 0.02 * (rng.next() - 0.5)))]))
  const trainer = await OrtTokenClassifierTrainer.create({ config: cfg, heads: [{ name: 'default', numLabels: 3 }], params, optimizer: { lr: 5e-5 }, threads, executionProviders: ['cpu'] })
  const ids = Int32Array.from({ length: batch * seq }, (_, i) => 1 + ((i * 7919) % (vocab - 1)))
  const examples = Array.from({ length: batch }, (_, r) => ({ inputIds: ids.subarray(r * seq, (r + 1) * seq), labels: Int32Array.from({ length: seq }, (_, i) => (r + i) % 3) }))
  const b = collate(examples, examples.map((_, i) => i))
  // The feeds of the graph run, kept to run them again under onnxruntime's profiler.
  const session = trainer.runner.session as Ort.InferenceSession & { run: (f: Record<string, Ort.Tensor>) => Promise<Ort.InferenceSession.ReturnType> }
  const run = session.run.bind(session)
  let feeds: Record<string, Ort.Tensor> = {}
  let runMs = 0
  session.run = async (f: Record<string, Ort.Tensor>) => {
    feeds = f
    const t0 = performance.now()
    const out = await run(f)
    runMs = performance.now() - t0
    return out
  }
  const phases: Record<string, number[]> = { 'step (all)': [], 'graph run (with output copies)': [], 'AdamW on the host': [], 'dropout masks (host)': [], 'rest of gradients() (feeds, sums)': [] }
  for (let i = 0; i <= iters; i++) {
    const t0 = performance.now()
    const r = await trainer.gradients(b, { default: b.labels }, i)
    const t1 = performance.now()
    trainer.optimizer.applyGradients(r.grads, r.gradNormSq, { rows: r.rowGrads })
    const t2 = performance.now()
    const m0 = performance.now()
    dropoutMasks(cfg, batch, seq, i, true, trainer.runner.masks)
    const masks = performance.now() - m0
    if (i === 0) continue // warm-up
    phases['step (all)'].push(t2 - t0)
    phases['graph run (with output copies)'].push(runMs)
    phases['AdamW on the host'].push(t2 - t1)
    phases['dropout masks (host)'].push(masks)
    phases['rest of gradients() (feeds, sums)'].push(t1 - t0 - runMs - masks)
  }
  const stepMs = printPhases(`${preset}, batch ${batch} × ${seq}, vocab ${vocab}, ${threads} threads`, phases, batch * seq)
  await trainer.dispose()
  await profileGraph(trainer.runner.graph.model, feeds, threads, batch * seq, stepMs)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
