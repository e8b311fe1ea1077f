// Non-finite weights (issue 31 F7): a NaN or an infinity in a model folder's weights is refused
// when they become tensors for a tagger or trainer, naming the file and the tensor, instead of
// loading a model whose every score is NaN.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { useBackend } from '@core/model/backend'
import { BertTokenClassifier, makeBertConfig } from '@core/model/bert'
import { loadCheckpoint, readCrfScores, saveCheckpoint } from '@core/model/checkpoint'
import { nonFiniteProblem } from '@core/model/finite'
import { readSafetensors, writeSafetensors, type TensorToWrite } from '@core/model/safetensors'
import { exportCheckpointToOnnx, OnnxFileError } from '@core/onnx'
import { openTagger } from '@core/tag/open'
import { tag } from '../../../src/host/jobs/tag'

const root = mkdtempSync(join(tmpdir(), 'fastbioner-finite-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
beforeAll(async () => {
  await useBackend('cpu')
})

const config = makeBertConfig({ vocabSize: 12, hiddenSize: 8, numHiddenLayers: 1, numAttentionHeads: 2, intermediateSize: 16, maxPositionEmbeddings: 10 })
const VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...Array.from({ length: 7 }, (_, i) => `t${i}`)]

/** A saved tiny model whose tensor `name` has `value` at element 3 (every element with `all`). */
async function folderWith(name: string, value: number, opts: { crf?: boolean; all?: boolean } = {}): Promise<string> {
  const dir = join(root, `${name}-${value}-${Math.random().toString(36).slice(2)}`)
  const model = BertTokenClassifier.random(config, 1, { default: ['O', 'B-Gene', 'I-Gene'] })
  if (opts.crf) model.addCrf('default')
  await saveCheckpoint(dir, model, VOCAB)
  model.dispose()
  const path = join(dir, 'model.safetensors')
  const tensors = new Map<string, TensorToWrite>()
  for (const [n, t] of readSafetensors(path).tensors) {
    const data = Float32Array.from(t.data as Float32Array)
    if (n === name && opts.all) data.fill(value)
    else if (n === name) data[3] = value
    tensors.set(n, { shape: t.shape, data })
  }
  writeSafetensors(path, tensors)
  return dir
}

describe('non-finite weights', () => {
  it('finds the first NaN or infinity', () => {
    expect(nonFiniteProblem(new Float32Array([0, -1e38, 3.4e38]))).toBeNull()
    expect(nonFiniteProblem(new Float32Array([0, 1, Number.NaN, Infinity]))).toBe('holds NaN at element 2 of 4')
    expect(nonFiniteProblem([1, -Infinity])).toBe('holds -Infinity at element 1 of 2')
  })

  it.each([
    ['bert.encoder.layer.0.attention.self.query.weight', Number.NaN],
    ['classifier.weight', Infinity],
    ['bert.embeddings.word_embeddings.weight', -Infinity],
  ])('refuses %s holding %s, naming the file and the tensor', async (name, value) => {
    const dir = await folderWith(name, value)
    await expect(loadCheckpoint(dir)).rejects.toThrow(
      `${join(dir, 'model.safetensors')}: tensor ${name} holds ${value} at element 3`,
    )
  })

  it("refuses a NaN in a CRF's transitions read for a tagger on onnxruntime", async () => {
    const dir = await folderWith('crf.transitions', Number.NaN, { crf: true })
    expect(() => readCrfScores(dir, { default: ['O', 'B-Gene', 'I-Gene'] })).toThrow(/tensor crf\.transitions holds NaN at element 3/)
  })
})

describe('non-finite weights on onnxruntime (the ONNX exporter reads them)', () => {
  it.each([
    ['bert.encoder.layer.0.output.dense.weight', Number.NaN],
    ['bert.encoder.layer.0.attention.output.LayerNorm.bias', -Infinity],
  ])('the export refuses %s holding %s, naming the file and the tensor', async (name, value) => {
    const dir = await folderWith(name, value)
    const run = exportCheckpointToOnnx(dir, { write: false })
    await expect(run).rejects.toBeInstanceOf(OnnxFileError)
    await expect(run).rejects.toThrow(`${join(dir, 'model.safetensors')}: tensor ${name} holds ${value} at element 3`)
  })

  it('an onnxruntime tagger is not opened on NaN weights: the error names the tensor', async () => {
    const dir = await folderWith('bert.embeddings.LayerNorm.weight', Number.NaN)
    await expect(openTagger(dir, { engine: 'onnx', logger: () => {} })).rejects.toThrow(/tensor bert\.embeddings\.LayerNorm\.weight holds NaN at element 3/)
  })
})

describe('the model host tag job', () => {
  const docs = [{ id: '7', text: 't0 t1 t2 t3', passages: [{ type: 'abstract', offset: 0, length: 11 }], mentions: [] }]
  const ctx = { signal: new AbortController().signal, progress: () => {} }

  it('answers with finite uncertainties for a sound model', async () => {
    const dir = await folderWith('classifier.bias', 0.5)
    const r = await tag({ modelDir: dir, docs }, ctx)
    expect(r.docs).toHaveLength(1)
    expect(Number.isFinite(r.docs[0].uncertainty)).toBe(true)
  })

  it('refuses scores that are not numbers (finite weights that overflow float32) instead of answering "no mentions"', async () => {
    // Every classifier weight 3e38: the logits overflow to ±Infinity, the probabilities are NaN.
    // Answering with no mentions would make the app replace the document's suggestions with none.
    const dir = await folderWith('classifier.weight', 3e38, { all: true })
    await expect(tag({ modelDir: dir, docs }, ctx)).rejects.toMatchObject({
      name: 'TaggingError',
      message: expect.stringMatching(/not finite numbers.*document 7/),
    })
  })
})
