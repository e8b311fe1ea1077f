// Tagging engine: onnxruntime-node on our own ONNX export of the folder's weights (graph-cache.ts),
// with a tfjs fallback.
//
// Order: onnxruntime with CUDA (where its provider library is installed) → DirectML (Windows) →
// CPU; when onnxruntime cannot load, or cannot load the graph even after one re-export, the tfjs
// model (core/model) runs instead. The engine that runs, and why, is reported in `engine` and
// `reason`; every fallback is also logged with the file and the error.
//
// Overrides: opts.prefer / FASTBIONER_INFERENCE = 'onnx' | 'tfjs'; opts.executionProviders /
// FASTBIONER_ORT_EP = comma list of 'cuda', 'dml', 'cpu'.

import { existsSync } from 'node:fs'
import { availableParallelism, cpus } from 'node:os'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type * as Ort from 'onnxruntime-node'
import { readCheckpointFiles } from './checkpoint'
import { DEFAULT_HEAD } from '../model/config'
import { onnxCacheDir, ownOnnxGraph, type OwnGraph } from './graph-cache'
import { openTfjsEngine } from './tfjs'

import type { EngineName, ExecutionProvider, InferenceBatch, InferenceEngine, InferenceResult, OrtEngineName } from './engine'

export type { EngineName, ExecutionProvider, InferenceBatch, InferenceEngine, InferenceResult, OrtEngineName } from './engine'

export interface OpenEngineOptions {
  /** Default 'onnx'; FASTBIONER_INFERENCE overrides the default. */
  prefer?: 'onnx' | 'tfjs'
  /**
   * Where the ONNX graph we export from the folder's weights goes (a model.onnx in the folder is
   * never run: graph-cache.ts). 'auto' (default): the per-user cache (`onnxCache`, else
   * FASTBIONER_ONNX_CACHE, else the platform's cache folder); 'memory': nowhere, exported on
   * every open.
   */
  export?: 'auto' | 'memory'
  /** The cache folder for 'auto'; default onnxCacheDir() (FASTBIONER_ONNX_CACHE of this process, else the platform's). */
  onnxCache?: string
  /** Providers to try in order; default: cuda (if installed), dml (Windows), cpu. */
  executionProviders?: ExecutionProvider[]
  /** Intra-op threads; default: all cores. */
  threads?: number
  /**
   * Let onnxruntime's worker threads spin between operators (onnxruntime's own default). Ours is
   * false: on a machine that is also training, rendering or running tests, spinning threads
   * fight for the cores and a batch took 20-30% longer in bench/infer.ts.
   */
  spin?: boolean
  /** Where fallbacks are reported; default console.warn. */
  logger?: (line: string) => void
  env?: NodeJS.ProcessEnv
  /** Loads onnxruntime-node (tests inject a failing loader). */
  loadOrt?: () => Promise<typeof Ort>
  /** Opens the tfjs engine (default: core/model through ./tfjs). */
  openTfjs?: (dir: string) => Promise<InferenceEngine>
}

export class InferenceEngineError extends Error {
  override name = 'InferenceEngineError'
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message.split('\n')[0] : String(e)
}

// A require that bundlers leave alone, as in core/model/backend.ts.
function nodeRequire(): NodeRequire {
  if (typeof require === 'function') return require
  if (typeof __filename === 'string') return createRequire(__filename)
  return createRequire(pathToFileURL(join(process.cwd(), 'index.js')).href)
}

/** Loads onnxruntime-node (throws when its native binding is missing or broken). */
export async function loadOnnxRuntime(): Promise<typeof Ort> {
  return nodeRequire()('onnxruntime-node') as typeof Ort
}

async function defaultOpenTfjs(dir: string): Promise<InferenceEngine> {
  return openTfjsEngine(dir)
}

/** Directory of the onnxruntime-node native binding for this platform, or null. */
function ortBinDir(): string | null {
  try {
    const pkg = nodeRequire().resolve('onnxruntime-node/package.json')
    const dir = join(dirname(pkg), 'bin', 'napi-v6', process.platform, process.arch)
    return existsSync(dir) ? dir : null
  } catch {
    return null
  }
}

