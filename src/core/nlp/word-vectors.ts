// Pretrained word vectors for the word tagger's word table, read from the text format that
// word2vec, fastText (.vec) and GloVe write: one word and its numbers per line, separated by
// spaces, after an optional "count dimension" header. A model trained here from a few thousand
// sentences meets many test words it never saw; vectors learnt from far more text give them a
// meaning (the PyTorch reference: NCBI-disease test 0.822 → 0.829 with skip-gram vectors of the
// unlabelled text), and a user may bring vectors trained on all of PubMed.
//
// The file is streamed: only the vectors of the words asked for are kept, so a file of millions
// of words costs the memory of the vocabulary, and a malformed line is an error naming it.

import { textLines } from '../corpus/stream'

/** Widest vector accepted (the word tagger's word_dim bound). */
export const MAX_VECTOR_DIM = 4096
/** A vector line holds at most MAX_VECTOR_DIM numbers of a few dozen characters each. */
const MAX_VECTOR_LINE_CHARS = 1 << 20

export class WordVectorError extends Error {
  override name = 'WordVectorError'
}

export interface WordVectorSelection {
  dim: number
  /** Lower-cased word → its vector: the vocabulary's words found in the file, and the extra words. */
  vectors: Map<string, Float32Array>
  /** Words outside the vocabulary taken from the file, in file order (word2vec and fastText write the most frequent first). */
  extraWords: string[]
  /** Vector lines read. */
  lines: number
}

/**
 * The vectors of `vocabulary`'s words (lower-cased keys; a word written in several cases takes its
 * first line's vector, the most frequent casing in frequency-ordered files) and of up to `room`
 * further words, the first the file lists. Stops reading once both are complete.
 */
export async function readWordVectors(path: string, vocabulary: ReadonlySet<string>, room: number, opts: { signal?: AbortSignal } = {}): Promise<WordVectorSelection> {
  const vectors = new Map<string, Float32Array>()
  const extraWords: string[] = []
  let dim = 0
  let found = 0
  let lines = 0
  const fail = (lineNo: number, problem: string): never => {
    throw new WordVectorError(`${path}:${lineNo}: ${problem}`)
  }
  try {
    for await (const { line: raw, lineNo } of textLines(path, { maxLineChars: MAX_VECTOR_LINE_CHARS })) {
      // A file of millions of vectors takes minutes to read: a cancel must not wait for its end.
      if (lineNo % 4096 === 0 && opts.signal?.aborted) throw new DOMException(`reading ${path} cancelled`, 'AbortError')
      const line = raw.trimEnd()
      if (line === '') continue
      const fields = line.split(' ')
      if (dim === 0) {
        // word2vec and fastText start with "count dimension"; GloVe starts with a vector.
        if (lineNo === 1 && fields.length === 2 && /^\d+$/.test(fields[0]) && /^\d+$/.test(fields[1])) {
          dim = Number(fields[1])
          if (dim < 1 || dim > MAX_VECTOR_DIM) fail(lineNo, `the header gives ${dim} dimensions; vectors of 1 to ${MAX_VECTOR_DIM} are supported`)
          continue
        }
        dim = fields.length - 1
        if (dim < 1 || dim > MAX_VECTOR_DIM) fail(lineNo, `a word and ${dim} numbers; vectors of 1 to ${MAX_VECTOR_DIM} dimensions are supported`)
      }
      if (fields.length !== dim + 1) fail(lineNo, `${fields.length - 1} values after the word, expected ${dim} (words are separated from their numbers by single spaces)`)
      lines++
      const word = fields[0].toLowerCase()
      if (vectors.has(word)) continue
      const known = vocabulary.has(word)
      if (!known && extraWords.length >= room) continue
      const v = new Float32Array(dim)
      for (let j = 0; j < dim; j++) {
        const x = Number(fields[j + 1])
        if (!Number.isFinite(x) || fields[j + 1] === '') fail(lineNo, `value ${j + 1} of '${fields[0]}' is '${fields[j + 1]}', not a finite number`)
        v[j] = x
      }
      vectors.set(word, v)
      if (known) found++
      else extraWords.push(word)
      if (found === vocabulary.size && extraWords.length >= room) break
    }
  } catch (e) {
    if (e instanceof WordVectorError || (e as Error).name === 'AbortError') throw e
    // textLines' errors (not UTF-8, binary, a line without end) already name the file and line.
    const message = (e as Error).message
    throw new WordVectorError(/NUL byte/.test(message) ? `${path}: a binary file; give the vectors in the text format (word2vec's -binary 0, fastText's .vec)` : message)
  }
  if (dim === 0 || lines === 0) throw new WordVectorError(`${path}: no vectors in the file`)
  return { dim, vectors, extraWords, lines }
}

/**
 * An embedding table [rows, dim]: rows with a vector become (vector − mean)·scale, the others keep
 * `random`'s values. Centred because skip-gram vectors share a large common direction (Mu &
 * Viswanath 2018) that random N(0, σ²) rows do not have and that the layer above would pass on to
 * every word; scaled so that their values have the initialiser's standard deviation `std`.
 */
export function embeddingFromVectors(
  vectors: ReadonlyArray<Float32Array | null>,
  random: Float32Array,
  dim: number,
  std: number,
): { matrix: Float32Array; mean: Float32Array; scale: number; assigned: number } {
  if (random.length !== vectors.length * dim) throw new RangeError(`random table has ${random.length} values, expected ${vectors.length} × ${dim}`)
  const mean = new Float64Array(dim)
  let assigned = 0
  for (const v of vectors) {
    if (!v) continue
    if (v.length !== dim) throw new RangeError(`a vector has ${v.length} dimensions, expected ${dim}`)
    for (let j = 0; j < dim; j++) mean[j] += v[j]
    assigned++
  }
  if (assigned < 2) throw new WordVectorError(`only ${assigned} vocabulary word(s) got a vector; the text is too small to learn from`)
  for (let j = 0; j < dim; j++) mean[j] /= assigned
  let sumSq = 0
  for (const v of vectors) {
    if (!v) continue
    for (let j = 0; j < dim; j++) sumSq += (v[j] - mean[j]) ** 2
  }
  const sd = Math.sqrt(sumSq / (assigned * dim))
  if (!(sd > 0)) throw new WordVectorError('all word vectors are equal; the text is too small or too repetitive to learn from')
  const scale = std / sd
  const matrix = Float32Array.from(random)
  vectors.forEach((v, i) => {
    if (!v) return
    for (let j = 0; j < dim; j++) matrix[i * dim + j] = (v[j] - mean[j]) * scale
  })
  return { matrix, mean: Float32Array.from(mean), scale, assigned }
}

/** The text format readWordVectors reads: a "count dim" header, then one word and its numbers a line. */
export function* wordVectorLines(words: readonly string[], vectorOf: (word: string) => Float32Array, dim: number): Generator<string> {
  yield `${words.length} ${dim}\n`
  for (const w of words) {
    const v = vectorOf(w)
    let line = w
    for (let j = 0; j < dim; j++) line += ' ' + Number(v[j].toPrecision(6))
    yield line + '\n'
  }
}
