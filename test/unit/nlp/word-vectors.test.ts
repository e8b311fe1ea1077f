// Pretrained word vectors (nlp/word-vectors): the text formats word2vec, fastText and GloVe
// write, streamed with only the wanted words kept; malformed files refused naming file and line;
// and the word tagger's table started from them (train --word-vectors, wordvec --vec).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { embeddingFromVectors, MAX_VECTOR_DIM, readWordVectors, WordVectorError, wordVectorLines } from '@core/nlp/word-vectors'
import { loadWordTagger, WORD_TAGGER_EMBEDDINGS } from '@core/model/word-tagger'
import { run as trainCmd } from '../../../src/cli/commands/train'
import { run as wordvecCmd } from '../../../src/cli/commands/wordvec'
import { capture } from '../cli/capture'

const FIX = resolve(__dirname, '../../fixtures/train')
let tmp: string
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'fastbioner-vectors-'))
})
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

function file(name: string, content: string | Buffer): string {
  const path = join(tmp, name)
  writeFileSync(path, content)
  return path
}

async function failure(p: Promise<unknown>): Promise<Error> {
  const e = await p.then(() => null, (x: unknown) => x)
  expect(e).toBeInstanceOf(WordVectorError)
  return e as Error
}

describe('readWordVectors', () => {
  const vec = ['5 3', 'The 1 2 3', 'the 9 9 9', 'gene 0.5 -1e-2 4', 'Kinase 7 8 9', 'rare 1 1 1', ''].join('\n')

  it('keeps the vocabulary’s words (lower-cased, the first casing a file lists) and the first further words that fit', async () => {
    const r = await readWordVectors(file('a.vec', vec), new Set(['the', 'gene', 'absent']), 1)
    expect(r.dim).toBe(3)
    expect([...r.vectors.keys()]).toEqual(['the', 'gene', 'kinase'])
    expect([...r.vectors.get('the')!]).toEqual([1, 2, 3])
    expect([...r.vectors.get('gene')!]).toEqual([0.5, Math.fround(-0.01), 4])
    expect(r.extraWords).toEqual(['kinase'])
    // No room: only the vocabulary's words.
    expect((await readWordVectors(file('a.vec', vec), new Set(['gene']), 0)).extraWords).toEqual([])
  })

  it('reads GloVe files (no header), CRLF line ends and gzip', async () => {
    const glove = 'the 1 2\r\ngene 3 4\r\n'
    const plain = await readWordVectors(file('g.txt', glove), new Set(['gene']), 5)
    expect(plain.dim).toBe(2)
    expect([...plain.vectors.get('gene')!]).toEqual([3, 4])
    expect(plain.extraWords).toEqual(['the'])
    const gz = await readWordVectors(file('a.vec.gz', gzipSync(Buffer.from(vec))), new Set(['rare']), 0)
    expect([...gz.vectors.get('rare')!]).toEqual([1, 1, 1])
  })

  it('stops reading a long file when its job is cancelled', async () => {
    const many = file('many.vec', Array.from({ length: 20_000 }, (_, i) => `w${i} 1 2`).join('\n'))
    const stop = new AbortController()
    stop.abort()
    await expect(readWordVectors(many, new Set(['w19999']), 0, { signal: stop.signal })).rejects.toMatchObject({ name: 'AbortError' })
    expect((await readWordVectors(many, new Set(['w19999']), 0, { signal: new AbortController().signal })).vectors.has('w19999')).toBe(true)
  })

  it('refuses malformed files, naming the file, the line and the problem', async () => {
    const short = file('short.vec', '2 3\nthe 1 2 3\ngene 1 2\n')
    expect((await failure(readWordVectors(short, new Set(['gene']), 0))).message).toBe(`${short}:3: 2 values after the word, expected 3 (words are separated from their numbers by single spaces)`)
    const nan = file('nan.vec', '2 3\nthe 1 2 3\ngene 1 x 3\n')
    expect((await failure(readWordVectors(nan, new Set(['gene']), 0))).message).toBe(`${nan}:3: value 2 of 'gene' is 'x', not a finite number`)
    const inf = file('inf.vec', 'gene 1 Infinity\n')
    expect((await failure(readWordVectors(inf, new Set(['gene']), 0))).message).toMatch(/inf\.vec:1: value 2 of 'gene' is 'Infinity', not a finite number$/)
    const wide = file('wide.vec', `1 ${MAX_VECTOR_DIM + 1}\n`)
    expect((await failure(readWordVectors(wide, new Set(), 0))).message).toBe(`${wide}:1: the header gives ${MAX_VECTOR_DIM + 1} dimensions; vectors of 1 to ${MAX_VECTOR_DIM} are supported`)
    const binary = file('w2v.bin', Buffer.concat([Buffer.from('2 3\nthe '), Buffer.from(new Float32Array([1, 2, 3]).buffer)]))
    expect((await failure(readWordVectors(binary, new Set(), 0))).message).toMatch(/a binary file; give the vectors in the text format/)
    const empty = file('empty.vec', '\n\n')
    expect((await failure(readWordVectors(empty, new Set(), 0))).message).toBe(`${empty}: no vectors in the file`)
    // A file without line breaks is not gathered into memory.
    const endless = file('endless.vec', 'w' + ' 1'.repeat(600_000))
    expect((await failure(readWordVectors(endless, new Set(), 0))).message).toMatch(/endless\.vec:1: the line is longer than \d+ characters/)
  })

  it('writes what it reads back (wordVectorLines)', async () => {
    const vectors = new Map([
      ['alpha', new Float32Array([0.25, -1.5])],
      ['beta', new Float32Array([1e-7, 3])],
    ])
    const path = file('round.vec', [...wordVectorLines(['alpha', 'beta'], (w) => vectors.get(w)!, 2)].join(''))
    expect(readFileSync(path, 'utf8').split('\n')[0]).toBe('2 2')
    const r = await readWordVectors(path, new Set(['alpha', 'beta']), 0)
    expect([...r.vectors.get('alpha')!]).toEqual([0.25, -1.5])
    expect(r.vectors.get('beta')![0]).toBeCloseTo(1e-7, 12)
  })

  it('centres and scales the vectors into the table, other rows kept', () => {
    const random = new Float32Array([9, 9, 9, 9, 9, 9])
    const { matrix, scale } = embeddingFromVectors([null, new Float32Array([1, 3]), new Float32Array([3, 5])], random, 2, 1)
    expect([...matrix.subarray(0, 2)]).toEqual([9, 9])
    // mean (2, 4), deviations ±1: standard deviation 1, so scale 1.
    expect(scale).toBeCloseTo(1, 6)
    expect([...matrix.subarray(2)]).toEqual([-1, -1, 1, 1])
  })
})

