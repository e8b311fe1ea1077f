// A restricted unpickler: it interprets pickle opcodes (protocols 2–5, the binary ones) into plain
// values and never calls anything of its own accord. A GLOBAL is looked up in the caller's
// allow-list (anything else is refused with its qualified name, before any REDUCE), and REDUCE /
// BUILD / persistent ids go to the caller's handlers, which build only the objects they know —
// the same contract as torch.load(weights_only=True). Opcodes outside the list (INST, OBJ,
// NEWOBJ, EXT*, text-protocol opcodes, …) are refused.
//
// Sizes in the stream (string lengths, memo indices) are checked against the bytes that remain
// before anything is allocated; the stack and the memo have caps. Errors are PickleError (the
// caller adds the file name).

export class PickleError extends Error {
  override name = 'PickleError'
}

/** A GLOBAL the policy allowed: an opaque reference the handlers recognise. */
export class PickleGlobal {
  constructor(
    readonly module: string,
    readonly name: string,
  ) {}
  get qualified(): string {
    return `${this.module}.${this.name}`
  }
}

export class PickleTuple {
  constructor(readonly items: PickleValue[]) {}
}

export type PickleKey = string | number | bigint | boolean | null

export class PickleDict {
  readonly map = new Map<PickleKey, PickleValue>()
  /** State given by BUILD (OrderedDict's __dict__, e.g. a state dict's _metadata). */
  state: PickleValue = null
}

// Values the handlers make are kept as they are (`object`).
export type PickleValue = null | boolean | number | bigint | string | Uint8Array | PickleValue[] | PickleTuple | PickleDict | PickleGlobal | object

export interface PicklePolicy {
  /** The value of GLOBAL module.name; throw (or return undefined) to refuse it. */
  global(module: string, name: string): PickleGlobal | undefined
  /** REDUCE: callable(*args). */
  reduce(callable: PickleValue, args: PickleValue[]): PickleValue
  /** BUILD: obj.__setstate__(state); returns the object. */
  build(obj: PickleValue, state: PickleValue): PickleValue
  /** BINPERSID. */
  persistentLoad(pid: PickleValue): PickleValue
}

const MAX_STACK = 1_000_000
const MAX_MEMO = 1_000_000

const MARK = Symbol('mark')

/** Short description of a value for error messages. */
export function describe(v: PickleValue): string {
  if (v === null) return 'None'
  if (typeof v === 'string') return `str ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v)}`
  if (typeof v !== 'object') return `${typeof v} ${String(v)}`
  if (v instanceof PickleGlobal) return v.qualified
  if (v instanceof PickleTuple) return `tuple of ${v.items.length}`
  if (v instanceof PickleDict) return `dict of ${v.map.size}`
  if (Array.isArray(v)) return `list of ${v.length}`
  if (v instanceof Uint8Array) return `bytes of ${v.byteLength}`
  return v.constructor?.name ?? 'object'
}

function asKey(k: PickleValue): PickleKey {
  if (k === null || typeof k === 'string' || typeof k === 'number' || typeof k === 'bigint' || typeof k === 'boolean') return k
  throw new PickleError(`dict key of type ${describe(k)} is not supported`)
}

