// `fastbioner convert --in FILE [--from FORMAT] [--to FORMAT] --out PATH`
import { CORPUS_FORMATS, type CorpusIssue } from '../../shared/domain'
import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { CorpusDocument } from '../../shared/domain'
import { corpusChunks, CorpusError, documentFiles, encodeForPath, formatIssue, formatOfOutputName, fsProblem, mapMentionTypes, openCorpusStream, UniqueFileNames, WRITABLE_FORMATS } from '../../core/corpus'
import { writeFileAtomicStream, writeFolderAtomicStream } from '../../core/fs/atomic'
import { CliError, runCommand } from './_ml'
import { flagOptions, formatOpt, mapTypesHelp, offsetsHelp, offsetsOpt, repeatableOptions, typeMapOpt, valueOptions } from './_options'
import { checkOutputPath } from './_output'

const USAGE = `usage: fastbioner convert --in FILE [--from FORMAT] [--to FORMAT] --out PATH [options]

Reads a corpus file and writes it in another format.

  --in FILE          input file (for brat, the .ann or the .txt of a pair)
  --from FORMAT      input format; detected from the name and content when left out
  --to FORMAT        output format; when left out, the one --out's name gives (.pubtator,
                     .conll/.tsv/.iob, .json BioC, .xml BioC)
  --out PATH         a new output file, or '-' for standard output; a new or empty folder for
                     brat and text (one .txt/.ann pair, or one .txt, per document)
  --force            replace an existing --out file, or (brat and text) the contents of a
                     non-empty --out folder
  --sentences-per-document N
                     CoNLL input without -DOCSTART- lines: sentences per document (default 10)
${mapTypesHelp(21)}
${offsetsHelp(21, 'written')}
  --max-size MIB     refuse input files larger than this (default 512)
  -q, --quiet        no summary or warnings on standard error
  -h, --help         this text

formats: ${CORPUS_FORMATS.join(', ')} (pubmed-xml is input only; bioc = bioc-json)
exit codes: 0 done, 1 the input could not be read or the output not written, 2 usage error`

const MAX_WARNINGS_SHOWN = 20

const OPTIONS = {
  ...valueOptions('in', 'from', 'to', 'out', 'sentences-per-document', 'max-size', 'offsets'),
  ...repeatableOptions('map-types'),
  ...flagOptions('force'),
}

export async function run(argv: string[]): Promise<number> {
  return runCommand('convert', USAGE, argv, OPTIONS, async (values) => {
    if (!values.in) throw new CliError('--in FILE is required', 2)
    if (!values.out) throw new CliError('--out PATH is required', 2)
    const from = formatOpt(values.from, '--from')
    const to = formatOpt(values.to, '--to') ?? formatOfOutputName(values.out)
    if (!to) throw new CliError(`--to FORMAT is required (--out ${values.out} does not say one: .pubtator, .conll, .json, .xml do)`, 2)
    if (!WRITABLE_FORMATS.includes(to)) throw new CliError(`${to} can be read but not written (write one of ${WRITABLE_FORMATS.join(', ')})`, 2)
    const perDocument = values['sentences-per-document'] === undefined ? undefined : Number(values['sentences-per-document'])
    if (perDocument !== undefined && (!Number.isInteger(perDocument) || perDocument < 1)) throw new CliError('--sentences-per-document must be a positive integer', 2)
    const maxSize = values['max-size'] === undefined ? undefined : Number(values['max-size'])
    if (maxSize !== undefined && !(maxSize > 0)) throw new CliError('--max-size must be a positive number of MiB', 2)
    const multiFile = to === 'brat' || to === 'text'
    if (multiFile && values.out === '-') throw new CliError(`${to} output is a directory of files; --out cannot be '-'`, 2)
    checkOutputPath(values.out, { flag: '--out', kind: multiFile ? 'folder' : 'file', inputs: [values.in], replace: values.force, replaceFlag: '--force' })
    const quiet = values.quiet ?? false
    const typeMap = typeMapOpt(values['map-types'])
    const typesSeen = new Set<string>()

    const warnings: CorpusIssue[] = []
    const offsets = offsetsOpt(values.offsets)
    let documentCount = 0
    let mentionCount = 0
    let written = 1
    let inFormat
    try {
      // Documents stream from reader to writer one at a time (memory flat in the file size).
      const stream = await openCorpusStream(values.in, from, {
        ...(perDocument !== undefined ? { sentencesPerDocument: perDocument } : {}),
        ...(maxSize !== undefined ? { maxBytes: Math.floor(maxSize * 1024 * 1024) } : {}),
      })
      inFormat = stream.format
      const counted = async function* (): AsyncGenerator<CorpusDocument> {
        for await (const d of stream.documents) {
          documentCount++
          mentionCount += d.mentions.length
          if (!typeMap) {
            yield d
            continue
          }
          for (const m of d.mentions) typesSeen.add(m.type)
          yield mapMentionTypes([d], typeMap)[0]
        }
      }
      const outputName = values.out === '-' ? 'standard output' : values.out
      const onIssue = (issue: CorpusIssue): void => {
        warnings.push(issue)
      }
      if (multiFile) {
        // One document's files at a time into a temporary folder that replaces --out when complete.
        const names = new UniqueFileNames()
        const files = async function* () {
          for await (const d of counted()) yield* documentFiles(d, to as 'brat' | 'text', names.next(d), { offsets })
        }
        mkdirSync(dirname(resolve(values.out)), { recursive: true })
        written = await writeFolderAtomicStream(values.out, files())
      } else if (values.out === '-') {
        for await (const chunk of corpusChunks(counted(), to, { onIssue, outputName, offsets })) {
          if (!process.stdout.write(chunk)) await new Promise((r) => process.stdout.once('drain', r))
        }
      } else {
        mkdirSync(dirname(resolve(values.out)), { recursive: true })
        await writeFileAtomicStream(values.out, encodeForPath(values.out, corpusChunks(counted(), to, { onIssue, outputName, offsets })))
      }
      warnings.unshift(...stream.issues)
    } catch (error) {
      if (error instanceof CorpusError) {
        for (const issue of error.issues.filter((i) => i.severity === 'error')) process.stderr.write(`error: ${formatIssue(issue)}\n`)
        return 1
      }
      if (error instanceof CliError) throw error
      throw new CliError(`${values.out}: cannot write the output: ${fsProblem(error)}`)
    }

    if (!quiet) {
      for (const w of warnings.slice(0, MAX_WARNINGS_SHOWN)) process.stderr.write(`warning: ${formatIssue(w)}\n`)
      if (warnings.length > MAX_WARNINGS_SHOWN) process.stderr.write(`warning: … and ${warnings.length - MAX_WARNINGS_SHOWN} more\n`)
      const unused = typeMap ? [...typeMap.keys()].filter((t) => !typesSeen.has(t)) : []
      if (unused.length) process.stderr.write(`warning: ${values.in}: --map-types source type(s) ${unused.join(', ')} do not occur in it\n`)
      const where = values.out === '-' ? 'standard output' : multiFile ? `${written} files in ${values.out}` : values.out
      process.stderr.write(`converted ${documentCount} documents, ${mentionCount} mentions: ${values.in} (${inFormat}) → ${where} (${to})\n`)
    }
    return 0
  })
}
