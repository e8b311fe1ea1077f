// The WebAssembly kernels' bytes (src/core/train/adamw-wasm.ts, src/core/dropout-wasm.ts) are
// generated from their .wat sources by scripts/build-wasm.ts; an edit of a .wat without
// regenerating would ship the old kernel.
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { describe, expect, it } from 'vitest'
import { compileWat, WASM_KERNELS, wasmModuleSource } from '../../scripts/build-wasm'

describe('the WebAssembly kernels', () => {
  for (const k of WASM_KERNELS) {
    it(`${basename(k.module)} is what ${basename(k.wat)} compiles to (npx tsx scripts/build-wasm.ts regenerates it)`, async () => {
      expect(readFileSync(k.module, 'utf8')).toBe(wasmModuleSource(k, await compileWat(k.wat)))
    })
  }
})
