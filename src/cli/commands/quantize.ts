// `fastbioner quantize --model DIR --out DIR2 [--calibrate FILE]`
import type { CorpusDocument } from '../../shared/domain'
import { CALIBRATION_TIMING, compareModels, type CompareReport } from '../../core/eval/compare'
import { OnnxExportError } from '../../core/onnx/export'
import { OnnxFileError } from '../../core/onnx/checkpoint'
import { QuantizeError, quantizeModelFolder, type QuantizeFolderResult } from '../../core/onnx/quantize'
import { checkTaggingModel, CliError, modelEntityTypes, readCorpus, runCommand, stderrLog, writeJsonLine } from './_ml'
import { checkOutputPath } from './_output'
import { flagOptions, formatOpt, intOpt, mapTypesHelp, numOpt, repeatableOptions, typeMapOpt, valueOptions } from './_options'

const USAGE = `usage: fastbioner quantize --model DIR --out DIR2 [--calibrate FILE] [options]

Writes an int8 version of a float token-classification model to a new model folder: the
encoder's Linear weights and the word-embedding table become int8 with one float32 scale per
output channel (per token for the embeddings); activations are quantized per call at run time
(dynamic), LayerNorm, softmax, GELU, biases, position embeddings and the classifier stay
float32. The folder holds config.json, the tokenizer, model.safetensors (int8) and model.onnx
(the int8 graph onnxruntime runs) and loads wherever a model folder loads (tag, eval, compare,
the app); fastbioner.json records the parent model (path, sha256) and the settings. A summary
goes to standard error, a JSON line to standard output.

A word tagger (word-lstm): its word-embedding table, most of its bytes, becomes int8 with one
scale per word; the BiLSTM, character CNN and heads stay float32, and the table is dequantized
when the model loads (a smaller folder, the same speed). --bits 7 does not apply.

  --model DIR          the float model folder
  --out DIR2           the new folder: must not exist or be empty (nothing is overwritten),
                       and not be inside --model; written under a temporary name and moved
                       into place when complete
  --calibrate FILE     annotated corpus (any supported format): tag it with the float and the
                       int8 model in one run and record F1, speed and size of both in the
                       folder's metadata
  --max-f1-drop P      with --calibrate: write nothing and exit 1 when the int8 F1 is more than
                       P points (0-100 scale) below the float F1
  --max-docs N         calibrate on the first N documents only
  --head NAME          calibrate with this head only (a multi-task model on one corpus); default:
                       every head merged
  --format F           format of --calibrate when detection is not wanted
${mapTypesHelp(23)}
                       (applied to --calibrate; its types must share some with the model's)
  --bits 8|7           weight range: 8 = −127…127 (default); 7 = −63…63. Not needed for CPUs
                       without VNNI (whose u8×s8 multiply-adds saturate): there the graph takes
                       the weights as uint8, whose u8×u8 products do not
  --float-embeddings   keep the word-embedding table float32 (bigger folder, same speed)
  --int8-lstm          a word tagger: its BiLSTM also runs with int8 weights (one scale per gate
                       column, quantized when the model loads; onnxruntime's DynamicQuantizeLSTM):
                       faster tagging, some accuracy — calibrate to see how much
  -q, --quiet          no summary on standard error
  -h, --help           this text

exit codes: 0 done, 1 input/model problem or accuracy below --max-f1-drop, 2 usage error`

/** The calibration summary stored in fastbioner.json (F1 on the 0-1 scale, as compare). */
function calibrationSummary(path: string, r: CompareReport, head: string | undefined): Record<string, unknown> {
  const [f, q] = r.models
  return {
    file: path,
    head: head ?? null,
    documents: r.goldDocuments,
    float: { f1: f.f1, precision: f.precision, recall: f.recall, tokensPerSecond: f.tokensPerSecond, medianMs: f.latency.medianMs, bytes: f.bytes, engine: f.engine },
    int8: { f1: q.f1, precision: q.precision, recall: q.recall, tokensPerSecond: q.tokensPerSecond, medianMs: q.latency.medianMs, bytes: q.bytes, engine: q.engine },
    f1DropPoints: (f.f1 - q.f1) * 100,
    speedup: q.tokensPerSecond / f.tokensPerSecond,
    bytesRatio: q.bytes / f.bytes,
  }
}

/**
 * Calibration measures the int8 model against the float one only where the gold can reward a
 * prediction: gold without mentions of the model's types scores both 0, and the accuracy check
 * would pass without testing anything. Refused before any work; a partial overlap is warned of.
 */
function checkCalibrationTypes(path: string, docs: readonly CorpusDocument[], modelDir: string, head: string | undefined, say: (line: string) => void): void {
  const model = modelEntityTypes(modelDir, head)
  if (model === null) return
  const gold = new Set(docs.flatMap((d) => d.mentions.map((m) => m.type)))
  const list = (xs: Iterable<string>): string => [...xs].sort().join(', ')
  if (gold.size === 0) throw new CliError(`${path}: no annotated mentions to calibrate on (F1 would be 0 for both models and --max-f1-drop would test nothing)`)
  const shared = [...gold].filter((t) => model.has(t))
  if (shared.length === 0) {
    throw new CliError(`${path}: its entity types (${list(gold)}) and the model's (${list(model)}) have none in common, so calibration would test nothing; rename types with --map-types "SOURCE,…=TARGET"`)
  }
  if (shared.length < gold.size || shared.length < model.size) say(`warning: ${path}: calibrating on the types the model and the gold share (${list(shared)}); the others count against both models alike`)
}

