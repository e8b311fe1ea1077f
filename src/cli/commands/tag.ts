// `fastbioner tag --model DIR --in FILE --out FILE [--format pubtator|conll|bioc]`
import type { CorpusDocument, CorpusFormat, CorpusIssue } from '../../shared/domain'
import { createHash } from 'node:crypto'
import { CorpusError, formatIssue, formatOfOutputName, stemOf, WRITABLE_FORMATS } from '../../core/corpus'
import { expandInputs, foreignOutputMessage, foreignOutputs, tagFiles, type IgnoredInput } from '../../core/batch/run'
import { BATCH_FORMATS, checkOutDirNotInput, planOutputs } from '../../core/batch/outputs'
import { filesOfShard, resolveShard, ShardError } from '../../core/batch/shard'
import { checkpointFingerprint } from '../../core/onnx/export'
import { checkTaggingModel, checkWindowOptions, CliError, MAX_WARNINGS_SHOWN, modelOrDefault, openModelTagger, readCorpus, runCommand, startBackend, stderrLog, stopOnCtrlC, type OptionValues } from './_ml'
import { documentRulesHelp, documentRulesOpt, flagOptions, formatOpt, intOpt, numOpt, offsetsHelp, offsetsOpt, repeatableOptions, requireOpt, TAGGING_OPTIONS, valueOptions } from './_options'
import { checkOutputPath, writeCorpusOutput } from './_output'

/** What tag writes: every writable format but plain text, which keeps no mentions (a tagged text would lose them all). */
const TAGGED_FORMATS: readonly CorpusFormat[] = WRITABLE_FORMATS.filter((f) => f !== 'text')

const USAGE = `usage: fastbioner tag [--model DIR] --in FILE --out FILE [--format pubtator|conll|bioc] [options]
       fastbioner tag [--model DIR] --in PATH [--in PATH …] --out-dir DIR [--shard I/N] [options]

Tags every document of a corpus file with a token-classification model and writes the
documents with the predicted mentions (gold mentions in the input are replaced).

Batch mode (--out-dir; PubMed baseline files, folders of exports; docs/BATCH.md): --in takes
files and folders (every corpus file directly inside, sorted; .gz read as it streams); one
output per input in DIR, same base name, the format's extension, .gz kept. Each output is
written under a temporary name and renamed when complete, then a NAME.done.json record
(input sha256, model fingerprint, counts, time). A rerun skips outputs whose record still
matches and redoes the rest. A PubMed/BioC record that cannot be read is reported and skipped
(the rest of its file is tagged); a file that cannot be read at all is reported and left out;
either way the other files are tagged and the exit code is 1.
  --out-dir DIR      batch mode: the folder for the outputs
  --shard I/N        tag only shard I of N (1-based): files sorted by path, dealt round-robin.
                     Default: SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT (Slurm job array) or
                     JOB_COMPLETION_INDEX (Kubernetes Indexed Job) with --shard-count, else all
  --shard-count N    number of shards when the index comes from the environment
  --threads N        onnxruntime intra-op threads (default: all cores)

  --model DIR        checkpoint directory (config.json, vocab.txt, model.safetensors);
                     default: the model that ships with fastbioner (Disease, Chemical, Gene)
  --in FILE          input corpus, any supported format (detected unless --in-format)
  --out FILE         a new output file ('-' for standard output); a new or empty folder for brat
  --force            replace an existing --out file, or (brat) the contents of a non-empty
                     --out folder
  --format FORMAT    output format: pubtator, conll, bioc (= bioc-json), bioc-xml, brat;
                     default: the one --out's extension names (.pubtator, .conll/.tsv/.iob,
                     .json, .xml), else the input's format when it can hold mentions, else
                     pubtator (plain text in, PubTator out)
  --in-format FORMAT input format when detection is not wanted
  --batch-size N     windows per forward pass (default 32)
  --max-length N     pieces per window incl. [CLS]/[SEP] (default: as trained, else 128)
  --stride N         overlap of consecutive windows in pieces
  --head NAME        tag with this head of a multi-task model only (default: every head,
                     their mentions merged; overlaps go to the more confident head)
  --min-confidence X drop mentions whose confidence is below X (0..1)
${documentRulesHelp(21)}
${offsetsHelp(21, 'written')}
  -q, --quiet        no progress or summary on standard error
  -h, --help         this text

exit codes: 0 done, 1 input/model/output problem, 2 usage error`

