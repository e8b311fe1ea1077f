// Tagging replaces a file's annotations with the model's, so one bad annotation in the input costs
// a warning naming it, not the whole file (issue 27, Low); reading it as gold still fails.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readCorpusFile } from '@core/corpus'
import { readRecord } from '@core/batch/manifest'
import { run as tagCmd } from '../../../src/cli/commands/tag'
import { capture } from './capture'
import { saveTinyModel } from './tiny-model'

// The annotation's offset lies past the passage's text.
const BIOC = [
  '{"source": "", "date": "", "key": "", "infons": {}, "documents": [',
  ' {"id": "1", "infons": {}, "passages": [',
  '  {"infons": {"type": "title"}, "offset": 0, "text": "Zorvitis in mice.", "annotations": [',
  '   {"id": "a", "infons": {"type": "Disease"}, "text": "Zorvitis", "locations": [{"offset": 0, "length": 8}]},',
  '   {"id": "b", "infons": {"type": "Disease"}, "text": "Zorvitis", "locations": [{"offset": 40, "length": 8}]}',
  '  ], "relations": []}], "relations": []}]}',
].join('\n') + '\n'

let dir: string
let model: string
let input: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tag-bad-gold-'))
  model = await saveTinyModel(dir, 'tagger')
  mkdirSync(join(dir, 'in'))
  input = join(dir, 'in', 'doc.bioc.json')
  writeFileSync(input, BIOC)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('an input with a bad gold annotation', () => {
  it('is still a reading error as gold', async () => {
    await expect(readCorpusFile(input)).rejects.toThrow(/doc\.bioc\.json:\d+: document 1: mention offsets 40-48 lie outside the document text/)
  })

  it('single-file tag tags it, warning with the file and line', async () => {
    const out = join(dir, 'out.bioc.json')
    const r = await capture(() => tagCmd(['--model', model, '--in', input, '--out', out, '--threads', '1']))
    expect(r.code).toBe(0)
    expect(r.err).toMatch(/warning: .*doc\.bioc\.json:\d+: document 1: mention offsets 40-48 lie outside the document text.*the mention is left out/)
    expect(JSON.parse(readFileSync(out, 'utf8')).documents[0].passages[0].text).toBe('Zorvitis in mice.')
  })

  it('batch mode tags it and keeps the warning in the completion record', async () => {
    const out = join(dir, 'batch')
    const r = await capture(() => tagCmd(['--model', model, '--in', join(dir, 'in'), '--out-dir', out, '--threads', '1', '-q']))
    expect(r.code).toBe(0)
    expect(existsSync(join(out, 'doc.pubtator'))).toBe(true)
    expect(readRecord(join(out, 'doc.pubtator'))!.warnings!.join('\n')).toMatch(/doc\.bioc\.json:\d+: document 1: mention offsets 40-48 lie outside the document text/)
  })
})
