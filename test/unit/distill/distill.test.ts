import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as tf from '@tensorflow/tfjs-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useBackend } from '@core/model/backend'
import { BertTokenClassifier } from '@core/model/bert'
import { loadCheckpoint, saveCheckpoint } from '@core/model/checkpoint'
import { labelMapFromLabels } from '@core/nlp/bio'
import { documentsToExamples } from '@core/nlp/examples'
import { collate } from '@core/train/batching'
import { train } from '@core/train/loop'
import { maskedCrossEntropy } from '@core/train/loss'
import { AdamW } from '@core/train/optimizer'
import { distill, lossWeights, type DistillOptions } from '@core/distill/distill'
import { hiddenMse, maskedKl, realMask } from '@core/distill/losses'
import { planTaskBatches } from '@core/distill/multitask'
import { loadOptimizerState } from '@core/train/runner'
import { distillCheckpoints } from '@core/distill/run'
import { createStudent } from '@core/distill/student'
import { labels, syntheticDocs, tinyModel, tokenizer } from './helpers'

const trainDocs = syntheticDocs(32, 1, 4, 'tr')
const devDocs = syntheticDocs(8, 2, 4, 'dv')
const probeDocs = syntheticDocs(6, 3, 4, 'pr')
let teacher: BertTokenClassifier
let tmp: string

beforeAll(async () => {
  await useBackend('wasm')
  tmp = mkdtempSync(join(tmpdir(), 'fastbioner-distill-'))
  teacher = tinyModel(4, 5)
  await train({ model: teacher, tokenizer, train: trainDocs, epochs: 3, batchSize: 16, lr: 5e-3, maxLength: 32, seed: 1 })
})
afterAll(() => {
  teacher.dispose()
  rmSync(tmp, { recursive: true, force: true })
})

/** KL(teacher ‖ student) and last-layer hidden MSE on probe examples. */
function distance(student: BertTokenClassifier, proj?: tf.Tensor) {
  const lm = labelMapFromLabels(labels)
  const exs = documentsToExamples(probeDocs, tokenizer, lm, { maxLength: 32, sentenceLevel: true })
  const h = collate(exs, exs.map((_, i) => i))
  return tf.tidy(() => {
    const shape: [number, number] = [h.batchSize, h.seqLen]
    const inputs = { inputIds: tf.tensor2d(h.inputIds, shape, 'int32'), attentionMask: tf.tensor2d(h.attentionMask, shape, 'int32') }
    const t = teacher.forward(inputs, { outputHiddenStates: true })
    const s = student.forward(inputs, { outputHiddenStates: true })
    const real = realMask(inputs.attentionMask)
    const kl = maskedKl(s.logits.default, t.logits.default, real).dataSync()[0]
    const mse = student.config.hiddenSize === 32 ? hiddenMse(s.hiddenStates!.at(-1)!, t.hiddenStates!.at(-1)!, real, proj).dataSync()[0] : NaN
    return { kl, mse }
  })
}

const base = (student: BertTokenClassifier): DistillOptions => ({
  student,
  teachers: [{ model: teacher }],
  tokenizer,
  tasks: [{ name: 'default', train: trainDocs, dev: devDocs }],
  epochs: 2,
  batchSize: 16,
  lr: 3e-3,
  maxLength: 32,
  seed: 4,
  teacherEngine: 'tfjs',
})

describe('loss weights per KD mode', () => {
  it('dynamic follows φ; fixed/hidden are constant; none is gold only', () => {
    expect(lossWeights('dynamic', 0, 100)).toMatchObject({ soft: 1 - Math.exp(-0.7), feature: 1 - Math.exp(-0.7), hard: Math.exp(-0.7), hidden: true, attention: true })
    expect(lossWeights('dynamic', 70, 100)).toMatchObject({ soft: 0, feature: 0, hard: 1 })
    expect(lossWeights('fixed', 50, 100)).toMatchObject({ soft: 0.5, hard: 0.5, feature: 1, attention: true })
    expect(lossWeights('hidden', 50, 100)).toMatchObject({ soft: 0.5, hard: 0.5, feature: 1, hidden: true, attention: false })
    expect(lossWeights('none', 0, 100)).toMatchObject({ soft: 0, hard: 1, feature: 0 })
  })
})

