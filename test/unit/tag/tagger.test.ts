// The one tagging path: heads merged or picked, cancel and progress, and a checkpoint folder
// opened with what its small files say (window settings, tokenizer.json vocabulary).
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as tf from '@tensorflow/tfjs-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useBackend } from '@core/model/backend'
import { saveCheckpoint } from '@core/model/checkpoint'
import { buildLabelMap } from '@core/nlp/bio'
import { applyDocumentRules, DEFAULT_DOCUMENT_RULES, NO_DOCUMENT_RULES } from '@core/tag/document-rules'
import { mergeHeadMentions } from '@core/tag/merge'
import { encodeDocument } from '@core/nlp/examples'
import { openTagger, taggerForModel } from '@core/tag/open'
import { routeText, trainHeadRouter } from '@core/tag/router'
import { TaggingError } from '@core/tag/tagger'
import { syntheticDocs, tinyModel, tokenizer, vocab } from '../distill/helpers'

const heads = { disease: buildLabelMap(['Disease']).labels, chem: buildLabelMap(['Chemical']).labels }
const docs = syntheticDocs(5, 3, 3, 't')
let tmp: string

beforeAll(async () => {
  await useBackend('wasm')
  tmp = mkdtempSync(join(tmpdir(), 'fastbioner-tag-'))
})
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

