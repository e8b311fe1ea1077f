import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { initBackend } from '@core/model/backend'
import { loadCheckpoint, saveCheckpoint } from '@core/model/checkpoint'
import { readSafetensors } from '@core/model/safetensors'
import { pretrain } from '@core/pretrain/run'
import type { ElectraScores } from '@core/pretrain/electra'
import { Rng } from '@core/rng'

// Made-up "biomedical" text with a learnable pattern: the word after "gene" is always a code.
const WORDS = ['the', 'patient', 'showed', 'hyperkalemia', 'after', 'treatment', 'and', 'renal', 'failure', 'was', 'seen', 'in', 'mice', 'with', 'tumours']
function corpus(lines: number, seed: number): string {
  const rngState = new Rng(seed)
  const rng = (): number => rngState.next()
  const out: string[] = []
  for (let i = 0; i < lines; i++) {
    const n = 6 + Math.floor(rng() * 10)
    const words = Array.from({ length: n }, () => WORDS[Math.floor(rng() * WORDS.length)])
    words.splice(Math.floor(rng() * n), 0, 'gene', `brca${1 + Math.floor(rng() * 2)}`)
    out.push(words.join(' ') + ' .')
    if (i % 7 === 6) out.push('')
  }
  return out.join('\n') + '\n'
}

const tiny = { preset: 'cpu-tiny' as const, vocabSize: 120, maxLength: 32, batchSize: 8, seed: 3 }

