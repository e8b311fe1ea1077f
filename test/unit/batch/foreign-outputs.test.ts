// Batch tagging never overwrites a file in --out-dir that it did not make (issue 27, item 10), and
// a rerun after a kill at any step still makes progress: the completion record is written before
// the output is renamed into place, so a file at an output path without a record is never ours.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writePubtator } from '@core/corpus'
import { foreignOutputs, tagFiles } from '@core/batch/run'
import { readRecord } from '@core/batch/manifest'
import { TEMP_PREFIX } from '@core/fs/atomic'
import { useBackend } from '@core/model/backend'
import { openTagger, type CheckpointTagger } from '@core/tag/open'
import { run as tagCmd } from '../../../src/cli/commands/tag'
import { capture } from '../cli/capture'
import { saveTinyModel } from '../cli/tiny-model'
import { syntheticDocs } from '../train/synthetic'

let dir: string
let modelDir: string
let inDir: string
let tagger: CheckpointTagger
beforeAll(async () => {
  await useBackend('wasm')
  dir = mkdtempSync(join(tmpdir(), 'batch-foreign-'))
  modelDir = await saveTinyModel(dir, 'tagger')
  inDir = join(dir, 'in')
  mkdirSync(inDir)
  writeFileSync(join(inDir, 'a.pubtator'), writePubtator(syntheticDocs(3, 1, 3, 'a-')))
  writeFileSync(join(inDir, 'b.pubtator'), writePubtator(syntheticDocs(3, 2, 3, 'b-')))
  tagger = await openTagger(modelDir, { engine: 'onnx', export: 'memory', threads: 1 })
})
afterAll(async () => {
  await tagger?.dispose()
  rmSync(dir, { recursive: true, force: true })
})

const inputs = () => [join(inDir, 'a.pubtator'), join(inDir, 'b.pubtator')]
const USER = 'my own notes, not a batch output\n'

describe('a file in --out-dir that batch tagging did not make', () => {
  it('is kept, and its input fails naming the file and what to do; the other inputs are tagged', async () => {
    const out = join(dir, 'out-core')
    mkdirSync(out)
    writeFileSync(join(out, 'a.pubtator'), USER)
    expect(foreignOutputs(inputs(), out, 'pubtator', { index: 0, count: 1 })).toEqual([join(out, 'a.pubtator')])
    const r = await tagFiles({ inputs: inputs(), outDir: out, format: 'pubtator', shard: { index: 0, count: 1 }, tagger, model: 'm1' })
    expect(r.files.map((f) => f.status)).toEqual(['failed', 'tagged'])
    expect(r.files[0].reason).toBe(`${join(out, 'a.pubtator')} exists and was not written by batch tagging (no a.pubtator.done.json beside it); it is kept: move it away or choose another --out-dir`)
    expect(readFileSync(join(out, 'a.pubtator'), 'utf8')).toBe(USER)
    expect(readdirSync(out).sort()).toEqual(['a.pubtator', 'b.pubtator', 'b.pubtator.done.json'])
    // Another shard's output path is not this task's business.
    expect(foreignOutputs(inputs(), out, 'pubtator', { index: 1, count: 2 })).toEqual([])
  })

  it('makes `tag --out-dir` refuse before the model loads, writing nothing', async () => {
    const out = join(dir, 'out-cli')
    mkdirSync(out)
    writeFileSync(join(out, 'b.pubtator'), USER)
    const r = await capture(() => tagCmd(['--model', modelDir, '--in', inDir, '--out-dir', out, '--threads', '1']))
    expect(r.code).toBe(1)
    expect(r.err).toContain(`${join(out, 'b.pubtator')} exists and was not written by batch tagging`)
    expect(r.err).not.toMatch(/Usage|usage:/)
    expect(readdirSync(out)).toEqual(['b.pubtator'])
    expect(readFileSync(join(out, 'b.pubtator'), 'utf8')).toBe(USER)
  })
})

describe('a rerun after a kill at any step makes progress', () => {
  it('killed after the output was staged, before its record: the staged files are removed and the input tagged', async () => {
    const out = join(dir, 'killed-staged')
    mkdirSync(out)
    // The staged output and the writer's own temp file inside it (a nested prefix).
    writeFileSync(join(out, `${TEMP_PREFIX}99-abc-a.pubtator`), 'partial')
    writeFileSync(join(out, `${TEMP_PREFIX}99-def-${TEMP_PREFIX}99-abc-a.pubtator`), 'partial')
    const r = await tagFiles({ inputs: inputs().slice(0, 1), outDir: out, format: 'pubtator', shard: { index: 0, count: 1 }, tagger, model: 'm1' })
    expect(r.files.map((f) => f.status)).toEqual(['tagged'])
    expect(readdirSync(out).sort()).toEqual(['a.pubtator', 'a.pubtator.done.json'])
  })

  it('killed after the record, before the rename: the output is missing and is redone', async () => {
    const out = join(dir, 'killed-renaming')
    const first = await tagFiles({ inputs: inputs().slice(0, 1), outDir: out, format: 'pubtator', shard: { index: 0, count: 1 }, tagger, model: 'm1' })
    expect(first.files[0].status).toBe('tagged')
    const bytes = readFileSync(join(out, 'a.pubtator'))
    // The record is in place when the output is renamed: the final file matches it.
    expect(readRecord(join(out, 'a.pubtator'))!.outputBytes).toBe(bytes.length)
    rmSync(join(out, 'a.pubtator'))
    const again = await tagFiles({ inputs: inputs().slice(0, 1), outDir: out, format: 'pubtator', shard: { index: 0, count: 1 }, tagger, model: 'm1' })
    expect(again.files.map((f) => [f.status, f.reason])).toEqual([['tagged', 'redone: output missing']])
    expect(readFileSync(join(out, 'a.pubtator'))).toEqual(bytes)
  })
})
