// `fastbioner get` against a fake Hub on 127.0.0.1 (issue 28 items 2 and 4): the cache layout
// huggingface_hub writes, sizes before download, resume after a dropped connection (in the run and
// in the next one), sha256 refusal, gated and missing repositories, the proxy, offline reuse.
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { getModel, HubError, pickFiles, type HubPlan } from '@core/hub/download'
import { listCachedModels, resolveModelRef } from '@core/model/hf-cache'
import { run as getCmd } from '../../../src/cli/commands/get'
import { modelFolder } from '../../../src/cli/commands/_ml'
import { capture } from '../cli/capture'
import { etagOf, FakeHub, sha256, startProxy, type FakeFile } from './fake-hub'

const FIXTURES = join(__dirname, '../../fixtures/torch')
const COMMIT = 'a'.repeat(40)
const COMMIT2 = 'b'.repeat(40)
const root = mkdtempSync(join(tmpdir(), 'fastbioner-hub-'))
const hub = new FakeHub()
let n = 0
/** A fresh hub folder per test. */
const freshCache = () => join(root, `cache-${++n}`)

function folderFiles(dir: string, lfs: string[]): Record<string, FakeFile> {
  return Object.fromEntries(readdirSync(dir).map((f) => [f, { bytes: readFileSync(join(dir, f)), lfs: lfs.includes(f) }]))
}

const tiny = folderFiles(join(FIXTURES, 'fp32'), ['pytorch_model.bin'])
const sharded = folderFiles(join(FIXTURES, 'sharded'), ['pytorch_model-00001-of-00002.bin', 'pytorch_model-00002-of-00002.bin'])
const weights = tiny['pytorch_model.bin']

beforeAll(async () => {
  await hub.start()
  hub.repos.set('org/tiny-bert', {
    commit: COMMIT,
    // Files a token classifier does not need are left on the Hub.
    files: { ...tiny, 'README.md': { bytes: Buffer.from('# tiny'), lfs: false }, 'tf_model.h5': { bytes: Buffer.alloc(64, 1), lfs: true } },
  })
  hub.repos.set('org/sharded', { commit: COMMIT2, files: sharded })
  hub.repos.set('org/gated-bert', { commit: COMMIT, files: tiny, gatedToken: 'hf_good' })
})
afterAll(async () => {
  await hub.stop()
  rmSync(root, { recursive: true, force: true })
})
beforeEach(() => {
  hub.log.length = 0
  hub.dropOnce.clear()
  hub.corrupt.clear()
  hub.ignoreRange = false
  hub.tamper.clear()
})

const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ HF_ENDPOINT: hub.hubUrl, ...extra })

