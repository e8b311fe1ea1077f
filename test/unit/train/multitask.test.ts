// Multi-task training (MT-BioNER): one head per corpus, each trained only on its own corpus.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useBackend } from '@core/model/backend'
import { BertTokenClassifier, makeBertConfig } from '@core/model/bert'
import { loadCheckpoint } from '@core/model/checkpoint'
import { buildLabelMap } from '@core/nlp/bio'
import { WordPieceTokenizer } from '@core/nlp/tokenizer'
import { evaluate } from '@core/eval/evaluate'
import { IGNORE_INDEX, type HostBatch } from '@core/train/batching'
import { labelsByTask, train } from '@core/train/loop'
import type { CorpusDocument } from '../../../src/shared/domain'
import { syntheticDocs, syntheticVocab } from './synthetic'

const vocab = syntheticVocab()
const tokenizer = new WordPieceTokenizer(vocab, { lowercase: true })

/**
 * Corpus "b" annotates another type (the tail words "syndrome"/"disease", as Tail) and leaves the
 * entity words that corpus "a" annotates unannotated: trained into one head, its sentences would
 * teach that those words are O.
 */
function tailCorpus(docs: CorpusDocument[]): CorpusDocument[] {
  return docs.map((d) => ({
    ...d,
    mentions: d.mentions
      .filter((m) => m.text.includes(' '))
      .map((m) => {
        const tail = m.text.slice(m.text.lastIndexOf(' ') + 1)
        return { start: m.end - tail.length, end: m.end, text: tail, type: 'Tail' }
      }),
  }))
}

let tmp: string

describe('multi-task training', () => {
  beforeAll(async () => {
    await useBackend('wasm')
    tmp = mkdtempSync(join(tmpdir(), 'fastbioner-mt-'))
  })
  afterAll(() => rmSync(tmp, { recursive: true, force: true }))

  it('routes each row of a batch to its own corpus\'s head only', () => {
    const seqLen = 3
    const b = { indices: [4, 0, 2], seqLen, batchSize: 3, labels: Int32Array.from([1, 2, -100, 3, 4, 5, 6, -100, -100]) } as unknown as HostBatch
    const taskOf = [0, 1, 1, 0, 2] // example → task
    const out = labelsByTask(b, taskOf, ['a', 'b', 'c'])
    const I = IGNORE_INDEX
    expect([...out.a]).toEqual([I, I, I, 3, 4, 5, I, I, I]) // row 1 is example 0 (task a)
    expect([...out.b]).toEqual([I, I, I, I, I, I, 6, I, I]) // row 2 is example 2 (task b)
    expect([...out.c]).toEqual([1, 2, I, I, I, I, I, I, I]) // row 0 is example 4 (task c)
  })

  it('learns both heads, selects on their mean devel F1 and saves both in one checkpoint', async () => {
    const config = makeBertConfig({ vocabSize: vocab.length, hiddenSize: 32, numHiddenLayers: 1, numAttentionHeads: 2, intermediateSize: 64, maxPositionEmbeddings: 64 })
    const heads = { a: buildLabelMap(['Disease']).labels, b: buildLabelMap(['Tail']).labels }
    const model = BertTokenClassifier.random(config, 7, heads)
    const out = join(tmp, 'mt')
    const taskScores: Array<Record<string, { f1: number }>> = []
    const res = await train({
      model,
      tokenizer,
      tasks: [
        { head: 'a', train: syntheticDocs(40, 1, 4, 'a'), dev: syntheticDocs(12, 2, 4, 'ad') },
        { head: 'b', train: tailCorpus(syntheticDocs(40, 3, 4, 'b')), dev: tailCorpus(syntheticDocs(12, 4, 4, 'bd')) },
      ],
      outDir: out,
      epochs: 6,
      batchSize: 16,
      lr: 5e-3,
      maxLength: 32,
      seed: 3,
      onTaskScores: (_, s) => taskScores.push(s),
    })
    expect(taskScores).toHaveLength(res.epochs.length)
    const best = res.devByHead!
    expect(Object.keys(best)).toEqual(['a', 'b'])
    // Corpus b leaves every entity word unannotated; head a still finds them.
    expect(best.a.f1).toBeGreaterThan(0.9)
    expect(best.b.f1).toBeGreaterThan(0.9)
    expect(res.bestDevF1!).toBeCloseTo((best.a.f1 + best.b.f1) / 2, 9)

    const loaded = await loadCheckpoint(out)
    expect(Object.fromEntries([...loaded.model.heads].map(([h, i]) => [h, i.labels]))).toEqual(heads)
    const training = (loaded.metadata as { training: { tasks: string[]; devByHead: Record<string, { f1: number }> } }).training
    expect(training.tasks).toEqual(['a', 'b'])
    expect(training.devByHead.a.f1).toBeCloseTo(best.a.f1, 9)
    const f1b = (await evaluate(loaded.model, tokenizer, tailCorpus(syntheticDocs(12, 4, 4, 'bd')), { maxLength: 32, head: 'b' })).overall.f1
    expect(f1b).toBeCloseTo(best.b.f1, 6)
    model.dispose()
    loaded.model.dispose()
  })
})
