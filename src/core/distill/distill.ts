// Knowledge-distillation training: FastBioNER's dynamic-weight KD (single teacher), its
// baselines (Bert-OG, PKD-style, TinyBERT-style), multi-teacher multi-feature KD with a
// temperature ramp, and multi-task (one head per corpus) training — one loop for all of them.
//
// Per step s of G (0-based), for a batch of corpus t (head t), with teacher targets:
//   dynamic: L = φ(s)·L_SL + (1 − φ(s))·L_TL + φ(s)·Σ_pairs L_ML        (FastBioNER)
//   fixed:   L = α·L_SL + (1 − α)·L_TL + β·Σ_pairs L_ML                  (TinyBERT-style)
//   hidden:  L = α·L_SL + (1 − α)·L_TL + β·Σ_pairs MSE(H_s·W_h, H_t)      (PKD-style, no attention)
//   none:    L = L_TL                                                      (Bert-OG: gold only)
// with α = 0.5, β = 1 by default (fixedWeights), and the whole batch loss times λ_t (1).
//   L_SL = T²·CE(p̄_T, softmax(z_s/T)) over labelled positions (see losses.ts for T² and masks),
//          p̄_T the weighted average of the teachers' softened distributions for head t;
//   L_TL = CE(softmax(z_s), y) over labelled positions;
//   L_ML = MSE(H_s·W, H_t) + (1/h)·Σ_heads MSE(A_s, A_t) per layer pair and teacher, W = W_h for
//          transformer layers and W_e for the embedding pair, learned only when the widths
//          differ (identity otherwise); embedding pairs have no attention term.
// Once a loss weight is 0 (dynamic mode after s/G ≥ 1 − b) neither the teacher targets nor
// the student's hidden states/attentions are computed.

import { join } from 'node:path'
import type * as tf from '@tensorflow/tfjs-core'
import type { CorpusDocument } from '../../shared/domain'
import { TRAIN_DEFAULTS } from '../../shared/recipes'
import { type BertTokenClassifier } from '../model/bert'
import { saveCheckpoint } from '../model/checkpoint'
import { labelMapFromLabels, type LabelMap } from '../nlp/bio'
import { documentsToExamples, type Example } from '../nlp/examples'
import { attachCharInputs, type CharCnnConfig, type PieceCharInputs } from '../model/char-cnn'
import type { WordFeaturizer } from '../nlp/word-features'
import type { WordPieceTokenizer } from '../nlp/tokenizer'
import type { BatchableExample, HostBatch } from '../train/batching'
import { evaluateHeads, type RunSettings, type TrainingMetadata } from '../train/loop'
import type { TrainerEngine } from '../train/engine'
import { runOptimizer } from '../train/optimizer'
import { loadOptimizerState, OPTIMIZER_FILE, runTraining, saveOptimizerState, type ResumePoint, type RunProgress, type RunResult, type SavePoint } from '../train/runner'
import { openDistillEngine, type DistillEngine, type DistillStepInputs } from './engine'
import { softTargets } from './losses'
import { checkLayerPairs, defaultLayerPairs, featurePairs, type LayerPair } from './mapping'
import { planTaskBatches, type TaskMix } from './multitask'
import { DEFAULT_PHI_B, phi, rampTemperature } from './schedule'
import { cachedProvider, disposeTargets, estimateCacheBytes, onlineProvider, openTeacherRunner, type TeacherEngine, type TeacherExample, type TeacherNeeds, type TeacherProvider, type TeacherTargets } from './teacher'

/** A problem with the distillation inputs that the user can act on. */
export class DistillError extends Error {
  override name = 'DistillError'
}

export type KdMode = 'dynamic' | 'fixed' | 'hidden' | 'none'
export const KD_MODES: readonly KdMode[] = ['dynamic', 'fixed', 'hidden', 'none']

export interface DistillTask {
  /** Head name (one head per corpus; 'default' for a single corpus). */
  name: string
  train: readonly CorpusDocument[]
  dev?: readonly CorpusDocument[]
}

export interface TeacherSpec {
  model: BertTokenClassifier
  /** For logs and metadata (e.g. the checkpoint directory). */
  name?: string
  /** Feature pairs; default defaultLayerPairs(m, n, includeEmbeddings = more than one teacher). */
  layerPairs?: LayerPair[]
  /**
   * Teacher head giving the soft labels of each task (null: none). Default: the head with the
   * task's name and labels, else the teacher's only head when its labels equal the task's.
   */
  headFor?: Record<string, string | null>
}

