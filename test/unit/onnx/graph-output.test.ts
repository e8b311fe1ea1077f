// GraphBuilder.output names the node that computes a value after the graph output instead of
// copying it through an Identity (issue 29: onnxruntime keeps such an Identity when the value is
// read elsewhere, e.g. a gradient that also goes into Σ‖g‖², and copies it on every run).

import { describe, expect, it } from 'vitest'
import { onnx } from 'onnx-proto'
import { GraphBuilder } from '../../../src/core/onnx/graph'
import { loadOnnxRuntime, createOrtSession } from '../../../src/core/onnx/session'

async function run(g: GraphBuilder, x: Float32Array): Promise<Record<string, number[]>> {
  const ort = await loadOnnxRuntime()
  const { session } = await createOrtSession(ort, g.encode({ opset: 17 }), ['cpu'], 1, { spin: false })
  try {
    const out = await session.run({ x: new ort.Tensor('float32', x, [x.length]) })
    return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, Array.from(v.data as Float32Array)]))
  } finally {
    await session.release()
  }
}

const opTypes = (g: GraphBuilder) => onnx.ModelProto.decode(g.encode({ opset: 17 })).graph!.node!.map((n) => n.opType)

describe('GraphBuilder.output', () => {
  it('renames the producing node: no Identity, and readers before and after output() get the value', async () => {
    const g = new GraphBuilder('t')
    const x = g.input('x', 'float32', [3])
    const doubled = g.node('Mul', [x, g.float(2)])
    const before = g.node('Add', [doubled, g.float(1)]) // reads the value before it becomes an output
    g.output('doubled', doubled, 'float32', [3])
    const after = g.node('Mul', [doubled, doubled]) // given the old name after output()
    g.output('before', before, 'float32', [3])
    g.output('after', after, 'float32', [3])
    expect(opTypes(g)).not.toContain('Identity')
    const out = await run(g, Float32Array.of(1, 2, 3))
    expect(out.doubled).toEqual([2, 4, 6])
    expect(out.before).toEqual([3, 5, 7])
    expect(out.after).toEqual([4, 16, 36])
  })

  it('keeps an Identity for a graph input, and for a value that is already an output', async () => {
    const g = new GraphBuilder('t')
    const x = g.input('x', 'float32', [2])
    const y = g.node('Neg', [x])
    g.output('x_copy', x, 'float32', [2])
    g.output('y', y, 'float32', [2])
    g.output('y_again', y, 'float32', [2])
    expect(opTypes(g).filter((t) => t === 'Identity')).toHaveLength(2)
    const out = await run(g, Float32Array.of(1, -2))
    expect(out).toEqual({ x_copy: [1, -2], y: [-1, 2], y_again: [-1, 2] })
  })
})