test('writes the HF cache layout: blobs by etag, relative symlinks in snapshots/<commit>, refs/main; only the model files; the token never reaches the CDN', async () => {
  const cache = freshCache()
  let plan: HubPlan | undefined
  const r = await getModel({ repoId: 'org/tiny-bert', cacheDir: cache, env: env({ HF_TOKEN: 'hf_secret' }), onPlan: (p) => (plan = p) })

  const repo = join(cache, 'models--org--tiny-bert')
  expect(r.dir).toBe(join(repo, 'snapshots', COMMIT))
  expect(r.commit).toBe(COMMIT)
  expect(readFileSync(join(repo, 'refs', 'main'), 'utf8')).toBe(COMMIT)
  expect(r.files.sort()).toEqual(['config.json', 'pytorch_model.bin', 'tokenizer_config.json', 'vocab.txt'])
  for (const name of r.files) {
    const pointer = join(r.dir, name)
    expect(lstatSync(pointer).isSymbolicLink()).toBe(true)
    expect(readlinkSync(pointer)).toBe(`../../blobs/${etagOf(tiny[name])}`)
    expect(readFileSync(pointer)).toEqual(tiny[name].bytes)
  }
  expect(readdirSync(join(repo, 'blobs')).sort()).toEqual(r.files.map((f) => etagOf(tiny[f])).sort())
  // The size was known before the first byte: from the model info.
  expect(plan!.totalBytes).toBe(r.files.reduce((a, f) => a + tiny[f].bytes.length, 0))
  expect(plan!.downloadBytes).toBe(plan!.totalBytes)
  expect(r.downloadedBytes).toBe(plan!.totalBytes)
  expect(hub.log[0].path).toBe('/api/models/org/tiny-bert/revision/main?blobs=true')
  // Files are asked by commit, so a push between calls cannot mix revisions.
  expect(hub.log.filter((l) => l.server === 'hub' && l.path.includes('/resolve/')).every((l) => l.path.includes(`/resolve/${COMMIT}/`))).toBe(true)
  expect(hub.log.filter((l) => l.server === 'hub').every((l) => l.authorization === 'Bearer hf_secret')).toBe(true)
  const cdn = hub.log.filter((l) => l.server === 'cdn')
  expect(cdn.map((l) => l.path)).toEqual([`/blobs/${sha256(weights.bytes)}?signed=1`])
  expect(cdn[0].authorization).toBeUndefined()

  // What the cache readers see: the same folder, listed and resolved by repo id.
  const listed = listCachedModels({}, join(root, 'no-home'), [cache])
  expect(listed).toMatchObject([{ repoId: 'org/tiny-bert', dir: r.dir, layers: 2, hidden: 8, tokenClassifier: true, bytes: weights.bytes.length }])
  expect(resolveModelRef('org/tiny-bert', { HF_HUB_CACHE: cache }, join(root, 'no-home'))).toBe(r.dir)

  // A second run downloads nothing; with the Hub gone, a third finds the snapshot offline.
  hub.log.length = 0
  const again = await getModel({ repoId: 'org/tiny-bert', cacheDir: cache, env: env() })
  expect(again.downloadedBytes).toBe(0)
  expect(hub.log.map((l) => l.path)).toEqual(['/api/models/org/tiny-bert/revision/main?blobs=true'])
  const notes: string[] = []
  const offline = await getModel({ repoId: 'org/tiny-bert', cacheDir: cache, env: { HF_ENDPOINT: 'http://127.0.0.1:9' }, onNote: (l) => notes.push(l) })
  expect(offline).toMatchObject({ offline: true, dir: r.dir, commit: COMMIT })
  expect(notes.join('\n')).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9.*using the cached snapshot/)
  expect(offline.files).toContain('pytorch_model.bin')
  // HF_HUB_OFFLINE: no request at all.
  hub.log.length = 0
  expect((await getModel({ repoId: 'org/tiny-bert', cacheDir: cache, env: env({ HF_HUB_OFFLINE: '1' }) })).offline).toBe(true)
  expect(hub.log).toEqual([])
})

test('a connection dropped half-way is resumed with a Range request in the same run', async () => {
  const cache = freshCache()
  hub.dropOnce.add(sha256(weights.bytes))
  const notes: string[] = []
  const r = await getModel({ repoId: 'org/tiny-bert', cacheDir: cache, env: env(), onNote: (l) => notes.push(l) })
  const cdn = hub.log.filter((l) => l.server === 'cdn')
  expect(cdn.length).toBe(2)
  expect(cdn[0].range).toBeUndefined()
  const half = weights.bytes.length >> 1
  expect(cdn[1].range).toBe(`bytes=${half}-`)
  expect(readFileSync(join(r.dir, 'pytorch_model.bin'))).toEqual(weights.bytes)
  expect(notes.join('\n')).toMatch(/connection lost after .*resuming \(attempt 2 of 4\)/)
  expect(readdirSync(join(cache, 'models--org--tiny-bert', 'blobs')).some((f) => f.endsWith('.incomplete'))).toBe(false)
})

