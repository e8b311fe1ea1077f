// The matrix products of a training step, each timed alone: onnxruntime's Gemm (as the training
// graph runs it: both operands graph inputs, so nothing is pre-packed; transA for a weight
// gradient Xᵀ·dY, transB for dX = dY·Wᵀ) against PyTorch's torch.mm on the same shapes and threads
// (bench/torch_gemm_ref.py, launched as every PyTorch reference is: ./torch-ref). Issue 29: at
// BERT-base a step is about 90 % Gemm (bench/profile-step.ts), so the products' own ratio is most
// of the whole step's ratio to PyTorch. Quiet machine only; it prints the load.
//
//   npx tsx bench/gemm.ts [--tokens 2048] [--hidden 768] [--inter 3072] [--threads 2] [--iters 10] [--rounds 3]
//
// Per case: GFLOP/s (2·m·k·n per product) of each side and our speed ÷ PyTorch's; then one layer's
// products (the four attention projections and the two FFN products, each forward, weight
// gradient and input gradient) summed: the ratio the Gemm part of a step gives. A step that is nearly
// all products gains on PyTorch only what PyTorch loses outside its own.
import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { GraphBuilder, attr } from '../src/core/onnx/graph'
import { ONNX_OPSET } from '../src/core/onnx/export'
import { createOrtSession, loadOnnxRuntime } from '../src/core/onnx/session'
import { benchCli } from './cli'
import { NOISY_CORES, runTorchRef, torchMissing } from './torch-ref'

interface Case {
  name: string
  m: number
  k: number
  n: number
  transA: boolean
  transB: boolean
  /** Products of this shape in one encoder layer's step. */
  perLayer: number
}

function cases(tokens: number, hidden: number, inter: number): Case[] {
  const c = (name: string, m: number, k: number, n: number, transA: boolean, transB: boolean, perLayer: number): Case => ({ name, m, k, n, transA, transB, perLayer })
  return [
    c('proj', tokens, hidden, hidden, false, false, 4),
    c('proj.dW', hidden, tokens, hidden, true, false, 4),
    c('proj.dX', tokens, hidden, hidden, false, true, 4),
    c('ffn1', tokens, hidden, inter, false, false, 1),
    c('ffn1.dW', hidden, tokens, inter, true, false, 1),
    c('ffn1.dX', tokens, inter, hidden, false, true, 1),
    c('ffn2', tokens, inter, hidden, false, false, 1),
    c('ffn2.dW', inter, tokens, hidden, true, false, 1),
    c('ffn2.dX', tokens, hidden, inter, false, true, 1),
  ]
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]