describe('distillation', () => {
  it('moves a narrow random student toward the teacher (KL drops) and records φ per step', async () => {
    const s = createStudent(teacher, { layers: 2, width: { hiddenSize: 16, intermediateSize: 32, numAttentionHeads: 2 }, seed: 3 })
    const before = distance(s.model)
    const r = await distill({ ...base(s.model), epochs: 3 })
    const after = distance(s.model)
    expect(after.kl).toBeLessThan(before.kl * 0.5)
    expect(r.records.length).toBe(r.steps)
    expect(r.records[0].phi).toBeCloseTo(1 - Math.exp(-0.7), 10)
    expect(r.records.at(-1)!.phi).toBe(0)
    // Once φ = 0 the teacher terms are not computed at all.
    const late = r.records.filter((x) => x.phi === 0)
    expect(late.every((x) => x.soft === 0 && x.hidden === 0 && x.attention === 0)).toBe(true)
    expect(r.records[0].hidden).toBeGreaterThan(0)
    expect(r.records[0].attention).toBeGreaterThan(0)
    expect(r.teachers[0].cached).toBe(true)
    s.model.dispose()
  })

  it('hidden-state MSE to the mapped teacher layer drops for a teacher-initialised student', async () => {
    const s = createStudent(teacher, { layers: 2 })
    const before = distance(s.model)
    await distill({ ...base(s.model), kd: 'hidden', fixedWeights: { soft: 0.5, feature: 5 } })
    const after = distance(s.model)
    expect(after.mse).toBeLessThan(before.mse * 0.8)
    s.model.dispose()
  })

  it('cached and online teachers give the same training (up to float16 features)', async () => {
    const run = async (cache: 'on' | 'off') => {
      const s = createStudent(teacher, { layers: 2 })
      const r = await distill({ ...base(s.model), epochs: 1, teacherCache: cache, kd: 'fixed' })
      s.model.dispose()
      return r
    }
    const a = await run('on')
    const b = await run('off')
    expect(a.teachers[0].cached).toBe(true)
    expect(b.teachers[0].cached).toBe(false)
    expect(a.losses.length).toBe(b.losses.length)
    a.losses.forEach((l, i) => expect(l).toBeCloseTo(b.losses[i], 2))
  })

  it('leaves no tensors behind (cached, online and ORT teachers; both trainers)', async () => {
    const runs = [['on', 'tfjs', 'tfjs'], ['off', 'tfjs', 'tfjs'], ['on', 'auto', 'onnxruntime'], ['off', 'tfjs', 'onnxruntime']] as const
    for (const [teacherCache, teacherEngine, trainer] of runs) {
      const s = createStudent(teacher, { layers: 2, width: { hiddenSize: 16, intermediateSize: 32, numAttentionHeads: 2 } })
      const before = tf.memory().numTensors
      await distill({ ...base(s.model), epochs: 1, maxSteps: 3, teacherCache, teacherEngine, trainer, kd: 'dynamic', tasks: [{ name: 'default', train: trainDocs }] })
      expect(tf.memory().numTensors).toBe(before)
      s.model.dispose()
    }
  })

  it("a CRF teacher's transitions go to the student and stay as they are through distillation (both trainers)", async () => {
    const crfTeacher = tinyModel(2, 5)
    crfTeacher.addCrf('default')
    const C = labels.length
    const want = Float32Array.from({ length: C * C }, (_, i) => (i % 4) - 1.5)
    tf.tidy(() => crfTeacher.variables().get('crf.transitions')!.assign(tf.tensor(want, [C, C])))
    for (const [trainer, width] of [['onnxruntime', undefined], ['tfjs', { hiddenSize: 16, intermediateSize: 32, numAttentionHeads: 2 }]] as const) {
      const s = createStudent(crfTeacher, { layers: 1, width })
      expect(Array.from(s.model.crfScores('default')!.transitions)).toEqual(Array.from(want))
      expect(s.sources.get('crf.transitions')).toBe('crf.transitions')
      const r = await distill({ ...base(s.model), teachers: [{ model: crfTeacher }], epochs: 1, maxSteps: 3, trainer, kd: 'dynamic' })
      expect(r.steps).toBe(3)
      expect(Array.from(s.model.crfScores('default')!.transitions)).toEqual(Array.from(want))
      s.model.dispose()
    }
    crfTeacher.dispose()
  })

  it('Bert-OG (none) needs no teacher targets; the result saves and reloads as a checkpoint', async () => {
    const s = createStudent(teacher, { layers: 1 })
    const out = join(tmp, 'og')
    const r = await distill({ ...base(s.model), kd: 'none', epochs: 1, outDir: out })
    expect(r.records.every((x) => x.soft === 0 && x.hidden === 0)).toBe(true)
    expect(r.teachers).toEqual([])
    const ck = await loadCheckpoint(out)
    expect(ck.config.numHiddenLayers).toBe(1)
    expect((ck.metadata as { distillation: { kd: string } }).distillation.kd).toBe('none')
    ck.model.dispose()
    s.model.dispose()
  })
})