const OPTIONS = {
  ...TAGGING_OPTIONS,
  ...valueOptions('out', 'out-dir', 'shard', 'shard-count', 'threads', 'format', 'in-format', 'stride', 'min-confidence', 'offsets'),
  ...repeatableOptions('in'),
  ...flagOptions('force'),
}

type Values = OptionValues<typeof OPTIONS>

export async function run(argv: string[]): Promise<number> {
  return runCommand('tag', USAGE, argv, OPTIONS, async (v) => {
    const ins = v.in ?? []
    if (ins.length === 0) throw new CliError('--in is required', 2)
    if (v['out-dir'] !== undefined) return runBatch(v, ins, v['out-dir'])
    if (ins.length > 1) throw new CliError('several --in need --out-dir DIR (one output per input)', 2)
    if (v.shard !== undefined || v['shard-count'] !== undefined) throw new CliError('--shard and --shard-count are for batch mode (--out-dir)', 2)
    const inPath = ins[0]
    const outPath = requireOpt(v.out, '--out')
    const inFormat = formatOpt(v['in-format'], '--in-format')
    // An --out name that says its format is taken at its word: a CoNLL input tagged into
    // `x.pubtator` is written as PubTator, not as CoNLL under a PubTator name.
    const named = formatOfOutputName(outPath)
    let outFormat = formatOpt(v.format, '--format') ?? (named && TAGGED_FORMATS.includes(named) ? named : undefined)
    if (outFormat && !WRITABLE_FORMATS.includes(outFormat)) throw new CliError(`--format ${outFormat} can be read but not written (one of ${WRITABLE_FORMATS.join(', ')})`, 2)
    if (outFormat && !TAGGED_FORMATS.includes(outFormat)) throw new CliError(`--format ${outFormat} writes the documents' text without their mentions; tag writes one of ${TAGGED_FORMATS.join(', ')}`, 2)
    const batchSize = intOpt(v['batch-size'], '--batch-size')
    const maxLengthOpt = intOpt(v['max-length'], '--max-length', 3)
    const stride = intOpt(v.stride, '--stride', 0)
    const minConf = numOpt(v['min-confidence'], '--min-confidence', (n) => n >= 0 && n <= 1, 'a number in [0, 1]') ?? 0
    const quiet = v.quiet ?? false
    const modelDir = modelOrDefault(v.model, quiet)
    const checkOutput = (format: CorpusFormat): void => {
      const multiFile = format === 'brat'
      if (multiFile && outPath === '-') throw new CliError(`${format} output is a directory of files; --out cannot be '-'`, 2)
      checkOutputPath(outPath, { flag: '--out', kind: multiFile ? 'folder' : 'file', inputs: [inPath], replace: v.force, replaceFlag: '--force' })
    }
    checkWindowOptions(modelDir, maxLengthOpt, stride)
    checkTaggingModel(modelDir, v.head)
    if (outFormat) checkOutput(outFormat)

    // Its annotations are replaced by the model's: a bad one costs a warning, not the file.
    const offsets = offsetsOpt(v.offsets)
    const corpus = await readCorpus(inPath, inFormat, quiet, undefined, { textOnly: true })
    if (!outFormat) {
      outFormat = TAGGED_FORMATS.includes(corpus.format) ? corpus.format : 'pubtator'
      checkOutput(outFormat)
    }

    await startBackend(quiet)
    const tagger = await openModelTagger(modelDir, { maxLength: maxLengthOpt, stride, threads: intOpt(v.threads, '--threads', 1) }, quiet)
    const started = performance.now()
    let lastReport = 0
    const tagged = await tagger.tag(corpus.documents, {
      batchSize,
      head: v.head,
      documentRules: documentRulesOpt(v['no-document-rules']),
      onProgress: (done, total) => {
        const now = performance.now()
        if (!quiet && (now - lastReport > 2000 || done === total)) {
          lastReport = now
          process.stderr.write(`tagged ${done}/${total} documents\n`)
        }
      },
    })
    await tagger.dispose()
    const predicted = tagged.map((t) => t.mentions)
    let kept = 0
    let confSum = 0
    const docs: CorpusDocument[] = corpus.documents.map((d, i) => {
      const mentions = predicted[i]
        .filter((m) => m.confidence >= minConf)
        .map(({ start, end, text, type }) => ({ start, end, text, type }))
      kept += mentions.length
      for (const m of predicted[i]) if (m.confidence >= minConf) confSum += m.confidence
      return { ...d, mentions }
    })
    const warnings: CorpusIssue[] = []
    await writeCorpusOutput(docs, outFormat, outPath, { baseName: stemOf(inPath) || 'corpus', onIssue: (w) => warnings.push(w), outputName: outPath === '-' ? 'standard output' : outPath, offsets })
    if (!quiet) {
      for (const w of warnings.slice(0, MAX_WARNINGS_SHOWN)) process.stderr.write(`warning: ${formatIssue(w)}\n`)
      if (warnings.length > MAX_WARNINGS_SHOWN) process.stderr.write(`warning: … and ${warnings.length - MAX_WARNINGS_SHOWN} more\n`)
    }
    if (!quiet) {
      const secs = (performance.now() - started) / 1000
      process.stderr.write(
        `tagged ${docs.length} documents: ${kept} mentions (mean confidence ${kept ? (confSum / kept).toFixed(3) : '-'}) in ${secs.toFixed(1)}s → ${outPath} (${outFormat})\n`,
      )
    }
    return 0
  })
}

