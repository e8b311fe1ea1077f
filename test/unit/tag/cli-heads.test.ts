// `tag` and `eval --model` on a multi-task model (one head per corpus, no 'default' head): every
// head merged by default, or the one `--head` names (issue 11, item 3).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { readCorpusFile, writeCorpus } from '@core/corpus'
import { useBackend } from '@core/model/backend'
import { saveCheckpoint } from '@core/model/checkpoint'
import { buildLabelMap } from '@core/nlp/bio'
import { run as tagCmd } from '../../../src/cli/commands/tag'
import { run as evalCmd } from '../../../src/cli/commands/eval'
import { syntheticDocs, tinyModel, vocab } from '../distill/helpers'

let tmp: string
let modelDir: string
let input: string

async function capture(fn: () => Promise<number>): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => ((out += String(c)), true))
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => ((err += String(c)), true))
  try {
    return { code: await fn(), out, err }
  } finally {
    o.mockRestore()
    e.mockRestore()
  }
}

beforeAll(async () => {
  await useBackend('wasm')
  tmp = mkdtempSync(join(tmpdir(), 'fastbioner-heads-'))
  modelDir = join(tmp, 'mt')
  // Untrained heads: near-uniform logits, so each head tags plenty of (overlapping) mentions.
  const model = tinyModel(1, 5, 32, { ncbi: buildLabelMap(['Disease']).labels, chem: buildLabelMap(['Chemical']).labels })
  await saveCheckpoint(modelDir, model, [...vocab], { lowercase: true, metadata: { training: { maxLength: 32, sentenceLevel: true } } })
  model.dispose()
  input = join(tmp, 'in.pubtator')
  writeFileSync(input, writeCorpus(syntheticDocs(4, 9, 2, 'd'), 'pubtator').files[0].content)
})
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const spans = (docs: Array<{ mentions: Array<{ start: number; end: number; type: string }> }>) => docs.flatMap((d, i) => d.mentions.map((m) => `${i}:${m.start}-${m.end}:${m.type}`))
/** Whether two of spans()'s strings are in one document and overlap. */
const overlaps = (a: string, b: string) => {
  const [da, ra] = a.split(':')
  const [db, rb] = b.split(':')
  const [s1, e1] = ra.split('-').map(Number)
  const [s2, e2] = rb.split('-').map(Number)
  return da === db && s1 < e2 && s2 < e1
}

describe('multi-task models on the command line', () => {
  it('tag merges every head by default and --head picks one', async () => {
    const run = async (extra: string[], name: string) => {
      const out = join(tmp, name)
      const r = await capture(() => tagCmd(['--model', modelDir, '--in', input, '--out', out, '-q', ...extra]))
      expect(r.err).toBe('')
      expect(r.code).toBe(0)
      return spans((await readCorpusFile(out)).documents)
    }
    const merged = await run([], 'merged.pubtator')
    const ncbi = await run(['--head', 'ncbi'], 'ncbi.pubtator')
    const chem = await run(['--head', 'chem'], 'chem.pubtator')
    expect(ncbi.length).toBeGreaterThan(0)
    expect(chem.length).toBeGreaterThan(0)
    expect(ncbi.every((s) => s.endsWith(':Disease'))).toBe(true)
    expect(chem.every((s) => s.endsWith(':Chemical'))).toBe(true)
    // Merged: the two heads tag different types, which may overlap, so every mention of both
    // (the overlapping ones too: the untrained heads tag plenty of them).
    const overlapping = ncbi.filter((a) => chem.some((b) => overlaps(a, b)))
    expect(overlapping.length).toBeGreaterThan(0)
    expect([...merged].sort()).toEqual([...ncbi, ...chem].sort())

    const bad = await capture(() => tagCmd(['--model', modelDir, '--in', input, '--out', join(tmp, 'x.pubtator'), '--head', 'gene']))
    expect(bad.code).toBe(2)
    expect(bad.err).toContain("--head gene: ")
    expect(bad.err).toContain('has no such head (heads: ncbi, chem)')
  })

  it('eval --model scores all heads merged by default, or one with --head', async () => {
    const score = async (extra: string[]) => {
      const r = await capture(() => evalCmd(['--gold', input, '--model', modelDir, '-q', ...extra]))
      expect(r.code).toBe(0)
      return JSON.parse(r.out) as { overall: { tp: number; fp: number; fn: number }; types: Record<string, unknown> }
    }
    const merged = await score([])
    const chem = await score(['--head', 'chem'])
    const ncbi = await score(['--head', 'ncbi'])
    // The gold has only Disease mentions: chem's are all false positives.
    expect(chem.overall.tp).toBe(0)
    expect(Object.keys(merged.types).sort()).toEqual(['Chemical', 'Disease'])
    expect(Object.keys(ncbi.types)).toEqual(['Disease'])
    const goldMentions = ncbi.overall.tp + ncbi.overall.fn
    expect(merged.overall.tp + merged.overall.fn).toBe(goldMentions)
  })
})
