import { resolve } from 'node:path'
import { defineConfig } from 'electron-vite'
import react from '@vitejs/plugin-react'

const alias = {
  '@shared': resolve(__dirname, 'src/shared'),
  '@core': resolve(__dirname, 'src/core'),
}

// Native and optional ML modules must stay outside the bundle: they are resolved at run time
// from node_modules (asar-unpacked in the packaged app) and some may be absent altogether.
const nodeExternals = [
  'libsql',
  'onnxruntime-node',
  '@tensorflow/tfjs-node',
  '@tensorflow/tfjs-node-gpu',
  '@tensorflow/tfjs-backend-wasm',
  '@tensorflow/tfjs-backend-cpu',
  '@tensorflow/tfjs-core',
]

export default defineConfig({
  main: {
    resolve: { alias },
    build: {
      rollupOptions: {
        external: nodeExternals,
        input: {
          index: resolve(__dirname, 'src/main/index.ts'),
          // The model host process (utilityProcess.fork of out/main/modelHost.js).
          modelHost: resolve(__dirname, 'src/host/entry.ts'),
        },
      },
    },
  },
  preload: {
    resolve: { alias },
    build: {
      // A sandboxed preload can require('electron') and a few Node built-ins, nothing from
      // node_modules: bundle every dependency (zod, via @shared/ipc) into the one file.
      externalizeDeps: false,
      rollupOptions: {
        output: { format: 'cjs' },
      },
    },
  },
  renderer: {
    resolve: { alias },
    plugins: [react()],
    build: { minify: true },
  },
})
