// Weights-only reader of PyTorch checkpoints (pytorch_model.bin) in torch.save's zip format
// (PyTorch ≥ 1.6): <archive>/data.pkl is a pickle of the state dict whose tensors name their
// storages by persistent id ('storage', <torch.XStorage>, key, location, numel); the bytes of
// storage `key` are the entry <archive>/data/<key>. See torch/serialization.py (_save, _load).
//
// The pickle is interpreted by ./restricted-pickle with the allow-list of
// torch.load(weights_only=True) reduced to what a state dict holds: collections.OrderedDict,
// torch._utils._rebuild_tensor(_v2), _rebuild_parameter(_with_state) and the storage types. Any
// other global is refused with its name; nothing is ever executed. Tensors are views (offset,
// size, stride) of storages, which several tensors may share (tied weights, fused q/k/v);
// read() returns a tensor's bytes contiguous in its stored dtype, checked against its storage.
// The legacy format (torch.save before 1.6, or _use_new_zipfile_serialization=False) is refused.

import { ZipEntries, ZipFormatError, looksLikeZip } from './zip-entries'
import { describe, PickleDict, PickleError, PickleGlobal, PickleTuple, unpickle, type PickleValue } from './restricted-pickle'
import { SafetensorsError } from './weight-file-error'

/** The safetensors dtype names, which ./safetensors decodes. */
export type TorchDtype = 'F64' | 'F32' | 'F16' | 'BF16' | 'I64' | 'I32' | 'I16' | 'I8' | 'U8' | 'BOOL'

export class TorchCheckpointError extends SafetensorsError {}

const STORAGE_TYPES: Record<string, { dtype: TorchDtype; bytes: number }> = {
  DoubleStorage: { dtype: 'F64', bytes: 8 },
  FloatStorage: { dtype: 'F32', bytes: 4 },
  HalfStorage: { dtype: 'F16', bytes: 2 },
  BFloat16Storage: { dtype: 'BF16', bytes: 2 },
  LongStorage: { dtype: 'I64', bytes: 8 },
  IntStorage: { dtype: 'I32', bytes: 4 },
  ShortStorage: { dtype: 'I16', bytes: 2 },
  CharStorage: { dtype: 'I8', bytes: 1 },
  ByteStorage: { dtype: 'U8', bytes: 1 },
  BoolStorage: { dtype: 'BOOL', bytes: 1 },
}

const CALLABLES = new Set([
  'collections.OrderedDict',
  'torch._utils._rebuild_tensor',
  'torch._utils._rebuild_tensor_v2',
  'torch._utils._rebuild_parameter',
  'torch._utils._rebuild_parameter_with_state',
])

/** The largest data.pkl read: a state dict of 10 000 tensors pickles to a few MB. */
const MAX_PICKLE_BYTES = 64 * 1024 * 1024

class Storage {
  constructor(
    readonly key: string,
    readonly dtype: TorchDtype,
    readonly elementBytes: number,
    readonly numel: number,
  ) {}
}

class TensorView {
  constructor(
    readonly storage: Storage,
    readonly offset: number,
    readonly shape: number[],
    readonly strides: number[],
  ) {}
}

/** True when a file's first bytes are a bare pickle (torch.save's legacy format starts with one). */
function looksLikeLegacy(buf: Uint8Array): boolean {
  return buf.byteLength >= 2 && buf[0] === 0x80 && buf[1] >= 2 && buf[1] <= 5
}

export class TorchCheckpointReader {
  private readonly zip: ZipEntries
  private readonly prefix: string
  private readonly tensors = new Map<string, TensorView>()
  private readonly storageBytes = new Map<string, Uint8Array>()

