import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  resolve: {
    alias: {
      '@shared': resolve(import.meta.dirname, 'src/shared'),
      '@core': resolve(import.meta.dirname, 'src/core'),
    },
  },
  test: {
    globals: true,
    // Our ONNX exports of the test models go to a temporary cache, not the user's (core/onnx/graph-cache.ts).
    env: { FASTBIONER_ONNX_CACHE: join(tmpdir(), 'fastbioner-test-onnx-cache') },
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: the model tests are CPU bound and the e2e tests start a browser.
    maxWorkers: 2,
    fileParallelism: true,
  },
})
