// A/B of variants of the cpu-small training step (16 × 128, 2 threads), run in turns so that the
// machine's drift hits every variant alike: median over rounds of each round's median step. A
// variant sets onnxruntime session options, session config entries and/or trainer options.
// Quiet machine only.
//
//   npx tsx bench/ab-step.ts '{"fused":{},"standard":{"trainer":{"contribOps":false}}}' [rounds] [iters]
//   npx tsx bench/ab-step.ts '{"resident":{},"copied":{"trainer":{"residentParams":false}}}'
//   npx tsx bench/ab-step.ts '{"default":{},"block4":{"session":{"session.dynamic_block_base":"4"}}}'
//   npx tsx bench/ab-step.ts '{"sequential":{},"parallel":{"options":{"executionMode":"parallel","interOpNumThreads":2,"intraOpNumThreads":1}}}'
import { loadavg } from 'node:os'
import { encoderParamShapes } from '../src/core/model/bert'
import { presetConfig } from '../src/core/model/presets'
import { Rng } from '../src/core/rng'
import { loadOnnxRuntime } from '../src/core/onnx/session'
import { collate } from '../src/core/train/batching'
import { OrtTokenClassifierTrainer, type TokenClassifierTrainerOptions } from '../src/core/train/ort'

interface Variant {
  session?: Record<string, string>
  /** Session options over the trainer's own (e.g. executionMode, interOpNumThreads). */
  options?: Record<string, unknown>
  trainer?: Partial<Pick<TokenClassifierTrainerOptions, 'contribOps' | 'wordRowGrads' | 'residentParams'>>
}

async function main(): Promise<void> {
  const variants = JSON.parse(process.argv[2] ?? '{"default":{}}') as Record<string, Variant>
  const rounds = Number(process.argv[3] ?? 3)
  const iters = Number(process.argv[4] ?? 8)
  const ort = await loadOnnxRuntime()
  // Session config entries reach the trainer's session through a wrapped create (the trainer has no option for them).
  const create = ort.InferenceSession.create.bind(ort.InferenceSession)
  let sessionNow: Record<string, string> = {}
  let optionsNow: Record<string, unknown> = {}
  ;(ort.InferenceSession as unknown as { create: typeof create }).create = ((m: never, o?: { extra?: { session?: Record<string, string> } }) =>
    create(m, { ...o, ...optionsNow, extra: { ...o?.extra, session: { ...(o?.extra?.session ?? {}), ...sessionNow } } } as never)) as typeof create
  const vocab = 28996
  const cfg = presetConfig('cpu-small', { vocabSize: vocab, maxPositionEmbeddings: 512 })
  const rng = new Rng(3)
  const shapes = encoderParamShapes(cfg).set('classifier.weight', [cfg.hiddenSize, 3]).set('classifier.bias', [3])
  const fresh = () => new Map([...shapes].map(([n, s]) => [n, Float32Array.from({ length: s.reduce((a, b) => a * b, 1) }, () => (n.includes('LayerNorm.weight') ? 1 : 0.02 * (rng.next() - 0.5)))]))
  const params = fresh()
  const batch = 16
  const seq = 128
  const ids = Int32Array.from({ length: batch * seq }, (_, i) => 1 + ((i * 7919) % (vocab - 1)))
  const examples = Array.from({ length: batch }, (_, r) => ({ inputIds: ids.subarray(r * seq, (r + 1) * seq), labels: Int32Array.from({ length: seq }, (_, i) => (r + i) % 3) }))
  const b = collate(examples, examples.map((_, i) => i))
  const medians: Record<string, number[]> = {}
  const median = (xs: number[]) => [...xs].sort((p, q) => p - q)[Math.floor(xs.length / 2)]
  for (let r = 0; r < rounds; r++) {
    for (const [name, v] of Object.entries(variants)) {
      sessionNow = v.session ?? {}
      optionsNow = v.options ?? {}
      const tr = await OrtTokenClassifierTrainer.create({ config: cfg, heads: [{ name: 'default', numLabels: 3 }], params: new Map([...params].map(([k, a]) => [k, a.slice()])), optimizer: { lr: 5e-5 }, threads: 2, executionProviders: ['cpu'], ...v.trainer })
      const ts: number[] = []
      for (let i = 0; i <= iters; i++) {
        const t0 = performance.now()
        await tr.step(b, { default: b.labels }, i)
        if (i) ts.push(performance.now() - t0) // the first step warms the session up
      }
      await tr.dispose()
      ;(medians[name] ??= []).push(median(ts))
      console.log(`round ${r} ${name}: median step ${median(ts).toFixed(1)} ms, load ${loadavg()[0].toFixed(2)}`)
    }
  }
  for (const [k, v] of Object.entries(medians)) console.log(`${k}: ${v.map((x) => x.toFixed(1)).join(' ')} → median ${median(v).toFixed(1)} ms`)
}

void main()