export interface FixedWeights {
  /** α: soft-label weight; the gold loss gets 1 − α unless `hard` is given. */
  soft: number
  hard?: number
  /** β: weight of the summed feature losses. */
  feature: number
}

export const DISTILL_DEFAULTS = {
  kd: 'dynamic' as KdMode,
  temperature: 3,
  b: DEFAULT_PHI_B,
  fixedWeights: { soft: 0.5, feature: 1 } as FixedWeights,
  cacheBudgetBytes: 2 * 1024 ** 3,
} as const

/** The runner's progress, the step's φ and temperature, and the teacher cache's build. */
export interface DistillProgress extends Omit<RunProgress, 'kind'> {
  kind: RunProgress['kind'] | 'cache'
  phi: number
  temperature: number
  /** 'cache': examples done / total. */
  done?: number
  total?: number
}

export interface DistillOptions extends RunSettings {
  student: BertTokenClassifier
  teachers: TeacherSpec[]
  tokenizer: WordPieceTokenizer
  tasks: DistillTask[]
  kd?: KdMode
  /** Weights of the teachers' soft labels (normalised); default equal. */
  teacherWeights?: number[]
  /** Target temperature T (default 3). */
  temperature?: number
  /** 'ramp': 0.5, 1, … up to T in equal parts of training; default ramp with >1 teacher, else constant. */
  temperatureSchedule?: 'constant' | 'ramp'
  temperatureStart?: number
  temperatureIncrement?: number
  /** b in φ(s) (default 0.3). */
  b?: number
  /** α, β of the fixed-weight modes ('fixed', 'hidden'). */
  fixedWeights?: FixedWeights
  /** Multiply L_SL by T² (default true). */
  scaleSoftByT2?: boolean
  /** Positions of the soft loss: labelled word starts (default) or every real token. */
  softPositions?: 'labeled' | 'real'
  /** λ per task (default 1). */
  taskWeights?: Record<string, number>
  mix?: TaskMix
  /** 'auto' (default): cache the teacher outputs when they fit cacheBudgetBytes, else online. */
  teacherCache?: 'auto' | 'on' | 'off'
  cacheBudgetBytes?: number
  /** Engine of the teacher forward: 'auto' (onnxruntime if it loads, else tfjs), 'onnx', 'tfjs'. */
  teacherEngine?: TeacherEngine
  /** Ready providers (one per teacher) over buildDistillExamples(...).examples; not disposed here. */
  providers?: TeacherProvider[]
  onProgress?: (p: DistillProgress) => void
  /** Problems worth telling the user that do not stop the run (default: ignored). */
  onWarning?: (message: string) => void
  /**
   * Continue the run saved in outDir (the student already loaded from it by the caller): the
   * optimizer state, the projections W and the save point beside the checkpoint are read back.
   */
  resume?: boolean
}

export interface StepRecord {
  loss: number
  hard: number
  soft: number
  hidden: number
  attention: number
  phi: number
  temperature: number
  task: number
}

export interface DistillEpoch {
  epoch: number
  loss: number
  steps: number
  seconds: number
  dev?: { precision: number; recall: number; f1: number; perTask: Record<string, number> }
  saved: boolean
}

export interface DistillResult {
  kd: KdMode
  losses: number[]
  records: StepRecord[]
  steps: number
  plannedSteps: number
  epochs: DistillEpoch[]
  bestEpoch: number | null
  bestDevF1: number | null
  checkpointDir: string | null
  cancelled: boolean
  /** Stopped by patience before the last epoch. */
  stoppedEarly: boolean
  trainExamples: number
  trainTokens: number
  trainSeconds: number
  /** Part of trainSeconds spent getting teacher targets (online forward or cache copies). */
  teacherSeconds: number
  evalSeconds: number
  wallSeconds: number
  tokensPerSecond: number
  /** Engine that trained ('onnxruntime-cpu', 'tfjs-wasm', …) and why. */
  trainer: string
  trainerReason: string
  /** Epoch the run resumed after, when it resumed. */
  resumedAfterEpoch: number | null
  teachers: Array<{ name: string; engine: string; reason: string; cached: boolean; cacheBytes: number; buildSeconds: number; pairs: LayerPair[] }>
}

