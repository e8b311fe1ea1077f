// Distillation of an encoder with a character channel (core/model/char-cnn.ts): the student takes
// the teacher's channel and chars.txt (a narrower student its characters and convolution, a zero
// projection), both trainers and both teacher engines give the same losses step for step with the
// character inputs on every batch, and the result saves and reloads with its channel.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as tf from '@tensorflow/tfjs-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useBackend } from '@core/model/backend'
import { BertTokenClassifier } from '@core/model/bert'
import { loadCheckpoint } from '@core/model/checkpoint'
import { charCnnConfig, learnCharVocabulary } from '@core/model/char-cnn'
import { distill, type DistillOptions } from '@core/distill/distill'
import { createStudent } from '@core/distill/student'
import { Rng } from '@core/rng'
import { labels, syntheticDocs, tinyConfig, tokenizer } from './helpers'

const trainDocs = syntheticDocs(16, 1, 3, 'tr')
const chars = learnCharVocabulary(trainDocs.flatMap((d) => d.text.split(/\s+/)))
let teacher: BertTokenClassifier
let tmp: string
const P = 'bert.embeddings.char_cnn'

beforeAll(async () => {
  await useBackend('wasm')
  tmp = mkdtempSync(join(tmpdir(), 'fastbioner-distill-chars-'))
  teacher = BertTokenClassifier.random(tinyConfig(2, 32, 2, { charCnn: charCnnConfig(chars, { charDim: 4, charFilters: 6, maxChars: 8 }) }), 5, { default: labels }, chars)
  // A channel that has trained: the projection away from zero.
  const rng = new Rng(3)
  for (const [name, v] of teacher.variables()) if (name.startsWith(`${P}.projection`)) v.assign(tf.tensor(rng.normalArray(v.size, 0.3), v.shape))
})
afterAll(() => {
  teacher.dispose()
  rmSync(tmp, { recursive: true, force: true })
})

const values = (m: BertTokenClassifier, name: string) => Array.from(m.variables().get(name)!.dataSync())

describe('distilling an encoder with a character channel', () => {
  it("a student takes the teacher's channel and characters; a narrower one its characters and convolution, projection zero", () => {
    const same = createStudent(teacher, { layers: 1 })
    const narrow = createStudent(teacher, { layers: 1, width: { hiddenSize: 16, intermediateSize: 32, numAttentionHeads: 2 } })
    try {
      for (const s of [same, narrow]) {
        expect(s.model.config.charCnn).toEqual(teacher.config.charCnn)
        expect(s.model.charVocab?.chars).toEqual(chars.chars)
        for (const name of [`${P}.char_embeddings.weight`, `${P}.conv.weight`, `${P}.conv.bias`]) expect(values(s.model, name), name).toEqual(values(teacher, name))
      }
      expect(values(same.model, `${P}.projection.weight`)).toEqual(values(teacher, `${P}.projection.weight`))
      expect(values(narrow.model, `${P}.projection.weight`).every((x) => x === 0)).toBe(true)
    } finally {
      same.model.dispose()
      narrow.model.dispose()
    }
  })

  it('onnxruntime and tfjs give the same losses step for step (teachers on tfjs and onnxruntime), and the student saves with its channel', async () => {
    const runs = []
    for (const [trainer, teacherEngine] of [['tfjs', 'tfjs'], ['onnxruntime', 'onnx']] as const) {
      const s = createStudent(teacher, { layers: 1, seed: 7 })
      const before = values(s.model, `${P}.conv.weight`)
      const opts: DistillOptions = {
        student: s.model,
        teachers: [{ model: teacher }],
        tokenizer,
        tasks: [{ name: 'default', train: trainDocs }],
        kd: 'fixed',
        epochs: 1,
        maxSteps: 4,
        batchSize: 8,
        lr: 3e-3,
        maxLength: 32,
        seed: 4,
        trainer,
        teacherEngine,
        outDir: join(tmp, trainer),
      }
      runs.push(await distill(opts))
      // The embedding-layer MSE and the soft loss reach the channel.
      expect(values(s.model, `${P}.conv.weight`)).not.toEqual(before)
      s.model.dispose()
    }
    const [tfjs, ort] = runs
    expect(ort.trainer).toMatch(/^onnxruntime/)
    for (let i = 0; i < 4; i++) {
      const [a, b] = [tfjs.records[i], ort.records[i]]
      for (const k of ['loss', 'hard', 'soft', 'hidden'] as const) expect(Math.abs(a[k] - b[k]), `step ${i} ${k}`).toBeLessThanOrEqual(1e-3 * Math.max(1, Math.abs(a[k])))
    }
    const ck = await loadCheckpoint(join(tmp, 'onnxruntime'))
    try {
      expect(ck.model.config.charCnn).toEqual(teacher.config.charCnn)
      expect(readFileSync(join(tmp, 'onnxruntime', 'chars.txt'), 'utf8').split('\n').slice(0, 2)).toEqual(['<pad>', '<unk>'])
    } finally {
      ck.model.dispose()
    }
  })

  it('refuses a teacher whose channel the student does not share', async () => {
    const plain = BertTokenClassifier.random(tinyConfig(1), 2, { default: labels })
    try {
      await expect(distill({ student: plain, teachers: [{ model: teacher }], tokenizer, tasks: [{ name: 'default', train: trainDocs }], epochs: 1, maxSteps: 1, maxLength: 32 })).rejects.toThrow(/character channel/)
    } finally {
      plain.dispose()
    }
  })
})