describe('tagger', () => {
  it('merges every head by default and tags with one head by name', async () => {
    // Untrained heads: near-uniform logits, so both heads find (overlapping) mentions.
    const model = tinyModel(1, 5, 32, heads)
    const tagger = taggerForModel(model, tokenizer, { maxLength: 32 })
    const merged = await tagger.tag(docs)
    const disease = await tagger.tag(docs, { head: 'disease' })
    const chem = await tagger.tag(docs, { head: 'chem' })
    expect(disease.flatMap((d) => d.mentions).length).toBeGreaterThan(0)
    expect(chem.flatMap((d) => d.mentions).length).toBeGreaterThan(0)
    expect(new Set(disease.flatMap((d) => d.mentions.map((m) => m.type)))).toEqual(new Set(['Disease']))
    expect(new Set(chem.flatMap((d) => d.mentions.map((m) => m.type)))).toEqual(new Set(['Chemical']))
    docs.forEach((doc, i) => {
      const want = mergeHeadMentions([
        { head: 'disease', mentions: disease[i].mentions },
        { head: 'chem', mentions: chem[i].mentions },
      ])
      expect(merged[i].mentions).toEqual(want)
      for (const m of merged[i].mentions) expect(m.text).toBe(doc.text.slice(m.start, m.end))
      expect(merged[i].uncertainty).toBeGreaterThan(0)
      expect(merged[i].uncertainty).toBeLessThan(1)
      expect(merged[i].pieces).toBe(disease[i].pieces)
    })
    // Pieces: every word piece of the document plus [CLS]/[SEP] per sentence window (3 sentences).
    expect(merged[0].pieces).toBe(tokenizer.tokenize(docs[0].text).ids.length + 2 * 3)
    await expect(tagger.tag(docs, { head: 'gene' })).rejects.toThrow(/no head 'gene' \(heads: disease, chem\)/)
    await tagger.dispose()
    // The model in memory outlives its tagger.
    expect((await taggerForModel(model, tokenizer, { maxLength: 32 }).tag(docs.slice(0, 1)))[0].mentions).toEqual(merged[0].mentions)
    model.dispose()
  })

  it('applies the document rules to each head before merging, by default; NO_DOCUMENT_RULES leaves them out', async () => {
    // Untrained heads tag words at random: repeated words make the Chemical head's mentions recur.
    const model = tinyModel(1, 3, 32, heads)
    const tagger = taggerForModel(model, tokenizer, { maxLength: 32 })
    const text = docs.map((d) => d.text).join(' ')
    const repeated = [{ ...docs[0], id: 'r', text: `${text} ${text}`, passages: [{ type: 'abstract', offset: 0, length: 2 * text.length + 1 }], mentions: [] }]
    const raw = await Promise.all(['disease', 'chem'].map((head) => tagger.tag(repeated, { head, documentRules: NO_DOCUMENT_RULES })))
    const words = encodeDocument(repeated[0], tokenizer).wordOffsets
    const ruled = ['disease', 'chem'].map((head, k) => ({ head, mentions: applyDocumentRules(repeated[0].text, words, raw[k][0].mentions, DEFAULT_DOCUMENT_RULES) }))
    // The rules changed something here, so the comparison below can tell them apart.
    expect(ruled[1].mentions.length).toBeGreaterThan(raw[1][0].mentions.length)
    expect((await tagger.tag(repeated))[0].mentions).toEqual(mergeHeadMentions(ruled))
    expect((await tagger.tag(repeated, { documentRules: NO_DOCUMENT_RULES }))[0].mentions).toEqual(mergeHeadMentions(['disease', 'chem'].map((head, k) => ({ head, mentions: raw[k][0].mentions }))))
    await tagger.dispose()
    model.dispose()
  })

  it('reports progress per chunk, stops on abort and leaks no tensors', async () => {
    const model = tinyModel(1, 5)
    const tagger = taggerForModel(model, tokenizer, { maxLength: 32 })
    const before = tf.memory().numTensors
    const seen: Array<[number, number]> = []
    await tagger.tag(docs, { docsPerChunk: 2, batchSize: 3, onProgress: (d, t) => seen.push([d, t]) })
    expect(seen).toEqual([[2, 5], [4, 5], [5, 5]])
    expect(tf.memory().numTensors).toBe(before)
    const ac = new AbortController()
    const run = tagger.tag(docs, { docsPerChunk: 1, signal: ac.signal, onProgress: () => ac.abort() })
    await expect(run).rejects.toMatchObject({ name: 'AbortError' })
    expect(() => taggerForModel(model, tokenizer, { maxLength: 65 })).toThrow(TaggingError)
    model.dispose()
  })

  it('opens a checkpoint folder with its training window settings and a tokenizer.json vocabulary', async () => {
    const model = tinyModel(1, 5, 32, heads)
    const dir = join(tmp, 'folder')
    await saveCheckpoint(dir, model, [...vocab], { lowercase: true, metadata: { training: { maxLength: 24, sentenceLevel: false } } })
    const inMemory = await taggerForModel(model, tokenizer, { maxLength: 24, sentenceLevel: false }).tag(docs)
    // A folder as some hubs ship it: tokenizer.json instead of vocab.txt.
    const tokens = readFileSync(join(dir, 'vocab.txt'), 'utf8').trimEnd().split('\n')
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify({ model: { type: 'WordPiece', vocab: Object.fromEntries(tokens.map((t, i) => [t, i])) } }))
    unlinkSync(join(dir, 'vocab.txt'))
    const tagger = await openTagger(dir, { engine: 'tfjs', logger: () => {} })
    expect(tagger.windows).toEqual({ maxLength: 24, sentenceLevel: false, stride: undefined })
    expect(tagger.headNames.sort()).toEqual(['chem', 'disease'])
    expect(tagger.checkpoint.notes).toContain('vocab.txt absent: vocabulary taken from tokenizer.json')
    const fromFolder = await tagger.tag(docs)
    expect(fromFolder.map((d) => d.mentions.map((m) => [m.start, m.end, m.type]))).toEqual(inMemory.map((d) => d.mentions.map((m) => [m.start, m.end, m.type])))
    await tagger.dispose()

    // A window longer than the model allows is refused before any engine is opened.
    let opened = false
    const open = () => {
      opened = true
      return Promise.reject(new Error('not reached'))
    }
    await expect(openTagger(dir, { maxLength: 65, openEngine: open })).rejects.toThrow(/exceeds the model's max_position_embeddings 64/)
    expect(opened).toBe(false)
    model.dispose()
  })

  it("keeps, per document, the mentions of a routed type from the head its folder's router picks", async () => {
    const routedHeads = { ncbi: buildLabelMap(['Disease']).labels, bc5: buildLabelMap(['Disease']).labels, chem: buildLabelMap(['Chemical']).labels }
    const model = tinyModel(1, 5, 32, routedHeads)
    const router = trainHeadRouter('Disease', [
      { head: 'ncbi', texts: [docs[0].text, docs[1].text] },
      { head: 'bc5', texts: docs.slice(2).map((d) => d.text) },
    ])
    const chosen = docs.map((d) => routeText(router, d.text))
    // Both heads win some documents, so the test can tell routing from either head alone.
    expect(new Set(chosen)).toEqual(new Set(['ncbi', 'bc5']))
    const dir = join(tmp, 'routed')
    await saveCheckpoint(dir, model, [...vocab], { lowercase: true, metadata: { training: { maxLength: 32 }, routers: JSON.parse(JSON.stringify([router])) } })
    const tagger = await openTagger(dir, { engine: 'tfjs', logger: () => {} })
    const merged = await tagger.tag(docs)
    const per = await Promise.all(Object.keys(routedHeads).map(async (head) => ({ head, results: await tagger.tag(docs, { head }) })))
    docs.forEach((_, i) => {
      const keep = per.map(({ head, results }) => ({ head, mentions: results[i].mentions.filter((m) => m.type !== 'Disease' || head === chosen[i]) }))
      expect(merged[i].mentions).toEqual(mergeHeadMentions(keep))
      expect(merged[i].mentions.filter((m) => m.type === 'Disease').every((m) => (m as { head?: string }).head === chosen[i])).toBe(true)
    })
    // The review queue's uncertainty: the mean over the words of the heads still heard (the chosen
    // Disease head and chem), not of the head whose every type was routed away.
    docs.forEach((_, i) => {
      const u = (head: string) => per.find((p) => p.head === head)!.results[i].uncertainty!
      const heard = (u(chosen[i]) + u('chem')) / 2
      expect(merged[i].uncertainty).toBeCloseTo(heard, 9)
      expect(Math.abs((u('ncbi') + u('bc5') + u('chem')) / 3 - heard)).toBeGreaterThan(1e-7)
    })
    // The heads that were routed away found Disease mentions of their own, which the merge left out.
    expect(per.some(({ head, results }) => head !== 'chem' && results.some((r, i) => head !== chosen[i] && r.mentions.length > 0))).toBe(true)
    // One head asked for by name: no routing, its own mentions.
    expect((await tagger.tag(docs, { head: 'bc5' })).map((r) => r.mentions)).toEqual(per[1].results.map((r) => r.mentions))
    await tagger.dispose()
    // A router naming a head the model lacks is refused when the folder is opened.
    writeFileSync(join(dir, 'fastbioner.json'), JSON.stringify({ training: { maxLength: 32 }, routers: [{ ...JSON.parse(JSON.stringify(router)), heads: ['ncbi', 'gene'] }] }))
    await expect(openTagger(dir, { engine: 'tfjs', logger: () => {} })).rejects.toThrow(/fastbioner\.json: routers\[0\]\.heads must name 2 to 16 distinct heads of the model/)
    model.dispose()
  })

  it('a CRF head decodes by Viterbi, in memory and from its checkpoint folder; zero transitions decode as argmax', async () => {
    const model = tinyModel(1, 5, 32, heads)
    const argmax = await taggerForModel(model, tokenizer, { maxLength: 32 }).tag(docs, { head: 'disease' })
    model.addCrf('disease')
    const zero = await taggerForModel(model, tokenizer, { maxLength: 32 }).tag(docs, { head: 'disease' })
    expect(zero.map((d) => d.mentions)).toEqual(argmax.map((d) => d.mentions))
    expect(argmax.flatMap((d) => d.mentions).some((m) => m.text.includes(' '))).toBe(true)
    // Transitions that forbid every move into an entity label except from O into B: no mention is
    // longer than one word, and there are mentions still (B after O stays cheap).
    const labels = heads.disease // O, B-Disease, I-Disease
    const C = labels.length
    const t = new Float32Array(C * C)
    for (let from = 0; from < C; from++) for (let to = 1; to < C; to++) t[from * C + to] = from === 0 && labels[to].startsWith('B-') ? 0 : -1e4
    model.variables().get('crfs.disease.transitions')!.assign(tf.tensor(t, [C, C]))
    const forbidden = await taggerForModel(model, tokenizer, { maxLength: 32 }).tag(docs, { head: 'disease' })
    const mentions = forbidden.flatMap((d) => d.mentions)
    expect(mentions.length).toBeGreaterThan(0)
    for (const m of mentions) expect(m.text).not.toMatch(/\s/)
    // The CRF is saved with the model and the folder's tagger decodes the same way.
    const dir = join(tmp, 'crf')
    await saveCheckpoint(dir, model, [...vocab], { lowercase: true, metadata: { training: { maxLength: 32 } } })
    const tagger = await openTagger(dir, { engine: 'tfjs', logger: () => {} })
    expect(tagger.heads.find((h) => h.name === 'disease')!.crf).toBeDefined()
    expect(tagger.heads.find((h) => h.name === 'chem')!.crf).toBeUndefined()
    expect((await tagger.tag(docs, { head: 'disease' })).map((d) => d.mentions)).toEqual(forbidden.map((d) => d.mentions))
    await tagger.dispose()
    model.dispose()
  })

  it('with wordScores, each head run also gives its words, their probabilities and its CRF; without, nothing changes', async () => {
    const model = tinyModel(1, 5, 32, heads)
    model.addCrf('disease')
    // Windows of 8 pieces: sentences longer than 6 pieces are windowed, their words merged.
    const tagger = taggerForModel(model, tokenizer, { maxLength: 8 })
    const plain = await tagger.tag(docs)
    const scored = await tagger.tag(docs, { wordScores: true })
    docs.forEach((doc, i) => {
      expect(plain[i]).not.toHaveProperty('wordScores')
      const { wordScores, ...rest } = scored[i]
      expect(rest).toEqual(plain[i])
      expect(wordScores!.map((w) => w.head)).toEqual(['disease', 'chem'])
      const words = tokenizer.tokenize(doc.text).wordOffsets
      for (const w of wordScores!) {
        const C = w.labels.length
        expect(w.labels).toEqual(heads[w.head as keyof typeof heads])
        expect(w.wordOffsets).toEqual(words)
        expect(w.probs).toHaveLength(words.length * C)
        expect(Array.from(w.covered)).toEqual(words.map(() => 1))
        for (let k = 0; k < words.length; k++) {
          let sum = 0
          for (let j = 0; j < C; j++) sum += w.probs[k * C + j]
          expect(sum).toBeCloseTo(1, 5)
        }
      }
      expect(wordScores![0].crf).toBeDefined()
      expect(wordScores![1].crf).toBeUndefined()
    })
    // One head asked for: its scores only.
    const [one] = await tagger.tag(docs.slice(0, 1), { head: 'chem', wordScores: true })
    expect(one.wordScores!.map((w) => w.head)).toEqual(['chem'])
    await tagger.dispose()
    model.dispose()
  })
})
