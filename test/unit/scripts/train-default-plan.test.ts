// train:default's word-lstm recipe without training: a head per entity type in every stage's
// command, the ship floor read from the merged (as `tag` gives it) scores of each corpus's type,
// the model card, and a run folder of the earlier per-corpus-head recipe refused, not resumed.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  belowFloor,
  crossKey,
  foreignStages,
  inParallel,
  scoreKey,
  SHIP_FLOOR,
  staleRecord,
  stageCommand,
  typeCorpora,
  wordBenchmark,
  wordModelCard,
  wordPlan,
  vectorsLmAndTeachers,
  type EvalSummary,
  type StageRecord,
} from '../../../scripts/train-default-plan'
import { benchmarkOf } from '../../../src/core/model/checkpoint-files'

const ROOT = resolve(__dirname, '../../..')
const DATA = '/data'
const OUT = '/runs/r1'
const M = `${DATA}/mtl-bioner`
const sets = typeCorpora(DATA)
const plan = wordPlan(OUT, DATA, sets)

let tmp: string
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'fastbioner-train-default-'))
})
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

/** The values of every `flag` in args, in order. */
const values = (args: readonly string[], flag: string) => args.flatMap((a, i) => (a === flag ? [args[i + 1]] : []))

const record = (stage: string, command: string[], summary: unknown = {}): StageRecord => ({ stage, command, wallSeconds: 60, finishedAt: '2026-12-01T00:00:00Z', summary })

/** An eval summary scoring the given types (F1 = precision = recall). */
function evalOf(f1ByType: Record<string, number>): EvalSummary {
  const types = Object.fromEntries(Object.entries(f1ByType).map(([t, f1]) => [t, { precision: f1, recall: f1, f1 }]))
  return { overall: { precision: 0, recall: 0, f1: 0, tp: 0, fp: 0, fn: 0 }, types }
}

/** Scores for every key of the plan's evaluation: own head `own`, merged `merged[corpus/type]` (without document rules 1 point less), every other head's types merged in at 0. */
function scoresOf(own: number, merged: Record<string, number>): Record<string, EvalSummary> {
  const out: Record<string, EvalSummary> = {}
  for (const s of sets) {
    out[scoreKey(s, 'devel')] = evalOf({ [s.type]: own })
    out[scoreKey(s, 'test')] = evalOf({ [s.type]: own })
    // Merged on a one-type gold: the other heads' types appear with only false positives.
    out[scoreKey(s, 'test', true)] = evalOf({ Chemical: 0, Disease: 0, Gene: 0, [s.type]: merged[`${s.corpus}/${s.type}`] })
    out[scoreKey(s, 'test', true, false)] = evalOf({ Chemical: 0, Disease: 0, Gene: 0, [s.type]: merged[`${s.corpus}/${s.type}`] - 0.01 })
  }
  return out
}

