import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as tf from '@tensorflow/tfjs-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useBackend } from '@core/model/backend'
import { BertTokenClassifier, makeBertConfig } from '@core/model/bert'
import { loadCheckpoint } from '@core/model/checkpoint'
import { buildLabelMap } from '@core/nlp/bio'
import { WordPieceTokenizer } from '@core/nlp/tokenizer'
import { evaluate } from '@core/eval/evaluate'
import { taggerForModel } from '@core/tag/open'
import { meanOfSnapshots, train, type TrainProgress } from '@core/train/loop'
import { syntheticDocs, syntheticVocab } from './synthetic'

const vocab = syntheticVocab()
const tokenizer = new WordPieceTokenizer(vocab, { lowercase: true })
const labels = buildLabelMap(['Disease']).labels
const trainDocs = syntheticDocs(48, 1, 4, 'tr')
const devDocs = syntheticDocs(16, 2, 4, 'dv')

function tinyModel(seed = 7): BertTokenClassifier {
  const config = makeBertConfig({
    vocabSize: vocab.length, hiddenSize: 32, numHiddenLayers: 1, numAttentionHeads: 2, intermediateSize: 64,
    maxPositionEmbeddings: 64,
  })
  return BertTokenClassifier.random(config, seed, { default: labels })
}

const fast = { batchSize: 16, lr: 5e-3, warmupRatio: 0.1, weightDecay: 0.01, maxLength: 32, seed: 3 }
let tmp: string