  constructor(
    buf: Uint8Array,
    readonly file = '<buffer>',
  ) {
    if (!looksLikeZip(buf)) {
      if (looksLikeLegacy(buf)) {
        throw new TorchCheckpointError(
          file,
          'PyTorch legacy (pre-1.6) checkpoint format is not supported; re-save it with PyTorch 1.6 or later ' +
            '(torch.save(torch.load(f, weights_only=True), f)) or download the model.safetensors version',
        )
      }
      throw new TorchCheckpointError(file, 'not a PyTorch checkpoint (neither the zip format of torch.save nor its legacy pickle)')
    }
    try {
      this.zip = new ZipEntries(buf)
    } catch (e) {
      throw this.error(e)
    }
    const pkls = [...this.zip.entries.keys()].filter((n) => /^[^/]+\/data\.pkl$/.test(n))
    if (pkls.length !== 1) throw new TorchCheckpointError(file, `zip archive with ${pkls.length} <archive>/data.pkl records: not a torch.save checkpoint`)
    this.prefix = pkls[0].slice(0, -'data.pkl'.length)
    const byteorder = this.zip.entries.get(`${this.prefix}byteorder`)
    if (byteorder) {
      const order = new TextDecoder().decode(this.entry(byteorder.name)).trim()
      if (order !== 'little') throw new TorchCheckpointError(file, `byteorder '${order}' is not supported (little-endian only)`)
    }
    const pkl = this.zip.entries.get(pkls[0])!
    if (pkl.size > MAX_PICKLE_BYTES) throw new TorchCheckpointError(file, `${pkl.name} is ${pkl.size} bytes, implausibly large for a state dict`)
    let root: PickleValue
    try {
      root = unpickle(this.entry(pkl.name), this.policy())
    } catch (e) {
      throw this.error(e, pkl.name)
    }
    if (!(root instanceof PickleDict)) throw new TorchCheckpointError(file, `${pkl.name} holds a ${describe(root)}, not a state dict (a dict of tensors)`)
    for (const [k, v] of root.map) {
      if (typeof k !== 'string') throw new TorchCheckpointError(file, `state dict key ${String(k)} is not a string`)
      if (!(v instanceof TensorView)) throw new TorchCheckpointError(file, `state dict entry ${k} is a ${describe(v)}, not a tensor`)
      this.tensors.set(k, v)
    }
  }

  private error(e: unknown, where?: string): Error {
    if (e instanceof ZipFormatError || e instanceof PickleError) return new TorchCheckpointError(this.file, `${where ? where + ': ' : ''}${e.message}`)
    return e as Error
  }

  private entry(name: string): Uint8Array {
    try {
      return this.zip.read(name)
    } catch (e) {
      throw this.error(e)
    }
  }

