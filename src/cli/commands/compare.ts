// `fastbioner compare --models DIR DIR… --gold FILE [--out report.json]`
import { compareModels, formatCompareTable } from '../../core/eval/compare'
import { checkTaggingModel, CliError, readCorpus, runCommand, startBackend, stderrLog } from './_ml'
import { flagOptions, formatOpt, intOpt, mapTypesHelp, repeatableOptions, requireOpt, typeMapOpt, valueOptions } from './_options'
import { checkOutputPath, writeOutputFile } from './_output'

const USAGE = `usage: fastbioner compare --models DIR DIR… --gold FILE [--out report.json] [options]

Compares token-classification models on the same gold text in one run: layers, parameters,
weights size on disk, entity-level P/R/F1 (overall and per type), median tagging latency per
document and word pieces per second (the fastest engine that loads: onnxruntime, else tfjs;
recorded per model), and, against the first model (the teacher), F1 retention and size and
time reductions. Speed is timed in rounds (the models interleaved, the first alternating) of at
least --round-pieces word pieces each; each model's time per round is reported as a median and
interquartile range, and a model is called faster or slower only when those ranges do not
overlap. Prints a table on standard output; --out writes the full report as JSON.

  --models DIR…       checkpoint directories, the reference (teacher) first; space- or
                      comma-separated, or --models repeated
  --gold FILE         gold corpus (any supported format)
  --timing FILE       time on these documents instead of the gold ones (e.g. PubMed abstracts)
  --out FILE          JSON report (a new file: one already there is left as it is)
  --force             replace an existing --out file
  --engine onnx|tfjs  engine preference (default onnx, falling back to tfjs)
  --threads N         onnxruntime intra-op threads of every model (default: all cores)
  --rounds N          timed rounds (default 7; fewer than 5 give no faster/slower verdict)
  --round-pieces N    word pieces a round covers at least, repeating the documents (default 3000)
  --warmup N          untimed warm-up documents per model (default 3)
  --max-docs N        use only the first N gold (and timing) documents
  --head NAME         score one head of every model (e.g. the NCBI head of a multi-task model on
                      NCBI-disease); default: every head merged
  --head H1,H2,…      one head per model, in the order of --models ('-': that model's heads
                      merged), e.g. a multi-task teacher's ncbi head against a student's default
${mapTypesHelp(22)}
  --gold-format F, --timing-format F   formats when detection is not wanted
  -q, --quiet         no progress on standard error
  -h, --help          this text

exit codes: 0 done, 1 input/model problem, 2 usage error`

/** `--models a b c` → `--models a --models b --models c` (parseArgs takes one value per flag). */
export function expandModels(argv: string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--models') {
      let k = i + 1
      while (k < argv.length && !argv[k].startsWith('-')) {
        for (const d of argv[k].split(',').filter(Boolean)) out.push('--models', d)
        k++
      }
      if (k === i + 1) out.push(a)
      i = k - 1
    } else if (a.startsWith('--models=')) {
      for (const d of a.slice(9).split(',').filter(Boolean)) out.push('--models', d)
    } else out.push(a)
  }
  return out
}

const OPTIONS = {
  ...valueOptions('gold', 'timing', 'out', 'engine', 'threads', 'rounds', 'round-pieces', 'warmup', 'max-docs', 'head', 'gold-format', 'timing-format'),
  ...repeatableOptions('models', 'map-types'),
  ...flagOptions('force'),
}

export async function run(argv: string[]): Promise<number> {
  return runCommand('compare', USAGE, expandModels(argv), OPTIONS, async (v) => {
    const models = v.models ?? []
    if (models.length === 0) throw new CliError('--models needs at least one checkpoint directory', 2)
    const goldPath = requireOpt(v.gold, '--gold')
    if (v.engine !== undefined && v.engine !== 'onnx' && v.engine !== 'tfjs') throw new CliError(`--engine must be onnx or tfjs, got '${v.engine}'`, 2)
    const quiet = v.quiet ?? false
    const maxDocs = intOpt(v['max-docs'], '--max-docs')
    // One head for all, or one per model (a multi-task teacher's head against a single-task student's).
    const heads: Array<string | undefined> = v.head === undefined ? models.map(() => undefined) : v.head.includes(',') ? v.head.split(',').map((h) => (h.trim() === '-' || h.trim() === '' ? undefined : h.trim())) : models.map(() => v.head)
    if (heads.length !== models.length) throw new CliError(`--head lists ${heads.length} heads for ${models.length} models: give one per model, in the order of --models ('-' for every head merged)`, 2)
    models.forEach((m, i) => checkTaggingModel(m, heads[i]))
    if (v.out === '-') throw new CliError('--out names a file (the table goes to standard output)', 2)
    if (v.out !== undefined) checkOutputPath(v.out, { flag: '--out', kind: 'file', inputs: [goldPath, v.timing, ...models], replace: v.force, replaceFlag: '--force' })
    else if (v.force) throw new CliError('--force goes with --out', 2)
    const typeMap = typeMapOpt(v['map-types'])
    let gold = (await readCorpus(goldPath, formatOpt(v['gold-format'], '--gold-format'), quiet, typeMap)).documents
    let timing = v.timing !== undefined ? (await readCorpus(v.timing, formatOpt(v['timing-format'], '--timing-format'), quiet)).documents : undefined
    if (maxDocs !== undefined) {
      gold = gold.slice(0, maxDocs)
      timing = timing?.slice(0, maxDocs)
    }
    await startBackend(quiet)
    const report = await compareModels(models, gold, {
      timingDocs: timing,
      engine: v.engine as 'onnx' | 'tfjs' | undefined,
      threads: intOpt(v.threads, '--threads', 1),
      rounds: intOpt(v.rounds, '--rounds'),
      minRoundPieces: intOpt(v['round-pieces'], '--round-pieces', 0),
      warmupDocs: intOpt(v.warmup, '--warmup', 0),
      head: heads,
      logger: stderrLog(quiet),
    })
    process.stdout.write(formatCompareTable(report) + '\n')
    if (v.out !== undefined) {
      await writeOutputFile(v.out, JSON.stringify(report, null, 2) + '\n', 'the report')
      if (!quiet) process.stderr.write(`report written to ${v.out}\n`)
    }
    return 0
  })
}
