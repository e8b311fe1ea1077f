// `fastbioner wordvec --text FILE|DIR... --out DIR [--preset NAME] [options]`
import { PRESET_NAMES, type PresetName } from '../../shared/recipes'
import { buildWordVectorCheckpoint, buildWordVectorFile, WORDVEC_DEFAULTS } from '../../core/pretrain/wordvec'
import { MAX_VECTOR_DIM } from '../../core/nlp/word-vectors'
import { WORD_TAGGER_DEFAULTS } from '../../core/model/word-tagger'
import { CliError, formatDuration, runCommand, startBackend, stderrLog, writeJsonLine, type OptionValues } from './_ml'
import { flagOptions, intOpt, repeatableOptions, valueOptions } from './_options'
import { checkOutputPath } from './_output'

const USAGE = `usage: fastbioner wordvec --text FILE|DIR [--text ...] --out DIR [--preset NAME] [options]
       fastbioner wordvec --text FILE|DIR [--text ...] --vec FILE [--dim N] [options]

A from-scratch encoder whose word embeddings start from fastText skip-gram vectors (with
character n-grams) trained on unlabelled in-domain text, mapped onto a WordPiece vocabulary
learnt from the same text; the rest of the encoder is randomly initialised. Fine-tune it with
'fastbioner train --init DIR' or pretrain it further with 'fastbioner pretrain --init DIR'.

  --text PATH        plain text (.txt, .txt.gz), any corpus file the importers read, or a folder
                     of them; repeat for several (as for pretrain)
  --out DIR          new (or empty) folder for the checkpoint
  --vec FILE         instead of a checkpoint: the vectors of the words the word tagger reads (the
                     text split as 'train --arch word-lstm' splits it, lower-cased), in the
                     word2vec / fastText text format, most frequent word first, for
                     'train --word-vectors FILE'
  --dim N            --vec: vector size (default ${WORD_TAGGER_DEFAULTS.wordDim}, the word tagger's word size)
  --preset NAME      model shape: ${PRESET_NAMES.join(', ')} (default ${WORDVEC_DEFAULTS.preset});
                     the vectors have its hidden size
  --vocab-size N     WordPiece pieces learnt from the text (default ${WORDVEC_DEFAULTS.vocabSize})
  --cased            keep case (default: lower-cased vocabulary and vectors)
  --epochs N         fastText passes over the text (default ${WORDVEC_DEFAULTS.epochs})
  --min-count N      words seen fewer times get their vector from their n-grams only (default ${WORDVEC_DEFAULTS.minCount})
  --seed N           fastText and the encoder's initialisation (default ${WORDVEC_DEFAULTS.seed})
  --neighbours W,W   also report the ${WORDVEC_DEFAULTS.neighbours} nearest words of these words (a check of the vectors)
  -q, --quiet        no progress on standard error
  -h, --help         this text

fastText runs on one core (WebAssembly); about a minute per million words and epoch at 256
dimensions. Prints a JSON summary on standard output.
exit codes: 0 done, 1 input problem, 2 usage error`

const OPTIONS = {
  ...valueOptions('out', 'vec', 'dim', 'preset', 'vocab-size', 'epochs', 'min-count', 'seed', 'neighbours'),
  ...repeatableOptions('text'),
  ...flagOptions('cased'),
}

