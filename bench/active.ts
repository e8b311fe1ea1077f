// Active learning with a simulated annotator (issue 30, item 1): for each strategy × seed, a seed
// word tagger from scratch on k documents, then rounds of N documents chosen by the strategy,
// corrected to the gold, the model retrained warm-started with the app's retrain; devel F1 and the
// edits after every round. The engine is core/active/simulate; this file reads the corpus, stores
// results and writes docs/ACTIVE.md.
//
//   npm run bench:active -- [--corpus ncbi|bc5cdr] [--strategies order,random,least-confidence,margin,entropy,diverse]
//       [--seeds 1,2,3] [--seed-docs 20] [--batch 50] [--max-docs 300] [--seed-epochs 10] [--retrain-epochs 3]
//       [--retrain-steps 200] [--threads N] [--data DIR] [--out DIR] [--pilot] [--report]
//       [--new-type TYPE --base MODEL_DIR] [--latency [--workspace-docs 1000]]
//
// --latency (issue 30 item 3) measures one round's wait on a workspace of --workspace-docs
// documents (the pool, devel, then unlabelled sentences in documents of 10): from "I finished this
// batch" to "suggestions of the retrained model": the retrain warm-started on the reviewed
// documents (--retrain-epochs, --retrain-steps), then re-tagging every unreviewed document. Each
// retrain runs twice in the process, as in the app's long-lived model host: the first pays for
// opening the training sessions, the second finds them open. Reviewed: k + N and --max-docs.
//
// --new-type teaches TYPE to a word tagger of other types (issue 30 item 2: e.g. Gene on BC2GM to a
// chemical/disease model): the seed documents are reviewed with the base model and it is
// retrained on them; the annotator adds TYPE only and keeps the model's other suggestions; devel F1
// is TYPE's. The report gives documents and model minutes to F1 ≥ 0.6 and 0.7.
//
// Each run is stored as <out>/<corpus>-<strategy>-s<seed>.json after every round (default out:
// bench-results/active); a complete stored run with the same settings is not made again, an
// incomplete one starts over. The seed model of a corpus × seed is kept as
// <out>/<corpus>-seed-k<k>-e<epochs>-s<seed>.model so every strategy starts from the same model.
// --report only rewrites docs/ACTIVE.md and its charts (docs/active/*.svg) from the stored runs.
// --pilot marks the runs as a short first look in the report; bench/active-notes.md (the reading of
// the results, by hand) is appended. Progress goes to standard error.

import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { FORM_DEFAULTS, RETRAIN_RECIPE } from '../src/shared/recipes'
import type { CorpusDocument } from '../src/shared/domain'
import { readCorpusFile } from '../src/core/corpus'
import { mapMentionTypes, parseTypeMap } from '../src/core/corpus/type-map'
import { writeFileAtomic } from '../src/core/fs/atomic'
import { loadWordTagger, saveWordTagger } from '../src/core/model/word-tagger'
import { seedDocuments, simulate, tagWith, trainSeedModel, type WordModel } from '../src/core/active/simulate'
import { transferDocuments } from '../src/core/train/transfer'
import { planWordRetrain, retrainWordModel } from '../src/core/train/word-retrain'
import { parseStrategy, STRATEGIES, type Strategy } from '../src/core/active/strategies'
import { chartsOf, curves, renderTables, renderThresholds, runKey, sameProtocol, type ActiveSettings, type StoredActiveRun } from './active-report'
import { benchCli } from './cli'

const ROOT = resolve(__dirname, '..')
const { values: a } = parseArgs({
  options: {
    corpus: { type: 'string', default: 'ncbi' },
    strategies: { type: 'string', default: STRATEGIES.join(',') },
    seeds: { type: 'string', default: '1' },
    'seed-docs': { type: 'string', default: '20' },
    batch: { type: 'string', default: '50' },
    'max-docs': { type: 'string', default: '300' },
    'seed-epochs': { type: 'string', default: String(FORM_DEFAULTS.wordTaggerEpochs) },
    'retrain-epochs': { type: 'string', default: String(RETRAIN_RECIPE.epochs) },
    'retrain-steps': { type: 'string', default: String(RETRAIN_RECIPE.maxSteps) },
    threads: { type: 'string' },
    data: { type: 'string', default: resolve(ROOT, '../shared/data') },
    out: { type: 'string', default: resolve(ROOT, 'bench-results/active') },
    pilot: { type: 'boolean', default: false },
    report: { type: 'boolean', default: false },
    'new-type': { type: 'string' },
    latency: { type: 'boolean', default: false },
    'workspace-docs': { type: 'string', default: '1000' },
    base: { type: 'string' },
  },
})

