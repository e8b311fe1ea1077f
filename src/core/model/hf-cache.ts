// Models already on this computer in the Hugging Face cache (offline, no network): the hub folder
// huggingface_hub uses — HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub
// (XDG_CACHE_HOME when set) — holds models--org--name/{refs/main, snapshots/<sha>/, blobs/}.
// Every existing candidate folder is scanned, so a model is found whichever variable was set
// when it was downloaded. Only BERT-family folders with weights this app reads are listed.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { bertConfigFromHf, CONFIG_FILE, findWeightFiles, readJsonObject } from './checkpoint-files'

export interface CachedModel {
  /** org/name as on the Hub. */
  repoId: string
  /** The snapshot folder: a model folder every command opens. */
  dir: string
  revision: string
  layers: number
  hidden: number
  /** config.json names BertForTokenClassification: it can tag as it is. */
  tokenClassifier: boolean
  /** Bytes of the weight files. */
  bytes: number
}

/** The hub folders to scan, in huggingface_hub's order of precedence, without duplicates. */
export function hubCacheDirs(env: NodeJS.ProcessEnv = process.env, home = homedir()): string[] {
  const dirs = [
    env.HF_HUB_CACHE,
    env.HF_HOME && join(env.HF_HOME, 'hub'),
    env.XDG_CACHE_HOME && join(env.XDG_CACHE_HOME, 'huggingface', 'hub'),
    join(home, '.cache', 'huggingface', 'hub'),
  ]
  return [...new Set(dirs.filter((d): d is string => !!d).map((d) => resolve(d)))]
}

/** The hub folder downloads go to (huggingface_hub's choice): the first of hubCacheDirs. */
export function hubCacheDir(env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  return hubCacheDirs(env, home)[0]
}

/** A repo id's folder in a hub folder: org/name → models--org--name (huggingface_hub's repo_folder_name). */
export function repoFolderName(repoId: string): string {
  return ['models', ...repoId.split('/')].join('--')
}

/** A full commit id, as snapshots/ names its folders. */
export const COMMIT_RE = /^[0-9a-f]{40}$/

/**
 * The snapshot folder of `revision` (a branch or tag through refs/<revision>, or a commit id)
 * in one hub folder, or null when it is not there. No network: what `get` falls back to offline.
 */
export function snapshotOf(hub: string, repoId: string, revision: string): { commit: string; dir: string } | null {
  const repo = join(hub, repoFolderName(repoId))
  let commit: string | undefined
  if (COMMIT_RE.test(revision)) commit = revision
  else {
    const ref = join(repo, 'refs', ...revision.split('/'))
    if (!existsSync(ref)) return null
    commit = readFileSync(ref, 'utf8').trim()
    if (!COMMIT_RE.test(commit)) return null
  }
  const dir = join(repo, 'snapshots', commit)
  return existsSync(dir) ? { commit, dir } : null
}

/** The snapshot refs/main points at, else the most recently written one. */
function currentSnapshot(repoDir: string): { revision: string; dir: string } | null {
  const snapshots = join(repoDir, 'snapshots')
  if (!existsSync(snapshots)) return null
  const ref = join(repoDir, 'refs', 'main')
  if (existsSync(ref)) {
    const revision = readFileSync(ref, 'utf8').trim()
    if (/^[0-9a-f]{7,64}$/.test(revision) && existsSync(join(snapshots, revision))) return { revision, dir: join(snapshots, revision) }
  }
  const all = readdirSync(snapshots, { withFileTypes: true }).filter((e) => e.isDirectory())
  if (!all.length) return null
  const newest = all.map((e) => ({ revision: e.name, mtime: statSync(join(snapshots, e.name)).mtimeMs })).sort((a, b) => b.mtime - a.mtime)[0]
  return { revision: newest.revision, dir: join(snapshots, newest.revision) }
}

function describeModel(repoId: string, repoDir: string): CachedModel | null {
  const snap = currentSnapshot(repoDir)
  if (!snap || !existsSync(join(snap.dir, CONFIG_FILE))) return null
  try {
    const hf = readJsonObject(join(snap.dir, CONFIG_FILE))
    const config = bertConfigFromHf(hf, join(snap.dir, CONFIG_FILE))
    const weights = findWeightFiles(snap.dir)
    const arch = Array.isArray(hf.architectures) ? hf.architectures : []
    return {
      repoId,
      dir: snap.dir,
      revision: snap.revision,
      layers: config.numHiddenLayers,
      hidden: config.hiddenSize,
      tokenClassifier: arch.includes('BertForTokenClassification'),
      bytes: weights.reduce((a, f) => a + statSync(f).size, 0),
    }
  } catch {
    // Not BERT, no weights we read, or a broken download: not listed.
    return null
  }
}

/** BERT-family models in the Hugging Face cache (or the hub folders given), sorted by repo id (the first hub folder wins a duplicate). */
export function listCachedModels(env: NodeJS.ProcessEnv = process.env, home = homedir(), hubs = hubCacheDirs(env, home)): CachedModel[] {
  const found = new Map<string, CachedModel>()
  for (const hub of hubs) {
    if (!existsSync(hub)) continue
    for (const e of readdirSync(hub, { withFileTypes: true })) {
      // Repo ids never hold '--' (huggingface_hub refuses them), so the folder name splits back exactly;
      // a legacy id without an org (models--bert-base-uncased) has one part.
      const m = /^models--(.+)$/.exec(e.name)
      if (!m || !e.isDirectory()) continue
      const parts = m[1].split('--')
      if (parts.length > 2 || parts.some((p) => !p)) continue
      const repoId = parts.join('/')
      if (found.has(repoId)) continue
      const model = describeModel(repoId, join(hub, e.name))
      if (model) found.set(repoId, model)
    }
  }
  return [...found.values()].sort((a, b) => a.repoId.localeCompare(b.repoId))
}

/**
 * A model argument (--init, --teacher, --model) as a folder: an existing path always wins; else
 * a repo id (org/name) present in the cache gives its snapshot folder; else the argument as it
 * is (the caller's usual "missing" error then names it).
 */
export function resolveModelRef(ref: string, env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  if (existsSync(ref)) return ref
  if (!/^[A-Za-z0-9][\w.-]*\/[\w.-]+$/.test(ref)) return ref
  return listCachedModels(env, home).find((m) => m.repoId === ref)?.dir ?? ref
}
