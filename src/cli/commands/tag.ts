// `fastbioner tag --model DIR --in FILE --out FILE [--format pubtator|conll|bioc]`
import type { CorpusDocument, CorpusFormat, CorpusIssue } from '../../shared/domain'
import { formatIssue, stemOf, WRITABLE_FORMATS } from '../../core/corpus'
import { checkHeadOption, checkWindowOptions, CliError, formatOpt, intOpt, MAX_WARNINGS_SHOWN, modelOrDefault, numOpt, openModelTagger, parse, readCorpus, requireOpt, runCommand, startBackend } from './_ml'
import { checkOutputPath, writeCorpusOutput } from './_output'

const USAGE = `usage: fastbioner tag [--model DIR] --in FILE --out FILE [--format pubtator|conll|bioc] [options]

Tags every document of a corpus file with a token-classification model and writes the
documents with the predicted mentions (gold mentions in the input are replaced).

  --model DIR        checkpoint directory (config.json, vocab.txt, model.safetensors);
                     default: the model that ships with fastbioner (Disease, Chemical, Gene)
  --in FILE          input corpus, any supported format (detected unless --in-format)
  --out FILE         output file ('-' for standard output); a new or empty folder for brat
                     and text
  --force            brat and text: replace the contents of a non-empty --out folder
  --format FORMAT    output format: pubtator, conll, bioc (= bioc-json), bioc-xml, brat, text;
                     default: the input's format when writable, else pubtator
  --in-format FORMAT input format when detection is not wanted
  --batch-size N     windows per forward pass (default 32)
  --max-length N     pieces per window incl. [CLS]/[SEP] (default: as trained, else 128)
  --stride N         overlap of consecutive windows in pieces
  --head NAME        tag with this head of a multi-task model only (default: every head,
                     their mentions merged; overlaps go to the more confident head)
  --min-confidence X drop mentions whose confidence is below X (0..1)
  -q, --quiet        no progress or summary on standard error
  -h, --help         this text

exit codes: 0 done, 1 input/model/output problem, 2 usage error`

export async function run(argv: string[]): Promise<number> {
  return runCommand('tag', USAGE, async () => {
    const v = parse(argv, {
      model: { type: 'string' },
      in: { type: 'string' },
      out: { type: 'string' },
      format: { type: 'string' },
      'in-format': { type: 'string' },
      'batch-size': { type: 'string' },
      'max-length': { type: 'string' },
      stride: { type: 'string' },
      'min-confidence': { type: 'string' },
      head: { type: 'string' },
      force: { type: 'boolean' },
      quiet: { type: 'boolean', short: 'q' },
      help: { type: 'boolean', short: 'h' },
    })
    if (v.help) {
      process.stdout.write(USAGE + '\n')
      return 0
    }
    const inPath = requireOpt(v.in, '--in')
    const outPath = requireOpt(v.out, '--out')
    const inFormat = formatOpt(v['in-format'], '--in-format')
    let outFormat = formatOpt(v.format, '--format')
    if (outFormat && !WRITABLE_FORMATS.includes(outFormat)) throw new CliError(`--format ${outFormat} can be read but not written (one of ${WRITABLE_FORMATS.join(', ')})`, 2)
    const batchSize = intOpt(v['batch-size'], '--batch-size')
    const maxLengthOpt = intOpt(v['max-length'], '--max-length', 3)
    const stride = intOpt(v.stride, '--stride', 0)
    const minConf = numOpt(v['min-confidence'], '--min-confidence', (n) => n >= 0 && n <= 1, 'a number in [0, 1]') ?? 0
    const quiet = v.quiet ?? false
    const modelDir = modelOrDefault(v.model, quiet)
    const checkOutput = (format: CorpusFormat): void => {
      const multiFile = format === 'brat' || format === 'text'
      if (multiFile && outPath === '-') throw new CliError(`${format} output is a directory of files; --out cannot be '-'`, 2)
      checkOutputPath(outPath, { flag: '--out', kind: multiFile ? 'folder' : 'file', inputs: [inPath], replace: v.force, replaceFlag: '--force' })
    }
    checkWindowOptions(modelDir, maxLengthOpt, stride)
    checkHeadOption(modelDir, v.head)
    if (outFormat) checkOutput(outFormat)

    const corpus = await readCorpus(inPath, inFormat, quiet)
    if (!outFormat) {
      outFormat = WRITABLE_FORMATS.includes(corpus.format) ? corpus.format : 'pubtator'
      checkOutput(outFormat)
    }

    await startBackend(quiet)
    const tagger = await openModelTagger(modelDir, { maxLength: maxLengthOpt, stride }, quiet)
    const started = performance.now()
    let lastReport = 0
    const tagged = await tagger.tag(corpus.documents, {
      batchSize,
      head: v.head,
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
    writeCorpusOutput(docs, outFormat, outPath, { baseName: stemOf(inPath) || 'corpus', onIssue: (w) => warnings.push(w) })
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