test('an interrupted run keeps .incomplete; the next run resumes it from where it stopped', async () => {
  const cache = freshCache()
  const blob = join(cache, 'models--org--tiny-bert', 'blobs', sha256(weights.bytes))
  hub.dropOnce.add(sha256(weights.bytes))
  const err = await getModel({ repoId: 'org/tiny-bert', cacheDir: cache, env: env(), retries: 0 }).catch((e: unknown) => e)
  expect(err).toBeInstanceOf(HubError)
  expect((err as HubError).kind).toBe('network')
  expect((err as HubError).message).toMatch(/run the same command again to resume/)
  const half = weights.bytes.length >> 1
  expect(statSync(`${blob}.incomplete`).size).toBe(half)
  expect(existsSync(blob)).toBe(false)

  let plan: HubPlan | undefined
  hub.log.length = 0
  const r = await getModel({ repoId: 'org/tiny-bert', cacheDir: cache, env: env(), onPlan: (p) => (plan = p) })
  expect(plan!.files.find((f) => f.name === 'pytorch_model.bin')).toMatchObject({ state: 'partial', partialBytes: half })
  expect(hub.log.find((l) => l.server === 'cdn')!.range).toBe(`bytes=${half}-`)
  expect(r.downloadedBytes).toBe(weights.bytes.length - half)
  expect(readFileSync(blob)).toEqual(weights.bytes)
  expect(existsSync(`${blob}.incomplete`)).toBe(false)
})

test('a server that ignores Range sends the whole file again, and it is not appended to the part', async () => {
  const cache = freshCache()
  hub.dropOnce.add(sha256(weights.bytes))
  hub.ignoreRange = true
  const r = await getModel({ repoId: 'org/tiny-bert', cacheDir: cache, env: env() })
  expect(readFileSync(join(r.dir, 'pytorch_model.bin'))).toEqual(weights.bytes)
})

test('a corrupted blob is refused and removed; nothing points at it', async () => {
  const cache = freshCache()
  hub.corrupt.add(sha256(weights.bytes))
  const err = await getModel({ repoId: 'org/tiny-bert', cacheDir: cache, env: env() }).catch((e: unknown) => e)
  expect(err).toBeInstanceOf(HubError)
  expect((err as HubError).kind).toBe('integrity')
  expect((err as HubError).message).toMatch(new RegExp(`pytorch_model.bin: sha256 [0-9a-f]{64} is not the ${sha256(weights.bytes)} the Hub lists`))
  const repo = join(cache, 'models--org--tiny-bert')
  expect(readdirSync(join(repo, 'blobs')).filter((f) => f.startsWith(sha256(weights.bytes)))).toEqual([])
  expect(existsSync(join(repo, 'snapshots', COMMIT, 'pytorch_model.bin'))).toBe(false)
  // The cached snapshot is incomplete: offline use does not take it for a model.
  await expect(getModel({ repoId: 'org/tiny-bert', cacheDir: cache, env: { HF_HUB_OFFLINE: '1' } })).rejects.toThrow(/no cache .* holds org\/tiny-bert@main/)
})

test('a small file is checked against its git blob id too', async () => {
  const cache = freshCache()
  const vocab = Buffer.from(tiny['vocab.txt'].bytes)
  vocab[0] ^= 0x20
  hub.tamper.set('vocab.txt', vocab)
  const err = await getModel({ repoId: 'org/tiny-bert', cacheDir: cache, env: env() }).catch((e: unknown) => e)
  expect(err).toBeInstanceOf(HubError)
  expect((err as HubError).kind).toBe('integrity')
  expect((err as HubError).message).toMatch(new RegExp(`vocab\\.txt: git blob id [0-9a-f]{40} is not the ${etagOf(tiny['vocab.txt'])} the Hub lists`))
})

