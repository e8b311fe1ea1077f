// `fastbioner get`: a BERT token classifier's files from the Hugging Face Hub into the standard
// cache layout huggingface_hub writes, so that transformers and this app share them:
//   <hub>/models--org--name/blobs/<etag>                 the bytes (etag: sha256 for LFS files, git blob id otherwise)
//   <hub>/models--org--name/snapshots/<commit>/<file>    → ../../blobs/<etag> (a copy where symlinks cannot be made)
//   <hub>/models--org--name/refs/<revision>              the commit a branch or tag named
// One model-info call (/api/models/<id>/revision/<rev>?blobs=true) gives the commit, the files, their
// sizes and LFS sha256 before anything is downloaded; each file comes from /<id>/resolve/<commit>/<file>
// into blobs/<etag>.incomplete, resumed with a Range request after a dropped connection (in this run
// or the next), checked against its sha256 (git blob id for small files) and only then renamed into
// place. Without a network, a revision already in the cache is found there.

import { createHash, type Hash } from 'node:crypto'
import { copyFileSync, createReadStream, existsSync, lstatSync, mkdirSync, realpathSync, renameSync, rmSync, statfsSync, statSync, symlinkSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { dirname, join, relative, resolve } from 'node:path'
import { homedir } from 'node:os'
import { isHubRepoId, isHubRevision } from '@shared/ipc'
import { writeFileAtomic } from '../fs/atomic'
import { CONFIG_FILE, findWeightFiles, TORCH_WEIGHTS_FILE, TORCH_WEIGHTS_INDEX_FILE, VOCAB_FILE, WEIGHTS_FILE, WEIGHTS_INDEX_FILE } from '../model/checkpoint-files'
import { COMMIT_RE, hubCacheDir, hubCacheDirs, repoFolderName, snapshotOf } from '../model/hf-cache'
import { errorFor, getFollowing, HubError, isNetworkError, undiciFetch, type HubFetch } from './http'

export { HubError } from './http'

export const DEFAULT_ENDPOINT = 'https://huggingface.co'

/** The tokenizer files a BERT token classifier may have (vocab.txt or tokenizer.json is needed). */
const TOKENIZER_FILES = [VOCAB_FILE, 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json']
/** transformers' shard names for each index (save_pretrained's naming). */
const SHARDS: Record<string, RegExp> = {
  [WEIGHTS_INDEX_FILE]: /^model-\d{5}-of-\d{5}\.safetensors$/,
  [TORCH_WEIGHTS_INDEX_FILE]: /^pytorch_model-\d{5}-of-\d{5}\.bin$/,
}
const ETAG_RE = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/
/** The model info of a large repository is a few hundred KB; more is not a model info. */
const MAX_INFO_BYTES = 32 * 1024 * 1024

export interface HubFile {
  name: string
  size: number
  /** The blob's name: the LFS sha256, or the git blob id of a small file. */
  etag: string
  lfs: boolean
  /** Already in blobs/ (nothing to download), partly there (.incomplete, resumed), or not. */
  state: 'cached' | 'partial' | 'missing'
  partialBytes: number
}

export interface HubPlan {
  repoId: string
  revision: string
  commit: string
  endpoint: string
  /** The hub folder written to. */
  hub: string
  files: HubFile[]
  totalBytes: number
  /** What remains to download (partial files counted for their missing part). */
  downloadBytes: number
}

export interface HubProgress {
  file: string
  fileBytes: number
  fileSize: number
  /** Bytes of the whole plan present so far (cached and resumed parts included). */
  doneBytes: number
  totalBytes: number
}

export interface GetModelOptions {
  repoId: string
  /** Branch, tag or commit (default main). */
  revision?: string
  /** The hub folder to write (default: HF_HUB_CACHE, HF_HOME/hub, ~/.cache/huggingface/hub). */
  cacheDir?: string
  /** Also copy the files into this plain folder. */
  out?: string
  env?: NodeJS.ProcessEnv
  home?: string
  /** The transport (default undici with the environment's proxy). */
  fetch?: HubFetch
  signal?: AbortSignal
  /** Plan only: sizes and what is cached, nothing written. */
  dryRun?: boolean
  /** Resumes after a dropped connection within this run, per file (default 3). */
  retries?: number
  /** false: copy blobs into the snapshot instead of linking (default: link, copy where that fails). */
  symlinks?: boolean
  /** Called once the plan is known, before any byte is downloaded; may throw to stop. */
  onPlan?(plan: HubPlan): void
  onProgress?(p: HubProgress): void
  onNote?(line: string): void
}

export interface GetModelResult {
  repoId: string
  revision: string
  commit: string
  /** The snapshot folder: a model folder every command opens. */
  dir: string
  out?: string
  files: string[]
  downloadedBytes: number
  /** Served from the cache without the network (HF_HUB_OFFLINE, or the Hub unreachable). */
  offline: boolean
  /** How the snapshot's files point at the blobs. */
  linked: 'symlink' | 'copy' | 'none'
  plan?: HubPlan
}

/** org/name (or a legacy name without org), as huggingface_hub's validate_repo_id allows. */
export function checkRepoId(repoId: string): void {
  if (!isHubRepoId(repoId)) {
    throw new HubError('usage', `'${repoId}' is not a Hub repo id (org/name, e.g. dmis-lab/biobert-base-cased-v1.2)`)
  }
}

function checkRevision(revision: string): void {
  if (!isHubRevision(revision)) throw new HubError('usage', `'${revision}' is not a revision (branch, tag or commit)`)
}

function tokenOf(env: NodeJS.ProcessEnv): string | undefined {
  const t = (env.HF_TOKEN ?? env.HUGGING_FACE_HUB_TOKEN)?.trim()
  return t ? t : undefined
}

/** huggingface_hub's _normalize_etag: W/"x" or "x" → x. */
export function normalizeEtag(etag: string | undefined): string | undefined {
  return etag?.replace(/^W\//, '').replace(/^"|"$/g, '')
}

interface Sibling {
  rfilename: string
  size?: number
  blobId?: string
  lfs?: { sha256?: string; size?: number }
}

/**
 * The files a BERT token classifier needs, from the repository's list: config.json, the tokenizer
 * files present, and one set of weights — model.safetensors, else its index and shards, else
 * pytorch_model.bin, else its index and shards. Other frameworks' weights only: refused.
 */
export function pickFiles(repoId: string, siblings: Sibling[]): Sibling[] {
  const byName = new Map(siblings.map((s) => [s.rfilename, s]))
  if (!byName.has(CONFIG_FILE)) throw new HubError('not-a-model', `${repoId} has no config.json: not a transformers model`)
  if (!byName.has(VOCAB_FILE) && !byName.has('tokenizer.json')) throw new HubError('not-a-model', `${repoId} has neither vocab.txt nor tokenizer.json: no WordPiece vocabulary to tokenize with`)
  let weights: string[] | undefined
  for (const w of [WEIGHTS_FILE, WEIGHTS_INDEX_FILE, TORCH_WEIGHTS_FILE, TORCH_WEIGHTS_INDEX_FILE]) {
    if (!byName.has(w)) continue
    const shard = SHARDS[w]
    weights = shard ? [w, ...siblings.map((s) => s.rfilename).filter((n) => shard.test(n)).sort()] : [w]
    break
  }
  if (!weights) {
    const names = siblings.map((s) => s.rfilename).filter((n) => /\.(h5|msgpack|ckpt|onnx|bin|safetensors)$/.test(n))
    throw new HubError('not-a-model', `${repoId} has no model.safetensors or pytorch_model.bin${names.length ? ` (weights: ${names.join(', ')})` : ''}; FastBioNER reads only those`)
  }
  return [CONFIG_FILE, ...TOKENIZER_FILES, ...weights].filter((n) => byName.has(n)).map((n) => byName.get(n)!)
}

function hubFileOf(repoId: string, s: Sibling, blobs: string): HubFile {
  const lfs = s.lfs != null
  const etag = lfs ? s.lfs!.sha256 : s.blobId
  const size = lfs ? s.lfs!.size : s.size
  if (typeof etag !== 'string' || !ETAG_RE.test(etag)) throw new HubError('server', `${repoId}: the Hub's file list gives ${s.rfilename} no usable ${lfs ? 'sha256' : 'blob id'} (${JSON.stringify(etag)})`)
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) throw new HubError('server', `${repoId}: the Hub's file list gives ${s.rfilename} no size; the model info was asked with ?blobs=true`)
  const blob = join(blobs, etag)
  if (existsSync(blob) && statSync(blob).size === size) return { name: s.rfilename, size, etag, lfs, state: 'cached', partialBytes: 0 }
  const part = `${blob}.incomplete`
  const partialBytes = existsSync(part) ? Math.min(statSync(part).size, size) : 0
  return { name: s.rfilename, size, etag, lfs, state: partialBytes > 0 ? 'partial' : 'missing', partialBytes }
}

/** Free bytes for a new file under `path` (its nearest existing ancestor's file system). */
export function freeBytes(path: string): number {
  const s = statfsSync(nearest(path))
  return s.bavail * s.bsize
}

/** Bytes for people: kB below a megabyte, MB below a gigabyte, else GB (decimal, as the Hub shows sizes). */
export function formatBytes(n: number): string {
  if (n < 1e6) return `${(n / 1e3).toFixed(1)} kB`
  if (n < 1e9) return `${(n / 1e6).toFixed(1)} MB`
  return `${(n / 1e9).toFixed(2)} GB`
}
const mb = formatBytes

/** The snapshot file points at its blob: a relative symlink as huggingface_hub makes, else a copy. */
function linkBlob(blob: string, pointer: string, symlinks: boolean): 'symlink' | 'copy' {
  rmSync(pointer, { force: true })
  if (symlinks) {
    try {
      symlinkSync(relative(dirname(pointer), blob), pointer)
      return 'symlink'
    } catch (e) {
      // Windows without the symlink right, some network and FAT file systems: copy, as huggingface_hub does.
      if (!['EPERM', 'EACCES', 'ENOTSUP', 'EOPNOTSUPP', 'EINVAL', 'ENOSYS'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e
    }
  }
  copyFileSync(blob, pointer)
  return 'copy'
}

async function hashFile(hash: Hash, path: string, bytes: number): Promise<void> {
  if (bytes === 0) return
  for await (const chunk of createReadStream(path, { start: 0, end: bytes - 1 })) hash.update(chunk as Buffer)
}

interface Ctx {
  fetch: HubFetch
  endpoint: string
  headers: Record<string, string>
  hasToken: boolean
  plan: HubPlan
  signal?: AbortSignal
  onProgress?(p: HubProgress): void
  done: number
  downloaded: number
}

/**
 * One attempt at a file: resumes blobs/<etag>.incomplete with a Range request (a server that
 * answers 200 instead restarts it), checks the Hub's X-Linked-Etag / ETag and X-Repo-Commit
 * against the file list, hashes as it writes, and renames the verified file to blobs/<etag>.
 * A corrupted download is removed and refused.
 */
async function fetchOnce(ctx: Ctx, file: HubFile, blob: string): Promise<void> {
  const { plan } = ctx
  const part = `${blob}.incomplete`
  let have = existsSync(part) ? statSync(part).size : 0
  if (have > file.size) {
    rmSync(part)
    have = 0
  }
  const url = `${ctx.endpoint}/${plan.repoId}/resolve/${plan.commit}/${encodeURIComponent(file.name)}`
  const headers = { ...ctx.headers, ...(have > 0 ? { Range: `bytes=${have}-` } : {}) }
  const { first, final } = await getFollowing(ctx.fetch, url, headers, ctx.signal)
  if (first.status >= 400) throw await errorFor(first, plan.repoId, file.name, ctx.hasToken, ctx.endpoint)
  const served = normalizeEtag(first.header('x-linked-etag') ?? (first === final && final.status === 200 ? first.header('etag') : undefined))
  if (served && ETAG_RE.test(served) && served !== file.etag) {
    await final.dump()
    throw new HubError('integrity', `${plan.repoId}/${file.name}: the Hub serves blob ${served}, its file list said ${file.etag}; nothing was kept — run the command again`)
  }
  const commit = first.header('x-repo-commit')
  if (commit && commit !== plan.commit) {
    await final.dump()
    throw new HubError('server', `${plan.repoId}/${file.name}: served from commit ${commit}, not ${plan.commit}; run the command again`)
  }
  if (final.status === 206) {
    const range = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(final.header('content-range') ?? '')
    if (!range || Number(range[1]) !== have) {
      await final.dump()
      rmSync(part, { force: true })
      throw new HubError('network', `${file.name}: the server resumed at the wrong offset (${final.header('content-range') ?? 'no Content-Range'}); starting the file again`)
    }
  } else if (final.status === 416 && have === file.size) {
    await final.dump()
  } else if (final.status === 200) {
    if (have > 0) {
      // The server ignored the Range header: the whole file comes again.
      rmSync(part)
      ctx.done -= have
      have = 0
    }
  } else {
    throw await errorFor(final, plan.repoId, file.name, ctx.hasToken, ctx.endpoint)
  }
  const hash = createHash(file.lfs ? 'sha256' : 'sha1')
  if (!file.lfs) hash.update(`blob ${file.size}\0`)
  await hashFile(hash, part, have)
  if (final.status !== 416) {
    const fh = await open(part, 'a')
    try {
      for await (const chunk of final.body) {
        hash.update(chunk)
        await fh.write(chunk)
        have += chunk.byteLength
        ctx.done += chunk.byteLength
        ctx.downloaded += chunk.byteLength
        if (have > file.size) break
        ctx.onProgress?.({ file: file.name, fileBytes: have, fileSize: file.size, doneBytes: ctx.done, totalBytes: plan.totalBytes })
      }
      await fh.sync()
    } catch (e) {
      if (ctx.signal?.aborted) throw new HubError('cancelled', `cancelled; ${mb(have)} of ${file.name} kept in ${part}: the same command resumes it`)
      throw new HubError('network', `${file.name}: connection lost after ${mb(have)} of ${mb(file.size)} (${(e as Error).message})`)
    } finally {
      await fh.close()
    }
  }
  if (have < file.size) throw new HubError('network', `${file.name}: the connection ended after ${mb(have)} of ${mb(file.size)}`)
  const digest = hash.digest('hex')
  if (have > file.size || digest !== file.etag) {
    rmSync(part, { force: true })
    throw new HubError(
      'integrity',
      have > file.size
        ? `${plan.repoId}/${file.name}: more bytes than the ${file.size} the Hub lists; the download was removed`
        : `${plan.repoId}/${file.name}: ${file.lfs ? 'sha256' : 'git blob id'} ${digest} is not the ${file.etag} the Hub lists; the corrupted download was removed — run the command again`,
    )
  }
  renameSync(part, blob)
}

async function fetchFile(ctx: Ctx, file: HubFile, blob: string, retries: number, note: (l: string) => void): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await fetchOnce(ctx, file, blob)
      return
    } catch (e) {
      if (!(e instanceof HubError && e.kind === 'network') || attempt >= retries || ctx.signal?.aborted) {
        if (e instanceof HubError && e.kind === 'network') {
          throw new HubError('network', `${e.message}; what arrived is kept in ${blob}.incomplete — run the same command again to resume`)
        }
        throw e
      }
      note(`${e.message}; resuming (attempt ${attempt + 2} of ${retries + 1})`)
    }
  }
}

/** The cached snapshot of repo@revision, when it holds a model (config.json and weights). */
function fromCache(hubs: string[], repoId: string, revision: string): { commit: string; dir: string } | null {
  for (const hub of hubs) {
    const snap = snapshotOf(hub, repoId, revision)
    if (!snap || !existsSync(join(snap.dir, CONFIG_FILE))) continue
    try {
      findWeightFiles(snap.dir)
      return snap
    } catch {
      // a snapshot without (readable) weights: not a finished download
    }
  }
  return null
}

function copyOut(dir: string, files: string[], out: string): void {
  mkdirSync(out, { recursive: true })
  for (const f of files) copyFileSync(join(dir, f), join(out, f))
}

/**
 * Downloads repoId@revision's model files into the Hugging Face cache (and a plain copy in
 * `out`), or finds them there when the Hub cannot be reached or HF_HUB_OFFLINE is set.
 */
export async function getModel(o: GetModelOptions): Promise<GetModelResult> {
  const env = o.env ?? process.env
  const home = o.home ?? homedir()
  const revision = o.revision ?? 'main'
  checkRepoId(o.repoId)
  checkRevision(revision)
  const hub = resolve(o.cacheDir ?? hubCacheDir(env, home))
  const hubs = o.cacheDir ? [hub] : hubCacheDirs(env, home)
  const endpoint = (env.HF_ENDPOINT || DEFAULT_ENDPOINT).replace(/\/+$/, '')
  const token = tokenOf(env)
  const note = o.onNote ?? (() => {})

  const offline = (why: string): GetModelResult => {
    const snap = fromCache(hubs, o.repoId, revision)
    if (!snap) throw new HubError('network', `${why}, and no cache (${hubs.join(', ')}) holds ${o.repoId}@${revision}`)
    note(`${why}: using the cached snapshot ${snap.dir}`)
    const present = [CONFIG_FILE, ...TOKENIZER_FILES, WEIGHTS_INDEX_FILE, TORCH_WEIGHTS_INDEX_FILE].filter((f) => existsSync(join(snap.dir, f)))
    const all = [...present, ...findWeightFiles(snap.dir).map((p) => relative(snap.dir, p))]
    if (o.out && !o.dryRun) copyOut(snap.dir, all, o.out)
    return { repoId: o.repoId, revision, commit: snap.commit, dir: snap.dir, out: o.out, files: all, downloadedBytes: 0, offline: true, linked: 'none' }
  }
  if (/^(1|true|yes|on)$/i.test(env.HF_HUB_OFFLINE ?? '')) return offline('HF_HUB_OFFLINE is set')

  const transport = o.fetch ? { fetch: o.fetch, close: async () => {} } : undiciFetch(env)
  try {
    const headers: Record<string, string> = { 'User-Agent': 'fastbioner', 'Accept-Encoding': 'identity', ...(token ? { Authorization: `Bearer ${token}` } : {}) }
    const infoUrl = `${endpoint}/api/models/${o.repoId}/revision/${encodeURIComponent(revision)}?blobs=true`
    let info: { sha?: unknown; siblings?: unknown }
    try {
      const { final } = await getFollowing(transport.fetch, infoUrl, headers, o.signal)
      if (final.status !== 200) throw await errorFor(final, o.repoId, `revision ${revision}`, !!token, endpoint)
      const chunks: Buffer[] = []
      let n = 0
      for await (const c of final.body) {
        n += c.byteLength
        if (n > MAX_INFO_BYTES) throw new HubError('server', `${infoUrl}: the model info exceeds ${mb(MAX_INFO_BYTES)}`)
        chunks.push(Buffer.from(c))
      }
      try {
        info = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {
        throw new HubError('server', `${infoUrl}: the answer is not JSON (is HF_ENDPOINT a Hub?)`)
      }
    } catch (e) {
      if (isNetworkError(e) && !o.signal?.aborted) return offline(e instanceof Error ? e.message : String(e))
      throw e
    }
    const commit = info.sha
    if (typeof commit !== 'string' || !COMMIT_RE.test(commit)) throw new HubError('server', `${infoUrl}: the model info has no commit id (sha)`)
    if (!Array.isArray(info.siblings)) throw new HubError('server', `${infoUrl}: the model info has no file list (siblings)`)
    const siblings = (info.siblings as Sibling[]).filter((s) => s && typeof s.rfilename === 'string')

    const repoDir = join(hub, repoFolderName(o.repoId))
    const blobs = join(repoDir, 'blobs')
    const files = pickFiles(o.repoId, siblings).map((s) => hubFileOf(o.repoId, s, blobs))
    const totalBytes = files.reduce((a, f) => a + f.size, 0)
    const downloadBytes = files.reduce((a, f) => a + (f.state === 'cached' ? 0 : f.size - f.partialBytes), 0)
    const plan: HubPlan = { repoId: o.repoId, revision, commit, endpoint, hub, files, totalBytes, downloadBytes }
    o.onPlan?.(plan)
    const snapshot = join(repoDir, 'snapshots', commit)
    if (o.dryRun) return { repoId: o.repoId, revision, commit, dir: snapshot, out: o.out, files: files.map((f) => f.name), downloadedBytes: 0, offline: false, linked: 'none', plan }

    const free = freeBytes(hub)
    if (downloadBytes > free) throw new HubError('disk', `${o.repoId} needs ${mb(downloadBytes)} more in ${hub}, which has ${mb(free)} free; free some space or choose another place with --cache-dir`)
    if (o.out) {
      const freeOut = freeBytes(o.out)
      // The copy comes on top of the download when both are on one file system.
      const needOut = totalBytes + (statSync(nearest(o.out)).dev === statSync(nearest(hub)).dev ? downloadBytes : 0)
      if (needOut > freeOut) throw new HubError('disk', `--out ${o.out} needs ${mb(needOut)}, and has ${mb(freeOut)} free`)
    }

    mkdirSync(blobs, { recursive: true })
    mkdirSync(snapshot, { recursive: true })
    if (revision !== commit) {
      const ref = join(repoDir, 'refs', ...revision.split('/'))
      mkdirSync(dirname(ref), { recursive: true })
      writeFileAtomic(ref, [commit])
    }
    const ctx: Ctx = {
      fetch: transport.fetch,
      endpoint,
      headers,
      hasToken: !!token,
      plan,
      signal: o.signal,
      onProgress: o.onProgress,
      done: files.reduce((a, f) => a + (f.state === 'cached' ? f.size : f.partialBytes), 0),
      downloaded: 0,
    }
    const links = new Set<'symlink' | 'copy'>()
    for (const f of files) {
      const blob = join(blobs, f.etag)
      const pointer = join(snapshot, f.name)
      if (f.state !== 'cached') await fetchFile(ctx, f, blob, o.retries ?? 3, note)
      if (existsSync(pointer) && statSync(pointer).size === f.size && pointsAt(pointer, blob)) continue
      links.add(linkBlob(blob, pointer, o.symlinks ?? true))
    }
    // The shards an index names must all have come (and stay inside the repository folder).
    findWeightFiles(snapshot)
    if (o.out) copyOut(snapshot, files.map((f) => f.name), o.out)
    const linked = links.size === 0 ? 'none' : links.has('copy') ? 'copy' : 'symlink'
    return { repoId: o.repoId, revision, commit, dir: snapshot, out: o.out, files: files.map((f) => f.name), downloadedBytes: ctx.downloaded, offline: false, linked, plan }
  } finally {
    await transport.close()
  }
}

/** The path, or its nearest existing ancestor. */
function nearest(path: string): string {
  let p = resolve(path)
  while (!existsSync(p) && dirname(p) !== p) p = dirname(p)
  return p
}

/** The snapshot file is the blob (a symlink to it) or a copy of the same size (checked by the caller). */
function pointsAt(pointer: string, blob: string): boolean {
  if (!lstatSync(pointer).isSymbolicLink()) return true
  return realpathSync(pointer) === realpathSync(blob)
}
