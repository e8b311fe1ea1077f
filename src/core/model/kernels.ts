// Kernels the stock backends lack or run far too slowly for BERT training.
//
// wasm (tfjs-backend-wasm 4.22):
//  - UnsortedSegmentSum is missing: it is the gradient of gather, i.e. of every embedding lookup.
//  - BatchMatMul only reaches XNNPACK when transposeA = transposeB = false and both batch sizes
//    are 1 (batch_mat_mul_impl.cc); everything else runs a scalar triple loop ~10-15x slower.
//    The gradient of matMul always asks for a transposed operand, so a training step spent
//    nearly all its time there. The override below transposes explicitly (the Transpose kernel
//    is cheap, O(size)) and runs batched products slice by slice through the XNNPACK path.
//  - Identity copies its input; the gradient tape clones every tensor it saves through it.
//    Shared instead (reference counted, as the stock Reshape does).
//  - Sum can only reduce innermost axes and transposes first; bias/LayerNorm gradients reduce
//    the leading (token) axis. Done as one in-order pass instead.
//  - Transpose copies for no-op permutations (gather's gradient does one over the whole
//    embedding table) and is slow on large 2-D inputs. Shared / cache-blocked instead.
// cpu (tfjs-backend-cpu 4.22):
//  - UnsortedSegmentSum loops over every segment with whole-tensor ops, O(numSegments · size):
//    for a 30k-word vocabulary one embedding gradient took minutes. Replaced by a scatter-add.
//
// Every override keeps the stock kernel's semantics and is tested against it
// (test/unit/model/kernels.test.ts).

import * as tf from '@tensorflow/tfjs-core'

type TensorInfo = tf.TensorInfo
type KernelFunc = tf.KernelFunc
type Backend = tf.KernelBackend

// Structural view of the parts of BackendWasm (4.22) these kernels use. It is internal API; the
// version is pinned by package.json and the kernels test fails loudly if it changes.
interface WasmTensorData {
  id: number
  memoryOffset: number
  shape: number[]
  dtype: tf.DataType
}
interface WasmModule {
  HEAPU8: Uint8Array
  cwrap(name: string, ret: null | 'number', args: string[]): (...args: unknown[]) => unknown
  tfjs: { registerTensor(id: number, size: number, offset: number): void; disposeData(id: number): void }
}
interface WasmBackendLike extends Backend {
  wasm: WasmModule
  dataIdMap: { get(dataId: tf.DataId): WasmTensorData }
  dataIdNextNumber: number
  makeOutput(shape: number[], dtype: tf.DataType, memoryOffset?: number): TensorInfo
  typedArrayFromHeap(t: TensorInfo): Float32Array | Int32Array | Uint8Array
  disposeData(dataId: tf.DataId, force?: boolean): boolean
}

// Kept on globalThis like tfjs' own registries, so that a second copy of this module (bundles,
// test runners that reload modules) sees the overrides already installed.
const shared = globalThis as unknown as { __fastbionerKernels?: { installed: Set<string>; stock: Map<string, tf.KernelConfig> } }
shared.__fastbionerKernels ??= { installed: new Set(), stock: new Map() }
const installed = shared.__fastbionerKernels.installed
/** Stock kernels we replaced, kept so tests can compare against them. */
export const stockKernels = shared.__fastbionerKernels.stock

function replaceKernel(config: tf.KernelConfig): void {
  const key = `${config.backendName}/${config.kernelName}`
  if (installed.has(key)) return
  const stock = tf.getKernel(config.kernelName, config.backendName)
  if (stock) {
    stockKernels.set(key, stock)
    tf.unregisterKernel(config.kernelName, config.backendName)
  }
  tf.registerKernel(config)
  installed.add(key)
  // setupFunc runs when a backend is initialised; a backend that is already up needs it now.
  if (config.setupFunc && tf.engine().registry[config.backendName] != null) {
    config.setupFunc(tf.engine().registry[config.backendName])
  }
}