const OPTIONS = { ...valueOptions('model', 'out', 'calibrate', 'max-f1-drop', 'max-docs', 'head', 'format', 'bits'), ...repeatableOptions('map-types'), ...flagOptions('float-embeddings', 'int8-lstm') }

export async function run(argv: string[]): Promise<number> {
  return runCommand('quantize', USAGE, argv, OPTIONS, async (v) => {
    if (!v.model) throw new CliError('--model is required', 2)
    if (!v.out) throw new CliError('--out is required', 2)
    if (v.bits !== undefined && v.bits !== '8' && v.bits !== '7') throw new CliError(`--bits must be 8 or 7, got '${v.bits}'`, 2)
    const maxDrop = numOpt(v['max-f1-drop'], '--max-f1-drop', (n) => n >= 0, 'a number of F1 points >= 0')
    if (maxDrop !== undefined && v.calibrate === undefined) throw new CliError('--max-f1-drop needs --calibrate', 2)
    const maxDocs = intOpt(v['max-docs'], '--max-docs')
    if (v.head !== undefined && v.calibrate === undefined) throw new CliError('--head needs --calibrate', 2)
    const typeMap = typeMapOpt(v['map-types'])
    if (typeMap !== undefined && v.calibrate === undefined) throw new CliError('--map-types needs --calibrate', 2)
    checkTaggingModel(v.model, v.head)
    // A usage error before any work: not the model folder, nor inside it, nor a folder in use.
    checkOutputPath(v.out, { flag: '--out', kind: 'folder', inputs: [v.model, v.calibrate], outside: [v.model] })
    const quiet = v.quiet ?? false
    const say = stderrLog(quiet)

    let calibration: CorpusDocument[] | undefined
    if (v.calibrate !== undefined) {
      calibration = (await readCorpus(v.calibrate, formatOpt(v.format, '--format'), quiet, typeMap)).documents
      if (maxDocs !== undefined) calibration = calibration.slice(0, maxDocs)
      if (calibration.length === 0) throw new CliError(`${v.calibrate}: no documents to calibrate on`)
      checkCalibrationTypes(v.calibrate, calibration, v.model, v.head, say)
    }

    let result: QuantizeFolderResult
    try {
      result = await quantizeModelFolder(v.model, v.out, {
        bits: v.bits === '7' ? 7 : 8,
        embeddings: !v['float-embeddings'],
        int8Lstm: v['int8-lstm'] ?? false,
        check: calibration
          ? async (tmp) => {
              say(`calibrating on ${calibration!.length} documents of ${v.calibrate} (float and int8, same run)…`)
              const report = await compareModels([v.model!, tmp], calibration!, { names: ['float32', 'int8'], head: v.head, logger: quiet ? () => {} : say, ...CALIBRATION_TIMING })
              const summary = calibrationSummary(v.calibrate!, report, v.head)
              const drop = summary.f1DropPoints as number
              say(`calibration: F1 float ${(report.models[0].f1 * 100).toFixed(2)} → int8 ${(report.models[1].f1 * 100).toFixed(2)} (${drop >= 0 ? '−' : '+'}${Math.abs(drop).toFixed(2)} points), ${(summary.speedup as number).toFixed(2)}× tokens/s, ${(summary.bytesRatio as number).toFixed(2)}× bytes`)
              if (maxDrop !== undefined && drop > maxDrop) {
                throw new CliError(`int8 F1 is ${drop.toFixed(2)} points below float on ${v.calibrate} (allowed: ${maxDrop}); nothing written to ${v.out}`)
              }
              return summary
            }
          : undefined,
      })
    } catch (e) {
      if (e instanceof QuantizeError || e instanceof OnnxFileError || e instanceof OnnxExportError) throw new CliError(e.message)
      throw e
    }
    const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`
    if (result.int8OnnxBytes === undefined) {
      // A word tagger: its int8 form is the stored table; there is no graph file.
      say(`wrote ${result.dir}: ${result.info.int8Tensors.length} int8 tensor(s), model.safetensors ${mb(result.int8WeightsBytes)} (float ${mb(result.info.parent.bytes)})`)
    } else {
      const ratio = result.floatOnnxBytes ? ` (float model.onnx ${mb(result.floatOnnxBytes)}, ${(result.int8OnnxBytes / result.floatOnnxBytes).toFixed(2)}×)` : ''
      say(`wrote ${result.dir}: ${result.info.int8Tensors.length} int8 tensors, model.onnx ${mb(result.int8OnnxBytes)}${ratio}`)
    }
    writeJsonLine({
      out: result.dir,
      parent: result.info.parent,
      bits: result.info.bits,
      int8Tensors: result.info.int8Tensors.length,
      onnxBytes: result.int8OnnxBytes ?? null,
      weightsBytes: result.int8WeightsBytes,
      floatOnnxBytes: result.floatOnnxBytes ?? null,
      calibration: result.info.calibration ?? null,
    })
    return 0
  })
}
