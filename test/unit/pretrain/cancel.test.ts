// Ctrl-C in pretraining before its first checkpoint (issue 27, item 5): the steps done are saved
// and resume continues from them; stopped before the first step, the command says nothing was saved.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { initBackend } from '@core/model/backend'
import { pretrain } from '@core/pretrain/run'
import { loadOptimizerState } from '@core/train/runner'
import { run as pretrainCmd } from '../../../src/cli/commands/pretrain'
import { capture } from '../cli/capture'

const WORDS = ['the', 'patient', 'showed', 'hyperkalemia', 'after', 'treatment', 'and', 'renal', 'failure', 'was', 'seen', 'in', 'mice']
const text = Array.from({ length: 240 }, (_, i) => Array.from({ length: 8 }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(' ') + ' .').join('\n') + '\n'
const tiny = { preset: 'cpu-tiny' as const, vocabSize: 100, maxLength: 32, batchSize: 8, seed: 5 }

let dir: string
let textPath: string
beforeAll(async () => {
  await initBackend({ logger: () => {} })
  dir = mkdtempSync(join(tmpdir(), 'pretrain-cancel-'))
  textPath = join(dir, 'text.txt')
  writeFileSync(textPath, text)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('pretrain stopped before its first checkpoint', () => {
  it('saves the steps done, and resume continues from them on the uninterrupted curve', async () => {
    const wholeCurve: number[] = []
    const whole = await pretrain({ ...tiny, text: [textPath], outDir: join(dir, 'whole'), epochs: 1, onProgress: (p) => p.kind === 'step' && wholeCurve.push(p.loss) })
    const stopAt = Math.floor(whole.plannedSteps / 2)
    expect(stopAt).toBeGreaterThan(0)

    const out = join(dir, 'cut')
    const controller = new AbortController()
    const losses: number[] = []
    // No save within the epoch on its own (the default is every 10 minutes).
    const first = await pretrain({
      ...tiny,
      text: [textPath],
      outDir: out,
      epochs: 1,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.kind !== 'step') return
        losses.push(p.loss)
        if (p.step === stopAt) controller.abort()
      },
    })
    expect(first).toMatchObject({ cancelled: true, steps: stopAt, savedAtStep: stopAt })
    expect(loadOptimizerState(out)!.point).toMatchObject({ epoch: 0, step: stopAt, batchesIntoEpoch: stopAt })

    const rest: number[] = []
    const second = await pretrain({ text: [], outDir: out, resume: true, onProgress: (p) => p.kind === 'step' && rest.push(p.loss) })
    expect(second).toMatchObject({ resumedAtStep: stopAt, steps: whole.plannedSteps, cancelled: false, savedAtStep: whole.plannedSteps })
    const curve = [...losses, ...rest]
    expect(curve).toHaveLength(wholeCurve.length)
    for (let i = 0; i < curve.length; i++) expect(curve[i]).toBeCloseTo(wholeCurve[i]!, 4)
  })

  it('stopped before the first step: nothing saved, and the command says so (exit 130)', async () => {
    const out = join(dir, 'early')
    const before = process.listenerCount('SIGINT')
    // Press Ctrl-C as soon as the command listens for it (before any training step).
    const press = setInterval(() => {
      if (process.listenerCount('SIGINT') > before) {
        clearInterval(press)
        ;(process.listeners('SIGINT').at(-1) as () => void)()
      }
    }, 1)
    const r = await capture(() => pretrainCmd(['--text', textPath, '--out', out, '--preset', 'cpu-tiny', '--vocab-size', '100', '--max-length', '32', '--batch-size', '8']))
    clearInterval(press)
    expect(r.code).toBe(130)
    expect(r.err).not.toContain('the last checkpoint is kept')
    expect(r.err).toContain(`stopped before the first training step: nothing was saved (${out} holds no checkpoint)`)
    expect(JSON.parse(r.out)).toMatchObject({ steps: 0, cancelled: true, saved_at_step: null })
    expect(existsSync(join(out, 'optimizer.safetensors'))).toBe(false)
  })
})
