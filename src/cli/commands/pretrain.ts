// `fastbioner pretrain --text FILE|DIR... --out DIR [--preset NAME | --init DIR] [options]`
import { PRESET_NAMES, type PresetName } from '../../shared/recipes'
import type { ElectraScores } from '../../core/pretrain/electra'
import { PRETRAIN_DEFAULTS, pretrain, type PretrainObjective } from '../../core/pretrain/run'
import { CliError, formatDuration, runCommand, startBackend, stderrLog, stopOnCtrlC, writeJsonLine } from './_ml'
import { checkResumeOptions, flagOptions, intOpt, repeatableOptions, RUN_OPTIONS, runSettings, valueOptions } from './_options'
import { checkOutputPath } from './_output'

const USAGE = `usage: fastbioner pretrain --text FILE|DIR [--text ...] --out DIR [--preset NAME | --init DIR] [options]

Masked-language-model pretraining (BERT whole-word masking) on unlabelled in-domain text. The
result is a HuggingFace BertForMaskedLM folder; fine-tune it with 'fastbioner train --init DIR'.

  --text PATH        plain text (.txt, .txt.gz: a sentence or paragraph a line, a blank line
                     between documents), any corpus file the importers read (also .gz:
                     PubMed .xml.gz is streamed), or a folder of them;
                     repeat for several
  --out DIR          new (or empty) folder for the checkpoint
  --preset NAME      model shape when starting from scratch: ${PRESET_NAMES.join(', ')} (default ${PRETRAIN_DEFAULTS.preset})
  --init DIR         continue pretraining this checkpoint with its vocabulary (domain adaptation)
  --objective NAME   mlm (default): masked-LM; electra: replaced-token detection (ELECTRA) —
                     a generator a quarter as wide fills the masked positions and the model
                     learns from every token whether it was replaced; the result is that
                     discriminator, a BERT encoder to fine-tune with 'train --init'
  --vocab-size N     WordPiece pieces learnt from the text, from scratch (default ${PRETRAIN_DEFAULTS.vocabSize})
  --cased            keep case (default: lower-cased vocabulary) when learning the vocabulary
  --max-length N     pieces per packed sequence incl. [CLS]/[SEP] (default ${PRETRAIN_DEFAULTS.maxLength})
  --epochs N         passes over the text (default ${PRETRAIN_DEFAULTS.epochs})
  --max-steps N      stop after N optimizer steps
  --batch-size N     sequences per step (default ${PRETRAIN_DEFAULTS.batchSize})
  --lr X             peak learning rate (default ${PRETRAIN_DEFAULTS.lr} from scratch, ${PRETRAIN_DEFAULTS.initLr} with --init)
  --seed N           masks, order and initialisation (default ${PRETRAIN_DEFAULTS.seed})
  --save-every S     save at least every S seconds within an epoch (default ${PRETRAIN_DEFAULTS.saveEverySeconds})
  --threads N        onnxruntime intra-op threads (default: all cores)
  --resume           continue the interrupted run in --out as it was started: its own text
                     and settings (give none of the options above but --threads, --save-every)
  -q, --quiet        no progress on standard error
  -h, --help         this text

Prints a JSON summary on standard output. Ctrl-C stops after the current step and saves it
(--resume continues); a second Ctrl-C exits at once, keeping only the last save.
exit codes: 0 done, 1 input/training problem, 2 usage error, 130 interrupted`

const OPTIONS = {
  ...RUN_OPTIONS,
  ...valueOptions('out', 'preset', 'init', 'vocab-size', 'save-every', 'objective'),
  ...repeatableOptions('text'),
  ...flagOptions('cased', 'resume'),
}

/** What the saved run keeps on --resume (--threads and --save-every may differ). */
const RESUME_FIXED = ['text', 'init', 'preset', 'objective', 'vocab-size', 'cased', 'epochs', 'max-steps', 'batch-size', 'lr', 'max-length', 'seed'] as const

