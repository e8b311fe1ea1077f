// `fastbioner charlm`: a character LM trained on a small text, resumed, and the inputs it refuses.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { run as charlm } from '../../../src/cli/commands/charlm'
import { loadCharLm } from '@core/model/char-lm'
import { capture } from './capture'

const dir = mkdtempSync(join(tmpdir(), 'charlm-cli-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const text = join(dir, 'sentences.txt')
// A text whose next character is easy to learn: the LM's held-out bits per character must fall.
writeFileSync(text, Array.from({ length: 400 }, (_, i) => (i % 2 ? 'the cat sat on the mat .' : 'a dog ran to the log .')).join('\n') + '\n')
const small = ['--hidden', '16', '--char-dim', '8', '--batch', '4', '--bptt', '20', '--min-count', '5', '--threads', '1', '-q']

describe('fastbioner charlm', () => {
  it('trains both directions, saves a model that loads, and continues with --resume', async () => {
    const out = join(dir, 'lm')
    const first = await capture(() => charlm(['--text', text, '--out', out, '--minutes', '0.04', ...small]))
    expect(first.err).toBe('')
    expect(first.code).toBe(0)
    const r1 = JSON.parse(first.out) as { steps: number; heldOut: Array<{ bitsPerChar: number }> }
    expect(r1.steps).toBeGreaterThan(5)
    const lm = loadCharLm(out)
    expect(lm.chars).toContain('\n')
    expect(lm.chars).not.toContain('z') // seen fewer than 5 times: <unk>
    expect(lm.dims).toEqual({ charVocabSize: lm.chars.length, charDim: 8, hidden: 16 })
    const again = await capture(() => charlm(['--resume', '--out', out, '--minutes', '0.1', '--threads', '1', '-q']))
    expect(again.code).toBe(0)
    const r2 = JSON.parse(again.out) as { steps: number; heldOut: Array<{ bitsPerChar: number }> }
    expect(r2.steps).toBeGreaterThan(r1.steps)
    expect(r2.heldOut.length).toBeGreaterThan(r1.heldOut.length)
    // 10 characters: 3.3 bits each if uniform; learnt, far fewer.
    expect(r2.heldOut.at(-1)!.bitsPerChar).toBeLessThan(r1.heldOut[0].bitsPerChar)
    expect(r2.heldOut.at(-1)!.bitsPerChar).toBeLessThan(2)
  })

  it('refuses a folder in use, a resume without a run, a missing text and settings a resume cannot change', async () => {
    const used = join(dir, 'used')
    writeFileSync(join(dir, 'placeholder'), '')
    await capture(() => charlm(['--text', text, '--out', used, '--minutes', '0.01', ...small]))
    const busy = await capture(() => charlm(['--text', text, '--out', used, '--minutes', '0.01', ...small]))
    expect(busy.code).not.toBe(0)
    expect(busy.err).toMatch(/used|not empty|exists/)
    const none = await capture(() => charlm(['--resume', '--out', join(dir, 'nothing'), '--minutes', '1']))
    expect(none.code).toBe(1)
    expect(none.err).toMatch(/no optimizer state, so there is no character LM run to resume/)
    const missing = await capture(() => charlm(['--text', join(dir, 'absent.txt'), '--out', join(dir, 'x'), '--minutes', '1']))
    expect(missing.code).not.toBe(0)
    expect(missing.err).toContain('absent.txt')
    const changed = await capture(() => charlm(['--resume', '--out', used, '--minutes', '1', '--hidden', '32']))
    expect(changed.code).toBe(2)
    expect(changed.err).toMatch(/leave out --hidden/)
  })
})
