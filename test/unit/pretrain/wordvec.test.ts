import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { initBackend } from '@core/model/backend'
import { BertTokenClassifier } from '@core/model/bert'
import { loadCheckpoint } from '@core/model/checkpoint'
import { SPECIAL_TOKENS } from '@core/nlp/vocab-trainer'
import { FastTextVectors } from '@core/pretrain/fasttext'
import { pretrain } from '@core/pretrain/run'
import { buildWordVectorCheckpoint, fragmentNgrams, pieceVectors, type PieceVectorSource } from '@core/pretrain/wordvec'
import { embeddingFromVectors } from '@core/nlp/word-vectors'
import { Rng } from '@core/rng'
import { run as tagCmd } from '../../../src/cli/commands/tag'
import { run as trainCmd } from '../../../src/cli/commands/train'
import { run as wordvecCmd } from '../../../src/cli/commands/wordvec'
import { capture } from '../cli/capture'

/** A stand-in model whose vectors are a function of the string asked for, recording the n-grams asked for. */
function fakeSource(dim: number, zeroWords: string[] = []): PieceVectorSource & { ngrams: string[] } {
  const vec = (s: string) => Float32Array.from({ length: dim }, (_, j) => Math.sin((s.charCodeAt(j % s.length) + 1) * (j + 1) + s.length))
  const ngrams: string[] = []
  return {
    dim,
    minn: 3,
    maxn: 6,
    ngrams,
    wordVector: (w) => (zeroWords.includes(w) ? new Float32Array(dim) : vec('word:' + w)),
    ngramVector: (g) => (ngrams.push(g), vec('gram:' + g)),
  }
}

describe('word vectors onto WordPiece pieces', () => {
  it('a continuation piece stands for its own n-grams; a short one for its word ending; a single letter for none', () => {
    expect(fragmentNgrams('itis', 3, 6)).toEqual(['iti', 'itis', 'tis'])
    expect(fragmentNgrams('oma', 3, 6)).toEqual(['oma'])
    expect(fragmentNgrams('es', 3, 6)).toEqual(['es>'])
    expect(fragmentNgrams('s', 3, 6)).toEqual([])
    // characters, not UTF-16 units
    expect(fragmentNgrams('αβγ', 3, 6)).toEqual(['αβγ'])
    expect(fragmentNgrams('abcdefgh', 3, 4)).toHaveLength(6 + 5)
  })

  it('whole words take the word vector, ## pieces the mean of their n-gram rows, special tokens and empty vectors stay random', () => {
    const src = fakeSource(8, ['('])
    const vocab = [...SPECIAL_TOKENS, 'tumor', '(', '##itis', '##es', '##s']
    const { vectors, kinds } = pieceVectors(vocab, src)
    expect(kinds).toEqual(['random', 'random', 'random', 'random', 'random', 'word', 'random', 'fragment', 'fragment', 'random'])
    expect(vectors.slice(0, 5)).toEqual([null, null, null, null, null])
    expect(vectors[5]).toEqual(src.wordVector('tumor'))
    const grams = ['iti', 'itis', 'tis'].map((g) => src.ngramVector(g))
    const mean = grams[0].map((_, j) => (grams[0][j] + grams[1][j] + grams[2][j]) / 3)
    for (let j = 0; j < 8; j++) expect(vectors[7]![j]).toBeCloseTo(mean[j], 6)
    expect(vectors[8]).toEqual(src.ngramVector('es>'))
    expect(vectors[6]).toBeNull()
    expect(vectors[9]).toBeNull()
  })

  it('the table is the centred vectors scaled to the initialiser std; rows without a vector keep their random values', () => {
    const hidden = 6
    const rng = new Rng(5)
    const random = rng.normalArray(5 * hidden, 0.02)
    const vectors = [null, Float32Array.from([1, 2, 3, 4, 5, 6]), Float32Array.from([3, 1, 4, 1, 5, 9]), null, Float32Array.from([2, 7, 1, 8, 2, 8])]
    const { matrix, mean, scale, assigned } = embeddingFromVectors(vectors, random, hidden, 0.02)
    expect(assigned).toBe(3)
    expect(Array.from(matrix.slice(0, hidden))).toEqual(Array.from(random.slice(0, hidden)))
    expect(Array.from(matrix.slice(3 * hidden, 4 * hidden))).toEqual(Array.from(random.slice(3 * hidden, 4 * hidden)))
    const rows = [1, 2, 4].map((i) => matrix.slice(i * hidden, (i + 1) * hidden))
    for (const [k, i] of [1, 2, 4].entries()) for (let j = 0; j < hidden; j++) expect(rows[k][j]).toBeCloseTo((vectors[i]![j] - mean[j]) * scale, 6)
    const values = rows.flatMap((r) => Array.from(r))
    const avg = values.reduce((a, b) => a + b, 0) / values.length
    expect(avg).toBeCloseTo(0, 9)
    expect(Math.sqrt(values.reduce((a, b) => a + (b - avg) ** 2, 0) / values.length)).toBeCloseTo(0.02, 7)
    expect(() => embeddingFromVectors([vectors[1], null, null, null, null], random, hidden, 0.02)).toThrow(/too small/)
  })
})

