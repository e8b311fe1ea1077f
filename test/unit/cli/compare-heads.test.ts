// compare --head per model (issue 27, item 20): a multi-task model's head against a single-task
// model's default head; one name for all still refuses a model that lacks it, and a list of the
// wrong length is a usage error.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildLabelMap } from '@core/nlp/bio'
import { run as compareCmd } from '../../../src/cli/commands/compare'
import { capture } from './capture'
import { saveTinyModel } from './tiny-model'

const GOLD = resolve(__dirname, '../../fixtures/train/dev.pubtator')
let tmp: string
let multi: string
let single: string

describe('compare --head per model', () => {
  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'fastbioner-compare-heads-'))
    const labels = buildLabelMap(['Disease']).labels
    multi = await saveTinyModel(tmp, 'teacher', { ncbi: labels, bc5cdr: buildLabelMap(['Chemical', 'Disease']).labels })
    single = await saveTinyModel(tmp, 'student', { default: labels })
  })
  afterAll(() => rmSync(tmp, { recursive: true, force: true }))

  it("scores the teacher's ncbi head against the student's default head, and says which head each used", async () => {
    const out = join(tmp, 'report.json')
    const r = await capture(() => compareCmd(['--models', multi, single, '--gold', GOLD, '--head', 'ncbi,-', '--max-docs', '3', '--out', out, '-q']))
    expect(r.code, r.err).toBe(0)
    const report = JSON.parse(readFileSync(out, 'utf8')) as { models: Array<{ name: string; head: string | null }> }
    expect(report.models.map((m) => [m.name, m.head])).toEqual([
      ['teacher', 'ncbi'],
      ['student', null],
    ])
  })

  it('refuses one head name that a model lacks, and a list of the wrong length', async () => {
    const one = await capture(() => compareCmd(['--models', multi, single, '--gold', GOLD, '--head', 'ncbi', '-q']))
    expect(one.code).not.toBe(0)
    expect(one.err).toMatch(/ncbi/)
    const wrong = await capture(() => compareCmd(['--models', multi, single, '--gold', GOLD, '--head', 'ncbi,default,bc5cdr', '-q']))
    expect(wrong.code).toBe(2)
    expect(wrong.err).toMatch(/--head lists 3 heads for 2 models/)
  })
})
