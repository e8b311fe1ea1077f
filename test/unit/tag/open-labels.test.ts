// openTagger on a folder whose head labels are not entity labels (an untrusted config.json): a
// TaggingError naming the folder and the head, which the app's tag job reports as it is, instead
// of a bare Error from the label parser.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openTagger } from '@core/tag/open'
import { TaggingError } from '@core/tag/tagger'
import { saveTinyModel } from '../cli/tiny-model'

const tmp = mkdtempSync(join(tmpdir(), 'fastbioner-open-labels-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

describe('openTagger', () => {
  it('refuses head labels that are not BIO entity labels, naming the folder and the head', async () => {
    const dir = await saveTinyModel(tmp)
    const cfgPath = join(dir, 'config.json')
    const cfg = JSON.parse(readFileSync(cfgPath, 'utf8'))
    cfg.fastbioner_heads = { default: ['O', 'X-Disease', 'I-Disease'] }
    writeFileSync(cfgPath, JSON.stringify(cfg))
    const err = await openTagger(dir, { threads: 1, export: 'memory' }).then(
      () => null,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(TaggingError)
    expect((err as Error).message).toContain(dir)
    expect((err as Error).message).toMatch(/head 'default' has labels O, X-Disease, I-Disease/)
  })
})