describe('multi-teacher KD', () => {
  it('averages two teachers, ramps the temperature and adds embedding pairs with W_e', async () => {
    const t2 = tinyModel(2, 9)
    const s = createStudent(teacher, { layers: 2, width: { hiddenSize: 16, intermediateSize: 32, numAttentionHeads: 2 } })
    const r = await distill({
      ...base(s.model),
      teachers: [{ model: teacher }, { model: t2 }],
      kd: 'fixed',
      epochs: 2,
    })
    expect(r.teachers.map((t) => t.pairs)).toEqual([
      [{ student: 0, teacher: 0 }, { student: 1, teacher: 2 }, { student: 2, teacher: 4 }],
      [{ student: 0, teacher: 0 }, { student: 1, teacher: 1 }, { student: 2, teacher: 2 }],
    ])
    const temps = r.records.map((x) => x.temperature)
    expect(temps[0]).toBe(0.5)
    expect(temps.at(-1)).toBe(3)
    expect([...new Set(temps)]).toEqual([0.5, 1, 1.5, 2, 2.5, 3])
    expect(r.losses.every(Number.isFinite)).toBe(true)
    t2.dispose()
    s.model.dispose()
  })

  it('distils from checkpoint directories (two teachers sharing the vocabulary)', async () => {
    const d1 = join(tmp, 't1')
    const d2 = join(tmp, 't2')
    const t2 = tinyModel(2, 19)
    await saveCheckpoint(d1, teacher, tokenizer.vocab as string[], { lowercase: true })
    await saveCheckpoint(d2, t2, tokenizer.vocab as string[], { lowercase: true })
    t2.dispose()
    const out = join(tmp, 'multi')
    const r = await distillCheckpoints({ teacherDirs: [d1, d2], layers: 2, tasks: [{ name: 'default', train: trainDocs, dev: devDocs }], outDir: out, epochs: 1, batchSize: 16, lr: 3e-3, maxLength: 32, teacherWeights: [2, 1], teacherEngine: 'tfjs' })
    expect(r.layerMap).toEqual([2, 4])
    expect(r.inherited).toBe(true)
    expect(r.result.checkpointDir).toBe(out)
  })
})

