import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useBackend } from '@core/model/backend'
import { saveCheckpoint } from '@core/model/checkpoint'
import { compareModels, formatCompareTable, latencyStats, relativeFigures } from '@core/eval/compare'
import { createStudent } from '@core/distill/student'
import { quantizeModelFolder } from '@core/onnx/quantize'
import { onnxCacheDir, ownOnnxGraph } from '@core/onnx/graph-cache'
import { evaluate } from '@core/eval/evaluate'
import { train } from '@core/train/loop'
import { expandModels } from '../../../src/cli/commands/compare'
import { syntheticDocs, tinyModel, tokenizer } from './helpers'

let tmp: string
beforeAll(async () => {
  await useBackend('wasm')
  tmp = mkdtempSync(join(tmpdir(), 'fastbioner-compare-'))
})
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

describe('relative figures', () => {
  it('are computed against the first model', () => {
    const base = { f1: 0.8, bytes: 1000, parameters: 500, timing: { medianMs: 20, q1Ms: 19, q3Ms: 21, rounds: 7 } }
    const r = relativeFigures(base, { f1: 0.76, bytes: 600, parameters: 250, timing: { medianMs: 8, q1Ms: 7, q3Ms: 9, rounds: 7 } })
    expect(r.f1Retention).toBeCloseTo(0.95, 12)
    expect(r.sizeReduction).toBeCloseTo(0.4, 12)
    expect(r.parameterReduction).toBeCloseTo(0.5, 12)
    expect(r.timeReduction).toBeCloseTo(0.6, 12)
    expect(r.speedup).toBeCloseTo(2.5, 12)
    expect(r.time).toBe('faster')
    expect(latencyStats([5, 1, 3, 100]).medianMs).toBe(4)
    expect(latencyStats([5, 1, 3]).medianMs).toBe(3)
  })
  it('the CLI accepts space- or comma-separated and repeated --models', () => {
    expect(expandModels(['--models', 'a', 'b,c', '--gold', 'g', '--models=d'])).toEqual(['--models', 'a', '--models', 'b', '--models', 'c', '--gold', 'g', '--models', 'd'])
  })
})

describe('compareModels', () => {
  it('reports size, accuracy and speed of a teacher and a student from one run', async () => {
    const docs = syntheticDocs(48, 1, 4, 'tr')
    const gold = syntheticDocs(6, 2, 4, 'g')
    const teacher = tinyModel(2, 5)
    await train({ model: teacher, tokenizer, train: docs, epochs: 4, batchSize: 16, lr: 5e-3, maxLength: 32, seed: 1 })
    const student = createStudent(teacher, { layers: 1 }).model
    const dt = join(tmp, 'teacher')
    const ds = join(tmp, 'student')
    await saveCheckpoint(dt, teacher, tokenizer.vocab as string[], { lowercase: true, metadata: { training: { maxLength: 32, sentenceLevel: true } } })
    await saveCheckpoint(ds, student, tokenizer.vocab as string[], { lowercase: true, metadata: { training: { maxLength: 32, sentenceLevel: true } } })
    const f1Teacher = (await evaluate(teacher, tokenizer, gold, { maxLength: 32 })).overall.f1
    const f1Student = (await evaluate(student, tokenizer, gold, { maxLength: 32 })).overall.f1
    // The teacher's int8 version is a model like the others.
    const dq = join(tmp, 'teacher-int8')
    await quantizeModelFolder(dt, dq)
    const report = await compareModels([dt, ds, dq], gold, { warmupDocs: 1, rounds: 2, logger: () => {} })
    const [t, s, q] = report.models
    expect(t.name).toBe('teacher')
    expect([t.layers, s.layers]).toEqual([2, 1])
    expect(t.f1).toBeGreaterThan(0.5)
    expect(t.parameters).toBe(teacher.numParameters())
    expect(s.parameters).toBe(student.numParameters())
    // bytes: the files the engine loaded (our cached ONNX export on onnxruntime, the weights on tfjs).
    if (t.engine.startsWith('onnxruntime')) expect(t.bytesFiles).toEqual([(await ownOnnxGraph(dt, { cacheDir: onnxCacheDir() })).path])
    else expect(t.bytesFiles).toEqual([join(dt, 'model.safetensors')])
    expect(t.bytes).toBe(statSync(t.bytesFiles[0]).size)
    expect([t.weights, s.weights, q.weights]).toEqual(['float32', 'float32', 'int8'])
    expect(q.layers).toBe(2)
    expect(q.bytes).toBeLessThan(0.7 * t.bytes)
    expect(Math.abs(q.f1 - t.f1)).toBeLessThan(0.1)
    // Same predictions as the tfjs tagger (whichever engine ran).
    expect(t.f1).toBeCloseTo(f1Teacher, 6)
    expect(s.f1).toBeCloseTo(f1Student, 6)
    expect(t.types.Disease).toBeDefined()
    expect(t.relative).toBeNull()
    expect(s.relative!.f1Retention).toBeCloseTo(s.f1 / t.f1, 12)
    expect(s.relative!.sizeReduction).toBeCloseTo(1 - s.bytes / t.bytes, 12)
    expect(s.relative!.timeReduction).toBeCloseTo(1 - s.timing.medianMs / t.timing.medianMs, 12)
    expect(s.timing.rounds).toBe(2)
    expect(s.latency.documents).toBe(6)
    expect(t.tokensPerSecond).toBeGreaterThan(0)
    expect(t.engine).toMatch(/^(onnxruntime-|tfjs-)/)
    expect(t.engine).toBe(s.engine)
    expect(formatCompareTable(report)).toContain('F1 ret %')
    expect(formatCompareTable(report)).toMatch(/teacher-int8\s+2\s+int8/)
    teacher.dispose()
    student.dispose()
  })

  it('scores one head of a multi-head model when asked (the NCBI head on NCBI-disease)', async () => {
    const docs = syntheticDocs(48, 1, 4, 'tr')
    const gold = syntheticDocs(6, 2, 4, 'g')
    const model = tinyModel(2, 5)
    await train({ model, tokenizer, train: docs, epochs: 4, batchSize: 16, lr: 5e-3, maxLength: 32, seed: 1 })
    // A second, untrained head for a type the gold does not annotate.
    model.setHead('chem', ['O', 'B-Chemical', 'I-Chemical'], 3)
    const dir = join(tmp, 'two-heads')
    await saveCheckpoint(dir, model, tokenizer.vocab as string[], { lowercase: true, metadata: { training: { maxLength: 32, sentenceLevel: true } } })
    const one = (await compareModels([dir], gold, { warmupDocs: 0, head: 'default', logger: () => {} })).models[0]
    const merged = (await compareModels([dir], gold, { warmupDocs: 0, logger: () => {} })).models[0]
    expect(one.f1).toBeCloseTo((await evaluate(model, tokenizer, gold, { maxLength: 32, head: 'default' })).overall.f1, 6)
    expect(Object.keys(one.types)).toEqual(['Disease'])
    // Merged, the untrained head adds Chemical false alarms: a head-blind compare would pass neither check.
    expect(Object.keys(merged.types)).toContain('Chemical')
    expect(merged.f1).toBeLessThan(one.f1)
    expect(merged.f1).toBeCloseTo((await evaluate(model, tokenizer, gold, { maxLength: 32 })).overall.f1, 6)
    model.dispose()
  })
})
