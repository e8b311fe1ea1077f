// Issue 31 F4: an untrusted model folder's index may name only regular files inside the folder (or,
// for a Hugging Face cache snapshot, inside its models--org--name root); every weight file is read
// by its size, never blocking on a FIFO or reading a device.

import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { useBackend } from '@core/model/backend'
import { loadCheckpoint } from '@core/model/checkpoint'
import { benchmarkOf, CheckpointError, findWeightFiles, inheritedMetadata, readCheckpointInfo } from '@core/model/checkpoint-files'
import { VocabError } from '@core/nlp/vocab'
import { exportCheckpointToOnnx } from '@core/onnx'
import { readSafetensors, SafetensorsError } from '@core/model/safetensors'
import { TORCH_FIXTURES } from './torch-zip'

const root = mkdtempSync(join(tmpdir(), 'fastbioner-ckfiles-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
beforeAll(async () => {
  await useBackend('cpu')
})
let n = 0

/** A tiny BERT folder whose weights are one shard named by model.safetensors.index.json. */
function indexedFolder(dir: string, shardName: string, placeShard = true): string {
  mkdirSync(dir, { recursive: true })
  for (const f of ['config.json', 'vocab.txt', 'tokenizer_config.json']) cpSync(join(TORCH_FIXTURES, 'fp32', f), join(dir, f))
  const names = [...readSafetensors(join(TORCH_FIXTURES, 'expected', 'fp32.safetensors')).tensors.keys()]
  writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ weight_map: Object.fromEntries(names.map((t) => [t, shardName])) }))
  if (placeShard) cpSync(join(TORCH_FIXTURES, 'expected', 'fp32.safetensors'), join(dir, shardName))
  return dir
}

function checkpointError(fn: () => unknown): Error {
  try {
    fn()
  } catch (e) {
    if (e instanceof CheckpointError || e instanceof SafetensorsError) return e
    throw e
  }
  throw new Error('expected a CheckpointError or SafetensorsError')
}