describe('multi-task heads (MT-BioNER)', () => {
  const chemDocs = syntheticDocs(16, 7, 3, 'ch').map((d) => ({ ...d, mentions: d.mentions.map((m) => ({ ...m, type: 'Chemical' })) }))
  const chemLabels = ['O', 'B-Chemical', 'I-Chemical']

  it('plans proportional and round-robin mixes', () => {
    const lengths = [Array(40).fill(10), Array(10).fill(12)]
    const prop = planTaskBatches(lengths, { batchSize: 8, seed: 1, epoch: 1, mix: 'proportional' })
    expect(prop.filter((b) => b.task === 0).length).toBe(5)
    expect(prop.filter((b) => b.task === 1).length).toBe(2)
    expect(prop.filter((b) => b.task === 0).flatMap((b) => b.indices).sort((a, b) => a - b)).toEqual([...Array(40).keys()])
    const rr = planTaskBatches(lengths, { batchSize: 8, seed: 1, epoch: 1, mix: 'round-robin' })
    expect(rr.map((b) => b.task)).toEqual([0, 1, 0, 1, 0, 1, 0, 1, 0, 1])
    expect(planTaskBatches(lengths, { batchSize: 8, seed: 1, epoch: 1 })).toEqual(prop)
  })

  it('each batch trains only its own head: the other head gets no gradient and does not move', async () => {
    const model = tinyModel(2, 13, 32, { default: labels, chem: chemLabels })
    const before = Object.fromEntries([...model.variables()].map(([k, v]) => [k, Array.from(v.dataSync())]))
    const tasks = [
      { name: 'default', train: trainDocs },
      { name: 'chem', train: chemDocs },
    ]
    // Which task the first step trains, from the same plan the loop uses.
    const r = await distill({ student: model, teachers: [], tokenizer, tasks, kd: 'none', maxSteps: 1, batchSize: 8, lr: 1e-2, warmupRatio: 0, maxLength: 32, seed: 5, epochs: 1, weightDecay: 0.1 })
    const first = tasks[r.records[0].task].name
    const other = first === 'default' ? 'chem' : 'default'
    const p = (h: string) => (h === 'default' ? 'classifier' : `classifiers.${h}`)
    const after = Object.fromEntries([...model.variables()].map(([k, v]) => [k, Array.from(v.dataSync())]))
    expect(after[`${p(other)}.weight`]).toEqual(before[`${p(other)}.weight`])
    expect(after[`${p(other)}.bias`]).toEqual(before[`${p(other)}.bias`])
    expect(after[`${p(first)}.weight`]).not.toEqual(before[`${p(first)}.weight`])
    expect(after['bert.encoder.layer.0.attention.self.query.weight']).not.toEqual(before['bert.encoder.layer.0.attention.self.query.weight'])
    // The gradient itself: a 'chem' batch's loss has no path to the default head.
    const exs = documentsToExamples(chemDocs, tokenizer, labelMapFromLabels(chemLabels), { maxLength: 32, sentenceLevel: true })
    const h = collate(exs, [0, 1, 2])
    const opt = new AdamW(model.variables(), { lr: 1e-3 })
    const { loss, grads } = opt.computeGradients(() => {
      const shape: [number, number] = [h.batchSize, h.seqLen]
      const out = model.forward({ inputIds: tf.tensor2d(h.inputIds, shape, 'int32'), attentionMask: tf.tensor2d(h.attentionMask, shape, 'int32') }, { training: true, heads: ['chem'] })
      return maskedCrossEntropy(out.logits.chem, tf.tensor2d(h.labels, shape, 'int32'))
    })
    expect(grads.has('classifiers.chem.weight')).toBe(true)
    expect(grads.has('classifier.weight')).toBe(false)
    expect(grads.has('classifier.bias')).toBe(false)
    tf.dispose([loss, ...grads.values()])
    opt.dispose()
    model.dispose()
  })

  it('distils a multi-head teacher with per-head soft labels', async () => {
    const mt = tinyModel(2, 17, 32, { default: labels, chem: chemLabels })
    const s = createStudent(mt, { layers: 1 })
    const r = await distill({
      student: s.model,
      teachers: [{ model: mt }],
      tokenizer,
      tasks: [
        { name: 'default', train: trainDocs, dev: devDocs },
        { name: 'chem', train: chemDocs },
      ],
      kd: 'dynamic',
      mix: 'round-robin',
      epochs: 1,
      batchSize: 8,
      lr: 3e-3,
      maxLength: 32,
      teacherEngine: 'tfjs',
    })
    expect(new Set(r.records.map((x) => x.task))).toEqual(new Set([0, 1]))
    expect(r.records.filter((x) => x.task === 1 && x.phi > 0).every((x) => x.soft > 0)).toBe(true)
    expect(r.epochs[0].dev!.perTask.default).toBeGreaterThanOrEqual(0)
    s.model.dispose()
    mt.dispose()
  })
})