const cli = benchCli('bench:active')
// Annotated, so that TypeScript narrows after a call (a destructured never-function does not).
const fail: (msg: string) => never = cli.fail
const { log, positiveInt } = cli

/** Pool = the training split, devel = the devel split; NCBI's four disease subtypes are one type. */
const CORPORA: Record<string, { title: string; load: (data: string) => Promise<{ pool: CorpusDocument[]; dev: CorpusDocument[] }> }> = {
  ncbi: {
    title: 'NCBI-disease',
    async load(data) {
      const map = parseTypeMap('SpecificDisease,DiseaseClass,Modifier,CompositeMention=Disease')
      const read = async (f: string) => mapMentionTypes((await readCorpusFile(join(data, 'ncbi-disease', f), 'pubtator')).documents, map)
      return { pool: await read('train.pubtator'), dev: await read('devel.pubtator') }
    },
  },
  bc5cdr: {
    title: 'BC5CDR (chemical + disease)',
    async load(data) {
      // Sentence-level: documents of 10 sentences (the issue's rule), the reader's default.
      const read = async (f: string) => (await readCorpusFile(join(data, 'mtl-bioner', 'BC5CDR-IOB', f), 'conll', { sentencesPerDocument: 10 })).documents
      return { pool: await read('train.tsv'), dev: await read('devel.tsv') }
    },
  },
  bc2gm: {
    title: 'BC2GM (gene)',
    async load(data) {
      const map = parseTypeMap('GENE=Gene')
      const read = async (f: string) => mapMentionTypes((await readCorpusFile(join(data, 'mtl-bioner', 'BC2GM-IOB', f), 'conll', { sentencesPerDocument: 10 })).documents, map)
      return { pool: await read('train.tsv'), dev: await read('devel.tsv') }
    },
  },
}

/** Runs of the new-type scenario are stored and reported under a corpus key of their own. */
const corpusKey = (corpus: string, newType: string | null) => (newType ? `${corpus}-new-${newType.toLowerCase()}` : corpus)
const NEW_TYPE_THRESHOLDS = [0.6, 0.7]

const outDir = resolve(a.out!)
const STRATEGY_ORDER: readonly Strategy[] = STRATEGIES

function readStored(): StoredActiveRun[] {
  if (!existsSync(outDir)) return []
  return readdirSync(outDir)
    .filter((f) => /-s\d+\.json$/.test(f))
    .map((f) => {
      try {
        return JSON.parse(readFileSync(join(outDir, f), 'utf8')) as StoredActiveRun
      } catch (e) {
        fail(`${join(outDir, f)}: not a stored result (${(e as Error).message}); move it away to rerun that run`)
      }
    })
}