describe('weight_map values must stay inside the model folder', () => {
  test('a shard inside the folder loads', async () => {
    const dir = indexedFolder(join(root, `ok${++n}`), 'model-00001-of-00001.safetensors')
    expect(findWeightFiles(dir)).toEqual([join(dir, 'model-00001-of-00001.safetensors')])
    const ck = await loadCheckpoint(dir)
    ck.model.dispose()
  })

  test('../ outside the folder is refused, naming the index and the value', () => {
    const base = join(root, `up${++n}`)
    const dir = indexedFolder(join(base, 'model'), '../outside.safetensors', false)
    cpSync(join(TORCH_FIXTURES, 'expected', 'fp32.safetensors'), join(base, 'outside.safetensors'))
    const e = checkpointError(() => findWeightFiles(dir))
    expect(e.message).toBe(`${join(dir, 'model.safetensors.index.json')}: weight_map names "../outside.safetensors", which is outside the model folder`)
  })

  test.each(['/dev/zero', '../../../../../../../../dev/urandom'])('%s is refused without being opened', (value) => {
    const dir = indexedFolder(join(root, `dev${++n}`), value, false)
    expect(checkpointError(() => findWeightFiles(dir)).message).toMatch(/weight_map names ".*", which is outside the model folder/)
  })

  test('a symlink in the folder to a file outside it is refused', () => {
    const base = join(root, `link${++n}`)
    const dir = indexedFolder(join(base, 'model'), 'shard.safetensors', false)
    cpSync(join(TORCH_FIXTURES, 'expected', 'fp32.safetensors'), join(base, 'elsewhere.safetensors'))
    symlinkSync(join(base, 'elsewhere.safetensors'), join(dir, 'shard.safetensors'))
    expect(checkpointError(() => findWeightFiles(dir)).message).toMatch(/weight_map names "shard\.safetensors", which resolves to .*elsewhere\.safetensors, outside /)
  })

  test('a shard that is a symlink to /dev/zero is refused before it is read', () => {
    const dir = indexedFolder(join(root, `zero${++n}`), 'shard.safetensors', false)
    symlinkSync('/dev/zero', join(dir, 'shard.safetensors'))
    expect(checkpointError(() => findWeightFiles(dir)).message).toMatch(/resolves to \/dev\/zero, outside/)
  })

  test('a FIFO named by the index is refused at once instead of blocking', () => {
    const dir = indexedFolder(join(root, `fifo${++n}`), 'shard.safetensors', false)
    try {
      execFileSync('mkfifo', [join(dir, 'shard.safetensors')])
    } catch {
      console.log('skip: mkfifo is not available here')
      return
    }
    const [shard] = findWeightFiles(dir)
    expect(checkpointError(() => readSafetensors(shard)).message).toBe(`${shard}: is a FIFO (named pipe), not a regular file`)
  })

  test('a value that is not a string names the index and the tensor', () => {
    const dir = indexedFolder(join(root, `num${++n}`), 'x', false)
    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ weight_map: { 'bert.embeddings.word_embeddings.weight': 7 } }))
    expect(checkpointError(() => findWeightFiles(dir)).message).toBe(`${join(dir, 'model.safetensors.index.json')}: weight_map.bert.embeddings.word_embeddings.weight is 7, not a file name`)
  })

  test('a Hugging Face cache snapshot: symlinks into ../../blobs load, a link out of the repository does not', async () => {
    const repo = join(root, `hub${++n}`, 'models--org--tiny-bert')
    const snap = join(repo, 'snapshots', '0123abcd')
    mkdirSync(join(repo, 'blobs'), { recursive: true })
    mkdirSync(snap, { recursive: true })
    const place = (name: string, from: string, blob: string) => {
      cpSync(from, join(repo, 'blobs', blob))
      symlinkSync(join('..', '..', 'blobs', blob), join(snap, name))
    }
    for (const [i, f] of ['config.json', 'vocab.txt', 'tokenizer_config.json'].entries()) place(f, join(TORCH_FIXTURES, 'fp32', f), `b${i}`)
    place('pytorch_model-00001-of-00002.bin', join(TORCH_FIXTURES, 'sharded', 'pytorch_model-00001-of-00002.bin'), 'b3')
    place('pytorch_model-00002-of-00002.bin', join(TORCH_FIXTURES, 'sharded', 'pytorch_model-00002-of-00002.bin'), 'b4')
    place('pytorch_model.bin.index.json', join(TORCH_FIXTURES, 'sharded', 'pytorch_model.bin.index.json'), 'b5')
    expect(findWeightFiles(snap)).toHaveLength(2)
    const ck = await loadCheckpoint(snap)
    ck.model.dispose()

    // A blob outside models--org--name is not the repository's.
    const outside = join(root, `hub${n}`, 'stray.bin')
    cpSync(join(TORCH_FIXTURES, 'sharded', 'pytorch_model-00002-of-00002.bin'), outside)
    rmSync(join(snap, 'pytorch_model-00002-of-00002.bin'))
    symlinkSync(outside, join(snap, 'pytorch_model-00002-of-00002.bin'))
    expect(checkpointError(() => findWeightFiles(snap)).message).toMatch(/which resolves to .*stray\.bin, outside .*models--org--tiny-bert$/)
  })
})

