// `distill --threads N` bounds the teacher's onnxruntime session too, not only the trainer's
// (issue 27: `--threads 1` ran the teacher on every core).
import { availableParallelism } from 'node:os'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { useBackend } from '@core/model/backend'
import { saveCheckpoint } from '@core/model/checkpoint'
import { writeCorpus } from '@core/corpus'
import { run } from '../../../src/cli/commands/distill'
import { capture } from '../cli/capture'
import { syntheticDocs, tinyModel, tokenizer } from './helpers'

let tmp: string
beforeAll(async () => {
  await useBackend('wasm')
  tmp = mkdtempSync(join(tmpdir(), 'fastbioner-distill-threads-'))
})
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

it('runs the onnxruntime teacher on --threads intra-op threads', async () => {
  const teacherDir = join(tmp, 'teacher')
  const t = tinyModel(2, 2)
  await saveCheckpoint(teacherDir, t, tokenizer.vocab as string[], { lowercase: true })
  t.dispose()
  const file = (name: string, n: number, seed: number) => {
    const p = join(tmp, name)
    writeFileSync(p, writeCorpus(syntheticDocs(n, seed, 3, name), 'conll').files[0].content)
    return p
  }
  // A count other than the default (every core), so that the default cannot pass for it.
  const threads = availableParallelism() === 1 ? 2 : 1
  const r = await capture(() =>
    run(['--teacher', teacherDir, '--layers', '1', '--train', file('train.conll', 6, 1), '--dev', file('dev.conll', 3, 2), '--out', join(tmp, 'student'), '--kd', 'fixed', '--epochs', '1', '--max-steps', '1', '--max-length', '32', '--teacher-engine', 'onnx', '--threads', String(threads)]),
  )
  expect(r.code, r.err).toBe(0)
  const line = r.err.split('\n').find((l) => l.startsWith(`teacher ${teacherDir}:`))
  expect(line, r.err).toBeDefined()
  expect(line).toContain(`, ${threads} intra-op thread${threads === 1 ? '' : 's'};`)
})
