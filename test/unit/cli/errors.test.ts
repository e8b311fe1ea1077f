// How the CLI reports problems (issue 27, Low): a problem with a file named on the command line
// gets no 40-line usage text; file-system errors are said in words; a negative number reaches
// the value check instead of parseArgs' "argument is ambiguous".
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fsProblem, readCorpusFile } from '@core/corpus'
import { run as convertCmd } from '../../../src/cli/commands/convert'
import { run as pretrainCmd } from '../../../src/cli/commands/pretrain'
import { capture } from './capture'

let dir: string
let input: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cli-errors-'))
  input = join(dir, 'in.pubtator')
  writeFileSync(input, '7|t|Zorvitis in mice.\n7\t0\t8\tZorvitis\tDisease\n\n')
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('CLI error reports', () => {
  it('an output folder in the way: exit 2, the problem and a one-line pointer, not the usage text', async () => {
    const out = join(dir, 'brat-out')
    mkdirSync(out)
    writeFileSync(join(out, 'keep.txt'), 'mine')
    const r = await capture(() => convertCmd(['--in', input, '--out', out, '--to', 'brat']))
    expect(r.code).toBe(2)
    expect(r.err).toContain(`--out ${out}: the folder is not empty`)
    expect(r.err).not.toContain('usage: fastbioner convert')
    expect(r.err).toContain("('fastbioner convert --help' lists the options)")
    expect(r.err.split('\n').filter(Boolean)).toHaveLength(2)
  })

  it('a wrong option value still shows the usage text', async () => {
    const r = await capture(() => pretrainCmd(['--text', input, '--out', join(dir, 'p'), '--epochs', '0']))
    expect(r.code).toBe(2)
    expect(r.err).toContain('usage: fastbioner pretrain')
  })

  it('a negative number is checked as a value, not refused as "ambiguous"', async () => {
    const r = await capture(() => pretrainCmd(['--text', input, '--out', join(dir, 'p'), '--lr', '-1']))
    expect(r.code).toBe(2)
    expect(r.err).toContain("fastbioner pretrain: --lr must be a number in (0, 1), got '-1'")
    expect(r.err).not.toContain('ambiguous')
    const s = await capture(() => pretrainCmd(['--text', input, '--out', join(dir, 'p'), '--seed', '-3']))
    expect(s.err).toContain("--seed must be an integer >= 0, got '-3'")
  })

  it('file-system errors in words, with the code for searching', () => {
    expect(fsProblem(Object.assign(new Error('x'), { code: 'ENOENT' }))).toBe('no such file or folder (ENOENT)')
    expect(fsProblem(Object.assign(new Error('x'), { code: 'EEXIST' }))).toBe('already exists (EEXIST)')
    expect(fsProblem(new Error('plain'))).toBe('plain')
  })

  it('a corpus file that cannot be read says why in words', async () => {
    await expect(readCorpusFile(join(dir, 'missing.pubtator'))).rejects.toThrow(`${join(dir, 'missing.pubtator')}: cannot read the file: no such file or folder (ENOENT)`)
  })

})