describe('distillation trainers', () => {
  // The onnxruntime graph and tfjs autodiff draw the same dropout masks from the step seed, so
  // from the same student both replay the same loss curve (float32 round-off apart).
  it('onnxruntime and tfjs give the same losses and terms step for step (two teachers, projections, W_e, attention)', async () => {
    const t2 = tinyModel(2, 9)
    const runs = []
    for (const trainer of ['tfjs', 'onnxruntime'] as const) {
      const s = createStudent(teacher, { layers: 2, width: { hiddenSize: 16, intermediateSize: 32, numAttentionHeads: 2 }, seed: 7 })
      runs.push(await distill({ ...base(s.model), teachers: [{ model: teacher }, { model: t2 }], kd: 'fixed', epochs: 1, maxSteps: 6, trainer, tasks: [{ name: 'default', train: trainDocs }] }))
      s.model.dispose()
    }
    const [tfjs, ort] = runs
    expect(tfjs.trainer).toMatch(/^tfjs/)
    expect(ort.trainer).toMatch(/^onnxruntime/)
    expect(ort.losses).toHaveLength(6)
    for (let i = 0; i < 6; i++) {
      const [a, b] = [tfjs.records[i], ort.records[i]]
      for (const k of ['loss', 'hard', 'soft', 'hidden', 'attention'] as const) expect(Math.abs(a[k] - b[k])).toBeLessThanOrEqual(1e-3 * Math.max(1, Math.abs(a[k])))
    }
    // The later steps depend on every earlier update: the curves moved.
    expect(ort.losses[5]).not.toBe(ort.losses[0])
    t2.dispose()
  })
})

describe('distillation resume', () => {
  it('a stopped run resumes from its last save (student, optimizer state, projections W) and continues the loss curve', async () => {
    const narrow = () => createStudent(teacher, { layers: 2, width: { hiddenSize: 16, intermediateSize: 32, numAttentionHeads: 2 }, seed: 7 }).model
    const opts = { kd: 'fixed' as const, epochs: 2, trainer: 'onnxruntime' as const, threads: 1, tasks: [{ name: 'default', train: trainDocs }] }
    const full = narrow()
    const a = await distill({ ...base(full), ...opts, outDir: join(tmp, 'kd-full') })
    full.dispose()
    const perEpoch = a.epochs[0].steps
    expect(a.losses).toHaveLength(2 * perEpoch)

    // Stopped at the end of epoch 1: its checkpoint and optimizer state are written.
    const out = join(tmp, 'kd-stopped')
    const ac = new AbortController()
    const first = narrow()
    const b = await distill({ ...base(first), ...opts, outDir: out, signal: ac.signal, onProgress: (e) => e.kind === 'step' && e.step === perEpoch && ac.abort() })
    first.dispose()
    expect(b.cancelled).toBe(true)
    expect(loadOptimizerState(out)!.params.has('distill.teacher0.W_h')).toBe(true)

    const ck = await loadCheckpoint(out)
    const c = await distill({ ...base(ck.model), ...opts, outDir: out, resume: true })
    ck.model.dispose()
    expect(c.resumedAfterEpoch).toBe(1)
    expect(c.steps).toBe(2 * perEpoch)
    // The fixed-weight losses include the hidden-state MSE through W_h: a W_h restarted from its
    // initial value, or φ/temperature restarted at step 0, would change them.
    for (let i = 0; i < perEpoch; i++) expect(c.losses[i]).toBeCloseTo(a.losses[perEpoch + i], 4)
    await expect(distill({ ...base(narrow()), ...opts, outDir: join(tmp, 'kd-none'), resume: true })).rejects.toThrow(/no optimizer\.safetensors/)
  })
})
