// Packaged app: node_modules live in resources/app.asar, and require.resolve answers paths inside
// it. Electron's asar patches cover fs and require() on the thread that installed them, not
// every reader: WebAssembly loaders, worker threads and Node's module.register() hooks (which run
// on their own thread) need real files. electron-builder.config.cjs unpacks those files to
// resources/app.asar.unpacked; this maps a path to that copy.
import { existsSync } from 'node:fs'
import { sep } from 'node:path'

const PACKED = `${sep}app.asar${sep}`
const UNPACKED = `${sep}app.asar.unpacked${sep}`

/**
 * The asar-unpacked copy of `path` when `path` lies inside app.asar and `probe` (default: the
 * path itself) exists in the unpacked tree; otherwise `path` unchanged (development, tests, CLI).
 */
export function preferUnpacked(path: string, probe = path): string {
  if (!path.includes(PACKED)) return path
  const unpacked = path.replace(PACKED, UNPACKED)
  return existsSync(probe.replace(PACKED, UNPACKED)) ? unpacked : path
}
