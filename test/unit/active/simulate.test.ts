// The simulated annotator end to end on an invented corpus (test/unit/train/synthetic): a tiny
// word tagger, a few rounds, one thread.
import { describe, expect, it } from 'vitest'
import { seedDocuments, simulate, trainSeedModel, type RoundRecord, type WordModel } from '@core/active/simulate'
import { selectBatch } from '@core/active/strategies'
import { wordTaggerFor } from '@core/tag/open'
import { syntheticDocs } from '../train/synthetic'

const pool = syntheticDocs(14, 11, 3, 'pool')
const dev = syntheticDocs(4, 22, 3, 'dev')
const TINY = { wordDim: 8, charDim: 4, charFilters: 6, lstmHidden: 8 }
const base = { pool, dev, seed: 5, seedDocs: 4, batch: 3, maxDocs: 11, seedEpochs: 2, retrainEpochs: 1, threads: 1, config: TINY }

function checkRounds(rounds: RoundRecord[]) {
  // 4 seed documents, then batches of 3 until 11: the last batch is cut to 1.
  expect(rounds.map((r) => r.reviewed)).toEqual([4, 7, 10, 11])
  expect(rounds.map((r) => r.picked.length)).toEqual([4, 3, 3, 1])
  const all = rounds.flatMap((r) => r.picked)
  expect(new Set(all).size).toBe(all.length)
  expect(rounds[0].picked).toEqual(seedDocuments(pool.length, 4, 5))
  const goldOf = (ps: number[]) => ps.reduce((a, p) => a + pool[p].mentions.length, 0)
  // Seed documents are annotated from nothing: every mention typed in.
  expect(rounds[0].edits).toMatchObject({ added: goldOf(rounds[0].picked), accepted: 0, rejected: 0 })
  let added = 0
  for (const r of rounds) {
    const e = r.edits
    // Each suggestion is accepted, rejected or paired with one gold mention; each gold mention
    // accepted, added or paired: so both sides have as many pairs.
    expect(r.suggested - e.rejected).toBe(goldOf(r.picked) - e.added)
    const pairedNotAccepted = r.suggested - e.rejected - e.accepted
    expect(e.retyped + e.rebounded).toBeGreaterThanOrEqual(pairedNotAccepted)
    added += e.added
    expect(r.totalEdits.added).toBe(added)
    expect(r.dev.f1).toBeGreaterThanOrEqual(0)
    expect(r.dev.f1).toBeLessThanOrEqual(1)
  }
}

describe('simulate', () => {
  it('reviews N new documents a round, in document order for "order", and picks by the current model for least confidence', async () => {
    let seedModel: WordModel | undefined
    const order = await simulate({ ...base, strategy: 'order', onSeedModel: (m) => (seedModel = m) })
    checkRounds(order)
    const seeds = new Set(order[0].picked)
    const rest = pool.map((_, i) => i).filter((i) => !seeds.has(i))
    expect(order.slice(1).flatMap((r) => r.picked)).toEqual(rest.slice(0, 7))
    expect(order.every((r, i) => i === 0 || r.steps > 0)).toBe(true)

    // The same seed model: round 0 is the same point, and round 1 takes the documents the seed
    // model is least sure of (the queue's score), not the next ones in order.
    const lc = await simulate({ ...base, strategy: 'least-confidence', seedModel })
    checkRounds(lc)
    expect(lc[0].dev).toEqual(order[0].dev)
    const tagger = wordTaggerFor(seedModel!, { maxLength: 256, sentenceLevel: true }, { threads: 1 })
    const tagged = await tagger.tag(rest.map((i) => pool[i]))
    await tagger.dispose()
    const expected = selectBatch('least-confidence', rest.map((position, k) => ({ position, uncertainty: tagged[k].uncertainties })), 3, { seed: 0 })
    expect(lc[1].picked).toEqual(expected)
    // Deterministic for these seeds; shows the check above is not the order strategy's answer.
    expect(lc[1].picked).not.toEqual(rest.slice(0, 3))
  }, 120_000)

  it('teaches a new type: edits and devel F1 count that type only, and the base model\'s own suggestions are kept, not rejected', async () => {
    // The "-oma" and "-itis" words become Gene and nothing else is annotated (as in a gene corpus); the base
    // model knows Disease only and tags every invented word as one.
    const geneOnly = (docs: typeof pool) =>
      docs.map((d) => ({ ...d, mentions: d.mentions.filter((m) => /(oma|itis)\b/i.test(m.text)).map((m) => ({ ...m, type: 'Gene' })) }))
    const genePool = geneOnly(pool)
    const geneDev = geneOnly(dev)
    const baseModel = await trainSeedModel(syntheticDocs(60, 31, 3, 'base'), { seed: 3, seedEpochs: 10, threads: 1, config: { wordDim: 16, charDim: 8, charFilters: 16, lstmHidden: 16 } })
    expect(Object.values(baseModel.heads)[0]).not.toContain('B-Gene')
    const seeds = seedDocuments(genePool.length, 4, 5)
    const tagger = wordTaggerFor(baseModel, { maxLength: 256, sentenceLevel: true }, { threads: 1 })
    const baseSays = (await tagger.tag(seeds.map((i) => genePool[i]))).flatMap((t) => t.mentions)
    await tagger.dispose()
    expect(baseSays.filter((m) => m.type === 'Disease').length).toBeGreaterThan(0)

    // 60 retraining epochs: at 40 this tiny model learnt Gene from its 11 documents for some dropout
    // draws and not others (seed 5 gave 0 F1 once the masks' stream changed in 57d5a51, seeds 6-9
    // 0.15-0.8); at 60, seeds 5 and 6 both end at 0.667, so the check below is about learning.
    const rounds = await simulate({ ...base, pool: genePool, dev: geneDev, strategy: 'order', retrainEpochs: 60, newType: { type: 'Gene', baseModel } })
    const genes = (ps: number[]) => ps.reduce((a, p) => a + genePool[p].mentions.length, 0)
    expect(genes(rounds[0].picked)).toBeGreaterThan(0)
    // The base suggests no Gene: every Gene mention of the seed documents is typed in, and its
    // Disease suggestions are neither counted nor rejected.
    expect(rounds[0].edits).toMatchObject({ added: genes(rounds[0].picked), accepted: 0, rejected: 0 })
    expect(rounds[0].suggested).toBe(0)
    expect(rounds[0].steps).toBeGreaterThan(0) // the base retrained, not a model from scratch
    for (const r of rounds) {
      expect(r.suggested - r.edits.rejected).toBe(genes(r.picked) - r.edits.added)
      expect(r.dev.f1).toBeGreaterThanOrEqual(0)
    }
    // Devel F1 is Gene's: the retrained model learns it from the reviewed documents.
    expect(rounds.at(-1)!.dev.f1).toBeGreaterThan(0)
  }, 120_000)
})
