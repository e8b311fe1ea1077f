import { join } from 'node:path'
import type { CorpusDocument } from '@shared/domain'
import { buildLabelMap, IGNORE_INDEX } from '@core/nlp/bio'
import { documentsToExamples, planTagging, predictionsToMentions, type Example, type TaggingPlan } from '@core/nlp/examples'
import { WordPieceTokenizer } from '@core/nlp/tokenizer'

const tk = WordPieceTokenizer.fromVocabFile(join(__dirname, '../../fixtures/nlp/vocab.txt'), { lowercase: true })
const labelMap = buildLabelMap(['Disease', 'Gene'])

function doc(id: string, text: string, mentions: Array<[string, string]>, tokens?: Array<[number, number]>): CorpusDocument {
  let from = 0
  return {
    id,
    text,
    passages: [{ type: 'abstract', offset: 0, length: text.length }],
    mentions: mentions.map(([surface, type]) => {
      const start = text.indexOf(surface, from)
      if (start < 0) throw new Error(surface)
      from = start + surface.length
      return { start, end: start + surface.length, text: surface, type }
    }),
    tokens,
  }
}

const pieces = (ex: Example) => Array.from(ex.inputIds, (id) => tk.tokenOf(id))
const labelNames = (ex: Example) => Array.from(ex.labels, (l) => (l === IGNORE_INDEX ? '-' : labelMap.labels[l]))

/** Probabilities that put 0.9 on the gold label of every first piece. */
function oracleProbs(plan: TaggingPlan, gold: CorpusDocument): Float32Array[] {
  const ex = documentsToExamples([gold], tk, labelMap, { maxLength: 1 << 20 })[0]
  const L = labelMap.labels.length
  return plan.examples.map((e) =>
    Float32Array.from({ length: e.inputIds.length * L }, (_, i) => {
      const row = Math.floor(i / L)
      const p = e.window.start + row - 1
      const gold = row === 0 || row === e.inputIds.length - 1 ? 0 : ex.labels[p + 1]
      const target = gold === IGNORE_INDEX ? 0 : gold
      return i % L === target ? 0.9 : 0.1 / (L - 1)
    }),
  )
}

describe('documentsToExamples', () => {
  const d = doc('d1', 'BRCA1 tumors in human mice.', [
    ['BRCA1', 'Gene'],
    ['tumors', 'Disease'],
  ])

  it('builds one example per short document with labels on first pieces', () => {
    const [ex] = documentsToExamples([d], tk, labelMap, { maxLength: 64 })
    expect(pieces(ex)).toEqual(['[CLS]', 'brca', '##1', 'tumor', '##s', 'in', 'human', 'm', '##i', '##c', '##e', '.', '[SEP]'])
    expect(labelNames(ex)).toEqual(['-', 'B-Gene', '-', 'B-Disease', '-', 'O', 'O', 'O', '-', '-', '-', 'O', '-'])
    expect(Array.from(ex.wordStarts)).toEqual([0, 1, 0, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0])
    expect(Array.from(ex.wordIds)).toEqual([-1, 0, 0, 1, 1, 2, 3, 4, 4, 4, 4, 5, -1])
    expect(Array.from(ex.offsets.slice(2, 6))).toEqual([0, 4, 4, 5])
    expect(Array.from(ex.attentionMask).every((v) => v === 1)).toBe(true)
    expect(Array.from(ex.tokenTypeIds).every((v) => v === 0)).toBe(true)
    expect(ex.docId).toBe('d1')
  })

  it('windows long documents within maxLength, labels in every window', () => {
    const exs = documentsToExamples([d], tk, labelMap, { maxLength: 8, stride: 2 })
    expect(exs.length).toBeGreaterThan(1)
    for (const ex of exs) {
      expect(ex.inputIds.length).toBeLessThanOrEqual(8)
      expect(ex.inputIds[0]).toBe(tk.clsId)
      expect(ex.inputIds[ex.inputIds.length - 1]).toBe(tk.sepId)
    }
    // "mice" (4 pieces) is never cut
    let seen = 0
    for (const ex of exs) {
      const ps = pieces(ex)
      if (ps.includes('##i') || ps.includes('m')) {
        seen++
        expect(ps.slice(ps.indexOf('m'), ps.indexOf('m') + 4)).toEqual(['m', '##i', '##c', '##e'])
      }
    }
    expect(seen).toBeGreaterThan(0)
  })

  it('makes sentence-level examples without cutting mentions', () => {
    const d2 = doc('d2', 'Tumors in cells. BRCA1 tumors. The\nhuman cells.', [['BRCA1 tumors. The', 'Disease']])
    const exs = documentsToExamples([d2], tk, labelMap, { maxLength: 64, sentenceLevel: true })
    // "Tumors in cells." | "BRCA1 tumors. The" (not cut after "tumors.") | "human cells."
    expect(exs.map((e) => pieces(e).slice(1, -1))).toEqual([
      ['tumor', '##s', 'in', 'cells', '.'],
      ['brca', '##1', 'tumor', '##s', '.', 'the'],
      ['human', 'cells', '.'],
    ])
    expect(exs.map((e) => e.segment)).toEqual([0, 1, 2])
    expect(labelNames(exs[1]).filter((l) => l !== '-')).toEqual(['B-Disease', 'I-Disease', 'I-Disease', 'I-Disease'])
  })

  it('uses the document tokens (CoNLL) as words', () => {
    const text = 'IL-2 receptor\ntumors'
    const d3 = doc('d3', text, [['IL-2 receptor', 'Gene']], [[0, 4], [5, 13], [14, 20]])
    const [ex] = documentsToExamples([d3], tk, labelMap, { maxLength: 64 })
    expect(pieces(ex)).toEqual(['[CLS]', 'il', '-', '2', 'receptor', 'tumor', '##s', '[SEP]'])
    expect(labelNames(ex)).toEqual(['-', 'B-Gene', '-', '-', 'I-Gene', 'O', '-', '-'])
    const [basic] = documentsToExamples([d3], tk, labelMap, { maxLength: 64, useDocumentTokens: false })
    expect(labelNames(basic)).toEqual(['-', 'B-Gene', 'I-Gene', 'I-Gene', 'I-Gene', 'O', '-', '-'])
  })
})

