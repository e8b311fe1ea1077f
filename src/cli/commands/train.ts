// `fastbioner train --train FILE --dev FILE --out DIR [--init HF_DIR | --preset NAME] [options]`
import { isCharLmFolder, loadCharLm } from '../../core/model/char-lm'
import { existsSync } from 'node:fs'
import type { CorpusDocument } from '../../shared/domain'
import { BertTokenClassifier, DEFAULT_HEAD } from '../../core/model/bert'
import { loadCheckpoint, readCheckpointInfo } from '../../core/model/checkpoint'
import { readMetadata } from '../../core/model/checkpoint-files'
import { presetConfig } from '../../core/model/presets'
import { learnCharVocabulary } from '../../core/model/char-cnn'
import { buildLabelMap, typesOfLabels } from '../../core/nlp/bio'
import { WordPieceTokenizer } from '../../core/nlp/tokenizer'
import { trainWordPieceVocab, trainWordVocab } from '../../core/nlp/vocab-trainer'
import { augmentByMentionReplacement } from '../../core/train/augment'
import { train, type AveragedOutcome, type TrainProgress } from '../../core/train/loop'
import type { RunResult } from '../../core/train/runner'
import { labelTransferSet, sampleTransferSentences, transferDocuments, type TransferTargets } from '../../core/train/transfer'
import { DEFAULT_SENTENCES_PER_DOCUMENT } from '../../core/corpus'
import { folderTransferTagStore } from '../../core/train/transfer-tags'
import { checkpointFingerprint } from '../../core/onnx/export'
import { baseWindows, trainWordTagger, WORD_TAGGER_RECIPE, wordTaskLabelMaps, type WordTransferSet } from '../../core/train/word-loop'
import { openTagger } from '../../core/tag/open'
import { charChannelOf, isWordTaggerFolder, loadWordTagger, WORD_TAGGER_DEFAULTS } from '../../core/model/word-tagger'
import { FINETUNE_RECIPE, isPresetName, PRESET_NAMES, SCRATCH_RECIPE, TRAIN_DEFAULTS, type PresetName } from '../../shared/recipes'
import { CliError, formatDuration, modelFolder, readCorpus, runCommand, type OptionValues, startBackend, stderrLog, stopOnCtrlC, writeJsonLine } from './_ml'
import { checkResumeOptions, CORPUS_OPTIONS, FINETUNE_OPTIONS, finetuneSettings, flagOptions, formatOpt, intOpt, mapTypesHelp, numOpt, repeatableOptions, requireOpt, taskSpecsOpt, typeMapOpt, valueOptions } from './_options'
import { checkOutputPath } from './_output'

