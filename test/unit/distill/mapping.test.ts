import * as tf from '@tensorflow/tfjs-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { useBackend } from '@core/model/backend'
import { encoderParamShapes, headParamNames } from '@core/model/bert'
import { defaultLayerPairs, featurePairs, parseLayerPairs, uniformLayerMap } from '@core/distill/mapping'
import { createStudent, teacherParamFor } from '@core/distill/student'
import { labels, tinyModel } from './helpers'

beforeAll(async () => {
  await useBackend('wasm')
})

describe('uniform layer mapping: student layer j ← teacher layer j·m/n (1-based)', () => {
  it('maps the paper settings and (4, 2)', () => {
    expect(uniformLayerMap(12, 6)).toEqual([2, 4, 6, 8, 10, 12])
    expect(uniformLayerMap(12, 4)).toEqual([3, 6, 9, 12])
    expect(uniformLayerMap(12, 3)).toEqual([4, 8, 12])
    expect(uniformLayerMap(4, 2)).toEqual([2, 4])
    expect(uniformLayerMap(4, 4)).toEqual([1, 2, 3, 4])
    // Not a divisor: floor(j·m/n), last layer still maps to the last.
    expect(uniformLayerMap(12, 5)).toEqual([2, 4, 7, 9, 12])
    expect(() => uniformLayerMap(4, 5)).toThrow(/1\.\.4/)
    expect(() => uniformLayerMap(4, 0)).toThrow()
  })
  it('gives hidden-state pairs (0 = embeddings) and parses pair lists', () => {
    expect(defaultLayerPairs(12, 3)).toEqual([{ student: 1, teacher: 4 }, { student: 2, teacher: 8 }, { student: 3, teacher: 12 }])
    expect(defaultLayerPairs(4, 2, true)).toEqual([{ student: 0, teacher: 0 }, { student: 1, teacher: 2 }, { student: 2, teacher: 4 }])
    expect(parseLayerPairs('0:0, 1:3,2:6')).toEqual([{ student: 0, teacher: 0 }, { student: 1, teacher: 3 }, { student: 2, teacher: 6 }])
    expect(() => parseLayerPairs('1-3')).toThrow(/student:teacher/)
  })
  it('names the HF parameter each student parameter copies', () => {
    const map = uniformLayerMap(12, 4)
    expect(teacherParamFor('bert.encoder.layer.0.attention.self.query.weight', map)).toBe('bert.encoder.layer.2.attention.self.query.weight')
    expect(teacherParamFor('bert.encoder.layer.3.output.LayerNorm.bias', map)).toBe('bert.encoder.layer.11.output.LayerNorm.bias')
    expect(teacherParamFor('bert.embeddings.word_embeddings.weight', map)).toBe('bert.embeddings.word_embeddings.weight')
  })
})