export async function run(argv: string[]): Promise<number> {
  return runCommand('pretrain', USAGE, argv, OPTIONS, async (v) => {
    const outDir = v.out
    if (!outDir) throw new CliError('--out DIR is required', 2)
    const resume = v.resume ?? false
    const text = (v.text as string[] | undefined) ?? []
    if (!resume && text.length === 0) throw new CliError('--text FILE|DIR is required', 2)
    if (resume) checkResumeOptions(v, RESUME_FIXED)
    if (v.init !== undefined && v.preset !== undefined) throw new CliError('give either --init DIR or --preset NAME, not both', 2)
    if (v.preset !== undefined && !(PRESET_NAMES as string[]).includes(v.preset)) throw new CliError(`unknown --preset '${v.preset}' (one of ${PRESET_NAMES.join(', ')})`, 2)
    if (v.objective !== undefined && v.objective !== 'mlm' && v.objective !== 'electra') throw new CliError(`unknown --objective '${v.objective}' (mlm or electra)`, 2)
    // The sequence packer takes at least 8 pieces (core/pretrain/mlm-data.ts).
    const settings = runSettings(v, 8)
    const vocabSize = intOpt(v['vocab-size'], '--vocab-size', 100)
    const saveEvery = intOpt(v['save-every'], '--save-every')
    const log = stderrLog(v.quiet ?? false)
    if (!resume) checkOutputPath(outDir, { flag: '--out', kind: 'folder', inputs: [...text, v.init], alternative: '--resume to continue the run in it' })

    await startBackend(true)
    const stop = stopOnCtrlC(log, 'stopping after the current step, then saving a checkpoint (Ctrl-C again exits at once, keeping only the last save)', { exitOnSecond: true })
    let lastReport = 0
    try {
      const r = await pretrain({
        text,
        outDir,
        preset: v.preset as PresetName | undefined,
        init: v.init,
        objective: v.objective as PretrainObjective | undefined,
        ...settings,
        vocabSize,
        lowercase: !(v.cased ?? false),
        resume,
        saveEverySeconds: saveEvery,
        signal: stop.signal,
        log,
        onProgress: (p) => {
          const now = performance.now()
          if (p.kind === 'step' && (now - lastReport > 10_000 || p.step === p.totalSteps)) {
            lastReport = now
            log(`step ${p.step}/${p.totalSteps} epoch ${p.epoch}/${p.epochs} loss ${p.loss.toFixed(4)} lr ${p.lr.toExponential(2)} ${Math.round(p.tokensPerSecond)} tokens/s ETA ${formatDuration(p.etaSeconds)}`)
          }
        },
        onHeldOut: (epoch, s) => {
          const rtd = 'replacedTokenAccuracy' in s ? (s as ElectraScores) : null
          log(
            `epoch ${epoch}: held-out ${rtd ? 'generator ' : ''}masked-token accuracy ${s.accuracy.toFixed(4)}, loss ${s.loss.toFixed(4)} (${s.predicted} masked pieces)` +
              (rtd ? `; replaced-token detection accuracy ${rtd.replacedTokenAccuracy.toFixed(4)} (${(rtd.replacedFraction * 100).toFixed(1)} % replaced), loss ${rtd.replacedTokenLoss.toFixed(4)}` : ''),
          )
        },
      })
      if (r.cancelled) log(stoppedNote(r.savedAtStep, outDir))
      const last = r.heldOut[r.heldOut.length - 1]
      writeJsonLine({
        out: r.outDir,
        trainer: r.trainer,
        trainer_reason: r.trainerReason,
        first_loss: r.firstLoss,
        last_loss: r.lastLoss,
        held_out_accuracy: last?.accuracy ?? null,
        held_out_loss: last?.loss ?? null,
        held_out: r.heldOut,
        steps: r.steps,
        planned_steps: r.plannedSteps,
        sequences: r.sequences,
        held_out_sequences: r.heldOutSequences,
        tokens_per_second: Math.round(r.tokensPerSecond),
        train_seconds: Number(r.trainSeconds.toFixed(1)),
        wall_seconds: Number(r.wallSeconds.toFixed(1)),
        resumed_at_step: r.resumedAtStep,
        saved_at_step: r.savedAtStep,
        cancelled: r.cancelled,
      })
      return r.cancelled ? 130 : 0
    } finally {
      stop.release()
    }
  })
}

/** What a stopped run left, said truthfully: a checkpoint to resume, or nothing. */
export function stoppedNote(savedAtStep: number | null, outDir: string): string {
  return savedAtStep === null
    ? `stopped before the first training step: nothing was saved (${outDir} holds no checkpoint); start the run again`
    : `stopped: the checkpoint of step ${savedAtStep} is in ${outDir} (--resume continues)`
}
