// An interrupted word-tagger run continues where it saved (issue 26: a recipe stage that outlives
// a session): the optimizer state and the time spent are saved with each kept epoch, and the
// resumed run replays the same batches, dropout, <unk> and posterior-target draws, so it ends where the
// uninterrupted run ends.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { trainWordTagger, wordTaggerTokenizer, type WordTrainOptions } from '@core/train/word-loop'
import { transferDocuments } from '@core/train/transfer'
import { loadOptimizerState } from '@core/train/runner'
import { sentenceCorpus } from './synthetic'

let tmp: string
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'fastbioner-word-resume-'))
})
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const corpus = sentenceCorpus(Array.from({ length: 48 }, (_, i) => (i % 3 === 0 ? ['fever', 'Disease'] : i % 3 === 1 ? ['asthma', 'Disease'] : ['water', null])), 100)
// No devel set: every epoch is saved, so the stop below is resumed from the epoch it ended.
const settings = { tasks: [{ head: 'default', train: corpus }], epochs: 4, batchSize: 8, seed: 3, threads: 1 }

/** Trains whole, and stopped after epoch 2 then resumed: both must end with the same weights. */
async function resumeMatchesWhole(name: string, extra: Partial<WordTrainOptions> = {}): Promise<void> {
  const run = { ...settings, ...extra }
  const whole = await trainWordTagger({ ...run, outDir: join(tmp, `${name}-whole`) })
  const dir = join(tmp, `${name}-stopped`)
  const stop = new AbortController()
  const stepsPerEpoch = whole.epochs[0].steps
  const first = await trainWordTagger({
    ...run,
    outDir: dir,
    signal: stop.signal,
    // Stop at the end of epoch 2 (the runner saves the epoch, then sees the signal).
    onProgress: (p) => p.kind === 'step' && p.step === 2 * stepsPerEpoch && stop.abort(),
  })
  expect(first.cancelled).toBe(true)
  expect(first.epochs).toHaveLength(2)
  const saved = loadOptimizerState(dir)!
  expect(saved.point).toMatchObject({ epoch: 2, step: 2 * stepsPerEpoch })
  expect(Number(saved.metadata.elapsed_seconds)).toBeGreaterThan(0)

  const rest = await trainWordTagger({ ...run, outDir: dir, resume: true })
  expect(rest.cancelled).toBe(false)
  expect(rest.epochs.map((e) => e.epoch)).toEqual([3, 4])
  expect(rest.steps).toBe(whole.steps)
  expect(rest.losses).toEqual(whole.losses.slice(2 * stepsPerEpoch))
  for (const [name, p] of whole.model.params) expect(rest.model.params.get(name), name).toEqual(p)
}

describe('word tagger: resume', () => {
  it('an interrupted run resumed ends with the weights of the uninterrupted run', async () => {
    await resumeMatchesWhole('plain')
  }, 120_000)

  it('with posterior transfer targets too: the resumed steps draw the targets the whole run drew', async () => {
    // Two teachers, one with a CRF, both unsure of 'fever': each step's draws differ.
    const documents = transferDocuments(Array.from({ length: 16 }, (_, i) => (i % 2 ? 'Signs of fever in the cells.' : 'No fever was seen.')))
    const labels = ['O', 'B-Disease', 'I-Disease']
    const rows = (d: (typeof documents)[number]) => {
      const offs = wordTaggerTokenizer().tokenize(d.text).wordOffsets
      return { offsets: Int32Array.from(offs.flat()), logProbs: Float32Array.from(offs.flatMap(([a, b]) => (d.text.slice(a, b) === 'fever' ? [0.4, 0.5, 0.1] : [0.9, 0.05, 0.05]).map(Math.log))) }
    }
    const crf = { transitions: new Float32Array(9).fill(0.1), start: new Float32Array(3), end: new Float32Array(3) }
    const posteriors = { default: [{ labels, crf, documents: documents.map(rows) }, { labels, documents: documents.map(rows) }] }
    await resumeMatchesWhole('posterior', { transfer: { documents, mentions: { default: documents.map(() => []) }, posteriors } })
  }, 120_000)

  it('with a linear schedule: the rate falls from --lr to 0 over the planned steps, and a resumed run continues the fall', async () => {
    const lrs: number[] = []
    const r = await trainWordTagger({ ...settings, lr: 0.01, lrSchedule: 'linear', outDir: join(tmp, 'linear-rates'), onProgress: (p) => p.kind === 'step' && lrs.push(p.lr) })
    expect(lrs).toHaveLength(r.steps)
    expect(lrs[0]).toBeCloseTo(0.01, 9)
    expect(lrs.at(-1)).toBeCloseTo(0.01 / r.steps, 9)
    for (let i = 1; i < lrs.length; i++) expect(lrs[i]).toBeLessThan(lrs[i - 1])
    const constant: number[] = []
    await trainWordTagger({ ...settings, lr: 0.01, outDir: join(tmp, 'constant-rates'), onProgress: (p) => p.kind === 'step' && constant.push(p.lr) })
    expect(new Set(constant)).toEqual(new Set([0.01]))
    await resumeMatchesWhole('linear', { lrSchedule: 'linear' })
  }, 120_000)

  it('counts the time spent before the stop against --minutes', async () => {
    const dir = join(tmp, 'timed')
    await trainWordTagger({ ...settings, outDir: dir, epochs: 1 })
    // As if the first run had used up its 30 seconds: the resumed one stops after one more epoch.
    const saved = loadOptimizerState(dir)!
    const { saveOptimizerState } = await import('@core/train/runner')
    saveOptimizerState(dir, saved.state, saved.point, { ...saved.metadata, elapsed_seconds: '30' })
    const rest = await trainWordTagger({ ...settings, outDir: dir, resume: true, maxMinutes: 0.5 })
    expect(rest.epochs.map((e) => e.epoch)).toEqual([2])
    expect(rest.cancelled).toBe(false)
    expect(rest.wallSeconds).toBeGreaterThan(30)
  }, 120_000)

  it('refuses to resume a folder without a saved run', async () => {
    await expect(trainWordTagger({ ...settings, outDir: join(tmp, 'nothing'), resume: true })).rejects.toThrow(/no optimizer\.safetensors, so there is no run to resume/)
  })
})
