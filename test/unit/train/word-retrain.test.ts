// Retraining a word tagger from reviewed documents (the app's retrain job and the active-learning
// simulation): the vocabularies grow with the reviewed text, known ids and rows stay.
import { describe, expect, it } from 'vitest'
import type { CorpusDocument } from '@shared/domain'
import { WordFeaturizer, UNK_ID } from '@core/nlp/word-features'
import { WORD_TAGGER_EMBEDDINGS } from '@core/model/word-tagger'
import { planWordRetrain, retrainWordModel } from '@core/train/word-retrain'
import { baseWindows, trainWordTagger } from '@core/train/word-loop'
import { sharedSessionCount } from '@core/train/ort'

const TINY = { wordDim: 8, charDim: 4, charFilters: 6, lstmHidden: 8 }

function sentences(rows: Array<[string, string]>, idBase: number): CorpusDocument[] {
  return rows.map(([lead, word], i) => {
    const text = `${lead} ${word} today.`
    const start = lead.length + 1
    return { id: String(idBase + i), text, passages: [], mentions: [{ start, end: start + word.length, type: 'Disease', text: word }] }
  })
}

describe('WordFeaturizer.extend', () => {
  it('appends the words and characters it lacks, most frequent first, keeping every known id', () => {
    const base = WordFeaturizer.learn(['fever', 'fever', 'in'])
    const grown = base.extend(['Fever', 'zoster', 'Ωmega', 'zoster', 'in', 'rare'])
    expect(grown.words).toEqual(['<pad>', '<unk>', 'fever', 'in', 'zoster', 'rare', 'ωmega'])
    for (const w of base.words) expect(grown.wordId(w)).toBe(base.wordId(w))
    for (const c of base.chars) expect(grown.charId(c)).toBe(base.charId(c))
    expect(grown.chars.slice(0, base.chars.length)).toEqual(base.chars)
    expect(grown.charId('Ω')).not.toBe(UNK_ID)
    expect(base.charId('Ω')).toBe(UNK_ID)
    // The base's singleton ("in") stays one; new words seen once join.
    expect([...grown.singletons].map((i) => grown.words[i]).sort()).toEqual(['in', 'rare', 'ωmega'])
    // maxSize counts every word: room for one more.
    expect(base.extend(['zoster', 'zoster', 'rare'], { maxSize: base.words.length + 1 }).words.slice(-1)).toEqual(['zoster'])
    expect(base.extend(['zoster'], { maxSize: 2 }).words).toEqual(base.words)
    expect(base.extend(['a', 'a', 'b'], { minCount: 2 }).words.slice(base.words.length)).toEqual(['a'])
  })
})

describe('retrainWordModel', () => {
  it('learns the reviewed words the base never saw, in the sessions the base opened; rows of known words it did not see stay as they were', async () => {
    const leads = ['Patients with', 'We report', 'A case of']
    const first = sentences(Array.from({ length: 12 }, (_, i) => [leads[i % 3], i % 2 ? 'fever' : 'asthma'] as [string, string]), 0)
    const base = await trainWordTagger({ tasks: [{ head: 'default', train: first }], epochs: 2, seed: 1, threads: 1, config: TINY })
    const reviewed = sentences(Array.from({ length: 6 }, (_, i) => [leads[i % 3], 'shingles'] as [string, string]), 100)
    const f0 = base.model.featurizer
    expect(f0.wordId('shingles')).toBe(UNK_ID)

    const plan = planWordRetrain(base.model, ['Disease'])
    const sessions = sharedSessionCount()
    const r = await retrainWordModel(base.model, reviewed, plan, { epochs: 1, seed: 2, threads: 1 })
    // Same length bucket, same heads: the base's training session is reused though the word table grew.
    expect(sharedSessionCount()).toBe(sessions)
    const f1 = r.model.featurizer
    expect(f1.wordId('shingles')).not.toBe(UNK_ID)
    expect(f1.words.slice(0, f0.words.length)).toEqual(f0.words)
    expect(r.model.config.wordVocabSize).toBe(f1.words.length)
    expect(r.model.config.charVocabSize).toBe(f1.chars.length)
    const D = r.model.config.wordDim
    const before = base.model.params.get(WORD_TAGGER_EMBEDDINGS)!
    const after = r.model.params.get(WORD_TAGGER_EMBEDDINGS)!
    expect(after.length).toBe(f1.words.length * D)
    // "fever" is not in the reviewed documents: no gradient, a fresh optimizer, no decay — unchanged.
    const row = (t: Float32Array, id: number) => Array.from(t.subarray(id * D, (id + 1) * D))
    expect(row(after, f1.wordId('fever'))).toEqual(row(before, f0.wordId('fever')))
    // "today" is in both: trained further.
    expect(row(after, f1.wordId('today'))).not.toEqual(row(before, f0.wordId('today')))
  }, 120_000)

  it('reads text as the base was trained to: windows over documents for a --doc-level base, sentences otherwise', async () => {
    expect(baseWindows({ metadata: { training: { sentenceLevel: false, maxLength: 64 } } })).toEqual({ sentenceLevel: false, maxLength: 64 })
    expect(baseWindows({ metadata: {} })).toEqual({ sentenceLevel: true, maxLength: 128 })
    expect(baseWindows({})).toEqual({ sentenceLevel: true, maxLength: 128 })
    // Three documents of two sentences each: six examples sentence by sentence, three as windows.
    const docs = sentences([['Patients with', 'fever'], ['We report', 'asthma'], ['A case of', 'fever']], 0).map((d) => ({ ...d, text: `${d.text} It was seen again.` }))
    const base = await trainWordTagger({ tasks: [{ head: 'default', train: docs }], epochs: 1, seed: 1, threads: 1, config: TINY })
    const plan = planWordRetrain(base.model, ['Disease'])
    const bySentence = await retrainWordModel(base.model, docs, plan, { epochs: 1, seed: 2, threads: 1 })
    const byWindow = await retrainWordModel({ ...base.model, metadata: { training: { sentenceLevel: false, maxLength: 64 } } }, docs, plan, { epochs: 1, seed: 2, threads: 1 })
    expect([bySentence.trainExamples, byWindow.trainExamples]).toEqual([6, 3])
  }, 120_000)
})
