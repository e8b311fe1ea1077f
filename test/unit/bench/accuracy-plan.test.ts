// bench:accuracy's pure parts: statistics, variant selection, run planning and resume, scores of
// multi-task heads, the table and docs/ACCURACY.md. No training here.
import { describe, expect, it } from 'vitest'
import {
  BASELINE,
  isMultiTask,
  mean,
  pendingRuns,
  planRuns,
  renderDoc,
  renderTable,
  runKey,
  sampleSd,
  scoredDevF1,
  scoreOtherHead,
  selectVariants,
  summarise,
  VARIANTS,
  type StoredRun,
  type TrainSummary,
  type Variant,
} from '../../../bench/accuracy-plan'

const variant = (name: string) => VARIANTS.find((v) => v.name === name)!

function summary(f1: number, wall = 300, byHead: Record<string, number> = { default: f1 }): TrainSummary {
  return {
    best_dev_f1: f1,
    best_epoch: 3,
    dev_by_head: Object.fromEntries(Object.entries(byHead).map(([h, x]) => [h, { f1: x }])),
    steps: 1098,
    planned_steps: 1098,
    wall_seconds: wall,
    train_seconds: wall - 20,
    tokens_per_second: 3000,
    trainer: 'onnxruntime-cpu',
    epochs: [],
  }
}

function stored(name: string, seed: number, f1: number, o: Partial<StoredRun> = {}): StoredRun {
  return {
    variant: name,
    description: `${name} lever`,
    seed,
    target: 'ncbi',
    head: null,
    dev_f1: f1,
    command: ['node', 'bin/fastbioner.js', 'train', '--preset', 'cpu-small', '--seed', String(seed), '--max-steps', '42', '--out', 'MODEL_DIR'],
    steps_budget: 1098,
    threads: 1,
    cores: 2,
    cpu: 'Test CPU',
    load_average_end: [1.5, 1, 1],
    finished_at: `2026-01-0${seed - 40}T00:00:00.000Z`,
    summary: summary(f1),
    ...o,
  }
}

describe('bench:accuracy statistics', () => {
  it('mean and sample standard deviation (n − 1); sd is NaN below two values', () => {
    expect(mean([0.5, 0.6, 0.7])).toBeCloseTo(0.6, 12)
    expect(sampleSd([1, 2, 3, 4])).toBeCloseTo(Math.sqrt(5 / 3), 12)
    expect(sampleSd([0.61, 0.61])).toBe(0)
    expect(sampleSd([0.6])).toBeNaN()
    expect(mean([])).toBeNaN()
  })
})