export interface DistillExamples {
  /** All tasks' examples, task by task (with the character channel's inputs when the student has one). */
  examples: Array<Example & Partial<PieceCharInputs>>
  /** Task index of each example. */
  task: number[]
  /** Global example ids of each task. */
  perTask: number[][]
  labelMaps: LabelMap[]
}

/** The training examples of every task (labels from the student's head of the task's name). */
export function buildDistillExamples(
  tasks: readonly DistillTask[],
  tokenizer: WordPieceTokenizer,
  headLabels: (task: string) => readonly string[],
  opts: { maxLength: number; sentenceLevel: boolean; chars?: { vocab: WordFeaturizer; config: CharCnnConfig } | null },
): DistillExamples {
  const examples: DistillExamples['examples'] = []
  const task: number[] = []
  const perTask: number[][] = []
  const labelMaps: LabelMap[] = []
  tasks.forEach((t, k) => {
    const lm = labelMapFromLabels(headLabels(t.name))
    labelMaps.push(lm)
    const ids: number[] = []
    const exOpts = { maxLength: opts.maxLength, sentenceLevel: opts.sentenceLevel }
    const chars = opts.chars
    // With a character channel one document at a time, so each example reads its own text.
    const own = chars ? t.train.flatMap((d) => attachCharInputs(documentsToExamples([d], tokenizer, lm, exOpts), d.text, chars.vocab, chars.config)) : documentsToExamples(t.train, tokenizer, lm, exOpts)
    for (const e of own) {
      if (!e.labels.some((l) => l !== -100)) continue
      ids.push(examples.length)
      examples.push(e)
      task.push(k)
    }
    perTask.push(ids)
  })
  return { examples, task, perTask, labelMaps }
}

/** Loss weights of a step. */
export function lossWeights(kd: KdMode, step: number, totalSteps: number, b = DEFAULT_PHI_B, fixed: FixedWeights = DISTILL_DEFAULTS.fixedWeights): { soft: number; hard: number; feature: number; hidden: boolean; attention: boolean } {
  switch (kd) {
    case 'dynamic': {
      const p = phi(step, totalSteps, b)
      return { soft: p, hard: 1 - p, feature: p, hidden: true, attention: true }
    }
    case 'fixed':
      return { soft: fixed.soft, hard: fixed.hard ?? 1 - fixed.soft, feature: fixed.feature, hidden: true, attention: true }
    case 'hidden':
      return { soft: fixed.soft, hard: fixed.hard ?? 1 - fixed.soft, feature: fixed.feature, hidden: true, attention: false }
    case 'none':
      return { soft: 0, hard: 1, feature: 0, hidden: false, attention: false }
    default:
      throw new DistillError(`unknown KD mode '${kd as string}' (${KD_MODES.join(', ')})`)
  }
}

function sameLabels(a: readonly string[] | undefined, b: readonly string[]): boolean {
  return !!a && a.length === b.length && a.every((l, i) => l === b[i])
}

/** Default soft-label head of a teacher for a task (see TeacherSpec.headFor). */
export function defaultTeacherHead(teacher: BertTokenClassifier, task: string, labels: readonly string[]): string | null {
  if (sameLabels(teacher.heads.get(task)?.labels, labels)) return task
  if (teacher.heads.size === 1) {
    const [name, info] = [...teacher.heads][0]
    if (sameLabels(info.labels, labels)) return name
  }
  return null
}

