// The AdamW kernel's bytes (src/core/train/adamw-wasm.ts) are generated from adamw.wat by
// scripts/build-wasm.ts; an edit of the .wat without regenerating would ship the old kernel.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { ADAMW_MODULE, ADAMW_WAT, compileWat, wasmModuleSource } from '../../../scripts/build-wasm'

describe('the AdamW WebAssembly kernel', () => {
  it('is what adamw.wat compiles to (npx tsx scripts/build-wasm.ts regenerates it)', async () => {
    expect(readFileSync(ADAMW_MODULE, 'utf8')).toBe(wasmModuleSource(await compileWat(ADAMW_WAT)))
  })
})