describe('bench:accuracy variants and planning', () => {
  it('the table: unique names, the baseline first, one multi-task variant', () => {
    const names = VARIANTS.map((v) => v.name)
    expect(new Set(names).size).toBe(names.length)
    expect(names[0]).toBe(BASELINE)
    expect(VARIANTS.filter(isMultiTask).map((v) => v.name)).toEqual(['multitask'])
  })

  it('a variant that needs a checkpoint is skipped with the reason when its option is absent, and takes the folder when given', () => {
    const none = selectVariants(VARIANTS, undefined, {})
    expect(none.run.map((v) => v.name)).not.toContain('mlm')
    expect(none.skipped).toEqual([
      { variant: 'mlm', reason: expect.stringContaining('--mlm DIR') },
      { variant: 'wordvec', reason: expect.stringContaining('--wordvec DIR') },
      { variant: 'electra', reason: expect.stringContaining('--electra DIR') },
    ])
    const withMlm = selectVariants(VARIANTS, ['mlm', BASELINE], { mlm: '/ckpt/mlm' })
    expect(withMlm.run.map((v) => v.name)).toEqual([BASELINE, 'mlm'])
    const t = { name: 'ncbi', train: 't.tsv', devel: 'd.tsv', test: 'x.tsv' }
    const flags = variant('mlm').flags({ target: t, tasks: [t], checkpoints: { mlm: '/ckpt/mlm' } })
    expect(flags.slice(flags.indexOf('--init'), flags.indexOf('--init') + 2)).toEqual(['--init', '/ckpt/mlm'])
  })

  it('--only with an unknown variant is an error naming it', () => {
    expect(() => selectVariants(VARIANTS, ['scratch', 'crf2'], {})).toThrow(/unknown variant\(s\) crf2/)
  })

  it('multi-task flags give one --task per corpus with its train and devel files', () => {
    const a = { name: 'ncbi', train: 'n/train.tsv', devel: 'n/devel.tsv', test: 'n/test.tsv' }
    const b = { name: 'bc5cdr_disease', train: 'b/train.tsv', devel: 'b/devel.tsv', test: 'b/test.tsv' }
    const flags = variant('multitask').flags({ target: a, tasks: [a, b], checkpoints: {} })
    expect(flags.filter((_, i) => flags[i - 1] === '--task')).toEqual(['ncbi=n/train.tsv:n/devel.tsv', 'bc5cdr_disease=b/train.tsv:b/devel.tsv'])
  })

  it('runs are seed-major; the extra target of a multi-task variant is read from its main run, not trained', () => {
    const vs = [variant('scratch'), variant('augment'), variant('multitask')]
    const plan = planRuns(vs, [42, 43], [{ variant: variant('multitask'), target: 'bc5cdr_disease' }, { variant: variant('augment'), target: 'bc5cdr_disease' }])
    expect(plan.map((r) => r.key)).toEqual([
      'scratch-s42', 'augment-s42', 'multitask-s42', 'scratch-s43', 'augment-s43', 'multitask-s43',
      'multitask@bc5cdr_disease-s42', 'augment@bc5cdr_disease-s42', 'multitask@bc5cdr_disease-s43', 'augment@bc5cdr_disease-s43',
    ])
    expect(plan.find((r) => r.key === 'multitask@bc5cdr_disease-s43')!.from).toBe('multitask-s43')
    expect(plan.find((r) => r.key === 'augment@bc5cdr_disease-s43')!.from).toBeUndefined()
  })

  it('resume: stored runs and runs read from another are not trained again', () => {
    const plan = planRuns([variant('scratch'), variant('multitask')], [42, 43], [{ variant: variant('multitask'), target: 'bc5cdr_disease' }])
    const todo = pendingRuns(plan, new Set([runKey('scratch', 42), runKey('multitask', 43)]))
    expect(todo.map((r) => r.key)).toEqual(['multitask-s42', 'scratch-s43'])
    expect(pendingRuns(plan, new Set(plan.map((r) => r.key)))).toEqual([])
  })
})

describe('bench:accuracy scores', () => {
  it("a multi-task run counts its target head's devel F1, not the heads' mean", () => {
    const s = summary(0.7, 300, { ncbi: 0.62, bc5cdr_disease: 0.78 })
    expect(scoredDevF1(s, 'ncbi')).toBe(0.62)
    expect(scoredDevF1(s, null)).toBe(0.7)
    expect(() => scoredDevF1(s, 'chem')).toThrow(/no devel scores for head 'chem'.*ncbi, bc5cdr_disease/)
    expect(() => scoredDevF1({ ...s, best_dev_f1: null }, null)).toThrow(/no devel F1/)
  })

  it('another head of a multi-task run becomes that target’s result, without the test score', () => {
    const run = stored('multitask', 42, 0.62, { head: 'ncbi', summary: summary(0.7, 300, { ncbi: 0.62, bc5cdr_disease: 0.78 }), test: { f1: 0.6, precision: 0.6, recall: 0.6, command: [] } })
    const [planned] = planRuns([], [42], [{ variant: variant('multitask'), target: 'bc5cdr_disease' }])
    const other = scoreOtherHead(run, planned)
    expect(other).toMatchObject({ target: 'bc5cdr_disease', head: 'bc5cdr_disease', dev_f1: 0.78, derived_from: 'multitask-s42', seed: 42 })
    expect(other.test).toBeUndefined()
  })
})