export async function distill(opts: DistillOptions): Promise<DistillResult> {
  const t0 = performance.now()
  const { student, tokenizer, tasks } = opts
  const kd = opts.kd ?? DISTILL_DEFAULTS.kd
  if (!KD_MODES.includes(kd)) throw new DistillError(`unknown KD mode '${kd}' (${KD_MODES.join(', ')})`)
  if (tasks.length === 0) throw new DistillError('distill: no tasks')
  const names = new Set<string>()
  for (const t of tasks) {
    if (names.has(t.name)) throw new DistillError(`task '${t.name}' is given twice`)
    names.add(t.name)
    if (!student.heads.has(t.name)) throw new DistillError(`the student has no head '${t.name}' (heads: ${[...student.heads.keys()].join(', ')})`)
  }
  const teachers = kd === 'none' ? [] : opts.teachers
  if (kd !== 'none' && teachers.length === 0) throw new DistillError(`KD mode '${kd}' needs at least one teacher`)
  const epochs = opts.epochs ?? TRAIN_DEFAULTS.epochs
  const batchSize = opts.batchSize ?? TRAIN_DEFAULTS.batchSize
  const peakLr = opts.lr ?? TRAIN_DEFAULTS.lr
  const seed = opts.seed ?? TRAIN_DEFAULTS.seed
  const maxLength = opts.maxLength ?? Math.min(TRAIN_DEFAULTS.maxLength, student.config.maxPositionEmbeddings)
  const sentenceLevel = opts.sentenceLevel ?? TRAIN_DEFAULTS.sentenceLevel
  const T = opts.temperature ?? DISTILL_DEFAULTS.temperature
  if (!(T > 0)) throw new DistillError(`temperature must be > 0, got ${T}`)
  const schedule = opts.temperatureSchedule ?? (teachers.length > 1 ? 'ramp' : 'constant')
  const b = opts.b ?? DISTILL_DEFAULTS.b
  const fixed = opts.fixedWeights ?? DISTILL_DEFAULTS.fixedWeights
  const scaleT2 = opts.scaleSoftByT2 ?? true
  const softPositions = opts.softPositions ?? 'labeled'
  const teacherWeights = opts.teacherWeights ?? teachers.map(() => 1)
  if (teacherWeights.length !== teachers.length) throw new DistillError(`${teacherWeights.length} teacher weights for ${teachers.length} teachers`)
  if (!(Number.isInteger(epochs) && epochs >= 1)) throw new DistillError(`epochs must be a positive integer, got ${epochs}`)

  const sc = student.config
  const pairs = teachers.map((t, k) => {
    const p = t.layerPairs ?? defaultLayerPairs(t.model.config.numHiddenLayers, sc.numHiddenLayers, teachers.length > 1)
    checkLayerPairs(p, t.model.config.numHiddenLayers, sc.numHiddenLayers, `teacher ${k + 1} layer pair`)
    return p
  })
  for (const [k, t] of teachers.entries()) {
    if (t.model.config.vocabSize !== sc.vocabSize) throw new DistillError(`teacher ${k + 1} has vocabulary size ${t.model.config.vocabSize}, the student ${sc.vocabSize}: teacher and student must share the tokenizer`)
  }

  const studentChars = student.config.charCnn && student.charVocab ? { vocab: student.charVocab, config: student.config.charCnn } : null
  for (const t of teachers) {
    const tc = t.model.config.charCnn
    if (!tc) continue
    // The batches carry one set of character inputs: the student's, which a teacher must read alike.
    const same = studentChars && JSON.stringify(tc) === JSON.stringify(studentChars.config) && t.model.charVocab!.chars.join('\n') === studentChars.vocab.chars.join('\n')
    if (!same) throw new DistillError(`teacher ${t.name}: its character channel (char_cnn, chars.txt) differs from the student's; a student made from it (distil --layers) shares it`)
  }
  const data = buildDistillExamples(tasks, tokenizer, (name) => student.heads.get(name)!.labels, { maxLength, sentenceLevel, chars: studentChars })
  if (data.examples.length === 0) throw new DistillError('no training examples: the training documents contain no tokens')
  const headFor = teachers.map((t) =>
    tasks.map((task, ti) => {
      const explicit = t.headFor?.[task.name]
      if (explicit !== undefined) {
        if (explicit !== null && !sameLabels(t.model.heads.get(explicit)?.labels, data.labelMaps[ti].labels)) {
          throw new DistillError(`teacher head '${explicit}' does not have the labels of task '${task.name}' (${data.labelMaps[ti].labels.join(' ')})`)
        }
        return explicit
      }
      return defaultTeacherHead(t.model, task.name, data.labelMaps[ti].labels)
    }),
  )
  if (kd !== 'none' && (kd === 'dynamic' || kd === 'fixed' || kd === 'hidden')) {
    tasks.forEach((task, ti) => {
      if (headFor.every((h) => h[ti] === null)) {
        opts.onWarning?.(`no teacher has a head with the labels of task '${task.name}': that task gets no soft labels`)
      }
    })
  }

  // Teacher targets: everything a run can ask for, then cached or online.
  const maxW = lossWeights(kd, 0, 1, b, fixed)
  const needsAll: TeacherNeeds[] = teachers.map((_, k) => ({
    logits: maxW.soft > 0,
    hidden: maxW.feature > 0 && maxW.hidden ? [...new Set(pairs[k].map((p) => p.teacher))] : [],
    attentions: maxW.feature > 0 && maxW.attention ? [...new Set(pairs[k].filter((p) => p.teacher > 0).map((p) => p.teacher))] : [],
  }))
  const ownProviders = !opts.providers
  let providers: TeacherProvider[]
  if (opts.providers) {
    if (opts.providers.length !== teachers.length) throw new DistillError(`${opts.providers.length} teacher providers for ${teachers.length} teachers`)
    providers = opts.providers
  } else {
    providers = []
    for (const [k, t] of teachers.entries()) {
      // A teacher without a character channel gets no character inputs (its graph has none).
      const withChars = !!t.model.config.charCnn
      const texs: TeacherExample[] = data.examples.map((e, i) => ({
        inputIds: e.inputIds,
        attentionMask: e.attentionMask,
        tokenTypeIds: e.tokenTypeIds,
        ...(withChars ? { charIds: e.charIds, shapeFlags: e.shapeFlags } : {}),
        head: headFor[k][data.task[i]],
      }))
      const mode = opts.teacherCache ?? 'auto'
      const est = estimateCacheBytes(
        texs.map((e) => e.inputIds.length),
        texs.map((e) => (needsAll[k].logits ? e.head : null)),
        t.model,
        needsAll[k],
      )
      // The teacher shares the machine with the trainer: --threads bounds both.
      const runner = await openTeacherRunner(t.model, opts.teacherEngine ?? 'auto', { threads: opts.threads })
      const cache = mode === 'on' || (mode === 'auto' && est <= (opts.cacheBudgetBytes ?? DISTILL_DEFAULTS.cacheBudgetBytes))
      if (cache) {
        providers.push(
          await cachedProvider(t.model, runner, texs, needsAll[k], {
            padTokenId: tokenizer.padId,
            onProgress: (done, total) => opts.onProgress?.({ kind: 'cache', epoch: 0, epochs, step: 0, totalSteps: 0, loss: 0, lr: 0, phi: 0, temperature: T, tokensPerSecond: 0, etaSeconds: 0, done, total }),
          }),
        )
      } else {
        providers.push(onlineProvider(t.model, runner))
      }
    }
  }

  const features = featurePairs(
    sc.hiddenSize,
    teachers.map((t, k) => ({ hiddenSize: t.model.config.hiddenSize, numAttentionHeads: t.model.config.numAttentionHeads, pairs: pairs[k], hidden: needsAll[k].hidden, attentions: needsAll[k].attentions })),
  )
  let resume: ResumePoint | undefined
  if (opts.resume) {
    if (!opts.outDir) throw new DistillError('resume needs the checkpoint directory (outDir) of the run to continue')
    const saved = loadOptimizerState(opts.outDir)
    if (!saved) throw new DistillError(`${opts.outDir}: no ${OPTIMIZER_FILE}, so there is no distillation run to resume`)
    for (const [name, p] of features.projections) {
      const value = saved.params.get(name)
      if (!value || value.length !== p.init.length) throw new DistillError(`${join(opts.outDir, OPTIMIZER_FILE)}: no saved ${name}; it was not written by this distillation run`)
      p.init = value
    }
    resume = { ...saved.point, bestEpoch: saved.point.epoch, bestDevF1: saved.point.dev?.f1 ?? null, optimizer: saved.state }
  }
  const lengths = data.perTask.map((ids) => ids.map((i) => data.examples[i].inputIds.length))
  // One corpus per batch (its head only); indices into data.examples.
  const planEpoch = (epoch: number) => planTaskBatches(lengths, { batchSize, seed, epoch, mix: opts.mix }).map((tb) => tb.indices.map((i) => data.perTask[tb.task][i]))
  const stepsPerEpoch = planEpoch(1).length
  const plannedSteps = Math.min(opts.maxSteps ?? Infinity, stepsPerEpoch * epochs)
  const temperatureAt = (s: number) =>
    schedule === 'ramp' ? rampTemperature(s, plannedSteps, { start: opts.temperatureStart, target: T, increment: opts.temperatureIncrement }) : T

  let engine: DistillEngine | null = null
  const records: StepRecord[] = []
  /** Optimizer steps done (φ and the temperature follow it; a resumed run starts where it stopped). */
  let stepIndex = resume?.step ?? 0
  let teacherMs = 0
  let tokensPerSecond = 0
  const teacherInfo = teachers.map((t, k) => ({
    name: t.name ?? `teacher ${k + 1}`,
    engine: providers[k].engine,
    reason: providers[k].reason,
    cached: providers[k].cached,
    cacheBytes: providers[k].cacheBytes,
    buildSeconds: providers[k].buildSeconds,
    pairs: pairs[k],
  }))
  const devTasks = tasks.filter((t) => t.dev && t.dev.length > 0)
  const devByEpoch = new Map<number, Record<string, number>>()

  /** The loss weights, temperature and teacher targets of step s on a batch of task `ti`. */
  const prepare = async (host: HostBatch, ti: number, s: number): Promise<{ inputs: DistillStepInputs; phi: number; dispose: () => void }> => {
    const head = tasks[ti].name
    const w = lossWeights(kd, s, plannedSteps, b, fixed)
    const temperature = temperatureAt(s)
    const lambda = opts.taskWeights?.[head] ?? 1
    const tStart = performance.now()
    const targets: Array<TeacherTargets | null> = []
    for (const [k, p] of providers.entries()) {
      const th = headFor[k][ti]
      const needs: TeacherNeeds = {
        logits: w.soft > 0 && th !== null,
        hidden: w.feature > 0 ? needsAll[k].hidden : [],
        attentions: w.feature > 0 ? needsAll[k].attentions : [],
      }
      if (!needs.logits && !needs.hidden.length && !needs.attentions.length) targets.push(null)
      else targets.push(await p.targets(host, host.indices, th, needs))
    }
    const withLogits = targets.map((t, k) => [t?.logits, teacherWeights[k]] as const).filter((x): x is readonly [tf.Tensor3D, number] => !!x[0])
    const soft = withLogits.length ? softTargets(withLogits.map((x) => x[0]), temperature, withLogits.map((x) => x[1])) : null
    teacherMs += performance.now() - tStart
    return {
      inputs: {
        head,
        weights: { soft: w.soft * lambda, hard: w.hard * lambda, feature: w.feature * lambda },
        temperature,
        soft,
        hidden: features.hidden.map((p) => targets[p.teacher]?.hidden.get(p.teacherLayer) ?? null),
        attention: features.attention.map((p) => targets[p.teacher]?.attentions.get(p.teacherLayer) ?? null),
      },
      // φ(s) is the soft weight of the dynamic mode (before λ); the other modes have none.
      phi: kd === 'dynamic' ? w.soft : NaN,
      dispose: () => {
        soft?.dispose()
        for (const t of targets) if (t) disposeTargets(t)
      },
    }
  }

  const save = async (point: SavePoint): Promise<string | null> => {
    if (!opts.outDir) return null
    const { epoch, step, dev } = point
    const first = tasks[0]
    const training: TrainingMetadata = {
      head: first.name,
      labels: student.heads.get(first.name)!.labels,
      ...(tasks.length > 1 ? { tasks: tasks.map((t) => t.name) } : {}),
      maxLength,
      stride: null,
      sentenceLevel,
      epoch,
      step,
      seed,
      batchSize,
      lr: peakLr,
      dev,
      trainer: engine!.trainer,
      trainerReason: engine!.reason,
      tokensPerSecond,
    }
    const distillation = {
      kd,
      teachers: teacherInfo.map(({ name, pairs: p }) => ({ name, layerPairs: p })),
      teacherWeights,
      temperature: T,
      temperatureSchedule: schedule,
      b,
      fixedWeights: fixed,
      scaleSoftByT2: scaleT2,
      softPositions,
      tasks: tasks.map((t) => t.name),
      mix: opts.mix ?? 'proportional',
      devPerTask: devByEpoch.get(epoch) ?? null,
    }
    await saveCheckpoint(opts.outDir, student, [...tokenizer.vocab], {
      lowercase: opts.checkpoint?.lowercase ?? tokenizer.lowercase,
      metadata: { ...opts.checkpoint?.metadata, training, distillation },
    })
    saveOptimizerState(opts.outDir, engine!.optimizerState(), point, { trainer: engine!.trainer }, engine!.projectionValues())
    return opts.outDir
  }

  let run: RunResult
  try {
    engine = await openDistillEngine({
      student,
      heads: tasks.map((t) => t.name),
      hiddenPairs: features.hidden,
      attentionPairs: features.attention,
      projections: features.projections,
      scaleT2,
      softPositions,
      optimizer: runOptimizer(peakLr, plannedSteps, opts),
      prefer: opts.trainer,
      threads: opts.threads,
      logger: opts.onWarning,
    })
    opts.onTrainer?.(engine.trainer, engine.reason)
    const distillEngine = engine
    let last = { phi: 0, temperature: T }
    // The runner's engine: a distillation step on the batch's task, its targets prepared here.
    const stepEngine: TrainerEngine = {
      trainer: distillEngine.trainer,
      reason: distillEngine.reason,
      async step(host, _labels, stepSeed) {
        const s = stepIndex++
        const ti = data.task[host.indices[0]]
        const { inputs, phi: phiValue, dispose } = await prepare(host, ti, s)
        try {
          const r = await distillEngine.step(host, inputs, stepSeed)
          records.push({ loss: r.loss, hard: r.hard, soft: r.soft, hidden: r.hidden, attention: r.attention, phi: phiValue, temperature: inputs.temperature, task: ti })
          last = { phi: kd === 'dynamic' ? phiValue : 0, temperature: inputs.temperature }
          return r
        } finally {
          dispose()
        }
      },
      currentLr: () => distillEngine.currentLr(),
      syncModel: () => distillEngine.syncModel(),
      optimizerState: () => distillEngine.optimizerState(),
      loadOptimizerState: (st) => distillEngine.loadOptimizerState(st),
      dispose: () => distillEngine.dispose(),
    }
    run = await runTraining({
      examples: data.examples as BatchableExample[],
      planEpoch,
      engine: stepEngine,
      labels: (host) => ({ [tasks[data.task[host.indices[0]]].name]: host.labels }),
      padTokenId: tokenizer.padId,
      epochs,
      batchSize,
      seed,
      plannedSteps,
      patience: opts.patience,
      peakLr,
      signal: opts.signal,
      onProgress: (p) => {
        tokensPerSecond = p.tokensPerSecond
        opts.onProgress?.({ ...p, phi: last.phi, temperature: last.temperature })
      },
      evaluate: devTasks.length
        ? async (epoch) => {
            const { byHead, mean } = await evaluateHeads(
              student,
              tokenizer,
              devTasks.map((t) => ({ head: t.name, dev: t.dev })),
              { batchSize: opts.evalBatchSize ?? TRAIN_DEFAULTS.evalBatchSize, maxLength, sentenceLevel, trainer: distillEngine.trainer },
            )
            devByEpoch.set(epoch, Object.fromEntries(Object.entries(byHead).map(([h, d]) => [h, d.f1])))
            return mean
          }
        : undefined,
      save: opts.outDir ? save : undefined,
      resume,
    })
    // The student object is the result: leave the latest weights in it.
    distillEngine.syncModel()
  } finally {
    await engine?.dispose()
    if (ownProviders) for (const p of providers) await p.dispose()
  }
  return {
    kd,
    losses: run.losses,
    records,
    steps: run.steps,
    plannedSteps,
    epochs: run.epochs.map((e) => ({ ...e, dev: e.dev ? { ...e.dev, perTask: devByEpoch.get(e.epoch) ?? {} } : undefined })),
    bestEpoch: run.bestEpoch,
    bestDevF1: run.bestDevF1,
    checkpointDir: run.checkpointDir,
    cancelled: run.cancelled,
    stoppedEarly: run.stoppedEarly,
    trainExamples: data.examples.length,
    trainTokens: run.trainTokens,
    trainSeconds: run.trainSeconds,
    teacherSeconds: teacherMs / 1000,
    evalSeconds: run.evalSeconds,
    wallSeconds: (performance.now() - t0) / 1000,
    tokensPerSecond: run.tokensPerSecond,
    trainer: engine!.trainer,
    trainerReason: engine!.reason,
    resumedAfterEpoch: resume ? resume.epoch : null,
    teachers: teacherInfo,
  }
}