export function unpickle(data: Uint8Array, policy: PicklePolicy): PickleValue {
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength)
  const utf8 = new TextDecoder('utf-8', { fatal: true })
  const stack: Array<PickleValue | typeof MARK> = []
  const memo = new Map<number, PickleValue>()
  let pos = 0

  const fail = (msg: string): never => {
    throw new PickleError(`${msg} (byte ${pos})`)
  }
  const need = (n: number): void => {
    if (n < 0 || pos + n > data.byteLength) fail(`truncated: ${n} more bytes needed, ${data.byteLength - pos} left`)
  }
  const u8 = (): number => {
    need(1)
    return data[pos++]
  }
  const u16 = (): number => {
    need(2)
    const v = dv.getUint16(pos, true)
    pos += 2
    return v
  }
  const u32 = (): number => {
    need(4)
    const v = dv.getUint32(pos, true)
    pos += 4
    return v
  }
  const u64 = (): number => {
    need(8)
    const v = dv.getBigUint64(pos, true)
    pos += 8
    if (v > BigInt(data.byteLength)) fail(`length ${v} is larger than the pickle`)
    return Number(v)
  }
  const bytes = (n: number): Uint8Array => {
    need(n)
    const b = data.subarray(pos, pos + n)
    pos += n
    return b
  }
  const text = (n: number): string => {
    const b = bytes(n)
    try {
      return utf8.decode(b)
    } catch {
      return fail('string is not valid UTF-8')
    }
  }
  const line = (): string => {
    const end = data.indexOf(0x0a, pos)
    if (end < 0) fail('truncated: unterminated line')
    const s = text(end - pos)
    pos++ // the newline
    return s
  }
  const push = (v: PickleValue): void => {
    if (stack.length >= MAX_STACK) fail(`stack deeper than ${MAX_STACK}`)
    stack.push(v)
  }
  const pop = (): PickleValue => {
    if (!stack.length) fail('stack underflow')
    const v = stack.pop()!
    if (v === MARK) fail('unexpected MARK')
    return v as PickleValue
  }
  const top = (): PickleValue => {
    if (!stack.length || stack[stack.length - 1] === MARK) fail('stack underflow')
    return stack[stack.length - 1] as PickleValue
  }
  const popMark = (): PickleValue[] => {
    const i = stack.lastIndexOf(MARK)
    if (i < 0) fail('no MARK on the stack')
    const items = stack.splice(i + 1) as PickleValue[]
    stack.pop()
    return items
  }
  const put = (i: number, v: PickleValue): void => {
    if (!memo.has(i) && memo.size >= MAX_MEMO) fail(`more than ${MAX_MEMO} memo entries`)
    memo.set(i, v)
  }
  const get = (i: number): PickleValue => {
    if (!memo.has(i)) fail(`memo ${i} was never stored`)
    return memo.get(i)!
  }
  const global = (module: string, name: string): PickleGlobal => {
    const g = policy.global(module, name)
    if (!g) fail(`global ${module}.${name} is not allowed: only the types a state dict needs are (weights only, as torch.load(weights_only=True))`)
    return g!
  }
  const setItems = (dict: PickleValue, items: PickleValue[]): void => {
    if (!(dict instanceof PickleDict)) fail(`SETITEM(S) on ${describe(dict)}, not a dict`)
    if (items.length % 2) fail('SETITEMS with an odd number of items')
    for (let i = 0; i < items.length; i += 2) (dict as PickleDict).map.set(asKey(items[i]), items[i + 1])
  }
  const appendTo = (list: PickleValue, items: PickleValue[]): void => {
    if (!Array.isArray(list)) fail(`APPEND(S) on ${describe(list)}, not a list`)
    for (const it of items) (list as PickleValue[]).push(it)
  }

  for (;;) {
    const at = pos
    const op = u8()
    switch (op) {
      case 0x80: // PROTO
        if (u8() > 5) fail('pickle protocol above 5')
        break
      case 0x95: // FRAME: a length prefix only
        need(8)
        pos += 8
        break
      case 0x2e: // STOP
        if (stack.length !== 1) fail(`STOP with ${stack.length} items on the stack`)
        return pop()
      case 0x28: // MARK
        push(MARK as never)
        break
      case 0x7d: // EMPTY_DICT
        push(new PickleDict())
        break
      case 0x5d: // EMPTY_LIST
        push([])
        break
      case 0x29: // EMPTY_TUPLE
        push(new PickleTuple([]))
        break
      case 0x74: // TUPLE
        push(new PickleTuple(popMark()))
        break
      case 0x85: // TUPLE1
        push(new PickleTuple([pop()]))
        break
      case 0x86: {
        // TUPLE2
        const b = pop()
        push(new PickleTuple([pop(), b]))
        break
      }
      case 0x87: {
        // TUPLE3
        const c = pop()
        const b = pop()
        push(new PickleTuple([pop(), b, c]))
        break
      }
      case 0x4e: // NONE
        push(null)
        break
      case 0x88: // NEWTRUE
        push(true)
        break
      case 0x89: // NEWFALSE
        push(false)
        break
      case 0x4a: // BININT
        need(4)
        push(dv.getInt32(pos, true))
        pos += 4
        break
      case 0x4b: // BININT1
        push(u8())
        break
      case 0x4d: // BININT2
        push(u16())
        break
      case 0x8a: {
        // LONG1: little-endian two's complement of n bytes
        const n = u8()
        const b = bytes(n)
        let v = 0n
        for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i])
        if (n && b[n - 1] & 0x80) v -= 1n << BigInt(8 * n)
        push(v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v)
        break
      }
      case 0x47: // BINFLOAT (big-endian)
        need(8)
        push(dv.getFloat64(pos, false))
        pos += 8
        break
      case 0x58: // BINUNICODE
        push(text(u32()))
        break
      case 0x8c: // SHORT_BINUNICODE
        push(text(u8()))
        break
      case 0x8d: // BINUNICODE8
        push(text(u64()))
        break
      case 0x55: // SHORT_BINSTRING (py2 str)
        push(text(u8()))
        break
      case 0x54: // BINSTRING
        push(text(u32()))
        break
      case 0x43: // SHORT_BINBYTES
        push(bytes(u8()))
        break
      case 0x42: // BINBYTES
        push(bytes(u32()))
        break
      case 0x8e: // BINBYTES8
        push(bytes(u64()))
        break
      case 0x71: // BINPUT
        put(u8(), top())
        break
      case 0x72: // LONG_BINPUT
        put(u32(), top())
        break
      case 0x94: // MEMOIZE
        put(memo.size, top())
        break
      case 0x68: // BINGET
        push(get(u8()))
        break
      case 0x6a: // LONG_BINGET
        push(get(u32()))
        break
      case 0x63: {
        // GLOBAL "module\nname\n"
        const module = line()
        push(global(module, line()))
        break
      }
      case 0x93: {
        // STACK_GLOBAL
        const name = pop()
        const module = pop()
        if (typeof module !== 'string' || typeof name !== 'string') fail('STACK_GLOBAL needs two strings')
        push(global(module as string, name as string))
        break
      }
      case 0x52: {
        // REDUCE
        const args = pop()
        const callable = pop()
        if (!(args instanceof PickleTuple)) fail(`REDUCE arguments are ${describe(args)}, not a tuple`)
        push(policy.reduce(callable, (args as PickleTuple).items))
        break
      }
      case 0x62: {
        // BUILD
        const state = pop()
        push(policy.build(pop(), state))
        break
      }
      case 0x51: // BINPERSID
        push(policy.persistentLoad(pop()))
        break
      case 0x73: {
        // SETITEM
        const v = pop()
        const k = pop()
        setItems(top(), [k, v])
        break
      }
      case 0x75: {
        // SETITEMS
        const items = popMark()
        setItems(top(), items)
        break
      }
      case 0x61: {
        // APPEND
        const v = pop()
        appendTo(top(), [v])
        break
      }
      case 0x65: {
        // APPENDS
        const items = popMark()
        appendTo(top(), items)
        break
      }
      case 0x30: // POP
        if (stack.length && stack[stack.length - 1] === MARK) stack.pop()
        else pop()
        break
      case 0x31: // POP_MARK
        popMark()
        break
      case 0x32: // DUP
        push(top())
        break
      default:
        pos = at
        fail(`opcode 0x${op.toString(16).padStart(2, '0')} (${JSON.stringify(String.fromCharCode(op))}) is not allowed in a weights-only pickle`)
    }
  }
}
