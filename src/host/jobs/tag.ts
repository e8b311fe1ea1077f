// The tag job: mentions and uncertainty for documents, with the folder's cached tagger.
import { TaggingError } from '../../core/tag/tagger'
import type { Job } from './common'
import { cachedTagger } from './taggers'

export const tag: Job<'tag'> = async (p, ctx) => {
  const tagger = await cachedTagger(p.modelDir)
  const tagged = await tagger.tag(p.docs, { signal: ctx.signal })
  const docs = p.docs.map((d, i) => {
    const { mentions, uncertainty, uncertainties } = tagged[i]
    // Scores that are not numbers (finite weights whose sums overflow float32) find no mentions:
    // answering "none" would make the app replace the document's suggestions with nothing, so
    // the request fails and the stored suggestions stay as they were.
    const bad = (uncertainty !== null && !Number.isFinite(uncertainty)) || mentions.some((m) => !Number.isFinite(m.confidence))
    if (bad) {
      throw new TaggingError(
        `${p.modelDir}: the model's scores are not finite numbers (uncertainty ${uncertainty}) for document ${d.id}; ` +
          'its weights overflow float32. Nothing was changed: use another model or retrain this one.',
      )
    }
    return {
      id: d.id,
      mentions: mentions.map((x) => ({ start: x.start, end: x.end, type: x.type, confidence: x.confidence, rule: x.rule ?? null })),
      uncertainty,
      margin: uncertainties?.margin ?? null,
      entropy: uncertainties?.entropy ?? null,
    }
  })
  return { engine: tagger.engine.engine, engineReason: tagger.engine.reason, docs }
}