function report(): void {
  const runs = readStored()
  const docPath = join(ROOT, 'docs/ACTIVE.md')
  const chartDir = join(ROOT, 'docs/active')
  mkdirSync(chartDir, { recursive: true })
  const parts: string[] = []
  parts.push('# Active learning, measured with a simulated annotator (issue 30)\n')
  parts.push(`Written by \`npm run bench:active -- --report --out ${relative(ROOT, outDir)}\` from the runs stored there (bench/active.ts; the engine is src/core/active/simulate.ts). Do not edit by hand.\n`)
  parts.push(
    'Protocol: the training split is the pool, its gold hidden from the model. A seed word tagger (the app\'s default model kind, character-CNN + BiLSTM-CRF) is trained from scratch on k seeded documents (the same for every strategy of a seed; their mentions count as typed in). Each round the strategy picks N documents using the current model; the simulated annotator replaces the model\'s suggestions by the gold, and the edits that takes are counted (src/core/eval/edits.ts: a suggestion paired with a gold mention by exact span, else largest overlap, is accepted, retyped and/or re-bounded; unpaired suggestions are rejected, unpaired gold mentions added); then the model is retrained warm-started from the current one on every reviewed document with the app\'s retrain (src/core/train/word-retrain.ts, which the app\'s retrain job calls: half the recipe\'s learning rate, the model\'s vocabularies grown with the reviewed words and characters), and devel F1 is measured (exact spans, conlleval semantics).\n',
  )
  parts.push('Strategies (src/core/active/strategies.ts): **order** the pool in document order (what a person does today); **random** seeded; **least-confidence** 1 − mean top label probability over words (the review queue\'s score today); **margin** 1 − mean (top − second); **entropy** mean normalised label entropy; **diverse** the most uncertain document (least confidence) of each of N k-means clusters of TF-IDF document vectors.\n')
  const keys = [...new Set(runs.map((r) => r.settings.corpus))].sort((x, y) => Object.keys(CORPORA).indexOf(x) - Object.keys(CORPORA).indexOf(y) || x.localeCompare(y))
  for (const corpus of keys) {
    const mine = runs.filter((r) => r.settings.corpus === corpus)
    const s = mine[0].settings
    const base = Object.keys(CORPORA).find((k) => corpusKey(k, s.newType?.type ?? null) === corpus)
    if (!base) continue
    const c = CORPORA[base]
    const cs = curves(mine, corpus, STRATEGY_ORDER)
    const pilot = mine.some((r) => r.pilot)
    const title = s.newType ? `${c.title}: teaching ${s.newType.type} to a model without it` : c.title
    parts.push(`## ${title}${pilot ? ' — PILOT (a short first look, not the issue\'s protocol)' : ''}\n`)
    if (s.newType) {
      parts.push(`New-type scenario: the base model \`${s.newType.base}\` does not know ${s.newType.type}. The k seed documents are reviewed with it and it is retrained on them (no model from scratch); in every reviewed document the annotator adds the ${s.newType.type} mentions of the gold and keeps the model's suggestions of its other types as they are (the corpus does not annotate them); edits, suggestions and devel F1 count ${s.newType.type} only.\n`)
      parts.push(renderThresholds(cs, NEW_TYPE_THRESHOLDS))
    }
    if (pilot) parts.push(`> **Pilot.** ${mine.length} run(s), 1 seed, k = ${s.seedDocs}, N = ${s.batch}, up to ${s.maxDocs} documents, not the issue's protocol (all six strategies, N = 50 up to 300 documents, 3 seeds for document order, random and the chosen default). One seed cannot separate strategies whose curves differ by less than the seed-to-seed spread (±0.004 devel F1 for full training in docs/ACCURACY.md, larger with 20–120 documents); read the numbers as a smoke test of the loop and an order of magnitude of costs.\n`)
    parts.push(`Settings: pool ${s.poolSize} documents, devel ${s.devSize}; k = ${s.seedDocs} seed documents (${s.newType ? 'the base model retrained on them' : `seed model ${s.seedEpochs} epochs from scratch`}), N = ${s.batch} per round, up to ${s.maxDocs}; retrain ${s.retrainEpochs} epochs${s.retrainSteps ? `, at most ${s.retrainSteps} steps` : ''}; ${s.threads ?? 'default'} thread(s).\n`)
    parts.push(renderTables(cs))
    const charts = chartsOf(cs, title)
    writeFileSync(join(chartDir, `${corpus}-f1-vs-documents.svg`), charts.byDocs)
    writeFileSync(join(chartDir, `${corpus}-f1-vs-corrections.svg`), charts.byEdits)
    parts.push(`![${title}: devel F1 vs documents reviewed](active/${corpus}-f1-vs-documents.svg)\n`)
    parts.push(`![${title}: devel F1 vs corrections made](active/${corpus}-f1-vs-corrections.svg)\n`)
    const lat = latencySection(corpus)
    if (lat) parts.push(lat)
    parts.push('Runs (command, start and end, load average of the machine at start → end, over its CPUs):\n')
    for (const r of mine.sort((x, y) => x.started.localeCompare(y.started))) {
      const load = (l: number[] | null) => (l ? l.map((x) => x.toFixed(2)).join(' ') : '?')
      parts.push(`- ${runKey(r.settings)}${r.complete ? '' : ' (incomplete, left out)'}: \`${r.command}\`, ${r.started} → ${r.finished ?? '…'}, load ${load(r.loadAverage.start)} → ${load(r.loadAverage.end)} on ${r.cpus} CPUs`)
    }
    parts.push('')
  }
  // Hand-written reading of the results, kept apart so that rewriting the tables keeps it.
  const notesPath = join(ROOT, 'bench', 'active-notes.md')
  if (existsSync(notesPath)) parts.push(readFileSync(notesPath, 'utf8').trim(), '')
  writeFileSync(docPath, parts.join('\n'))
  log(`bench:active: wrote ${relative(ROOT, docPath)} and its charts in ${relative(ROOT, chartDir)}/ from ${runs.length} stored run(s)`)
}

