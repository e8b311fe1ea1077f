// fastbioner convert-model: pytorch_model.bin (single or sharded) → model.safetensors with every
// tensor's bytes and dtype kept; refusals write nothing.

import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { run as convertCmd } from '../../../src/cli/commands/convert-model'
import { findWeightFiles } from '@core/model/checkpoint-files'
import { SafetensorsReader } from '@core/model/safetensors'
import { capture } from '../cli/capture'
import { TORCH_FIXTURES } from './torch-zip'

const root = mkdtempSync(join(tmpdir(), 'fastbioner-convert-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

function copyOf(variant: string): string {
  const dir = join(root, `${variant}-${Math.random().toString(36).slice(2, 8)}`)
  cpSync(join(TORCH_FIXTURES, variant), dir, { recursive: true })
  return dir
}

test.each([
  ['sharded', 'fp32'],
  ['bf16', 'bf16'],
  ['fp16', 'fp16'],
])('%s: model.safetensors holds every tensor as stored, and is what later loads read', async (variant, expected) => {
  const dir = copyOf(variant)
  const r = await capture(() => convertCmd(['--model', dir]))
  expect(r.code).toBe(0)
  const line = JSON.parse(r.out)
  expect(line).toMatchObject({ to: join(dir, 'model.safetensors'), tensors: 43 })
  expect(r.err).toMatch(/wrote .*model\.safetensors: 43 tensors/)
  expect(findWeightFiles(dir)).toEqual([join(dir, 'model.safetensors')])
  const got = SafetensorsReader.open(join(dir, 'model.safetensors'))
  const want = SafetensorsReader.open(join(TORCH_FIXTURES, 'expected', `${expected}.safetensors`))
  expect(got.names().sort()).toEqual(want.names().sort())
  for (const name of want.names()) {
    const a = got.raw(name)
    const b = want.raw(name)
    expect([name, a.dtype, a.shape]).toEqual([name, b.dtype, b.shape])
    expect(Buffer.from(a.bytes).equals(Buffer.from(b.bytes)), name).toBe(true)
  }
  // The PyTorch files stay; no temporary file is left.
  expect(readdirSync(dir).filter((f) => f.startsWith('.'))).toEqual([])
  expect(readdirSync(dir).some((f) => f.endsWith('.bin'))).toBe(true)

  const again = await capture(() => convertCmd(['--model', dir]))
  expect(again.code).toBe(1)
  expect(again.err).toMatch(/model\.safetensors: the folder's weights are already safetensors; nothing to convert/)
})

test('a pickle with a forbidden global is refused and nothing is written', async () => {
  const dir = join(root, 'evil')
  mkdirSync(dir)
  for (const f of ['config.json', 'vocab.txt']) cpSync(join(TORCH_FIXTURES, 'fp32', f), join(dir, f))
  cpSync(join(TORCH_FIXTURES, 'evil.bin'), join(dir, 'pytorch_model.bin'))
  const r = await capture(() => convertCmd(['--model', dir]))
  expect(r.code).toBe(1)
  expect(r.err).toContain(`${join(dir, 'pytorch_model.bin')}: evil/data.pkl: global posix.system is not allowed`)
  expect(existsSync(join(dir, 'model.safetensors'))).toBe(false)
})

test('--model is required', async () => {
  const r = await capture(() => convertCmd([]))
  expect(r.code).toBe(2)
  expect(r.err).toMatch(/--model is required/)
})
