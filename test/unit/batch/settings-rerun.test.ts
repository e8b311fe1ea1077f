// Settings that cannot change an output (issue 27, Low: "changing --batch-size makes a batch rerun
// redo every file though outputs are identical"): --batch-size and --threads leave finished
// outputs complete; a setting that changes outputs (--min-confidence) redoes them.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { writePubtator } from '@core/corpus'
import { run as tagCmd } from '../../../src/cli/commands/tag'
import { capture } from '../cli/capture'
import { saveTinyModel } from '../cli/tiny-model'
import { syntheticDocs } from '../train/synthetic'

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'batch-settings-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

it('a rerun with another --batch-size or --threads skips every finished output', async () => {
  const model = await saveTinyModel(dir)
  const inDir = join(dir, 'in')
  mkdirSync(inDir)
  writeFileSync(join(inDir, 'a.pubtator'), writePubtator(syntheticDocs(5, 1, 3, 'a-')))
  writeFileSync(join(inDir, 'b.pubtator'), writePubtator(syntheticDocs(5, 2, 3, 'b-')))
  const out = join(dir, 'out')
  const statuses = async (...extra: string[]) => {
    const r = await capture(() => tagCmd(['--model', model, '--in', inDir, '--out-dir', out, '-q', ...extra]))
    expect(r.code, r.err).toBe(0)
    return (JSON.parse(r.out).files as Array<{ status: string; reason?: string }>).map((f) => f.status + (f.reason ? `: ${f.reason}` : ''))
  }
  expect(await statuses('--batch-size', '2', '--threads', '1')).toEqual(['tagged', 'tagged'])
  const first = readFileSync(join(out, 'a.pubtator'), 'utf8')
  expect(await statuses('--batch-size', '64', '--threads', '1')).toEqual(['skipped', 'skipped'])
  // A second thread is only opened here, never run: everything is complete.
  expect(await statuses('--batch-size', '64', '--threads', '2')).toEqual(['skipped', 'skipped'])
  // The outputs are what a run at another batch size writes (so skipping them is right).
  const again = join(dir, 'again')
  const r = await capture(() => tagCmd(['--model', model, '--in', inDir, '--out-dir', again, '-q', '--batch-size', '64', '--threads', '1']))
  expect(r.code, r.err).toBe(0)
  expect(readFileSync(join(again, 'a.pubtator'), 'utf8')).toBe(first)
  // A setting that changes what is written still redoes them.
  expect(await statuses('--threads', '1', '--min-confidence', '0.5')).toEqual(['tagged: redone: made by another model', 'tagged: redone: made by another model'])
})