export interface LatencyRecord {
  corpus: string
  workspaceDocs: number
  reviewed: number
  retrainEpochs: number
  retrainSteps: number | null
  threads: number | null
  /** Wall seconds: the first retrain in the process (sessions opened), the same retrain again (sessions open), re-tagging the unreviewed documents. */
  seconds: { retrainFirst: number; retrainAgain: number; tag: number }
  steps: number
  tagged: number
  measured: string
  loadAverage: { start: number[]; end: number[] }
  cpus: number
  command: string
}

/** The workspace of the latency measurement: pool, devel, then unlabelled sentences 10 to a document. */
function latencyWorkspace(pool: readonly CorpusDocument[], dev: readonly CorpusDocument[], size: number, data: string): CorpusDocument[] {
  const docs = [...pool, ...dev].slice(0, size)
  if (docs.length < size) {
    const need = (size - docs.length) * 10
    const lines = readFileSync(join(data, 'unlabeled', 'biomed-sentences.txt'), 'utf8').split('\n', need + 1).filter((l) => l.trim()).slice(0, need)
    const sentences = transferDocuments(lines)
    for (let i = 0; i < sentences.length && docs.length < size; i += 10) {
      const text = sentences.slice(i, i + 10).map((d) => d.text).join(' ')
      docs.push({ id: `unlabelled-${i / 10 + 1}`, text, passages: [{ type: 'abstract', offset: 0, length: text.length }], mentions: [] })
    }
  }
  if (docs.length < size) fail(`--workspace-docs ${size}: only ${docs.length} documents available`)
  return docs
}

async function latency(corpus: string, pool: CorpusDocument[], dev: CorpusDocument[], o: { seedDocs: number; batch: number; maxDocs: number; seedEpochs: number; retrainEpochs: number; retrainSteps: number | null; threads: number | null; command: string }): Promise<void> {
  const size = positiveInt(a['workspace-docs']!, '--workspace-docs')
  const workspace = latencyWorkspace(pool, dev, size, resolve(a.data!))
  const seedDir = join(outDir, `${corpus}-seed-k${o.seedDocs}-e${o.seedEpochs}-s1.model`)
  const seeds = seedDocuments(pool.length, o.seedDocs, 1)
  const seedModel: WordModel = existsSync(join(seedDir, 'config.json')) ? loadWordTagger(seedDir) : await trainSeedModel(seeds.map((i) => pool[i]), { seed: 1, seedEpochs: o.seedEpochs, threads: o.threads ?? undefined })
  const records: LatencyRecord[] = []
  for (const reviewedCount of [...new Set([o.seedDocs + o.batch, o.maxDocs])]) {
    // The seed documents, then the pool in order: which documents does not change the time.
    const seedSet = new Set(seeds)
    const reviewed = [...seeds, ...pool.map((_, i) => i).filter((i) => !seedSet.has(i))].slice(0, reviewedCount)
    const docs = reviewed.map((i) => pool[i])
    const reviewedIds = new Set(docs.map((d) => d.id))
    const unreviewed = workspace.filter((d) => !reviewedIds.has(d.id))
    const plan = planWordRetrain(seedModel, [...new Set(docs.flatMap((d) => d.mentions.map((m) => m.type)))].sort())
    const start = loadavg()
    const retrain = async () => {
      const t0 = performance.now()
      const r = await retrainWordModel(seedModel, docs, plan, { epochs: o.retrainEpochs, maxSteps: o.retrainSteps ?? undefined, seed: 1, threads: o.threads ?? undefined })
      return { r, seconds: (performance.now() - t0) / 1000 }
    }
    const first = await retrain()
    const again = await retrain()
    const t0 = performance.now()
    const tagged = await tagWith(again.r.model, unreviewed, o.threads ?? undefined)
    const tagSeconds = (performance.now() - t0) / 1000
    const rec: LatencyRecord = {
      corpus,
      workspaceDocs: size,
      reviewed: reviewedCount,
      retrainEpochs: o.retrainEpochs,
      retrainSteps: o.retrainSteps,
      threads: o.threads,
      seconds: { retrainFirst: first.seconds, retrainAgain: again.seconds, tag: tagSeconds },
      steps: again.r.steps,
      tagged: tagged.length,
      measured: new Date().toISOString(),
      loadAverage: { start, end: loadavg() },
      cpus: cpus().length,
      command: o.command,
    }
    log(`bench:active: latency, ${reviewedCount} reviewed of ${size}: retrain ${first.seconds.toFixed(1)} s first, ${again.seconds.toFixed(1)} s again (${again.r.steps} steps), re-tag ${tagged.length} documents ${tagSeconds.toFixed(1)} s; load ${start[0].toFixed(2)} → ${loadavg()[0].toFixed(2)}`)
    records.push(rec)
  }
  writeFileAtomic(join(outDir, `${corpus}-latency.json`), [JSON.stringify(records, null, 1) + '\n'])
}