export async function run(argv: string[]): Promise<number> {
  return runCommand('wordvec', USAGE, argv, OPTIONS, async (v) => {
    const text = (v.text as string[] | undefined) ?? []
    if (text.length === 0) throw new CliError('--text FILE|DIR is required', 2)
    if (v.vec !== undefined) return wordVectorFile(v, text)
    const outDir = v.out
    if (!outDir) throw new CliError('--out DIR (a checkpoint) or --vec FILE (word vectors) is required', 2)
    if (v.dim !== undefined) throw new CliError('--dim is a setting of --vec: a checkpoint\'s vectors have its preset\'s hidden size', 2)
    if (v.preset !== undefined && !(PRESET_NAMES as string[]).includes(v.preset)) throw new CliError(`unknown --preset '${v.preset}' (one of ${PRESET_NAMES.join(', ')})`, 2)
    const vocabSize = intOpt(v['vocab-size'], '--vocab-size', 100)
    const epochs = intOpt(v.epochs, '--epochs')
    const minCount = intOpt(v['min-count'], '--min-count')
    const seed = intOpt(v.seed, '--seed', 0)
    const neighbours = v.neighbours === undefined ? [] : v.neighbours.split(',').map((w) => w.trim()).filter((w) => w !== '')
    const log = stderrLog(v.quiet ?? false)
    checkOutputPath(outDir, { flag: '--out', kind: 'folder', inputs: text })

    await startBackend(true)
    const r = await buildWordVectorCheckpoint({
      text,
      outDir,
      preset: v.preset as PresetName | undefined,
      vocabSize,
      lowercase: !(v.cased ?? false),
      epochs,
      minCount,
      seed,
      neighbours,
      log,
      onProgress: fastTextProgress(log),
    })
    logNeighbours(log, r.neighbours)
    writeJsonLine({
      out: r.outDir,
      pieces: r.pieces,
      pieces_from_words: r.fromWords,
      pieces_from_fragments: r.fromFragments,
      pieces_random: r.random,
      words: r.words,
      word_types: r.wordTypes,
      fasttext_words: r.fastTextWords,
      dim: r.dim,
      scale: r.scale,
      neighbours: r.neighbours,
      fasttext_seconds: Number(r.fastTextSeconds.toFixed(1)),
      wall_seconds: Number(r.wallSeconds.toFixed(1)),
    })
    return 0
  })
}

/** `wordvec --vec FILE`: word vectors for the word tagger, no checkpoint. */
async function wordVectorFile(v: OptionValues<typeof OPTIONS>, text: string[]): Promise<number> {
  for (const flag of ['out', 'preset', 'vocab-size', 'cased'] as const) {
    if (v[flag] !== undefined && v[flag] !== false) throw new CliError(`--${flag} is a setting of the checkpoint (--out), not of --vec`, 2)
  }
  const out = v.vec!
  if (out === '-') throw new CliError('--vec names a file (the vectors are written whole, then moved into place)', 2)
  const dim = intOpt(v.dim, '--dim', 1)
  if (dim !== undefined && dim > MAX_VECTOR_DIM) throw new CliError(`--dim must be at most ${MAX_VECTOR_DIM}, got ${dim}`, 2)
  const log = stderrLog(v.quiet ?? false)
  // Vectors take minutes to train: a file already there is someone's, never replaced (no --force).
  checkOutputPath(out, { flag: '--vec', kind: 'file', inputs: text })
  const r = await buildWordVectorFile({
    text,
    out,
    dim,
    epochs: intOpt(v.epochs, '--epochs'),
    minCount: intOpt(v['min-count'], '--min-count'),
    seed: intOpt(v.seed, '--seed', 0),
    neighbours: v.neighbours === undefined ? [] : v.neighbours.split(',').map((w) => w.trim()).filter((w) => w !== ''),
    log,
    onProgress: fastTextProgress(log),
  })
  logNeighbours(log, r.neighbours)
  writeJsonLine({ vec: r.out, vectors: r.vectors, dim: r.dim, words: r.words, word_types: r.wordTypes, neighbours: r.neighbours, fasttext_seconds: Number(r.fastTextSeconds.toFixed(1)), wall_seconds: Number(r.wallSeconds.toFixed(1)) })
  return 0
}

/** fastText's progress, every 10 seconds. */
function fastTextProgress(log: (line: string) => void): (progress: number, loss: number | null, wordsPerSecond: number, etaSeconds: number) => void {
  let lastReport = 0
  return (progress, loss, wordsPerSecond, etaSeconds) => {
    const now = performance.now()
    if (now - lastReport < 10_000) return
    lastReport = now
    log(`fastText ${(progress * 100).toFixed(1)}%${loss === null ? '' : ` loss ${loss.toFixed(4)}`} ${Math.round(wordsPerSecond)} words/s ETA ${formatDuration(etaSeconds)}`)
  }
}

function logNeighbours(log: (line: string) => void, neighbours: Record<string, Array<{ word: string; cosine: number }>>): void {
  for (const [word, near] of Object.entries(neighbours)) log(`nearest to '${word}': ${near.map((n) => `${n.word} ${n.cosine.toFixed(3)}`).join(', ')}`)
}
