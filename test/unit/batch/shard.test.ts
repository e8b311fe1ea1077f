import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { checkComplete, fileDigest, writeRecord, type CompletionRecord } from '@core/batch/manifest'
import { outputNameFor, planOutputs } from '@core/batch/outputs'
import { filesOfShard, resolveShard } from '@core/batch/shard'

describe('resolveShard', () => {
  it('reads --shard I/N as 1-based', () => {
    expect(resolveShard({ shard: '3/16' }, {})).toMatchObject({ index: 2, count: 16 })
    expect(() => resolveShard({ shard: '0/4' }, {})).toThrow(/between 1 and N/)
    expect(() => resolveShard({ shard: '5/4' }, {})).toThrow(/between 1 and N/)
    expect(() => resolveShard({ shard: '2-4' }, {})).toThrow(/I\/N/)
  })

  it('takes a Slurm array task, whether the array starts at 0 or 1, and --shard beats the environment', () => {
    expect(resolveShard({}, { SLURM_ARRAY_TASK_ID: '0', SLURM_ARRAY_TASK_MIN: '0', SLURM_ARRAY_TASK_COUNT: '4' })).toMatchObject({ index: 0, count: 4 })
    expect(resolveShard({}, { SLURM_ARRAY_TASK_ID: '4', SLURM_ARRAY_TASK_MIN: '1', SLURM_ARRAY_TASK_COUNT: '4' })).toMatchObject({ index: 3, count: 4 })
    expect(() => resolveShard({}, { SLURM_ARRAY_TASK_ID: '2' })).toThrow(/SLURM_ARRAY_TASK_COUNT/)
    expect(resolveShard({ shard: '1/2' }, { SLURM_ARRAY_TASK_ID: '1', SLURM_ARRAY_TASK_COUNT: '4' })).toMatchObject({ index: 0, count: 2 })
  })

  it('takes a Kubernetes completion index with --shard-count', () => {
    expect(resolveShard({ shardCount: 8 }, { JOB_COMPLETION_INDEX: '7' })).toMatchObject({ index: 7, count: 8 })
    expect(() => resolveShard({}, { JOB_COMPLETION_INDEX: '1' })).toThrow(/--shard-count/)
    expect(() => resolveShard({ shardCount: 2 }, { JOB_COMPLETION_INDEX: '2' })).toThrow(/outside/)
  })

  it('is one shard of everything without any of them', () => {
    expect(resolveShard({}, {})).toMatchObject({ index: 0, count: 1 })
    expect(() => resolveShard({ shardCount: 3 }, {})).toThrow(/shard index/)
  })
})

describe('filesOfShard', () => {
  const files = Array.from({ length: 23 }, (_, i) => `/data/pubmed25n${String(i + 1).padStart(4, '0')}.xml.gz`)

  it('gives every file to exactly one shard, balanced to within one file, whatever the input order', () => {
    const shuffled = [...files].reverse()
    const shards = [0, 1, 2, 3, 4].map((index) => filesOfShard(shuffled, { index, count: 5 }))
    expect(shards.flat().sort()).toEqual([...files].sort())
    const sizes = shards.map((s) => s.length)
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1)
    expect(filesOfShard(files, { index: 2, count: 5 })).toEqual(shards[2])
  })
})

describe('outputs', () => {
  it('keeps the base name, swaps the extension and keeps .gz', () => {
    expect(outputNameFor('/x/pubmed25n0001.xml.gz', 'pubtator')).toBe('pubmed25n0001.pubtator.gz')
    expect(outputNameFor('/x/a.bioc.json', 'conll')).toBe('a.conll')
    expect(outputNameFor('b.txt', 'bioc-json')).toBe('b.bioc.json')
    expect(() => outputNameFor('b.txt', 'brat')).toThrow(/one file per input/)
  })

  it('refuses two inputs that would write the same output', () => {
    expect(() => planOutputs(['/a/x.xml', '/b/x.xml'], '/out', 'pubtator')).toThrow(/\/b\/x\.xml and \/a\/x\.xml/)
    expect(planOutputs(['/a/x.xml', '/a/y.xml.gz'], '/out', 'pubtator').get('/a/y.xml.gz')).toBe('/out/y.pubtator.gz')
  })

  it('compares paths case-insensitively: one file on macOS and Windows (issue 31 F10)', () => {
    expect(() => planOutputs(['/a/A.xml', '/b/a.xml'], '/out', 'pubtator')).toThrow('/b/a.xml and /a/A.xml would both be written to /out/a.pubtator')
    expect(() => planOutputs(['/d/abc.PUBTATOR'], '/d', 'pubtator')).toThrow('/d/abc.PUBTATOR: the output would overwrite the input')
    expect(() => planOutputs(['/in/x.xml', '/out/X.pubtator'], '/out', 'pubtator')).toThrow('/in/x.xml would be written to /out/x.pubtator, overwriting the input /out/X.pubtator')
    // Names that differ beyond case stay apart, and an output keeps the input's spelling.
    expect(planOutputs(['/a/Ab.xml', '/a/ab2.xml'], '/out', 'pubtator').get('/a/Ab.xml')).toBe('/out/Ab.pubtator')
  })
})

describe('completion records', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fastbioner-batch-'))
  const input = join(dir, 'in.pubtator')
  const output = join(dir, 'out.pubtator')

  async function record(): Promise<CompletionRecord> {
    const i = await fileDigest(input)
    const o = await fileDigest(output)
    const now = new Date().toISOString()
    return { version: 1, input, inputSha256: i.sha256, inputBytes: i.bytes, output, outputSha256: o.sha256, outputBytes: o.bytes, model: 'm1', format: 'pubtator', documents: 1, mentions: 0, skipped: 0, problems: [], startedAt: now, finishedAt: now, seconds: 0 }
  }

  it('counts an output as done only while input, model and output all still match', async () => {
    writeFileSync(input, '1|t|x\n')
    writeFileSync(output, '1|t|x\n')
    expect(await checkComplete(input, output, 'm1')).toMatchObject({ done: false, reason: 'no completion record' })
    writeRecord(await record())
    expect((await checkComplete(input, output, 'm1')).done).toBe(true)
    expect(await checkComplete(input, output, 'm2')).toMatchObject({ done: false, reason: 'made by another model' })
    writeFileSync(output, '1|t|x\ntruncat')
    expect(await checkComplete(input, output, 'm1')).toMatchObject({ done: false, reason: 'output changed or damaged' })
    writeFileSync(output, '1|t|x\n')
    writeFileSync(input, '1|t|y\n')
    expect(await checkComplete(input, output, 'm1')).toMatchObject({ done: false, reason: 'input changed' })
  })
})
