// distill --quantize: the int8 folder is checked with --out before training, not after it (issue 27, item 14).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run as distillCmd } from '../../../src/cli/commands/distill'
import { capture } from './capture'

let dir: string
// The training data does not exist: a command that got as far as reading it would fail otherwise.
const args = (out: string, ...more: string[]) => ['--teacher', join(dir, 'teacher'), '--layers', '1', '--train', join(dir, 'missing-train.pubtator'), '--out', out, '--quantize', ...more]
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'distill-outputs-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('distill --quantize-out', () => {
  it('equal to --out is a usage error before anything is read or written', async () => {
    const out = join(dir, 'student')
    const r = await capture(() => distillCmd(args(out, '--quantize-out', out + '/')))
    expect(r.code).toBe(2)
    expect(r.err).toContain(`--quantize-out ${out}/ is the --out folder; give each output its own`)
    expect(existsSync(out)).toBe(false)
  })

  it('inside --out is a usage error', async () => {
    const out = join(dir, 'student2')
    const r = await capture(() => distillCmd(args(out, '--quantize-out', join(out, 'int8'))))
    expect(r.code).toBe(2)
    expect(r.err).toContain('are one inside the other')
  })

  it('a non-empty folder (also the default <out>-int8) is refused before training, and kept', async () => {
    const out = join(dir, 'student3')
    mkdirSync(out + '-int8')
    writeFileSync(join(out + '-int8', 'notes.txt'), 'mine')
    const r = await capture(() => distillCmd(args(out)))
    expect(r.code).toBe(2)
    expect(r.err).toContain(`--quantize-out ${out}-int8: the folder is not empty (1 entry)`)
    expect(readdirSync(out + '-int8')).toEqual(['notes.txt'])
    expect(existsSync(out)).toBe(false)
  })
})