describe('the word-lstm plan: a head per entity type', () => {
  it('trains three teachers per head (one per seed), each on windows over documents: the disease teachers on both disease corpora, the disease-ncbi ones on NCBI-disease alone', () => {
    const heads = ['disease-ncbi', 'chemical', 'disease', 'gene']
    expect(plan.teachers.map((t) => [t.name, t.head, t.dir])).toEqual(heads.flatMap((head) => [42, 43, 44].map((seed) => [`teacher-${head}-doc-s${seed}`, head, `${OUT}/1-teacher-${head}-doc-s${seed}`])))
    expect(plan.teachers.map((t) => values(t.args, '--seed')[0])).toEqual(heads.flatMap(() => ['42', '43', '44']))
    const [ncbi, chemical, disease, gene] = [plan.teachers[0], plan.teachers[3], plan.teachers[6], plan.teachers[9]]
    // A seed's teacher differs from another of its head by the seed and the folder only.
    const other = (args: string[]) => args.map((a, i) => (args[i - 1] === '--seed' || args[i - 1] === '--out' ? '·' : a))
    expect(other(plan.teachers[7].args)).toEqual(other(disease.args))
    expect(other(plan.teachers[5].args)).toEqual(other(chemical.args))
    expect(values(ncbi.args, '--task')).toEqual([`disease-ncbi=${M}/NCBI-disease-IOB/train.tsv:${M}/NCBI-disease-IOB/devel.tsv`])
    // The shared head's teachers: the same command as before the NCBI-disease head (session 27's), so their runs are reused.
    expect(values(disease.args, '--task')).toEqual([
      `disease=${M}/NCBI-disease-IOB/train.tsv:${M}/NCBI-disease-IOB/devel.tsv`,
      `disease=${M}/BC5CDR-disease-IOB/train.tsv:${M}/BC5CDR-disease-IOB/devel.tsv`,
    ])
    expect(values(chemical.args, '--task')).toEqual([`chemical=${M}/BC5CDR-chem-IOB/train.tsv:${M}/BC5CDR-chem-IOB/devel.tsv`])
    expect(values(gene.args, '--task')).toEqual([`gene=${M}/BC2GM-IOB/train.tsv:${M}/BC2GM-IOB/devel.tsv`])
    expect(values(gene.args, '--map-types')).toEqual(['GENE=Gene'])
    for (const t of plan.teachers) {
      expect(t.args[0]).toBe('train')
      expect(values(t.args, '--arch')).toEqual(['word-lstm'])
      expect(values(t.args, '--out')).toEqual([t.dir])
      expect(t.args).toContain('--doc-level')
      // train's default width (2 × 200), so no flag; 15 minutes each.
      expect(t.args).not.toContain('--lstm-hidden')
      expect(values(t.args, '--minutes')).toEqual(['15'])
      expect(t.args).not.toContain('--teacher')
    }
    // The student is 2 × 300 (int8 runs its BiLSTM on int8 weights: the latency budget), its
    // rate falling to 0 over a fixed number of epochs.
    expect(values(plan.student.args, '--lstm-hidden')).toEqual(['300'])
    expect(values(plan.student.args, '--lr-schedule')).toEqual(['linear'])
    expect(values(plan.student.args, '--epochs')).toEqual(['10'])
    // Checkpoint averaging is off (WORD_STUDENT.averageLast): measured level on devel.
    expect(plan.student.args).not.toContain('--average-last')
    expect(plan.int8.args).toContain('--int8-lstm')
    // --teacher-hidden / --teacher-minutes: the width is a flag only when it is not train's default.
    const wider = wordPlan(OUT, DATA, sets, { lstmHidden: 300, minutes: 26 })
    for (const t of wider.teachers) {
      expect(values(t.args, '--lstm-hidden')).toEqual(['300'])
      expect(values(t.args, '--minutes')).toEqual(['26'])
    }
    expect(wider.student.args).toEqual(plan.student.args)
  })

  it('makes the word vectors first, and every teacher and the student start from them', () => {
    const vec = `${OUT}/0-vectors/words.vec`
    expect(plan.vectors.args).toEqual(['wordvec', '--text', `${DATA}/unlabeled/biomed-sentences.txt`, '--vec', vec, '--seed', '42'])
    expect(plan.vectors.dir).toBe(`${OUT}/0-vectors`)
    for (const s of [...plan.teachers, plan.student]) expect(values(s.args, '--word-vectors')).toEqual([vec])
  })

  it('trains the character LM, and only the chemical teachers read it (resumable like the teachers)', () => {
    const lm = `${OUT}/0-char-lm`
    expect(plan.charLm.args).toEqual(['charlm', '--text', `${DATA}/unlabeled/biomed-sentences.txt`, '--hidden', '256', '--seed', '42', '--minutes', '40', '--threads', '1', '--out', lm])
    expect(plan.charLm.resumeArgs).toEqual(['charlm', '--resume', '--minutes', '40', '--threads', '1', '--out', lm])
    for (const t of plan.teachers) {
      expect(values(t.args, '--char-lm'), t.name).toEqual(t.head === 'chemical' ? [lm] : [])
      expect(t.charLm, t.name).toBe(t.head === 'chemical')
    }
    expect(plan.student.args).not.toContain('--char-lm')
  })

  it('runs the character LM and the word vectors side by side, then the teachers that do not read the LM beside it, and those that do after it', async () => {
    const events: string[] = []
    let releaseLm: () => void = () => {}
    let releaseVectors: () => void = () => {}
    const lmFinished = new Promise<void>((r) => (releaseLm = r))
    const vectorsFinished = new Promise<void>((r) => (releaseVectors = r))
    const runs = vectorsLmAndTeachers(plan.vectors, plan.charLm, plan.teachers, 2, async (stage) => {
      events.push(`start ${stage.name}`)
      if (stage === plan.charLm) await lmFinished
      else if (stage === plan.vectors) await vectorsFinished
      else await new Promise((r) => setTimeout(r, 1))
      events.push(`end ${stage.name}`)
      return stage.name
    })
    await new Promise((r) => setTimeout(r, 20))
    // Both started at once; no teacher starts before the vectors are written.
    expect(events).toEqual(['start char-lm', 'start vectors'])
    releaseVectors()
    await new Promise((r) => setTimeout(r, 50))
    // While the LM trains, the nine teachers without it ran in the other slot; none of the chemical ones started.
    expect(events.filter((e) => e.startsWith('end teacher')).length).toBe(9)
    expect(events.some((e) => e.includes('chemical'))).toBe(false)
    releaseLm()
    const done = await runs
    expect(done.map(([s]) => s.name)).toEqual(['char-lm', 'vectors', ...plan.teachers.filter((t) => !t.charLm).map((t) => t.name), ...plan.teachers.filter((t) => t.charLm).map((t) => t.name)])
    expect(events.indexOf('end char-lm')).toBeLessThan(events.indexOf('start teacher-chemical-doc-s42'))
    // No teacher reads it: it does not run, and the vectors still come first.
    const without = plan.teachers.map((t) => ({ ...t, charLm: false }))
    const names = (await vectorsLmAndTeachers(plan.vectors, plan.charLm, without, 2, async (s) => s.name)).map(([s]) => s.name)
    expect(names).not.toContain('char-lm')
    expect(names[0]).toBe('vectors')
  })

  it("the student has the four corpora on three type heads and each head's teachers", () => {
    const a = plan.student.args
    expect(values(a, '--task').map((t) => t.split('=')[0])).toEqual(['disease-ncbi', 'chemical', 'disease', 'gene'])
    expect(values(a, '--task')).toContain(`disease=${M}/BC5CDR-disease-IOB/train.tsv:${M}/BC5CDR-disease-IOB/devel.tsv`)
    expect(values(a, '--task')).toContain(`disease-ncbi=${M}/NCBI-disease-IOB/train.tsv:${M}/NCBI-disease-IOB/devel.tsv`)
    expect(values(a, '--teacher')).toEqual(['disease-ncbi', 'chemical', 'disease', 'gene'].flatMap((h) => [42, 43, 44].map((seed) => `${h}=${OUT}/1-teacher-${h}-doc-s${seed}`)))
    // Windows of up to 64 words over documents (and transfer passages of 10 lines), not sentences.
    expect(a).toContain('--doc-level')
    expect(values(a, '--max-length')).toEqual(['64'])
    expect(values(a, '--transfer')).toEqual([`${DATA}/unlabeled/biomed-sentences.txt`])
    expect(values(a, '--transfer-sentences')).toEqual(['60000'])
    expect(values(a, '--dropout')).toEqual(['0.25'])
    expect(values(a, '--out')).toEqual([`${OUT}/2-student`])
    // None of the older recipe's per-corpus heads (ncbi, bc5cdr, bc2gm) is left anywhere in it.
    for (const s of [...plan.teachers, plan.student, plan.int8, plan.eval]) expect(s.args.join(' ')).not.toMatch(/(^|\s)(ncbi|bc5cdr|bc2gm)=|--head (ncbi|bc5cdr|bc2gm)\b/)
    // A stage stopped mid-run (a session ending) continues from its last kept epoch.
    // Teachers two at a time on one thread each; the student alone, on two.
    for (const s of [...plan.teachers, plan.student]) {
      expect(s.resumeArgs).toEqual(['train', '--resume', '--out', s.dir, '--threads', plan.teachers.includes(s as (typeof plan.teachers)[number]) ? '1' : '2'])
      expect(s.resumeMarker).toBe('optimizer.safetensors')
    }
    expect(values(plan.int8.args, '--head')).toEqual(['disease-ncbi'])
    expect(values(plan.int8.args, '--calibrate')).toEqual([`${M}/NCBI-disease-IOB/devel.tsv`])
  })

  it("--shared-disease-gold: the student's disease head also learns NCBI-disease's gold, without its devel; nothing else changes", () => {
    const shared = wordPlan(OUT, DATA, typeCorpora(DATA, { sharedDiseaseGold: true }))
    const tasksEnd = (args: readonly string[]) => args.indexOf('--map-types')
    expect(shared.student.args.slice(0, tasksEnd(shared.student.args))).toEqual([...plan.student.args.slice(0, tasksEnd(plan.student.args)), '--task', `disease=${M}/NCBI-disease-IOB/train.tsv`])
    expect(shared.student.args.slice(tasksEnd(shared.student.args))).toEqual(plan.student.args.slice(tasksEnd(plan.student.args)))
    for (const [a, b] of [[shared.vectors, plan.vectors], [shared.charLm, plan.charLm], ...shared.teachers.map((t, i) => [t, plan.teachers[i]]), [shared.int8, plan.int8]] as const) expect(a.args).toEqual(b.args)
    // The disease head on NCBI-disease test is no longer cross-corpus: that run is left out, the rest are the same.
    expect(shared.eval.runs.map((r) => r.key)).toEqual(plan.eval.runs.map((r) => r.key).filter((k) => k !== crossKey(sets[0], 'disease')))
  })

  it('--with-devel: every teacher and the student learn train and devel of each corpus, and none is scored on devel; nothing else changes', () => {
    const withDevel = wordPlan(OUT, DATA, typeCorpora(DATA, { withDevel: true }))
    const learnt = (c: (typeof sets)[number], head = c.head) => [`${head}=${c.dir}/train.tsv`, `${head}=${c.dir}/devel.tsv`]
    expect(values(withDevel.student.args, '--task')).toEqual(sets.flatMap((c) => learnt(c)))
    const disease = withDevel.teachers.find((t) => t.name === 'teacher-disease-doc-s42')!
    expect(values(disease.args, '--task')).toEqual([...learnt(sets[0], 'disease'), ...learnt(sets[2])])
    for (const s of [...withDevel.teachers, withDevel.student]) expect(values(s.args, '--task').join(' ')).not.toContain(':')
    const withoutTasks = (args: readonly string[]) => args.filter((a, i) => a !== '--task' && args[i - 1] !== '--task')
    for (const [a, b] of [[withDevel.student, plan.student], ...withDevel.teachers.map((t, i) => [t, plan.teachers[i]])] as const) expect(withoutTasks(a.args)).toEqual(withoutTasks(b.args))
    expect(withDevel.int8.args).toEqual(plan.int8.args)
  })

  it("quantizes the student's model: no stage after it on the gold corpora alone", () => {
    expect(values(plan.int8.args, '--model')).toEqual([plan.student.dir])
    expect(plan.shipDir).toBe(`${OUT}/3-int8`)
    expect(values(plan.int8.args, '--out')).toEqual([plan.shipDir])
    expect(plan.eval.dir).toBe(`${OUT}/4-eval`)
  })

  it("evaluates each corpus's type with its head (devel, test) and test with every head merged (no --head), with and without the document rules", () => {
    expect(sets.map((s) => `${s.corpus}/${s.type}`)).toEqual(Object.keys(SHIP_FLOOR))
    const runs = plan.eval.runs
    // 4 a corpus, and the two Disease heads on each other's corpus (cross-corpus).
    expect(runs).toHaveLength(18)
    const bc5Disease = sets[2]
    const own = runs.find((r) => r.key === scoreKey(bc5Disease, 'test'))!
    expect(values(own.args, '--head')).toEqual(['disease'])
    expect(values(own.args, '--gold')).toEqual([`${M}/BC5CDR-disease-IOB/test.tsv`])
    const merged = runs.filter((r) => r.key.endsWith('/merged'))
    expect(merged.map((r) => r.key)).toEqual(['NCBI-disease/Disease/test/merged', 'BC5CDR/Chemical/test/merged', 'BC5CDR/Disease/test/merged', 'BC2GM/Gene/test/merged'])
    for (const r of merged) {
      expect(r.args).not.toContain('--head')
      expect(r.args).not.toContain('--no-document-rules')
      expect(values(r.args, '--model')).toEqual([plan.shipDir])
    }
    const raw = runs.filter((r) => r.key.endsWith('/no-rules'))
    expect(raw.map((r) => r.key)).toEqual(merged.map((r) => `${r.key}/no-rules`))
    for (const r of raw) {
      expect(r.args).not.toContain('--head')
      expect(r.args).toContain('--no-document-rules')
    }
    const cross = runs.filter((r) => r.key.includes('/head:'))
    expect(cross.map((r) => [r.key, values(r.args, '--head')[0], values(r.args, '--gold')[0]])).toEqual([
      ['NCBI-disease/Disease/test/head:disease', 'disease', `${M}/NCBI-disease-IOB/test.tsv`],
      ['BC5CDR/Disease/test/head:disease-ncbi', 'disease-ncbi', `${M}/BC5CDR-disease-IOB/test.tsv`],
    ])
    // The stage's record says every eval it ran.
    expect(stageCommand(plan.eval).filter((a) => a === 'eval')).toHaveLength(18)
  })
})