test('gated: a clear message without a token, the download with one', async () => {
  const cache = freshCache()
  const err = await getModel({ repoId: 'org/gated-bert', cacheDir: cache, env: env() }).catch((e: unknown) => e)
  expect(err).toBeInstanceOf(HubError)
  expect((err as HubError).kind).toBe('gated')
  expect((err as HubError).message).toMatch(/org\/gated-bert is a gated repository \(HTTP 401\).*Accept its conditions at .*\/org\/gated-bert.*HF_TOKEN/)
  const r = await getModel({ repoId: 'org/gated-bert', cacheDir: cache, env: env({ HF_TOKEN: 'hf_good' }) })
  expect(readFileSync(join(r.dir, 'config.json'))).toEqual(tiny['config.json'].bytes)
})

test('missing repository, missing revision, not a repo id', async () => {
  const cache = freshCache()
  await expect(getModel({ repoId: 'org/nope', cacheDir: cache, env: env() })).rejects.toThrow(/org\/nope: no such model on http:\/\/127\.0\.0\.1:\d+ \(HTTP 401\).*HF_TOKEN/)
  await expect(getModel({ repoId: 'org/tiny-bert', revision: 'v9', cacheDir: cache, env: env() })).rejects.toThrow(/revision v9 — no such revision/)
  await expect(getModel({ repoId: '../etc', cacheDir: cache, env: env() })).rejects.toThrow(/not a Hub repo id/)
  await expect(getModel({ repoId: 'org/tiny-bert', revision: '../../x', cacheDir: cache, env: env() })).rejects.toThrow(/not a revision/)
  expect(existsSync(cache)).toBe(false)
})

test('sharded weights: the index and every shard; a revision other than main is recorded in refs', async () => {
  const cache = freshCache()
  const r = await getModel({ repoId: 'org/sharded', revision: COMMIT2, cacheDir: cache, env: env() })
  expect(r.files).toEqual(['config.json', 'vocab.txt', 'tokenizer_config.json', 'pytorch_model.bin.index.json', 'pytorch_model-00001-of-00002.bin', 'pytorch_model-00002-of-00002.bin'])
  // A commit id needs no ref.
  expect(existsSync(join(cache, 'models--org--sharded', 'refs'))).toBe(false)
})

test('dry run: sizes and nothing written; --out and copies where symlinks are not wanted', async () => {
  const cache = freshCache()
  const dry = await getModel({ repoId: 'org/tiny-bert', cacheDir: cache, env: env(), dryRun: true })
  expect(dry.plan!.downloadBytes).toBeGreaterThan(weights.bytes.length)
  expect(existsSync(cache)).toBe(false)
  expect(hub.log.every((l) => l.path.startsWith('/api/'))).toBe(true)

  const out = join(root, 'plain-copy')
  const r = await getModel({ repoId: 'org/tiny-bert', cacheDir: cache, env: env(), out, symlinks: false })
  expect(r.linked).toBe('copy')
  for (const f of r.files) {
    expect(lstatSync(join(r.dir, f)).isSymbolicLink()).toBe(false)
    expect(lstatSync(join(out, f)).isFile()).toBe(true)
    expect(readFileSync(join(out, f))).toEqual(tiny[f].bytes)
  }
})

test('HTTP_PROXY is honoured (NO_PROXY empty): every request goes through the proxy', async () => {
  const proxy = await startProxy()
  try {
    const cache = freshCache()
    const r = await getModel({ repoId: 'org/tiny-bert', cacheDir: cache, env: env({ HTTP_PROXY: proxy.url, NO_PROXY: '' }) })
    expect(readFileSync(join(r.dir, 'pytorch_model.bin'))).toEqual(weights.bytes)
    const hubHost = new URL(hub.hubUrl).host
    const cdnHost = new URL(hub.cdnUrl).host
    expect(proxy.seen.some((s) => s.includes(hubHost))).toBe(true)
    expect(proxy.seen.some((s) => s.includes(cdnHost))).toBe(true)
  } finally {
    await proxy.stop()
  }
})