describe('pretrain (masked LM on onnxruntime)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fastbioner-pretrain-run-'))
  const text = join(dir, 'text.txt')
  writeFileSync(text, corpus(400, 1))

  beforeAll(async () => {
    await initBackend()
  })

  it('writes a BertForMaskedLM checkpoint with a tied decoder that loads back and fine-tunes', async () => {
    const out = join(dir, 'run')
    const r = await pretrain({ ...tiny, text: [text], outDir: out, epochs: 2 })
    expect(r.trainer).toMatch(/^onnxruntime/)
    expect(r.steps).toBe(r.plannedSteps)
    expect(r.lastLoss!).toBeLessThan(r.firstLoss!)
    expect(r.heldOut).toHaveLength(2)
    // Held-out masked-LM loss falls and beats a uniform guess over the vocabulary. (Accuracy over
    // the few held-out masked words of this tiny corpus is 0 or 1/8 by chance, too noisy to test.)
    expect(r.heldOut[1].loss).toBeLessThan(r.heldOut[0].loss)
    expect(r.heldOut[1].loss).toBeLessThan(Math.log(tiny.vocabSize))
    expect(r.heldOut[1].accuracy).toBeGreaterThanOrEqual(0)
    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'))
    expect(config.architectures).toEqual(['BertForMaskedLM'])
    const names = [...readSafetensors(join(out, 'model.safetensors')).tensors.keys()]
    expect(names).toEqual(expect.arrayContaining(['cls.predictions.transform.dense.weight', 'cls.predictions.transform.LayerNorm.weight', 'cls.predictions.bias', 'bert.embeddings.word_embeddings.weight']))
    // Tied: the decoder is the word-embedding table, so no separate decoder weight is stored.
    expect(names.some((n) => n.startsWith('cls.predictions.decoder'))).toBe(false)
    // Fine-tuning loads the encoder, drops the LM head and makes a classifier.
    const ck = await loadCheckpoint(out, { heads: { default: ['O', 'B-Gene', 'I-Gene'] } })
    expect(ck.model.heads.get('default')?.labels).toEqual(['O', 'B-Gene', 'I-Gene'])
    expect(ck.notes.join(' ')).toMatch(/cls/)
    ck.model.dispose()
  })

  it('resumes an interrupted run on the same loss curve', async () => {
    const whole = await pretrain({ ...tiny, text: [text], outDir: join(dir, 'whole'), epochs: 2 })
    const out = join(dir, 'interrupted')
    const stopAt = Math.floor(whole.plannedSteps * 0.6)
    const controller = new AbortController()
    const losses: number[] = []
    const first = await pretrain({
      ...tiny,
      text: [text],
      outDir: out,
      epochs: 2,
      saveEverySeconds: 0,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.kind !== 'step') return
        losses.push(p.loss)
        if (p.step === stopAt) controller.abort()
      },
    })
    expect(first.cancelled).toBe(true)
    expect(first.steps).toBe(stopAt)
    const rest: number[] = []
    const second = await pretrain({ text: [], outDir: out, resume: true, onProgress: (p) => p.kind === 'step' && rest.push(p.loss) })
    expect(second.resumedAtStep).toBe(stopAt)
    expect(second.steps).toBe(whole.plannedSteps)
    const curve = [...losses, ...rest]
    expect(curve).toHaveLength(whole.plannedSteps)
    // The same seed, engine and threads replay the same computation; allow float noise only.
    const wholeCurve: number[] = []
    await pretrain({ ...tiny, text: [text], outDir: join(dir, 'whole2'), epochs: 2, onProgress: (p) => p.kind === 'step' && wholeCurve.push(p.loss) })
    for (let i = 0; i < curve.length; i++) expect(curve[i]).toBeCloseTo(wholeCurve[i], 4)
  })

  it('ELECTRA: writes the discriminator as a BERT encoder that fine-tunes; the detector learns; resume replays the curve', async () => {
    const run = (outDir: string, extra: Partial<Parameters<typeof pretrain>[0]> = {}) => pretrain({ ...tiny, text: [text], outDir, epochs: 3, objective: 'electra', ...extra })
    const out = join(dir, 'electra')
    const losses: number[] = []
    const r = await run(out, { onProgress: (p) => p.kind === 'step' && losses.push(p.loss) })
    expect(r.trainer).toMatch(/^onnxruntime/)
    expect(r.heldOut).toHaveLength(3)
    const [first, , last] = r.heldOut as Array<ElectraScores & { epoch: number }>
    // The generator learns its masked LM, and the discriminator's held-out loss falls below that of
    // always answering with the replaced fraction (the best guess that ignores the input).
    expect(last.loss).toBeLessThan(first.loss)
    const q = last.replacedFraction
    expect(q).toBeGreaterThan(0)
    expect(last.replacedTokenLoss).toBeLessThan(-(q * Math.log(q) + (1 - q) * Math.log(1 - q)))
    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'))
    expect(config.architectures).toEqual(['BertForTokenClassification'])
    const names = [...readSafetensors(join(out, 'model.safetensors')).tensors.keys()]
    expect(names).toEqual(expect.arrayContaining(['bert.embeddings.word_embeddings.weight', 'classifiers.rtd.weight']))
    expect(names.some((n) => n.startsWith('cls.') || n.startsWith('generator.'))).toBe(false)
    const ck = await loadCheckpoint(out, { heads: { default: ['O', 'B-Gene', 'I-Gene'] } })
    expect([...ck.model.heads.keys()]).toEqual(['default'])
    ck.model.dispose()

    // Stopped part-way and resumed: the generator comes back from optimizer.safetensors.
    const cut = join(dir, 'electra-cut')
    const controller = new AbortController()
    const stopAt = Math.floor(r.plannedSteps * 0.5)
    const part: number[] = []
    await run(cut, { saveEverySeconds: 0, signal: controller.signal, onProgress: (p) => {
      if (p.kind !== 'step') return
      part.push(p.loss)
      if (p.step === stopAt) controller.abort()
    } })
    expect(readSafetensors(join(cut, 'optimizer.safetensors')).tensors.has('p.generator.bert.embeddings.word_embeddings.weight')).toBe(true)
    const rest: number[] = []
    const resumed = await pretrain({ text: [], outDir: cut, resume: true, onProgress: (p) => p.kind === 'step' && rest.push(p.loss) })
    expect(resumed.steps).toBe(r.plannedSteps)
    const curve = [...part, ...rest]
    expect(curve).toHaveLength(losses.length)
    for (let i = 0; i < curve.length; i++) expect(curve[i]).toBeCloseTo(losses[i], 3)
  })

  it('continues a tagger on text in memory keeping its heads unchanged; such a run cannot be resumed', async () => {
    const from = join(dir, 'run')
    // A tagger: the pretrained encoder with a token-classification head (as train --init makes).
    const tagger = join(dir, 'tagger')
    const ck = await loadCheckpoint(from, { heads: { default: ['O', 'B-Gene', 'I-Gene'] } })
    await saveCheckpoint(tagger, ck.model, ck.vocab, { lowercase: ck.lowercase })
    ck.model.dispose()
    const lines = corpus(60, 2).split('\n').filter((l) => l.trim())
    const out = join(dir, 'adapted')
    const r = await pretrain({ ...tiny, text: [], documents: [{ file: 'memory', line: 0, lines }], init: tagger, keepHeads: true, outDir: out, maxSteps: 2, heldOutEvery: 5 })
    expect(r.steps).toBe(2)
    expect(r.heldOutSequences).toBeGreaterThan(0)
    const before = readSafetensors(join(tagger, 'model.safetensors')).tensors
    const after = readSafetensors(join(out, 'model.safetensors')).tensors
    expect([...after.get('classifier.weight')!.data]).toEqual([...before.get('classifier.weight')!.data])
    expect([...after.get('bert.embeddings.word_embeddings.weight')!.data]).not.toEqual([...before.get('bert.embeddings.word_embeddings.weight')!.data])
    expect(JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')).architectures).toEqual(['BertForTokenClassification', 'BertForMaskedLM'])
    const loaded = await loadCheckpoint(out)
    expect([...loaded.model.heads.keys()]).toEqual(['default'])
    loaded.model.dispose()
    await expect(pretrain({ text: [], outDir: out, resume: true })).rejects.toThrow(/held in memory.*cannot be resumed/)
    // Without keepHeads the heads are dropped: an encoder to fine-tune.
    const bare = join(dir, 'adapted-bare')
    await pretrain({ ...tiny, text: [], documents: [{ file: 'memory', line: 0, lines }], init: tagger, outDir: bare, maxSteps: 1 })
    expect(readSafetensors(join(bare, 'model.safetensors')).tensors.has('classifier.weight')).toBe(false)
  })

  it('refuses bad text and a used folder before writing anything', async () => {
    const empty = join(dir, 'empty.txt')
    writeFileSync(empty, '\n\n')
    const out = join(dir, 'never')
    await expect(pretrain({ ...tiny, text: [empty], outDir: out })).rejects.toThrow(/empty\.txt.*empty/)
    expect(existsSync(out)).toBe(false)
    await expect(pretrain({ ...tiny, text: [text], outDir: join(dir, 'run') })).rejects.toThrow(/not empty/)
  })
})