describe('bench:accuracy table and doc', () => {
  const runs = [
    stored('augment', 43, 0.64),
    stored('scratch', 42, 0.6, { summary: summary(0.6, 200) }),
    stored('scratch', 43, 0.62, { summary: summary(0.62, 400) }),
    stored('augment', 42, 0.66),
    stored('multitask', 42, 0.5, { target: 'bc5cdr_disease', head: 'bc5cdr_disease', derived_from: 'multitask-s42' }),
  ]
  const order = VARIANTS.map((v) => v.name)

  it('one row per variant in table order: mean ± sd (n), seeds ascending, mean wall time, Δ to the baseline', () => {
    const rows = summarise(runs, 'ncbi', order)
    expect(rows.map((r) => r.variant)).toEqual(['scratch', 'augment'])
    expect(rows[0].meanF1).toBeCloseTo(0.61, 12)
    expect(rows[0].meanWallSeconds).toBe(300)
    expect(rows[0].delta).toBeNull()
    expect(rows[1].delta).toBeCloseTo(0.04, 12)
    const table = renderTable(rows).split('\n')
    expect(table).toHaveLength(4)
    expect(table[2]).toBe('| scratch | scratch lever | 0.610 ± 0.014 (2) | 42: 0.600, 43: 0.620 | 5.0 min | – |')
    expect(table[3]).toContain('| 0.650 ± 0.014 (2) | 42: 0.660, 43: 0.640 |')
    expect(table[3]).toMatch(/\| \+0\.040 \|$/)
    const worse = renderTable(summarise([stored('scratch', 42, 0.6), stored('augment', 42, 0.55)], 'ncbi', order)).split('\n')[3]
    expect(worse).toMatch(/0\.550 ± – \(1\) .*\| −0\.050 \|$/)
  })

  it('docs/ACCURACY.md: a table per target, one command per variant with SEED, the load averages', () => {
    const doc = renderDoc(runs, { benchCommand: 'npm run bench:accuracy -- --threads 1', corpusTitles: { ncbi: 'NCBI-disease', bc5cdr_disease: 'BC5CDR-disease' }, variantOrder: order })
    expect(doc).toContain('`npm run bench:accuracy -- --threads 1`')
    expect(doc).toContain('budget of 1098 optimizer steps')
    expect(doc.indexOf('## NCBI-disease devel')).toBeLessThan(doc.indexOf('## BC5CDR-disease devel'))
    const commands = doc.slice(doc.indexOf('```'), doc.lastIndexOf('```'))
    expect(commands.match(/^# /gm)).toHaveLength(2)
    expect(commands.indexOf('# scratch')).toBeLessThan(commands.indexOf('# augment'))
    // Only the seed's value is replaced, not another argument that happens to equal it.
    expect(commands).toContain('--seed SEED --max-steps 42')
    expect(doc).toContain('2 cores (Test CPU)')
    expect(doc).toMatch(/min 1\.50, mean 1\.50, max 1\.50/)
    expect(doc).not.toContain('different step budgets')
    expect(renderDoc([...runs, stored('crf', 44, 0.7, { steps_budget: 500 })], { benchCommand: 'x', corpusTitles: {}, variantOrder: order })).toContain('different step budgets (500, 1098)')
    const withNotes = renderDoc(runs, { benchCommand: 'x', corpusTitles: {}, variantOrder: order, notes: '## Reading the results\n\nCRF helps.\n' })
    expect(withNotes.indexOf('## Reading the results')).toBeGreaterThan(withNotes.indexOf('| variant |'))
    expect(withNotes.indexOf('## Reading the results')).toBeLessThan(withNotes.indexOf('## Commands'))
  })

  it('a variant asked for its flags without the checkpoint it needs throws instead of passing undefined', () => {
    const t = { name: 'ncbi', train: 't', devel: 'd', test: 'x' }
    expect(() => (variant('mlm') as Variant).flags({ target: t, tasks: [t], checkpoints: {} })).toThrow(/--mlm DIR/)
  })
})
