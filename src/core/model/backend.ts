// Chooses and initialises the TensorFlow.js backend once per process.
//
// Order: tfjs-node-gpu (only when a CUDA driver is present) → tfjs-node → wasm → cpu.
// FASTBIONER_BACKEND (or opts.force) forces one of 'tensorflow-gpu' | 'tensorflow' | 'wasm' | 'cpu';
// a forced backend that cannot load is an error, never a silent fallback.
//
// Notes on wasm in Node (tfjs-backend-wasm 4.22):
//  - SIMD is detected by the package itself (WASM_HAS_SIMD_SUPPORT); Node ≥ 16 has it, so the
//    simd binary is used.
//  - Multithreading is switched off for Node by the package (WASM_HAS_MULTITHREAD_SUPPORT returns
//    false when IS_NODE, tfjs issue #3830: its pthread workers are created from Blob URLs, which
//    Node's worker_threads cannot load). Forcing the flag breaks initialisation. It would not
//    help BERT anyway: the matmul path (xnn_matmul in batch_mat_mul_impl.cc) runs XNNPACK
//    without a thread pool. So wasm computes on one core; `threads` reports what it uses.
//  - Binaries are located from require.resolve of the package, which works from node_modules
//    and from a packaged app (asar-unpacked copies preferred when present).

import { existsSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import * as tf from '@tensorflow/tfjs-core'
import { preferUnpacked } from '../fs/asar'
import { ensureGradients } from './gradients'
import { registerCpuKernels, registerWasmKernels } from './kernels'

export type BackendName = 'tensorflow-gpu' | 'tensorflow' | 'wasm' | 'cpu'
export const BACKEND_NAMES: readonly BackendName[] = ['tensorflow-gpu', 'tensorflow', 'wasm', 'cpu']

export interface BackendInfo {
  name: BackendName
  /** Why this backend: shown to the user. */
  reason: string
  /** Compute threads the backend uses, where known. */
  threads?: number
}

export interface InitBackendOptions {
  /** Overrides FASTBIONER_BACKEND. */
  force?: BackendName
  /** Where the choice is logged; defaults to console.error. */
  logger?: (line: string) => void
  /** Environment to read FASTBIONER_BACKEND from (tests). */
  env?: NodeJS.ProcessEnv
}

export class BackendError extends Error {
  override name = 'BackendError'
}

// A require that bundlers leave alone: the package name is a runtime value, and the optional
// packages are external in electron.vite.config.ts anyway.
function nodeRequire(): NodeRequire {
  if (typeof require === 'function') return require
  if (typeof __filename === 'string') return createRequire(__filename)
  return createRequire(pathToFileURL(join(process.cwd(), 'index.js')).href)
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message.split('\n')[0] : String(e)
}

/** Normalises the env var's value; accepts a few obvious aliases. */
export function parseBackendName(value: string): BackendName {
  const v = value.trim().toLowerCase()
  const aliases: Record<string, BackendName> = {
    'tensorflow-gpu': 'tensorflow-gpu', gpu: 'tensorflow-gpu', cuda: 'tensorflow-gpu', 'tfjs-node-gpu': 'tensorflow-gpu',
    tensorflow: 'tensorflow', node: 'tensorflow', 'tfjs-node': 'tensorflow',
    wasm: 'wasm', cpu: 'cpu',
  }
  const name = aliases[v]
  if (!name) {
    throw new BackendError(`FASTBIONER_BACKEND=${value} is not a backend; use one of ${BACKEND_NAMES.join(', ')}`)
  }
  return name
}

/** A CUDA driver is present: libcuda on Linux, nvcuda.dll on Windows; never on macOS. */
export function cudaDriverPresent(): { ok: boolean; detail: string } {
  if (process.platform === 'win32') {
    const dll = join(process.env.SystemRoot ?? 'C:\\Windows', 'System32', 'nvcuda.dll')
    return existsSync(dll) ? { ok: true, detail: dll } : { ok: false, detail: 'nvcuda.dll not found' }
  }
  if (process.platform !== 'linux') return { ok: false, detail: `no CUDA on ${process.platform}` }
  const dirs = [
    ...(process.env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean),
    '/usr/lib/x86_64-linux-gnu', '/usr/lib64', '/usr/lib', '/usr/local/cuda/lib64', '/usr/lib/wsl/lib',
    '/usr/local/nvidia/lib64',
  ]
  for (const d of dirs) {
    try {
      if (readdirSync(d).some((f) => f.startsWith('libcuda.so'))) {
        if (!existsSync('/dev/nvidia0') && !existsSync('/dev/dxg')) return { ok: false, detail: `${d}/libcuda.so but no /dev/nvidia0` }
        return { ok: true, detail: `${d}/libcuda.so` }
      }
    } catch {
      // unreadable or absent directory
    }
  }
  return { ok: false, detail: 'libcuda.so not found' }
}

/** Directory holding the wasm binaries, with a trailing separator (setWasmPaths wants a prefix). */
export function wasmBinaryDir(): string {
  const pkg = nodeRequire().resolve('@tensorflow/tfjs-backend-wasm/package.json')
  const dist = join(dirname(pkg), 'dist')
  // Packaged app: the asar-unpacked copy (WebAssembly compile reads real files faster, and it
  // keeps working where asar fs patching is unavailable, e.g. in a worker).
  return preferUnpacked(dist, join(dist, 'tfjs-backend-wasm-simd.wasm')) + sep
}

async function tryTensorflow(pkg: '@tensorflow/tfjs-node-gpu' | '@tensorflow/tfjs-node'): Promise<BackendInfo> {
  nodeRequire()(pkg)
  // tfjs-node registers 'tensorflow' with the tfjs-core copy *it* resolves; if npm nested a
  // different version under it, our core never sees the backend.
  if (tf.findBackendFactory('tensorflow') == null) {
    throw new BackendError(`${pkg} loaded but registered into a different @tensorflow/tfjs-core copy (versions differ from ${tf.version_core})`)
  }
  if (!(await tf.setBackend('tensorflow'))) throw new BackendError(`${pkg}: backend 'tensorflow' failed to initialise`)
  const b = tf.backend() as tf.KernelBackend & { isUsingGpuDevice?: boolean }
  if (pkg === '@tensorflow/tfjs-node-gpu') {
    if (b.isUsingGpuDevice === false) {
      return { name: 'tensorflow', reason: 'tfjs-node-gpu loaded but TensorFlow found no usable GPU; libtensorflow runs on the CPU' }
    }
    return { name: 'tensorflow-gpu', reason: 'tfjs-node-gpu with CUDA' }
  }
  return { name: 'tensorflow', reason: 'tfjs-node (native libtensorflow, all CPU cores)' }
}

async function tryWasm(): Promise<BackendInfo> {
  const wasm = nodeRequire()('@tensorflow/tfjs-backend-wasm') as typeof import('@tensorflow/tfjs-backend-wasm')
  registerWasmKernels()
  if (tf.findBackend('wasm') == null) {
    // Only before the first initialisation; setWasmPaths throws afterwards.
    wasm.setWasmPaths(wasmBinaryDir())
  }
  if (!(await tf.setBackend('wasm'))) throw new BackendError('wasm backend failed to initialise')
  const simd = (await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT')) as boolean
  const threads = wasm.getThreadsCount()
  return {
    name: 'wasm',
    reason: `WebAssembly + XNNPACK${simd ? ' with SIMD' : ' (no SIMD)'}, ${threads} thread${threads === 1 ? '' : 's'} (tfjs-backend-wasm has no threads in Node)`,
    threads,
  }
}

async function tryCpu(): Promise<BackendInfo> {
  nodeRequire()('@tensorflow/tfjs-backend-cpu')
  registerCpuKernels()
  if (!(await tf.setBackend('cpu'))) throw new BackendError('cpu backend failed to initialise')
  // The cpu backend prints a "install tfjs-node" banner on first use; we log our own reason.
  ;(tf.backend() as tf.KernelBackend & { firstUse?: boolean }).firstUse = false
  return { name: 'cpu', reason: 'plain JavaScript kernels (slowest)', threads: 1 }
}

// Every loader also registers the gradient functions (training needs them on any backend).
const withGradients = (load: () => Promise<BackendInfo>) => async () => {
  const info = await load()
  await ensureGradients()
  return info
}

const loaders: Record<BackendName, () => Promise<BackendInfo>> = {
  'tensorflow-gpu': withGradients(() => tryTensorflow('@tensorflow/tfjs-node-gpu')),
  tensorflow: withGradients(() => tryTensorflow('@tensorflow/tfjs-node')),
  wasm: withGradients(tryWasm),
  cpu: withGradients(tryCpu),
}

let initPromise: Promise<BackendInfo> | null = null
let current: BackendInfo | null = null

/**
 * Picks, initialises and logs the backend. Idempotent: later calls return the first result
 * (use `useBackend` to switch deliberately, e.g. in tests and benchmarks).
 */
export function initBackend(opts: InitBackendOptions = {}): Promise<BackendInfo> {
  if (initPromise == null) {
    initPromise = choose(opts).then((info) => {
      current = info
      return info
    })
    initPromise.catch(() => {
      initPromise = null
    })
  }
  return initPromise
}

async function choose(opts: InitBackendOptions): Promise<BackendInfo> {
  const log = opts.logger ?? ((line: string) => console.error(line))
  const envValue = (opts.env ?? process.env).FASTBIONER_BACKEND
  const forced = opts.force ?? (envValue ? parseBackendName(envValue) : undefined)
  if (forced) {
    let info: BackendInfo
    try {
      info = await loaders[forced]()
    } catch (e) {
      const hint = forced.startsWith('tensorflow')
        ? ` (is ${forced === 'tensorflow' ? '@tensorflow/tfjs-node' : '@tensorflow/tfjs-node-gpu'} installed for this platform?)`
        : ''
      throw new BackendError(`backend '${forced}' was forced${opts.force ? '' : ' by FASTBIONER_BACKEND'} but cannot load: ${errorText(e)}${hint}`)
    }
    info = { ...info, reason: `forced${opts.force ? '' : ' by FASTBIONER_BACKEND'}: ${info.reason}` }
    log(`[fastbioner] tensor backend: ${info.name} — ${info.reason}`)
    return info
  }
  const skipped: string[] = []
  const cuda = cudaDriverPresent()
  const order: BackendName[] = cuda.ok ? ['tensorflow-gpu', 'tensorflow', 'wasm', 'cpu'] : ['tensorflow', 'wasm', 'cpu']
  if (!cuda.ok) skipped.push(`tensorflow-gpu: ${cuda.detail}`)
  for (const name of order) {
    try {
      const info = await loaders[name]()
      const reason = skipped.length ? `${info.reason}; skipped ${skipped.join('; ')}` : info.reason
      const result = { ...info, reason }
      log(`[fastbioner] tensor backend: ${result.name} — ${result.reason}`)
      return result
    } catch (e) {
      const pkgMissing = e instanceof Error && (e as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND'
      skipped.push(`${name}: ${pkgMissing ? 'package not installed' : errorText(e)}`)
    }
  }
  throw new BackendError(`no tensor backend could be initialised: ${skipped.join('; ')}`)
}

/** Switches to a specific backend (tests, benchmarks). Throws if it cannot load. */
export async function useBackend(name: BackendName): Promise<BackendInfo> {
  const info = await loaders[name]()
  current = info
  if (initPromise == null) initPromise = Promise.resolve(info)
  return info
}

/** The backend chosen by the last initBackend/useBackend, or null. */
export function activeBackend(): BackendInfo | null {
  return current
}

/** Backends that can load in this process, without switching to them. */
export function availableBackends(): BackendName[] {
  const out: BackendName[] = []
  const req = nodeRequire()
  const has = (p: string) => {
    try {
      req.resolve(p)
      return true
    } catch {
      return false
    }
  }
  if (has('@tensorflow/tfjs-node-gpu') && cudaDriverPresent().ok) out.push('tensorflow-gpu')
  if (has('@tensorflow/tfjs-node')) out.push('tensorflow')
  if (has('@tensorflow/tfjs-backend-wasm')) out.push('wasm')
  if (has('@tensorflow/tfjs-backend-cpu')) out.push('cpu')
  return out
}