describe('teachers side by side', () => {
  const tick = () => new Promise((r) => setTimeout(r, 5))

  it('runs at most N at a time, every item once, results in order', async () => {
    let running = 0
    let most = 0
    const started: number[] = []
    const out = await inParallel([1, 2, 3, 4, 5], 2, async (x) => {
      started.push(x)
      most = Math.max(most, ++running)
      await tick()
      running--
      return x * 10
    })
    expect(out).toEqual([10, 20, 30, 40, 50])
    expect(started).toEqual([1, 2, 3, 4, 5])
    expect(most).toBe(2)
  })

  it('after a failure starts nothing more, lets the one under way finish, and throws it', async () => {
    const finished: number[] = []
    const started: number[] = []
    const run = inParallel([1, 2, 3, 4], 2, async (x) => {
      started.push(x)
      if (x === 1) throw new Error('teacher 1 failed')
      await tick()
      finished.push(x)
      return x
    })
    await expect(run).rejects.toThrow('teacher 1 failed')
    expect(finished).toEqual([2])
    expect(started).toEqual([1, 2])
  })
})

describe('the ship floor', () => {
  const atFloor = Object.fromEntries(Object.entries(SHIP_FLOOR).map(([k, f]) => [k, f + 0.001]))

  it('passes when every corpus type is at the floor merged, whatever the other heads add', () => {
    expect(belowFloor(sets, scoresOf(0.95, atFloor))).toEqual([])
  })

  it('reads the merged score of the corpus type, not its own head', () => {
    const short = belowFloor(sets, scoresOf(0.95, { ...atFloor, 'BC5CDR/Disease': 0.7 }))
    expect(short).toEqual(['BC5CDR Disease: test F1 70.0 < 77.8'])
  })

  it('counts a missing merged score as below', () => {
    const scores = scoresOf(0.95, atFloor)
    delete scores['BC2GM/Gene/test/merged']
    expect(belowFloor(sets, scores)).toEqual(['BC2GM Gene: test F1 0.0 < 76.9'])
  })
})

