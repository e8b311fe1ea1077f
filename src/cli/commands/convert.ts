// `fastbioner convert --in FILE [--from FORMAT] --to FORMAT --out PATH`
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'
import { CORPUS_FORMATS, type CorpusFormat, type CorpusIssue } from '../../shared/domain'
import { CorpusError, formatIssue, readCorpusFile, stemOf, WRITABLE_FORMATS, writeCorpus } from '../../core/corpus'

const USAGE = `usage: fastbioner convert --in FILE [--from FORMAT] --to FORMAT --out PATH [options]

Reads a corpus file and writes it in another format.

  --in FILE          input file (for brat, the .ann or the .txt of a pair)
  --from FORMAT      input format; detected from the name and content when left out
  --to FORMAT        output format
  --out PATH         output file, or '-' for standard output; a directory for brat and text
                     (one .txt/.ann pair, or one .txt, per document)
  --sentences-per-document N
                     CoNLL input without -DOCSTART- lines: sentences per document (default 10)
  --max-size MIB     refuse input files larger than this (default 512)
  -q, --quiet        no summary or warnings on standard error
  -h, --help         this text

formats: ${CORPUS_FORMATS.join(', ')} (pubmed-xml is input only)
exit codes: 0 done, 1 the input could not be read or the output not written, 2 usage error`

const MAX_WARNINGS_SHOWN = 20

export async function run(argv: string[]): Promise<number> {
  let values
  try {
    ;({ values } = parseArgs({
      args: argv,
      options: {
        in: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        out: { type: 'string' },
        'sentences-per-document': { type: 'string' },
        'max-size': { type: 'string' },
        quiet: { type: 'boolean', short: 'q' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }))
  } catch (error) {
    return usageError(error instanceof Error ? error.message : String(error))
  }
  if (values.help) {
    process.stdout.write(USAGE + '\n')
    return 0
  }
  if (!values.in) return usageError('--in FILE is required')
  if (!values.to) return usageError('--to FORMAT is required')
  if (!values.out) return usageError('--out PATH is required')
  const from = values.from
  if (from !== undefined && !isFormat(from)) return usageError(`unknown --from format '${from}' (one of ${CORPUS_FORMATS.join(', ')})`)
  const to = values.to
  if (!isFormat(to)) return usageError(`unknown --to format '${to}' (one of ${CORPUS_FORMATS.join(', ')})`)
  if (!WRITABLE_FORMATS.includes(to)) return usageError(`${to} can be read but not written (write one of ${WRITABLE_FORMATS.join(', ')})`)
  const perDocument = values['sentences-per-document'] === undefined ? undefined : Number(values['sentences-per-document'])
  if (perDocument !== undefined && (!Number.isInteger(perDocument) || perDocument < 1)) return usageError('--sentences-per-document must be a positive integer')
  const maxSize = values['max-size'] === undefined ? undefined : Number(values['max-size'])
  if (maxSize !== undefined && !(maxSize > 0)) return usageError('--max-size must be a positive number of MiB')
  const multiFile = to === 'brat' || to === 'text'
  if (multiFile && values.out === '-') return usageError(`${to} output is a directory of files; --out cannot be '-'`)
  const quiet = values.quiet ?? false

  let result
  try {
    result = await readCorpusFile(values.in, from, {
      ...(perDocument !== undefined ? { sentencesPerDocument: perDocument } : {}),
      ...(maxSize !== undefined ? { maxBytes: Math.floor(maxSize * 1024 * 1024) } : {}),
    })
  } catch (error) {
    if (error instanceof CorpusError) {
      for (const issue of error.issues.filter((i) => i.severity === 'error')) process.stderr.write(`error: ${formatIssue(issue)}\n`)
      return 1
    }
    throw error
  }
  const warnings: CorpusIssue[] = [...result.issues]

  const { files } = writeCorpus(result.documents, to, {
    baseName: stemOf(values.in),
    onIssue: (issue) => warnings.push(issue),
  })
  try {
    if (values.out === '-') {
      process.stdout.write(files[0]!.content)
    } else if (multiFile) {
      await mkdir(values.out, { recursive: true })
      for (const file of files) await writeFile(join(values.out, file.name), file.content, 'utf8')
    } else {
      await mkdir(dirname(values.out), { recursive: true })
      await writeFile(values.out, files[0]!.content, 'utf8')
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    process.stderr.write(`error: ${values.out}: cannot write the output: ${code ?? (error instanceof Error ? error.message : String(error))}\n`)
    return 1
  }

  if (!quiet) {
    for (const w of warnings.slice(0, MAX_WARNINGS_SHOWN)) process.stderr.write(`warning: ${formatIssue(w)}\n`)
    if (warnings.length > MAX_WARNINGS_SHOWN) process.stderr.write(`warning: … and ${warnings.length - MAX_WARNINGS_SHOWN} more\n`)
    const mentions = result.documents.reduce((n, d) => n + d.mentions.length, 0)
    const where = values.out === '-' ? 'standard output' : multiFile ? `${files.length} files in ${values.out}` : values.out
    process.stderr.write(`converted ${result.documents.length} documents, ${mentions} mentions: ${values.in} (${result.format}) → ${where} (${to})\n`)
  }
  return 0
}

function isFormat(value: string): value is CorpusFormat {
  return (CORPUS_FORMATS as readonly string[]).includes(value)
}

function usageError(message: string): number {
  process.stderr.write(`fastbioner convert: ${message}\n\n${USAGE}\n`)
  return 2
}