  private policy() {
    const storages = new Map<string, Storage>()
    const fail = (msg: string): never => {
      throw new PickleError(msg)
    }
    const count = (v: PickleValue, what: string): number => {
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) fail(`${what} ${describe(v)} is not a non-negative integer`)
      return v as number
    }
    const ints = (v: PickleValue, what: string): number[] => {
      if (!(v instanceof PickleTuple)) fail(`${what} is a ${describe(v)}, not a tuple`)
      const items = (v as PickleTuple).items
      if (items.length > 64) fail(`${what} has ${items.length} dimensions`)
      return items.map((x) => count(x, what))
    }
    const rebuild = (args: PickleValue[], fn: string): TensorView => {
      if (args.length < 4) fail(`${fn} with ${args.length} arguments`)
      const [storage, offset, size, stride] = args
      if (!(storage instanceof Storage)) fail(`${fn}: storage is a ${describe(storage)}`)
      const s = storage as Storage
      const shape = ints(size, 'tensor size')
      const strides = ints(stride, 'tensor stride')
      if (shape.length !== strides.length) fail(`tensor size has ${shape.length} dimensions but stride ${strides.length}`)
      const off = count(offset, 'storage offset')
      let numel = 1
      let last = off
      for (let i = 0; i < shape.length; i++) {
        numel *= shape[i]
        last += Math.max(0, shape[i] - 1) * strides[i]
      }
      if (!Number.isSafeInteger(numel) || !Number.isSafeInteger(last)) fail(`tensor size [${shape}] is implausible`)
      if (numel > 0 && last >= s.numel) fail(`tensor [${shape}] with stride [${strides}] at offset ${off} reaches element ${last} of storage ${s.key}, which has ${s.numel}`)
      if (numel > s.numel) fail(`tensor [${shape}] has more elements than its storage ${s.key} (${s.numel}): overlapping (expanded) tensors are not supported`)
      return new TensorView(s, off, shape, strides)
    }
    return {
      global: (module: string, name: string): PickleGlobal | undefined => {
        const q = `${module}.${name}`
        if (CALLABLES.has(q) || (module === 'torch' && name in STORAGE_TYPES)) return new PickleGlobal(module, name)
        return undefined
      },
      reduce: (callable: PickleValue, args: PickleValue[]): PickleValue => {
        const q = callable instanceof PickleGlobal ? callable.qualified : describe(callable)
        switch (q) {
          case 'collections.OrderedDict':
            if (args.length) fail('OrderedDict with arguments is not supported')
            return new PickleDict()
          case 'torch._utils._rebuild_tensor':
          case 'torch._utils._rebuild_tensor_v2':
            return rebuild(args, q)
          case 'torch._utils._rebuild_parameter':
          case 'torch._utils._rebuild_parameter_with_state':
            if (!(args[0] instanceof TensorView)) fail(`${q}: data is a ${describe(args[0])}, not a tensor`)
            return args[0]
          default:
            return fail(`calling ${q} is not allowed in a weights-only checkpoint`)
        }
      },
      build: (obj: PickleValue, state: PickleValue): PickleValue => {
        // OrderedDict's __dict__ (state_dict()._metadata): kept, not interpreted.
        if (obj instanceof PickleDict) {
          obj.state = state
          return obj
        }
        return fail(`BUILD on ${describe(obj)} is not allowed in a weights-only checkpoint`)
      },
      persistentLoad: (pid: PickleValue): PickleValue => {
        if (!(pid instanceof PickleTuple) || pid.items.length !== 5 || pid.items[0] !== 'storage') fail(`persistent id ${describe(pid)} is not ('storage', type, key, location, numel)`)
        const [, type, key, , numel] = (pid as PickleTuple).items
        if (!(type instanceof PickleGlobal) || type.module !== 'torch' || !(type.name in STORAGE_TYPES)) fail(`storage type ${describe(type)} is not supported`)
        if (typeof key !== 'string' || !/^[A-Za-z0-9_]{1,64}$/.test(key)) fail(`storage key ${describe(key)} is invalid`)
        const t = STORAGE_TYPES[(type as PickleGlobal).name]
        const n = count(numel, 'storage size')
        const k = key as string
        const seen = storages.get(k)
        if (seen) {
          if (seen.dtype !== t.dtype || seen.numel !== n) fail(`storage ${k} is named twice with different types or sizes`)
          return seen
        }
        const entry = this.zip.entries.get(`${this.prefix}data/${k}`)
        if (!entry) fail(`storage ${k}: no record ${this.prefix}data/${k} in the archive`)
        if (entry!.size !== n * t.bytes) fail(`storage ${k}: record holds ${entry!.size} bytes, ${(type as PickleGlobal).name} of ${n} elements needs ${n * t.bytes}`)
        const s = new Storage(k, t.dtype, t.bytes, n)
        storages.set(k, s)
        return s
      },
    }
  }

  names(): string[] {
    return [...this.tensors.keys()]
  }

  info(name: string): { dtype: TorchDtype; shape: number[] } | undefined {
    const t = this.tensors.get(name)
    return t && { dtype: t.storage.dtype, shape: [...t.shape] }
  }

  /** The tensor's bytes, contiguous (row-major), little-endian, in its stored dtype. */
  read(name: string): { dtype: TorchDtype; shape: number[]; bytes: Uint8Array } {
    const t = this.tensors.get(name)
    if (!t) throw new TorchCheckpointError(this.file, `no tensor named ${name}`)
    const s = t.storage
    let data = this.storageBytes.get(s.key)
    if (!data) {
      data = this.entry(`${this.prefix}data/${s.key}`)
      this.storageBytes.set(s.key, data)
    }
    const E = s.elementBytes
    const numel = t.shape.reduce((a, b) => a * b, 1)
    const out = { dtype: s.dtype, shape: [...t.shape] }
    // Row-major strides (size-1 dimensions may carry any stride): a slice of the storage.
    let contiguous = true
    for (let i = t.shape.length - 1, expect = 1; i >= 0; i--) {
      if (t.shape[i] !== 1 && t.strides[i] !== expect) contiguous = false
      expect *= t.shape[i]
    }
    if (contiguous || numel === 0) return { ...out, bytes: data.subarray(t.offset * E, (t.offset + numel) * E) }
    // A strided view (a transpose, a column slice): gathered element by element. Bounded: the
    // constructor checked numel against the storage and the last element reached.
    const bytes = new Uint8Array(numel * E)
    const rank = t.shape.length
    const index = new Array<number>(rank).fill(0)
    let src = t.offset
    for (let i = 0; i < numel; i++) {
      bytes.set(data.subarray(src * E, src * E + E), i * E)
      for (let d = rank - 1; d >= 0; d--) {
        index[d]++
        src += t.strides[d]
        if (index[d] < t.shape[d]) break
        src -= t.strides[d] * t.shape[d]
        index[d] = 0
      }
    }
    return { ...out, bytes }
  }
}