describe("the shipped folder's benchmark", () => {
  const merged = { 'NCBI-disease/Disease': 0.837, 'BC5CDR/Chemical': 0.9, 'BC5CDR/Disease': 0.799, 'BC2GM/Gene': 0.788 }

  it("states each corpus type's merged test score with the rules (what tag gives), not its own head's or the no-rules one", () => {
    const b = wordBenchmark(sets, scoresOf(0.95, merged))
    expect(b.split).toBe('test')
    expect(b.scores).toEqual(Object.entries(merged).map(([k, f1]) => ({ corpus: k.split('/')[0], type: k.split('/')[1], f1 })))
    // What the app reads back from fastbioner.json is exactly this.
    expect(benchmarkOf({ benchmark: b }, 'fastbioner.json')).toEqual(b)
  })

  it('leaves out a corpus whose merged score is missing', () => {
    const scores = scoresOf(0.95, merged)
    delete scores['BC2GM/Gene/test/merged']
    expect(wordBenchmark(sets, scores).scores.map((r) => r.type)).toEqual(['Disease', 'Chemical', 'Disease'])
  })
})

describe('an earlier run folder', () => {
  const oldStudent = [
    'fastbioner', 'train', '--task', `ncbi=${M}/NCBI-disease-IOB/train.tsv:${M}/NCBI-disease-IOB/devel.tsv`, '--task', `bc5cdr=${M}/BC5CDR-IOB/train.tsv:${M}/BC5CDR-IOB/devel.tsv`,
    '--task', `bc2gm=${M}/BC2GM-IOB/train.tsv:${M}/BC2GM-IOB/devel.tsv`, '--map-types', 'GENE=Gene', '--arch', 'word-lstm', '--teacher', `ncbi=${OUT}/1-teacher-ncbi`, '--out', `${OUT}/2-student`,
  ]

  it("a record of another command is stale; this stage's command run with another --out is not", () => {
    expect(staleRecord(plan.student, record('student', oldStudent))).toMatch(/2-student\/stage\.json records another command .*argument 4: recorded 'ncbi=.*', this recipe 'disease-ncbi=/)
    const byHand = stageCommand(plan.student).map((a) => (a === `${OUT}/2-student` ? '/elsewhere/student-30k' : a))
    expect(staleRecord(plan.student, record('student', byHand))).toBeNull()
    expect(staleRecord(plan.student, record('student', [...stageCommand(plan.student), '--patience', '3']))).toMatch(/argument \d+: recorded '--patience', this recipe '\(end\)'/)
    expect(staleRecord(plan.eval, record('eval', ['fastbioner', 'eval', '…']))).not.toBeNull()
  })

  it('is refused: the per-corpus teachers and the old student, int8 and eval records are listed; this recipe\'s own records are not', () => {
    const out = join(tmp, 'old')
    const p = wordPlan(out, DATA, sets)
    const put = (dir: string, command: string[]) => {
      mkdirSync(join(out, dir), { recursive: true })
      writeFileSync(join(out, dir, 'stage.json'), JSON.stringify(record(dir, command)))
    }
    expect(foreignStages(out, [...p.teachers, p.student, p.int8, p.eval])).toEqual([])
    put('1-teacher-ncbi', ['fastbioner', 'train', '--task', 'ncbi=a:b', '--out', join(out, '1-teacher-ncbi')])
    put('1-teacher-disease-doc-s42', stageCommand(p.teachers.find((t) => t.name === 'teacher-disease-doc-s42')!))
    // A sentence-level teacher of the recipe before every teacher read windows over documents.
    put('1-teacher-gene-s43', ['fastbioner', 'train', '--task', 'gene=a:b', '--lstm-hidden', '300', '--out', join(out, '1-teacher-gene-s43')])
    put('2-student', oldStudent)
    // The per-corpus recipe's int8 (head ncbi) in 3-int8; the layout with the gold stage (2026-12-03 to
    // 12-05): its model in 3-gold, int8 in 4-int8.
    put('3-int8', ['fastbioner', 'quantize', '--model', join(out, '2-student'), '--out', join(out, '3-int8'), '--calibrate', `${M}/NCBI-disease-IOB/devel.tsv`, '--head', 'ncbi', '--max-f1-drop', '2'])
    put('3-gold', ['fastbioner', 'train', '--init', join(out, '2-student'), '--out', join(out, '3-gold')])
    put('4-int8', ['fastbioner', 'quantize', '--model', join(out, '3-gold'), '--out', join(out, '4-int8')])
    put('4-eval', ['fastbioner', 'eval', '…'])
    mkdirSync(join(out, 'notes'))
    const found = foreignStages(out, [...p.teachers, p.student, p.int8, p.eval])
    expect(found).toHaveLength(7)
    expect(found.slice(0, 4).sort()).toEqual(['1-teacher-gene-s43', '1-teacher-ncbi', '3-gold', '4-int8'].map((d) => `${join(out, d)}: a stage folder this recipe does not make`))
    expect(found.slice(4).map((l) => l.split(' ')[0])).toEqual(['2-student', '3-int8', '4-eval'].map((d) => join(out, d, 'stage.json')))
  })

  it('train:default refuses it before training anything', () => {
    const data = join(tmp, 'data')
    for (const s of typeCorpora(data)) {
      mkdirSync(s.dir, { recursive: true })
      for (const f of ['train.tsv', 'devel.tsv', 'test.tsv']) writeFileSync(join(s.dir, f), '')
    }
    mkdirSync(join(data, 'unlabeled'))
    writeFileSync(join(data, 'unlabeled', 'biomed-sentences.txt'), '')
    const out = join(tmp, 'old-run')
    mkdirSync(join(out, '1-teacher-bc2gm'), { recursive: true })
    writeFileSync(join(out, '1-teacher-bc2gm', 'stage.json'), JSON.stringify(record('teacher-bc2gm', ['fastbioner', 'train'])))
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'train-default.ts'), '--out', out, '--data', data], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 })
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('holds stages this recipe (a head per entity type) did not make')
    expect(r.stderr).toContain(`${join(out, '1-teacher-bc2gm')}: a stage folder this recipe does not make`)
    expect(r.stderr).not.toContain('starting')
  })
})

