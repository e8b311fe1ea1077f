// `train --arch bert --char-cnn`: the encoder's character channel learns the spelling of names.
// As the word tagger's test (word-tagger-cli.test.ts): an invented corpus whose diseases are new
// words ending in -itis or -oma and whose other words of the same slot end in -ment or -ology.
// The encoder's WordPiece vocabulary holds only the context words, so every one of those words is
// the same [UNK] piece: only the characters tell them apart, and a word never seen in training is
// tagged because of its spelling.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run as trainCmd } from '../../../src/cli/commands/train'
import { BertTokenClassifier, makeBertConfig } from '@core/model/bert'
import { loadCheckpoint, saveCheckpoint } from '@core/model/checkpoint'
import { readCheckpointInfo } from '@core/model/checkpoint-files'
import * as tf from '@tensorflow/tfjs-core'
import { openTagger, taggerForModel, windowSettingsOf } from '@core/tag/open'
import { WordPieceTokenizer } from '@core/nlp/tokenizer'
import { writePubtator } from '@core/corpus'
import { capture } from '../cli/capture'
import { learnCharVocabulary } from '@core/model/char-cnn'
import { train } from '@core/train/loop'
import { spellingDocs, syntheticDocs, syntheticVocab } from './synthetic'
import { useCpuBackend } from './tfSetup'

let tmp: string

function spellingCorpus(): string {
  const file = join(tmp, 'spelling.pubtator')
  if (!existsSync(file)) writeFileSync(file, writePubtator(spellingDocs()))
  return file
}

