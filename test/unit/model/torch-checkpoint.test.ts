// pytorch_model.bin, weights only: the fixtures are real torch.save output (test/fixtures/torch/make.py),
// compared tensor by tensor with the safetensors copies the same script wrote; hostile pickles and
// damaged archives are refused with the file's name.

import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as tf from '@tensorflow/tfjs-core'
import { useBackend } from '@core/model/backend'
import { loadCheckpoint } from '@core/model/checkpoint'
import { findWeightFiles } from '@core/model/checkpoint-files'
import { openWeightFile, readSafetensors, readSafetensorsNames, SafetensorsError, SafetensorsReader } from '@core/model/safetensors'
import { TorchCheckpointReader } from '@core/model/torch-checkpoint'
import { readCheckpointFiles, readCheckpointWeights } from '@core/onnx/checkpoint'
import { fixtureBytes, makeZip, pickleWith, TORCH_FIXTURES, torchZip, zipEntries } from './torch-zip'

const root = mkdtempSync(join(tmpdir(), 'fastbioner-torch-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
beforeAll(async () => {
  await useBackend('cpu')
})

function refusal(fn: () => unknown): SafetensorsError {
  try {
    fn()
  } catch (e) {
    if (e instanceof SafetensorsError) return e
    throw e
  }
  throw new Error('expected a SafetensorsError, nothing was thrown')
}

const open = (buf: Uint8Array, file = 'x/pytorch_model.bin') => new TorchCheckpointReader(buf, file)

describe('torch.save fixtures equal their safetensors copies', () => {
  const cases: Array<[string, string[], string]> = [
    ['fp32', ['fp32/pytorch_model.bin'], 'fp32'],
    ['fp16', ['fp16/pytorch_model.bin'], 'fp16'],
    ['bf16', ['bf16/pytorch_model.bin'], 'bf16'],
    ['deflated zip', ['deflated/pytorch_model.bin'], 'fp32'],
    ['sharded', ['sharded/pytorch_model-00001-of-00002.bin', 'sharded/pytorch_model-00002-of-00002.bin'], 'fp32'],
  ]
  test.each(cases)('%s: every tensor, byte for byte, in its stored dtype', (_, files, expected) => {
    const want = SafetensorsReader.open(join(TORCH_FIXTURES, 'expected', `${expected}.safetensors`))
    const seen = new Set<string>()
    for (const f of files) {
      const r = openWeightFile(join(TORCH_FIXTURES, f))
      for (const name of r.names()) {
        seen.add(name)
        const a = r.raw(name)
        const b = want.raw(name)
        expect([name, a.dtype, a.shape]).toEqual([name, b.dtype, b.shape])
        expect(Buffer.from(a.bytes).equals(Buffer.from(b.bytes)), name).toBe(true)
        // and decoded the same way
        expect(Array.from(r.read(name).data)).toEqual(Array.from(want.read(name).data))
      }
    }
    expect([...seen].sort()).toEqual(want.names().sort())
  })

  test('views: tied weights, fused q/k/v slices, a transpose and a column slice come out right', () => {
    const r = open(fixtureBytes('fp32/pytorch_model.bin'))
    const word = r.read('bert.embeddings.word_embeddings.weight')
    const tied = r.read('cls.predictions.decoder.weight')
    expect(Buffer.from(tied.bytes).equals(Buffer.from(word.bytes))).toBe(true)
    // The transposed intermediate weight is gathered, not a slice of the storage.
    const inter = r.read('bert.encoder.layer.0.intermediate.dense.weight')
    expect(inter.shape).toEqual([16, 8])
    const q = new Float32Array(Uint8Array.from(r.read('bert.encoder.layer.0.attention.self.query.weight').bytes).buffer)
    const k = new Float32Array(Uint8Array.from(r.read('bert.encoder.layer.0.attention.self.key.weight').bytes).buffer)
    expect(q.length).toBe(64)
    expect(Array.from(q)).not.toEqual(Array.from(k))
    expect(r.info('bert.embeddings.position_ids')).toEqual({ dtype: 'I64', shape: [1, 10] })
    expect(Array.from(readSafetensors(join(TORCH_FIXTURES, 'fp32/pytorch_model.bin')).tensors.get('bert.embeddings.position_ids')!.data)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
  })
})

describe('model folders with pytorch_model.bin load wherever a folder loads', () => {
  function logits(model: Awaited<ReturnType<typeof loadCheckpoint>>['model']): number[] {
    return tf.tidy(() => {
      const out = model.forward({ inputIds: tf.tensor2d([[2, 5, 6, 7, 3]], [1, 5], 'int32'), attentionMask: tf.tensor2d([[1, 1, 1, 1, 1]], [1, 5], 'int32') })
      return Array.from(out.logits.default.dataSync())
    })
  }

  test.each(['fp32', 'fp16', 'bf16', 'sharded'])('%s: loadCheckpoint gives the same model as the safetensors copy', async (variant) => {
    const copy = join(root, `copy-${variant}`)
    cpSync(join(TORCH_FIXTURES, variant), copy, { recursive: true })
    for (const f of ['pytorch_model.bin', 'pytorch_model.bin.index.json', 'pytorch_model-00001-of-00002.bin', 'pytorch_model-00002-of-00002.bin']) rmSync(join(copy, f), { force: true })
    cpSync(join(TORCH_FIXTURES, 'expected', `${variant === 'sharded' ? 'fp32' : variant}.safetensors`), join(copy, 'model.safetensors'))

    const fromBin = await loadCheckpoint(join(TORCH_FIXTURES, variant))
    const fromSt = await loadCheckpoint(copy)
    try {
      expect(findWeightFiles(join(TORCH_FIXTURES, variant)).every((f) => f.endsWith('.bin'))).toBe(true)
      expect(fromBin.model.heads.get('default')?.labels).toEqual(['O', 'B-Disease', 'I-Disease'])
      expect(logits(fromBin.model)).toEqual(logits(fromSt.model))
    } finally {
      fromBin.model.dispose()
      fromSt.model.dispose()
    }
  })

  test('the ONNX exporter and the host read the same tensors', () => {
    const files = readCheckpointFiles(join(TORCH_FIXTURES, 'sharded'))
    expect(files.weightPaths.map((p) => p.split('/').pop())).toEqual(['pytorch_model-00001-of-00002.bin', 'pytorch_model-00002-of-00002.bin'])
    const w = readCheckpointWeights(files.weightPaths)
    const want = readSafetensors(join(TORCH_FIXTURES, 'expected', 'fp32.safetensors')).tensors
    expect(Array.from(w.get('classifier.weight')!.data)).toEqual(Array.from(want.get('classifier.weight')!.data))
    expect(readSafetensorsNames(join(TORCH_FIXTURES, 'fp32/pytorch_model.bin'))).toContain('classifier.bias')
  })
})

describe('refusals', () => {
  test('a pickle calling os.system is refused, naming the global, and nothing runs', () => {
    const e = refusal(() => readSafetensors(join(TORCH_FIXTURES, 'evil.bin')))
    expect(e.message).toContain(join(TORCH_FIXTURES, 'evil.bin'))
    expect(e.message).toMatch(/global posix\.system is not allowed/)
  })

  test.each([
    ['builtins.eval', Buffer.from('cbuiltins\neval\n0')],
    ['torch.load', Buffer.from('ctorch\nload\n0')],
    ['numpy.core.multiarray._reconstruct', Buffer.from('cnumpy.core.multiarray\n_reconstruct\n0')],
  ])('GLOBAL %s is refused by name', (name, tail) => {
    expect(refusal(() => open(torchZip(pickleWith(tail)))).message).toContain(`global ${name} is not allowed`)
  })

  test('STACK_GLOBAL is held to the same list', () => {
    const tail = Buffer.concat([Buffer.from([0x8c, 8]), Buffer.from('builtins'), Buffer.from([0x8c, 4]), Buffer.from('exec'), Buffer.from([0x93, 0x30])])
    expect(refusal(() => open(torchZip(pickleWith(tail)))).message).toContain('global builtins.exec is not allowed')
  })

  test('an allowed global that is not a callable is not called', () => {
    // torch.FloatStorage(()) : a storage type may appear in a persistent id, never be called.
    expect(refusal(() => open(torchZip(pickleWith(Buffer.from('X\x01\x00\x00\x00vctorch\nFloatStorage\n)R'))))).message).toContain('calling torch.FloatStorage is not allowed')
  })

  test.each([
    ['NEWOBJ', 0x81],
    ['INST', 0x69],
    ['OBJ', 0x6f],
    ['EXT1', 0x82],
    ['PERSID (text)', 0x50],
  ])('opcode %s is outside the allow-list', (_, op) => {
    expect(refusal(() => open(torchZip(pickleWith(Buffer.from([op]))))).message).toMatch(new RegExp(`opcode 0x${op.toString(16)} .*is not allowed`))
  })

  test('the legacy (pre-1.6) format is refused with what to do', () => {
    expect(refusal(() => readSafetensors(join(TORCH_FIXTURES, 'legacy.bin'))).message).toMatch(/legacy \(pre-1\.6\) checkpoint format is not supported; re-save it/)
  })

  test('a wrong CRC names the record', () => {
    const buf = Buffer.from(fixtureBytes('fp32/pytorch_model.bin'))
    const entries = zipEntries(buf)
    const [, storage] = entries.find(([n]) => n.endsWith('/data/3'))!
    // Flip one byte of the storage inside the file: the directory's CRC no longer matches.
    const at = buf.indexOf(Buffer.from(storage))
    buf[at + 5] ^= 0xff
    const r = open(buf)
    expect(refusal(() => r.names().forEach((n) => r.read(n))).message).toMatch(/data\/3: CRC-32 mismatch/)
  })

  test('a storage record shorter than its persistent id says is refused', () => {
    expect(refusal(() => open(torchZip(pickleWith(), { '0': new Uint8Array(4) }))).message).toMatch(/storage 0: record holds 4 bytes, FloatStorage of 2 elements needs 8/)
  })

  test('huge sizes are refused before anything is allocated', () => {
    // A string length of 4 GB in a 100-byte pickle.
    const big = Buffer.concat([Buffer.from([0x58]), Buffer.from([0xf0, 0xff, 0xff, 0xff]), Buffer.from('0')])
    expect(refusal(() => open(torchZip(pickleWith(big)))).message).toMatch(/truncated: 4294967280 more bytes needed/)
    // A deflated record that claims 4 GB from a few bytes.
    const zip = makeZip([['archive/data.pkl', pickleWith()]])
    const cd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]))
    zip.writeUInt16LE(8, cd + 10)
    zip.writeUInt32LE(0xfffffff0, cd + 24)
    expect(refusal(() => open(zip)).message).toMatch(/more than deflate can produce/)
    // A tensor whose size exceeds its storage.
    const huge = pickleWith().toString('latin1').replace('K\x02\x85K\x01\x85', 'J\x00\x00\x00\x40\x85K\x01\x85')
    expect(refusal(() => open(torchZip(Buffer.from(huge, 'latin1')))).message).toMatch(/reaches element \d+ of storage 0, which has 2/)
  })

  test('a truncated file is a clean error', () => {
    const buf = fixtureBytes('fp16/pytorch_model.bin')
    expect(refusal(() => open(buf.subarray(0, buf.length - 30))).message).toMatch(/end-of-central-directory/)
  })

  test('a device as pytorch_model.bin is refused without reading it', () => {
    const dir = join(root, 'device')
    cpSync(join(TORCH_FIXTURES, 'fp32'), dir, { recursive: true })
    rmSync(join(dir, 'pytorch_model.bin'))
    symlinkSync('/dev/zero', join(dir, 'pytorch_model.bin'))
    expect(refusal(() => readSafetensors(findWeightFiles(dir)[0])).message).toMatch(/pytorch_model\.bin: is a device, not a regular file/)
  })
})
