// Backend choice: order, forcing through FASTBIONER_BACKEND, errors, idempotence, wasm paths.

import { existsSync } from 'node:fs'
import { join, sep } from 'node:path'
import * as tf from '@tensorflow/tfjs-core'

type BackendModule = typeof import('@core/model/backend')

/** A fresh copy of the module, so initBackend's once-per-process cache starts empty. */
async function freshModule(): Promise<BackendModule> {
  vi.resetModules()
  return import('@core/model/backend')
}

function resolvable(pkg: string): boolean {
  try {
    require.resolve(pkg)
    return true
  } catch {
    return false
  }
}

test('parseBackendName accepts the names and obvious aliases, rejects others', async () => {
  const { parseBackendName } = await freshModule()
  expect(parseBackendName('WASM')).toBe('wasm')
  expect(parseBackendName('tfjs-node')).toBe('tensorflow')
  expect(parseBackendName('gpu')).toBe('tensorflow-gpu')
  expect(() => parseBackendName('webgl')).toThrow(/FASTBIONER_BACKEND=webgl is not a backend; use one of tensorflow-gpu, tensorflow, wasm, cpu/)
})

test('the default chain picks the best loadable backend, logs and reports why', async () => {
  const { initBackend, activeBackend } = await freshModule()
  const lines: string[] = []
  const info = await initBackend({ env: {}, logger: (l) => lines.push(l) })
  const expected = resolvable('@tensorflow/tfjs-node') ? 'tensorflow' : 'wasm'
  if (!resolvable('@tensorflow/tfjs-node-gpu')) {
    expect(info.name).toBe(expected)
    if (expected === 'wasm') {
      expect(info.reason).toMatch(/SIMD/)
      expect(info.reason).toMatch(/tensorflow: package not installed/)
      expect(info.threads).toBeGreaterThanOrEqual(1)
    }
  }
  expect(lines).toEqual([`[fastbioner] tensor backend: ${info.name} — ${info.reason}`])
  expect(activeBackend()).toEqual(info)
  expect(tf.getBackend()).toBe(info.name === 'tensorflow-gpu' ? 'tensorflow' : info.name)
  // Idempotent: the same answer, nothing logged again.
  expect(await initBackend({ env: { FASTBIONER_BACKEND: 'cpu' }, logger: (l) => lines.push(l) })).toBe(info)
  expect(lines).toHaveLength(1)
  // Gradients are registered as part of initialisation.
  expect(tf.getGradient('GatherV2')).toBeDefined()
})

test('FASTBIONER_BACKEND forces a backend', async () => {
  const { initBackend } = await freshModule()
  const lines: string[] = []
  const info = await initBackend({ env: { FASTBIONER_BACKEND: 'cpu' }, logger: (l) => lines.push(l) })
  expect(info.name).toBe('cpu')
  expect(info.reason).toMatch(/^forced by FASTBIONER_BACKEND: /)
  expect(tf.getBackend()).toBe('cpu')
  expect(lines[0]).toMatch(/tensor backend: cpu/)
})

test.skipIf(resolvable('@tensorflow/tfjs-node'))('a forced backend that cannot load is an error, not a fallback', async () => {
  const { initBackend } = await freshModule()
  await expect(initBackend({ env: { FASTBIONER_BACKEND: 'tensorflow' }, logger: () => {} })).rejects.toThrow(
    /backend 'tensorflow' was forced by FASTBIONER_BACKEND but cannot load: .*@tensorflow\/tfjs-node/,
  )
})

test('wasm binaries are located from the installed package', async () => {
  const { wasmBinaryDir } = await freshModule()
  const dir = wasmBinaryDir()
  expect(dir.endsWith(sep)).toBe(true)
  for (const f of ['tfjs-backend-wasm.wasm', 'tfjs-backend-wasm-simd.wasm']) expect(existsSync(join(dir, f))).toBe(true)
})
