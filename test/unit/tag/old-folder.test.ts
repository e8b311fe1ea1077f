// A model folder written before the word tagger (test/fixtures/models/bert-66555ab) still loads and
// tags exactly as it did, on both engines: the new model kind changed no BERT reading or tagging.
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { readPubtator } from '@core/corpus'
import { openTagger } from '@core/tag/open'

const FIX = resolve(__dirname, '../../fixtures/models/bert-66555ab')
const expected = JSON.parse(readFileSync(join(FIX, 'tagged.json'), 'utf8')) as Array<{ id: string; mentions: Array<{ start: number; end: number; type: string; confidence: number }>; uncertainty: number }>
const docs = readPubtator(readFileSync(resolve(__dirname, '../../fixtures/train/dev.pubtator'), 'utf8'), 'dev.pubtator').documents.slice(0, 4)

describe('a model folder from before the word tagger', () => {
  for (const engine of ['onnx', 'tfjs'] as const) {
    it(`tags as it did (${engine})`, async () => {
      process.env.FASTBIONER_BACKEND ??= 'wasm'
      const tagger = await openTagger(join(FIX, 'model'), { engine, export: 'memory', threads: 1 })
      try {
        const got = await tagger.tag(docs)
        expect(got.map((r) => r.mentions.length)).toEqual(expected.map((e) => e.mentions.length))
        got.forEach((r, i) => {
          expect(r.uncertainty).toBeCloseTo(expected[i].uncertainty, 5)
          r.mentions.forEach((m, k) => {
            const want = expected[i].mentions[k]
            expect([m.start, m.end, m.type]).toEqual([want.start, want.end, want.type])
            expect(m.confidence).toBeCloseTo(want.confidence, 5)
          })
        })
      } finally {
        await tagger.dispose()
      }
    })
  }
})
