// `train` with no architecture options makes the character-aware word tagger; its folder loads
// back exactly, `eval` reproduces the devel F1 seen in training, and an unseen word that is spelt
// like the training diseases is tagged because of its characters.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run as trainCmd } from '../../../src/cli/commands/train'
import { run as evalCmd } from '../../../src/cli/commands/eval'
import { isWordTaggerFolder, loadWordTagger, saveWordTagger } from '@core/model/word-tagger'
import { openTagger } from '@core/tag/open'
import { readPubtator, writePubtator } from '@core/corpus'
import { compareModels } from '@core/eval/compare'
import { capture } from '../cli/capture'
import { spellingDocs } from './synthetic'

const FIX = resolve(__dirname, '../../fixtures/train')
let tmp: string
let model: string
let summary: { arch: string; best_dev_f1: number; epochs: unknown[]; parameters: number }

describe('word tagger through the CLI', () => {
  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'fastbioner-word-'))
    model = join(tmp, 'model')
    const tr = await capture(() => trainCmd(['--train', join(FIX, 'train.pubtator'), '--dev', join(FIX, 'dev.pubtator'), '--out', model, '--epochs', '4', '--seed', '1', '--threads', '1']))
    expect(tr.code, tr.err).toBe(0)
    summary = JSON.parse(tr.out)
  }, 240_000)
  afterAll(() => rmSync(tmp, { recursive: true, force: true }))

  it('trains the word tagger by default from scratch and eval reproduces its devel F1', async () => {
    expect(summary.arch).toBe('word-lstm')
    expect(summary.epochs).toHaveLength(4)
    expect(isWordTaggerFolder(model)).toBe(true)
    expect(summary.best_dev_f1).toBeGreaterThan(0.9)
    const ev = await capture(() => evalCmd(['--gold', join(FIX, 'dev.pubtator'), '--model', model]))
    expect(ev.code, ev.err).toBe(0)
    expect(JSON.parse(ev.out).overall.f1).toBeCloseTo(summary.best_dev_f1, 6)
    // compare reports the word tagger's own parameter count, not a BERT count from its sizes.
    const report = await compareModels([model], readPubtator(readFileSync(join(FIX, 'dev.pubtator'), 'utf8'), 'dev.pubtator').documents.slice(0, 3))
    expect(report.models[0].parameters).toBe(summary.parameters)
  })

  it('tags a word never seen in training because it is spelt like the training diseases', async () => {
    // Invented corpus: only the spelling tells diseases from the other words (spellingDocs).
    const train = join(tmp, 'spelling.pubtator')
    writeFileSync(train, writePubtator(spellingDocs()))
    const out = join(tmp, 'spelling-model')
    const tr = await capture(() => trainCmd(['--train', train, '--out', out, '--epochs', '6', '--seed', '1', '--threads', '1']))
    expect(tr.code, tr.err).toBe(0)
    const tagger = await openTagger(out, { threads: 1 })
    try {
      const text = 'Signs of gandritis in the cells. The patient showed quivoma in the cells. We report torbulment in the cells.'
      const [res] = await tagger.tag([{ id: 'x', text, passages: [], mentions: [] }])
      const found = res.mentions.map((m) => text.slice(m.start, m.end))
      expect(found.sort()).toEqual(['gandritis', 'quivoma'])
    } finally {
      await tagger.dispose()
    }
  }, 240_000)

  it('trains further from a word tagger with --init, keeping its vocabularies; --resume continues it with the options it was started with', async () => {
    const more = join(tmp, 'more')
    const tr = await capture(() => trainCmd(['--train', join(FIX, 'train.pubtator'), '--dev', join(FIX, 'dev.pubtator'), '--init', model, '--out', more, '--epochs', '2', '--max-steps', '3', '--seed', '2', '--dropout', '0.3', '--threads', '1']))
    expect(tr.code, tr.err).toBe(0)
    const first = JSON.parse(tr.out)
    expect(first.arch).toBe('word-lstm')
    expect(first.steps).toBe(3)
    expect(readFileSync(join(more, 'words.txt'), 'utf8')).toBe(readFileSync(join(model, 'words.txt'), 'utf8'))
    // Its sizes are the model's; the dropout given replaces the model's 0.5.
    const [before, after] = [model, more].map((d) => JSON.parse(readFileSync(join(d, 'config.json'), 'utf8')))
    expect(after).toEqual({ ...before, dropout: 0.3 })
    expect(before.dropout).toBe(0.5)
    const source = JSON.parse(readFileSync(join(more, 'fastbioner.json'), 'utf8')).source
    expect(source.init).toBe(model)
    expect(source.options).toMatchObject({ arch: 'word-lstm', init: model, epochs: '2', 'max-steps': '3', seed: '2', dropout: '0.3', train: join(FIX, 'train.pubtator') })
    const resized = await capture(() => trainCmd(['--train', join(FIX, 'train.pubtator'), '--init', model, '--out', join(tmp, 'resized'), '--lstm-hidden', '8', '--threads', '1']))
    expect(resized.code).toBe(2)
    expect(resized.err).toMatch(/--lstm-hidden: a run from --init keeps the sizes of/)
    // The inputs and settings are the recorded ones: giving them again is refused.
    const refused = await capture(() => trainCmd(['--train', join(FIX, 'train.pubtator'), '--out', more, '--resume']))
    expect(refused.code).toBe(2)
    expect(refused.err).toMatch(/--resume continues the run in --out as it was started.*give no --train/)
    // The run had reached its 3 steps: resumed, it has nothing left and keeps the model.
    const resumed = await capture(() => trainCmd(['--out', more, '--resume', '--threads', '1']))
    expect(resumed.code, resumed.err).toBe(0)
    expect(JSON.parse(resumed.out)).toMatchObject({ arch: 'word-lstm', steps: 3 })
    expect(existsSync(join(more, 'optimizer.safetensors'))).toBe(true)
  }, 120_000)

  it('from scratch takes the BiLSTM width and dropout given (word-lstm only)', async () => {
    const narrow = join(tmp, 'narrow')
    const tr = await capture(() => trainCmd(['--train', join(FIX, 'train.pubtator'), '--out', narrow, '--lstm-hidden', '12', '--dropout', '0', '--max-steps', '2', '--threads', '1']))
    expect(tr.code, tr.err).toBe(0)
    expect(JSON.parse(readFileSync(join(narrow, 'config.json'), 'utf8'))).toMatchObject({ lstm_hidden: 12, dropout: 0 })
    expect(loadWordTagger(narrow).params.get('lstm.weight_hh')).toHaveLength(2 * 12 * 4 * 12) // [2, H, 4H]
    const bert = await capture(() => trainCmd(['--train', join(FIX, 'train.pubtator'), '--out', join(tmp, 'b'), '--arch', 'bert', '--dropout', '0.1']))
    expect(bert.code).toBe(2)
    expect(bert.err).toMatch(/--dropout is an option of --arch word-lstm/)
  }, 120_000)

  it('--lr-schedule linear is recorded with the run (and a resume keeps it); another value is refused', async () => {
    const linear = join(tmp, 'linear')
    const tr = await capture(() => trainCmd(['--train', join(FIX, 'train.pubtator'), '--out', linear, '--lr-schedule', 'linear', '--max-steps', '2', '--threads', '1']))
    expect(tr.code, tr.err).toBe(0)
    const meta = JSON.parse(readFileSync(join(linear, 'fastbioner.json'), 'utf8'))
    expect(meta.training.lrSchedule).toBe('linear')
    expect(meta.source.options['lr-schedule']).toBe('linear')
    const bad = await capture(() => trainCmd(['--train', join(FIX, 'train.pubtator'), '--out', join(tmp, 'bad-schedule'), '--lr-schedule', 'cosine']))
    expect(bad.code).toBe(2)
    expect(bad.err).toMatch(/--lr-schedule must be constant or linear, got 'cosine'/)
  }, 120_000)

  it('--average-last N averages the last epochs (kept only above every epoch on devel), is recorded for a resume, and needs --dev', async () => {
    const dir = join(tmp, 'averaged')
    const tr = await capture(() => trainCmd(['--train', join(FIX, 'train.pubtator'), '--dev', join(FIX, 'dev.pubtator'), '--out', dir, '--epochs', '2', '--average-last', '2', '--seed', '1', '--threads', '1']))
    expect(tr.code, tr.err).toBe(0)
    const out = JSON.parse(tr.out)
    expect(out.averaged.epochs).toEqual([1, 2])
    expect(tr.err).toMatch(/checkpoint average of epochs 1, 2: devel F1 \d\.\d{4} — (kept|not kept)/)
    expect(out.kept_average_of_epochs).toEqual(out.averaged.kept ? [1, 2] : null)
    expect(JSON.parse(readFileSync(join(dir, 'fastbioner.json'), 'utf8')).source.options['average-last']).toBe('2')
    const noDev = await capture(() => trainCmd(['--train', join(FIX, 'train.pubtator'), '--out', join(tmp, 'averaged-no-dev'), '--average-last', '2']))
    expect(noDev.code).toBe(2)
    expect(noDev.err).toMatch(/--average-last keeps the average only when devel says it is better: give --dev/)
  }, 120_000)

  it('--doc-level trains on windows over whole documents, tags the same way, and a resume keeps it', async () => {
    const doc = join(tmp, 'doc-level')
    const tr = await capture(() => trainCmd(['--train', join(FIX, 'train.pubtator'), '--out', doc, '--doc-level', '--epochs', '1', '--threads', '1']))
    expect(tr.code, tr.err).toBe(0)
    const sentence = join(tmp, 'sentence-level')
    const ts = await capture(() => trainCmd(['--train', join(FIX, 'train.pubtator'), '--out', sentence, '--epochs', '1', '--threads', '1']))
    expect(ts.code, ts.err).toBe(0)
    // One example per document window instead of one per sentence.
    const examples = (out: string) => JSON.parse(out).train_examples as number
    expect(examples(tr.out)).toBeLessThan(examples(ts.out))
    const meta = JSON.parse(readFileSync(join(doc, 'fastbioner.json'), 'utf8'))
    expect(meta.training.sentenceLevel).toBe(false)
    expect(meta.source.options['doc-level']).toBe(true)
    const tagger = await openTagger(doc, { threads: 1 })
    try {
      expect(tagger.windows.sentenceLevel).toBe(false)
    } finally {
      await tagger.dispose()
    }
    // The recorded --doc-level is given back to the word tagger, which takes it.
    const resumed = await capture(() => trainCmd(['--out', doc, '--resume', '--threads', '1']))
    expect(resumed.code, resumed.err).toBe(0)
    // Trained further from --init, it keeps its windows without --doc-level, and records them.
    const further = join(tmp, 'doc-level-further')
    const f = await capture(() => trainCmd(['--train', join(FIX, 'train.pubtator'), '--init', doc, '--out', further, '--max-steps', '1', '--threads', '1']))
    expect(f.code, f.err).toBe(0)
    expect(examples(f.out)).toBe(examples(tr.out))
    const furtherMeta = JSON.parse(readFileSync(join(further, 'fastbioner.json'), 'utf8'))
    expect(furtherMeta.training.sentenceLevel).toBe(false)
    expect(furtherMeta.source.options['doc-level']).toBe(true)
    const fromSentences = await capture(() => trainCmd(['--train', join(FIX, 'train.pubtator'), '--init', sentence, '--out', join(tmp, 'sentence-further'), '--max-steps', '1', '--threads', '1']))
    expect(examples(fromSentences.out)).toBe(examples(ts.out))
  }, 180_000)

  it('loads back every tensor and vocabulary, and refuses a folder whose sizes disagree', () => {
    const m = loadWordTagger(model)
    const copy = join(tmp, 'copy')
    saveWordTagger(copy, m)
    const again = loadWordTagger(copy)
    expect(again.featurizer.words).toEqual(m.featurizer.words)
    expect(again.featurizer.chars).toEqual(m.featurizer.chars)
    expect(again.heads).toEqual({ default: ['O', 'B-Disease', 'I-Disease'] })
    for (const [name, p] of m.params) expect(Array.from(again.params.get(name)!), name).toEqual(Array.from(p))
    const cfg = JSON.parse(readFileSync(join(copy, 'config.json'), 'utf8'))
    writeFileSync(join(copy, 'config.json'), JSON.stringify({ ...cfg, word_vocab_size: cfg.word_vocab_size + 1 }))
    expect(() => loadWordTagger(copy)).toThrow(/words\.txt: \d+ words, config\.json says/)
    writeFileSync(join(copy, 'config.json'), JSON.stringify({ ...cfg, lstm_hidden: 1e9 }))
    expect(() => loadWordTagger(copy)).toThrow(/lstm_hidden must be an integer/)
  })
})
