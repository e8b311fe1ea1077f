// `fastbioner eval --gold FILE (--pred FILE | --model DIR)`
import { conllTokenLines } from '../../core/corpus'
import { evaluateTagger } from '../../core/eval/evaluate'
import type { EvalResult, Prf } from '../../core/eval/metrics'
import { scoreCorpora, type ScoredCorpus } from '../../core/eval/pairing'
import { headLabelsOf } from '../../core/model/checkpoint-files'
import { typesOfLabels } from '../../core/nlp/bio'
import { checkTaggingModel, checkWindowOptions, CliError, modelOrDefault, openModelTagger, readCorpus, runCommand, startBackend, writeJsonLine } from './_ml'
import { documentRulesOpt, formatOpt, intOpt, mapTypesHelp, offsetsHelp, offsetsOpt, repeatableOptions, requireOpt, TAGGING_OPTIONS, typeMapOpt, valueOptions } from './_options'

const USAGE = `usage: fastbioner eval --gold FILE [--pred FILE | --model DIR] [options]

Entity-level scores (exact character span and type, conlleval semantics) of predictions
against gold annotations. Prints one JSON object on standard output:
  {"overall": {"precision", "recall", "f1", "tp", "fp", "fn"}, "types": {TYPE: {...}},
   "token_accuracy", "documents"}   (precision, recall, f1, token_accuracy are fractions in [0, 1])
When the predicted (or the model's) types and the gold types only partly overlap, a warning says
so and "shared_types": {"types", "overall"} scores the types both have (the meaningful figure).

  --gold FILE          gold corpus, any supported format
  --pred FILE          predicted corpus (documents matched by id; by position when both
                       files list the same ids in the same order, or when either file's
                       documents have no ids of their own, as in CoNLL: then both must
                       hold the same tokens)
  --model DIR          tag the gold documents with this checkpoint instead of --pred;
                       with neither, the default model that ships with fastbioner
  --gold-format F, --pred-format F
                       formats when detection is not wanted
${mapTypesHelp(23)}
                       (applied to --gold and --pred)
${offsetsHelp(23, 'of --gold and --pred (forced when given)')}
  --batch-size N, --max-length N, --head NAME, --threads N, --no-document-rules
                       as for 'fastbioner tag' (with --model; default: every head merged,
                       the document rules applied: the scores users get from tag)
  -q, --quiet          no warnings or backend line on standard error
  -h, --help           this text

exit codes: 0 done, 1 input/model problem, 2 usage error`

const OPTIONS = { ...TAGGING_OPTIONS, ...valueOptions('gold', 'pred', 'gold-format', 'pred-format', 'offsets', 'threads'), ...repeatableOptions('map-types') }

