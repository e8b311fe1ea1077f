// The tag job: mentions and uncertainty for documents, with the folder's cached tagger.
import type { Job } from './common'
import { cachedTagger } from './taggers'

export const tag: Job<'tag'> = async (p, ctx) => {
  const tagger = await cachedTagger(p.modelDir)
  const tagged = await tagger.tag(p.docs, { signal: ctx.signal })
  const docs = p.docs.map((d, i) => ({
    id: d.id,
    mentions: tagged[i].mentions.map((x) => ({ start: x.start, end: x.end, type: x.type, confidence: x.confidence })),
    uncertainty: tagged[i].uncertainty,
  }))
  return { engine: tagger.engine.engine, engineReason: tagger.engine.reason, docs }
}