/** The latency table of a corpus, if measured. */
function latencySection(corpus: string): string | null {
  const path = join(outDir, `${corpus}-latency.json`)
  if (!existsSync(path)) return null
  const recs = JSON.parse(readFileSync(path, 'utf8')) as LatencyRecord[]
  const lines = ['### Round latency (issue 30 item 3)', '', `From "I finished this batch" to "suggestions of the retrained model" on a ${recs[0].workspaceDocs}-document workspace: the retrain warm-started on every reviewed document (${recs[0].retrainEpochs} epochs${recs[0].retrainSteps ? `, at most ${recs[0].retrainSteps} steps` : ''}), then re-tagging every unreviewed document. The app's model host is one long-lived process: its first retrain opens the training sessions, later rounds find them open (train/ort.ts); both are given. Suggestions are written to the workspace in batches afterwards (not timed here).`, '', '| reviewed | retrain, first in the process (s) | retrain, sessions open (s) | steps | re-tag unreviewed (s) | documents re-tagged | round, sessions open (s) | threads | load at start → end | measured |', '|---:|---:|---:|---:|---:|---:|---:|---:|---|---|']
  for (const r of recs) {
    const total = r.seconds.retrainAgain + r.seconds.tag
    lines.push(`| ${r.reviewed} | ${r.seconds.retrainFirst.toFixed(1)} | ${r.seconds.retrainAgain.toFixed(1)} | ${r.steps} | ${r.seconds.tag.toFixed(1)} | ${r.tagged} | **${total.toFixed(1)}** | ${r.threads ?? 'all'} | ${r.loadAverage.start[0].toFixed(2)} → ${r.loadAverage.end[0].toFixed(2)} on ${r.cpus} CPUs | ${r.measured} |`)
  }
  lines.push('', `Command: \`${recs[0].command}\``, '')
  return lines.join('\n')
}