// Issue 31 F6 through the folder reader: a folder without vocab.txt takes its vocabulary from
// tokenizer.json, whose ids are checked by vocabFromTokenizerJson (one path), the errors naming
// tokenizer.json.
describe('tokenizer.json ids, read by readCheckpointInfo', () => {
  /** A folder with the fp32 fixture's config.json (vocab_size 24) and `vocab` as tokenizer.json's WordPiece vocabulary. */
  function tokenizerFolder(vocab: Record<string, unknown>): string {
    const dir = join(root, `tok${++n}`)
    mkdirSync(dir, { recursive: true })
    for (const f of ['config.json', 'tokenizer_config.json']) cpSync(join(TORCH_FIXTURES, 'fp32', f), join(dir, f))
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify({ model: { type: 'WordPiece', vocab } }))
    return dir
  }
  function vocabError(dir: string): VocabError | CheckpointError {
    try {
      readCheckpointInfo(dir)
    } catch (e) {
      if (e instanceof VocabError || e instanceof CheckpointError) return e
      throw e
    }
    throw new Error('expected readCheckpointInfo to refuse the folder')
  }

  test('ids 0..n-1 give the vocabulary in id order', () => {
    const info = readCheckpointInfo(tokenizerFolder({ '[PAD]': 0, b: 2, '[UNK]': 1 }))
    expect(info.vocab).toEqual(['[PAD]', '[UNK]', 'b'])
    expect(info.notes).toContain('vocab.txt absent: vocabulary taken from tokenizer.json')
  })

  test.each([
    ['a missing id', { a: 0, b: 2 }, /"b" has id 2/],
    ['a negative id', { a: 0, b: 1, c: -1 }, /"c" has id -1/],
    ['a shared id', { a: 0, b: 0 }, /tokens "a" and "b" both have id 0/],
    ['a fractional id', { a: 0, b: 0.5 }, /"b" has id 0\.5/],
  ])('%s is refused naming tokenizer.json and the token', (_what, vocab, message) => {
    const dir = tokenizerFolder(vocab)
    const e = vocabError(dir)
    expect(e.message.startsWith(`${join(dir, 'tokenizer.json')}: `)).toBe(true)
    expect(e.message).toMatch(message)
  })

  test('an id of 2^31-2 is refused at once, allocating nothing for it', () => {
    const dir = tokenizerFolder({ a: 0, b: 2 ** 31 - 2 })
    const t0 = performance.now()
    expect(vocabError(dir).message).toMatch(/"b" has id 2147483646/)
    expect(performance.now() - t0).toBeLessThan(1000)
  })

  test('more tokens than vocab_size names tokenizer.json, where they came from', () => {
    const dir = tokenizerFolder(Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`t${i}`, i])))
    expect(vocabError(dir).message).toBe(`${join(dir, 'tokenizer.json')}: 25 tokens but config.json vocab_size is 24`)
  })
})