test('pickFiles: safetensors over pytorch_model.bin, other frameworks refused', () => {
  const s = (names: string[]) => names.map((rfilename) => ({ rfilename }))
  expect(pickFiles('o/m', s(['config.json', 'vocab.txt', 'model.safetensors', 'pytorch_model.bin', 'flax_model.msgpack'])).map((f) => f.rfilename)).toEqual(['config.json', 'vocab.txt', 'model.safetensors'])
  expect(pickFiles('o/m', s(['config.json', 'tokenizer.json', 'model.safetensors.index.json', 'model-00002-of-00002.safetensors', 'model-00001-of-00002.safetensors', 'x/../model-00003-of-00003.safetensors'])).map((f) => f.rfilename)).toEqual([
    'config.json',
    'tokenizer.json',
    'model.safetensors.index.json',
    'model-00001-of-00002.safetensors',
    'model-00002-of-00002.safetensors',
  ])
  expect(() => pickFiles('o/m', s(['config.json', 'vocab.txt', 'tf_model.h5']))).toThrow(/o\/m has no model.safetensors or pytorch_model.bin \(weights: tf_model.h5\)/)
  expect(() => pickFiles('o/m', s(['vocab.txt', 'model.safetensors']))).toThrow(/no config.json/)
})

describe('CLI', () => {
  beforeEach(() => {
    vi.stubEnv('http_proxy', '')
    vi.stubEnv('HTTP_PROXY', '')
    vi.stubEnv('HF_TOKEN', '')
    vi.stubEnv('HF_HUB_OFFLINE', '')
  })
  afterEach(() => {
    vi.unstubAllEnvs()
  })

  test('get REPO_ID: size on stderr before download, JSON line with the snapshot; --list; a cached repo id as --model', async () => {
    const cache = freshCache()
    vi.stubEnv('HF_ENDPOINT', hub.hubUrl)
    const r = await capture(() => getCmd(['org/tiny-bert', '--cache-dir', cache]))
    expect(r.code).toBe(0)
    expect(r.err).toMatch(/org\/tiny-bert@main \(commit aaaaaaaaaa\)/)
    expect(r.err).toMatch(/pytorch_model\.bin\s+18\.9 kB\s+to download/)
    expect(r.err.indexOf('total ')).toBeLessThan(r.err.indexOf('pytorch_model.bin: 100%'))
    const line = JSON.parse(r.out) as { dir: string; commit: string; offline: boolean }
    expect(line).toMatchObject({ commit: COMMIT, offline: false, dir: join(cache, 'models--org--tiny-bert', 'snapshots', COMMIT) })

    const listed = await capture(() => getCmd(['--list', '--cache-dir', cache]))
    expect(listed.code).toBe(0)
    expect(listed.out).toMatch(/org\/tiny-bert\s+aaaaaaaaaa\s+2×8\s+18\.9 kB\s+yes/)

    vi.stubEnv('HF_HUB_CACHE', cache)
    expect(modelFolder('org/tiny-bert', true)).toBe(line.dir)
    // An existing path wins over the repo id.
    const local = join(root, 'org', 'tiny-bert')
    mkdirSync(local, { recursive: true })
    writeFileSync(join(local, 'config.json'), '{}')
    const cwd = process.cwd()
    process.chdir(root)
    try {
      expect(modelFolder('org/tiny-bert', true)).toBe('org/tiny-bert')
    } finally {
      process.chdir(cwd)
    }
    expect(() => modelFolder('org/not-here', true, '--teacher')).toThrow(/--teacher org\/not-here: no such folder.*fastbioner get org\/not-here/)
  })

  test('usage errors exit 2; a gated repo exits 1 with the message', async () => {
    vi.stubEnv('HF_ENDPOINT', hub.hubUrl)
    expect((await capture(() => getCmd([]))).code).toBe(2)
    expect((await capture(() => getCmd(['a/b', 'c/d']))).code).toBe(2)
    expect((await capture(() => getCmd(['a/b', '--list']))).code).toBe(2)
    const gated = await capture(() => getCmd(['org/gated-bert', '--cache-dir', freshCache()]))
    expect(gated.code).toBe(1)
    expect(gated.err).toMatch(/fastbioner get: org\/gated-bert is a gated repository/)
  })
})