const USAGE = `usage: fastbioner train --train FILE --dev FILE --out DIR [--init HF_DIR | --preset NAME] [options]
       fastbioner train --task NAME=TRAIN:DEV --task … --out DIR [--init HF_DIR | --preset NAME] [options]

Trains a BERT token classifier (IOB2 over the entity types of the training file). After each
epoch the model is scored on --dev (entity-level F1) and the best one is saved to --out
(HuggingFace layout: config.json, vocab.txt, model.safetensors). Progress goes to standard
error, a JSON summary to standard output. Ctrl-C stops after the current step and keeps the
best checkpoint; a second Ctrl-C exits at once.

  --train FILE        training corpus, any supported format (PubTator, CoNLL, BioC, brat, …)
  --dev FILE          devel corpus for model selection and early stopping (recommended)
  --task NAME=TRAIN:DEV   multi-task (MT-BioNER): one head NAME per corpus, repeat per corpus
                      (DEV optional; ',' also separates). A corpus trains only its own head, so
                      one that does not annotate a type never teaches another head "this is O";
                      tagging merges the heads. word-lstm: a NAME given again trains that head
                      on every corpus given it (e.g. one Disease head on two disease corpora, so
                      merged output has no overlapping heads); its corpora must annotate the
                      same types. Model selection: mean devel F1 over the corpora, each scored
                      on its own (named NAME@ the end of its devel path)
${mapTypesHelp(22)}
  --out DIR           checkpoint directory; one that already holds a model is refused
  --overwrite         replace the model in --out (after the first epoch, by that epoch's)
  --init HF_DIR       fine-tune a pre-trained checkpoint (BioBERT, PubMedBERT, one of ours);
                      a word tagger folder is trained further as a word tagger (its vocabularies kept)
  --resume            continue the run saved in --out (its weights and optimizer.safetensors)
                      with the inputs and settings it was started with, recorded in its
                      fastbioner.json: give only --out (and --threads, -q); to train a finished
                      model further, use --init. A word tagger continues from its best epoch,
                      and its --minutes count the time spent before the stop
  --arch A            from scratch: word-lstm (default: a character-aware BiLSTM-CRF over words,
                      the most accurate from-scratch tagger measured here) or bert (a transformer
                      over WordPiece pieces, --preset below; what --init fine-tunes and distil makes)
  --minutes M         stop after the first epoch that ends past M minutes (best epoch kept);
                      time the process is stopped (kill -STOP, Ctrl-Z) is not counted
  --teacher HEAD=DIR  distil: the model in DIR (any kind, e.g. a word tagger teaching a BERT
                      student) tags the --transfer text for head HEAD
                      once before training (its best label sequences, Kim & Rush 2016's
                      sequence-level knowledge distillation); repeat per head. HEAD= may be left
                      out for a single --train run. The teacher's head named HEAD runs, else its
                      only head. Several teachers for one head (e.g. one per seed): the head
                      learns the mentions more than half of them tag. Each teacher's tags are
                      kept in the --out folder (transfer-tags.json): a resumed or repeated run
                      with the same teachers and sentences reads them instead of tagging again
  --transfer PATH     unlabelled text for --teacher (.txt: a sentence a line; a folder or
                      any corpus format as for 'fastbioner pretrain'); repeatable
  --transfer-sentences N   a uniform sample (by --seed) of N transfer sentences (default: all)
  --transfer-targets T   word-lstm: what a transfer sentence teaches, vote (default: the
                      teachers' best label sequences, a span majority vote over an ensemble) or
                      posterior: each step draws, for every sentence and head, one of the head's
                      teachers and a label path from its CRF posterior (per word without a CRF),
                      so the student learns the teachers' distributions, not only their best
                      guess (structure-level distillation, Wang et al. 2020)
  --max-words N       word-lstm from scratch: most frequent words with their own vector (100
                      floats each; the rest are read through their characters), from the training
                      and transfer text (default ${WORD_TAGGER_RECIPE.maxWords})
  --word-vectors FILE word-lstm from scratch: start the word table from pretrained vectors (the
                      word2vec / fastText .vec / GloVe text format, e.g. 'fastbioner wordvec --vec'
                      of in-domain text, or vectors of all of PubMed): the word size becomes theirs,
                      and the file's most frequent words beyond the training text's join the
                      vocabulary (within --max-words), so the model knows words its corpora lack
  --dropout X         word-lstm: dropout on the features and on the BiLSTM's output while
                      training (default ${WORD_TAGGER_DEFAULTS.dropout}); with --init it replaces the model's
  --lr-schedule S     word-lstm: constant (default) or linear: the learning rate falls from --lr
                      to 0 at the last planned step (--epochs × steps per epoch, or --max-steps);
                      with --minutes, give --epochs the run can finish in that time
  --lstm-hidden N     word-lstm from scratch: units per direction of the BiLSTM (default ${WORD_TAGGER_DEFAULTS.lstmHidden})
  --char-lm DIR       word-lstm from scratch: a character language model ('fastbioner charlm')
                      whose states per word join the inputs; it becomes part of the model, frozen
  --char-cnn          bert: a character channel (a character CNN and case/shape flags per word,
                      added to its pieces' embeddings; core/model/char-cnn.ts), its characters
                      learnt from the training text; a model that has one keeps it
  --char-pieces P     with --char-cnn: the pieces that get their word's character vector, all
                      (default) or first
  --word-level        bert from scratch: the transformer runs over words, one position per
                      word: a whole-word vocabulary (the --vocab-size most frequent lower-cased
                      words of the training and transfer text, default ${SCRATCH_RECIPE.wordLevelVocabSize}) instead of
                      WordPiece pieces, every other word [UNK]; implies --char-cnn, through which
                      every word is also read
  --preset NAME       bert from scratch: a preset architecture (${PRESET_NAMES.join(', ')});
                      a WordPiece vocabulary is learnt from the training text first.
                      Default when neither is given: ${SCRATCH_RECIPE.preset}
  --epochs N          default ${FINETUNE_RECIPE.epochs} with --init, ${SCRATCH_RECIPE.epochs} from scratch
  --batch-size N      default ${TRAIN_DEFAULTS.batchSize}
  --lr X              peak learning rate; default ${FINETUNE_RECIPE.lr} with --init, ${SCRATCH_RECIPE.lr} from scratch
  --warmup-ratio X    fraction of steps with linear warm-up (default ${TRAIN_DEFAULTS.warmupRatio})
  --weight-decay X    AdamW decoupled weight decay (default ${TRAIN_DEFAULTS.weightDecay}; never on biases/LayerNorm)
  --max-grad-norm X   global gradient-norm clip, 0 = off (default ${TRAIN_DEFAULTS.maxGradNorm})
  --max-length N      pieces per example incl. [CLS]/[SEP] (default ${TRAIN_DEFAULTS.maxLength}); word-lstm:
                      words per window (default ${WORD_TAGGER_RECIPE.maxLength})
  --doc-level         windows over whole documents instead of one example per sentence (with
                      --transfer: passages of 10 consecutive lines instead of single lines); a
                      word tagger trained further from --init keeps the windows it was trained on
  --crf, --no-crf     a CRF over each head's labels (transition scores learnt with the encoder,
                      Viterbi decoding when tagging); default ${SCRATCH_RECIPE.crf ? 'on' : 'off'} from scratch, off with --init
                      (a run resumed or fine-tuned from a CRF checkpoint keeps its CRF)
  --augment-mentions N  add N copies of the training documents in which each mention is, with
                      probability 0.5, replaced by another training mention of its type
                      (mention replacement, Dai & Adel 2020); default ${SCRATCH_RECIPE.augmentCopies} from scratch, 0 with --init
  --patience N        stop after N epochs without a devel F1 improvement (default: never)
  --average-last N    checkpoint averaging: score the mean of the last N epochs' weights on
                      devel after training and keep it if it beats the best epoch (a resumed
                      run averages the epochs it ran since resuming); default
                      ${SCRATCH_RECIPE.averageLast >= 2 ? `${SCRATCH_RECIPE.averageLast} from scratch with --dev (bert), ` : ''}0 (off)
  --max-steps N       stop after N optimizer steps
  --seed N            shuffling, dropout and initialisation (default ${TRAIN_DEFAULTS.seed})
  --threads N         onnxruntime intra-op threads (default: all cores)
  --vocab-size N      from scratch: WordPiece vocabulary size (default ${SCRATCH_RECIPE.vocabSize})
  --cased             from scratch: keep case (default: lower-case, accents stripped)
  --train-format F, --dev-format F   input formats when detection is not wanted
  -q, --quiet         only errors on standard error

Trainer engine: onnxruntime (CUDA → DirectML → CPU) first, tfjs as the fallback;
FASTBIONER_TRAINER=onnxruntime|tfjs forces one (FASTBIONER_ORT_EP=cuda,dml,cpu picks providers).
  -h, --help          this text

exit codes: 0 done, 1 input/model problem, 2 usage error, 130 stopped by Ctrl-C (best checkpoint kept)`

const OPTIONS = {
  ...CORPUS_OPTIONS,
  ...FINETUNE_OPTIONS,
  ...repeatableOptions('teacher', 'transfer'),
  ...valueOptions('transfer-sentences', 'transfer-targets', 'max-words', 'dropout', 'lr-schedule', 'lstm-hidden', 'word-vectors', 'char-lm'),
  ...valueOptions('char-pieces'),
  ...valueOptions('arch', 'minutes', 'init', 'preset', 'max-grad-norm', 'augment-mentions', 'average-last', 'vocab-size', 'train-format', 'dev-format'),
  ...flagOptions('resume', 'doc-level', 'cased', 'crf', 'no-crf', 'char-cnn', 'word-level'),
}

