// FastBioNER distillation benchmark: train a teacher on NCBI-disease (sentence-level IOB, the
// splits of BioBERT/FastBioNER), distil 6/4/3-layer students with each KD mode, and compare them
// with `compareModels` (test F1, size, latency on the same text) next to the published figures.
//
//   npm run bench:distill -- [--quick] [--data DIR] [--out DIR] [--corpus ncbi|bc5cdr-chem]
//       [--teacher-layers 12] [--teacher-hidden 64] [--teacher-heads 2] [--teacher-epochs 2]
//       [--teacher-lr 1e-3] [--students 6,4,3] [--modes dynamic] [--baseline-layers 6]
//       [--baselines none,hidden,fixed] [--epochs 1] [--lr 5e-4] [--temperature 3]
//       [--batch-size 16] [--max-train-docs N] [--budget-min 40] [--seed 42]
//
// Resumable: every stage writes its result under --out (default .bench/distill, git-ignored):
// vocab.txt, teacher/ (+ bench.json), students/L<n>-<mode>/ (+ bench.json), compare.json. A
// stage whose bench.json records the same settings is skipped, so the teacher is trained once
// and an interrupted run continues where it stopped. Settings are chosen on devel (model
// selection per epoch on devel F1); test is scored once per final model, inside the comparison.
// The teacher's outputs (logits + mapped hidden states/attentions of every student depth) are
// computed once, on onnxruntime when it loads, and shared by all students of the run.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import type { CorpusDocument } from '../src/shared/domain'
import { readCorpusFile } from '../src/core/corpus'
import { initBackend } from '../src/core/model/backend'
import { BertTokenClassifier, DEFAULT_HEAD, makeBertConfig } from '../src/core/model/bert'
import { loadCheckpoint } from '../src/core/model/checkpoint'
import { buildLabelMap } from '../src/core/nlp/bio'
import { WordPieceTokenizer } from '../src/core/nlp/tokenizer'
import { readVocab, trainWordPieceVocab, writeVocab } from '../src/core/nlp/vocab-trainer'
import { train } from '../src/core/train/loop'
import { buildDistillExamples, distill, type KdMode } from '../src/core/distill/distill'
import { uniformLayerMap } from '../src/core/distill/mapping'
import { createStudent } from '../src/core/distill/student'
import { cachedProvider, openTeacherRunner, tfjsRunner, type TeacherExample, type TeacherNeeds, type TeacherProvider } from '../src/core/distill/teacher'
import { compareModels, formatCompareTable, type CompareReport } from '../src/core/eval/compare'

const { values: a } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    data: { type: 'string', default: resolve(__dirname, '../../shared/data') },
    out: { type: 'string' },
    corpus: { type: 'string', default: 'ncbi' },
    'teacher-layers': { type: 'string' },
    'teacher-hidden': { type: 'string' },
    'teacher-heads': { type: 'string' },
    'teacher-epochs': { type: 'string' },
    'teacher-lr': { type: 'string', default: '1e-3' },
    students: { type: 'string' },
    modes: { type: 'string', default: 'dynamic' },
    'baseline-layers': { type: 'string' },
    baselines: { type: 'string', default: 'none,hidden,fixed' },
    epochs: { type: 'string' },
    lr: { type: 'string', default: '5e-4' },
    temperature: { type: 'string', default: '3' },
    'batch-size': { type: 'string', default: '16' },
    'max-train-docs': { type: 'string' },
    'max-length': { type: 'string', default: '128' },
    'vocab-size': { type: 'string', default: '8000' },
    'budget-min': { type: 'string', default: '40' },
    'timing-docs': { type: 'string' },
    seed: { type: 'string', default: '42' },
  },
})

function fail(msg: string): never {
  process.stderr.write(`bench:distill: ${msg}\n`)
  process.exit(2)
}
const num = (v: string | undefined, flag: string): number => {
  const n = Number(v)
  if (v === undefined || !Number.isFinite(n)) fail(`--${flag} must be a number`)
  return n
}
const list = (v: string | undefined) => (v ?? '').split(',').map((s) => s.trim()).filter(Boolean)

