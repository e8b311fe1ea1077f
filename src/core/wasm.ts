// The project's WebAssembly kernels (./dropout.wat, ./train/adamw.wat, built into base64
// modules by scripts/build-wasm.ts): each compiled once per process and instantiated on a memory
// its caller owns and sizes.

export const WASM_PAGE_BYTES = 65536

const compiled = new Map<string, WebAssembly.Module>()

/** The exports of a kernel (its base64 bytes) instantiated on `memory`, which it imports as env.memory. */
export function instantiateKernel(base64: string, memory: WebAssembly.Memory): WebAssembly.Exports {
  let module = compiled.get(base64)
  if (!module) {
    module = new WebAssembly.Module(Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)))
    compiled.set(base64, module)
  }
  return new WebAssembly.Instance(module, { env: { memory } }).exports
}
