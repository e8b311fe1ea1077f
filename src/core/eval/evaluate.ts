// Scores of a model on gold documents: tag them (core/tag) and match the spans (./metrics).

import type { CorpusDocument, Mention } from '../../shared/domain'
import type { BertTokenClassifier } from '../model/bert'
import type { WordPieceTokenizer } from '../nlp/tokenizer'
import { ortTaggerForModel, taggerForModel } from '../tag/open'
import type { Tagger, TagOptions, WindowSettings } from '../tag/tagger'
import { evaluateSpans, type EvalResult } from './metrics'

/**
 * Entity-level exact-span P/R/F1 (and token accuracy) of predictions[i] against gold[i]. By
 * position, not by id: a corpus may repeat an id (NCBI train has PMID 8528200 twice).
 */
export function scoreByPosition(gold: readonly CorpusDocument[], predictions: ReadonlyArray<readonly Mention[]>): EvalResult {
  return evaluateSpans(
    gold.map((g, i) => ({ id: String(i), text: g.text, mentions: g.mentions, tokens: g.tokens })),
    predictions.map((mentions, i) => ({ id: String(i), mentions })),
  )
}

/** Tags the gold documents with `tagger` and scores the result. */
export async function evaluateTagger(tagger: Tagger, gold: readonly CorpusDocument[], opts: TagOptions = {}): Promise<EvalResult> {
  const tagged = await tagger.tag(gold, opts)
  return scoreByPosition(gold, tagged.map((t) => t.mentions))
}

export type EvaluateOptions = Partial<WindowSettings> &
  TagOptions & {
    /** Forward engine: 'tfjs' (default) or 'onnx' (the model exported in memory; faster). */
    engine?: 'tfjs' | 'onnx'
  }

/** Scores of a tfjs model in memory (every head merged, or `head`). */
export async function evaluate(model: BertTokenClassifier, tokenizer: WordPieceTokenizer, gold: readonly CorpusDocument[], opts: EvaluateOptions = {}): Promise<EvalResult> {
  const { maxLength, sentenceLevel, stride, engine, ...tagOpts } = opts
  const windows = { maxLength, sentenceLevel, stride }
  const tagger = engine === 'onnx' ? await ortTaggerForModel(model, tokenizer, windows) : taggerForModel(model, tokenizer, windows)
  try {
    return await evaluateTagger(tagger, gold, tagOpts)
  } finally {
    await tagger.dispose()
  }
}