// ---------------------------------------------------------------------------------------------
// UnsortedSegmentSum: out[s, ...] = Σ_{i: ids[i] = s} x[i, ...]; ids outside [0, numSegments)
// are dropped, as TensorFlow does. segmentIds may have any rank r; it indexes x's first r dims.

function segmentSumJs(
  x: Float32Array | Int32Array | Uint8Array,
  ids: Int32Array | Float32Array | Uint8Array,
  out: Float32Array | Int32Array,
  inner: number,
  numSegments: number,
): void {
  out.fill(0)
  for (let i = 0; i < ids.length; i++) {
    const s = ids[i]
    if (s < 0 || s >= numSegments) continue
    const src = i * inner
    const dst = s * inner
    for (let j = 0; j < inner; j++) out[dst + j] += x[src + j]
  }
}

function segmentOutShape(x: TensorInfo, segmentIds: TensorInfo, numSegments: number): number[] {
  return [numSegments, ...x.shape.slice(segmentIds.shape.length)]
}

function innerSize(x: TensorInfo, segmentIds: TensorInfo): number {
  return tf.util.sizeFromShape(x.shape.slice(segmentIds.shape.length))
}

const unsortedSegmentSumWasm: KernelFunc = ({ inputs, backend, attrs }) => {
  const b = backend as WasmBackendLike
  const { x, segmentIds } = inputs as { x: TensorInfo; segmentIds: TensorInfo }
  const numSegments = (attrs as { numSegments: number }).numSegments
  const dtype = x.dtype === 'int32' ? 'int32' : 'float32'
  const out = b.makeOutput(segmentOutShape(x, segmentIds, numSegments), dtype)
  // Views are taken after makeOutput: an allocation may grow (and detach) the wasm heap.
  const xv = b.typedArrayFromHeap(x)
  const idv = b.typedArrayFromHeap(segmentIds)
  const ov = b.typedArrayFromHeap(out) as Float32Array | Int32Array
  segmentSumJs(xv, idv, ov, innerSize(x, segmentIds), numSegments)
  return out
}

const unsortedSegmentSumCpu: KernelFunc = ({ inputs, backend, attrs }) => {
  const { x, segmentIds } = inputs as { x: TensorInfo; segmentIds: TensorInfo }
  const numSegments = (attrs as { numSegments: number }).numSegments
  const dtype = x.dtype === 'int32' ? 'int32' : 'float32'
  const shape = segmentOutShape(x, segmentIds, numSegments)
  const be = backend as Backend
  const xv = be.readSync(x.dataId) as Float32Array | Int32Array
  const idv = be.readSync(segmentIds.dataId) as Int32Array
  const ov = dtype === 'int32' ? new Int32Array(tf.util.sizeFromShape(shape)) : new Float32Array(tf.util.sizeFromShape(shape))
  segmentSumJs(xv, idv, ov, innerSize(x, segmentIds), numSegments)
  const cpu = backend as Backend & { makeTensorInfo(shape: number[], dtype: tf.DataType, values: tf.TypedArray): TensorInfo }
  return cpu.makeTensorInfo(shape, dtype, ov)
}

// ---------------------------------------------------------------------------------------------
// BatchMatMul for wasm: always feed the C kernel rank-3 operands with batch 1 and no transposes,
// which is the only case that reaches XNNPACK's fully-connected operator.

let cBatchMatMul: ((...args: unknown[]) => unknown) | null = null

function setupBatchMatMul(backend: object): void {
  const b = backend as WasmBackendLike
  const stock = stockKernels.get('wasm/BatchMatMul')
  stock?.setupFunc?.(backend as Backend)
  cBatchMatMul = b.wasm.cwrap('BatchMatMul', null, [
    'number', 'array', 'number', // a id, a shape, a rank
    'number', 'array', 'number', // b id, b shape, b rank
    'number', 'number', // transposeA, transposeB
    'number', // out id
  ])
}