// Issue 31 F8: what the fuzz found ending in bare RangeError/TypeError, now refused naming the file.
describe('malformed small files are refused naming the file', () => {
  function fp32Folder(): string {
    const dir = join(root, `f8-${++n}`)
    mkdirSync(dir, { recursive: true })
    for (const f of ['config.json', 'vocab.txt', 'tokenizer_config.json']) cpSync(join(TORCH_FIXTURES, 'fp32', f), join(dir, f))
    cpSync(join(TORCH_FIXTURES, 'expected', 'fp32.safetensors'), join(dir, 'model.safetensors'))
    return dir
  }

  test.each([
    [{ maxLength: 8, stride: '/dev/zero' }, /training\.stride must be null or an integer from 0 to 5, got "\/dev\/zero"/],
    [{ maxLength: 8, stride: 6 }, /training\.stride must be null or an integer from 0 to 5, got 6/],
    [{ maxLength: 11 }, /training\.maxLength must be an integer from 3 to the model's max_position_embeddings 10, got 11/],
    [{ maxLength: 8, sentenceLevel: 'yes' }, /training\.sentenceLevel must be true or false/],
  ])('fastbioner.json training %j', (training, message) => {
    const dir = fp32Folder()
    writeFileSync(join(dir, 'fastbioner.json'), JSON.stringify({ training }))
    const e = checkpointError(() => readCheckpointInfo(dir))
    expect(e.message.startsWith(`${join(dir, 'fastbioner.json')}: `)).toBe(true)
    expect(e.message).toMatch(message)
  })

  test('fastbioner.json window settings in range are kept', () => {
    const dir = fp32Folder()
    writeFileSync(join(dir, 'fastbioner.json'), JSON.stringify({ training: { maxLength: 8, stride: 5, sentenceLevel: false } }))
    expect(readCheckpointInfo(dir).training).toMatchObject({ maxLength: 8, stride: 5, sentenceLevel: false })
  })

  test('model.safetensors linked to /dev/zero: the ONNX export refuses it at once instead of hashing it forever', async () => {
    const dir = fp32Folder()
    rmSync(join(dir, 'model.safetensors'))
    symlinkSync('/dev/zero', join(dir, 'model.safetensors'))
    await expect(exportCheckpointToOnnx(dir, { write: false })).rejects.toThrow(`${join(dir, 'model.safetensors')}: is a device, not a regular file`)
  }, 10_000)

  test('a safetensors header that is not UTF-8', () => {
    const dir = fp32Folder()
    const path = join(dir, 'model.safetensors')
    const header = Buffer.from('{"__metadata__":{"x":"\xff\xfe"}}', 'latin1')
    const len = Buffer.alloc(8)
    len.writeBigUInt64LE(BigInt(header.length))
    writeFileSync(path, Buffer.concat([len, header]))
    expect(checkpointError(() => readSafetensors(path)).message).toBe(`${path}: header is not valid UTF-8 (corrupt file?)`)
  })
})

// fastbioner.json's benchmark is only shown (the Models view), but it comes from a folder the user
// may have been sent: checked and bounded, refused naming the file and the key.
describe('fastbioner.json benchmark', () => {
  const file = '/models/x/fastbioner.json'
  const row = { corpus: 'NCBI-disease', type: 'Disease', f1: 0.837 }
  const ok = { split: 'test', tagging: 'every head merged', scores: [row] }

  test('kept as stated; null when the file states none', () => {
    expect(benchmarkOf({ benchmark: { ...ok, extra: 'dropped' } }, file)).toEqual(ok)
    expect(benchmarkOf({ training: {} }, file)).toBeNull()
    expect(benchmarkOf(undefined, file)).toBeNull()
  })

  test.each([
    [[1, 2], /benchmark must be an object/],
    [{ ...ok, split: 'train' }, /benchmark\.split must be "devel" or "test", got "train"/],
    [{ ...ok, tagging: '' }, /benchmark\.tagging must be a text of 1 to 120 characters/],
    [{ ...ok, tagging: 'x'.repeat(121) }, /benchmark\.tagging must be a text/],
    [{ ...ok, scores: [] }, /benchmark\.scores must be a list of 1 to 32 rows/],
    [{ ...ok, scores: Array.from({ length: 33 }, () => row) }, /benchmark\.scores must be a list of 1 to 32 rows/],
    [{ ...ok, scores: [null] }, /benchmark\.scores\[0\] must be \{corpus, type, f1\}/],
    [{ ...ok, scores: [row, { ...row, type: 7 }] }, /benchmark\.scores\[1\] must be/],
    [{ ...ok, scores: [{ ...row, f1: 83.7 }] }, /benchmark\.scores\[0\]\.f1 must be a number from 0 to 1, got 83\.7/],
    [{ ...ok, scores: [{ ...row, f1: 'NaN' }] }, /benchmark\.scores\[0\]\.f1 must be a number from 0 to 1/],
  ])('%j is refused', (benchmark, message) => {
    const e = checkpointError(() => benchmarkOf({ benchmark }, file))
    expect(e.message.startsWith(`${file}: `)).toBe(true)
    expect(e.message).toMatch(message)
  })
})

describe('fastbioner.json of a model made from another', () => {
  const routers = [{ type: 'Disease', heads: ['disease-ncbi', 'disease'], logPriors: [-1, -0.5], words: {} }]
  const source = { training: { maxLength: 64 }, benchmark: { split: 'test' }, routers }

  test('keeps its records but not its benchmark; its head routers only when every head is kept', () => {
    // Quantized or adapted: the same heads, so the routers still name them.
    expect(inheritedMetadata(source, { sameHeads: true })).toEqual({ training: { maxLength: 64 }, routers })
    // Retrained into one head: a router naming the old heads would make the folder fail to open.
    expect(inheritedMetadata(source, { sameHeads: false })).toEqual({ training: { maxLength: 64 } })
    expect(inheritedMetadata(undefined, { sameHeads: true })).toEqual({})
  })
})