describe('student initialisation', () => {
  it('copies the embeddings, the mapped layers and the head, value for value', () => {
    const teacher = tinyModel(4, 3)
    const s = createStudent(teacher, { layers: 2 })
    expect(s.layerMap).toEqual([2, 4])
    expect(s.inherited).toBe(true)
    const tv = teacher.variables()
    const sv = s.model.variables()
    expect(s.model.config.numHiddenLayers).toBe(2)
    expect([...sv.keys()].sort()).toEqual([...encoderParamShapes(s.model.config).keys(), headParamNames('default').weight, headParamNames('default').bias].sort())
    for (const [name, v] of sv) {
      const src = name.replace(/^bert\.encoder\.layer\.(\d+)\./, (_, l) => `bert.encoder.layer.${[1, 3][Number(l)]}.`)
      expect(s.sources.get(name)).toBe(src)
      expect(Array.from(v.dataSync())).toEqual(Array.from(tv.get(src)!.dataSync()))
    }
    // Layer 1 of the student (index 0) is the teacher's layer 2 (index 1), not its layer 1.
    const q0 = sv.get('bert.encoder.layer.0.attention.self.query.weight')!.dataSync()
    expect(Array.from(q0)).not.toEqual(Array.from(tv.get('bert.encoder.layer.0.attention.self.query.weight')!.dataSync()))
    // Copies, not shared variables: training the student leaves the teacher alone.
    sv.get('bert.embeddings.word_embeddings.weight')!.assign(tf.zerosLike(sv.get('bert.embeddings.word_embeddings.weight')!))
    expect(tf.sum(tf.abs(tv.get('bert.embeddings.word_embeddings.weight')!)).dataSync()[0]).toBeGreaterThan(0)
    s.model.dispose()
    teacher.dispose()
  })
  it('initialises a head the teacher lacks and a student of another width randomly', () => {
    const teacher = tinyModel(4, 3)
    const s = createStudent(teacher, { layers: 2, heads: { default: labels, chem: ['O', 'B-Chemical', 'I-Chemical'] } })
    expect(s.sources.get('classifier.weight')).toBe('classifier.weight')
    expect(s.sources.get('classifiers.chem.weight')).toBeNull()
    s.model.dispose()
    const narrow = createStudent(teacher, { layers: 2, width: { hiddenSize: 16, intermediateSize: 32, numAttentionHeads: 1 } })
    expect(narrow.inherited).toBe(false)
    expect(narrow.model.config.hiddenSize).toBe(16)
    expect([...narrow.sources.values()].every((v) => v === null)).toBe(true)
    narrow.model.dispose()
    teacher.dispose()
  })
})

describe('feature pairs and projections W_h / W_e', () => {
  const teacher = (hiddenSize: number, pairs: { student: number; teacher: number }[], attentions = pairs.map((p) => p.teacher).filter((t) => t > 0)) => ({
    hiddenSize,
    numAttentionHeads: 4,
    pairs,
    hidden: pairs.map((p) => p.teacher),
    attentions,
  })

  it('one projection per teacher and kind, only when widths differ, shaped [student, teacher]', () => {
    const f = featurePairs(16, [teacher(32, [{ student: 0, teacher: 0 }, { student: 1, teacher: 2 }, { student: 2, teacher: 4 }]), teacher(24, [{ student: 1, teacher: 2 }])])
    expect([...f.projections.keys()].sort()).toEqual(['distill.teacher0.W_e', 'distill.teacher0.W_h', 'distill.teacher1.W_h'])
    expect(f.projections.get('distill.teacher0.W_h')!.shape).toEqual([16, 32])
    expect(f.projections.get('distill.teacher1.W_h')!.shape).toEqual([16, 24])
    expect(f.hidden.map((p) => [p.teacher, p.student, p.teacherLayer, p.projection])).toEqual([
      [0, 0, 0, 'distill.teacher0.W_e'],
      [0, 1, 2, 'distill.teacher0.W_h'],
      [0, 2, 4, 'distill.teacher0.W_h'],
      [1, 1, 2, 'distill.teacher1.W_h'],
    ])
    // The embedding pair has no attention; student attention indices are 0-based layers.
    expect(f.attention.map((p) => [p.teacher, p.student, p.teacherLayer])).toEqual([
      [0, 0, 2],
      [0, 1, 4],
      [1, 0, 2],
    ])
    expect(featurePairs(32, [teacher(32, [{ student: 1, teacher: 2 }])]).projections.size).toBe(0)
  })

  it('starts as the zero-padding map [I | 0], or the truncation when the student is wider', () => {
    const pad = featurePairs(2, [teacher(3, [{ student: 1, teacher: 1 }])]).projections.get('distill.teacher0.W_h')!
    expect([...pad.init]).toEqual([1, 0, 0, 0, 1, 0])
    const cut = featurePairs(3, [teacher(2, [{ student: 1, teacher: 1 }])]).projections.get('distill.teacher0.W_h')!
    expect([...cut.init]).toEqual([1, 0, 0, 1, 0, 0])
  })

  it('leaves out the pairs whose targets the run does not use (hidden-only KD has no attention pairs)', () => {
    const f = featurePairs(16, [teacher(16, [{ student: 1, teacher: 2 }, { student: 2, teacher: 4 }], [])])
    expect(f.hidden).toHaveLength(2)
    expect(f.attention).toHaveLength(0)
  })
})
