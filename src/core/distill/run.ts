// Distillation from checkpoint directories to a checkpoint directory: what `fastbioner distill`
// and the benchmark call. Loads the teachers (dropout off, frozen), builds the student from the
// first (or `initTeacher`) teacher, picks each task's labels, runs distill() and saves the best
// devel epoch.

import { buildLabelMap } from '../nlp/bio'
import { DEFAULT_HEAD, type BertTokenClassifier } from '../model/bert'
import { loadCheckpoint } from '../model/checkpoint'
import { WordPieceTokenizer } from '../nlp/tokenizer'
import { distill, DistillError, type DistillOptions, type DistillResult, type DistillTask } from './distill'
import type { LayerPair } from './mapping'
import { createStudent, type Student, type StudentOptions } from './student'

export interface DistillRunOptions extends Omit<DistillOptions, 'student' | 'teachers' | 'tokenizer' | 'tasks' | 'outDir'> {
  teacherDirs: string[]
  /** Teacher (index) whose embeddings and layers initialise the student; default 0. */
  initTeacher?: number
  layers: number
  width?: StudentOptions['width']
  tasks: DistillTask[]
  /** Per teacher; default uniform mapping (embedding pair added with several teachers). */
  layerPairs?: Array<LayerPair[] | undefined>
  outDir: string
  log?: (line: string) => void
}

export interface DistillRunResult {
  result: DistillResult
  layerMap: number[]
  inherited: boolean
  parameters: number
  heads: Record<string, string[]>
}

function typesOf(task: DistillTask): Set<string> {
  return new Set(task.train.flatMap((d) => d.mentions.map((m) => m.type)))
}

/** The labels a task's student head gets: the teacher head's when it covers the task's types. */
export function taskLabels(teacher: BertTokenClassifier, task: DistillTask): string[] {
  const types = typesOf(task)
  const candidates = [teacher.heads.get(task.name), task.name === DEFAULT_HEAD || teacher.heads.size === 1 ? [...teacher.heads.values()][0] : undefined]
  for (const c of candidates) {
    if (!c) continue
    const have = new Set(c.labels.filter((l) => l !== 'O').map((l) => l.slice(2)))
    if ([...types].every((t) => have.has(t))) return [...c.labels]
  }
  if (types.size === 0) throw new DistillError(`task '${task.name}': the training documents have no entity mentions`)
  return buildLabelMap(types).labels
}

/** The student of an interrupted run, as its last save left it in outDir. */
async function resumedStudent(outDir: string, layers: number): Promise<Student> {
  let ck
  try {
    ck = await loadCheckpoint(outDir)
  } catch (e) {
    throw new DistillError(`${outDir}: no student to resume (${(e as Error).message})`)
  }
  const info = (ck.metadata as { student?: { layerMap?: number[]; inherited?: boolean } } | undefined)?.student
  if (!info?.layerMap) {
    ck.model.dispose()
    throw new DistillError(`${outDir}: the checkpoint was not written by a distillation run; there is nothing to resume`)
  }
  if (ck.config.numHiddenLayers !== layers) {
    ck.model.dispose()
    throw new DistillError(`${outDir}: the student has ${ck.config.numHiddenLayers} layers, not ${layers}; resume with the options the run was started with`)
  }
  return { model: ck.model, layerMap: info.layerMap, inherited: info.inherited ?? false, sources: new Map() }
}

export async function distillCheckpoints(o: DistillRunOptions): Promise<DistillRunResult> {
  const log = o.log ?? (() => {})
  if (o.teacherDirs.length === 0) throw new DistillError('no teacher checkpoint given')
  const loaded = []
  try {
    for (const dir of o.teacherDirs) {
      const ck = await loadCheckpoint(dir, { trainable: false })
      for (const n of ck.notes) log(`note: ${dir}: ${n}`)
      loaded.push({ dir, ...ck })
    }
    const first = loaded[0]
    for (const t of loaded.slice(1)) {
      if (t.vocab.length !== first.vocab.length || t.vocab.some((w, i) => w !== first.vocab[i]) || t.lowercase !== first.lowercase) {
        throw new DistillError(`${t.dir}: its vocabulary or casing differs from ${first.dir}'s; all teachers must share one tokenizer (the student uses it)`)
      }
    }
    const init = loaded[o.initTeacher ?? 0]
    if (!init) throw new DistillError(`initTeacher ${o.initTeacher} is not one of the ${loaded.length} teachers`)
    const heads: Record<string, string[]> = {}
    for (const t of o.tasks) heads[t.name] = taskLabels(init.model, t)
    const student = o.resume ? await resumedStudent(o.outDir, o.layers) : createStudent(init.model, { layers: o.layers, width: o.width, heads, seed: o.seed })
    const tokenizer = new WordPieceTokenizer(first.vocab, { lowercase: first.lowercase, source: `${first.dir}/vocab.txt` })
    log(
      `student: ${o.layers} layers × ${student.model.config.hiddenSize} (${(student.model.numParameters() / 1e6).toFixed(2)}M parameters), ` +
        (student.inherited ? `initialised from ${init.dir}: embeddings + teacher layers ${student.layerMap.join(' ')}` : 'randomly initialised (width differs from the teacher)'),
    )
    try {
      const result = await distill({
        ...o,
        student: student.model,
        teachers: loaded.map((t, k) => ({ model: t.model, name: t.dir, layerPairs: o.layerPairs?.[k] })),
        tokenizer,
        tasks: o.tasks,
        outDir: o.outDir,
        checkpoint: { lowercase: first.lowercase, metadata: { ...o.checkpoint?.metadata, student: { layerMap: student.layerMap, initTeacher: init.dir, inherited: student.inherited } } },
      })
      return { result, layerMap: student.layerMap, inherited: student.inherited, parameters: student.model.numParameters(), heads }
    } finally {
      student.model.dispose()
    }
  } finally {
    for (const t of loaded) t.model.dispose()
  }
}