describe('training loop', () => {
  beforeAll(async () => {
    // wasm: several times faster than the cpu backend here and just as deterministic.
    await useBackend('wasm')
    tmp = mkdtempSync(join(tmpdir(), 'fastbioner-train-'))
  })
  afterAll(() => rmSync(tmp, { recursive: true, force: true }))

  it('measurably learns a synthetic entity class (devel F1 ~0 → > 0.9) and keeps the best checkpoint', async () => {
    const model = tinyModel()
    const before = (await evaluate(model, tokenizer, devDocs, { maxLength: 32 })).overall.f1
    const events: TrainProgress[] = []
    const out = join(tmp, 'best')
    const res = await train({ model, tokenizer, train: trainDocs, dev: devDocs, outDir: out, epochs: 4, ...fast, onProgress: (e) => events.push(e) })
    expect(before).toBeLessThan(0.2)
    expect(res.bestDevF1!).toBeGreaterThan(0.9)
    expect(res.checkpointDir).toBe(out)
    expect(res.trainer).toMatch(/^onnxruntime-/)
    expect(res.losses.at(-1)!).toBeLessThan(res.losses[0] / 4)
    const steps = events.filter((e) => e.kind === 'step')
    expect(steps.length).toBe(res.steps)
    expect(steps.at(-1)!.step).toBe(steps.at(-1)!.totalSteps)
    expect(steps.every((e) => e.tokensPerSecond > 0 && e.etaSeconds >= 0)).toBe(true)
    expect(events.filter((e) => e.kind === 'eval').map((e) => e.devF1)).toEqual(res.epochs.map((e) => e.dev!.f1))

    // The saved checkpoint is the best epoch's model: reloading reproduces its devel F1.
    const loaded = await loadCheckpoint(out)
    const meta = loaded.metadata as { training: { epoch: number; maxLength: number; trainer: string; tokensPerSecond: number } }
    expect(meta.training.epoch).toBe(res.bestEpoch)
    expect(meta.training.trainer).toBe(res.trainer)
    expect(meta.training.tokensPerSecond).toBeGreaterThan(0)
    const f1 = (await evaluate(loaded.model, tokenizer, devDocs, { maxLength: meta.training.maxLength })).overall.f1
    expect(f1).toBeCloseTo(res.bestDevF1!, 6)

    const mentions = (await taggerForModel(loaded.model, tokenizer, { maxLength: 32 }).tag(devDocs.slice(0, 2))).map((t) => t.mentions)
    expect(mentions[0].length).toBeGreaterThan(0)
    for (const m of mentions[0]) {
      expect(m.text).toBe(devDocs[0].text.slice(m.start, m.end))
      expect(m.confidence).toBeGreaterThan(0)
      expect(m.confidence).toBeLessThanOrEqual(1)
    }
    model.dispose()
    loaded.model.dispose()
  })

  it('replays identical losses for the same seed and differs for another', async () => {
    const run = async (seed: number) => {
      const model = tinyModel()
      const r = await train({ model, tokenizer, train: trainDocs.slice(0, 16), ...fast, seed, epochs: 1 })
      model.dispose()
      return r.losses
    }
    const a = await run(11)
    const b = await run(11)
    const c = await run(12)
    expect(a.length).toBeGreaterThan(2)
    expect(b).toEqual(a)
    expect(c).not.toEqual(a)
  })

  it('does not grow the number of live tensors across steps', async () => {
    const model = tinyModel()
    const counts: number[] = []
    const before = tf.memory().numTensors
    await train({ model, tokenizer, train: trainDocs, ...fast, batchSize: 8, epochs: 1, maxSteps: 8, onProgress: (e) => e.kind === 'step' && counts.push(tf.memory().numTensors) })
    expect(counts.length).toBe(8)
    expect(new Set(counts).size).toBe(1) // optimizer moments exist from step 1; nothing else stays
    expect(tf.memory().numTensors).toBe(before) // moments are freed at the end
    await taggerForModel(model, tokenizer, { maxLength: 32 }).tag(devDocs, { batchSize: 5 })
    expect(tf.memory().numTensors).toBe(before)
    model.dispose()
  })

  it('stops cleanly on abort between steps and leaves the best checkpoint intact', async () => {
    const out = join(tmp, 'cancel')
    const model = tinyModel()
    await train({ model, tokenizer, train: trainDocs.slice(0, 16), dev: devDocs.slice(0, 4), outDir: out, ...fast, epochs: 1 })
    const weights = readFileSync(join(out, 'model.safetensors'))
    const ac = new AbortController()
    let seen = 0
    const res = await train({
      model, tokenizer, train: trainDocs, dev: devDocs, outDir: out, ...fast, epochs: 3, signal: ac.signal,
      onProgress: (e) => {
        if (e.kind === 'step' && ++seen === 3) ac.abort()
      },
    })
    expect(res.cancelled).toBe(true)
    expect(res.steps).toBe(3)
    expect(res.epochs.length).toBe(0)
    expect(existsSync(join(out, 'config.json'))).toBe(true)
    expect(readFileSync(join(out, 'model.safetensors')).equals(weights)).toBe(true)
    model.dispose()
  })

  it('early-stops after `patience` evaluations without improvement', async () => {
    const model = tinyModel()
    // lr so small that devel F1 cannot move: every evaluation after the first is "no better".
    const res = await train({ model, tokenizer, train: trainDocs.slice(0, 8), dev: devDocs.slice(0, 4), ...fast, lr: 1e-9, epochs: 5, patience: 1 })
    expect(res.stoppedEarly).toBe(true)
    expect(res.epochs.length).toBe(2)
    model.dispose()
  })

  it('checkpoint averaging scores the mean of the last epochs and saves it only when devel prefers it', async () => {
    const model = tinyModel()
    const out = join(tmp, 'avg')
    const res = await train({ model, tokenizer, train: trainDocs, dev: devDocs, ...fast, epochs: 4, averageLast: 3, outDir: out })
    expect(res.averaged!.epochs).toEqual([2, 3, 4])
    const saved = JSON.parse(readFileSync(join(out, 'fastbioner.json'), 'utf8')).training
    const folder = await loadCheckpoint(out)
    const scored = await evaluate(folder.model, tokenizer, devDocs, { maxLength: 32 })
    folder.model.dispose()
    if (res.averaged!.kept) {
      expect(res.averaged!.dev.f1).toBeGreaterThan(Math.max(...res.epochs.map((e) => e.dev!.f1)))
      expect(saved.averagedEpochs).toEqual([2, 3, 4])
      expect(res.bestDevF1).toBe(res.averaged!.dev.f1)
    } else {
      expect(saved.averagedEpochs).toBeUndefined()
      expect(res.bestDevF1).toBe(Math.max(...res.epochs.map((e) => e.dev!.f1)))
    }
    // The folder holds what the result says is best.
    expect(scored.overall.f1).toBeCloseTo(res.bestDevF1!, 6)
    // The model in memory holds the average when it was kept, else the last epoch's weights: those
    // of the same run without averaging (same seed, same steps).
    const plain = tinyModel()
    await train({ model: plain, tokenizer, train: trainDocs, dev: devDocs, ...fast, epochs: 4 })
    const inMemory = await evaluate(model, tokenizer, devDocs, { maxLength: 32 })
    if (res.averaged!.kept) expect(inMemory.overall.f1).toBeCloseTo(res.averaged!.dev.f1, 6)
    else for (const [name, v] of model.variables()) expect(v.dataSync(), name).toEqual(plain.variables().get(name)!.dataSync())
    plain.dispose()
    await expect(train({ model, tokenizer, train: trainDocs, ...fast, epochs: 2, averageLast: 2 })).rejects.toThrow(/devel/)
    model.dispose()
  })

  it('meanOfSnapshots is the element-wise mean; a missing parameter or another size is refused', () => {
    const snap = (k: number) => new Map([['w', Float32Array.of(k, 2 * k, 3 * k)]])
    expect([...meanOfSnapshots([snap(1), snap(2), snap(6)], 'w', 3)]).toEqual([3, 6, 9])
    expect(() => meanOfSnapshots([snap(1), new Map()], 'w', 3)).toThrow(/missing from a snapshot/)
    expect(() => meanOfSnapshots([snap(1)], 'w', 4)).toThrow(/has 3 values, expected 4/)
  })
})
