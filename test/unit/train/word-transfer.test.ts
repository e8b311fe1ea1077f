// Sequence-level distillation into a word tagger: sentences tagged by teachers train the student
// beside the gold corpora, one example teaching every head that has a teacher; `train --teacher
// --transfer` samples the text and runs each teacher once. Posterior targets: each step draws a
// teacher and a label path from its posterior, for every transfer sentence and head.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CorpusDocument } from '@shared/domain'
import { writePubtator } from '@core/corpus'
import { Rng } from '@core/rng'
import type { Tagger } from '@core/tag/tagger'
import { labelTransferSet, majorityMentions, sampleTransferSentences, teacherHeadFor, transferDocuments } from '@core/train/transfer'
import { folderTransferTagStore, TRANSFER_TAGS_FILE } from '@core/train/transfer-tags'
import { trainWordTagger, transferExamples, transferTargetSampler, wordTaggerTokenizer, type TeacherPosteriors, type WordTransferSet } from '@core/train/word-loop'
import { buildLabelMap } from '@core/nlp/bio'
import { viterbi, type CrfScores } from '@core/model/crf'
import { wordTaggerFor } from '@core/tag/open'
import { run as trainCmd } from '../../../src/cli/commands/train'
import { capture } from '../cli/capture'
import { sentenceCorpus as corpus } from './synthetic'
import { loadWordTagger } from '@core/model/word-tagger'
import { readCheckpointInfo } from '@core/model/checkpoint-files'
import { readSafetensors } from '@core/model/safetensors'

let tmp: string
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'fastbioner-transfer-'))
})
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const mentionTexts = async (tagger: Tagger, text: string, head?: string) => {
  const [r] = await tagger.tag([{ id: 'q', text, passages: [], mentions: [] }], { head })
  return r.mentions.map((m) => text.slice(m.start, m.end)).sort()
}

/** A gold file of n one-disease sentences (ids from idBase) and a word tagger trained on it through the CLI. */
async function goldAndTeacher(prefix: string, n: number, idBase: number, epochs: number): Promise<{ train: string; teacherDir: string }> {
  const gold = corpus(Array.from({ length: n }, (_, i) => (i % 2 ? ['fever', 'Disease'] : ['asthma', 'Disease'])), idBase)
  const train = join(tmp, `${prefix}train.pubtator`)
  writeFileSync(train, writePubtator(gold))
  const teacherDir = join(tmp, `${prefix}teacher`)
  const t = await capture(() => trainCmd(['--train', train, '--out', teacherDir, '--epochs', String(epochs), '--seed', '1', '--threads', '1']))
  expect(t.code, t.err).toBe(0)
  return { train, teacherDir }
}

