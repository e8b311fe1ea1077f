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
import { bertStepInputs } from './bert-step'

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
  const { config: cfg, params: fresh, batch: b, heads } = bertStepInputs({ Rng, encoderParamShapes, presetConfig, collate }, { preset: 'cpu-small', batch: 16, seq: 128 })
  const params = fresh()
  const medians: Record<string, number[]> = {}
  const median = (xs: number[]) => [...xs].sort((p, q) => p - q)[Math.floor(xs.length / 2)]
  for (let r = 0; r < rounds; r++) {
    for (const [name, v] of Object.entries(variants)) {
      sessionNow = v.session ?? {}
      optionsNow = v.options ?? {}
      const tr = await OrtTokenClassifierTrainer.create({ config: cfg, heads, params: new Map([...params].map(([k, a]) => [k, a.slice()])), optimizer: { lr: 5e-5 }, threads: 2, executionProviders: ['cpu'], ...v.trainer })
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
