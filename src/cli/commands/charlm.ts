// `fastbioner charlm --text FILE [--text ...] --out DIR [options]`
import { CHAR_LM_DEFAULTS } from '../../core/model/char-lm'
import { CHAR_LM_TRAIN_DEFAULTS, trainCharLm } from '../../core/pretrain/char-lm'
import { CliError, runCommand, stderrLog, stopOnCtrlC, writeJsonLine } from './_ml'
import { flagOptions, intOpt, numOpt, repeatableOptions, valueOptions } from './_options'
import { checkOutputPath } from './_output'

const USAGE = `usage: fastbioner charlm --text FILE [--text ...] --out DIR --minutes N [options]
       fastbioner charlm --resume --out DIR --minutes N

A character language model of unlabelled in-domain text, forward and backward (Akbik et al.
2018's contextual string embeddings, one LSTM layer per direction), whose per-word states a
word tagger reads: 'train --arch word-lstm --char-lm DIR'.

  --text FILE        plain text, one sentence per line; repeat for several
  --out DIR          new (or empty) folder for the model
  --minutes N        training time of the whole run (a resumed run counts what it did; time the
                     process is stopped, kill -STOP or Ctrl-Z, is not counted)
  --resume           continue the run in --out (saved every ${CHAR_LM_TRAIN_DEFAULTS.saveEveryMinutes} minutes)
  --hidden N         LSTM size of each direction (default ${CHAR_LM_DEFAULTS.hidden})
  --char-dim N       character embedding size (default ${CHAR_LM_DEFAULTS.charDim})
  --min-count N      characters seen fewer times are <unk> (default ${CHAR_LM_DEFAULTS.minCount})
  --batch N          parallel streams of the text (default ${CHAR_LM_TRAIN_DEFAULTS.batch})
  --bptt N           characters per chunk of back-propagation (default ${CHAR_LM_TRAIN_DEFAULTS.steps})
  --lr X             Adam learning rate (default ${CHAR_LM_TRAIN_DEFAULTS.lr})
  --seed N           initialisation and dropout (default ${CHAR_LM_TRAIN_DEFAULTS.seed})
  --threads N        onnxruntime threads (default: all cores)
  -q, --quiet        no progress on standard error
  -h, --help         this text

Prints a JSON summary on standard output (held-out bits per character after each epoch and at
the end). Ctrl-C saves and stops; --resume continues.
exit codes: 0 done, 1 input problem, 2 usage error`

const OPTIONS = {
  ...valueOptions('out', 'minutes', 'hidden', 'char-dim', 'min-count', 'batch', 'bptt', 'lr', 'seed', 'threads'),
  ...repeatableOptions('text'),
  ...flagOptions('resume'),
}

export async function run(argv: string[]): Promise<number> {
  return runCommand('charlm', USAGE, argv, OPTIONS, async (v) => {
    const text = (v.text as string[] | undefined) ?? []
    const outDir = v.out
    if (!outDir) throw new CliError('--out DIR is required', 2)
    const minutes = numOpt(v.minutes, '--minutes', (n) => n > 0, 'a positive number of minutes')
    if (minutes === undefined) throw new CliError('--minutes N is required', 2)
    const resume = v.resume ?? false
    if (resume && text.length) throw new CliError('--resume continues the run on the text it started with; leave out --text', 2)
    if (!resume && text.length === 0) throw new CliError('--text FILE is required', 2)
    if (resume) {
      const fixed = ['hidden', 'char-dim', 'min-count', 'batch', 'bptt', 'lr', 'seed'].filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      if (fixed.length) throw new CliError(`--resume continues the run with its own settings; leave out ${fixed.map((k) => `--${k}`).join(', ')}`, 2)
    } else checkOutputPath(outDir, { flag: '--out', kind: 'folder', inputs: text })
    const log = stderrLog(v.quiet ?? false)
    const stop = stopOnCtrlC(log, 'stopping: saving the model (Ctrl-C again to quit at once)', { exitOnSecond: true })
    try {
      const r = await trainCharLm({
        text,
        outDir,
        minutes,
        resume,
        hidden: intOpt(v.hidden, '--hidden'),
        charDim: intOpt(v['char-dim'], '--char-dim'),
        minCount: intOpt(v['min-count'], '--min-count'),
        batch: intOpt(v.batch, '--batch'),
        steps: intOpt(v.bptt, '--bptt'),
        lr: numOpt(v.lr, '--lr', (n) => n > 0 && n < 1, 'a learning rate in (0, 1)'),
        seed: intOpt(v.seed, '--seed', 0),
        threads: intOpt(v.threads, '--threads'),
        log,
        signal: stop.signal,
      })
      writeJsonLine({ out: r.outDir, hidden: r.dims.hidden, chars: r.dims.charVocabSize, steps: r.step, epochs: r.epoch, minutes: r.seconds / 60, charsPerSecond: Math.round(r.charsPerSecond), heldOut: r.heldOut })
    } finally {
      stop.release()
    }
    return 0
  })
}
