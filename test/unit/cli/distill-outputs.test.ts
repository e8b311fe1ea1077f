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

describe('multi-task distill --quantize (issue 27, item 15)', () => {
  it('calibrates each head on its own task\'s devel documents instead of skipping calibration', async () => {
    const { saveTinyModel } = await import('./tiny-model')
    const { buildLabelMap } = await import('@core/nlp/bio')
    const teacher = await saveTinyModel(dir, 'mt-teacher', { dis: buildLabelMap(['Disease']).labels, chem: buildLabelMap(['Chemical']).labels })
    const doc = (id: number, type: string) => `${id}|t|Grey fever after zorbate in mice.\n${id}\t${type === 'Disease' ? '0\t10\tGrey fever' : '17\t24\tzorbate'}\t${type}\n\n`
    const file = (name: string, type: string) => {
      const p = join(dir, name)
      writeFileSync(p, [1, 2, 3, 4].map((i) => doc(i, type)).join(''))
      return p
    }
    const out = join(dir, 'mt-student')
    const r = await capture(() =>
      distillCmd([
        '--teacher', teacher, '--layers', '1', '--epochs', '1', '--batch-size', '4', '--threads', '1',
        '--task', `dis=${file('dis-train.pubtator', 'Disease')}:${file('dis-dev.pubtator', 'Disease')}`,
        '--task', `chem=${file('chem-train.pubtator', 'Chemical')}`,
        '--out', out, '--quantize',
      ]),
    )
    expect(r.code).toBe(0)
    const calibration = JSON.parse(r.out.trim().split('\n').pop()!).int8.calibration
    expect(Object.keys(calibration.tasks)).toEqual(['dis'])
    expect(calibration.tasks.dis).toMatchObject({ file: join(dir, 'dis-dev.pubtator'), documents: 4 })
    expect(calibration.uncalibrated).toEqual(['chem'])
    expect(r.err).toContain("warning: no devel documents for task(s) chem: the int8 student's heads for them are not checked")
  }, 120_000)
})

describe('multi-task distill --map-types (issue 27, Low)', () => {
  it('warns once, about sources no corpus holds, not once per corpus file that lacks one', async () => {
    const file = (name: string, type: string) => {
      const p = join(dir, name)
      writeFileSync(p, `1|t|Grey fever after zorbate.\n1\t0\t10\tGrey fever\t${type}\n\n`)
      return p
    }
    const dis = file('map-dis.pubtator', 'SpecificDisease')
    const chem = file('map-chem.pubtator', 'Drug')
    // The teacher does not exist: the run stops after reading the corpora, which is all this needs.
    const r = await capture(() =>
      distillCmd(['--teacher', join(dir, 'no-teacher'), '--layers', '1', '--task', `dis=${dis}`, '--task', `chem=${chem}`, '--out', join(dir, 'map-out'), '--map-types', 'SpecificDisease=Disease;Drug=Chemical;GENE=Gene']),
    )
    const warnings = r.err.split('\n').filter((l) => l.includes('--map-types'))
    expect(warnings).toEqual([`warning: --map-types source type(s) GENE occur in none of ${dis}, ${chem}`])
  })
})
