// Retraining a word tagger from reviewed documents, warm-started from the model the documents were
// reviewed with: the app's retrain job (host/jobs/word-tagger) and the active-learning simulation
// (core/active/simulate) both call this, so the simulation measures the app's own recipe.

import type { CorpusDocument } from '../../shared/domain'
import { DEFAULT_HEAD } from '../model/bert'
import type { WordTaggerFolder } from '../model/word-tagger'
import { buildLabelMap, typesOfLabels } from '../nlp/bio'
import type { RunProgress } from './runner'
import { baseWindows, trainWordTagger, WORD_TAGGER_RECIPE, type WordTrainResult } from './word-loop'

type WordTaggerModel = Pick<WordTaggerFolder, 'config' | 'featurizer' | 'heads' | 'params' | 'metadata'>

export interface WordRetrainOptions {
  epochs: number
  /** Default: half the recipe's rate (the model has learnt already; a full rate would undo it). */
  lr?: number
  seed: number
  threads?: number
  /** A step budget (bounded round time for large review sets); default: every epoch in full. */
  maxSteps?: number
  signal?: AbortSignal
  onProgress?: (p: RunProgress) => void
}

export interface WordRetrainPlan {
  /** The head of the base model that is continued. */
  baseHead: string
  /** Labels of the retrained model's one head. */
  labels: string[]
  /** Types in the reviewed documents that the base does not know (its head is then replaced). */
  newTypes: string[]
}

/** Which head is continued and what labels the retrained model gets, for the `wanted` types. */
export function planWordRetrain(base: Pick<WordTaggerFolder, 'heads'>, wanted: readonly string[]): WordRetrainPlan {
  const baseHead = DEFAULT_HEAD in base.heads ? DEFAULT_HEAD : Object.keys(base.heads)[0]
  const known = new Set(typesOfLabels(base.heads[baseHead]))
  const newTypes = wanted.filter((t) => !known.has(t))
  const labels = newTypes.length ? buildLabelMap([...known, ...newTypes]).labels : base.heads[baseHead]
  return { baseHead, labels, newTypes }
}

/** The base continued on `train` under the default head name (the retrained model has one head). */
export async function retrainWordModel(base: WordTaggerModel, train: readonly CorpusDocument[], plan: WordRetrainPlan, o: WordRetrainOptions): Promise<WordTrainResult> {
  const init = { ...base, heads: { [DEFAULT_HEAD]: base.heads[plan.baseHead] }, params: renameHead(base.params, plan.baseHead) }
  return trainWordTagger({
    ...baseWindows(base),
    tasks: [{ head: DEFAULT_HEAD, train }],
    epochs: o.epochs,
    lr: o.lr ?? WORD_TAGGER_RECIPE.lr / 2,
    seed: o.seed,
    init,
    // Reviewed documents bring words the base never saw (the seed model of 20 documents knew
    // 1 326 words; about a quarter of NCBI-disease devel's tokens were not among them).
    growVocabulary: true,
    maxSteps: o.maxSteps,
    threads: o.threads,
    signal: o.signal,
    onProgress: o.onProgress,
  })
}

/** A head's parameters under the default head's names (classifier.*, crf.*). */
function renameHead(params: Map<string, Float32Array>, head: string): Map<string, Float32Array> {
  if (head === DEFAULT_HEAD) return params
  const out = new Map<string, Float32Array>()
  for (const [name, v] of params) {
    if (name.startsWith(`classifiers.${head}.`)) out.set(name.replace(`classifiers.${head}.`, 'classifier.'), v)
    else if (name.startsWith(`crfs.${head}.`)) out.set(name.replace(`crfs.${head}.`, 'crf.'), v)
    else if (!/^(classifiers|crfs)\./.test(name)) out.set(name, v)
  }
  return out
}
