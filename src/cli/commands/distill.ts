// `fastbioner distill --teacher DIR --layers N --train FILE --dev FILE --out DIR [options]`
import type { CorpusDocument } from '../../shared/domain'
import { DISTILL_DEFAULTS, DistillError, KD_MODES, type DistillProgress, type DistillTask, type KdMode } from '../../core/distill/distill'
import { parseLayerPairs } from '../../core/distill/mapping'
import { distillCheckpoints } from '../../core/distill/run'
import { DEFAULT_HEAD } from '../../core/model/bert'
import { DISTILL_RECIPE, TRAIN_DEFAULTS } from '../../shared/recipes'
import { CALIBRATION_TIMING, compareModels } from '../../core/eval/compare'
import { OnnxFileError } from '../../core/onnx/checkpoint'
import { OnnxExportError } from '../../core/onnx/export'
import { QuantizeError, quantizeModelFolder } from '../../core/onnx/quantize'
import { CliError, formatDuration, modelFolder, readCorpus, runCommand, startBackend, stderrLog, stopOnCtrlC, TypeMapUse, writeJsonLine } from './_ml'
import { CORPUS_OPTIONS, FINETUNE_OPTIONS, finetuneSettings, flagOptions, intOpt, mapTypesHelp, numOpt, taskSpecsOpt, typeMapOpt, valueOptions } from './_options'
import { checkDistinctOutputs, checkOutputPath } from './_output'

const USAGE = `usage: fastbioner distill --teacher DIR --layers N --train FILE --dev FILE --out DIR [options]
       fastbioner distill --teachers DIR,DIR --layers N --task NAME=TRAIN:DEV --task … --out DIR [options]

Distils a trained teacher (HuggingFace-layout checkpoint) into an N-layer student initialised
from the teacher's embeddings and its uniformly mapped layers (student layer j ← teacher layer
floor(j·m/N), 1-based). The best student on --dev is saved to --out. Progress goes to standard
error, a JSON summary to standard output.

  --teacher DIR          the teacher checkpoint
  --teachers DIR,DIR…    several teachers (same vocabulary): soft labels averaged (see
                         --teacher-weights), per-teacher feature losses on their layer pairs
                         (embedding layer included), temperature ramp 0.5 → T in steps of 0.5;
                         the first one initialises the student
  --layers N             student depth (1..teacher depth)
  --train FILE, --dev FILE   one corpus (any supported format); the student keeps the
                         teacher's head when it covers the corpus's entity types
  --task NAME=TRAIN:DEV  multi-task (MT-BioNER): one head NAME per corpus, repeat per corpus
                         (DEV optional; ',' also separates, e.g. for Windows paths); a teacher
                         head gives soft labels when it is named NAME, or is the teacher's only
                         head with the same labels
${mapTypesHelp(25)}
  --out DIR              student checkpoint directory; one that already holds a model is refused
  --overwrite            replace the model in --out
  --kd MODE              dynamic (FastBioNER, default) | fixed (TinyBERT-style: soft + hidden +
                         attention, fixed weights) | hidden (PKD-style: soft + hidden states) |
                         none (Bert-OG: gold labels only, same initialisation)
  --temperature T        softmax temperature of the soft labels (default ${DISTILL_DEFAULTS.temperature});
                         the soft loss is multiplied by T² (--no-t2 to turn that off)
  --temperature-schedule constant|ramp   default ramp with several teachers, else constant
  --b X                  offset b in φ(s) = max(1 − e^(s/G + b − 1), 0) (default ${DISTILL_DEFAULTS.b})
  --alpha X, --beta X    fixed/hidden modes: soft-label weight α (gold 1 − α, default 0.5) and
                         feature-loss weight β (default 1)
  --teacher-weights W,W  soft-label weights of --teachers (default equal)
  --layer-pairs P;P      feature pairs per teacher, student:teacher hidden-state indices
                         (0 = embeddings), e.g. '0:0,1:3,2:6;0:0,1:2,2:4'
  --hidden-size N, --heads N, --intermediate-size N   a narrower student (randomly initialised;
                         learned projections map its states to the teacher's width)
  --soft-positions labeled|real   positions of the soft loss (default labeled word starts)
  --mix proportional|round-robin  multi-task batch mixing (default proportional)
  --teacher-engine auto|onnx|tfjs teacher forward engine (default auto: onnxruntime if it loads)
  --teacher-cache auto|on|off     compute teacher outputs once and reuse them every epoch
                         (default auto: when they fit --cache-mb, default ${DISTILL_DEFAULTS.cacheBudgetBytes / 1024 ** 2})
  --epochs N             default ${DISTILL_RECIPE.epochs}
  --batch-size N         default ${TRAIN_DEFAULTS.batchSize}
  --lr X                 peak learning rate (default ${DISTILL_RECIPE.lr})
  --warmup-ratio X, --weight-decay X, --max-length N, --max-steps N   as for 'fastbioner train'
  --seed N               default ${TRAIN_DEFAULTS.seed}
  --patience N           stop after N epochs without a devel F1 improvement (default: never)
  --resume               continue the run saved in --out (student, optimizer state, projections),
                         with the same options it was started with
  --threads N            onnxruntime intra-op threads of the trainer and the teacher (default: all cores)
  --quantize             last step: also write the student's int8 version (see 'fastbioner
                         quantize') to --quantize-out (default <out>-int8), calibrated on the
                         devel corpus when there is one (F1 of both in its metadata;
                         multi-task: each head on its own task's devel corpus)
  --quantize-out DIR     folder of the int8 student (must not exist or be empty; checked,
                         like --out, before training)
  -q, --quiet            only errors on standard error
  -h, --help             this text

Trainer engine: onnxruntime (CUDA → DirectML → CPU) first, tfjs as the fallback;
FASTBIONER_TRAINER=onnxruntime|tfjs forces one (FASTBIONER_ORT_EP=cuda,dml,cpu picks providers).

exit codes: 0 done, 1 input/model problem, 2 usage error, 130 stopped by Ctrl-C`