const quick = a.quick!
const S = {
  corpus: a.corpus!,
  teacher: {
    layers: num(a['teacher-layers'] ?? (quick ? '6' : '12'), 'teacher-layers'),
    hidden: num(a['teacher-hidden'] ?? '64', 'teacher-hidden'),
    heads: num(a['teacher-heads'] ?? '2', 'teacher-heads'),
    epochs: num(a['teacher-epochs'] ?? (quick ? '1' : '2'), 'teacher-epochs'),
    lr: num(a['teacher-lr'], 'teacher-lr'),
  },
  students: list(a.students ?? (quick ? '3,2' : '6,4,3')).map(Number),
  modes: list(a.modes) as KdMode[],
  baselineLayers: num(a['baseline-layers'] ?? (quick ? '3' : '6'), 'baseline-layers'),
  baselines: list(a.baselines) as KdMode[],
  epochs: num(a.epochs ?? '1', 'epochs'),
  lr: num(a.lr, 'lr'),
  temperature: num(a.temperature, 'temperature'),
  batchSize: num(a['batch-size'], 'batch-size'),
  maxTrainDocs: a['max-train-docs'] !== undefined ? num(a['max-train-docs'], 'max-train-docs') : quick ? 60 : null,
  maxLength: num(a['max-length'], 'max-length'),
  vocabSize: num(a['vocab-size'], 'vocab-size'),
  seed: num(a.seed, 'seed'),
  quick,
}
const budgetMs = num(a['budget-min'], 'budget-min') * 60_000
const outDir = resolve(a.out ?? join(__dirname, '..', '.bench', quick ? 'distill-quick' : 'distill'))
const corpora: Record<string, { dir: string; title: string; timing?: string }> = {
  ncbi: { dir: 'mtl-bioner/NCBI-disease-IOB', title: 'NCBI-disease', timing: 'ncbi-disease/test.pubtator' },
  'bc5cdr-chem': { dir: 'mtl-bioner/BC5CDR-chem-IOB', title: 'BC5CDR-chem' },
}
const corpus = corpora[S.corpus] ?? fail(`--corpus must be one of ${Object.keys(corpora).join(', ')}`)

// Published FastBioNER figures (PAPERS.md): NCBI-disease test F1 and compression vs BioBERT.
const PAPER = {
  teacherF1: 89.73,
  f1: { 'dynamic-6': 88.63, 'dynamic-4': 86.01, 'dynamic-3': 84.76, 'none-6': 85.69, 'hidden-6': 87.96, 'fixed-6': 88.2 } as Record<string, number>,
  size: { 6: 39.26, 4: 52.35, 3: 58.9 } as Record<number, number>,
  time: { 6: 46.17, 4: 60.77, 3: 68.78 } as Record<number, number>,
}

const t0 = performance.now()
const elapsed = () => ((performance.now() - t0) / 1000).toFixed(0) + 's'
const log = (line: string) => process.stderr.write(`[${elapsed()}] ${line}\n`)
const readJson = (p: string): Record<string, unknown> | null => (existsSync(p) ? (JSON.parse(readFileSync(p, 'utf8')) as Record<string, unknown>) : null)
const same = (x: unknown, y: unknown) => JSON.stringify(x) === JSON.stringify(y)

async function readSplit(name: string, limit: number | null): Promise<CorpusDocument[]> {
  const path = join(a.data!, corpus.dir, `${name}.tsv`)
  if (!existsSync(path)) fail(`${path} not found (set --data to the folder holding mtl-bioner/)`)
  const docs = (await readCorpusFile(path, 'conll')).documents
  return limit !== null ? docs.slice(0, limit) : docs
}

