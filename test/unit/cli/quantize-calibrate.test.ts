// quantize --calibrate tests something only where gold and model share entity types (issue 27,
// item 12): no shared type is refused before any work, --map-types renames the gold's types.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run as quantizeCmd } from '../../../src/cli/commands/quantize'
import { capture } from './capture'
import { saveTinyModel } from './tiny-model'

const CHEMICAL = '7|t|Zorbate in mice.\n7|a|Patients given zorbate were treated.\n7\t0\t7\tZorbate\tChemical\n\n'

let dir: string
let model: string
let calib: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quantize-calibrate-'))
  model = await saveTinyModel(dir, 'tagger') // entity type Disease
  calib = join(dir, 'chem.pubtator')
  writeFileSync(calib, CHEMICAL)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('quantize --calibrate', () => {
  it('refuses gold whose types the model does not have, naming the file and both type sets, writing nothing', async () => {
    const out = join(dir, 'int8-refused')
    const r = await capture(() => quantizeCmd(['--model', model, '--out', out, '--calibrate', calib, '--max-f1-drop', '1']))
    expect(r.code).toBe(1)
    expect(r.err).toContain(`${calib}: its entity types (Chemical) and the model's (Disease) have none in common, so calibration would test nothing; rename types with --map-types`)
    expect(existsSync(out)).toBe(false)
  })

  it('takes --map-types for the calibration corpus', async () => {
    const out = join(dir, 'int8-mapped')
    const r = await capture(() => quantizeCmd(['--model', model, '--out', out, '--calibrate', calib, '--map-types', 'Chemical=Disease', '-q']))
    expect(r.code).toBe(0)
    expect(JSON.parse(r.out).calibration).toMatchObject({ file: calib, documents: 1 })
    expect(JSON.parse(readFileSync(join(out, 'fastbioner.json'), 'utf8'))).toBeTruthy()
  })

  it('--map-types without --calibrate is a usage error', async () => {
    const r = await capture(() => quantizeCmd(['--model', model, '--out', join(dir, 'x'), '--map-types', 'Chemical=Disease']))
    expect(r.code).toBe(2)
    expect(r.err).toContain('--map-types needs --calibrate')
  })
})
