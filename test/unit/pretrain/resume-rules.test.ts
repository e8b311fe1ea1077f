// pretrain --resume continues the run as it was started (issue 27, items 8 and 19): a finished run
// is not "resumed" silently with nothing trained, a longer run is refused with what to do, and the
// CLI refuses every option that would change the run, naming it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { initBackend } from '@core/model/backend'
import { pretrain } from '@core/pretrain/run'
import { run as pretrainCmd } from '../../../src/cli/commands/pretrain'
import { capture } from '../cli/capture'

const WORDS = ['the', 'patient', 'showed', 'hyperkalemia', 'after', 'treatment', 'and', 'renal', 'failure', 'was', 'seen', 'in', 'mice']
const text = Array.from({ length: 80 }, (_, i) => Array.from({ length: 8 }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(' ') + ' .').join('\n') + '\n'
const tiny = { preset: 'cpu-tiny' as const, vocabSize: 100, maxLength: 32, batchSize: 8, seed: 5 }

let dir: string
let textPath: string
let finished: string
beforeAll(async () => {
  await initBackend({ logger: () => {} })
  dir = mkdtempSync(join(tmpdir(), 'pretrain-resume-'))
  textPath = join(dir, 'text.txt')
  writeFileSync(textPath, text)
  finished = join(dir, 'finished')
  const r = await pretrain({ ...tiny, text: [textPath], outDir: finished, epochs: 1, maxSteps: 3 })
  expect(r).toMatchObject({ steps: 3, cancelled: false })
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('pretrain --resume', () => {
  it('of a finished run says it finished and how to train further, instead of training nothing', async () => {
    await expect(pretrain({ text: [], outDir: finished, resume: true })).rejects.toThrow(`${finished}: the run finished (step 3 of 3); there is nothing to resume. To train further, start a new run from it with --init ${finished}`)
    // The same settings given again change nothing: still finished.
    await expect(pretrain({ text: [], outDir: finished, resume: true, maxSteps: 3 })).rejects.toThrow('the run finished (step 3 of 3)')
  })

  it('refuses other --max-steps or --epochs than the run was started with (another schedule, not a continuation)', async () => {
    await expect(pretrain({ text: [], outDir: finished, resume: true, maxSteps: 20 })).rejects.toThrow(`${finished}: resume continues the run as it was started (max steps 3); to train further, start a new run from it with --init ${finished}`)
    await expect(pretrain({ text: [], outDir: finished, resume: true, epochs: 4 })).rejects.toThrow('resume continues the run as it was started (epochs 1)')
  })

  it('CLI: every option that shapes the run is a usage error naming it; --threads may differ', async () => {
    const r = await capture(() => pretrainCmd(['--resume', '--out', finished, '--max-steps', '20', '--text', textPath, '-q']))
    expect(r.code).toBe(2)
    expect(r.err).toContain('--resume continues the run in --out as it was started, with its own inputs and settings: give no --text, --max-steps')
    const e = await capture(() => pretrainCmd(['--resume', '--out', finished, '--epochs', '2', '--seed', '1', '-q']))
    expect(e.code).toBe(2)
    expect(e.err).toContain('give no --epochs, --seed')
    const t = await capture(() => pretrainCmd(['--resume', '--out', finished, '--threads', '1', '-q']))
    expect(t.code).toBe(1)
    expect(t.err).toContain('the run finished (step 3 of 3)')
  })
})
