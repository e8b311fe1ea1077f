// A/B of onnxruntime session configs on the cpu-small training step (quiet machine).
import { encoderParamShapes } from '/work/main/src/core/model/bert'
import { presetConfig } from '/work/main/src/core/model/presets'
import { Rng } from '/work/main/src/core/rng'
import { loadOnnxRuntime } from '/work/main/src/core/onnx/session'
import { collate } from '/work/main/src/core/train/batching'
import { OrtTokenClassifierTrainer } from '/work/main/src/core/train/ort'
import { loadavg } from 'node:os'
const variants: Record<string, Record<string, string>> = JSON.parse(process.argv[2])
const rounds = Number(process.argv[3] ?? 3), iters = Number(process.argv[4] ?? 8)
;(async () => {
  const ort = await loadOnnxRuntime()
  const create = ort.InferenceSession.create.bind(ort.InferenceSession)
  let extraNow: Record<string, string> = {}
  ;(ort.InferenceSession as any).create = (m: any, o: any) => create(m, { ...o, extra: { session: { ...(o?.extra?.session ?? {}), ...extraNow } } })
  const cfg = presetConfig('cpu-small', { vocabSize: 28996, maxPositionEmbeddings: 512 })
  const rng = new Rng(3)
  const shapes = encoderParamShapes(cfg).set('classifier.weight', [cfg.hiddenSize, 3]).set('classifier.bias', [3])
  const params = new Map([...shapes].map(([n, s]) => [n, Float32Array.from({ length: s.reduce((a, b) => a * b, 1) }, () => (n.includes('LayerNorm.weight') ? 1 : 0.02 * (rng.next() - 0.5)))]))
  const batch = 16, seq = 128, vocab = 28996
  const ids = Int32Array.from({ length: batch * seq }, (_, i) => 1 + ((i * 7919) % (vocab - 1)))
  const examples = Array.from({ length: batch }, (_, r) => ({ inputIds: ids.subarray(r * seq, (r + 1) * seq), labels: Int32Array.from({ length: seq }, (_, i) => (r + i) % 3) }))
  const b = collate(examples, examples.map((_, i) => i))
  const res: Record<string, number[]> = {}
  for (let r = 0; r < rounds; r++) for (const [name, extra] of Object.entries(variants)) {
    extraNow = extra
    const tr = await OrtTokenClassifierTrainer.create({ config: cfg, heads: [{ name: 'default', numLabels: 3 }], params, optimizer: { lr: 5e-5 }, threads: 2, executionProviders: ['cpu'] })
    const ts: number[] = []
    for (let i = 0; i <= iters; i++) { const t0 = performance.now(); await tr.step(b, { default: b.labels }, i); if (i) ts.push(performance.now() - t0) }
    await tr.dispose()
    ts.sort((p, q) => p - q)
    ;(res[name] ??= []).push(ts[Math.floor(ts.length / 2)])
    console.log(`round ${r} ${name}: median step ${ts[Math.floor(ts.length / 2)].toFixed(1)} ms, load ${loadavg()[0].toFixed(2)}`)
  }
  for (const [k, v] of Object.entries(res)) console.log(k, v.map((x) => x.toFixed(1)).join(' '), 'median', [...v].sort((p, q) => p - q)[Math.floor(v.length / 2)].toFixed(1))
})()
