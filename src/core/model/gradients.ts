// Registers tfjs-core's gradient functions.
//
// tfjs-core's Node entry (dist/tf-core.node.js) registers no gradients: the umbrella package
// @tensorflow/tfjs imports '@tensorflow/tfjs-core/dist/register_all_gradients' for that, and we
// do not depend on the umbrella. Without it every tf.grad / optimizer.minimize fails with
// "Cannot compute gradient: gradient function not found for <Kernel>".
//
// That file is ES-module source written for bundlers: extensionless relative imports
// ('./gradients/Abs_grad') and a file/directory name clash ('./gradients'), in a package that is
// not "type": "module". Plain Node cannot import it, and the Electron main bundle keeps
// dependencies external, so we import it at run time through a small module.register() resolve
// hook that adds '.js' (or '/index.js') for relative imports inside tfjs-core/dist. (vitest and
// tsx resolve such imports themselves; the hook is harmless there.)
//
// This loads a second, ESM copy of the op code that the gradient functions call. Both copies use
// one engine and one kernel/gradient registry (tfjs keeps them on globalThis) and tfjs'
// Tensor/Variable instanceof checks are structural, so mixing them is safe. When the umbrella is
// already loaded (tfjs-node brings it) the gradients are there and nothing is imported.

import { createRequire, register } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import * as tf from '@tensorflow/tfjs-core'
import { preferUnpacked } from '../fs/asar'

const HOOKS = `
const IN_CORE = /\\/@tensorflow\\/tfjs-core\\/dist\\//;
export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (err) {
    if (IN_CORE.test(context.parentURL || '') && /^\\.\\.?\\//.test(specifier) && !/\\.[cm]?js$/.test(specifier)) {
      for (const suffix of ['.js', '/index.js']) {
        try { return await nextResolve(specifier + suffix, context); } catch {}
      }
    }
    throw err;
  }
}
export async function load(url, context, nextLoad) {
  // The ESM sources under dist/ (not the CommonJS bundles tf-core*.js) are modules.
  if (IN_CORE.test(url) && /\\.js$/.test(url) && !/\\/dist\\/tf-core[^/]*\\.js$/.test(url)) {
    return nextLoad(url, { ...context, format: 'module' });
  }
  return nextLoad(url, context);
}
`

function nodeRequire(): NodeRequire {
  if (typeof require === 'function') return require
  if (typeof __filename === 'string') return createRequire(__filename)
  return createRequire(pathToFileURL(join(process.cwd(), 'index.js')).href)
}

/** True when the gradients BERT training needs are registered. */
export function gradientsRegistered(): boolean {
  return ['GatherV2', 'BatchMatMul', 'Softmax', 'Reshape', 'Transpose', 'Multiply', 'Add'].every((k) => tf.getGradient(k) != null)
}

let loading: Promise<void> | null = null
// Process-wide, like the hook itself (a reloaded copy of this module must not register twice).
const shared = globalThis as unknown as { __fastbionerGradHook?: boolean }

/** Registers all tfjs-core gradients once per process. */
export function ensureGradients(): Promise<void> {
  if (gradientsRegistered()) return Promise.resolve()
  loading ??= (async () => {
    // Packaged app: the unpacked copy. The resolve hook runs on Node's loader-hooks thread,
    // where paths inside app.asar do not exist; the sources (and the packages they import,
    // long and seedrandom) are asar-unpacked for this (electron-builder.config.cjs).
    const file = preferUnpacked(nodeRequire().resolve('@tensorflow/tfjs-core/dist/register_all_gradients.js'))
    if (!shared.__fastbionerGradHook) {
      register(`data:text/javascript,${encodeURIComponent(HOOKS)}`)
      shared.__fastbionerGradHook = true
    }
    await import(/* @vite-ignore */ pathToFileURL(file).href)
    if (!gradientsRegistered()) throw new Error(`${file} loaded but registered no gradients into this @tensorflow/tfjs-core ${tf.version_core}`)
  })()
  loading.catch(() => {
    loading = null
  })
  return loading
}
