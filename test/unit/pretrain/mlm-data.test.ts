import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { WordPieceTokenizer } from '@core/nlp/tokenizer'
import { trainWordPieceVocab } from '@core/nlp/vocab-trainer'
import { heldOutEvery, isHeldOut, maskRng, packDocuments, wholeWordMask, type PackedSequence } from '@core/pretrain/mlm-data'
import { documentLines, MAX_LINE_CHARS, readTextDocuments, wordCount, type TextDocument } from '@core/pretrain/text'
import { IGNORE_INDEX } from '@core/train/batching'
import { Rng } from '@core/rng'

// Made-up sentences with repeated long words, so the vocabulary has "##" continuation pieces.
const WORDS = ['the', 'patient', 'showed', 'hyperkalemia', 'after', 'cyclophosphamide', 'and', 'nephrotoxicity', 'was', 'seen', 'in', 'mice', 'with', 'adenomatous', 'polyposis', 'coli', '.']
function sentence(rng: () => number, words: number): string {
  return Array.from({ length: words }, () => WORDS[Math.floor(rng() * WORDS.length)]).join(' ')
}
const rngState = new Rng(7)
const rng = (): number => rngState.next()
const docs: TextDocument[] = Array.from({ length: 40 }, (_, d) => ({ file: 'x.txt', line: d + 1, lines: Array.from({ length: 1 + (d % 4) }, () => sentence(rng, 3 + Math.floor(rng() * 25))) }))
const vocab = trainWordPieceVocab(['hyper kal emia cyclo phos phamide nephro toxicity adeno matous poly posis'], { vocabSize: 60, lowercase: true }).tokens
const tokenizer = WordPieceTokenizer.fromVocab(vocab, { lowercase: true })
const maskOpts = { maskId: tokenizer.maskId, vocabSize: tokenizer.vocabSize, specialIds: [0, 1, 2, 3, 4] }

describe('packDocuments', () => {
  const packed = [...packDocuments(docs, tokenizer, { maxLength: 32 })]

  it('fills sequences up to maxLength with [CLS] … [SEP] and loses no piece of any document', () => {
    expect(packed.length).toBeGreaterThan(docs.length)
    for (const s of packed) {
      expect(s.ids.length).toBeLessThanOrEqual(32)
      expect(s.ids[0]).toBe(tokenizer.clsId)
      expect(s.ids[s.ids.length - 1]).toBe(tokenizer.sepId)
      expect(s.wordStart[1]).toBe(1)
    }
    const inner = packed.flatMap((s) => [...s.ids.slice(1, -1)])
    const expected = docs.flatMap((d) => d.lines.flatMap((l) => tokenizer.tokenize(l).ids))
    expect(inner).toEqual(expected)
  })

  it('never puts two documents in one sequence, and packs several short lines together', () => {
    const perDoc = docs.map((d) => [...packDocuments([d], tokenizer, { maxLength: 32 })].length)
    expect(perDoc.reduce((a, b) => a + b, 0)).toBe(packed.length)
    const short: TextDocument = { file: 'x', line: 1, lines: ['the patient', 'was seen', 'in mice'] }
    expect([...packDocuments([short], tokenizer, { maxLength: 32 })]).toHaveLength(1)
  })

  it('cuts a line longer than a sequence at word starts', () => {
    const long: TextDocument = { file: 'x', line: 1, lines: [Array(40).fill('hyperkalemia nephrotoxicity').join(' ')] }
    const seqs = [...packDocuments([long], tokenizer, { maxLength: 16 })]
    expect(seqs.length).toBeGreaterThan(3)
    for (const s of seqs) {
      expect(s.wordStart[1]).toBe(1)
      // The piece after the cut must start a word: no sequence begins with a "##" piece.
      expect(tokenizer.tokenOf(s.ids[1]).startsWith('##')).toBe(false)
    }
  })
})

