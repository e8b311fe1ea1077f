// Heads per entity type: one word-tagger head trained on several corpora (e.g. two disease corpora
// under their own guidelines), each corpus's devel scored on its own and model selection by the
// mean over every corpus; a teacher that tags more types than its head teaches only the head's.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CorpusDocument } from '@shared/domain'
import { writePubtator } from '@core/corpus'
import { loadWordTagger } from '@core/model/word-tagger'
import type { Tagger } from '@core/tag/tagger'
import { openTagger, wordTaggerFor } from '@core/tag/open'
import { routeText } from '@core/tag/router'
import { transferDocuments } from '@core/train/transfer'
import { trainWordTagger, wordTaskLabelMaps } from '@core/train/word-loop'
import { run as trainCmd } from '../../../src/cli/commands/train'
import { capture } from '../cli/capture'
import { sentenceCorpus as corpus } from './synthetic'

let tmp: string
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'fastbioner-typeheads-'))
})
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const alternate = (n: number, a: string, b: string, type: string): Array<[string, string]> => Array.from({ length: n }, (_, i) => [i % 2 ? a : b, type])

const found = async (tagger: Tagger, text: string, head: string) => {
  const [r] = await tagger.tag([{ id: 'q', text, passages: [], mentions: [] }], { head })
  return r.mentions.map((m) => `${text.slice(m.start, m.end)}/${m.type}`).sort()
}