const OPTIONS = {
  ...CORPUS_OPTIONS,
  ...FINETUNE_OPTIONS,
  ...valueOptions('teacher', 'teachers', 'layers', 'kd', 'temperature', 'temperature-schedule', 'b', 'alpha', 'beta', 'teacher-weights'),
  ...valueOptions('layer-pairs', 'hidden-size', 'heads', 'intermediate-size', 'soft-positions', 'mix', 'teacher-engine', 'teacher-cache', 'cache-mb', 'quantize-out'),
  ...flagOptions('no-t2', 'quantize', 'resume'),
}

export async function run(argv: string[]): Promise<number> {
  return runCommand('distill', USAGE, argv, OPTIONS, async (v) => {
    if ((v.teacher === undefined) === (v.teachers === undefined)) throw new CliError('give exactly one of --teacher DIR and --teachers DIR,DIR…', 2)
    const teacherDirs = (v.teacher !== undefined ? [v.teacher] : v.teachers!.split(',').map((s) => s.trim()).filter(Boolean)).map((t) => modelFolder(t, v.quiet ?? false, v.teacher !== undefined ? '--teacher' : '--teachers'))
    if (teacherDirs.length === 0) throw new CliError('--teachers lists no directory', 2)
    const layers = intOpt(v.layers, '--layers')
    if (layers === undefined) throw new CliError('--layers is required', 2)
    if (v.out === undefined || v.out === '') throw new CliError('--out is required', 2)
    if (v['quantize-out'] !== undefined && !v.quantize) throw new CliError('--quantize-out needs --quantize', 2)
    const int8Out = v.quantize ? (v['quantize-out'] ?? `${v.out.replace(/[\\/]+$/, '')}-int8`) : undefined
    const kd = (v.kd ?? DISTILL_DEFAULTS.kd) as KdMode
    if (!KD_MODES.includes(kd)) throw new CliError(`--kd must be one of ${KD_MODES.join(', ')}, got '${v.kd}'`, 2)
    const taskSpecs = taskSpecsOpt(v)
    if (!taskSpecs.length && v.train === undefined) throw new CliError('--train FILE (or --task NAME=TRAIN:DEV) is required', 2)
    checkOutputPath(v.out, {
      flag: '--out',
      kind: 'checkpoint',
      inputs: [...teacherDirs, v.train, v.dev, ...taskSpecs.flatMap((t) => [t.train, t.dev])],
      // A student saved inside a teacher's folder would change what that folder holds.
      outside: teacherDirs,
      // --resume continues the student that is there (the run checks its optimizer state).
      replace: v.overwrite || v.resume,
      replaceFlag: '--overwrite',
    })
    if (int8Out !== undefined) {
      // Checked now, not after training: quantizing is the run's last step.
      checkDistinctOutputs([{ flag: '--out', path: v.out }, { flag: '--quantize-out', path: int8Out }])
      checkOutputPath(int8Out, { flag: '--quantize-out', kind: 'folder', inputs: [...teacherDirs, v.train, v.dev, ...taskSpecs.flatMap((t) => [t.train, t.dev])], outside: teacherDirs })
    }
    const oneOf = <T extends string>(value: string | undefined, flag: string, allowed: readonly T[]): T | undefined => {
      if (value === undefined) return undefined
      if (!(allowed as readonly string[]).includes(value)) throw new CliError(`${flag} must be one of ${allowed.join(', ')}, got '${value}'`, 2)
      return value as T
    }
    const positive = (n: number) => n > 0
    const temperature = numOpt(v.temperature, '--temperature', positive, 'a number > 0')
    const b = numOpt(v.b, '--b', (n) => n >= 0 && n <= 1, 'a number in [0, 1]')
    const alpha = numOpt(v.alpha, '--alpha', (n) => n >= 0 && n <= 1, 'a number in [0, 1]')
    const beta = numOpt(v.beta, '--beta', (n) => n >= 0, 'a number >= 0')
    const teacherWeights = v['teacher-weights']?.split(',').map((s) => {
      const n = Number(s)
      if (!Number.isFinite(n) || n < 0) throw new CliError(`--teacher-weights: '${s}' is not a number >= 0`, 2)
      return n
    })
    if (teacherWeights && teacherWeights.length !== teacherDirs.length) throw new CliError(`--teacher-weights has ${teacherWeights.length} values for ${teacherDirs.length} teachers`, 2)
    let layerPairs
    try {
      layerPairs = v['layer-pairs']?.split(';').map((s) => (s.trim() ? parseLayerPairs(s) : undefined))
    } catch (e) {
      throw new CliError(`--layer-pairs: ${(e as Error).message}`, 2)
    }
    const hiddenSize = intOpt(v['hidden-size'], '--hidden-size')
    const heads = intOpt(v.heads, '--heads')
    const intermediate = intOpt(v['intermediate-size'], '--intermediate-size')
    const width = hiddenSize || heads || intermediate ? { ...(hiddenSize && { hiddenSize }), ...(heads && { numAttentionHeads: heads }), ...(intermediate && { intermediateSize: intermediate }) } : undefined
    const cacheMb = intOpt(v['cache-mb'], '--cache-mb', 0)
    const quiet = v.quiet ?? false
    const log = stderrLog(quiet)

    const tasks: DistillTask[] = []
    const sources: Record<string, { train: string; dev: string | null }> = {}
    const typeMap = typeMapOpt(v['map-types'])
    // Multi-task: each corpus has its own types; a source is reported only when no file has it.
    const typeUse = typeMap ? new TypeMapUse(typeMap) : undefined
    const read = async (p: string): Promise<CorpusDocument[]> => (await readCorpus(p, undefined, quiet, typeMap, {}, typeUse)).documents
    if (taskSpecs.length) {
      for (const t of taskSpecs) {
        if (tasks.some((x) => x.name === t.name)) throw new CliError(`--task ${t.name} is given twice`, 2)
        tasks.push({ name: t.name, train: await read(t.train), dev: t.dev ? await read(t.dev) : undefined })
        sources[t.name] = { train: t.train, dev: t.dev ?? null }
      }
    } else {
      tasks.push({ name: DEFAULT_HEAD, train: await read(v.train!), dev: v.dev ? await read(v.dev) : undefined })
      sources[DEFAULT_HEAD] = { train: v.train!, dev: v.dev ?? null }
    }
    typeUse?.warnUnused(quiet)
    for (const t of tasks) if (!t.dev) log(`warning: task '${t.name}' has no devel file: the last epoch is kept (no model selection on it)`)

    const backend = await startBackend(quiet)
    const stop = stopOnCtrlC(log, 'stopping after the current step; the best checkpoint so far is kept')
    let lastLine = 0
    const onProgress = (p: DistillProgress) => {
      const now = performance.now()
      if (p.kind === 'cache') {
        if (now - lastLine > 5000 || p.done === p.total) {
          lastLine = now
          log(`teacher outputs cached for ${p.done}/${p.total} examples`)
        }
        return
      }
      if (p.kind === 'eval') {
        log(`epoch ${p.epoch}/${p.epochs}: mean loss ${p.loss.toFixed(4)}, devel F1 ${p.devF1!.toFixed(4)}`)
        return
      }
      if (now - lastLine < 5000 && p.step !== p.totalSteps && p.step !== 1) return
      lastLine = now
      log(`epoch ${p.epoch}/${p.epochs} step ${p.step}/${p.totalSteps} loss ${p.loss.toFixed(4)} φ ${p.phi.toFixed(3)} T ${p.temperature} lr ${p.lr.toExponential(2)} ${Math.round(p.tokensPerSecond)} tok/s eta ${formatDuration(p.etaSeconds)}`)
    }
    let r
    try {
      const settings = finetuneSettings(v)
      r = await distillCheckpoints({
        teacherDirs,
        layers,
        width,
        tasks,
        outDir: v.out,
        kd,
        temperature,
        temperatureSchedule: oneOf(v['temperature-schedule'], '--temperature-schedule', ['constant', 'ramp'] as const),
        scaleSoftByT2: !(v['no-t2'] ?? false),
        b,
        fixedWeights: alpha !== undefined || beta !== undefined ? { soft: alpha ?? 0.5, feature: beta ?? 1 } : undefined,
        teacherWeights,
        layerPairs,
        softPositions: oneOf(v['soft-positions'], '--soft-positions', ['labeled', 'real'] as const),
        mix: oneOf(v.mix, '--mix', ['proportional', 'round-robin'] as const),
        teacherEngine: oneOf(v['teacher-engine'], '--teacher-engine', ['auto', 'onnx', 'tfjs'] as const),
        teacherCache: oneOf(v['teacher-cache'], '--teacher-cache', ['auto', 'on', 'off'] as const),
        cacheBudgetBytes: cacheMb !== undefined ? cacheMb * 1024 ** 2 : undefined,
        ...settings,
        epochs: settings.epochs ?? DISTILL_RECIPE.epochs,
        lr: settings.lr ?? DISTILL_RECIPE.lr,
        seed: settings.seed ?? TRAIN_DEFAULTS.seed,
        resume: v.resume ?? false,
        onTrainer: (trainer, reason) => log(`trainer: ${trainer} (${reason})`),
        onProgress,
        onWarning: (m) => process.stderr.write(`warning: ${m}\n`),
        signal: stop.signal,
        log,
        checkpoint: { metadata: { source: { teachers: teacherDirs, tasks: sources } } },
      })
    } catch (e) {
      // Bad layer counts/pairs (RangeError) and inconsistent teachers/tasks are the user's to fix.
      if (e instanceof DistillError || e instanceof RangeError) throw new CliError(e.message)
      throw e
    } finally {
      stop.release()
    }
    const res = r.result
    let int8: Record<string, unknown> | null = null
    if (int8Out && !res.cancelled && res.checkpointDir) {
      const student = res.checkpointDir
      // Each head is calibrated on its own task's devel documents (one task: every head merged, as before).
      const calibrated = tasks.filter((t) => (t.dev?.length ?? 0) > 0)
      const uncalibrated = tasks.filter((t) => !t.dev?.length).map((t) => t.name)
      const multi = tasks.length > 1
      log(`quantizing the student to int8 → ${int8Out}${calibrated.length ? ` (calibrating on ${calibrated.map((t) => `${t.dev!.length} devel documents${multi ? ` of ${t.name}` : ''}`).join(', ')})` : ''}`)
      if (uncalibrated.length) log(`warning: no devel documents for ${multi ? `task(s) ${uncalibrated.join(', ')}` : 'the task'}: the int8 student's ${multi ? 'heads for them are' : 'accuracy is'} not checked`)
      try {
        const q = await quantizeModelFolder(student, int8Out, {
          check: calibrated.length
            ? async (tmp) => {
                const perTask: Record<string, Record<string, unknown>> = {}
                for (const t of calibrated) {
                  const report = await compareModels([student, tmp], t.dev!, { names: ['float32', 'int8'], head: multi ? t.name : undefined, threads: intOpt(v.threads, '--threads'), logger: log, ...CALIBRATION_TIMING })
                  const [f, i8] = report.models
                  log(`int8 student${multi ? ` (${t.name})` : ''}: devel F1 ${(f.f1 * 100).toFixed(2)} → ${(i8.f1 * 100).toFixed(2)}, ${(i8.tokensPerSecond / f.tokensPerSecond).toFixed(2)}× tokens/s, ${(i8.bytes / f.bytes).toFixed(2)}× bytes`)
                  perTask[t.name] = { file: sources[t.name]?.dev ?? null, documents: t.dev!.length, floatF1: f.f1, int8F1: i8.f1, f1DropPoints: (f.f1 - i8.f1) * 100, speedup: i8.tokensPerSecond / f.tokensPerSecond, bytesRatio: i8.bytes / f.bytes }
                }
                if (!multi) return perTask[tasks[0].name]!
                return { tasks: perTask, uncalibrated, f1DropPoints: Math.max(...Object.values(perTask).map((c) => c.f1DropPoints as number)) }
              }
            : undefined,
        })
        int8 = { out: q.dir, onnx_bytes: q.int8OnnxBytes, calibration: q.info.calibration ?? null }
      } catch (e) {
        if (e instanceof QuantizeError || e instanceof OnnxFileError || e instanceof OnnxExportError) throw new CliError(`the student is saved in ${student}, but quantizing it failed: ${e.message}`)
        throw e
      }
    }
    for (const t of res.teachers) log(`teacher ${t.name}: ${t.engine}${t.cached ? `, cached (${(t.cacheBytes / 1024 ** 2).toFixed(0)} MB in ${t.buildSeconds.toFixed(1)}s)` : ', online'} — ${t.reason}`)
    log(`done in ${formatDuration(res.wallSeconds)}; best epoch ${res.bestEpoch ?? '-'}${res.bestDevF1 !== null ? ` (devel F1 ${res.bestDevF1.toFixed(4)})` : ''}`)
    writeJsonLine({
      out: res.checkpointDir,
      backend: backend.name,
      kd,
      teachers: res.teachers.map(({ name, engine, cached, cacheBytes, buildSeconds, pairs }) => ({ dir: name, engine, cached, cache_bytes: cacheBytes, cache_seconds: buildSeconds, layer_pairs: pairs })),
      layers,
      layer_map: r.layerMap,
      initialised_from_teacher: r.inherited,
      parameters: r.parameters,
      heads: r.heads,
      train_examples: res.trainExamples,
      steps: res.steps,
      planned_steps: res.plannedSteps,
      epochs: res.epochs,
      best_epoch: res.bestEpoch,
      best_dev_f1: res.bestDevF1,
      cancelled: res.cancelled,
      stopped_early: res.stoppedEarly,
      resumed_after_epoch: res.resumedAfterEpoch,
      trainer: res.trainer,
      trainer_reason: res.trainerReason,
      tokens_per_second: res.tokensPerSecond,
      train_seconds: res.trainSeconds,
      teacher_seconds: res.teacherSeconds,
      eval_seconds: res.evalSeconds,
      wall_seconds: res.wallSeconds,
      int8,
    })
    return res.cancelled ? 130 : 0
  })
}