describe('wholeWordMask', () => {
  const packed = [...packDocuments(docs, tokenizer, { maxLength: 64 })]
  const wordsOf = (s: PackedSequence): Array<[number, number]> => {
    const out: Array<[number, number]> = []
    for (let k = 1; k < s.ids.length - 1; k++) {
      if (s.wordStart[k] === 1) out.push([k, k + 1])
      else out[out.length - 1][1] = k + 1
    }
    return out
  }

  it('predicts round(15 %) of the words of each sequence, whole words only, never [CLS]/[SEP]', () => {
    let multiPieceWords = 0
    packed.forEach((s, i) => {
      const m = wholeWordMask(s, maskRng(1, 0, i), maskOpts)
      const words = wordsOf(s)
      let chosen = 0
      for (const [a, b] of words) {
        const labelled = [...m.labels.slice(a, b)].map((l) => l !== IGNORE_INDEX)
        expect(new Set(labelled).size).toBe(1)
        if (labelled[0]) chosen++
        if (b - a > 1) multiPieceWords++
      }
      expect(chosen).toBe(Math.max(1, Math.round(0.15 * words.length)))
      expect(m.labels[0]).toBe(IGNORE_INDEX)
      expect(m.labels[s.ids.length - 1]).toBe(IGNORE_INDEX)
      for (let k = 0; k < s.ids.length; k++) {
        if (m.labels[k] !== IGNORE_INDEX) expect(m.labels[k]).toBe(s.ids[k])
        else expect(m.inputIds[k]).toBe(s.ids[k])
      }
    })
    expect(multiPieceWords).toBeGreaterThan(20)
  })

  it('replaces chosen words by [MASK] 80 %, random pieces 10 %, keeps 10 %', () => {
    let mask = 0
    let random = 0
    let kept = 0
    for (let epoch = 0; epoch < 30; epoch++) {
      packed.forEach((s, i) => {
        const m = wholeWordMask(s, maskRng(3, epoch, i), maskOpts)
        for (const [a] of wordsOf(s)) {
          if (m.labels[a] === IGNORE_INDEX) continue
          if (m.inputIds[a] === tokenizer.maskId) mask++
          else if (m.inputIds[a] === s.ids[a]) kept++
          else {
            random++
            expect(maskOpts.specialIds).not.toContain(m.inputIds[a])
          }
        }
      })
    }
    const total = mask + random + kept
    expect(total).toBeGreaterThan(3000)
    expect(mask / total).toBeCloseTo(0.8, 1)
    // A random draw can hit the original piece; that counts as "kept" here, so allow for it.
    expect(random / total).toBeGreaterThan(0.07)
    expect(random / total).toBeLessThan(0.13)
    expect(kept / total).toBeGreaterThan(0.07)
    expect(kept / total).toBeLessThan(0.14)
  })

  it('draws new masks every epoch and the same masks for the same (seed, epoch, sequence)', () => {
    const s = packed[5]
    const a = wholeWordMask(s, maskRng(1, 0, 5), maskOpts)
    const b = wholeWordMask(s, maskRng(1, 0, 5), maskOpts)
    const c = wholeWordMask(s, maskRng(1, 1, 5), maskOpts)
    expect([...a.inputIds]).toEqual([...b.inputIds])
    expect([...a.labels]).not.toEqual([...c.labels])
  })

  it('holds out 1 % of the sequences, or every N-th', () => {
    const held = Array.from({ length: 10_000 }, (_, i) => i).filter(isHeldOut).length
    expect(held).toBe(100)
    const every20 = heldOutEvery(20)
    expect(Array.from({ length: 100 }, (_, i) => i).filter((i) => every20(i))).toEqual([19, 39, 59, 79, 99])
    expect(() => heldOutEvery(1)).toThrow(/≥ 2/)
  })
})

describe('documentLines and wordCount (text of the app workspace)', () => {
  it('gives a line per passage, or per line of a text without passages; counts words', () => {
    const text = 'A  title.\tHere\nthe abstract  starts.'
    const withPassages = { text, passages: [{ type: 'title', offset: 0, length: 9 }, { type: 'abstract', offset: 10, length: text.length - 10 }] }
    expect(documentLines(withPassages)).toEqual(['A title.', 'Here the abstract starts.'])
    expect(documentLines({ text: 'first line\r\n\n  second   line \n', passages: [] })).toEqual(['first line', 'second line'])
    expect(wordCount(['A title.', ' Here the  abstract starts. ', '', '  '])).toBe(6)
  })
})

describe('readTextDocuments', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fastbioner-pretrain-'))
  const collect = async (paths: string[]) => {
    const out: TextDocument[] = []
    for await (const d of readTextDocuments(paths)) out.push(d)
    return out
  }

  it('splits plain text and .txt.gz into documents at blank lines, folders in sorted order', async () => {
    mkdirSync(join(dir, 'folder'))
    writeFileSync(join(dir, 'folder', 'b.txt'), 'one.\ntwo.\n\n\nthree.\n')
    writeFileSync(join(dir, 'folder', 'a.txt.gz'), gzipSync('zero.\n'))
    writeFileSync(join(dir, 'folder', 'ignored.bin'), 'x')
    const got = await collect([join(dir, 'folder')])
    expect(got.map((d) => d.lines)).toEqual([['zero.'], ['one.', 'two.'], ['three.']])
    expect(got[2].line).toBe(5)
  })

  it('reads the passages of a corpus file', async () => {
    const got = await collect([join(import.meta.dirname, '../../fixtures/corpus/sample.pubtator')])
    expect(got.length).toBeGreaterThan(0)
    expect(got[0].lines.length).toBeGreaterThan(0)
  })

  it('refuses empty, binary, gigantic-line and missing files, naming the file and line', async () => {
    writeFileSync(join(dir, 'empty.txt'), '\n  \n')
    await expect(collect([join(dir, 'empty.txt')])).rejects.toThrow(/empty\.txt.*empty/)
    writeFileSync(join(dir, 'bin.txt'), 'fine\nbad\u0000bytes\n')
    await expect(collect([join(dir, 'bin.txt')])).rejects.toThrow(/bin\.txt:2.*binary/)
    writeFileSync(join(dir, 'long.txt'), 'ok\n' + 'a'.repeat(MAX_LINE_CHARS + 1) + '\n')
    await expect(collect([join(dir, 'long.txt')])).rejects.toThrow(/long\.txt:2: the line is longer than/)
    await expect(collect([join(dir, 'nope.txt')])).rejects.toThrow(/nope\.txt.*ENOENT/)
    const varied = Array.from({ length: 5000 }, (_, i) => `line ${(i * 7919) % 10007} ${Math.sin(i)}`).join('\n')
    const gz = gzipSync(varied)
    writeFileSync(join(dir, 'trunc.txt.gz'), gz.subarray(0, gz.length >> 1))
    await expect(collect([join(dir, 'trunc.txt.gz')])).rejects.toThrow(/trunc\.txt\.gz:\d+: the gzip data is truncated or damaged/)
  })
})
