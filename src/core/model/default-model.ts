// Where the shipped default model is. The installers copy resources/models/default to
// <resources>/models/default (electron-builder extraResources; process.resourcesPath in the
// packaged app, a Node property there, so the core still imports nothing from Electron); from a
// source checkout (the CLI through tsx, the app built by electron-vite into out/) it is the
// repository's resources/models/default, found by walking up from this file.
// FASTBIONER_DEFAULT_MODEL overrides both (tests, a site-wide model).
import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { CONFIG_FILE } from './checkpoint-files'

export const DEFAULT_MODEL_SUBDIR = join('models', 'default')

function isModelDir(dir: string): boolean {
  return existsSync(join(dir, CONFIG_FILE))
}

/** The default model's folder, or null when this installation has none (and why). */
export function findDefaultModel(env: NodeJS.ProcessEnv = process.env): { dir: string | null; searched: string[] } {
  const searched: string[] = []
  const override = env.FASTBIONER_DEFAULT_MODEL?.trim()
  if (override) {
    const dir = resolve(override)
    return { dir: isModelDir(dir) ? dir : null, searched: [dir] }
  }
  const resourcesPath = (process as NodeJS.Process & { resourcesPath?: string }).resourcesPath
  if (resourcesPath) {
    const dir = join(resourcesPath, DEFAULT_MODEL_SUBDIR)
    searched.push(dir)
    if (isModelDir(dir)) return { dir, searched }
  }
  for (let d = __dirname, i = 0; i < 6; i++, d = dirname(d)) {
    const dir = join(d, 'resources', DEFAULT_MODEL_SUBDIR)
    searched.push(dir)
    if (isModelDir(dir)) return { dir, searched }
    if (dirname(d) === d) break
  }
  return { dir: null, searched }
}
