// An embedding table's gradient sums the rows of repeated ids. onnxruntime's CPU ScatterND with
// reduction 'add' races on repeated indices across its threads (about 8 % of the additions lost
// on 2 threads: every 2-thread training run had wrong character-table gradients and never
// repeated itself); the training graphs sum them by a Gemm (GradGraph.sumRowsByIndex,
// scatterRows). Every update here adds exactly 1, so each sum must be the id's count.
import * as ort from 'onnxruntime-node'
import { describe, expect, it } from 'vitest'
import { GradGraph } from '@core/onnx/training'
import { Rng } from '@core/rng'

const V = 96
const D = 25
const N = 200_000

function skewedIds(): BigInt64Array {
  // Skewed like characters in text: a few ids take most of the rows.
  const rng = new Rng(7)
  return BigInt64Array.from({ length: N }, () => BigInt(Math.floor(rng.next() ** 3 * V)))
}

function counts(ids: BigInt64Array): Float64Array {
  const c = new Float64Array(V)
  for (const id of ids) c[Number(id)]++
  return c
}

/** A graph of one op: table [V, D], ids [N], rows [N, D] → out [V, D]. */
function graph(op: (t: GradGraph, table: string, ids: string, rows: string) => string): Uint8Array {
  const t = new GradGraph('scatter-rows')
  const table = t.g.input('table', 'float32', [V, D])
  const ids = t.g.input('ids', 'int64', [N])
  const rows = t.g.input('rows', 'float32', [N, D])
  t.g.output('out', op(t, table, ids, rows), 'float32', [V, D])
  return t.encode('test')
}

async function run(bytes: Uint8Array, threads: number, ids: BigInt64Array): Promise<Float32Array> {
  const session = await ort.InferenceSession.create(bytes, { intraOpNumThreads: threads })
  try {
    const out = await session.run({
      table: new ort.Tensor('float32', new Float32Array(V * D), [V, D]),
      ids: new ort.Tensor('int64', ids, [N]),
      rows: new ort.Tensor('float32', new Float32Array(N * D).fill(1), [N, D]),
    })
    return out.out.data as Float32Array
  } finally {
    await session.release()
  }
}

/** Rows of the result whose sums are not the id's count. */
function wrongRows(out: Float32Array, want: Float64Array): number {
  let wrong = 0
  for (let v = 0; v < V; v++) if (out.subarray(v * D, (v + 1) * D).some((x) => x !== want[v])) wrong++
  return wrong
}

describe('an embedding table gradient on several threads', () => {
  const ids = skewedIds()
  const want = counts(ids)

  it('scatterRows sums every repeated id exactly, on 1 and 2 threads', async () => {
    const bytes = graph((t, table, idsIn, rows) => t.scatterRows(table, idsIn, rows))
    for (const threads of [1, 2]) expect(wrongRows(await run(bytes, threads, ids), want), `${threads} threads`).toBe(0)
  }, 60_000)

  it('sumRowsByIndex sums rows by index exactly on 2 threads', async () => {
    const bytes = graph((t, _table, idsIn, rows) => t.sumRowsByIndex(idsIn, rows, t.g.int64s([V])))
    expect(wrongRows(await run(bytes, 2, ids), want)).toBe(0)
  }, 60_000)
})
