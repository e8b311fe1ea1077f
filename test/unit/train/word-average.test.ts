// Checkpoint averaging for the word tagger (train --arch word-lstm --average-last N, issue 26: the
// student's devel F1 moves by up to 1.6 between seeds): the mean of the last epochs' weights is
// scored on devel and saved only when it beats every single epoch; otherwise the best epoch stays.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { trainWordTagger } from '@core/train/word-loop'
import { loadWordTagger } from '@core/model/word-tagger'
import { wordTaggerFor } from '@core/tag/open'
import { evaluateTagger } from '@core/eval/evaluate'
import { sentenceCorpus } from './synthetic'

let tmp: string
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'fastbioner-word-average-'))
})
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const rows = (n: number, base: number) => sentenceCorpus(Array.from({ length: n }, (_, i) => (i % 4 === 0 ? ['fever', 'Disease'] : i % 4 === 1 ? ['asthmoma', 'Disease'] : i % 4 === 2 ? ['gastritis', 'Disease'] : ['water', null])), base)
const train = rows(40, 100)
const dev = rows(12, 500).map((d, i) => (i % 4 === 1 ? { ...d, text: d.text.replace('asthmoma', 'nephroma'), mentions: d.mentions.map((m) => ({ ...m, text: 'nephroma' })) } : d))
const settings = { epochs: 3, batchSize: 8, seed: 5, threads: 1, lr: 0.01 }

describe('word tagger: checkpoint averaging', () => {
  it('keeps the mean of the last epochs only when devel prefers it, and the folder holds what the result says', async () => {
    // The weights at the end of epochs 2 and 3, from runs that stop there (the same batches and draws).
    const at2 = await trainWordTagger({ ...settings, epochs: 2, tasks: [{ head: 'default', train }] })
    const at3 = await trainWordTagger({ ...settings, tasks: [{ head: 'default', train }] })
    const out = join(tmp, 'avg')
    const r = await trainWordTagger({ ...settings, tasks: [{ head: 'default', train, dev }], averageLast: 2, outDir: out })
    expect(r.averaged!.epochs).toEqual([2, 3])
    const best = Math.max(...r.epochs.map((e) => e.dev!.f1))
    const saved = loadWordTagger(out)
    const training = JSON.parse(readFileSync(join(out, 'fastbioner.json'), 'utf8')).training
    if (r.averaged!.kept) {
      expect(r.averaged!.dev.f1).toBeGreaterThan(best)
      expect(training.averagedEpochs).toEqual([2, 3])
      expect(r.bestEpoch).toBe(3)
      for (const [name, p] of saved.params) {
        if (!at3.model.params.has(name)) continue
        const a = at2.model.params.get(name)!
        const b = at3.model.params.get(name)!
        for (let i = 0; i < p.length; i += Math.max(1, p.length >> 4)) expect(p[i], name).toBeCloseTo((a[i] + b[i]) / 2, 6)
      }
    } else {
      expect(r.averaged!.dev.f1).toBeLessThanOrEqual(best)
      expect(training.averagedEpochs).toBeUndefined()
      // The model in memory is the last epoch's again.
      for (const [name, p] of at3.model.params) expect(r.model.params.get(name), name).toEqual(p)
    }
    // The folder scores on devel what the result says is best.
    const tagger = wordTaggerFor(saved, { maxLength: 128, sentenceLevel: true }, { threads: 1 })
    const scored = await evaluateTagger(tagger, dev, { head: 'default' })
    await tagger.dispose()
    expect(scored.overall.f1).toBeCloseTo(r.bestDevF1!, 6)
    expect(r.bestDevF1).toBe(r.averaged!.kept ? r.averaged!.dev.f1 : best)
  }, 120_000)

  it('needs devel to decide', async () => {
    await expect(trainWordTagger({ ...settings, tasks: [{ head: 'default', train }], averageLast: 2 })).rejects.toThrow(/devel/)
  })
})