async function main(): Promise<void> {
  if (a.report) return report()
  const source = CORPORA[a.corpus!] ? a.corpus! : fail(`--corpus must be one of ${Object.keys(CORPORA).join(', ')}, got '${a.corpus}'`)
  if ((a['new-type'] === undefined) !== (a.base === undefined)) fail('--new-type and --base go together: the type to teach and the model that lacks it')
  const newType = a['new-type'] ? { type: a['new-type'], base: resolve(a.base!) } : null
  const baseModel = newType ? loadWordTagger(newType.base) : undefined
  if (newType && Object.values(baseModel!.heads).some((labels) => labels.includes(`B-${newType.type}`))) fail(`--base ${a.base}: the model already knows ${newType.type}`)
  const corpus = corpusKey(source, newType?.type ?? null)
  let strategies: Strategy[]
  try {
    strategies = a.strategies!.split(',').map((s) => parseStrategy(s.trim()))
  } catch (e) {
    fail((e as Error).message)
  }
  const seeds = a.seeds!.split(',').map((s) => positiveInt(s.trim(), '--seeds'))
  const seedDocs = positiveInt(a['seed-docs']!, '--seed-docs')
  const batch = positiveInt(a.batch!, '--batch')
  const maxDocs = positiveInt(a['max-docs']!, '--max-docs')
  const seedEpochs = positiveInt(a['seed-epochs']!, '--seed-epochs')
  const retrainEpochs = positiveInt(a['retrain-epochs']!, '--retrain-epochs')
  const retrainSteps = a['retrain-steps'] === undefined ? null : positiveInt(a['retrain-steps'], '--retrain-steps')
  const threads = a.threads === undefined ? null : positiveInt(a.threads, '--threads')
  const { pool, dev } = await CORPORA[source].load(resolve(a.data!))
  if (maxDocs > pool.length) fail(`--max-docs ${maxDocs} is more than the pool's ${pool.length} documents`)
  mkdirSync(outDir, { recursive: true })
  const command = `npm run bench:active -- ${process.argv.slice(2).join(' ')}`
  if (a.latency) {
    if (newType) fail('--latency measures the default protocol; leave out --new-type')
    await latency(corpus, pool, dev, { seedDocs, batch, maxDocs, seedEpochs, retrainEpochs, retrainSteps, threads, command })
    return report()
  }
  log(`bench:active: ${corpus}: pool ${pool.length} documents, devel ${dev.length}; strategies ${strategies.join(', ')}; seeds ${seeds.join(', ')}`)

  for (const seed of seeds) {
    const seedDir = join(outDir, `${corpus}-seed-k${seedDocs}-e${seedEpochs}-s${seed}.model`)
    for (const strategy of strategies) {
      const settings: ActiveSettings = { corpus, newType, strategy, seed, seedDocs, batch, maxDocs, seedEpochs, retrainEpochs, retrainSteps, threads, poolSize: pool.length, devSize: dev.length }
      const path = join(outDir, `${runKey(settings)}.json`)
      if (existsSync(path)) {
        const stored = JSON.parse(readFileSync(path, 'utf8')) as StoredActiveRun
        if (stored.complete && sameProtocol(stored.settings, settings)) {
          log(`bench:active: ${runKey(settings)}: stored, skipped`)
          continue
        }
        if (stored.complete) fail(`${path} holds a run with other settings; give another --out or move it away`)
      }
      const run: StoredActiveRun = { settings, rounds: [], complete: false, pilot: a.pilot!, command, started: new Date().toISOString(), finished: null, loadAverage: { start: loadavg(), end: null }, cpus: cpus().length }
      const save = () => writeFileAtomic(path, [JSON.stringify(run, null, 1) + '\n'])
      const seedModel: WordModel | undefined = !newType && existsSync(join(seedDir, 'config.json')) ? loadWordTagger(seedDir) : undefined
      await simulate({
        pool,
        dev,
        strategy,
        seed,
        seedDocs,
        batch,
        maxDocs,
        seedEpochs,
        retrainEpochs,
        retrainSteps: retrainSteps ?? undefined,
        threads: threads ?? undefined,
        seedModel,
        newType: newType ? { type: newType.type, baseModel: baseModel! } : undefined,
        onSeedModel: (m) => saveWordTagger(seedDir, { ...m, metadata: { activeSeed: { corpus, seed, seedDocs, seedEpochs } } }),
        onRound: (r) => {
          run.rounds.push(r)
          save()
          log(`bench:active: ${runKey(settings)} round ${r.round}: ${r.reviewed} reviewed, devel F1 ${r.dev.f1.toFixed(3)}, corrections this round ${r.edits.rejected + r.edits.added + r.edits.retyped + r.edits.rebounded}, choose ${r.seconds.select.toFixed(1)} s, retrain ${r.seconds.retrain.toFixed(1)} s (${r.steps} steps), devel ${r.seconds.eval.toFixed(1)} s, load ${loadavg()[0].toFixed(2)}`)
        },
      })
      run.complete = true
      run.finished = new Date().toISOString()
      run.loadAverage.end = loadavg()
      save()
    }
  }
  report()
}

main().catch((e) => {
  process.stderr.write(`bench:active: ${(e as Error).stack ?? e}\n`)
  process.exit(1)
})