describe('train --word-vectors and wordvec --vec', () => {
  it('starts the word tagger’s table from the vectors, adds the file’s other words, and records it', async () => {
    // Words of the training fixture, and two it lacks (they join the vocabulary).
    const words = ['cells', 'with', 'disease', 'expression', 'zorvitis', 'outsiderword', 'anotherword']
    const vectorOf = (w: string) => Float32Array.from({ length: 6 }, (_, j) => Math.sin(words.indexOf(w) * 7 + j * 3))
    const vec = file('train.vec', [...wordVectorLines(words, vectorOf, 6)].join(''))
    const out = join(tmp, 'model')
    const args = ['--train', join(FIX, 'train.pubtator'), '--dev', join(FIX, 'dev.pubtator'), '--out', out, '--epochs', '2', '--max-steps', '2', '--seed', '1', '--threads', '1', '--word-vectors', vec]
    const tr = await capture(() => trainCmd(args))
    expect(tr.code, tr.err).toBe(0)
    const summary = JSON.parse(tr.out)
    expect(summary.word_vectors).toMatchObject({ file: vec, dim: 6, initialised: 7, added: 2 })
    const m = loadWordTagger(out)
    expect(m.config.wordDim).toBe(6)
    expect(m.featurizer.words.slice(-2)).toEqual(['outsiderword', 'anotherword'])
    expect(m.metadata?.word_vectors).toEqual(summary.word_vectors)
    // The added words never occur in training, so their rows are still the scaled vectors: the
    // difference of two rows is the vectors' difference times the one scale.
    const table = m.params.get(WORD_TAGGER_EMBEDDINGS)!
    const row = (w: string) => table.subarray(m.featurizer.words.indexOf(w) * 6, (m.featurizer.words.indexOf(w) + 1) * 6)
    const [a, b] = [row('outsiderword'), row('anotherword')]
    const [va, vb] = [vectorOf('outsiderword'), vectorOf('anotherword')]
    const scale = (a[0] - b[0]) / (va[0] - vb[0])
    expect(scale).toBeGreaterThan(0)
    for (let j = 1; j < 6; j++) expect(a[j] - b[j]).toBeCloseTo((va[j] - vb[j]) * scale, 4)
    // --resume continues it with the vectors it started from (recorded, not read again).
    const resumed = await capture(() => trainCmd(['--resume', '--out', out, '--threads', '1']))
    expect(resumed.code, resumed.err).toBe(0)
    expect(JSON.parse(resumed.out).word_vectors).toEqual(summary.word_vectors)
    // From --init the table is the model's.
    const init = await capture(() => trainCmd(['--train', join(FIX, 'train.pubtator'), '--init', out, '--out', join(tmp, 'more'), '--word-vectors', vec, '--threads', '1']))
    expect(init.code).toBe(2)
    expect(init.err).toMatch(/--word-vectors start a model from scratch: a run from --init keeps the word table of/)
    // A bad file is an input error naming its line.
    const bad = file('bad.vec', '2 6\ncells 1 2 3\n')
    const refused = await capture(() => trainCmd(['--train', join(FIX, 'train.pubtator'), '--out', join(tmp, 'bad-model'), '--max-steps', '1', '--threads', '1', '--word-vectors', bad]))
    expect(refused.code).toBe(1)
    expect(refused.err).toContain(`${bad}:2: 3 values after the word, expected 6`)
  }, 240_000)

  it('wordvec --vec writes the word tagger’s lower-cased words, most frequent first, which train reads', async () => {
    const text = file('text.txt', 'The Gene binds the kinase.\nThe kinase binds the gene again.\nA gene, the gene.\n')
    const out = join(tmp, 'words.vec')
    const r = await capture(() => wordvecCmd(['--text', text, '--vec', out, '--dim', '8', '--min-count', '1', '--epochs', '1', '-q']))
    expect(r.code, r.err).toBe(0)
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n')
    const [count, dim] = lines[0].split(' ').map(Number)
    expect(dim).toBe(8)
    expect(lines).toHaveLength(count + 1)
    const listed = lines.slice(1).map((l) => l.split(' ')[0])
    // "the" ×5, "gene" ×4; punctuation split off as the word tagger splits it; no capitals.
    expect(listed.slice(0, 2)).toEqual(['the', 'gene'])
    expect(listed).toContain('.')
    expect(listed.every((w) => w === w.toLowerCase())).toBe(true)
    expect(JSON.parse(r.out)).toMatchObject({ vec: out, vectors: count, dim: 8 })
    const read = await readWordVectors(out, new Set(['kinase']), 0)
    expect(read.vectors.get('kinase')).toHaveLength(8)
    // It never replaces a file.
    const again = await capture(() => wordvecCmd(['--text', text, '--vec', out, '--min-count', '1', '-q']))
    expect(again.code).toBe(2)
    expect(again.err).toContain(`--vec ${out}: the file exists`)
  }, 120_000)
})
