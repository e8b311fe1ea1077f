// The graph onnxruntime runs for a model folder is always one this program exported from the
// folder's config.json and weights (issue 31, F9). A model.onnx that came with a folder is never
// run, whatever its metadata says: the fingerprint in it is a hash of files whoever prepared the
// folder also has, so it proves nothing about the graph beside it (custom operators, a graph
// computing something else, a file crafted against onnxruntime's parser).
//
// Our exports live in a per-user cache, named by that content hash (exporter version, export
// options, config.json, and the weight bytes the export itself decoded: a file changed during the
// export cannot put another graph under the hash), written atomically. Folders nobody may write
// to (an installed default model) stay as they are; a folder opens without a second export. A
// small index per folder (its path, and size + mtime + inode of its files) skips hashing the
// weights again while they are untouched; forging those only reuses one of our own exports.

import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, utimesSync } from 'node:fs'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { removeStaleTempFiles, writeFileAtomic } from '../fs/atomic'
import { readWeightFileBytes } from '../model/safetensors'
import { OnnxFileError, readCheckpointFiles, readCheckpointWeights } from './checkpoint'
import { checkpointGraph, DEFAULT_INT8_MATMUL, DEFAULT_INT8_WEIGHTS, fingerprintOfBytes, optionsKey, type CheckpointExportOptions } from './export'

/** Where the cache lives, when set (tests, a machine whose home is read-only). */
export const ONNX_CACHE_ENV = 'FASTBIONER_ONNX_CACHE'

/** A cached graph unused for this long is deleted when another is written. */
const UNUSED_DAYS = 30

/** The per-user cache of our ONNX exports: the platform's cache folder, `fastbioner/onnx`. */
export function onnxCacheDir(env: NodeJS.ProcessEnv = process.env, home = homedir(), platform: NodeJS.Platform = process.platform): string {
  if (env[ONNX_CACHE_ENV]) return resolve(env[ONNX_CACHE_ENV]!)
  if (platform === 'win32') return join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'fastbioner', 'Cache', 'onnx')
  if (platform === 'darwin') return join(home, 'Library', 'Caches', 'fastbioner', 'onnx')
  return join(env.XDG_CACHE_HOME || join(home, '.cache'), 'fastbioner', 'onnx')
}

export interface OwnGraphOptions extends Omit<CheckpointExportOptions, 'write'> {
  /** The cache folder; null: export into memory and write nothing anywhere. */
  cacheDir: string | null
  /** Export again even when the cache holds the graph (onnxruntime could not load the cached file). */
  refresh?: boolean
}

export interface OwnGraph {
  /** The cached graph, or null when it is only in memory (`model`). */
  path: string | null
  model?: Uint8Array
  /** 'cached': exported earlier; 'exported': just now (into the cache, or into memory when path is null). */
  status: 'cached' | 'exported'
  /** Why, for logs and the engine's reason. */
  reason: string
  fingerprint: string
}

/** size, mtime and inode of the source files: a cheap "unchanged since the last export" check. */
function sourceStat(paths: string[]): string {
  return paths
    .map((p) => {
      try {
        const st = statSync(p)
        return `${st.size}:${st.mtimeMs}:${st.ino}`
      } catch {
        return 'missing'
      }
    })
    .join('|')
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/** Marks a cached graph as used (pruning goes by mtime); best effort on a read-only cache. */
function touch(path: string): void {
  try {
    const now = new Date()
    utimesSync(path, now, now)
  } catch {
    // still usable
  }
}

/** Deletes cached graphs and folder records unused for UNUSED_DAYS, and temp files of crashed writes. */
function prune(cacheDir: string): void {
  const cutoff = Date.now() - UNUSED_DAYS * 86_400_000
  for (const dir of [cacheDir, join(cacheDir, 'sources')]) {
    try {
      removeStaleTempFiles(dir)
      for (const name of readdirSync(dir)) {
        if (!/\.(onnx|json)$/.test(name)) continue
        const path = join(dir, name)
        if (statSync(path).mtimeMs < cutoff) unlinkSync(path)
      }
    } catch {
      // another process pruning too, or nothing to prune
    }
  }
}

/**
 * The ONNX graph of the checkpoint in `dir`, exported by us: from the cache when this content was
 * exported before, else exported now (and cached unless cacheDir is null). Never reads a
 * model.onnx in `dir`. When the cache cannot be written the graph comes back in memory, with why.
 */
export async function ownOnnxGraph(dir: string, opts: OwnGraphOptions): Promise<OwnGraph> {
  const files = readCheckpointFiles(dir)
  // The int8 weights' form (this CPU's) is part of the graph, so of its cache name.
  const int8Op = `${opts.int8MatMul ?? DEFAULT_INT8_MATMUL}${DEFAULT_INT8_WEIGHTS === 'uint8' ? '-u8' : ''}`
  const cache = opts.cacheDir
  const graphPath = (fingerprint: string) => join(cache!, `${fingerprint}-${int8Op}.onnx`)
  const stat = sourceStat([files.configPath, ...files.weightPaths])
  const record = cache ? join(cache, 'sources', `${sha256(`${resolve(dir)}\n${optionsKey(opts)}\n${int8Op}`)}.json`) : null

  if (record && !opts.refresh) {
    try {
      const known = JSON.parse(readFileSync(record, 'utf8')) as { stat?: unknown; fingerprint?: unknown }
      if (known.stat === stat && typeof known.fingerprint === 'string' && /^[0-9a-f]{64}$/.test(known.fingerprint) && isFile(graphPath(known.fingerprint))) {
        touch(graphPath(known.fingerprint))
        return { path: graphPath(known.fingerprint), status: 'cached', reason: 'checkpoint files unchanged since our export', fingerprint: known.fingerprint }
      }
    } catch {
      // no record yet, or an unreadable one: hash the weights
    }
  }

  // Read once: the hash names exactly the bytes the graph is built from.
  const bytes = files.weightPaths.map((path) => {
    try {
      return readWeightFileBytes(path)
    } catch (e) {
      throw new OnnxFileError(path, `cannot read the model weights (${(e as Error).message.replace(`${path}: `, '')})`)
    }
  })
  const fingerprint = fingerprintOfBytes(files, bytes, opts)
  const remember = () => {
    try {
      mkdirSync(join(cache!, 'sources'), { recursive: true, mode: 0o700 })
      writeFileAtomic(record!, [JSON.stringify({ dir: resolve(dir), stat, fingerprint }) + '\n'])
    } catch {
      // the next open hashes the weights again
    }
  }
  if (cache && !opts.refresh && isFile(graphPath(fingerprint))) {
    touch(graphPath(fingerprint))
    remember()
    return { path: graphPath(fingerprint), status: 'cached', reason: 'checkpoint content exported before', fingerprint }
  }

  const { model } = checkpointGraph(files, readCheckpointWeights(files.weightPaths, bytes), fingerprint, opts)
  if (!cache) return { path: null, model, status: 'exported', reason: 'exported into memory', fingerprint }
  const path = graphPath(fingerprint)
  try {
    mkdirSync(cache, { recursive: true, mode: 0o700 })
    writeFileAtomic(path, [model])
  } catch (e) {
    return { path: null, model, status: 'exported', reason: `exported into memory: cannot write ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, fingerprint }
  }
  remember()
  prune(cache)
  return { path, status: 'exported', reason: `exported into ${path}`, fingerprint }
}