describe('BERT with a character channel through the CLI', () => {
  beforeAll(async () => {
    await useCpuBackend()
    tmp = mkdtempSync(join(tmpdir(), 'fastbioner-charcnn-'))
  })
  afterAll(() => rmSync(tmp, { recursive: true, force: true }))

  it('tags a word never seen in training because it is spelt like the training diseases', async () => {
    const train = spellingCorpus()
    // A small random encoder whose pieces are the context words only.
    const vocab = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', '.', 'the', 'patient', 'showed', 'signs', 'of', 'we', 'report', 'in', 'cells']
    const config = makeBertConfig({ vocabSize: vocab.length, hiddenSize: 32, numHiddenLayers: 1, numAttentionHeads: 2, intermediateSize: 64, maxPositionEmbeddings: 64 })
    const init = join(tmp, 'init')
    const random = BertTokenClassifier.random(config, 3)
    await saveCheckpoint(init, random, vocab, { lowercase: true })
    random.dispose()

    const out = join(tmp, 'spelling-model')
    const tr = await capture(() => trainCmd(['--arch', 'bert', '--char-cnn', '--init', init, '--train', train, '--out', out, '--epochs', '8', '--lr', '3e-3', '--seed', '1', '--threads', '1']))
    expect(tr.code, tr.err).toBe(0)
    const info = readCheckpointInfo(out)
    expect(info.config.charCnn?.pieces).toBe('all')
    expect(info.chars?.chars.slice(0, 2)).toEqual(['<pad>', '<unk>'])

    const text = 'Signs of gandritis in the cells. The patient showed quivoma in the cells. We report torbulment in the cells.'
    for (const engine of ['onnx', 'tfjs'] as const) {
      const tagger = await openTagger(out, { engine, export: 'memory', threads: 1 })
      try {
        const [res] = await tagger.tag([{ id: 'x', text, passages: [], mentions: [] }])
        const found = res.mentions.map((m) => text.slice(m.start, m.end))
        expect(found.sort(), engine).toEqual(['gandritis', 'quivoma'])
      } finally {
        await tagger.dispose()
      }
    }
    // Without its character vector (the projection zeroed) the model tells the words apart no more.
    const ck = await loadCheckpoint(out, { trainable: false })
    try {
      for (const name of ['bert.embeddings.char_cnn.projection.weight', 'bert.embeddings.char_cnn.projection.bias']) {
        const v = ck.model.variables().get(name)!
        v.assign(tf.zerosLike(v))
      }
      const tagger = taggerForModel(ck.model, new WordPieceTokenizer(ck.vocab, { lowercase: ck.lowercase }), windowSettingsOf(info))
      const [res] = await tagger.tag([{ id: 'x', text, passages: [], mentions: [] }])
      expect(res.mentions.map((m) => text.slice(m.start, m.end)).sort()).not.toEqual(['gandritis', 'quivoma'])
    } finally {
      ck.model.dispose()
    }
  }, 240_000)

  it('--word-level: from scratch over whole words, every unlisted word [UNK] and read through its characters', async () => {
    const train = spellingCorpus()
    const out = join(tmp, 'word-level-model')
    const tr = await capture(() => trainCmd(['--arch', 'bert', '--word-level', '--preset', 'cpu-tiny', '--vocab-size', '100', '--train', train, '--out', out, '--epochs', '8', '--lr', '3e-3', '--seed', '1', '--threads', '1']))
    expect(tr.code, tr.err).toBe(0)
    expect(tr.err).toMatch(/100 whole words \(one position per word\)/)
    const vocab = readFileSync(join(out, 'vocab.txt'), 'utf8').trim().split('\n')
    expect(vocab).toHaveLength(100)
    expect(vocab.filter((t) => t.startsWith('##'))).toEqual([])
    // The words of the text below are [UNK] pieces: only their characters tell them apart.
    expect(vocab.filter((t) => ['gandritis', 'quivoma', 'torbulment'].includes(t))).toEqual([])
    expect(readCheckpointInfo(out).config.charCnn?.pieces).toBe('all')
    const text = 'Signs of gandritis in the cells. The patient showed quivoma in the cells. We report torbulment in the cells.'
    const tagger = await openTagger(out, { engine: 'onnx', export: 'memory', threads: 1 })
    try {
      const [res] = await tagger.tag([{ id: 'x', text, passages: [], mentions: [] }])
      expect(res.mentions.map((m) => text.slice(m.start, m.end)).sort()).toEqual(['gandritis', 'quivoma'])
    } finally {
      await tagger.dispose()
    }
    const refused = await capture(() => trainCmd(['--arch', 'bert', '--word-level', '--char-pieces', 'first', '--train', train, '--out', join(tmp, 'x')]))
    expect(refused.code).toBe(2)
    expect(refused.err).toMatch(/every word is one piece/)
  }, 240_000)

  it('both trainers train the channel alike: the same losses step for step, dropout on', async () => {
    const chars = learnCharVocabulary(syntheticDocs(12, 4, 3).flatMap((d) => d.text.split(/\s+/)))
    const tokenizer = new WordPieceTokenizer(syntheticVocab(), { lowercase: true })
    const docs = syntheticDocs(12, 4, 3)
    const runs: number[][] = []
    for (const trainer of ['tfjs', 'onnxruntime'] as const) {
      const config = makeBertConfig({ vocabSize: syntheticVocab().length, hiddenSize: 32, numHiddenLayers: 1, numAttentionHeads: 2, intermediateSize: 64, maxPositionEmbeddings: 64, hiddenDropoutProb: 0.1 })
      const model = BertTokenClassifier.random(config, 3, { default: ['O', 'B-Disease', 'I-Disease'] })
      model.addCharCnn(chars, { pieces: 'first' }, 3)
      const before = Array.from(model.variables().get('bert.embeddings.char_cnn.projection.weight')!.dataSync())
      const r = await train({ model, tokenizer, train: docs, epochs: 1, maxSteps: 4, batchSize: 8, lr: 3e-3, maxLength: 32, seed: 2, trainer, threads: 1 })
      expect(r.trainer.startsWith(trainer === 'tfjs' ? 'tfjs' : 'onnxruntime')).toBe(true)
      expect(Array.from(model.variables().get('bert.embeddings.char_cnn.projection.weight')!.dataSync())).not.toEqual(before)
      runs.push(r.losses)
      model.dispose()
    }
    expect(runs[0]).toHaveLength(4)
    runs[0].forEach((l, i) => expect(Math.abs(l - runs[1][i]), `step ${i}`).toBeLessThan(1e-3 * Math.max(1, l)))
  }, 120_000)
})
