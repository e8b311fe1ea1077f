// `fastbioner distill` end to end on a tiny teacher checkpoint and CoNLL files.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { useBackend } from '@core/model/backend'
import { loadCheckpoint, saveCheckpoint } from '@core/model/checkpoint'
import { writeCorpus } from '@core/corpus'
import { run } from '../../../src/cli/commands/distill'
import { parseTaskSpec } from '../../../src/cli/commands/_options'
import { syntheticDocs, tinyModel, tokenizer } from './helpers'

let tmp: string
beforeAll(async () => {
  await useBackend('wasm')
  tmp = mkdtempSync(join(tmpdir(), 'fastbioner-distill-cli-'))
})
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

function conll(name: string, n: number, seed: number): string {
  const p = join(tmp, name)
  writeFileSync(p, writeCorpus(syntheticDocs(n, seed, 3, name), 'conll').files[0].content)
  return p
}

describe('distill command', () => {
  it('parses --task specs (drive letters are not separators)', () => {
    expect(parseTaskSpec('ncbi=a/train.tsv:a/dev.tsv')).toEqual({ name: 'ncbi', train: 'a/train.tsv', dev: 'a/dev.tsv' })
    expect(parseTaskSpec('chem=C:\\d\\train.tsv:C:\\d\\dev.tsv')).toEqual({ name: 'chem', train: 'C:\\d\\train.tsv', dev: 'C:\\d\\dev.tsv' })
    expect(parseTaskSpec('x=t.tsv,d.tsv')).toEqual({ name: 'x', train: 't.tsv', dev: 'd.tsv' })
    expect(parseTaskSpec('x=t.tsv')).toEqual({ name: 'x', train: 't.tsv', dev: undefined })
    // POSIX absolute paths: a ':' before '/' separates unless a lone drive letter precedes it.
    expect(parseTaskSpec('x=/data/t.tsv:/data/d.tsv')).toEqual({ name: 'x', train: '/data/t.tsv', dev: '/data/d.tsv' })
    expect(parseTaskSpec('x=C:/d/t.tsv:/data/d.tsv')).toEqual({ name: 'x', train: 'C:/d/t.tsv', dev: '/data/d.tsv' })
    expect(() => parseTaskSpec('t.tsv')).toThrow(/NAME=TRAIN/)
  })

  it('writes a student checkpoint and a JSON summary, and with --quantize its int8 version', async () => {
    const teacherDir = join(tmp, 'teacher')
    const t = tinyModel(4, 2)
    await saveCheckpoint(teacherDir, t, tokenizer.vocab as string[], { lowercase: true })
    t.dispose()
    const out = join(tmp, 'student')
    const lines: string[] = []
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => {
      lines.push(String(s))
      return true
    })
    let code: number
    try {
      code = await run(['--teacher', teacherDir, '--layers', '2', '--train', conll('train.conll', 12, 1), '--dev', conll('dev.conll', 4, 2), '--out', out, '--kd', 'fixed', '--epochs', '1', '--max-length', '32', '--teacher-engine', 'tfjs', '-q', '--quantize'])
    } finally {
      spy.mockRestore()
    }
    expect(code).toBe(0)
    const summary = JSON.parse(lines.join(''))
    expect(summary.kd).toBe('fixed')
    expect(summary.layer_map).toEqual([2, 4])
    expect(summary.initialised_from_teacher).toBe(true)
    const ck = await loadCheckpoint(out)
    expect(ck.config.numHiddenLayers).toBe(2)
    expect(JSON.parse(readFileSync(join(out, 'fastbioner.json'), 'utf8')).distillation.kd).toBe('fixed')
    ck.model.dispose()
    // The int8 student, calibrated on --dev, beside it.
    expect(summary.int8.out).toBe(`${out}-int8`)
    const int8Meta = JSON.parse(readFileSync(join(out + '-int8', 'fastbioner.json'), 'utf8'))
    expect(int8Meta.distillation.kd).toBe('fixed')
    expect(int8Meta.quantization.parent.dir).toBe(out)
    expect(int8Meta.quantization.calibration.documents).toBe(4)
    expect(typeof int8Meta.quantization.calibration.int8F1).toBe('number')
    expect(summary.int8.calibration.floatF1).toBe(int8Meta.quantization.calibration.floatF1)
    const q = await loadCheckpoint(out + '-int8')
    expect(q.config.numHiddenLayers).toBe(2)
    q.model.dispose()
  })

  it('says on stderr, not as a Node process warning, when no teacher head has a task\'s labels', async () => {
    const teacherDir = join(tmp, 'teacher-other')
    const t = tinyModel(2, 3)
    await saveCheckpoint(teacherDir, t, tokenizer.vocab as string[], { lowercase: true })
    t.dispose()
    const err: string[] = []
    const errSpy = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
      err.push(String(s))
      return true
    })
    const outSpy = vi.spyOn(process.stdout, 'write').mockImplementation(() => true)
    const nodeWarning = vi.spyOn(process, 'emitWarning')
    let code: number
    try {
      // The task's type is renamed, so its labels are no teacher head's.
      code = await run(['--teacher', teacherDir, '--layers', '1', '--task', `misc=${conll('misc-train.conll', 6, 5)}:${conll('misc-dev.conll', 3, 6)}`, '--map-types', 'Disease=Other', '--out', join(tmp, 'student-other'), '--epochs', '1', '--max-steps', '1', '--max-length', '32', '--teacher-engine', 'tfjs'])
    } finally {
      errSpy.mockRestore()
      outSpy.mockRestore()
    }
    expect(code).toBe(0)
    expect(err.join('')).toContain("warning: no teacher has a head with the labels of task 'misc': that task gets no soft labels")
    expect(nodeWarning).not.toHaveBeenCalled()
    nodeWarning.mockRestore()
  })

  it('rejects a bad --kd and a student deeper than the teacher with usage/input errors', async () => {
    const err: string[] = []
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
      err.push(String(s))
      return true
    })
    try {
      expect(await run(['--teacher', 'x', '--layers', '2', '--train', 'y', '--out', 'z', '--kd', 'magic'])).toBe(2)
      expect(err.join('')).toMatch(/--kd must be one of dynamic, fixed, hidden, none/)
      expect(await run(['--teacher', join(tmp, 'teacher'), '--layers', '9', '--train', conll('t2.conll', 2, 3), '--out', join(tmp, 'no'), '-q', '--teacher-engine', 'tfjs'])).toBe(1)
      expect(err.join('')).toMatch(/student layers must be an integer in 1\.\.4/)
    } finally {
      spy.mockRestore()
    }
  })
})
