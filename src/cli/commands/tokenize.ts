// `fastbioner tokenize --vocab FILE [--uncased | --cased] --text STRING`
// Prints {"tokens", "ids", "offsets"} (no [CLS]/[SEP]) as one JSON line on stdout.
import { dirname } from 'node:path'
import { parseArgs } from 'node:util'
import { CheckpointError, declaredLowercase } from '../../core/model/checkpoint'
import { WordPieceTokenizer } from '../../core/nlp/tokenizer'
import { VocabError } from '../../core/nlp/vocab'

const USAGE = `usage: fastbioner tokenize --vocab FILE [--uncased | --cased] --text STRING

Tokenises text with a BERT WordPiece vocabulary and prints {"tokens", "ids", "offsets"} as JSON
(offsets: [start, end) into the text, in UTF-16 code units; no [CLS]/[SEP]).

  --vocab FILE   vocab.txt, one token per line
  --uncased      lower-case and strip accents (BERT do_lower_case) for uncased vocabularies
  --cased        keep case and accents
                 (default: do_lower_case of the model's tokenizer_config.json or
                 tokenizer.json beside the vocabulary; cased when there is none)
  --text STRING  the text; '-' reads standard input
  -h, --help     this text

exit codes: 0 done, 1 the vocabulary could not be read, 2 usage error`

export async function run(argv: string[]): Promise<number> {
  let values: { vocab?: string; uncased?: boolean; cased?: boolean; text?: string; help?: boolean }
  try {
    ;({ values } = parseArgs({
      args: argv,
      options: {
        vocab: { type: 'string' },
        uncased: { type: 'boolean', default: false },
        cased: { type: 'boolean', default: false },
        text: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }))
  } catch (err) {
    process.stderr.write(`fastbioner tokenize: ${(err as Error).message}\n${USAGE}\n`)
    return 2
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  if (values.vocab === undefined || values.text === undefined) {
    process.stderr.write(`fastbioner tokenize: ${values.vocab === undefined ? '--vocab' : '--text'} is required\n${USAGE}\n`)
    return 2
  }
  if (values.uncased && values.cased) {
    process.stderr.write(`fastbioner tokenize: give at most one of --uncased and --cased\n${USAGE}\n`)
    return 2
  }
  let tokenizer: WordPieceTokenizer
  try {
    const lowercase = values.uncased ? true : values.cased ? false : (declaredLowercase(dirname(values.vocab)) ?? false)
    tokenizer = WordPieceTokenizer.fromVocabFile(values.vocab, { lowercase })
  } catch (err) {
    if (err instanceof VocabError || err instanceof CheckpointError) {
      process.stderr.write(`fastbioner tokenize: ${err.message}\n`)
      return 1
    }
    throw err
  }
  const text = values.text === '-' ? await readStdin() : values.text
  const { tokens, ids, offsets } = tokenizer.tokenize(text)
  process.stdout.write(JSON.stringify({ tokens, ids, offsets }) + '\n')
  return 0
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