describe('word tagger with a transfer set', () => {
  it('learns from the teachers what no gold corpus says, for each head from its own teacher', async () => {
    // Gold: head "dis" knows two diseases, head "chem" two chemicals; neither corpus contains the
    // invented words below. The transfer text has them, labelled by each head's (fake) teacher:
    // "vorblax" a Disease for dis, "quinzate" a Chemical for chem, in the same sentences.
    const rng = new Rng(3)
    const dis = corpus(Array.from({ length: 40 }, (_, i) => (i % 2 ? ['fever', 'Disease'] : ['asthma', 'Disease'])), 100)
    const chem = corpus(Array.from({ length: 40 }, (_, i) => (i % 2 ? ['aspirin', 'Chemical'] : ['heparin', 'Chemical'])), 200)
    const transferText = Array.from({ length: 60 }, () => rng.pick(['Signs of vorblax after quinzate in the cells.', 'We report quinzate and vorblax in the cells.']))
    const documents = transferDocuments(transferText)
    const spans = (text: string, word: string, type: string) => {
      const start = text.indexOf(word)
      return [{ start, end: start + word.length, type, text: word }]
    }
    const transfer = {
      documents,
      mentions: {
        dis: documents.map((d) => spans(d.text, 'vorblax', 'Disease')),
        chem: documents.map((d) => spans(d.text, 'quinzate', 'Chemical')),
      },
    }
    const tasks = [
      { head: 'dis', train: dis },
      { head: 'chem', train: chem },
    ]
    const withTransfer = await trainWordTagger({ tasks, transfer, epochs: 6, seed: 1, threads: 1 })
    const without = await trainWordTagger({ tasks, epochs: 6, seed: 1, threads: 1 })
    expect(withTransfer.trainExamples).toBe(80 + 60)
    const q = 'Signs of vorblax after quinzate in the cells.'
    const a = wordTaggerFor(withTransfer.model, { maxLength: 256, sentenceLevel: true }, { threads: 1 })
    const b = wordTaggerFor(without.model, { maxLength: 256, sentenceLevel: true }, { threads: 1 })
    try {
      expect(await mentionTexts(a, q, 'dis')).toEqual(['vorblax'])
      expect(await mentionTexts(a, q, 'chem')).toEqual(['quinzate'])
      // The gold alone does not teach them: what the transfer set added is the teachers' labels.
      expect(await mentionTexts(b, q, 'dis')).not.toContain('vorblax')
      expect(await mentionTexts(b, q, 'chem')).not.toContain('quinzate')
    } finally {
      await a.dispose()
      await b.dispose()
    }
  }, 240_000)

  it('takes a transfer set as large as the unlabelled text (130 k sentences) without overflowing the stack', async () => {
    const words = ['fever', 'in', 'the', 'cells', 'asthma', 'aspirin', 'was', 'given']
    const documents = transferDocuments(Array.from({ length: 130_000 }, (_, i) => `${words[i % 8]} ${words[(i * 3) % 8]} w${i % 9000} .`))
    const mentions = { dis: documents.map((d) => (d.text.startsWith('fever') ? [{ start: 0, end: 5, type: 'Disease', text: 'fever' }] : [])) }
    const r = await trainWordTagger({ tasks: [{ head: 'dis', train: corpus([['fever', 'Disease']], 1) }], transfer: { documents, mentions }, epochs: 1, maxSteps: 1, threads: 1 })
    expect(r.trainExamples).toBe(130_001)
  }, 120_000)

  it("cuts every head's examples at the same places when one teacher's mention spans a sentence boundary", () => {
    // The splitter ends a sentence after "fever." (the next word is capitalised); sentence
    // splitting never cuts a mention, so the chemical teacher's mention across that boundary
    // would make its head one example where the disease head has two (the r17 recipe's student
    // stage failed on such a set: "Cannot read properties of undefined (reading 'targets')").
    const text = 'Signs of fever. Aspirin was given daily .'
    const documents = transferDocuments([text, 'Fever in the cells .'])
    const span = (from: string, to: string, type: string) => {
      const start = text.indexOf(from)
      const end = text.indexOf(to) + to.length
      return { start, end, type, text: text.slice(start, end) }
    }
    const labelMaps = { dis: buildLabelMap(['Disease']), chem: buildLabelMap(['Chemical']) }
    const tokenizer = wordTaggerTokenizer()
    const check = (mentions: WordTransferSet['mentions']) => {
      const examples = transferExamples({ documents, mentions }, labelMaps, tokenizer, 128, true)
      for (const e of examples) {
        expect(e.targets.map((t) => t.head).sort()).toEqual(['chem', 'dis'])
        for (const t of e.targets) expect(t.labels.length).toBe(e.words.length)
      }
      return examples.map((e) => ({ words: e.words.join(' '), ...Object.fromEntries(e.targets.map((t) => [t.head, Array.from(t.labels, (id) => labelMaps[t.head as 'dis'].labels[id])])) }))
    }
    const dis = [[span('fever', 'fever', 'Disease')], []]
    const chem = [[span('fever', 'Aspirin', 'Chemical')], []]
    // Either order of the heads: the boundary the chemical mention protects is kept out for both.
    const expected = [
      { words: 'Signs of fever . Aspirin was given daily .', dis: ['O', 'O', 'B-Disease', 'O', 'O', 'O', 'O', 'O', 'O'], chem: ['O', 'O', 'B-Chemical', 'I-Chemical', 'I-Chemical', 'O', 'O', 'O', 'O'] },
      { words: 'Fever in the cells .', dis: ['O', 'O', 'O', 'O', 'O'], chem: ['O', 'O', 'O', 'O', 'O'] },
    ]
    expect(check({ dis, chem })).toEqual(expected)
    expect(check({ chem, dis })).toEqual(expected)
  })

  it('refuses a transfer head no task trains and a teacher without labels for every sentence', async () => {
    const docs = transferDocuments(['Signs of fever in the cells.'])
    const tasks = [{ head: 'dis', train: corpus([['fever', 'Disease']], 1) }]
    await expect(trainWordTagger({ tasks, transfer: { documents: docs, mentions: { gene: [[]] } }, epochs: 1, threads: 1 })).rejects.toThrow(/no task trains head 'gene'/)
    await expect(trainWordTagger({ tasks, transfer: { documents: docs, mentions: { dis: [] } }, epochs: 1, threads: 1 })).rejects.toThrow(/mentions for 0 of 1 documents/)
  })

  it('picks the teacher head by name, else the only one, and tags in chunks', async () => {
    const calls: Array<{ n: number; head?: string }> = []
    const fake = (heads: string[]) =>
      ({
        headNames: heads,
        tag: async (d: CorpusDocument[], o: { head?: string }) => {
          calls.push({ n: d.length, head: o.head })
          return d.map((doc) => ({ mentions: [{ start: 0, end: 5, type: 'Disease', text: doc.text.slice(0, 5), confidence: 0.9, head: o.head }] }))
        },
      }) as unknown as Tagger
    expect(teacherHeadFor({ head: 'ncbi', tagger: fake(['default']) })).toBe('default')
    expect(teacherHeadFor({ head: 'ncbi', tagger: fake(['bc5cdr', 'ncbi']) })).toBe('ncbi')
    expect(() => teacherHeadFor({ head: 'gene', tagger: fake(['bc5cdr', 'ncbi']) })).toThrow(/several heads/)
    const docs = transferDocuments(['fever one', 'fever two', 'fever three', 'fever four', 'fever five'])
    const set = await labelTransferSet(docs, [{ head: 'dis', tagger: fake(['default']) }], undefined, 2)
    expect(calls).toEqual([{ n: 2, head: 'default' }, { n: 2, head: 'default' }, { n: 1, head: 'default' }])
    // Mentions are stored as corpus mentions (no confidence or head).
    expect(set.mentions.dis).toHaveLength(5)
    expect(set.mentions.dis[4]).toEqual([{ start: 0, end: 5, type: 'Disease', text: 'fever' }])
  })

  it('labels a head with several teachers by a span majority vote', async () => {
    const m = (start: number, end: number, type = 'Disease') => ({ start, end, type, text: 'x'.repeat(end - start) })
    // Three teachers: [0,5) by all, [10,15) by two, [10,20) and [30,35) by one, [40,45) twice by one.
    const lists = [
      [m(0, 5), m(10, 15), m(40, 45), m(40, 45)],
      [m(0, 5), m(10, 15), m(30, 35)],
      [m(0, 5), m(10, 20), m(30, 35, 'Chemical')],
    ]
    expect(majorityMentions(lists)).toEqual([m(0, 5), m(10, 15)])
    // Two teachers: both must agree; one teacher: its mentions as they are.
    expect(majorityMentions(lists.slice(1))).toEqual([m(0, 5)])
    expect(majorityMentions([lists[2]])).toEqual(lists[2])
    const fake = (spans: Array<[number, number]>) =>
      ({ headNames: ['default'], tag: async (d: CorpusDocument[]) => d.map(() => ({ mentions: spans.map(([s, e]) => ({ ...m(s, e), confidence: 0.9, head: 'default' })) })) }) as unknown as Tagger
    const docs = transferDocuments(['fever and asthma in the cells.', 'asthma alone.'])
    const set = await labelTransferSet(docs, [
      { head: 'dis', tagger: fake([[0, 5], [10, 16]]) },
      { head: 'dis', tagger: fake([[0, 5]]) },
      { head: 'dis', tagger: fake([[0, 5], [10, 16]]) },
      { head: 'chem', tagger: fake([[20, 25]]) },
    ])
    expect(set.mentions.dis).toEqual([[m(0, 5), m(10, 16)], [m(0, 5), m(10, 16)]])
    expect(set.mentions.chem).toEqual([[m(20, 25)], [m(20, 25)]])
  })

  it('keeps each teacher’s tags in the run folder and reads them back only for the same sentences and model', async () => {
    const dir = join(tmp, 'tag-store')
    let calls = 0
    const fake = (spans: Array<[number, number]>) =>
      ({
        headNames: ['default'],
        tag: async (d: CorpusDocument[]) => {
          calls += d.length
          return d.map((doc) => ({ mentions: spans.filter(([, e]) => e <= doc.text.length).map(([s, e]) => ({ start: s, end: e, type: 'Disease', text: doc.text.slice(s, e), confidence: 0.9, head: 'default' })) }))
        },
      }) as unknown as Tagger
    const docs = transferDocuments(['fever and asthma in the cells.', 'asthma alone.'])
    const notes: string[] = []
    const teachers = (fp2: string) => [
      { head: 'dis', tagger: fake([[0, 5], [10, 16]]), fingerprint: 'model-a' },
      { head: 'dis', tagger: fake([[0, 5]]), fingerprint: fp2 },
      { head: 'chem', tagger: fake([[20, 25]]) }, // no fingerprint: never stored
    ]
    const first = await labelTransferSet(docs, teachers('model-b'), undefined, 256, { store: folderTransferTagStore(dir, (l) => notes.push(l)) })
    expect(calls).toBe(6)
    // A new run (a fresh store over the same folder): the two fingerprinted teachers are read.
    calls = 0
    const stored: string[] = []
    const second = await labelTransferSet(docs, teachers('model-b'), (head, _d, _t, fromStore) => fromStore && stored.push(head), 256, { store: folderTransferTagStore(dir, (l) => notes.push(l)) })
    expect(calls).toBe(2)
    expect(stored).toEqual(['dis', 'dis'])
    expect(second).toEqual(first)
    expect(second.mentions.dis[0].map((m) => m.text)).toEqual(['fever']) // the two teachers' vote
    // Another model (a new fingerprint) or other sentences: tagged again.
    calls = 0
    await labelTransferSet(docs, teachers('model-c'), undefined, 256, { store: folderTransferTagStore(dir, (l) => notes.push(l)) })
    expect(calls).toBe(4)
    calls = 0
    await labelTransferSet(transferDocuments(['fever and asthma in the cells!', 'asthma alone.']), teachers('model-b'), undefined, 256, { store: folderTransferTagStore(dir, (l) => notes.push(l)) })
    expect(calls).toBe(6)
    expect(notes).toEqual([])
    // A stored span outside its sentence is not trusted: a note, and that teacher tags again.
    const file = join(dir, TRANSFER_TAGS_FILE)
    const json = JSON.parse(readFileSync(file, 'utf8'))
    for (const e of Object.values(json.entries) as Array<{ mentions: number[][][] }>) e.mentions[1] = [[0, 500, 'Disease'] as unknown as number[]]
    writeFileSync(file, JSON.stringify(json))
    calls = 0
    const repaired = await labelTransferSet(docs, teachers('model-b'), undefined, 256, { store: folderTransferTagStore(dir, (l) => notes.push(l)) })
    expect(calls).toBe(6)
    expect(repaired).toEqual(first)
    expect(notes.join('\n')).toMatch(/transfer-tags\.json: the stored tags of head 'dis' do not fit its sentences/)
    // A file that is not ours: one note, everything tagged, and the file rewritten.
    writeFileSync(file, '{"format": "something else"}')
    notes.length = 0
    calls = 0
    await labelTransferSet(docs, teachers('model-b'), undefined, 256, { store: folderTransferTagStore(dir, (l) => notes.push(l)) })
    expect(calls).toBe(6)
    expect(notes).toHaveLength(1)
    expect(notes[0]).toMatch(/transfer-tags\.json: not a fastbioner-transfer-tags\/1 file; the teachers tag the transfer set again/)
    expect(JSON.parse(readFileSync(file, 'utf8')).format).toBe('fastbioner-transfer-tags/1')
  })

  it('samples a uniform, seeded subset of the lines; all of them in order without a count', async () => {
    const f = join(tmp, 'lines.txt')
    writeFileSync(f, Array.from({ length: 1000 }, (_, i) => `sentence ${i}`).join('\n') + '\n')
    expect(await sampleTransferSentences([f], undefined, 1)).toEqual(Array.from({ length: 1000 }, (_, i) => `sentence ${i}`))
    const a = await sampleTransferSentences([f], 100, 1)
    expect(a).toHaveLength(100)
    expect(new Set(a).size).toBe(100)
    expect(await sampleTransferSentences([f], 100, 1)).toEqual(a)
    expect(await sampleTransferSentences([f], 100, 2)).not.toEqual(a)
    // Not the first lines only: the sample reaches the end of the file.
    expect(Math.max(...a.map((s) => Number(s.split(' ')[1])))).toBeGreaterThan(500)
  })

  it('samples runs of consecutive lines of one document for --doc-level, a blank line ending a document', async () => {
    const f = join(tmp, 'runs.txt')
    // Two documents: lines 0–994, then 995–999 after a blank line.
    const line = (i: number) => `sentence ${i}`
    writeFileSync(f, Array.from({ length: 995 }, (_, i) => line(i)).join('\n') + '\n\n' + Array.from({ length: 5 }, (_, i) => line(995 + i)).join('\n') + '\n')
    const runs = await sampleTransferSentences([f], 100, 1, 10)
    expect(runs).toHaveLength(10)
    expect(await sampleTransferSentences([f], 100, 1, 10)).toEqual(runs)
    for (const run of runs) {
      const n = run.split('\n').map((s) => Number(s.split(' ')[1]))
      // Consecutive lines from a multiple of 10 within the first document, or the second document whole.
      expect(n).toEqual(Array.from({ length: n.length }, (_, k) => n[0] + k))
      if (n[0] < 995) expect([n[0] % 10, n.length]).toEqual([0, n[0] === 990 ? 5 : 10])
      else expect(n).toEqual([995, 996, 997, 998, 999])
    }
    // Without a count, every line once, in order.
    expect((await sampleTransferSentences([f], undefined, 1, 10)).join('\n')).toBe(Array.from({ length: 1000 }, (_, i) => line(i)).join('\n'))
  })

  it('train --teacher --transfer: the teacher tags the sampled text once and the student records it', async () => {
    const rng = new Rng(5)
    const { train, teacherDir } = await goldAndTeacher('', 30, 300, 4)
    const text = join(tmp, 'transfer.txt')
    writeFileSync(text, Array.from({ length: 50 }, () => `${rng.pick(['Signs of', 'We report'])} ${rng.pick(['fever', 'asthma'])} in the cells.`).join('\n') + '\n')
    const student = join(tmp, 'student')
    const s = await capture(() => trainCmd(['--train', train, '--teacher', teacherDir, '--transfer', text, '--transfer-sentences', '20', '--max-words', '5', '--out', student, '--epochs', '4', '--seed', '1', '--threads', '1']))
    expect(s.code, s.err).toBe(0)
    expect(s.err).toMatch(/transfer set: 20 sentences/)
    expect(s.err).toMatch(/mentions by head: default 20\b/)
    const source = JSON.parse(readFileSync(join(student, 'fastbioner.json'), 'utf8')).source
    expect(source.transferSentences).toBe(20)
    expect(source.teachers).toEqual({ default: teacherDir })
    // The teacher's tags are kept in the run folder; the same run again reads them, tagging nothing.
    expect(s.err).toMatch(/teacher default: tagged 20\/20 sentences/)
    expect(existsSync(join(student, TRANSFER_TAGS_FILE))).toBe(true)
    const again = await capture(() => trainCmd(['--train', train, '--teacher', teacherDir, '--transfer', text, '--transfer-sentences', '20', '--max-words', '5', '--out', student, '--overwrite', '--epochs', '1', '--seed', '1', '--threads', '1']))
    expect(again.code, again.err).toBe(0)
    expect(again.err).toMatch(/teacher default: its tags of the 20 sentences read from .*transfer-tags\.json/)
    expect(again.err).not.toMatch(/tagged \d+\/20/)
    expect(again.err).toMatch(/mentions by head: default 20\b/)
    // --max-words: <pad>, <unk> and the three most frequent words; the rest read by characters.
    expect(readFileSync(join(student, 'words.txt'), 'utf8').trim().split('\n')).toHaveLength(5)
    // Each gold document and each sampled sentence is one example.
    expect(JSON.parse(s.out).train_examples).toBe(30 + 20)
    // --doc-level samples passages of 10 consecutive lines, each one example, which the teacher
    // tags sentence by sentence as it was trained (a mention in each of the 20 lines).
    const docStudent = join(tmp, 'doc-student')
    const d = await capture(() => trainCmd(['--train', train, '--teacher', teacherDir, '--transfer', text, '--transfer-sentences', '20', '--max-words', '5', '--doc-level', '--out', docStudent, '--epochs', '1', '--seed', '1', '--threads', '1']))
    expect(d.code, d.err).toBe(0)
    expect(d.err).toMatch(/transfer set: 20 sentences in 2 passages of up to 10 consecutive lines/)
    expect(d.err).toMatch(/teacher default: tagged 2\/2 passages/)
    expect(d.err).toMatch(/mentions by head: default 20\b/)
    expect(JSON.parse(d.out).train_examples).toBe(30 + 2)
    // A BERT student learns from the word tagger the same way: the head's teacher-tagged copy of
    // the sampled text joins its corpus, and the WordPiece vocabulary is learnt from both. Here
    // the head has an ensemble (the teacher given twice, so it agrees with itself on every span).
    const bert = join(tmp, 'bert-student')
    const b = await capture(() => trainCmd(['--train', train, '--arch', 'bert', '--preset', 'cpu-tiny', '--vocab-size', '200', '--augment-mentions', '0', '--max-length', '32', '--teacher', teacherDir, '--teacher', `default=${teacherDir}`, '--transfer', text, '--transfer-sentences', '20', '--out', bert, '--epochs', '1', '--seed', '1', '--threads', '1']))
    expect(b.code, b.err).toBe(0)
    expect(b.err).toMatch(/head default: 2 teachers; it learns the mentions more than half of them tag/)
    expect(b.err).toMatch(/mentions by head: default 20\b/)
    expect(JSON.parse(b.out).train_examples).toBe(30 + 20)
    expect(JSON.parse(readFileSync(join(bert, 'fastbioner.json'), 'utf8')).source).toMatchObject({ teachers: { default: [teacherDir, teacherDir] }, transferSentences: 20 })
    // A BERT student with a character channel starts it as the word tagger's character CNN:
    // its characters, sizes and weights (after one step at lr 1e-9, still the teacher's).
    const charStudent = join(tmp, 'bert-char-student')
    const c = await capture(() => trainCmd(['--train', train, '--arch', 'bert', '--char-cnn', '--preset', 'cpu-tiny', '--vocab-size', '200', '--augment-mentions', '0', '--max-length', '32', '--teacher', teacherDir, '--transfer', text, '--transfer-sentences', '20', '--out', charStudent, '--max-steps', '1', '--lr', '1e-9', '--seed', '1', '--threads', '1']))
    expect(c.code, c.err).toBe(0)
    expect(c.err).toMatch(/the character CNN starts as .*teacher's/)
    expect(readFileSync(join(charStudent, 'chars.txt'), 'utf8')).toBe(readFileSync(join(teacherDir, 'chars.txt'), 'utf8'))
    const teacherModel = loadWordTagger(teacherDir)
    expect(readCheckpointInfo(charStudent).config.charCnn).toMatchObject({ maxChars: teacherModel.config.maxChars, charDim: teacherModel.config.charDim, charFilters: teacherModel.config.charFilters })
    const weights = readSafetensors(join(charStudent, 'model.safetensors')).tensors
    const conv = weights.get('bert.embeddings.char_cnn.conv.weight')! // stored [out, in]
    const [F, K] = conv.shape
    const teacherConv = teacherModel.params.get('char_cnn.conv.weight')! // ours [in, out]
    for (let f = 0; f < F; f += 7) for (let k = 0; k < K; k += 5) expect(conv.data[f * K + k]).toBeCloseTo(teacherConv[k * F + f], 5)
    const emb = weights.get('bert.embeddings.char_cnn.char_embeddings.weight')!.data
    expect(Array.from(emb.slice(0, 40)).map((x) => Number(x.toFixed(5)))).toEqual(Array.from(teacherModel.params.get('char_cnn.char_embeddings.weight')!.slice(0, 40)).map((x) => Number(x.toFixed(5))))
    // Usage errors: a teacher without text, text without a teacher, a teacher for no task's head.
    for (const [args, msg] of [
      [['--teacher', teacherDir], /--teacher needs --transfer/],
      [['--transfer', text], /--transfer needs --teacher/],
      [['--teacher', `gene=${teacherDir}`, '--transfer', text], /no task trains head 'gene'/],
    ] as const) {
      const r = await capture(() => trainCmd(['--train', train, ...args, '--out', join(tmp, 'never'), '--epochs', '1', '--threads', '1']))
      expect(r.code).toBe(2)
      expect(r.err).toMatch(msg)
    }
  }, 240_000)
})

describe('posterior transfer targets', () => {
  // Student head 'dis' (O, B-Disease, I-Disease); the teachers tag Chemical too, which is O for it.
  const labelMaps = { dis: buildLabelMap(['Disease']) }
  const teacherLabels = buildLabelMap(['Chemical', 'Disease']).labels // O, B-Chemical, I-Chemical, B-Disease, I-Disease
  const text = 'Signs of vorblax syndrome after quinzate in the cells.'
  const documents = transferDocuments([text])
  const words = wordTaggerTokenizer().tokenize(text).wordOffsets // Signs of vorblax syndrome after quinzate in the cells .
  const CELLS = 8
  const tagsA = ['O', 'O', 'B-Disease', 'I-Disease', 'O', 'B-Chemical', 'O', 'O', 'O', 'O']
  const tagsB = tagsA.map((t) => (t.endsWith('Disease') ? 'O' : t))
  const C = teacherLabels.length
  const crf: CrfScores = (() => {
    const rng = new Rng(4)
    return { transitions: rng.normalArray(C * C, 1), start: rng.normalArray(C, 1), end: rng.normalArray(C, 1) }
  })()
  /** A teacher that scores every word but 'cells' (as a window edge would leave it out). */
  const teacher = (rows: number[][], withCrf = true): TeacherPosteriors => {
    const kept = words.map((_, w) => w).filter((w) => w !== CELLS)
    return {
      labels: teacherLabels,
      crf: withCrf ? crf : undefined,
      documents: [{ offsets: Int32Array.from(kept.flatMap((w) => words[w])), logProbs: Float32Array.from(kept.flatMap((w) => rows[w].map((p) => Math.log(p)))) }],
    }
  }
  /** Near-certain rows: the tag's label at 1 − 4e-11, the others at 1e-11 (log −25). */
  const certain = (tags: string[]) => tags.map((t) => teacherLabels.map((l) => (l === t ? 1 - 4e-11 : 1e-11)))
  // The vote says 'cells' is a Disease: the word no teacher scored keeps that label.
  const vote = [[{ start: text.indexOf('cells'), end: text.indexOf('cells') + 5, type: 'Disease', text: 'cells' }]]
  const student = (tags: string[]) => Array.from(tags, (t, w) => (w === CELLS ? 1 : (labelMaps.dis.label2id[t] ?? 0)))
  const sampler = (teachers: TeacherPosteriors[]) => {
    const set: WordTransferSet = { documents, mentions: { dis: vote }, posteriors: { dis: teachers } }
    const [example] = transferExamples(set, labelMaps, wordTaggerTokenizer(), 128, true)
    const sample = transferTargetSampler(set, labelMaps)!
    return (stepSeed: number) => {
      const targets = sample(example, stepSeed, 0)
      expect(targets.map((t) => t.head)).toEqual(['dis'])
      return Array.from(targets[0].labels)
    }
  }

  it("a near-certain teacher's draws are its Viterbi path, its other types O, unscored words the vote's", () => {
    const rows = certain(tagsA)
    const t = teacher(rows)
    // The sampled chains are words 0–7 and word 9; their Viterbi paths are the tags.
    const em = t.documents[0].logProbs
    expect(Array.from(viterbi(em.subarray(0, 8 * C), 8, C, crf), (j) => teacherLabels[j])).toEqual(tagsA.slice(0, 8))
    const draw = sampler([t])
    for (let seed = 0; seed < 200; seed++) expect(draw(seed)).toEqual(student(tagsA))
    expect(student(tagsA)).toEqual([0, 0, 1, 2, 0, 0, 0, 0, 1, 0])
  })

  it('two teachers that disagree are each drawn half the time; the same step seed draws the same labels', () => {
    const draw = sampler([teacher(certain(tagsA)), teacher(certain(tagsB))])
    let a = 0
    const n = 4000
    for (let seed = 0; seed < n; seed++) {
      const labels = draw(seed)
      if (labels[2] === 1) {
        a++
        expect(labels).toEqual(student(tagsA))
      } else expect(labels).toEqual(student(tagsB))
    }
    // Standard deviation of the frequency: 0.008.
    expect(Math.abs(a / n - 0.5)).toBeLessThan(0.04)
    // A resumed run's step replays its draws.
    for (let seed = 0; seed < 50; seed++) expect(draw(seed)).toEqual(draw(seed))
    expect(new Set(Array.from({ length: 50 }, (_, seed) => draw(seed).join())).size).toBe(2)
  })

  it('without a CRF each word is drawn from its own probabilities', () => {
    const rows = certain(tagsB)
    rows[2] = [0.3, 0, 0, 0.7, 0] // vorblax: O 0.3, B-Disease 0.7
    const draw = sampler([teacher(rows, false)])
    let b = 0
    const n = 4000
    for (let seed = 0; seed < n; seed++) if (draw(seed)[2] === 1) b++
    expect(Math.abs(b / n - 0.7)).toBeLessThan(0.04)
  })

  it('labelTransferSet keeps every teacher’s scored words as log-probabilities beside the vote', async () => {
    const fake = (p: number, covered: number[]) =>
      ({
        headNames: ['default'],
        tag: async (d: CorpusDocument[], o: { wordScores?: boolean }) =>
          d.map((doc) => {
            const offs = wordTaggerTokenizer().tokenize(doc.text).wordOffsets
            const probs = Float32Array.from(offs.flatMap((_, w) => (covered[w] ? [1 - p, p, 0] : [0, 0, 0])))
            return {
              mentions: [{ start: 0, end: 5, type: 'Disease', text: doc.text.slice(0, 5), confidence: 0.9 }],
              ...(o.wordScores ? { wordScores: [{ head: 'default', labels: labelMaps.dis.labels, crf, wordOffsets: offs, covered: Uint8Array.from(covered), probs }] } : {}),
            }
          }),
      }) as unknown as Tagger
    const docs = transferDocuments(['fever in cells', 'fever in mice'])
    const all = [1, 1, 1]
    const set = await labelTransferSet(docs, [{ head: 'dis', tagger: fake(0.25, all) }, { head: 'dis', tagger: fake(0.5, all) }, { head: 'dis', tagger: fake(0.5, [1, 0, 1]) }], undefined, 1, { targets: 'posterior' })
    expect(set.mentions.dis[1]).toEqual([{ start: 0, end: 5, type: 'Disease', text: 'fever' }])
    const [a, b, c] = set.posteriors!.dis
    expect(a.labels).toEqual(labelMaps.dis.labels)
    expect(a.crf).toBe(crf)
    expect(Array.from(a.documents[1].offsets)).toEqual([0, 5, 6, 8, 9, 13])
    expect(Array.from(a.documents[1].logProbs.slice(0, 3))).toEqual([Math.fround(Math.log(0.75)), Math.fround(Math.log(0.25)), -Infinity])
    expect(b.documents[0].logProbs[1]).toBeCloseTo(Math.log(0.5), 6)
    // Teachers with the same words share their offsets; an unscored word is left out.
    expect(b.documents[0].offsets).toBe(a.documents[0].offsets)
    expect(Array.from(c.documents[0].offsets)).toEqual([0, 5, 9, 14])
    expect(c.documents[0].logProbs).toHaveLength(2 * 3)
    // The vote alone: no posteriors kept; a teacher without word scores cannot give them.
    expect((await labelTransferSet(docs, [{ head: 'dis', tagger: fake(0.5, all) }])).posteriors).toBeUndefined()
    const bare = { headNames: ['default'], tag: async (d: CorpusDocument[]) => d.map(() => ({ mentions: [] })) } as unknown as Tagger
    await expect(labelTransferSet(docs, [{ head: 'dis', tagger: bare }], undefined, 256, { targets: 'posterior' })).rejects.toThrow(/gave no word scores/)
  })

  it('a student learns from the posteriors what the vote does not say', async () => {
    // The vote has no mentions; the one teacher's posterior is certain that 'vorblax' is a Disease.
    const rng = new Rng(3)
    const docs = transferDocuments(Array.from({ length: 60 }, () => rng.pick(['Signs of vorblax after quinzate in the cells.', 'We report quinzate and vorblax in the cells.'])))
    const labels = labelMaps.dis.labels
    const documents = docs.map((d) => {
      const offs = wordTaggerTokenizer().tokenize(d.text).wordOffsets
      const rows = offs.map(([a, b]) => labels.map((l) => (l === (d.text.slice(a, b) === 'vorblax' ? 'B-Disease' : 'O') ? 1 - 2e-11 : 1e-11)))
      return { offsets: Int32Array.from(offs.flat()), logProbs: Float32Array.from(rows.flat().map((p) => Math.log(p))) }
    })
    const transfer: WordTransferSet = { documents: docs, mentions: { dis: docs.map(() => []) }, posteriors: { dis: [{ labels, crf, documents }] } }
    const tasks = [{ head: 'dis', train: corpus(Array.from({ length: 40 }, (_, i) => (i % 2 ? ['fever', 'Disease'] : ['asthma', 'Disease'])), 100) }]
    const r = await trainWordTagger({ tasks, transfer, epochs: 6, seed: 1, threads: 1 })
    const tagger = wordTaggerFor(r.model, { maxLength: 256, sentenceLevel: true }, { threads: 1 })
    try {
      expect(await mentionTexts(tagger, 'Signs of vorblax after quinzate in the cells.', 'dis')).toEqual(['vorblax'])
    } finally {
      await tagger.dispose()
    }
  }, 240_000)

  it('train --transfer-targets posterior trains a word tagger student on draws and records the setting; refused for BERT', async () => {
    const { train, teacherDir } = await goldAndTeacher('posterior-', 20, 400, 2)
    const text = join(tmp, 'posterior-transfer.txt')
    writeFileSync(text, ['Signs of fever in the cells.', 'We report asthma in the mice.', 'No fever was seen.'].join('\n') + '\n')
    const student = join(tmp, 'posterior-student')
    const common = ['--train', train, '--teacher', teacherDir, '--teacher', `default=${teacherDir}`, '--transfer', text, '--seed', '1', '--threads', '1']
    const s = await capture(() => trainCmd([...common, '--transfer-targets', 'posterior', '--out', student, '--max-steps', '2', '--batch-size', '8']))
    expect(s.code, s.err).toBe(0)
    expect(s.err).toMatch(/head default: 2 teachers; each step draws one of them and a label path from its posterior/)
    expect(s.err).toMatch(/transfer targets: label paths drawn from the teachers' posteriors/)
    expect(JSON.parse(s.out)).toMatchObject({ train_examples: 20 + 3, steps: 2 })
    const source = JSON.parse(readFileSync(join(student, 'fastbioner.json'), 'utf8')).source
    expect(source).toMatchObject({ transferTargets: 'posterior', transferSentences: 3, options: { 'transfer-targets': 'posterior' } })
    for (const [args, msg] of [
      [[...common, '--transfer-targets', 'mean'], /--transfer-targets must be vote or posterior, got 'mean'/],
      [['--train', train, '--transfer-targets', 'posterior'], /--transfer-targets is a setting of --teacher and --transfer/],
      [[...common, '--transfer-targets', 'posterior', '--arch', 'bert', '--preset', 'cpu-tiny'], /--transfer-targets is an option of --arch word-lstm/],
    ] as const) {
      const r = await capture(() => trainCmd([...args, '--out', join(tmp, 'never'), '--epochs', '1']))
      expect(r.code, r.err).toBe(2)
      expect(r.err).toMatch(msg)
    }
  }, 240_000)
})