function shapeBytes(shape: number[]): Uint8Array {
  return new Uint8Array(new Int32Array(shape).buffer)
}

/** Registers a tensor record in the C++ backend that aliases existing heap memory. */
function aliasTensor(b: WasmBackendLike, offset: number, size: number): number {
  const id = b.dataIdNextNumber++
  b.wasm.tfjs.registerTensor(id, size, offset)
  return id
}

function transposeLast2(b: WasmBackendLike, x: TensorInfo, batch: number, rows: number, cols: number): TensorInfo {
  const transpose = tf.getKernel('Transpose', 'wasm')!.kernelFunc
  const x3: TensorInfo = { dataId: x.dataId, shape: [batch, rows, cols], dtype: x.dtype }
  return transpose({ inputs: { x: x3 }, backend: b, attrs: { perm: [0, 2, 1] } }) as TensorInfo
}

const batchMatMulWasm: KernelFunc = (args) => {
  const { inputs, backend, attrs } = args
  const b = backend as WasmBackendLike
  const { a, b: bIn } = inputs as { a: TensorInfo; b: TensorInfo }
  const { transposeA, transposeB } = attrs as { transposeA: boolean; transposeB: boolean }
  const stock = stockKernels.get('wasm/BatchMatMul')!
  if (a.dtype !== 'float32' || bIn.dtype !== 'float32' || cBatchMatMul == null) return stock.kernelFunc(args)

  const aRank = a.shape.length
  const bRank = bIn.shape.length
  const batchA = tf.util.sizeFromShape(a.shape.slice(0, -2))
  const batchB = tf.util.sizeFromShape(bIn.shape.slice(0, -2))
  // Only plain batch shapes (equal, or one side without batch) are handled here; general
  // broadcasting of several outer dims falls back to the stock kernel.
  const outer = tf.backend_util.assertAndGetBroadcastShape(a.shape.slice(0, -2), bIn.shape.slice(0, -2))
  if (batchA !== batchB && batchA !== 1 && batchB !== 1) return stock.kernelFunc(args)
  if (batchA === batchB && batchA > 1 && !tf.util.arraysEqual(a.shape.slice(0, -2), bIn.shape.slice(0, -2))) {
    return stock.kernelFunc(args)
  }
  const m = transposeA ? a.shape[aRank - 1] : a.shape[aRank - 2]
  const k = transposeA ? a.shape[aRank - 2] : a.shape[aRank - 1]
  const kb = transposeB ? bIn.shape[bRank - 1] : bIn.shape[bRank - 2]
  const n = transposeB ? bIn.shape[bRank - 2] : bIn.shape[bRank - 1]
  tf.util.assert(k === kb, () => `Error in matMul: inner shapes (${k}) and (${kb}) of Tensors with shapes ${a.shape} and ${bIn.shape} and transposeA=${transposeA} and transposeB=${transposeB} must match.`)
  const batch = Math.max(batchA, batchB)
  const out = b.makeOutput([batch, m, n], 'float32')
  out.shape = [...outer, m, n]
  if (m === 0 || n === 0 || batch === 0) return out

  const temps: TensorInfo[] = []
  const aT = transposeA ? transposeLast2(b, a, batchA, k, m) : a
  const bT = transposeB ? transposeLast2(b, bIn, batchB, n, k) : bIn
  if (aT !== a) temps.push(aT)
  if (bT !== bIn) temps.push(bT)
  try {
    const aOff = b.dataIdMap.get(aT.dataId).memoryOffset
    const bOff = b.dataIdMap.get(bT.dataId).memoryOffset
    const oOff = b.dataIdMap.get(out.dataId).memoryOffset
    const call = (aId: number, rows: number, bId: number, outId: number) =>
      cBatchMatMul!(aId, shapeBytes([1, rows, k]), 3, bId, shapeBytes([1, k, n]), 3, 0, 0, outId)

    if (batchB === 1) {
      // One weight matrix for all of a: fold a's batch into its rows, a single XNNPACK call.
      const aId = aliasTensor(b, aOff, batchA * m * k)
      const bId = aliasTensor(b, bOff, k * n)
      const oId = aliasTensor(b, oOff, batch * m * n)
      call(aId, batchA * m, bId, oId)
      // Disposing the aliases only drops the C++ records (and the XNNPACK operator cached on
      // the b id); the memory belongs to aT/bT/out.
      b.wasm.tfjs.disposeData(aId)
      b.wasm.tfjs.disposeData(bId)
      b.wasm.tfjs.disposeData(oId)
    } else {
      // Per batch: alias slices of the operands (no copies) and run one XNNPACK product each.
      // XNNPACK packs b on operator creation (O(k·n)), small next to the O(m·k·n) product.
      let aId = batchA === 1 ? aliasTensor(b, aOff, m * k) : -1
      for (let i = 0; i < batch; i++) {
        if (batchA > 1) aId = aliasTensor(b, aOff + 4 * i * m * k, m * k)
        const bId = aliasTensor(b, bOff + 4 * i * k * n, k * n)
        const oId = aliasTensor(b, oOff + 4 * i * m * n, m * n)
        call(aId, m, bId, oId)
        b.wasm.tfjs.disposeData(bId)
        b.wasm.tfjs.disposeData(oId)
        if (batchA > 1) b.wasm.tfjs.disposeData(aId)
      }
      if (batchA === 1) b.wasm.tfjs.disposeData(aId)
    }
  } finally {
    for (const t of temps) b.disposeData(t.dataId)
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Identity for wasm: the stock kernel copies the buffer. tf.clone and the gradient tape (which
// clones every tensor it saves for the backward pass) call it hundreds of times per training
// step. Tensors are immutable, so share the buffer and count the reference, exactly as the wasm
// Reshape kernel and the cpu Identity kernel do.

const identityWasm: KernelFunc = (args) => {
  const { inputs, backend } = args
  const x = (inputs as { x: TensorInfo }).x
  if (x.dtype === 'string') return stockKernels.get('wasm/Identity')!.kernelFunc(args)
  ;(backend as Backend).incRef(x.dataId)
  return { dataId: x.dataId, shape: [...x.shape], dtype: x.dtype }
}

// ---------------------------------------------------------------------------------------------
// Sum over leading axes for wasm: the stock kernel only reduces innermost axes, so it first
// transposes the whole input (a strided copy). Bias and LayerNorm gradients are exactly this
// case (sum of dy [tokens, features] over tokens): a row-by-row accumulation reads the input
// once, in order, and adds in the same order as the stock kernel (float32, row ascending).

function leadingAxes(axis: number | number[], rank: number): number | null {
  const axes = tf.util.parseAxisParam(axis, new Array(rank).fill(1)).sort((a, b) => a - b)
  if (axes.length === 0 || axes.length >= rank) return null
  return axes.every((a, i) => a === i) ? axes.length : null
}

const sumWasm: KernelFunc = (args) => {
  const { inputs, backend, attrs } = args
  const b = backend as WasmBackendLike
  const x = (inputs as { x: TensorInfo }).x
  const { axis, keepDims } = attrs as { axis: number | number[]; keepDims: boolean }
  const k = x.dtype === 'float32' ? leadingAxes(axis, x.shape.length) : null
  if (k == null) return stockKernels.get('wasm/Sum')!.kernelFunc(args)
  const rows = tf.util.sizeFromShape(x.shape.slice(0, k))
  const inner = tf.util.sizeFromShape(x.shape.slice(k))
  const outShape = keepDims ? [...x.shape.slice(0, k).map(() => 1), ...x.shape.slice(k)] : x.shape.slice(k)
  const out = b.makeOutput(outShape, 'float32')
  const xv = b.typedArrayFromHeap(x) as Float32Array
  const ov = b.typedArrayFromHeap(out) as Float32Array
  ov.fill(0)
  for (let i = 0; i < rows; i++) {
    const base = i * inner
    for (let j = 0; j < inner; j++) ov[j] += xv[base + j]
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Transpose for wasm: a no-op permutation shares the buffer (the stock kernel copies it; the
// gradient of gather does one over the whole embedding table), and a 2-D transpose of a large
// tensor runs a cache-blocked loop, about twice as fast as the stock kernel's.

function squeezePerm(shape: number[], perm: number[]): { shape: number[]; perm: number[] } {
  const keep = shape.map((d, i) => (d !== 1 ? i : -1)).filter((i) => i >= 0)
  const rank = new Map(keep.map((axis, i) => [axis, i]))
  return { shape: keep.map((i) => shape[i]), perm: perm.filter((p) => shape[p] !== 1).map((p) => rank.get(p)!) }
}

function transpose2dInto(src: Float32Array | Int32Array, dst: Float32Array | Int32Array, rows: number, cols: number): void {
  const B = 32
  for (let i0 = 0; i0 < rows; i0 += B) {
    const i1 = Math.min(i0 + B, rows)
    for (let j0 = 0; j0 < cols; j0 += B) {
      const j1 = Math.min(j0 + B, cols)
      for (let i = i0; i < i1; i++) {
        const s = i * cols
        for (let j = j0; j < j1; j++) dst[j * rows + i] = src[s + j]
      }
    }
  }
}

const transposeWasm: KernelFunc = (args) => {
  const { inputs, backend, attrs } = args
  const b = backend as WasmBackendLike
  const x = (inputs as { x: TensorInfo }).x
  const perm = (attrs as { perm: number[] }).perm
  const outShape = perm.map((p) => x.shape[p])
  if (x.dtype === 'string') return stockKernels.get('wasm/Transpose')!.kernelFunc(args)
  const sq = squeezePerm(x.shape, perm)
  if (sq.perm.every((p, i) => p === i)) {
    b.incRef(x.dataId)
    return { dataId: x.dataId, shape: outShape, dtype: x.dtype }
  }
  if (sq.shape.length === 2 && (x.dtype === 'float32' || x.dtype === 'int32') && tf.util.sizeFromShape(x.shape) >= 1 << 19) {
    const out = b.makeOutput(outShape, x.dtype)
    transpose2dInto(b.typedArrayFromHeap(x) as Float32Array, b.typedArrayFromHeap(out) as Float32Array, sq.shape[0], sq.shape[1])
    return out
  }
  return stockKernels.get('wasm/Transpose')!.kernelFunc(args)
}

// ---------------------------------------------------------------------------------------------

/** Installs the wasm kernels; call after '@tensorflow/tfjs-backend-wasm' has been imported. */
export function registerWasmKernels(): void {
  replaceKernel({ kernelName: 'UnsortedSegmentSum', backendName: 'wasm', kernelFunc: unsortedSegmentSumWasm })
  replaceKernel({ kernelName: 'Identity', backendName: 'wasm', kernelFunc: identityWasm })
  replaceKernel({ kernelName: 'Sum', backendName: 'wasm', kernelFunc: sumWasm, setupFunc: (be) => stockKernels.get('wasm/Sum')?.setupFunc?.(be) })
  replaceKernel({ kernelName: 'Transpose', backendName: 'wasm', kernelFunc: transposeWasm, setupFunc: (be) => stockKernels.get('wasm/Transpose')?.setupFunc?.(be) })
  if (tf.getKernel('BatchMatMul', 'wasm') && !installed.has('wasm/BatchMatMul')) {
    replaceKernel({ kernelName: 'BatchMatMul', backendName: 'wasm', kernelFunc: batchMatMulWasm, setupFunc: setupBatchMatMul })
  }
}

/** Installs the cpu kernels; call after '@tensorflow/tfjs-backend-cpu' has been imported. */
export function registerCpuKernels(): void {
  replaceKernel({ kernelName: 'UnsortedSegmentSum', backendName: 'cpu', kernelFunc: unsortedSegmentSumCpu })
}
