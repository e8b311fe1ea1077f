// A small, readable ONNX graph builder on top of the protobuf classes that onnx-proto generates
// from the official onnx.proto3 (ONNX 1.10, IR version 8: enough for opset 17).
//
// Why not hand-encode protobuf: the message layout is ONNX's to define; onnx-proto keeps the
// field numbers and wire types right, and the same classes decode models in tests.

import { onnx } from 'onnx-proto'
import { endianness } from 'node:os'

export type ElemType = 'float32' | 'int64' | 'int32' | 'int8' | 'uint8'

const DATA_TYPE: Record<ElemType, number> = {
  float32: onnx.TensorProto.DataType.FLOAT,
  int64: onnx.TensorProto.DataType.INT64,
  int32: onnx.TensorProto.DataType.INT32,
  int8: onnx.TensorProto.DataType.INT8,
  uint8: onnx.TensorProto.DataType.UINT8,
}

export type TensorData = Float32Array | BigInt64Array | Int32Array | Int8Array | Uint8Array

/** A dense tensor; data is written as little-endian raw bytes without copying. */
export interface TensorValue {
  dims: number[]
  data: TensorData
}

/** Attribute values are tagged because an ONNX float attribute of 1.0 is not an int attribute. */
export type Attr =
  | { kind: 'int'; value: number }
  | { kind: 'float'; value: number }
  | { kind: 'ints'; value: number[] }
  | { kind: 'floats'; value: number[] }
  | { kind: 'string'; value: string }
  | { kind: 'tensor'; value: TensorValue }

export const attr = {
  int: (value: number): Attr => ({ kind: 'int', value }),
  float: (value: number): Attr => ({ kind: 'float', value }),
  ints: (value: number[]): Attr => ({ kind: 'ints', value }),
  floats: (value: number[]): Attr => ({ kind: 'floats', value }),
  string: (value: string): Attr => ({ kind: 'string', value }),
  tensor: (value: TensorValue): Attr => ({ kind: 'tensor', value }),
}

export interface NodeOptions {
  /** Output names; default: one output named after the node. */
  outputs?: string[] | number
  /** Node name; default: `<op>_<n>` with a per-builder counter. */
  name?: string
  /** Operator domain; '' is the default ONNX domain, 'com.microsoft' for ORT contrib ops. */
  domain?: string
}

export interface ModelOptions {
  opset: number
  /** Extra operator sets, e.g. { 'com.microsoft': 1 }. */
  extraOpsets?: Record<string, number>
  irVersion?: number
  producerName?: string
  producerVersion?: string
  docString?: string
  metadata?: Record<string, string>
}

function elemTypeOf(data: TensorData): ElemType {
  if (data instanceof Float32Array) return 'float32'
  if (data instanceof BigInt64Array) return 'int64'
  if (data instanceof Int8Array) return 'int8'
  if (data instanceof Uint8Array) return 'uint8'
  return 'int32'
}

function tensorProto(name: string, t: TensorValue): onnx.ITensorProto {
  const count = t.dims.reduce((a, b) => a * b, 1)
  if (count !== t.data.length) {
    throw new Error(`ONNX tensor ${name}: dims [${t.dims}] hold ${count} values, data has ${t.data.length}`)
  }
  // raw_data is little-endian by definition; a typed array already is on every platform we ship.
  if (endianness() !== 'LE') throw new Error('ONNX export needs a little-endian machine')
  return {
    name,
    dims: t.dims,
    dataType: DATA_TYPE[elemTypeOf(t.data)],
    rawData: new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength),
  }
}

function attributeProto(name: string, a: Attr): onnx.IAttributeProto {
  const T = onnx.AttributeProto.AttributeType
  switch (a.kind) {
    case 'int':
      return { name, type: T.INT, i: a.value }
    case 'float':
      return { name, type: T.FLOAT, f: a.value }
    case 'ints':
      return { name, type: T.INTS, ints: a.value }
    case 'floats':
      return { name, type: T.FLOATS, floats: a.value }
    case 'string':
      return { name, type: T.STRING, s: new TextEncoder().encode(a.value) }
    case 'tensor':
      return { name, type: T.TENSOR, t: tensorProto(name, a.value) }
  }
}

function valueInfo(name: string, type: ElemType, dims: (number | string)[]): onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType: DATA_TYPE[type],
        shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  }
}

export class GraphBuilder {
  private readonly inputs: onnx.IValueInfoProto[] = []
  private readonly outputs: onnx.IValueInfoProto[] = []
  private readonly initializers: onnx.ITensorProto[] = []
  private readonly nodes: onnx.INodeProto[] = []
  private readonly names = new Set<string>()
  private readonly constCache = new Map<string, string>()
  /** Values that output() renamed to a graph output's name. */
  private readonly renamed = new Map<string, string>()
  private counter = 0

  constructor(readonly name: string) {}