describe('the model card', () => {
  it("lists the heads per type with their corpora and their teachers', the merged and own-head scores, and the cross-corpus scores of a type's heads on each other's corpus", () => {
    const modelDir = join(tmp, 'model')
    mkdirSync(modelDir, { recursive: true })
    writeFileSync(join(modelDir, 'config.json'), JSON.stringify({ word_dim: 100, word_vocab_size: 25000, char_dim: 30, char_vocab_size: 90, char_filters: 50, char_width: 3, max_chars: 20, lstm_hidden: 200 }))
    const run = (f1: number, byCorpus?: Array<{ head: string; dev: string; f1: number }>) => ({ best_epoch: 2, best_dev_f1: f1, epochs: [{ epoch: 1, dev: { f1: f1 - 0.01 } }, { epoch: 2, dev: { f1 } }], dev_by_corpus: byCorpus })
    const teachers = plan.teachers.map((t, i) => ({
      head: t.head,
      record: record(t.name, stageCommand(t), run(0.8 + i / 100, t.name === 'teacher-disease-doc-s42' ? [{ head: 'disease', dev: `${M}/NCBI-disease-IOB/devel.tsv`, f1: 0.84 }, { head: 'disease', dev: `${M}/BC5CDR-disease-IOB/devel.tsv`, f1: 0.77 }] : undefined)),
    }))
    const trained = record('student', stageCommand(plan.student), { ...run(0.805), parameters: 3_000_000, tokens_per_second: 2000, train_examples: 66_000 })
    const int8 = record('int8', stageCommand(plan.int8), { calibration: { float: { f1: 0.816 }, int8: { f1: 0.815 }, bytesRatio: 0.4 } })
    const vectors = record('vectors', stageCommand(plan.vectors), { vectors: 21794, dim: 100, words: 3_364_940 })
    trained.summary = { ...(trained.summary as object), word_vectors: { initialised: 21000, vocabulary: 24998 } }
    const merged = { 'NCBI-disease/Disease': 0.804, 'BC5CDR/Chemical': 0.869, 'BC5CDR/Disease': 0.769, 'BC2GM/Gene': 0.75 }
    const charLm = { ...record('char-lm', stageCommand(plan.charLm), { hidden: 256, heldOut: [{ bitsPerChar: 2.1 }, { bitsPerChar: 1.874 }], epochs: 2, minutes: 60 }), wallSeconds: 3620 }
    const input = { data: DATA, out: OUT, sets, vectors, charLm, teachers, trained, int8, scores: scoresOf(0.9, merged), latency: { pieces: 300, medianMs: 5, p90Ms: 6, runs: 30, loadAverage: 2 }, evalWall: 120, modelDir }
    const card = wordModelCard(input)
    // A record without the other processes' cores says the load average and why it may mislead;
    // one with them says those.
    expect(card).toContain('on 2 CPU threads; 1-minute load average 2.00 when timed (before the evaluations')
    expect(wordModelCard({ ...input, latency: { ...input.latency, otherCores: 0.031 } })).toContain('on 2 CPU threads; other processes used 0.03 CPU cores while it was timed (1-minute load average 2.00, which lags).')
    // The same recipe with one head per type (as before the NCBI-disease head).
    const oneHead = sets.map((x) => ({ ...x, head: x.type.toLowerCase(), alsoTeaches: undefined }))
    // The BiLSTM's int8 weights are said only when the shipped folder's quantization record has them.
    expect(card).not.toContain('The BiLSTM runs on int8 weights')
    writeFileSync(join(modelDir, 'fastbioner.json'), JSON.stringify({ quantization: { int8Lstm: true } }))
    expect(wordModelCard(input)).toContain(
      'MB on disk. The BiLSTM runs on int8 weights\n(one scale per gate column and direction',
    )
    expect(card).toContain('for the student on the teachers\' text dropout 0.25 and\na rate falling linearly from 2e-3 to 0 over its 10 epochs')
    expect(card).toContain('trained on that head\'s corpora; each reads windows of up to 128 words over whole documents instead of single sentences; the `chemical` teachers also read, per word, the states of a character language model of the unlabelled sentences (a forward and a backward LSTM of 256, Akbik et al. 2018; 1.87 bits per held-out character), which the student does not run, and from')
    expect(card).toContain("words) | `fastbioner wordvec --text $DATA/unlabeled/biomed-sentences.txt --vec $OUT/0-vectors/words.vec --seed 42` | 1.0 min |\n| 0 character LM: forward and backward LSTM 256 of the unlabelled sentences (held out 1.874 bits per character) | `fastbioner charlm --text $DATA/unlabeled/biomed-sentences.txt --hidden 256 --seed 42 --minutes 40 --threads 1 --out $OUT/0-char-lm` | 60.3 min |\n| 1.1 teacher")
    expect(card).toContain('| head | trained on | its teachers trained on | types |\n|---|---|---|---|\n| `disease-ncbi` | NCBI-disease | NCBI-disease | Disease |\n| `chemical` | BC5CDR | BC5CDR | Chemical |\n| `disease` | BC5CDR | NCBI-disease, BC5CDR | Disease |\n| `gene` | BC2GM | BC2GM | Gene |')
    expect(card).toContain('| BC5CDR | Disease | 76.9 | 76.9 | 76.9 | 75.9 |')
    expect(card).toContain('the rules see parts of abstracts')
    expect(card).toContain('| BC2GM | test | Gene | `gene` | 90.0 | 90.0 | 90.0 |')
    // The shared head's teacher: its NCBI-disease devel found although that corpus's own head is another.
    expect(card).toContain('| 1.7 teacher `disease` seed 42 (devel F1 NCBI-disease Disease 84.0, BC5CDR Disease 77.0; mean 86.0')
    expect(card).toContain('| 1.12 teacher `gene` seed 44 (devel F1 91.0')
    expect(card).toContain('It learnt from 12 teachers, 3 word taggers per head (one per seed, BiLSTM 2 × 200)')
    // Said once, not on each row, when every teacher reads windows.
    expect(card).toContain('| 1.4 teacher `chemical` seed 42 (devel F1')
    expect(card).not.toContain('on windows over documents,')
    // A folder whose teachers read sentences, but for two of the disease head: said per row and counted.
    const mixed = teachers.map((t, i) => (i < 2 ? t : { ...t, record: { ...t.record, command: t.record.command.filter((a) => a !== '--doc-level') } }))
    const mixedCard = wordModelCard({ ...input, teachers: mixed })
    expect(mixedCard).toContain("trained on that head's corpora; 2 of them (head `disease-ncbi`) read windows over whole documents instead of single sentences;")
    expect(mixedCard).toContain('| 1.2 teacher `disease-ncbi` on windows over documents, seed 43 (devel F1')
    expect(mixedCard).toContain('| 1.3 teacher `disease-ncbi` seed 44 (devel F1')
    expect(card).toContain('It reads a document in overlapping windows of up to 64 words across sentence boundaries\n(train --doc-level), not one sentence at a time.')
    expect(card).toContain('and from 66 k training windows: the gold')
    expect(card).toContain('(25000 words of the training text; 21000 of them started from fastText skip-gram vectors of the unlabelled sentences, 21794 vectors learnt from 3.4 M words)')
    expect(card).toContain('| 0 word vectors: fastText skip-gram, 100 dimensions, of the unlabelled sentences\' words (21794 words) | `fastbioner wordvec --text $DATA/unlabeled/biomed-sentences.txt --vec $OUT/0-vectors/words.vec --seed 42` |')
    expect(card).toContain('Cross-corpus: not measured (no head was scored on another corpus of its type)')
    expect(wordModelCard({ ...input, sets: oneHead })).toContain('Cross-corpus: not measured. Every head is trained on every corpus of its type here')
    const crossScores = { ...input.scores, [crossKey(sets[0], 'disease')]: evalOf({ Disease: 0.52 }), [crossKey(sets[2], 'disease-ncbi')]: evalOf({ Disease: 0.48 }) }
    expect(wordModelCard({ ...input, scores: crossScores })).toContain(
      'Cross-corpus (test, with the document rules): the `disease` head on NCBI-disease Disease scores 52.0 (its own head 90.0); the `disease-ncbi` head on BC5CDR Disease scores 48.0 (its own head 90.0).',
    )
    expect(card).toContain('Student: best epoch 2 of 2 by the mean devel F1 over the corpora (80.5).')
    // Checkpoint averaging: the card says which weights were kept, and what the other choice scored.
    const averaged = (kept: boolean) => wordModelCard({ ...input, trained: { ...trained, summary: { ...(trained.summary as object), ...(kept ? { best_epoch: 2, best_dev_f1: 0.81 } : {}), averaged: { epochs: [1, 2], dev: { f1: kept ? 0.81 : 0.8 }, kept } } } })
    expect(averaged(true)).toContain("Student: the mean of the weights of epochs 1, 2 of 2 (checkpoint averaging) by the mean devel F1 over the corpora (81.0), above the best single epoch's (2, 80.5).")
    expect(averaged(false)).toContain('Student: best epoch 2 of 2 by the mean devel F1 over the corpora (80.5); the mean of the weights of epochs 1, 2 scored 80.0 and was not kept.')
    expect(card).toContain("| 3 int8 of the student's model (NCBI-disease devel F1, head `disease-ncbi`: 81.6 float → 81.5 int8, 0.40× bytes) | `fastbioner quantize --model $OUT/2-student")
    expect(card).toContain('| 4 evaluation + latency |')
    // One blank line between the stage table and the student line; a stage run by hand says so between them.
    expect(card).toMatch(/with and without the document rules \| 2\.0 min \|\n\nStudent: best epoch/)
    const noted = wordModelCard({ ...input, vectors: { ...vectors, note: 'run by hand elsewhere' } })
    expect(noted).toMatch(/\| 2\.0 min \|\n\nStage vectors: run by hand elsewhere\.\n\nStudent: best epoch/)
    expect(card).not.toMatch(/gold corpora (alone|only)|gold stage/)
    expect(card).toContain('per head: one head per entity type, but Disease has one per corpus (`disease-ncbi` on NCBI-disease, `disease` on BC5CDR), whose guidelines\ndisagree. Tagging keeps, per document, the mentions of the head whose training corpus the document\nreads like')
    // The disease head on both corpora's gold (--shared-disease-gold): its row and the routing text say so.
    const sharedCard = wordModelCard({ ...input, sets: typeCorpora(DATA, { sharedDiseaseGold: true }) })
    expect(sharedCard).toContain('| `disease` | NCBI-disease, BC5CDR | NCBI-disease, BC5CDR | Disease |')
    expect(sharedCard).toContain('but Disease has 2 heads (`disease-ncbi` on NCBI-disease, `disease` on NCBI-disease and BC5CDR), whose guidelines')
    // A recipe with one head per type says so.
    expect(wordModelCard({ ...input, sets: oneHead })).toContain('(the `disease` head on NCBI-disease and BC5CDR, each\ncorpus teaching only its own sentences)')
    // A run on train + devel (--with-devel): no devel scores, no devel choice; the recipe's flag and what it means are said.
    const develSets = typeCorpora(DATA, { withDevel: true })
    const lastOf = (n: number) => ({ best_epoch: n, best_dev_f1: null, epochs: Array.from({ length: n }, (_, i) => ({ epoch: i + 1 })) })
    const develCard = wordModelCard({
      ...input,
      sets: develSets,
      teachers: teachers.map((t) => ({ ...t, record: { ...t.record, summary: lastOf(9) } })),
      trained: { ...trained, summary: { ...(trained.summary as object), ...lastOf(10) } },
    })
    expect(develCard).toContain('| 1.1 teacher `disease-ncbi` seed 42 (train + devel, the last of 9 epochs) |')
    expect(develCard).toContain('Student: the last of its 10 epochs (no devel held out).')
    expect(develCard).toContain('`npm run train:default -- --out DIR --with-devel` (reads `../shared/data`). Every stage learns')
    expect(develCard).toContain('| `disease` | BC5CDR (train + devel) | NCBI-disease, BC5CDR (train + devel) | Disease |')
    expect(develCard).toContain('| BC2GM | test | Gene | `gene` | 90.0 | 90.0 | 90.0 |')
    expect(develCard).toContain('per corpus and type: devel (not reported: training data here) and test with its head,')
    expect(develCard).not.toMatch(/\| devel \||devel F1 [0-9]|by the mean devel F1/)
    expect(card).toContain('| BC2GM | devel | Gene | `gene` |')
    expect(card).toContain('retrain from your corrections.\n\n## What it is\n')
    expect(card).toContain('`fastbioner train --task disease=$DATA/mtl-bioner/NCBI-disease-IOB/train.tsv')
    expect(card).not.toMatch(/`(ncbi|bc5cdr|bc2gm)`/)
  })
})