async function main(): Promise<void> {
  mkdirSync(join(outDir, 'students'), { recursive: true })
  const backend = await initBackend({ logger: (l) => log(l) })
  const trainDocs = await readSplit('train', S.maxTrainDocs)
  const devDocs = await readSplit('devel', quick ? 20 : null)
  const testDocs = await readSplit('test', quick ? 20 : null)
  let timingDocs: CorpusDocument[] | undefined
  if (corpus.timing && existsSync(join(a.data!, corpus.timing))) {
    timingDocs = (await readCorpusFile(join(a.data!, corpus.timing), 'pubtator')).documents.slice(0, a['timing-docs'] ? num(a['timing-docs'], 'timing-docs') : quick ? 10 : 100)
  }
  log(`${corpus.title}: ${trainDocs.length}/${devDocs.length}/${testDocs.length} train/devel/test documents (10 sentences each); backend ${backend.name}; out ${outDir}`)

  // Vocabulary (once).
  const vocabPath = join(outDir, 'vocab.txt')
  const vocabKey = { corpus: S.corpus, maxTrainDocs: S.maxTrainDocs, vocabSize: S.vocabSize }
  let vocab: string[]
  if (existsSync(vocabPath) && same(readJson(join(outDir, 'vocab.json')), vocabKey)) vocab = readVocab(vocabPath)
  else {
    vocab = trainWordPieceVocab(trainDocs.map((d) => d.text), { vocabSize: S.vocabSize, lowercase: true }).tokens
    writeVocab(vocabPath, vocab)
    writeFileSync(join(outDir, 'vocab.json'), JSON.stringify(vocabKey))
  }
  const tokenizer = new WordPieceTokenizer(vocab, { lowercase: true })
  const labels = buildLabelMap(new Set(trainDocs.flatMap((d) => d.mentions.map((m) => m.type)))).labels

  // Teacher (once).
  const teacherDir = join(outDir, 'teacher')
  const teacherKey = { ...vocabKey, ...S.teacher, batchSize: S.batchSize, maxLength: S.maxLength, seed: S.seed }
  let teacherInfo = readJson(join(teacherDir, 'bench.json'))
  if (!teacherInfo || !same(teacherInfo.settings, teacherKey)) {
    const t = S.teacher
    const config = makeBertConfig({ vocabSize: vocab.length, numHiddenLayers: t.layers, hiddenSize: t.hidden, numAttentionHeads: t.heads, intermediateSize: 4 * t.hidden, maxPositionEmbeddings: 512 })
    const model = BertTokenClassifier.random(config, S.seed, { [DEFAULT_HEAD]: labels })
    log(`teacher: ${t.layers} × ${t.hidden} (${(model.numParameters() / 1e6).toFixed(2)}M params), from scratch, ${t.epochs} epoch(s), lr ${t.lr}`)
    let last = 0
    const r = await train({
      model, tokenizer, train: trainDocs, dev: devDocs, outDir: teacherDir, epochs: t.epochs, batchSize: S.batchSize, lr: t.lr, warmupRatio: 0.1, seed: S.seed, maxLength: S.maxLength,
      onProgress: (p) => {
        if (p.kind === 'eval') log(`  teacher epoch ${p.epoch}: loss ${p.loss.toFixed(4)} devel F1 ${p.devF1!.toFixed(4)}`)
        else if (performance.now() - last > 30000) {
          last = performance.now()
          log(`  teacher step ${p.step}/${p.totalSteps} loss ${p.loss.toFixed(4)} ${p.tokensPerSecond.toFixed(0)} tok/s eta ${p.etaSeconds.toFixed(0)}s`)
        }
      },
    })
    model.dispose()
    teacherInfo = { settings: teacherKey, devF1: r.bestDevF1, bestEpoch: r.bestEpoch, trainSeconds: r.trainSeconds, steps: r.steps, tokensPerSecond: r.tokensPerSecond, epochs: r.epochs }
    writeFileSync(join(teacherDir, 'bench.json'), JSON.stringify(teacherInfo, null, 2))
  } else log(`teacher: reusing ${teacherDir} (devel F1 ${(teacherInfo.devF1 as number).toFixed(4)})`)

  // Students to run, in table order.
  const specs: Array<{ layers: number; kd: KdMode }> = []
  for (const n of S.students) for (const kd of S.modes) specs.push({ layers: n, kd })
  for (const kd of S.baselines) if (!specs.some((s) => s.layers === S.baselineLayers && s.kd === kd)) specs.push({ layers: S.baselineLayers, kd })
  const studentKey = (s: { layers: number; kd: KdMode }) => ({ teacher: teacherKey, ...s, epochs: S.epochs, lr: S.lr, temperature: S.temperature, batchSize: S.batchSize })
  const dirOf = (s: { layers: number; kd: KdMode }) => join(outDir, 'students', `L${s.layers}-${s.kd}`)
  const todo = specs.filter((s) => !same(readJson(join(dirOf(s), 'bench.json'))?.settings, studentKey(s)))

  const engineNotes: Record<string, unknown> = (readJson(join(outDir, 'teacher-engine.json')) as Record<string, unknown>) ?? {}
  if (todo.length) {
    const ck = await loadCheckpoint(teacherDir, { trainable: false })
    const teacher = ck.model
    const m = teacher.config.numHiddenLayers
    const data = buildDistillExamples([{ name: DEFAULT_HEAD, train: trainDocs, dev: devDocs }], tokenizer, () => labels, { maxLength: S.maxLength, sentenceLevel: true })
    const layersNeeded = [...new Set(todo.filter((s) => s.kd !== 'none').flatMap((s) => uniformLayerMap(m, s.layers)))].sort((x, y) => x - y)
    const needs: TeacherNeeds = { logits: true, hidden: layersNeeded, attentions: layersNeeded }
    const texs: TeacherExample[] = data.examples.map((e) => ({ inputIds: e.inputIds, attentionMask: e.attentionMask, tokenTypeIds: e.tokenTypeIds, head: DEFAULT_HEAD }))
    let provider: TeacherProvider | null = null
    if (layersNeeded.length) {
      // Engine comparison on a sample: the teacher forward on tfjs vs onnxruntime (+ attention recompute).
      const sample = texs.slice(0, Math.min(texs.length, quick ? 64 : 400))
      const tfjsProbe = await cachedProvider(teacher, tfjsRunner(teacher), sample, needs, { padTokenId: tokenizer.padId })
      const runner = await openTeacherRunner(teacher, 'auto')
      const engineName = runner.engine
      let ortSample = NaN
      if (engineName.startsWith('onnxruntime')) {
        const ortProbe = await cachedProvider(teacher, await openTeacherRunner(teacher, 'onnx'), sample, needs, { padTokenId: tokenizer.padId })
        ortSample = ortProbe.buildSeconds
        await ortProbe.dispose()
      }
      await tfjsProbe.dispose()
      log(`teacher forward on ${sample.length} examples (hidden+attention of layers ${layersNeeded.join(',')}): tfjs ${tfjsProbe.buildSeconds.toFixed(1)}s, ${engineName} ${Number.isFinite(ortSample) ? ortSample.toFixed(1) + 's' : '-'}`)
      provider = await cachedProvider(teacher, runner, texs, needs, { padTokenId: tokenizer.padId })
      log(`teacher cache: ${texs.length} examples, ${(provider.cacheBytes / 1024 ** 2).toFixed(0)} MB, built in ${provider.buildSeconds.toFixed(1)}s on ${provider.engine}`)
      Object.assign(engineNotes, {
        sampleExamples: sample.length,
        tfjsSampleSeconds: tfjsProbe.buildSeconds,
        ortSampleSeconds: ortSample,
        cacheEngine: provider.engine,
        cacheEngineReason: provider.reason,
        cacheExamples: texs.length,
        cacheBytes: provider.cacheBytes,
        cacheBuildSeconds: provider.buildSeconds,
        cachedLayers: layersNeeded,
      })
      writeFileSync(join(outDir, 'teacher-engine.json'), JSON.stringify(engineNotes, null, 2))
    }
    for (const s of todo) {
      if (performance.now() - t0 > budgetMs) {
        log(`budget of ${a['budget-min']} min reached: L${s.layers}-${s.kd} and later students not run (rerun to continue)`)
        break
      }
      const st = createStudent(teacher, { layers: s.layers, seed: S.seed })
      log(`student L${s.layers}-${s.kd}: layers ${st.layerMap.join(',')} of ${m}, ${(st.model.numParameters() / 1e6).toFixed(2)}M params`)
      let last = 0
      const r = await distill({
        student: st.model,
        teachers: [{ model: teacher, name: teacherDir }],
        tokenizer,
        tasks: [{ name: DEFAULT_HEAD, train: trainDocs, dev: devDocs }],
        kd: s.kd,
        providers: s.kd === 'none' ? undefined : [provider!],
        temperature: S.temperature,
        epochs: S.epochs,
        batchSize: S.batchSize,
        lr: S.lr,
        warmupRatio: 0.1,
        seed: S.seed,
        maxLength: S.maxLength,
        outDir: dirOf(s),
        checkpoint: { lowercase: true, metadata: { bench: studentKey(s) } },
        onProgress: (p) => {
          if (p.kind === 'eval') log(`  epoch ${p.epoch}: loss ${p.loss.toFixed(4)} devel F1 ${p.devF1!.toFixed(4)}`)
          else if (p.kind === 'step' && performance.now() - last > 30000) {
            last = performance.now()
            log(`  step ${p.step}/${p.totalSteps} loss ${p.loss.toFixed(4)} φ ${p.phi.toFixed(3)} ${p.tokensPerSecond.toFixed(0)} tok/s eta ${p.etaSeconds.toFixed(0)}s`)
          }
        },
      })
      st.model.dispose()
      writeFileSync(
        join(dirOf(s), 'bench.json'),
        JSON.stringify({ settings: studentKey(s), devF1: r.bestDevF1, bestEpoch: r.bestEpoch, steps: r.steps, trainSeconds: r.trainSeconds, teacherSeconds: r.teacherSeconds, tokensPerSecond: r.tokensPerSecond, epochs: r.epochs }, null, 2),
      )
    }
    if (provider) await provider.dispose()
    teacher.dispose()
  }

  // Comparison on test (once per final model) with timing on the same text for all models.
  const done = specs.filter((s) => same(readJson(join(dirOf(s), 'bench.json'))?.settings, studentKey(s)))
  log(`comparing the teacher and ${done.length} student(s) on ${testDocs.length} test documents${timingDocs ? `, timing on ${timingDocs.length} PubMed abstracts` : ''}`)
  const report: CompareReport = await compareModels([teacherDir, ...done.map(dirOf)], testDocs, {
    timingDocs,
    names: ['teacher', ...done.map((s) => `L${s.layers}-${s.kd}`)],
    warmupDocs: 3,
    logger: (l) => log(l),
  })
  writeFileSync(join(outDir, 'compare.json'), JSON.stringify({ settings: S, teacher: teacherInfo, teacherEngine: engineNotes, report }, null, 2))

  // Tables.
  const pct = (x: number) => (100 * x).toFixed(1)
  const out: string[] = []
  out.push(`\n${corpus.title} — teacher ${S.teacher.layers} layers × ${S.teacher.hidden} trained from scratch (${S.teacher.epochs} epoch(s)); students ${S.epochs} epoch(s), lr ${S.lr}, T ${S.temperature}${quick ? ' [QUICK]' : ''}`)
  out.push(formatCompareTable(report))
  out.push('')
  out.push('| model | KD | layers | devel F1 | test P | test R | test F1 | F1 retention % (paper) | size −% (paper) | time −% (paper) |')
  out.push('|---|---|---|---|---|---|---|---|---|---|')
  report.models.forEach((mr, i) => {
    const s = i === 0 ? null : done[i - 1]
    const devF1 = i === 0 ? (teacherInfo!.devF1 as number) : (readJson(join(dirOf(s!), 'bench.json'))!.devF1 as number)
    const key = s ? `${s.kd}-${s.layers}` : ''
    const paperF1 = s ? PAPER.f1[key] : PAPER.teacherF1
    const paperRet = paperF1 !== undefined ? pct(paperF1 / PAPER.teacherF1) : '-'
    const rel = mr.relative
    out.push(
      `| ${mr.name} | ${s ? s.kd : '(teacher)'} | ${mr.layers} | ${pct(devF1)} | ${pct(mr.precision)} | ${pct(mr.recall)} | ${pct(mr.f1)} | ` +
        `${rel ? pct(rel.f1Retention) : '100'} (${paperRet}) | ${rel ? pct(rel.sizeReduction) : '0'} (${s && PAPER.size[s.layers] !== undefined ? PAPER.size[s.layers] : s ? '-' : 0}) | ${rel ? pct(rel.timeReduction) : '0'} (${s && PAPER.time[s.layers] !== undefined ? PAPER.time[s.layers] : s ? '-' : 0}) |`,
    )
  })
  if (engineNotes.cacheBuildSeconds !== undefined) {
    const n = engineNotes as { sampleExamples: number; tfjsSampleSeconds: number; ortSampleSeconds: number; cacheEngine: string; cacheBytes: number; cacheBuildSeconds: number; cacheExamples: number }
    out.push(
      `\nteacher outputs: cached once for ${n.cacheExamples} examples on ${n.cacheEngine} in ${n.cacheBuildSeconds.toFixed(1)}s (${(n.cacheBytes / 1024 ** 2).toFixed(0)} MB, float16 features); ` +
        `teacher forward on ${n.sampleExamples} examples: tfjs ${n.tfjsSampleSeconds.toFixed(1)}s vs onnxruntime ${Number.isFinite(n.ortSampleSeconds) ? n.ortSampleSeconds.toFixed(1) + 's' : 'n/a'}`,
    )
  }
  for (const s of done) {
    const b = readJson(join(dirOf(s), 'bench.json'))!
    out.push(`  L${s.layers}-${s.kd}: ${b.steps} steps, train ${(b.trainSeconds as number).toFixed(0)}s (teacher targets ${(b.teacherSeconds as number).toFixed(1)}s), ${(b.tokensPerSecond as number).toFixed(0)} tok/s`)
  }
  out.push(`teacher: ${teacherInfo!.steps} steps, ${(teacherInfo!.trainSeconds as number).toFixed(0)}s, ${(teacherInfo!.tokensPerSecond as number).toFixed(0)} tok/s; wall ${elapsed()}`)
  process.stdout.write(out.join('\n') + '\n')
}

main().catch((e) => {
  process.stderr.write(`bench:distill: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`)
  process.exit(1)
})