  /** Declares a graph input; dims are numbers or symbolic names ('batch'). */
  input(name: string, type: ElemType, dims: (number | string)[]): string {
    this.claim(name)
    this.inputs.push(valueInfo(name, type, dims))
    return name
  }

  /** Adds a weight (or any constant) as an initializer. */
  initializer(name: string, tensor: TensorValue): string {
    this.claim(name)
    this.initializers.push(tensorProto(name, tensor))
    return name
  }

  /** A small constant initializer, shared between nodes that use the same value. */
  constant(data: TensorData, dims: number[] = [data.length], hint = 'const'): string {
    const key = `${elemTypeOf(data)}|${dims.join(',')}|${Array.from(data as ArrayLike<number | bigint>, String).join(',')}`
    const cached = this.constCache.get(key)
    if (cached) return cached
    const name = this.fresh(hint)
    this.initializers.push(tensorProto(name, { dims, data }))
    this.constCache.set(key, name)
    return name
  }

  float(value: number, dims: number[] = []): string {
    return this.constant(new Float32Array([value]), dims, 'float')
  }

  int64s(values: number[], dims: number[] = [values.length]): string {
    return this.constant(BigInt64Array.from(values, (v) => BigInt(v)), dims, 'int64')
  }

  /** Adds a node and returns its (first) output name. */
  node(op: string, inputs: string[], attrs: Record<string, Attr> = {}, opts: NodeOptions = {}): string {
    return this.nodeOutputs(op, inputs, attrs, opts)[0]
  }

  /** Adds a node and returns all its output names. */
  nodeOutputs(op: string, inputs: string[], attrs: Record<string, Attr> = {}, opts: NodeOptions = {}): string[] {
    const nodeName = opts.name ?? this.fresh(op)
    let outputs: string[]
    if (Array.isArray(opts.outputs)) {
      outputs = opts.outputs
      outputs.forEach((o) => this.claim(o))
    } else {
      const n = opts.outputs ?? 1
      outputs = n === 1 ? [this.fresh(`${nodeName}/out`)] : Array.from({ length: n }, (_, i) => this.fresh(`${nodeName}/out${i}`))
    }
    this.nodes.push({
      name: nodeName,
      opType: op,
      domain: opts.domain ?? '',
      input: inputs.map((i) => this.renamed.get(i) ?? i),
      output: outputs,
      attribute: Object.entries(attrs).map(([k, v]) => attributeProto(k, v)),
    })
    return outputs
  }

  /**
   * Declares a graph output. When `value` has another name, the node that computes it is renamed
   * to write `name` (its readers, and any later node given `value`, read `name`): an Identity
   * instead would cost onnxruntime a copy, since the optimizer keeps an Identity whose input is
   * read elsewhere (a gradient that also goes into Σ‖g‖²). A graph input or initializer, or a value
   * already an output, goes through an Identity.
   */
  output(name: string, value: string, type: ElemType, dims: (number | string)[]): string {
    const v = this.renamed.get(value) ?? value
    if (v !== name) {
      const producer = this.outputs.some((o) => o.name === v) ? undefined : this.nodes.find((n) => n.output?.includes(v))
      if (producer) {
        this.claim(name)
        producer.output = producer.output!.map((o) => (o === v ? name : o))
        for (const n of this.nodes) if (n.input?.includes(v)) n.input = n.input.map((i) => (i === v ? name : i))
        this.renamed.set(value, name)
      } else this.node('Identity', [v], {}, { outputs: [name], name: `${name}/identity` })
    }
    this.outputs.push(valueInfo(name, type, dims))
    return name
  }

  build(opts: ModelOptions): onnx.ModelProto {
    const opsetImport: onnx.IOperatorSetIdProto[] = [{ domain: '', version: opts.opset }]
    for (const [domain, version] of Object.entries(opts.extraOpsets ?? {})) opsetImport.push({ domain, version })
    return onnx.ModelProto.create({
      irVersion: opts.irVersion ?? 8,
      opsetImport,
      producerName: opts.producerName ?? 'fastbioner',
      producerVersion: opts.producerVersion ?? '',
      docString: opts.docString ?? '',
      graph: {
        name: this.name,
        node: this.nodes,
        initializer: this.initializers,
        input: this.inputs,
        output: this.outputs,
      },
      metadataProps: Object.entries(opts.metadata ?? {}).map(([key, value]) => ({ key, value })),
    })
  }

  /** Serialises the model to protobuf bytes. */
  encode(opts: ModelOptions): Uint8Array {
    return onnx.ModelProto.encode(this.build(opts)).finish()
  }

  private claim(name: string): void {
    if (this.names.has(name)) throw new Error(`ONNX graph ${this.name}: value name ${name} used twice`)
    this.names.add(name)
  }

  private fresh(hint: string): string {
    let name = hint
    while (this.names.has(name)) name = `${hint}_${++this.counter}`
    this.names.add(name)
    return name
  }
}