export async function run(argv: string[]): Promise<number> {
  return runCommand('eval', USAGE, argv, OPTIONS, async (v) => {
    const goldPath = requireOpt(v.gold, '--gold')
    if (v.pred !== undefined && v.model !== undefined) throw new CliError('give either --pred FILE or --model DIR, not both', 2)
    // A prediction file holds merged mentions: there is no head to choose in it.
    for (const flag of ['head', 'batch-size', 'max-length', 'threads', 'no-document-rules'] as const) {
      if (v.pred !== undefined && v[flag] !== undefined) throw new CliError(`--${flag} is for tagging with --model; --pred FILE is scored as it is`, 2)
    }
    const quiet = v.quiet ?? false
    const modelDir = v.pred === undefined ? modelOrDefault(v.model, quiet) : undefined
    const typeMap = typeMapOpt(v['map-types'])
    const batchSize = intOpt(v['batch-size'], '--batch-size')
    const maxLength = intOpt(v['max-length'], '--max-length', 3)
    if (modelDir !== undefined) {
      checkWindowOptions(modelDir, maxLength, undefined)
      checkTaggingModel(modelDir, v.head)
    }
    const offsets = offsetsOpt(v.offsets)
    const readOptions = offsets ? { offsets } : {}
    const goldCorpus = await readCorpus(goldPath, formatOpt(v['gold-format'], '--gold-format'), quiet, typeMap, readOptions)
    const gold = goldCorpus.documents

    const goldTypes = new Set(gold.flatMap((d) => d.mentions.map((m) => m.type)))
    /** Scores are all zero when the two sides name no type in common: say so rather than print a silent 0. */
    const warnDisjoint = (what: string, types: Set<string>): void => {
      if (quiet || types.size === 0 || goldTypes.size === 0 || [...types].some((t) => goldTypes.has(t))) return
      process.stderr.write(
        `warning: ${what} entity types (${[...types].sort().join(', ')}) and the gold types (${[...goldTypes].sort().join(', ')}) have none in common: ` +
          `every prediction counts as wrong; rename types with --map-types "SOURCE,…=TARGET"\n`,
      )
    }
    let result: EvalResult
    /** The types the predictions can have: what the prediction file holds, or the model's labels. */
    let predTypes: Set<string>
    if (v.pred !== undefined) {
      const pred = await readCorpus(v.pred, formatOpt(v['pred-format'], '--pred-format'), quiet, typeMap, readOptions)
      predTypes = new Set(pred.documents.flatMap((d) => d.mentions.map((m) => m.type)))
      warnDisjoint('the predicted', predTypes)
      result = scoreCorpora(scored(goldPath, goldCorpus), scored(v.pred, pred), { warn: (m) => quiet || process.stderr.write(`warning: ${m}\n`) })
    } else {
      await startBackend(quiet)
      const tagger = await openModelTagger(modelDir!, { maxLength, threads: intOpt(v.threads, '--threads', 1) }, true)
      const labels = Object.entries(headLabelsOf(tagger.checkpoint)).filter(([h]) => v.head === undefined || h === v.head).flatMap(([, l]) => l)
      predTypes = new Set(typesOfLabels(labels))
      warnDisjoint("the model's", predTypes)
      try {
        result = await evaluateTagger(tagger, gold, { batchSize, head: v.head, documentRules: documentRulesOpt(v['no-document-rules']) })
      } finally {
        await tagger.dispose()
      }
    }
    const shared = sharedTypesScore(result, predTypes, goldTypes)
    if (shared && !quiet) {
      const only = (a: Set<string>, b: Set<string>): string => [...a].filter((t) => !b.has(t)).sort().join(', ')
      const extra = only(predTypes, goldTypes)
      const missing = only(goldTypes, predTypes)
      process.stderr.write(
        `warning: ${v.pred !== undefined ? 'the predicted' : "the model's"} entity types and the gold types only partly overlap` +
          `${extra ? `: ${extra} not in the gold (every such prediction counts as a false positive)` : ''}` +
          `${missing ? `${extra ? ';' : ':'} ${missing} never predicted (every such gold mention counts as missed)` : ''}; ` +
          `on the shared types (${shared.types.join(', ')}) F1 is ${shared.overall.f1.toFixed(3)} ("shared_types" in the JSON); rename types with --map-types "SOURCE,…=TARGET"\n`,
      )
    }
    writeJsonLine({
      overall: prf(result.overall),
      types: Object.fromEntries(Object.entries(result.types).map(([t, p]) => [t, prf(p)])),
      ...(shared ? { shared_types: { types: shared.types, overall: prf(shared.overall) } } : {}),
      token_accuracy: result.token_accuracy,
      documents: gold.length,
    })
    return 0
  })
}

/**
 * When prediction and gold types only partly overlap, the overall score mixes in types one side
 * cannot have; the micro-averaged score over the types both have is the meaningful one. null when
 * the types coincide (overall is that score) or share nothing (warnDisjoint says so).
 */
export function sharedTypesScore(result: EvalResult, predTypes: ReadonlySet<string>, goldTypes: ReadonlySet<string>): { types: string[]; overall: Prf } | null {
  const types = [...goldTypes].filter((t) => predTypes.has(t)).sort()
  if (types.length === 0 || (types.length === goldTypes.size && types.length === predTypes.size)) return null
  let tp = 0
  let fp = 0
  let fn = 0
  for (const t of types) {
    const p = result.types[t]
    if (!p) continue
    tp += p.tp
    fp += p.fp
    fn += p.fn
  }
  // conlleval's micro average, as core/eval/metrics computes overall.
  const precision = tp + fp > 0 ? tp / (tp + fp) : 0
  const recall = tp + fn > 0 ? tp / (tp + fn) : 0
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0
  return { types, overall: { precision, recall, f1, tp, fp, fn } }
}

function prf(p: Prf): Prf {
  return { precision: p.precision, recall: p.recall, f1: p.f1, tp: p.tp, fp: p.fp, fn: p.fn }
}

function scored(path: string, corpus: Awaited<ReturnType<typeof readCorpus>>): ScoredCorpus {
  return { path, format: corpus.format, documents: corpus.documents, tokenLine: corpus.format === 'conll' ? conllTokenLines(path) : undefined }
}