export async function run(argv: string[]): Promise<number> {
  return runCommand('train', USAGE, argv, OPTIONS, async (given) => {
    // --resume: the run continues with the inputs and settings it was started with (recorded in
    // its fastbioner.json); only how it runs here (--threads, -q) may differ.
    const v = given.resume ? startedOptions(given) : given
    const taskSpecs = taskSpecsOpt(v)
    const trainPath = taskSpecs.length ? taskSpecs[0].train : requireOpt(v.train, '--train')
    const typeMap = typeMapOpt(v['map-types'])
    const outDir = requireOpt(v.out, '--out')
    if (v.init !== undefined && v.preset !== undefined) throw new CliError('give either --init HF_DIR (fine-tune) or --preset NAME (from scratch), not both', 2)
    const resume = v.resume ?? false
    const scratch = v.init === undefined && !resume
    // A word tagger given to --init is trained further as what it is.
    const initIsWordTagger = v.init !== undefined && isWordTaggerFolder(v.init)
    const arch = v.arch ?? ((scratch && v.preset === undefined) || initIsWordTagger ? 'word-lstm' : 'bert')
    if (arch !== 'word-lstm' && arch !== 'bert') throw new CliError(`unknown --arch '${arch}' (word-lstm or bert)`, 2)
    if (initIsWordTagger && arch !== 'word-lstm') throw new CliError(`--init ${v.init} is a word tagger: it trains further only as --arch word-lstm`, 2)
    if (arch === 'word-lstm') return trainWordLstm(v, taskSpecs, outDir, typeMap)
    for (const flag of ['minutes', 'max-words', 'dropout', 'lr-schedule', 'lstm-hidden', 'transfer-targets', 'word-vectors', 'char-lm'] as const) {
      if (v[flag] !== undefined) throw new CliError(`--${flag} is an option of --arch word-lstm`, 2)
    }
    const charPieces = v['char-pieces'] ?? 'all'
    if (charPieces !== 'all' && charPieces !== 'first') throw new CliError(`--char-pieces must be all or first, got '${charPieces}'`, 2)
    const wordLevel = v['word-level'] ?? false
    if (wordLevel && v.init !== undefined) throw new CliError(`--word-level is a vocabulary for a model from scratch: a run from --init keeps the vocabulary of ${v.init}`, 2)
    if (wordLevel && v['char-pieces'] !== undefined) throw new CliError('--char-pieces: with --word-level every word is one piece', 2)
    const charCnn = (v['char-cnn'] ?? false) || wordLevel
    if (v['char-pieces'] !== undefined && !charCnn) throw new CliError('--char-pieces is an option of --char-cnn', 2)
    const presetName = v.preset ?? SCRATCH_RECIPE.preset
    if (scratch && !isPresetName(presetName)) throw new CliError(`unknown --preset '${presetName}' (one of ${PRESET_NAMES.join(', ')})`, 2)
    const settings = finetuneSettings(v)
    const { warmupRatio, weightDecay, maxLength: maxLengthOpt, patience, maxSteps, threads } = settings
    const epochs = settings.epochs ?? (scratch ? SCRATCH_RECIPE.epochs : FINETUNE_RECIPE.epochs)
    const batchSize = settings.batchSize ?? TRAIN_DEFAULTS.batchSize
    const lr = settings.lr ?? (scratch ? SCRATCH_RECIPE.lr : FINETUNE_RECIPE.lr)
    const seed = settings.seed ?? TRAIN_DEFAULTS.seed
    const maxGradNorm = numOpt(v['max-grad-norm'], '--max-grad-norm', (n) => n >= 0, 'a number >= 0')
    // From scratch the recipe's levers are on unless turned off (--no-crf, --augment-mentions 0,
    // --average-last 0); a resumed run continues with the levers it was started with.
    if (v.crf && v['no-crf']) throw new CliError('give either --crf or --no-crf', 2)
    const wantCrf = v.crf ?? (scratch && SCRATCH_RECIPE.crf && !v['no-crf'])
    const augmentCopies = intOpt(v['augment-mentions'], '--augment-mentions', 0) ?? (scratch ? SCRATCH_RECIPE.augmentCopies : 0)
    const hasDev = v.dev !== undefined || taskSpecs.some((t) => t.dev !== undefined)
    const averageLast = averageLastOpt(v, hasDev) ?? (scratch && hasDev ? SCRATCH_RECIPE.averageLast : 0)
    const vocabSize = intOpt(v['vocab-size'], '--vocab-size', 100) ?? (wordLevel ? SCRATCH_RECIPE.wordLevelVocabSize : SCRATCH_RECIPE.vocabSize)
    const quiet = v.quiet ?? false
    const log = stderrLog(quiet)

    checkOutputPath(outDir, {
      flag: '--out',
      kind: 'checkpoint',
      inputs: [...runInputs(v, taskSpecs, trainPath), v.init],
      // --resume continues the model that is there (the run checks its optimizer state).
      replace: v.overwrite || resume,
      replaceFlag: '--overwrite',
    })

    const tasks = await readTasks(v, taskSpecs, trainPath, typeMap, augmentCopies, seed, log, false)
    const transfer = await readTransferSet(v, tasks, seed, threads, log, outDir)
    // A BERT head trains on its own examples: each head's teacher-tagged copy of the transfer
    // text joins that head's corpus (the word tagger instead trains every head on one copy).
    for (const [head, mentions] of Object.entries(transfer?.mentions ?? {})) {
      const task = tasks.find((t) => t.head === head)!
      task.train = [...task.train, ...transfer!.documents.map((d, i) => ({ ...d, mentions: [...mentions[i]] }))]
    }
    const headLabels = Object.fromEntries(tasks.map((t) => [t.head, t.labels]))
    const trainDocs = tasks.flatMap((t) => t.train)

    const backend = await startBackend(quiet)
    let model: BertTokenClassifier
    let tokenizer: WordPieceTokenizer
    if (!scratch) {
      const from = resume ? outDir : modelFolder(v.init!, quiet, '--init')
      const ck = await loadCheckpoint(from, { heads: headLabels, seed })
      for (const n of ck.notes) log(`note: ${n}`)
      model = ck.model
      tokenizer = new WordPieceTokenizer(ck.vocab, { lowercase: ck.lowercase, source: `${from}/vocab.txt` })
    } else {
      const lowercase = !(v.cased ?? false)
      const t0 = performance.now()
      const vocab = (wordLevel ? trainWordVocab : trainWordPieceVocab)(
        trainDocs.map((d) => d.text),
        { vocabSize, lowercase },
      )
      log(`vocabulary: ${vocab.tokens.length} ${wordLevel ? 'whole words (one position per word)' : 'WordPiece tokens'} from ${vocab.wordTypes} word types (${((performance.now() - t0) / 1000).toFixed(1)}s)`)
      tokenizer = new WordPieceTokenizer(vocab.tokens, { lowercase })
      const config = presetConfig(presetName as PresetName, { vocabSize: vocab.tokens.length })
      model = BertTokenClassifier.random(config, seed, headLabels)
    }
    if (charCnn && !model.config.charCnn) {
      // A word-tagger teacher's character CNN is where the channel starts (its characters, sizes
      // and weights; the projection from zero), else characters as written in the training text
      // (the channel keeps case even when the pieces are lower-cased).
      const teacherDir = (v.teacher ?? []).map((t) => modelFolder(teacherSpec(t)[1], true, '--teacher')).find((dir) => isWordTaggerFolder(dir))
      const from = teacherDir !== undefined ? charChannelOf(loadWordTagger(teacherDir)) : undefined
      const chars = from?.chars ?? learnCharVocabulary(trainDocs.flatMap((d) => d.text.split(/\s+/)))
      model.addCharCnn(chars, { pieces: charPieces, ...from?.dims }, seed, from?.params)
      log(`characters: ${chars.chars.length} (${charPieces === 'all' ? 'every piece' : 'first pieces'} of a word read its character vector)${from ? `; the character CNN starts as ${teacherDir}'s` : ''}`)
    }
    if (wantCrf) {
      const missing = tasks.filter((t) => !model.heads.get(t.head)?.crf)
      for (const t of missing) model.addCrf(t.head)
    }
    const crfHeads = tasks.filter((t) => model.heads.get(t.head)?.crf).map((t) => t.head)
    const maxLength = maxLengthOpt ?? Math.min(TRAIN_DEFAULTS.maxLength, model.config.maxPositionEmbeddings)
    const c = model.config
    const numParameters = model.numParameters()
    log(
      `model: ${scratch ? `preset ${presetName} (from scratch)` : resume ? `${outDir} (resuming)` : v.init} — ${c.numHiddenLayers} layers × ${c.hiddenSize} wide${c.charCnn ? ` + characters (${c.charCnn.charVocabSize} × ${c.charCnn.charDim}, ${c.charCnn.charFilters} filters of ${c.charCnn.charWidth})` : ''}, ` +
        `${(numParameters / 1e6).toFixed(2)}M parameters; ${tasks.map((t) => `${tasks.length > 1 ? `head ${t.head}: ` : ''}labels ${t.labels.join(' ')}${crfHeads.includes(t.head) ? ' + CRF' : ''}`).join('; ')}`,
    )

    const stop = stopOnCtrlC(log, 'stopping after the current step (Ctrl-C again to exit at once); the best checkpoint is kept', { exitOnSecond: true })

    const onProgress = progressLogger(log)

    let result
    try {
      result = await train({
        model,
        tokenizer,
        tasks: tasks.map((t) => ({ head: t.head, train: t.train, dev: t.dev })),
        onTaskScores: tasks.length > 1 ? taskScoresLogger(log) : undefined,
        outDir,
        epochs,
        batchSize,
        lr,
        warmupRatio: warmupRatio ?? (scratch ? SCRATCH_RECIPE.warmupRatio : FINETUNE_RECIPE.warmupRatio),
        weightDecay,
        maxGradNorm: maxGradNorm === 0 ? null : maxGradNorm,
        seed,
        maxLength,
        sentenceLevel: !(v['doc-level'] ?? false),
        patience,
        maxSteps,
        averageLast: averageLast >= 2 ? averageLast : undefined,
        threads,
        onProgress,
        signal: stop.signal,
        resume,
        onTrainer: (trainer, reason) => log(`trainer: ${trainer} (${reason})`),
        checkpoint: {
          metadata: {
            source: {
              ...(taskSpecs.length ? { tasks: taskSources(taskSpecs) } : { train: trainPath, dev: v.dev ?? null }),
              init: v.init ?? null,
              preset: scratch ? presetName : null,
              augmentMentions: augmentCopies,
              ...transferSource(v, transfer),
              averageLast,
              // What --resume restarts with: the options of this run, every default resolved.
              options: {
                ...givenOptions(v, taskSpecs, trainPath, ['map-types', 'train-format', 'dev-format', 'weight-decay', 'patience', 'max-steps', 'teacher', 'transfer', 'transfer-sentences']),
                epochs: String(epochs),
                'batch-size': String(batchSize),
                lr: String(lr),
                'warmup-ratio': String(warmupRatio ?? (scratch ? SCRATCH_RECIPE.warmupRatio : FINETUNE_RECIPE.warmupRatio)),
                ...(maxGradNorm !== undefined ? { 'max-grad-norm': String(maxGradNorm) } : {}),
                seed: String(seed),
                'max-length': String(maxLength),
                'doc-level': v['doc-level'] ?? false,
                'augment-mentions': String(augmentCopies),
                'average-last': String(averageLast),
              },
              ...(typeMap ? { mapTypes: Object.fromEntries(typeMap) } : {}),
            },
          },
        },
      })
    } finally {
      stop.release()
      model.dispose()
    }
    if (result.cancelled) logStopped(log, result, outDir)
    else if (result.stoppedEarly) log(`early stop after epoch ${result.epochs.at(-1)?.epoch}: no devel improvement for ${patience} epoch(s)`)
    logAveraged(log, result)
    logDone(log, result)
    writeJsonLine({
      out: result.checkpointDir,
      backend: backend.name,
      trainer: result.trainer,
      trainer_reason: result.trainerReason,
      resumed_after_epoch: result.resumedAfterEpoch,
      init: v.init ?? null,
      crf_heads: crfHeads,
      averaged: result.averaged,
      preset: scratch ? presetName : null,
      labels: result.labels,
      heads: headLabels,
      parameters: numParameters,
      train_documents: trainDocs.length,
      dev_by_head: result.devByHead,
      ...runSummary(result),
    })
    return result.cancelled ? 130 : 0
  })
}

interface RunTask {
  head: string
  /** The corpus's name in devel scores: its head, or head@FILE when the head has several corpora. */
  name: string
  files: { train: string; dev?: string }
  train: CorpusDocument[]
  dev?: CorpusDocument[]
  labels: string[]
}

/**
 * Every corpus of the run (one per --task, else --train/--dev), read, checked and augmented as asked.
 * A head may be given several corpora (--task NAME repeated) where its trainer scores them apart
 * (word-lstm); they must annotate the same types (wordTaskLabelMaps says why).
 */
async function readTasks(
  v: OptionValues<typeof OPTIONS>,
  taskSpecs: ReturnType<typeof taskSpecsOpt>,
  trainPath: string,
  typeMap: ReturnType<typeof typeMapOpt>,
  augmentCopies: number,
  seed: number,
  log: (line: string) => void,
  severalCorporaPerHead: boolean,
): Promise<RunTask[]> {
  const trainFormat = formatOpt(v['train-format'], '--train-format')
  const devFormat = formatOpt(v['dev-format'], '--dev-format')
  const quiet = v.quiet ?? false
  const specs = taskSpecs.length ? taskSpecs : [{ name: DEFAULT_HEAD, train: trainPath, dev: v.dev as string | undefined }]
  const names = corpusNames(specs)
  const tasks: RunTask[] = []
  for (const [i, spec] of specs.entries()) {
    const twin = tasks.find((t) => t.head === spec.name)
    if (twin && !severalCorporaPerHead) {
      throw new CliError(`--task ${spec.name} is given twice: one head trained on several corpora is an option of --arch word-lstm (for bert, concatenate the corpora into one file)`, 2)
    }
    if (twin && tasks.some((t) => t.name === names[i])) throw new CliError(`--task ${spec.name}: two of its corpora have the same ${spec.dev !== undefined ? 'devel' : 'training'} file ${spec.dev ?? spec.train}`, 2)
    const trainDocs = (await readCorpus(spec.train, trainFormat, quiet, typeMap)).documents
    let devDocs: CorpusDocument[] | undefined
    if (spec.dev !== undefined) devDocs = (await readCorpus(spec.dev, devFormat, quiet, typeMap)).documents
    else log(taskSpecs.length ? `warning: task '${spec.name}' has no devel file: it takes no part in model selection` : 'warning: no --dev file: every epoch is saved and the last one is kept (no model selection)')
    const types = new Set(trainDocs.flatMap((d) => d.mentions.map((m) => m.type)))
    if (types.size === 0) throw new CliError(`${spec.train}: no entity mentions; nothing to learn`)
    const devOnly = [...new Set((devDocs ?? []).flatMap((d) => d.mentions.map((m) => m.type)))].filter((t) => !types.has(t))
    if (devOnly.length) log(`warning: type(s) ${devOnly.join(', ')} occur in ${spec.dev} but not in ${spec.train}; they cannot be predicted`)
    const train = augmentCopies > 0 ? augmentByMentionReplacement(trainDocs, { copies: augmentCopies, seed }) : trainDocs
    tasks.push({ head: spec.name, name: names[i], files: { train: spec.train, dev: spec.dev }, train, dev: devDocs, labels: buildLabelMap(types).labels })
  }
  try {
    wordTaskLabelMaps(tasks)
  } catch (e) {
    throw new CliError((e as Error).message)
  }
  return tasks
}

/**
 * Each corpus's name in devel scores: its head, or for a head given several corpora, head@ the
 * shortest end of its devel (else training) file's path that tells them apart.
 */
function corpusNames(specs: ReadonlyArray<{ name: string; train: string; dev?: string }>): string[] {
  const parts = (s: (typeof specs)[number]) => (s.dev ?? s.train).split(/[\\/]+/)
  return specs.map((s) => {
    const same = specs.filter((o) => o.name === s.name)
    if (same.length === 1) return s.name
    const mine = parts(s)
    const tail = (p: string[], k: number) => p.slice(-k).join('/')
    const k = Array.from({ length: mine.length }, (_, j) => j + 1).find((n) => same.every((o) => o === s || tail(parts(o), n) !== tail(mine, n))) ?? mine.length
    return `${s.name}@${tail(mine, k)}`
  })
}

/** fastbioner.json's record of the corpora: head → {train, dev}, or a list of them for a head given several. */
function taskSources(taskSpecs: ReturnType<typeof taskSpecsOpt>): Record<string, unknown> {
  const byHead = new Map<string, Array<{ train: string; dev: string | null }>>()
  for (const t of taskSpecs) byHead.set(t.name, [...(byHead.get(t.name) ?? []), { train: t.train, dev: t.dev ?? null }])
  return Object.fromEntries([...byHead].map(([h, list]) => [h, list.length === 1 ? list[0] : list]))
}

/** Progress lines on standard error: every evaluation, and a step line at most every 5 s. */
function progressLogger(log: (line: string) => void): (p: TrainProgress) => void {
  let lastLine = 0
  return (p) => {
    if (p.kind === 'eval') return log(`epoch ${p.epoch}/${p.epochs}: mean loss ${p.loss.toFixed(4)}, devel F1 ${p.devF1!.toFixed(4)}`)
    const now = performance.now()
    if (now - lastLine < 5000 && p.step !== p.totalSteps && p.step !== 1) return
    lastLine = now
    log(
      `epoch ${p.epoch}/${p.epochs} step ${p.step}/${p.totalSteps} loss ${p.loss.toFixed(4)} lr ${p.lr.toExponential(2)} ` +
        `${Math.round(p.tokensPerSecond)} tok/s eta ${formatDuration(p.etaSeconds)}`,
    )
  }
}

const taskScoresLogger = (log: (line: string) => void) => (epoch: number, scores: Record<string, { f1: number }>) =>
  log(`epoch ${epoch} devel F1 by head: ${Object.entries(scores).map(([h, s]) => `${h} ${s.f1.toFixed(4)}`).join(', ')}`)

type RunOutcome = Pick<RunResult, 'steps' | 'plannedSteps' | 'epochs' | 'bestEpoch' | 'bestDevF1' | 'checkpointDir' | 'cancelled' | 'stoppedEarly' | 'trainTokens' | 'tokensPerSecond' | 'trainSeconds' | 'evalSeconds'> & {
  trainExamples: number
  wallSeconds: number
  /** Checkpoint averaging's outcome (--average-last); a kept average is saved under its last epoch. */
  averaged?: AveragedOutcome | null
}

/** --average-last N, which needs devel (the average is kept only when devel says it is better). */
function averageLastOpt(v: OptionValues<typeof OPTIONS>, hasDev: boolean): number | undefined {
  const n = intOpt(v['average-last'], '--average-last', 0)
  if (n !== undefined && n >= 2 && !hasDev) throw new CliError('--average-last keeps the average only when devel says it is better: give --dev', 2)
  return n
}

function logAveraged(log: (line: string) => void, r: RunOutcome): void {
  const a = r.averaged
  if (a) log(`checkpoint average of epochs ${a.epochs.join(', ')}: devel F1 ${a.dev.f1.toFixed(4)} — ${a.kept ? 'kept (better than every single epoch)' : 'not kept (the best epoch is better)'}`)
}

/** The epochs whose mean weights are the kept model, or null when the kept model is one epoch's. */
const keptAverage = (r: RunOutcome): number[] | null => (r.averaged?.kept ? r.averaged.epochs : null)

function logStopped(log: (line: string) => void, r: RunOutcome, outDir: string): void {
  log(`stopped at step ${r.steps}; ${r.checkpointDir ? `best checkpoint (epoch ${r.bestEpoch}) in ${outDir}` : 'no checkpoint was saved yet'}`)
}

export function logDone(log: (line: string) => void, r: RunOutcome): void {
  const avg = keptAverage(r)
  const kept = avg ? `kept the average of epochs ${avg.join(', ')}` : `best epoch ${r.bestEpoch ?? '-'}`
  log(`done in ${formatDuration(r.wallSeconds)}; ${kept}${r.bestDevF1 !== null ? ` (devel F1 ${r.bestDevF1.toFixed(4)})` : ''}`)
}

/** The summary fields every training run reports on standard output. */
export function runSummary(r: RunOutcome) {
  return {
    train_examples: r.trainExamples,
    steps: r.steps,
    planned_steps: r.plannedSteps,
    epochs: r.epochs,
    // A kept average is no epoch's model (the loop saves it under its last epoch).
    best_epoch: keptAverage(r) ? null : r.bestEpoch,
    kept_average_of_epochs: keptAverage(r),
    best_dev_f1: r.bestDevF1,
    cancelled: r.cancelled,
    stopped_early: r.stoppedEarly,
    train_tokens: r.trainTokens,
    tokens_per_second: r.tokensPerSecond,
    train_seconds: r.trainSeconds,
    eval_seconds: r.evalSeconds,
    wall_seconds: r.wallSeconds,
  }
}

/** `train --arch word-lstm`: the character-aware BiLSTM-CRF (core/train/word-loop). */
async function trainWordLstm(v: OptionValues<typeof OPTIONS>, taskSpecs: ReturnType<typeof taskSpecsOpt>, outDir: string, typeMap: ReturnType<typeof typeMapOpt>): Promise<number> {
  for (const flag of ['preset', 'vocab-size', 'cased', 'no-crf', 'warmup-ratio', 'weight-decay', 'char-cnn', 'char-pieces', 'word-level'] as const) {
    if (v[flag] !== undefined && v[flag] !== false) throw new CliError(`--${flag} is not an option of --arch word-lstm`, 2)
  }
  const resume = v.resume ?? false
  if (v.init !== undefined && !isWordTaggerFolder(v.init)) throw new CliError(`--init ${v.init}: --arch word-lstm continues only from a word tagger folder (a BERT checkpoint trains with --arch bert)`, 2)
  // A resumed run continues the model in --out (the loop loads it), not the one it started from.
  const init = v.init !== undefined && !resume ? loadWordTagger(v.init) : undefined
  const maxWords = intOpt(v['max-words'], '--max-words', 2)
  const dropout = numOpt(v.dropout, '--dropout', (n) => n >= 0 && n < 1, 'a number in [0, 1)')
  const lstmHidden = intOpt(v['lstm-hidden'], '--lstm-hidden', 1)
  if (v.init !== undefined && lstmHidden !== undefined) throw new CliError(`--lstm-hidden: a run from --init keeps the sizes of ${v.init}`, 2)
  if (v.init !== undefined && maxWords !== undefined) throw new CliError(`--max-words: a run from --init keeps the vocabulary of ${v.init}`, 2)
  // A resumed run continues the table its saved model holds (the loop reads which vectors it had).
  const wordVectors = resume ? undefined : v['word-vectors']
  if (wordVectors !== undefined && v.init !== undefined) throw new CliError(`--word-vectors start a model from scratch: a run from --init keeps the word table of ${v.init}`, 2)
  if (wordVectors !== undefined && !existsSync(wordVectors)) throw new CliError(`--word-vectors ${wordVectors}: no such file`, 1)
  const charLmDir = resume ? undefined : v['char-lm']
  if (charLmDir !== undefined && v.init !== undefined) throw new CliError(`--char-lm starts a model from scratch: a run from --init keeps what ${v.init} reads`, 2)
  if (charLmDir !== undefined && !isCharLmFolder(charLmDir)) throw new CliError(`--char-lm ${charLmDir}: not a character language model folder ('fastbioner charlm' writes one)`, 1)
  const charLm = charLmDir !== undefined ? loadCharLm(charLmDir) : undefined
  const settings = finetuneSettings(v)
  // A model trained further reads text as it was trained to (windows over documents, their
  // length), as the app's retraining does, unless --doc-level or --max-length say otherwise.
  const inherited = init ? baseWindows(init) : undefined
  const sentenceLevel = v['doc-level'] ? false : (inherited?.sentenceLevel ?? true)
  const maxLength = settings.maxLength ?? inherited?.maxLength
  const seed = settings.seed ?? TRAIN_DEFAULTS.seed
  const maxGradNorm = numOpt(v['max-grad-norm'], '--max-grad-norm', (n) => n >= 0, 'a number >= 0')
  const minutes = numOpt(v.minutes, '--minutes', (n) => n > 0, 'a number > 0')
  const augmentCopies = intOpt(v['augment-mentions'], '--augment-mentions', 0) ?? 0
  const transferTargets = v['transfer-targets'] ?? 'vote'
  if (transferTargets !== 'vote' && transferTargets !== 'posterior') throw new CliError(`--transfer-targets must be vote or posterior, got '${transferTargets}'`, 2)
  if (v['transfer-targets'] !== undefined && !v.teacher?.length) throw new CliError('--transfer-targets is a setting of --teacher and --transfer', 2)
  const lrSchedule = v['lr-schedule'] ?? 'constant'
  if (lrSchedule !== 'constant' && lrSchedule !== 'linear') throw new CliError(`--lr-schedule must be constant or linear, got '${lrSchedule}'`, 2)
  const averageLast = averageLastOpt(v, v.dev !== undefined || taskSpecs.some((t) => t.dev !== undefined))
  const quiet = v.quiet ?? false
  const log = stderrLog(quiet)
  const trainPath = taskSpecs.length ? taskSpecs[0].train : requireOpt(v.train, '--train')
  // --resume continues the model that is there (the run checks its optimizer state).
  checkOutputPath(outDir, { flag: '--out', kind: 'checkpoint', inputs: runInputs(v, taskSpecs, trainPath), replace: v.overwrite || resume, replaceFlag: '--overwrite' })
  const tasks = await readTasks(v, taskSpecs, trainPath, typeMap, augmentCopies, seed, log, true)
  const transfer = await readTransferSet(v, tasks, seed, settings.threads, log, outDir, transferTargets)
  const stop = stopOnCtrlC(log, 'stopping after the current step (Ctrl-C again to exit at once); the best checkpoint is kept', { exitOnSecond: true })
  let result
  try {
    result = await trainWordTagger({
      tasks,
      outDir,
      epochs: settings.epochs,
      batchSize: settings.batchSize,
      lr: settings.lr,
      lrSchedule,
      maxGradNorm: maxGradNorm === 0 ? null : maxGradNorm,
      seed,
      maxLength,
      sentenceLevel,
      patience: settings.patience,
      maxSteps: settings.maxSteps,
      averageLast,
      maxMinutes: minutes,
      threads: settings.threads,
      init,
      resume,
      transfer,
      vocab: maxWords !== undefined ? { maxSize: maxWords } : undefined,
      wordVectors,
      charLm,
      config: { ...(dropout !== undefined ? { dropout } : {}), ...(lstmHidden !== undefined ? { lstmHidden } : {}) },
      signal: stop.signal,
      onTaskScores: tasks.length > 1 ? taskScoresLogger(log) : undefined,
      onProgress: progressLogger(log),
      metadata: {
        source: {
          ...(taskSpecs.length ? { tasks: taskSources(taskSpecs) } : { train: trainPath, dev: v.dev ?? null }),
          arch: 'word-lstm',
          init: v.init ?? null,
          augmentMentions: augmentCopies,
          ...transferSource(v, transfer),
          ...(typeMap ? { mapTypes: Object.fromEntries(typeMap) } : {}),
          // What --resume restarts with: the options of this run as given (the loop's defaults
          // are fixed in the code, and the vocabulary comes from the saved model).
          options: {
            arch: 'word-lstm',
            ...givenOptions(v, taskSpecs, trainPath, ['init', 'map-types', 'train-format', 'dev-format', 'patience', 'max-steps', 'teacher', 'transfer', 'transfer-sentences', 'transfer-targets', 'epochs', 'batch-size', 'lr', 'lr-schedule', 'max-grad-norm', 'max-length', 'minutes', 'average-last', 'max-words', 'dropout', 'lstm-hidden', 'word-vectors', 'char-lm']),
            seed: String(seed),
            'augment-mentions': String(augmentCopies),
            // The windows in effect, so that --resume (which does not read --init again) keeps them.
            ...(sentenceLevel ? {} : { 'doc-level': true }),
            ...(maxLength !== undefined ? { 'max-length': String(maxLength) } : {}),
          },
        },
      },
    })
  } finally {
    stop.release()
  }
  const c = result.model.config
  log(`model: word-lstm — ${c.wordVocabSize} words × ${c.wordDim}, ${c.charVocabSize} characters${c.charLm ? `, character LM 2 × ${c.charLm.hidden} (frozen)` : ''}, BiLSTM 2 × ${c.lstmHidden}, CRF`)
  const wv = result.wordVectors
  if (wv) log(`word vectors: ${wv.file}, ${wv.dim} dimensions: ${wv.initialised} of ${wv.vocabulary} words started from a vector (${wv.added} of them added from the file)`)
  if (result.cancelled) logStopped(log, result, outDir)
  logAveraged(log, result)
  logDone(log, result)
  writeJsonLine({
    out: result.checkpointDir,
    arch: 'word-lstm',
    trainer: result.trainer,
    averaged: result.averaged,
    labels: result.labels,
    parameters: [...result.model.params.values()].reduce((a, p) => a + p.length, 0),
    ...(result.wordVectors ? { word_vectors: result.wordVectors } : {}),
    // Each devel corpus's scores at the best epoch (model selection took their mean).
    dev_by_corpus: tasks.filter((t) => result.devByTask?.[t.name]).map((t) => ({ head: t.head, name: t.name, dev: t.files.dev, ...result.devByTask![t.name] })),
    ...runSummary(result),
  })
  return result.cancelled ? 130 : 0
}

/** The corpora, teachers and transfer text of the run, which --out must not be or hold. */
function runInputs(v: OptionValues<typeof OPTIONS>, taskSpecs: ReturnType<typeof taskSpecsOpt>, trainPath: string): Array<string | undefined> {
  return [trainPath, v.dev, ...taskSpecs.flatMap((t) => [t.train, t.dev]), ...(v.teacher ?? []).map((t) => teacherSpec(t)[1]), ...(v.transfer ?? [])]
}

/** fastbioner.json's record of a distilled run: its teachers and transfer text. */
function transferSource(v: OptionValues<typeof OPTIONS>, transfer: WordTransferSet | undefined): Record<string, unknown> {
  if (!transfer) return {}
  // A head's teacher folder, or its folders when an ensemble labelled it.
  const teachers: Record<string, string | string[]> = {}
  for (const [head, dir] of (v.teacher ?? []).map(teacherSpec)) {
    const had = teachers[head]
    teachers[head] = had === undefined ? dir : [...(Array.isArray(had) ? had : [had]), dir]
  }
  return { teachers, transfer: v.transfer, transferSentences: transfer.documents.length, transferTargets: transfer.posteriors ? 'posterior' : 'vote' }
}

/** `--teacher HEAD=DIR` (or a bare DIR: the run's only head). */
function teacherSpec(spec: string): [string, string] {
  const m = /^([A-Za-z0-9_-]+)=(.+)$/.exec(spec)
  return m ? [m[1], m[2]] : [DEFAULT_HEAD, spec]
}

/**
 * --teacher/--transfer: the sampled transfer sentences, tagged by each teacher once. A head learns
 * only its own types from its teacher: the words of any other type the teacher tags (a Chemical
 * and Disease teacher for a Chemical head) are O for it (the label alignment drops them).
 */
async function readTransferSet(
  v: OptionValues<typeof OPTIONS>,
  tasks: readonly RunTask[],
  seed: number,
  threads: number | undefined,
  log: (line: string) => void,
  outDir: string,
  targets: TransferTargets = 'vote',
): Promise<WordTransferSet | undefined> {
  const heads = [...new Set(tasks.map((t) => t.head))]
  const teacherSpecs = (v.teacher ?? []).map(teacherSpec)
  const paths = v.transfer ?? []
  const count = intOpt(v['transfer-sentences'], '--transfer-sentences')
  if (!teacherSpecs.length && !paths.length && count === undefined) return undefined
  if (!teacherSpecs.length) throw new CliError('--transfer needs --teacher HEAD=DIR (the model that labels it)', 2)
  if (!paths.length) throw new CliError('--teacher needs --transfer PATH (the text it labels)', 2)
  for (const [head] of teacherSpecs) {
    if (!heads.includes(head)) throw new CliError(`--teacher ${head}=…: no task trains head '${head}' (heads: ${heads.join(', ')})`, 2)
  }
  const t0 = performance.now()
  // Windows over documents (--doc-level) need neighbouring sentences: passages of consecutive
  // lines, as many as a CoNLL file's documents without -DOCSTART- hold.
  const linesPerPassage = v['doc-level'] ? DEFAULT_SENTENCES_PER_DOCUMENT : 1
  const sentences = await sampleTransferSentences(paths, count, seed, linesPerPassage)
  if (!sentences.length) throw new CliError(`--transfer ${paths.join(', ')}: no sentences`)
  const documents = transferDocuments(sentences)
  const unit = linesPerPassage > 1 ? 'passages' : 'sentences'
  const inPassages = linesPerPassage > 1 ? ` in ${sentences.length} passages of up to ${linesPerPassage} consecutive lines` : ''
  log(`transfer set: ${sentences.reduce((n, s) => n + s.split('\n').length, 0)} sentences${inPassages} from ${paths.join(', ')}`)
  const teachers = []
  try {
    for (const [head, ref] of teacherSpecs) {
      const dir = modelFolder(ref, v.quiet ?? false, '--teacher')
      // A folder without config.json and safetensors weights (an ONNX export) has no fingerprint: it tags every time.
      const fingerprint = await checkpointFingerprint(dir).catch(() => undefined)
      teachers.push({ head, tagger: await openTagger(dir, { engine: 'onnx', threads }), fingerprint })
    }
    const store = folderTransferTagStore(outDir, log)
    let last = 0
    const set = await labelTransferSet(documents, teachers, (head, done, total, stored) => {
      if (stored) return log(`teacher ${head}: its tags of the ${total} ${unit} read from ${store.where}`)
      if (performance.now() - last < 5000 && done < total) return
      last = performance.now()
      log(`teacher ${head}: tagged ${done}/${total} ${unit}`)
    }, undefined, { targets, store })
    const ensembles = heads.map((h) => [h, teacherSpecs.filter(([head]) => head === h).length] as const).filter(([, n]) => n > 1)
    for (const [h, n] of ensembles) {
      log(`head ${h}: ${n} teachers; ${targets === 'posterior' ? 'each step draws one of them and a label path from its posterior' : 'it learns the mentions more than half of them tag (same span and type)'}`)
    }
    if (targets === 'posterior') log("transfer targets: label paths drawn from the teachers' posteriors at every step (the mentions below are their vote)")
    const found = Object.entries(set.mentions).map(([h, m]) => `${h} ${m.reduce((a, x) => a + x.length, 0)}`)
    log(`transfer set tagged in ${formatDuration((performance.now() - t0) / 1000)}; mentions by head: ${found.join(', ')}`)
    for (const [head, mentions] of Object.entries(set.mentions)) {
      const own = new Set(typesOfLabels(tasks.find((t) => t.head === head)!.labels))
      const other = [...new Set(mentions.flatMap((ms) => ms.map((m) => m.type)))].filter((t) => !own.has(t))
      if (other.length) log(`note: the teacher of head '${head}' also tags ${other.join(', ')}: the head learns only ${[...own].join(', ')} from it (those words are O for it)`)
    }
    return set
  } finally {
    for (const t of teachers) await t.tagger.dispose()
  }
}

/** What --resume restarts a run with, as given: its corpora and the options of `keys` that were set. */
function givenOptions(v: OptionValues<typeof OPTIONS>, taskSpecs: ReturnType<typeof taskSpecsOpt>, trainPath: string, keys: ReadonlyArray<(typeof RESUME_FIXED)[number]>): Record<string, unknown> {
  return {
    ...(taskSpecs.length ? { task: v.task } : { train: trainPath, ...(v.dev !== undefined ? { dev: v.dev } : {}) }),
    ...Object.fromEntries(keys.filter((k) => v[k] !== undefined).map((k) => [k, v[k]])),
  }
}

/** What a resumed run may not be given: everything that shapes it (the inputs and the recipe). */
const RESUME_FIXED = [
  'train', 'dev', 'task', 'map-types', 'train-format', 'dev-format', 'init', 'preset', 'arch', 'epochs', 'batch-size', 'lr', 'warmup-ratio',
  'weight-decay', 'max-grad-norm', 'max-length', 'max-steps', 'seed', 'patience', 'doc-level', 'crf', 'no-crf', 'augment-mentions',
  'average-last', 'vocab-size', 'cased', 'minutes', 'teacher', 'transfer', 'transfer-sentences', 'transfer-targets', 'max-words', 'dropout', 'lr-schedule', 'lstm-hidden', 'word-level', 'word-vectors', 'char-lm',
] as const

/**
 * --resume: the options the run in --out was started with (fastbioner.json source.options), with
 * this invocation's --out, --resume, --threads and -q.
 */
function startedOptions(v: OptionValues<typeof OPTIONS>): OptionValues<typeof OPTIONS> {
  const outDir = requireOpt(v.out, '--out')
  checkResumeOptions(v, RESUME_FIXED)
  let metadata: { source?: { options?: unknown } } | undefined
  try {
    // A BERT checkpoint is checked whole; a word tagger's folder is read when the run loads it.
    metadata = (isWordTaggerFolder(outDir) ? readMetadata(outDir) : readCheckpointInfo(outDir).metadata) as typeof metadata
  } catch (e) {
    throw new CliError(`--resume: ${outDir} holds no run to continue (${(e as Error).message})`)
  }
  const options = metadata?.source?.options
  if (!options || typeof options !== 'object' || Array.isArray(options)) {
    throw new CliError(`--resume: ${outDir} does not record the options it was started with (made before they were recorded, or not by 'fastbioner train'); continue from it with --init ${outDir} --out NEW_DIR`)
  }
  const known = new Set<string>(RESUME_FIXED)
  const unknown = Object.keys(options).filter((k) => !known.has(k))
  if (unknown.length) throw new CliError(`--resume: ${outDir}/fastbioner.json records options this version does not know (${unknown.join(', ')})`)
  return { ...(options as OptionValues<typeof OPTIONS>), out: v.out, resume: true, threads: v.threads, quiet: v.quiet, overwrite: v.overwrite }
}