async function runBatch(v: Values, ins: string[], outDir: string): Promise<number> {
  if (v.out !== undefined) throw new CliError('give --out FILE (one input) or --out-dir DIR (batch), not both', 2)
  if (v['in-format'] !== undefined) throw new CliError('batch mode detects each input\'s format; --in-format is for one --in', 2)
  const quiet = v.quiet ?? false
  const log = stderrLog(quiet)
  const format = formatOpt(v.format, '--format') ?? 'pubtator'
  if (!BATCH_FORMATS.includes(format)) throw new CliError(`--format ${format}: batch mode writes one file per input (${BATCH_FORMATS.join(', ')})`, 2)
  const batchSize = intOpt(v['batch-size'], '--batch-size')
  const maxLength = intOpt(v['max-length'], '--max-length', 3)
  const stride = intOpt(v.stride, '--stride', 0)
  const threads = intOpt(v.threads, '--threads', 1)
  const minConfidence = numOpt(v['min-confidence'], '--min-confidence', (n) => n >= 0 && n <= 1, 'a number in [0, 1]') ?? 0
  const documentRules = documentRulesOpt(v['no-document-rules'])
  const offsets = offsetsOpt(v.offsets)
  let shard
  try {
    shard = resolveShard({ shard: v.shard, shardCount: intOpt(v['shard-count'], '--shard-count', 1) })
  } catch (e) {
    if (e instanceof ShardError) throw new CliError(e.message, 2)
    throw e
  }
  const modelDir = modelOrDefault(v.model, quiet)
  checkWindowOptions(modelDir, maxLength, stride)
  checkTaggingModel(modelDir, v.head)
  const ignored: IgnoredInput[] = []
  const inputs = expandInputs(ins, (i) => ignored.push(i))
  try {
    // Output names clash (or would overwrite an input): a usage error before the model loads.
    checkOutDirNotInput(ins, outDir)
    planOutputs(inputs, outDir, format)
  } catch (e) {
    throw new CliError((e as Error).message, 2, false)
  }
  const foreign = foreignOutputs(inputs, outDir, format, shard)
  if (foreign.length > 0) throw new CliError(foreign.slice(0, MAX_WARNINGS_SHOWN).map(foreignOutputMessage).join('\n') + (foreign.length > MAX_WARNINGS_SHOWN ? `\n… and ${foreign.length - MAX_WARNINGS_SHOWN} more` : ''))

  await startBackend(quiet)
  const tagger = await openModelTagger(modelDir, { maxLength, stride, threads }, quiet)
  // What makes an output stale: other weights or other tagging settings.
  const model = createHash('sha256')
    .update(await checkpointFingerprint(modelDir))
    // --offsets only when given: outputs made before it existed stay complete.
    .update(JSON.stringify({ head: v.head ?? null, windows: tagger.windows, minConfidence, ...(offsets ? { offsets } : {}), documentRules }))
    .digest('hex')
  for (const i of ignored.slice(0, MAX_WARNINGS_SHOWN)) log(`not tagged: ${i.path}: ${i.reason}`)
  if (ignored.length > MAX_WARNINGS_SHOWN) log(`not tagged: … and ${ignored.length - MAX_WARNINGS_SHOWN} more (listed under "ignored" in the JSON summary)`)
  log(`${shard.source}: ${filesOfShard(inputs, shard).length} of ${inputs.length} input file(s) → ${outDir} (${format})${ignored.length ? `; ${ignored.length} other file(s) in the --in folders not tagged` : ''}`)
  const stop = stopOnCtrlC(log, 'stopping after the current chunk; finished outputs are kept, the file in progress is redone next time')
  let result
  try {
    result = await tagFiles({
      inputs,
      outDir,
      format,
      shard,
      tagger,
      model,
      head: v.head,
      batchSize,
      documentRules,
      minConfidence,
      offsets,
      signal: stop.signal,
      onFile: (f) => {
        if (f.status === 'skipped') log(`skipped ${f.input}: ${f.output} is complete`)
        else if (f.status === 'failed') process.stderr.write(`error: ${f.reason}\n`)
        else {
          for (const p of f.problems ?? []) process.stderr.write(`error: ${p} (record skipped; the rest of the file is tagged)\n`)
          for (const w of f.warnings ?? []) log(`warning: ${w}`)
          log(
            `tagged ${f.input}: ${f.documents} documents, ${f.mentions} mentions${f.deleted?.length ? `, ${f.deleted.length} deleted PMIDs listed in the record` : ''}, ` +
              `${(f.documents / Math.max(f.seconds, 1e-9)).toFixed(1)} documents/s → ${f.output}${f.reason ? ` (${f.reason})` : ''}`,
          )
        }
      },
    })
  } catch (e) {
    if (e instanceof CorpusError) throw new CliError(e.message)
    throw e
  } finally {
    stop.release()
    await tagger.dispose()
  }
  const failed = result.files.filter((f) => f.status === 'failed')
  const withProblems = result.files.filter((f) => (f.problems?.length ?? 0) > 0)
  const tagged = result.files.filter((f) => f.status === 'tagged')
  const pieces = tagged.reduce((a, f) => a + f.pieces, 0)
  log(
    `${tagged.length} tagged, ${result.files.length - tagged.length - failed.length} already complete, ${failed.length} failed; ` +
      `${result.documents} documents in ${result.seconds.toFixed(1)}s (${(result.documents / Math.max(result.seconds, 1e-9)).toFixed(1)} documents/s, ${Math.round(pieces / Math.max(result.seconds, 1e-9))} pieces/s)`,
  )
  process.stdout.write(
    JSON.stringify({
      shard: { index: shard.index + 1, count: shard.count, source: shard.source },
      files: result.files.map((f) => ({ input: f.input, output: f.output, status: f.status, documents: f.documents, mentions: f.mentions, seconds: f.seconds, ...(f.deleted?.length ? { deleted: f.deleted } : {}), ...(f.problems?.length ? { problems: f.problems } : {}), ...(f.warnings?.length ? { warnings: f.warnings } : {}), ...(f.reason ? { reason: f.reason } : {}) })),
      ...(ignored.length ? { ignored } : {}),
      documents: result.documents,
      seconds: result.seconds,
    }) + '\n',
  )
  if (stop.signal.aborted) return 130
  // A file that failed, or had records that could not be read: the scheduler should flag the task.
  return failed.length > 0 || withProblems.length > 0 ? 1 : 0
}
