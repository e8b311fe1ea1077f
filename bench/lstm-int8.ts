// The word tagger's BiLSTM alone at tagging shapes: ONNX's LSTM (float, as the tagging graph runs
// it) against onnxruntime's com.microsoft DynamicQuantizeLSTM on the same weights quantized as
// `quantize --int8-lstm` does (core/onnx/recurrent int8LstmInputs, as the engine feeds them; the inputs quantized per step by
// the operator). What a wider student would cost in tagging time with either; random weights, so
// the output difference is a bound, not the accuracy (that: `fastbioner compare` on devel).
//   npm run bench:lstm-int8 -- [--hidden 200,256,300] [--din 154] [--batch 12] [--steps 45] [--threads 2] [--runs 200]
import type * as Ort from 'onnxruntime-node'
import { ONNX_OPSET } from '../src/core/onnx/export'
import { GradGraph } from '../src/core/onnx/training'
import { bilstm } from '../src/core/onnx/recurrent'
import { int8LstmTensors } from '../src/core/onnx/word-engine'
import { WORD_TAGGER_DEFAULTS } from '../src/core/model/word-tagger'
import { createOrtSession, loadOnnxRuntime } from '../src/core/onnx/session'
import { Rng } from '../src/core/rng'
import { loadavg } from 'node:os'

const arg = (n: string, d: string) => {
  const i = process.argv.indexOf(`--${n}`)
  return i >= 0 ? process.argv[i + 1] : d
}
const hiddens = arg('hidden', '200,256,300').split(',').map(Number)
const Din = Number(arg('din', '154'))
const B = Number(arg('batch', '12'))
const T = Number(arg('steps', '45'))
const threads = Number(arg('threads', '2'))
const runs = Number(arg('runs', '200'))

/** The word tagger's BiLSTM alone on x [T, B, Din], as its tagging graph runs it (float, or int8: the INT8_LSTM inputs). */
function graph(H: number, int8: boolean): { model: Uint8Array; params: string[] } {
  const t = new GradGraph('lstm')
  const g = t.g
  const y = bilstm(t, g.input('x', 'float32', [T, B, Din]), g.input('lens', 'int32', [B]), Din, H, int8)
  g.output('y', y, 'float32', [T, 2, B, H])
  return { model: g.encode({ opset: ONNX_OPSET, extraOpsets: int8 ? { 'com.microsoft': 1 } : {} }), params: t.params.map((p) => p.name) }
}

async function main(): Promise<void> {
  const ort = await loadOnnxRuntime()
  const rng = new Rng(1)
  console.log(`# LSTM bidirectional, batch ${B} × ${T} steps, input ${Din}, ${threads} threads, load ${loadavg()[0].toFixed(2)}; median of ${runs} runs`)
  console.log('| hidden | float ms | int8 ms | speed-up | max abs diff of y (y in [-1, 1]) |')
  console.log('|---|---|---|---|---|')
  for (const H of hiddens) {
    const u = (n: number, a: number) => Float32Array.from({ length: n }, () => (rng.next() * 2 - 1) * a)
    // Our layout (W_ih [2, Din, 4H], W_hh [2, H, 4H], gates i, f, g, o), as a word tagger stores it.
    const params = new Map([
      ['lstm.weight_ih', u(2 * Din * 4 * H, 1 / Math.sqrt(H))],
      ['lstm.weight_hh', u(2 * H * 4 * H, 1 / Math.sqrt(H))],
      ['lstm.bias', u(2 * 4 * H, 0.1)],
    ])
    // Only the widths int8LstmInputs reads: an input of Din features, H a direction.
    const dims = { ...WORD_TAGGER_DEFAULTS, wordVocabSize: 2, charVocabSize: 2, lstmHidden: H, wordDim: Din, charFilters: 0, shapeFlags: 0, charLm: undefined }
    const feeds: Record<string, Ort.Tensor> = { x: new ort.Tensor('float32', u(T * B * Din, 1), [T, B, Din]), lens: new ort.Tensor('int32', Int32Array.from({ length: B }, (_, i) => T - (i % 7) * 3), [B]) }
    const quantized = int8LstmTensors(ort, params, dims)
    const times: number[] = []
    const outs: Float32Array[] = []
    for (const int8 of [false, true]) {
      const built = graph(H, int8)
      const { session } = await createOrtSession(ort, built.model, ['cpu'], threads, { spin: threads > 1 })
      const all = { ...feeds, ...(int8 ? quantized : {}), ...Object.fromEntries(built.params.map((n) => [n, new ort.Tensor('float32', params.get(n)!, n === 'lstm.bias' ? [2, 4 * H] : [2, params.get(n)!.length / (2 * 4 * H), 4 * H])])) }
      for (let i = 0; i < 10; i++) await session.run(all)
      const ts: number[] = []
      let y: Float32Array | null = null
      for (let i = 0; i < runs; i++) {
        const t0 = performance.now()
        const r = await session.run(all)
        ts.push(performance.now() - t0)
        y = r.y.data as Float32Array
      }
      ts.sort((a, b) => a - b)
      times.push(ts[Math.floor(ts.length / 2)])
      outs.push(y!)
      await session.release()
    }
    let diff = 0
    for (let i = 0; i < outs[0].length; i++) diff = Math.max(diff, Math.abs(outs[0][i] - outs[1][i]))
    console.log(`| ${H} | ${times[0].toFixed(2)} | ${times[1].toFixed(2)} | ${(times[0] / times[1]).toFixed(2)}× | ${diff.toFixed(4)} |`)
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