describe('a word-tagger head trained on several corpora', () => {
  it('learns from each of its corpora, scores each devel apart and selects by their mean; the chemical head learns only Chemical from a Chemical + Disease teacher', async () => {
    // Head "dis" has two corpora: A knows fever and asthma, B knows glaubosis and marrowitch (words
    // A never has). Head "chem" has gold chemicals and a teacher that tags, in the transfer text,
    // "quinzate" a Chemical and "vorblax" a Disease.
    const a = corpus(alternate(30, 'fever', 'asthma', 'Disease'), 100)
    const b = corpus(alternate(30, 'glaubosis', 'marrowitch', 'Disease'), 200)
    const chem = corpus(alternate(30, 'aspirin', 'heparin', 'Chemical'), 300)
    const documents = transferDocuments(Array.from({ length: 40 }, (_, i) => (i % 2 ? 'Signs of vorblax after quinzate in the cells.' : 'We report quinzate and vorblax in the cells.')))
    const span = (text: string, word: string, type: string) => ({ start: text.indexOf(word), end: text.indexOf(word) + word.length, type, text: word })
    const transfer = { documents, mentions: { chem: documents.map((d) => [span(d.text, 'quinzate', 'Chemical'), span(d.text, 'vorblax', 'Disease')]) } }
    const tasks = [
      { head: 'dis', name: 'dis@a', train: a, dev: a.slice(0, 6) },
      { head: 'dis', name: 'dis@b', train: b, dev: b.slice(0, 6) },
      { head: 'chem', train: chem, dev: chem.slice(0, 6) },
    ]
    const perEpoch: Array<Record<string, { f1: number }>> = []
    const both = await trainWordTagger({ tasks, transfer, epochs: 6, seed: 1, threads: 1, onTaskScores: (_, s) => perEpoch.push(s) })
    const onlyA = await trainWordTagger({ tasks: [tasks[0], tasks[2]], epochs: 6, seed: 1, threads: 1 })

    // One head per type: the shared head's labels are its corpora's one type; the chemical head's
    // labels have no Disease although its teacher tagged one.
    expect(both.labels).toEqual({ dis: ['O', 'B-Disease', 'I-Disease'], chem: ['O', 'B-Chemical', 'I-Chemical'] })
    expect(both.trainExamples).toBe(30 + 30 + 30 + 40)
    // Each devel corpus scored on its own, every epoch; the best epoch is the one with the best
    // mean over the three corpora (not over the two heads), and its scores are reported.
    expect(perEpoch).toHaveLength(6)
    for (const s of perEpoch) expect(Object.keys(s).sort()).toEqual(['chem', 'dis@a', 'dis@b'])
    const mean = (s: Record<string, { f1: number }>) => (s['dis@a'].f1 + s['dis@b'].f1 + s.chem.f1) / 3
    const best = perEpoch.reduce((bi, s, i) => (mean(s) > mean(perEpoch[bi]) ? i : bi), 0)
    expect(both.bestEpoch).toBe(best + 1)
    expect(both.bestDevF1).toBeCloseTo(mean(perEpoch[best]), 9)
    expect(both.devByTask).toEqual(perEpoch[best])

    const t1 = wordTaggerFor(both.model, { maxLength: 256, sentenceLevel: true }, { threads: 1 })
    const t2 = wordTaggerFor(onlyA.model, { maxLength: 256, sentenceLevel: true }, { threads: 1 })
    try {
      // The shared head learnt both corpora's diseases; trained on A alone it does not know B's.
      expect(await found(t1, 'Signs of fever in the cells.', 'dis')).toEqual(['fever/Disease'])
      expect(await found(t1, 'Signs of glaubosis in the cells.', 'dis')).toEqual(['glaubosis/Disease'])
      expect(await found(t2, 'Signs of glaubosis in the cells.', 'dis')).toEqual([])
      // The teacher's Chemical is learnt, its Disease is not (O for the chemical head).
      expect(await found(t1, 'Signs of vorblax after quinzate in the cells.', 'chem')).toEqual(['quinzate/Chemical'])
    } finally {
      await t1.dispose()
      await t2.dispose()
    }
  }, 300_000)

  it('two heads of one type (one per corpus): the folder keeps a router, and tagging keeps the mentions of the head whose corpus a document resembles', async () => {
    const a = corpus(alternate(30, 'fever', 'asthma', 'Disease'), 100)
    const b = corpus(alternate(30, 'glaubosis', 'marrowitch', 'Disease'), 200)
    const out = join(tmp, 'routed')
    await trainWordTagger({ tasks: [{ head: 'dis-a', train: a }, { head: 'dis-b', train: b }], epochs: 6, seed: 1, threads: 1, outDir: out })
    const routers = JSON.parse(readFileSync(join(out, 'fastbioner.json'), 'utf8')).routers
    expect(routers.map((r: { type: string; heads: string[] }) => [r.type, r.heads])).toEqual([['Disease', ['dis-a', 'dis-b']]])
    const tagger = await openTagger(out, { threads: 1 })
    try {
      // Two of corpus A's words against one of B's: the document reads like A.
      const text = 'Signs of fever, asthma and glaubosis in the cells.'
      expect(routeText(routers[0], text)).toBe('dis-a')
      expect(await found(tagger, text, 'dis-a')).toEqual(['asthma/Disease', 'fever/Disease'])
      expect(await found(tagger, text, 'dis-b')).toEqual(['glaubosis/Disease'])
      const [merged] = await tagger.tag([{ id: 'q', text, passages: [], mentions: [] }])
      expect(merged.mentions.map((m) => `${m.text}/${m.type}/${(m as { head?: string }).head}`).sort()).toEqual(['asthma/Disease/dis-a', 'fever/Disease/dis-a'])
    } finally {
      await tagger.dispose()
    }
    // One head per type: no router.
    const single = join(tmp, 'unrouted')
    await trainWordTagger({ tasks: [{ head: 'dis', train: a }], epochs: 1, seed: 1, threads: 1, outDir: single })
    expect(JSON.parse(readFileSync(join(single, 'fastbioner.json'), 'utf8')).routers).toBeUndefined()
  }, 300_000)

  it('refuses corpora of one head that annotate different types, and two corpora of one name', () => {
    const dis = corpus([['fever', 'Disease']], 1)
    const mixed = corpus([['fever', 'Disease'], ['aspirin', 'Chemical']], 10)
    expect(() => wordTaskLabelMaps([{ head: 'd', name: 'd@1', train: dis }, { head: 'd', name: 'd@2', train: mixed }])).toThrow(
      /head 'd': corpus 'd@1' annotates Disease but 'd@2' annotates Chemical, Disease; .*O for every type/,
    )
    expect(() => wordTaskLabelMaps([{ head: 'd', train: dis }, { head: 'd', train: dis }])).toThrow(/two corpora are named 'd'/)
    // Different heads may annotate different types, as before.
    expect(Object.keys(wordTaskLabelMaps([{ head: 'd', train: dis }, { head: 'm', train: mixed }]))).toEqual(['d', 'm'])
  })

  it('train --task NAME repeated: one head on both corpora, devel by corpus in the log and the summary; bert and mismatched types refused', async () => {
    const write = (dir: string, file: string, docs: CorpusDocument[]) => {
      mkdirSync(join(tmp, dir), { recursive: true })
      writeFileSync(join(tmp, dir, file), writePubtator(docs))
      return join(tmp, dir, file)
    }
    const aTrain = write('A', 'train.pubtator', corpus(alternate(20, 'fever', 'asthma', 'Disease'), 100))
    const aDev = write('A', 'devel.pubtator', corpus(alternate(4, 'fever', 'asthma', 'Disease'), 150))
    const bTrain = write('B', 'train.pubtator', corpus(alternate(20, 'glaubosis', 'marrowitch', 'Disease'), 200))
    const bDev = write('B', 'devel.pubtator', corpus(alternate(4, 'glaubosis', 'marrowitch', 'Disease'), 250))
    const cTrain = write('C', 'train.pubtator', corpus(alternate(20, 'aspirin', 'heparin', 'Chemical'), 300))
    const out = join(tmp, 'student')
    const args = ['--task', `disease=${aTrain}:${aDev}`, '--task', `disease=${bTrain}:${bDev}`, '--task', `chemical=${cTrain}`]
    const r = await capture(() => trainCmd([...args, '--out', out, '--epochs', '2', '--seed', '1', '--threads', '1']))
    expect(r.code, r.err).toBe(0)
    expect(r.err).toMatch(/epoch 2 devel F1 by head: disease@A\/devel\.pubtator \d\.\d{4}, disease@B\/devel\.pubtator \d\.\d{4}\n/)
    const summary = JSON.parse(r.out)
    expect(summary.dev_by_corpus.map((c: { name: string; dev: string }) => [c.name, c.dev])).toEqual([
      ['disease@A/devel.pubtator', aDev],
      ['disease@B/devel.pubtator', bDev],
    ])
    const f1s = summary.dev_by_corpus.map((c: { f1: number }) => c.f1)
    expect(summary.best_dev_f1).toBeCloseTo((f1s[0] + f1s[1]) / 2, 9)
    expect(loadWordTagger(out).heads).toEqual({ disease: ['O', 'B-Disease', 'I-Disease'], chemical: ['O', 'B-Chemical', 'I-Chemical'] })
    expect(JSON.parse(readFileSync(join(out, 'fastbioner.json'), 'utf8')).source.tasks).toEqual({
      disease: [
        { train: aTrain, dev: aDev },
        { train: bTrain, dev: bDev },
      ],
      chemical: { train: cTrain, dev: null },
    })

    for (const [extra, code, msg] of [
      [['--arch', 'bert', '--preset', 'cpu-tiny'], 2, /--task disease is given twice: one head trained on several corpora is an option of --arch word-lstm/],
      [['--task', `disease=${cTrain}`], 1, /head 'disease': corpus 'disease@A\/devel\.pubtator' annotates Disease but 'disease@train\.pubtator' annotates Chemical/],
      [['--task', `disease=${cTrain}:${aDev}`], 2, /--task disease: two of its corpora have the same devel file/],
    ] as const) {
      const x = await capture(() => trainCmd([...args, ...extra, '--out', join(tmp, 'never'), '--epochs', '1', '--threads', '1']))
      expect(x.code, x.err).toBe(code)
      expect(x.err).toMatch(msg)
    }
  }, 240_000)
})
