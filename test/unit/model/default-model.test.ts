// The default model that ships in resources/models/default (built by `npm run train:default`).
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findDefaultModel } from '@core/model/default-model'
import { folderHeadLabels } from '@core/model/word-tagger'
import { openTagger, type CheckpointTagger } from '@core/tag/open'
import type { CorpusDocument } from '../../../src/shared/domain'

const SHIPPED = resolve(__dirname, '../../../resources/models/default')
// Invented sentences in the style of abstracts, one entity type each (not corpus text).
const SENTENCES: Array<{ type: string; text: string; mention: string }> = [
  { type: 'Disease', text: 'Patients with breast cancer were enrolled in the study.', mention: 'breast cancer' },
  { type: 'Chemical', text: 'Treatment with cisplatin was stopped after two cycles.', mention: 'cisplatin' },
  { type: 'Gene', text: 'Expression of the p53 protein was reduced in these cells.', mention: 'p53 protein' },
]

function doc(id: string, text: string): CorpusDocument {
  return { id, text, passages: [{ type: 'abstract', offset: 0, length: text.length }], mentions: [] }
}

let tagger: CheckpointTagger

describe('the shipped default model', () => {
  beforeAll(async () => {
    delete process.env.FASTBIONER_DEFAULT_MODEL
    tagger = await openTagger(SHIPPED, { engine: 'onnx', export: 'memory', threads: 1 })
  })
  afterAll(async () => tagger?.dispose())

  it('is where the CLI and the app look for it, in HF layout, within 15 MB', () => {
    expect(findDefaultModel({}).dir).toBe(SHIPPED)
    const files = readdirSync(SHIPPED)
    for (const f of ['config.json', 'vocab.txt', 'model.safetensors', 'fastbioner.json', 'MODEL_CARD.md']) expect(files).toContain(f)
    const bytes = files.reduce((a, f) => a + statSync(join(SHIPPED, f)).size, 0)
    expect(bytes).toBeLessThanOrEqual(15 * 1024 * 1024)
    expect(readFileSync(join(SHIPPED, 'MODEL_CARD.md'), 'utf8')).toMatch(/\| NCBI-disease \| test \| Disease \|/)
  })

  it('has a head for each entity type that tags it, and all heads merged tag every type', async () => {
    const heads = folderHeadLabels(SHIPPED)
    const docs = SENTENCES.map((s, i) => doc(`s${i}`, s.text))
    for (const [i, s] of SENTENCES.entries()) {
      const head = Object.keys(heads).find((h) => heads[h]!.includes(`B-${s.type}`))
      expect(head, `a head with B-${s.type}`).toBeDefined()
      const [r] = await tagger.tag([docs[i]], { head })
      expect(r.mentions.map((m) => [m.text, m.type])).toContainEqual([s.mention, s.type])
    }
    const merged = await tagger.tag(docs)
    const found = new Set(merged.flatMap((r) => r.mentions.map((m) => m.type)))
    expect([...found].sort()).toEqual(['Chemical', 'Disease', 'Gene'])
  })
})
