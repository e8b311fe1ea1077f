// Taggers, cached per folder (a tag:run sends many small requests); used by the tag, engineInfo,
// compare and release jobs.
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { openTagger, type CheckpointTagger } from '../../core/tag/open'
import { ensureBackend, inferenceThreads, log } from './common'

interface CachedTagger {
  stamp: string
  tagger: CheckpointTagger
}

const taggers = new Map<string, Promise<CachedTagger>>()

function stampOf(dir: string): string {
  const s = (f: string) => {
    try {
      return String(statSync(join(dir, f)).mtimeMs)
    } catch {
      return '-'
    }
  }
  return `${s('config.json')}:${s('model.safetensors')}`
}

export async function cachedTagger(dir: string): Promise<CheckpointTagger> {
  const stamp = stampOf(dir)
  const cached = taggers.get(dir)
  if (cached) {
    const m = await cached.catch(() => null)
    if (m && m.stamp === stamp) return m.tagger
    taggers.delete(dir)
    if (m) await m.tagger.dispose().catch(() => undefined)
  }
  // One model at a time: a second one would double the memory for nothing.
  await releaseTaggers(null)
  const opening = (async (): Promise<CachedTagger> => {
    // tfjs is the fallback engine and needs its backend.
    await ensureBackend()
    return { stamp, tagger: await openTagger(dir, { threads: inferenceThreads(), spin: false, logger: log }) }
  })()
  taggers.set(dir, opening)
  opening.catch(() => taggers.delete(dir))
  return (await opening).tagger
}

export async function releaseTaggers(dir: string | null): Promise<number> {
  let n = 0
  for (const [d, p] of [...taggers]) {
    if (dir !== null && d !== dir) continue
    taggers.delete(d)
    const m = await p.catch(() => null)
    if (m) {
      await m.tagger.dispose().catch(() => undefined)
      n++
    }
  }
  return n
}