/** Providers worth trying here, with the reason others are skipped. */
export function defaultExecutionProviders(): { order: ExecutionProvider[]; skipped: string[] } {
  const order: ExecutionProvider[] = []
  const skipped: string[] = []
  const bin = ortBinDir()
  const cudaLib = process.platform === 'win32' ? 'onnxruntime_providers_cuda.dll' : 'libonnxruntime_providers_cuda.so'
  if (process.platform === 'darwin') skipped.push('cuda: not on macOS')
  else if (bin && existsSync(join(bin, cudaLib))) order.push('cuda')
  else skipped.push(`cuda: ${cudaLib} not installed (npm install with ONNXRUNTIME_NODE_INSTALL=cuda12 fetches it)`)
  if (process.platform === 'win32') order.push('dml')
  order.push('cpu')
  return { order, skipped }
}

export function parseProviders(value: string): ExecutionProvider[] {
  const out: ExecutionProvider[] = []
  for (const raw of value.split(',')) {
    const v = raw.trim().toLowerCase()
    if (!v) continue
    if (v !== 'cuda' && v !== 'dml' && v !== 'cpu') throw new InferenceEngineError(`FASTBIONER_ORT_EP=${value}: '${v}' is not one of cuda, dml, cpu`)
    out.push(v)
  }
  return out
}

function toInt64(a: Int32Array | BigInt64Array | undefined, n: number, what: string): BigInt64Array {
  if (a == null) return new BigInt64Array(n)
  if (a.length !== n) throw new InferenceEngineError(`${what} has ${a.length} values, expected batch × seq = ${n}`)
  if (a instanceof BigInt64Array) return a
  const out = new BigInt64Array(n)
  for (let i = 0; i < n; i++) out[i] = BigInt(a[i])
  return out
}

/**
 * Opens an InferenceSession on the first provider that works, from a file or from model bytes.
 * `memoryPattern` false for training graphs: onnxruntime's memory pattern plans, after a first
 * run, one block for all of a run's intermediates, which the CPU arena (still holding the first
 * run's separate allocations) cannot serve from its free chunks, so it grows by the same size
 * again. Measured at BERT-base, batch 16 × 128: a trainer and its first three steps reached 5.9 GB
 * of peak RSS with it, 3.8 GB without.
 */
export async function createOrtSession(
  ort: typeof Ort,
  path: string | Uint8Array,
  providers: ExecutionProvider[],
  threads: number,
  { spin, memoryPattern = true }: { spin: boolean; memoryPattern?: boolean },
): Promise<{ session: Ort.InferenceSession; provider: ExecutionProvider; failures: string[] }> {
  const failures: string[] = []
  for (const ep of providers) {
    try {
      const options: Ort.InferenceSession.SessionOptions = {
        executionProviders: [ep],
        graphOptimizationLevel: 'all',
        intraOpNumThreads: threads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        // Warnings about unused initializers etc. are noise for users; errors still throw.
        logSeverityLevel: 3,
        ...(memoryPattern ? {} : { enableMemPattern: false }),
        // Spinning stops when a run returns (force_spinning_stop): what the caller does between runs
        // (AdamW, the next batch) then has the cores to itself — a quiet cpu-small training step's
        // host work besides masks and AdamW took 4-5 ms instead of 12-13 (bench/profile-step.ts).
        extra: { session: spin ? { force_spinning_stop: '1' } : { intra_op: { allow_spinning: '0' } } },
      }
      const session = typeof path === 'string' ? await ort.InferenceSession.create(path, options) : await ort.InferenceSession.create(path, options)
      return { session, provider: ep, failures }
    } catch (e) {
      failures.push(`${ep}: ${errorText(e)}`)
      // A corrupt file fails on every provider: no point trying the others.
      if (/protobuf|parse|invalid model|load model|ModelProto|No graph/i.test(errorText(e))) break
    }
  }
  throw new InferenceEngineError(`onnxruntime could not load ${typeof path === 'string' ? path : 'the training graph'}: ${failures.join('; ')}`)
}

class OrtEngine implements InferenceEngine {
  readonly warnings: string[]
  readonly files: string[]
  private readonly heads: Array<{ head: string; output: string }>
  private readonly hiddenOutputs: string[]