describe('planTagging + predictionsToMentions', () => {
  const d = doc('t1', 'The BRCA1 and IL-2 receptor in human tumors. Patients were treated with a dose of 10 mg/kg.', [
    ['BRCA1', 'Gene'],
    ['IL-2 receptor', 'Gene'],
    ['human tumors', 'Disease'],
  ])

  it.each([
    ['one window', { maxLength: 512 }],
    ['many overlapping windows', { maxLength: 8, stride: 3 }],
    ['sentences', { maxLength: 16, stride: 4, sentenceLevel: true }],
  ])('recovers the mentions from matching predictions (%s)', (_n, opts) => {
    const plan = planTagging(d, tk, labelMap, opts)
    expect(plan.examples.every((e) => e.labels.every((l) => l === IGNORE_INDEX))).toBe(true)
    const got = predictionsToMentions(d, plan, oracleProbs(plan, d))
    expect(got.map(({ start, end, text, type }) => ({ start, end, text, type }))).toEqual(d.mentions)
    for (const m of got) expect(m.confidence).toBeCloseTo(0.9, 5)
  })

  it('computes confidence as the mean top probability over the words, and accepts logits', () => {
    const text = 'human tumors'
    const d2 = doc('t2', text, [])
    const plan = planTagging(d2, tk, labelMap, { maxLength: 16 })
    // rows: CLS, human, tumor, ##s, SEP; labels O,B-D,I-D,B-G,I-G
    const probs = Float32Array.from([
      ...[1, 0, 0, 0, 0],
      ...[0.2, 0.7, 0.1, 0, 0],
      ...[0.1, 0.4, 0.5, 0, 0],
      ...[1, 0, 0, 0, 0], // later piece: ignored
      ...[1, 0, 0, 0, 0],
    ])
    const [m] = predictionsToMentions(d2, plan, [probs])
    expect(m).toMatchObject({ start: 0, end: 12, text: 'human tumors', type: 'Disease' })
    expect(m.confidence).toBeCloseTo((0.7 + 0.5) / 2, 6)
    const logits = probs.map((p) => Math.log(p + 1e-12))
    const [ml] = predictionsToMentions(d2, plan, [logits], { logits: true })
    expect(ml.confidence).toBeCloseTo((0.7 + 0.5) / 2, 4)
  })

  it('does not join entities across a line break', () => {
    const text = 'tumors\ntumors'
    const d3 = doc('t3', text, [])
    const plan = planTagging(d3, tk, labelMap, { maxLength: 16 })
    const L = labelMap.labels.length
    const row = (k: number) => Array.from({ length: L }, (_, j) => (j === k ? 1 : 0))
    const B = labelMap.label2id['B-Disease']
    const I = labelMap.label2id['I-Disease']
    const probs = Float32Array.from([...row(0), ...row(B), ...row(0), ...row(I), ...row(0), ...row(0)])
    expect(predictionsToMentions(d3, plan, [probs]).map((m) => [m.start, m.end])).toEqual([[0, 6], [7, 13]])
    expect(predictionsToMentions(d3, plan, [probs], { breakAtNewlines: false }).map((m) => [m.start, m.end])).toEqual([[0, 13]])
  })
})
