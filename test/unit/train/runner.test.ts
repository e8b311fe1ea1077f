// The training runner across engines: onnxruntime and tfjs agree step for step, engine choice,
// resume from the optimizer state saved beside the checkpoint.

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useBackend } from '@core/model/backend'
import { BertTokenClassifier, makeBertConfig } from '@core/model/bert'
import { loadCheckpoint } from '@core/model/checkpoint'
import { buildLabelMap } from '@core/nlp/bio'
import { WordPieceTokenizer } from '@core/nlp/tokenizer'
import { openTrainer } from '@core/train/engine'
import { train } from '@core/train/loop'
import { loadOptimizerState } from '@core/train/runner'
import { syntheticDocs, syntheticVocab } from './synthetic'

const vocab = syntheticVocab()
const tokenizer = new WordPieceTokenizer(vocab, { lowercase: true })
const labels = buildLabelMap(['Disease']).labels
const docs = syntheticDocs(40, 5, 3, 'tr')

function tinyModel(seed = 7): BertTokenClassifier {
  const config = makeBertConfig({
    vocabSize: vocab.length, hiddenSize: 32, numHiddenLayers: 2, numAttentionHeads: 2, intermediateSize: 64,
    maxPositionEmbeddings: 64,
  })
  return BertTokenClassifier.random(config, seed, { default: labels })
}

const fast = { batchSize: 8, lr: 3e-3, warmupRatio: 0.1, weightDecay: 0.01, maxLength: 32, seed: 3 }
let tmp: string

describe('training runner', () => {
  beforeAll(async () => {
    await useBackend('wasm')
    tmp = mkdtempSync(join(tmpdir(), 'fastbioner-runner-'))
  })
  afterAll(() => rmSync(tmp, { recursive: true, force: true }))

  it('20 optimizer steps: onnxruntime and tfjs losses agree to 1e-3 relative (dropout off)', async () => {
    const run = async (trainer: 'onnxruntime' | 'tfjs') => {
      const model = tinyModel()
      const r = await train({ model, tokenizer, train: docs, ...fast, epochs: 5, maxSteps: 20, trainer, dropout: false })
      model.dispose()
      return r
    }
    const ort = await run('onnxruntime')
    const tfjs = await run('tfjs')
    expect(ort.trainer).toMatch(/^onnxruntime-/)
    expect(tfjs.trainer).toMatch(/^tfjs-/)
    expect(ort.losses.length).toBe(20)
    // It trains, so the weights moved. Means over several steps: one batch's loss is noisy.
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
    expect(mean(ort.losses.slice(-5))).toBeLessThan(0.6 * mean(ort.losses.slice(0, 3)))
    for (let i = 0; i < 20; i++) expect(Math.abs(ort.losses[i] - tfjs.losses[i]) / Math.abs(tfjs.losses[i])).toBeLessThan(1e-3)
  })

  it('a step budget below epochs × steps per epoch: warm-up and decay are planned over the budget, and the partial last epoch is scored on devel', async () => {
    const model = tinyModel()
    const lrs: number[] = []
    // 120 sentences at batch 8: 15 steps per epoch, so 18 steps end 3 steps into epoch 2 of 5.
    const r = await train({
      model, tokenizer, train: docs, dev: syntheticDocs(6, 9, 3, 'dv'), ...fast, epochs: 5, maxSteps: 18,
      onProgress: (p) => p.kind === 'step' && lrs.push(p.lr),
    })
    model.dispose()
    expect(r.plannedSteps).toBe(18)
    expect(r.steps).toBe(18)
    expect(r.epochs.map((e) => e.steps)).toEqual([15, 3])
    expect(r.epochs[1].dev).toBeDefined()
    // Warm-up is ceil(0.1 · 18) = 2 steps; planned over 5 epochs (75 steps) it would be 8.
    expect(lrs.indexOf(Math.max(...lrs))).toBeLessThanOrEqual(2)
    expect(Math.max(...lrs)).toBeCloseTo(fast.lr, 6)
    // Decayed to (almost) zero at the budget's end; planned over 75 steps it would still be ~0.85 · peak.
    expect(lrs.at(-1)!).toBeLessThan(0.1 * fast.lr)
  })

  it('FASTBIONER_TRAINER forces an engine; a bad value is an error', async () => {
    const model = tinyModel()
    const optimizer = { lr: 1e-3 }
    const t = await openTrainer({ model, heads: ['default'], optimizer, env: { FASTBIONER_TRAINER: 'tfjs' } })
    expect(t.trainer).toMatch(/^tfjs-/)
    expect(t.reason).toContain('FASTBIONER_TRAINER')
    await t.dispose()
    const o = await openTrainer({ model, heads: ['default'], optimizer, env: {} })
    expect(o.trainer).toBe('onnxruntime-cpu')
    await o.dispose()
    await expect(openTrainer({ model, heads: ['default'], optimizer, env: { FASTBIONER_TRAINER: 'torch' } })).rejects.toThrow(/FASTBIONER_TRAINER=torch/)
    model.dispose()
  })

  it('resume continues the loss curve from the optimizer state saved beside the checkpoint', async () => {
    const opts = { tokenizer, train: docs, ...fast, epochs: 2 }
    const full = tinyModel()
    const a = await train({ model: full, ...opts, outDir: join(tmp, 'full') })
    full.dispose()
    const perEpoch = a.epochs[0].steps
    expect(a.losses.length).toBe(2 * perEpoch)

    // Stop at the end of epoch 1 (its checkpoint and optimizer state are written), then resume.
    const out = join(tmp, 'stopped')
    const ac = new AbortController()
    const first = tinyModel()
    const b = await train({ model: first, ...opts, outDir: out, signal: ac.signal, onProgress: (e) => e.kind === 'step' && e.step === perEpoch && ac.abort() })
    first.dispose()
    expect(b.cancelled).toBe(true)
    expect(loadOptimizerState(out)!.point).toMatchObject({ epoch: 1, step: perEpoch })

    const ck = await loadCheckpoint(out)
    const c = await train({ model: ck.model, ...opts, outDir: out, resume: true })
    ck.model.dispose()
    expect(c.resumedAfterEpoch).toBe(1)
    expect(c.steps).toBe(2 * perEpoch)
    expect(c.losses.length).toBe(perEpoch)
    for (let i = 0; i < perEpoch; i++) expect(c.losses[i]).toBeCloseTo(a.losses[perEpoch + i], 5)
    await expect(train({ model: tinyModel(), ...opts, outDir: join(tmp, 'none'), resume: true })).rejects.toThrow(/no optimizer\.safetensors/)
  })
})