  constructor(
    private readonly ort: typeof Ort,
    private readonly session: Ort.InferenceSession,
    readonly engine: OrtEngineName,
    readonly reason: string,
    warnings: string[],
    /** Names the graph in errors. */
    private readonly path: string,
    files: string[] = [path],
  ) {
    this.warnings = warnings
    this.files = files
    this.heads = session.outputNames
      .filter((o) => o === 'logits' || o.startsWith('logits_'))
      .map((o) => ({ head: o === 'logits' ? DEFAULT_HEAD : o.slice('logits_'.length), output: o }))
    this.hiddenOutputs = session.outputNames
      .filter((o) => /^hidden_state_\d+$/.test(o))
      .sort((a, b) => Number(a.slice(13)) - Number(b.slice(13)))
  }

  async run(b: InferenceBatch): Promise<InferenceResult> {
    const n = b.batch * b.seq
    const dims = [b.batch, b.seq]
    const feeds: Record<string, Ort.Tensor> = {
      input_ids: new this.ort.Tensor('int64', toInt64(b.inputIds, n, 'inputIds'), dims),
      attention_mask: new this.ort.Tensor('int64', toInt64(b.attentionMask, n, 'attentionMask'), dims),
      token_type_ids: new this.ort.Tensor('int64', toInt64(b.tokenTypeIds, n, 'tokenTypeIds'), dims),
    }
    if (b.chars) {
      feeds.char_ids = new this.ort.Tensor('int64', toInt64(b.chars.charIds, n * b.chars.maxChars, 'charIds'), [...dims, b.chars.maxChars])
      feeds.shape_flags = new this.ort.Tensor('float32', b.chars.shapeFlags, [...dims, b.chars.flags])
    }
    let out: Ort.InferenceSession.ReturnType
    try {
      out = await this.session.run(feeds)
    } catch (e) {
      // e.g. a sequence longer than max_position_embeddings fails in the position Gather.
      throw new InferenceEngineError(`onnxruntime failed on a batch of ${b.batch} × ${b.seq} tokens with ${this.path}: ${errorText(e)}`)
    }
    const logits: Record<string, Float32Array> = {}
    for (const h of this.heads) logits[h.head] = out[h.output].data as Float32Array
    const result: InferenceResult = { logits }
    if (this.hiddenOutputs.length) result.hiddenStates = this.hiddenOutputs.map((o) => out[o].data as Float32Array)
    return result
  }

  async dispose(): Promise<void> {
    await this.session.release()
  }
}