// Made-up text: disease words share suffixes, so the vocabulary has both whole words and ## pieces.
const WORDS = ['the', 'patient', 'had', 'nephritis', 'hepatitis', 'arthritis', 'carcinoma', 'melanoma', 'lymphoma', 'after', 'treatment', 'with', 'mice', 'and', 'renal', 'failure', 'gene', 'brca1']
function corpus(lines: number, seed: number): string {
  const rng = new Rng(seed)
  const out: string[] = []
  for (let i = 0; i < lines; i++) out.push(Array.from({ length: 8 + Math.floor(rng.next() * 8) }, () => WORDS[Math.floor(rng.next() * WORDS.length)]).join(' ') + ' .')
  return out.join('\n') + '\n'
}

describe('wordvec checkpoint (fastText in WebAssembly)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fastbioner-wordvec-'))
  const text = join(dir, 'text.txt')
  const textBody = corpus(300, 1)
  writeFileSync(text, textBody)
  // cpu-tiny (128 wide); few buckets so that the n-gram table is quick to initialise
  const settings = { preset: 'cpu-tiny' as const, vocabSize: 150, epochs: 3, minCount: 2, seed: 7, fastText: { bucket: 20_000 } }
  const out = join(dir, 'wordvec')
  let result: Awaited<ReturnType<typeof buildWordVectorCheckpoint>>

  beforeAll(async () => {
    process.env.FASTBIONER_BACKEND ??= 'wasm'
    await initBackend()
    result = await buildWordVectorCheckpoint({ ...settings, text: [text], outDir: out, neighbours: ['nephritis'] })
  }, 120_000)
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('writes a checkpoint whose word-embedding rows are the scaled fastText vectors and whose other weights are the random initialisation', async () => {
    expect(readdirSync(out).sort()).toEqual(['config.json', 'fastbioner.json', 'model.safetensors', 'tokenizer_config.json', 'vocab.txt'])
    expect(result.dim).toBe(128)
    expect(result.fromWords).toBeGreaterThanOrEqual(WORDS.length)
    expect(result.fromFragments).toBeGreaterThan(0)
    expect(result.neighbours.nephritis).toHaveLength(5)
    const ck = await loadCheckpoint(out)
    const random = BertTokenClassifier.random(ck.config, settings.seed, {})
    try {
      const H = ck.config.hiddenSize
      const table = ck.model.variables().get('bert.embeddings.word_embeddings.weight')!.dataSync() as Float32Array
      const initial = random.variables().get('bert.embeddings.word_embeddings.weight')!.dataSync() as Float32Array
      const row = (t: Float32Array, piece: string) => Array.from(t.slice(ck.vocab.indexOf(piece) * H, (ck.vocab.indexOf(piece) + 1) * H))
      // special tokens keep the initialiser's rows ([PAD] is zero)
      for (const s of SPECIAL_TOKENS) expect(row(table, s)).toEqual(row(initial, s))
      expect(row(table, '[PAD]').every((x) => x === 0)).toBe(true)
      // every other encoder weight is the seed's random initialisation
      const other = ck.model.variables().get('bert.encoder.layer.0.attention.self.query.weight')!.dataSync()
      expect(Array.from(other)).toEqual(Array.from(random.variables().get('bert.encoder.layer.0.attention.self.query.weight')!.dataSync()))
      // the rows with vectors have the initialiser's spread
      const changed = ck.vocab.filter((p) => !row(table, p).every((x, j) => x === row(initial, p)[j]))
      expect(changed.length).toBe(result.fromWords + result.fromFragments)
      const values = changed.flatMap((p) => row(table, p))
      const avg = values.reduce((a, b) => a + b, 0) / values.length
      expect(Math.sqrt(values.reduce((a, b) => a + (b - avg) ** 2, 0) / values.length)).toBeCloseTo(ck.config.initializerRange, 5)
      // The same fastText run again (one thread: the seed fixes it): differences of whole-word
      // rows are the scaled differences of fastText's word vectors (the centring cancels out).
      const ft = await FastTextVectors.train(textBody, { dim: H, epochs: settings.epochs, minCount: settings.minCount, seed: settings.seed, ...settings.fastText })
      try {
        for (const [a, b] of [['nephritis', 'hepatitis'], ['melanoma', 'mice'], ['the', 'brca1']]) {
          const va = ft.wordVector(a)
          const vb = ft.wordVector(b)
          const ra = row(table, a)
          const rb = row(table, b)
          for (let j = 0; j < H; j++) expect(ra[j] - rb[j]).toBeCloseTo((va[j] - vb[j]) * result.scale, 5)
        }
      } finally {
        ft.dispose()
      }
    } finally {
      ck.model.dispose()
      random.dispose()
    }
  }, 120_000)

  it('train --init accepts the folder and tags', async () => {
    const FIX = resolve(__dirname, '../../fixtures/train')
    const tuned = join(dir, 'tuned')
    const r = await capture(() =>
      trainCmd(['--train', join(FIX, 'train.pubtator'), '--dev', join(FIX, 'dev.pubtator'), '--out', tuned, '--init', out, '--epochs', '1', '--max-steps', '3', '--max-length', '32', '-q']),
    )
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    const summary = JSON.parse(r.out)
    expect(summary.init).toBe(out)
    expect(summary.steps).toBe(3)
    expect(summary.labels).toEqual(['O', 'B-Disease', 'I-Disease'])
    const tagged = await capture(() => tagCmd(['--model', tuned, '--in', join(FIX, 'dev.pubtator'), '--out', join(dir, 'pred.json'), '--format', 'bioc', '-q']))
    expect(tagged.code).toBe(0)
    expect(existsSync(join(dir, 'pred.json'))).toBe(true)
  }, 120_000)

  it('pretrain --init continues from the folder with its vocabulary and a new LM head', async () => {
    const lines: string[] = []
    const r = await pretrain({ text: [text], outDir: join(dir, 'mlm'), init: out, maxSteps: 2, batchSize: 8, maxLength: 32, log: (l) => lines.push(l) })
    expect(r.steps).toBe(2)
    expect(lines.join('\n')).toContain(`continuing pretraining of ${out} (${result.pieces} pieces, new LM head)`)
  }, 120_000)

  it('names a missing or empty text file, refuses a folder that holds a model, and writes nothing on failure', async () => {
    const missing = join(dir, 'nope.txt')
    const r1 = await capture(() => wordvecCmd(['--text', missing, '--out', join(dir, 'o1'), '-q']))
    expect(r1.code).toBe(1)
    expect(r1.err).toContain(missing)
    expect(existsSync(join(dir, 'o1'))).toBe(false)

    const empty = join(dir, 'empty.txt')
    writeFileSync(empty, '\n\n')
    const r2 = await capture(() => wordvecCmd(['--text', empty, '--out', join(dir, 'o2'), '-q']))
    expect(r2.code).toBe(1)
    expect(r2.err).toMatch(new RegExp(`${empty.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*empty`))
    expect(existsSync(join(dir, 'o2'))).toBe(false)

    const rare = join(dir, 'rare.txt')
    writeFileSync(rare, 'every word here is new\n')
    const r3 = await capture(() => wordvecCmd(['--text', rare, '--out', join(dir, 'o3'), '-q']))
    expect(r3.code).toBe(1)
    expect(r3.err).toContain('no word occurs 5 times')
    expect(existsSync(join(dir, 'o3'))).toBe(false)

    const r4 = await capture(() => wordvecCmd(['--text', text, '--out', out, '-q']))
    expect(r4.code).toBe(2)
    expect(r4.err).toContain(`--out ${out}: the folder is not empty`)
  })
})
