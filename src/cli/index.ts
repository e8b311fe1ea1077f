// `fastbioner <command>`: a headless front end over the same core the app uses.
// Each command lives in ./commands/<name>.ts and exports run(argv) → exit code. Commands load
// lazily with require(): tsx hooks the CJS loader, and a dynamic import() would bypass it.

interface CommandModule {
  run(argv: string[]): Promise<number>
}

const COMMANDS: Record<string, { summary: string; load: () => Promise<CommandModule> }> = {
  convert: { summary: 'convert a corpus file between formats', load: async () => require('./commands/convert') as CommandModule },
  tokenize: { summary: 'tokenize text with a WordPiece vocabulary', load: async () => require('./commands/tokenize') as CommandModule },
  encode: { summary: 'run the encoder on token ids (logits, hidden states, attentions)', load: async () => require('./commands/encode') as CommandModule },
  pretrain: { summary: 'masked-LM pretraining on unlabelled in-domain text', load: async () => require('./commands/pretrain') as CommandModule },
  wordvec: { summary: 'a from-scratch encoder with word embeddings from in-domain fastText vectors', load: async () => require('./commands/wordvec') as CommandModule },
  charlm: { summary: 'a forward and backward character language model of unlabelled text, for word taggers', load: async () => require('./commands/charlm') as CommandModule },
  train: { summary: 'fine-tune or train a token classifier', load: async () => require('./commands/train') as CommandModule },
  tag: { summary: 'tag a corpus file with a model', load: async () => require('./commands/tag') as CommandModule },
  eval: { summary: 'entity-level precision/recall/F1 against gold', load: async () => require('./commands/eval') as CommandModule },
  distill: { summary: 'distil a teacher into a smaller student (FastBioNER KD, multi-teacher, multi-task)', load: async () => require('./commands/distill') as CommandModule },
  compare: { summary: 'compare models: size, F1 and speed side by side', load: async () => require('./commands/compare') as CommandModule },
  quantize: { summary: 'write an int8 version of a model (smaller, faster on the CPU)', load: async () => require('./commands/quantize') as CommandModule },
  'convert-model': { summary: 'write model.safetensors for a folder whose weights are pytorch_model.bin', load: async () => require('./commands/convert-model') as CommandModule },
  get: { summary: 'download a BERT model from the Hugging Face Hub into its cache (--list: the models there)', load: async () => require('./commands/get') as CommandModule },
}

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length))
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`)
  return `usage: fastbioner <command> [options]\n\ncommands:\n${lines.join('\n')}\n\nRun 'fastbioner <command> --help' for a command's options.`
}

/**
 * A reader that stops early (`fastbioner convert --out - … | head`) closes the pipe, and the next
 * write to standard output fails with EPIPE: every command stops there quietly and successfully,
 * as Unix tools do, instead of dying on an unhandled 'error' event (a stack trace, exit code 1 or
 * 7). One handler for every command's output; other errors on standard output stay fatal.
 */
function stopQuietlyOnClosedOutput(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0)
    throw error
  })
}

export async function main(argv: string[]): Promise<number> {
  stopQuietlyOnClosedOutput()
  const [name, ...rest] = argv
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage() + '\n')
    return name ? 0 : 2
  }
  const command = COMMANDS[name]
  if (!command) {
    process.stderr.write(`fastbioner: unknown command '${name}'\n\n${usage()}\n`)
    return 2
  }
  const module = await command.load()
  return module.run(rest)
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code
    },
    (error: unknown) => {
      process.stderr.write(`fastbioner: ${error instanceof Error ? error.message : String(error)}\n`)
      process.exitCode = 1
    },
  )
}