/** Opens the fastest engine that works for the checkpoint in `dir`. */
export async function openInferenceEngine(dir: string, opts: OpenEngineOptions = {}): Promise<InferenceEngine> {
  const env = opts.env ?? process.env
  const log = opts.logger ?? ((line: string) => console.warn(line))
  const envPrefer = env.FASTBIONER_INFERENCE?.trim().toLowerCase()
  if (envPrefer && envPrefer !== 'onnx' && envPrefer !== 'tfjs') {
    throw new InferenceEngineError(`FASTBIONER_INFERENCE=${env.FASTBIONER_INFERENCE} is not 'onnx' or 'tfjs'`)
  }
  const prefer = opts.prefer ?? (envPrefer as 'onnx' | 'tfjs' | undefined) ?? 'onnx'
  const openTfjs = opts.openTfjs ?? defaultOpenTfjs
  const warnings: string[] = []

  const fallback = async (why: string): Promise<InferenceEngine> => {
    const line = `[fastbioner] ${why}; falling back to tfjs`
    log(line)
    warnings.push(why)
    let t: InferenceEngine
    try {
      t = await openTfjs(dir)
    } catch (e) {
      throw new InferenceEngineError(`no inference engine for ${dir}: ${why}; the tfjs fallback failed too: ${errorText(e)}`)
    }
    return { ...bind(t), reason: `${t.reason} (fallback: ${why})`, warnings: [...warnings, ...t.warnings], files: t.files }
  }

  if (prefer === 'tfjs') {
    const t = await openTfjs(dir)
    return { ...bind(t), reason: `${t.reason} (tfjs preferred${opts.prefer ? '' : ' by FASTBIONER_INFERENCE'})` }
  }

  let ort: typeof Ort
  try {
    ort = await (opts.loadOrt ?? loadOnnxRuntime)()
  } catch (e) {
    return fallback(`onnxruntime-node cannot load (${errorText(e)})`)
  }

  // Where the process's user keeps caches, whatever `env` says about engine choice.
  const cacheDir = opts.export === 'memory' ? null : (opts.onnxCache ?? onnxCacheDir())
  let graph: OwnGraph
  try {
    graph = await ownOnnxGraph(dir, { cacheDir })
  } catch (e) {
    return fallback(`cannot export ${dir} to ONNX (${errorText(e)})`)
  }
  if (cacheDir && !graph.path) {
    warnings.push(graph.reason)
    log(`[fastbioner] ${graph.reason}`)
  }
  const noteOf = (g: OwnGraph): string => (g.status === 'cached' ? '' : g.path ? '; exported the ONNX graph into the cache' : '; ONNX graph exported in memory')
  let exportNote = noteOf(graph)

  const envEp = env.FASTBIONER_ORT_EP
  const def = defaultExecutionProviders()
  const providers = opts.executionProviders ?? (envEp ? parseProviders(envEp) : def.order)
  const threads = opts.threads ?? (typeof availableParallelism === 'function' ? availableParallelism() : cpus().length)
  const spin = opts.spin ?? false

  let opened: Awaited<ReturnType<typeof createOrtSession>>
  try {
    opened = await createOrtSession(ort, graph.path ?? graph.model!, providers, threads, { spin })
  } catch (e) {
    if (graph.status !== 'cached') return fallback(errorText(e))
    // A cached graph onnxruntime rejects (damaged on disk): export once more and retry before
    // giving up on onnxruntime.
    const why = `${errorText(e)}; exporting the graph again`
    log(`[fastbioner] ${why}`)
    warnings.push(why)
    try {
      graph = await ownOnnxGraph(dir, { cacheDir, refresh: true })
      opened = await createOrtSession(ort, graph.path ?? graph.model!, providers, threads, { spin })
      exportNote = `${noteOf(graph)} after a load failure`
    } catch (e2) {
      return fallback(errorText(e2))
    }
  }
  const engine: OrtEngineName = opened.provider === 'cuda' ? 'onnxruntime-cuda' : opened.provider === 'dml' ? 'onnxruntime-dml' : 'onnxruntime-cpu'
  const version = (ort.env as { versions?: { common?: string } }).versions?.common ?? ''
  const epText = opened.provider === 'cpu' ? `CPU execution provider, ${threads} intra-op thread${threads === 1 ? '' : 's'}` : `${opened.provider.toUpperCase()} execution provider`
  const notes = [...opened.failures.map((f) => `${f.split(':')[0]} failed: ${f.slice(f.indexOf(':') + 2)}`)]
  if (!opts.executionProviders && !envEp) notes.push(...def.skipped.map((s) => `skipped ${s}`))
  const reason = `onnxruntime-node ${version}, ${epText}${exportNote}${notes.length ? `; ${notes.join('; ')}` : ''}`
  if (opened.failures.length) warnings.push(...opened.failures.map((f) => `onnxruntime provider ${f}`))
  // What the engine loaded: the cached graph, else (in memory) the weights it was exported from.
  const files = graph.path ? [graph.path] : readCheckpointFiles(dir).weightPaths
  return new OrtEngine(ort, opened.session, engine, reason, warnings, graph.path ?? `the ONNX graph of ${dir}`, files)
}

/**
 * onnxruntime on the CPU for a graph in memory (a model under training, exported for each devel
 * evaluation): nothing is written to disk. `label` names it in errors and the reason.
 */
export async function openOrtEngineFromBytes(bytes: Uint8Array, label: string, opts: { threads?: number } = {}): Promise<InferenceEngine> {
  const ort = await loadOnnxRuntime()
  const threads = opts.threads ?? (typeof availableParallelism === 'function' ? availableParallelism() : cpus().length)
  const opened = await createOrtSession(ort, bytes, ['cpu'], threads, { spin: false })
  const version = (ort.env as { versions?: { common?: string } }).versions?.common ?? ''
  return new OrtEngine(ort, opened.session, 'onnxruntime-cpu', `onnxruntime-node ${version}, CPU execution provider, ${threads} intra-op thread${threads === 1 ? '' : 's'}, ${label}`, [], label)
}

/** A plain-object copy of an engine whose methods stay bound to the original. */
function bind(t: InferenceEngine): InferenceEngine {
  return { engine: t.engine, reason: t.reason, warnings: t.warnings, files: t.files, run: (b) => t.run(b), dispose: () => t.dispose() }
}