async function main(): Promise<void> {
  const { fail, positiveInt } = benchCli('bench:gemm')
  const given = new Map<string, string>()
  const flags = ['tokens', 'hidden', 'inter', 'threads', 'iters', 'rounds']
  for (let i = 2; i < process.argv.length; i += 2) {
    const flag = process.argv[i].replace(/^--/, '')
    if (!flags.includes(flag)) fail(`unknown option ${process.argv[i]} (options: ${flags.map((f) => `--${f}`).join(', ')})`)
    if (process.argv[i + 1] === undefined) fail(`${process.argv[i]} needs a value`)
    given.set(flag, process.argv[i + 1])
  }
  const num = (flag: string, d: number) => (given.has(flag) ? positiveInt(given.get(flag)!, `--${flag}`) : d)
  const tokens = num('tokens', 2048)
  const hidden = num('hidden', 768)
  const inter = num('inter', 3072)
  const threads = num('threads', 2)
  const iters = num('iters', 10)
  const rounds = num('rounds', 3)
  const script = resolve(__dirname, 'torch_gemm_ref.py')
  const missing = torchMissing(script)
  const ort = await loadOnnxRuntime()
  const list = cases(tokens, hidden, inter)
  console.log(`# Gemm: ${tokens} tokens, hidden ${hidden}, intermediate ${inter}, ${threads} threads, load ${loadavg()[0].toFixed(2)}${missing ? `; PyTorch: ${missing}` : ''}`)
  const ours = new Map<string, number[]>()
  const theirs = new Map<string, number[]>()
  const add = (m: Map<string, number[]>, name: string, seconds: number) => m.set(name, [...(m.get(name) ?? []), seconds])
  let busiest = 0
  let core: string | null = null
  for (let r = 0; r < rounds; r++) {
    for (const c of list) {
      const g = new GraphBuilder('gemm')
      const a = g.input('a', 'float32', c.transA ? [c.k, c.m] : [c.m, c.k])
      const b = g.input('b', 'float32', c.transB ? [c.n, c.k] : [c.k, c.n])
      g.output('c', g.node('Gemm', [a, b], { transA: attr.int(c.transA ? 1 : 0), transB: attr.int(c.transB ? 1 : 0) }), 'float32', [c.m, c.n])
      const { session } = await createOrtSession(ort, g.encode({ opset: ONNX_OPSET, producerName: 'fastbioner-bench' }), ['cpu'], threads, { spin: threads > 1 })
      const rand = (n: number) => Float32Array.from({ length: n }, (_, i) => ((i * 2654435761) % 1000) / 1000 - 0.5)
      const feeds = { a: new ort.Tensor('float32', rand(c.m * c.k), c.transA ? [c.k, c.m] : [c.m, c.k]), b: new ort.Tensor('float32', rand(c.k * c.n), c.transB ? [c.n, c.k] : [c.k, c.n]) }
      const ts: number[] = []
      for (let i = 0; i < iters + 2; i++) {
        const t0 = performance.now()
        await session.run(feeds)
        if (i >= 2) ts.push((performance.now() - t0) / 1000)
      }
      await session.release()
      add(ours, c.name, median(ts))
    }
    if (!missing) {
      const t = runTorchRef<{ seconds: Record<string, number>; openblas_core: string | null; other_procs_cpu_cores_avg: number }>(script, ['--threads', threads, '--iters', iters, ...list.map((c) => `${c.name}:${c.m}:${c.k}:${c.n}:${c.transA ? 1 : 0}:${c.transB ? 1 : 0}`)])
      for (const c of list) add(theirs, c.name, t.seconds[c.name])
      busiest = Math.max(busiest, t.other_procs_cpu_cores_avg)
      core = t.openblas_core
    }
  }
  const gflops = (c: Case, s: number) => (2 * c.m * c.k * c.n) / s / 1e9
  console.log('| product | m × k × n | transposed | ours GFLOP/s | PyTorch GFLOP/s | speed, ours ÷ PyTorch |')
  console.log('|---|---|---|---|---|---|')
  let oursLayer = 0
  let theirsLayer = 0
  for (const c of list) {
    const o = median(ours.get(c.name)!)
    const t = theirs.has(c.name) ? median(theirs.get(c.name)!) : null
    oursLayer += c.perLayer * o
    if (t != null) theirsLayer += c.perLayer * t
    console.log(`| ${c.name} | ${c.m} × ${c.k} × ${c.n} | ${c.transA ? 'A' : c.transB ? 'B' : '–'} | ${gflops(c, o).toFixed(0)} | ${t != null ? gflops(c, t).toFixed(0) : '–'} | ${t != null ? `${(t / o).toFixed(3)}×` : '–'} |`)
  }
  console.log(`one layer's products (${list.map((c) => `${c.perLayer}× ${c.name}`).join(', ')}): ours ${(oursLayer * 1000).toFixed(1)} ms, PyTorch ${theirsLayer ? `${(theirsLayer * 1000).toFixed(1)} ms → PyTorch ÷ ours ${(theirsLayer / oursLayer).toFixed(3)}×` : '–'}`)
  console.log(`PyTorch: OpenBLAS core ${core ?? '?'}, other cores busiest ${busiest.toFixed(2)}${busiest > NOISY_CORES ? ' (NOISY: the ratios are disturbed)' : ''}; medians of ${rounds} rounds × ${iters} runs`)
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e)
  process.exit(1)
})
