// Models in the Hugging Face cache (issue 28 item 3): found offline in HF_HUB_CACHE, HF_HOME/hub or
// ~/.cache/huggingface/hub; BERT-family only; a repo id resolves to its snapshot; a path wins.

import { cpSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { useBackend } from '@core/model/backend'
import { loadCheckpoint } from '@core/model/checkpoint'
import { hubCacheDirs, listCachedModels, resolveModelRef } from '@core/model/hf-cache'
import { TORCH_FIXTURES } from './torch-zip'

const root = mkdtempSync(join(tmpdir(), 'fastbioner-hfcache-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
beforeAll(async () => {
  await useBackend('cpu')
})

/** A repository as huggingface_hub lays it out: blobs, a snapshot of symlinks, refs/main. */
function cachedRepo(hub: string, repoId: string, files: Record<string, string>, revision = 'a1b2c3d4e5f6'): string {
  const repo = join(hub, `models--${repoId.replace('/', '--')}`)
  const snap = join(repo, 'snapshots', revision)
  mkdirSync(join(repo, 'blobs'), { recursive: true })
  mkdirSync(snap, { recursive: true })
  mkdirSync(join(repo, 'refs'), { recursive: true })
  writeFileSync(join(repo, 'refs', 'main'), revision)
  Object.entries(files).forEach(([name, from], i) => {
    cpSync(from, join(repo, 'blobs', `blob${i}`))
    symlinkSync(join('..', '..', 'blobs', `blob${i}`), join(snap, name))
  })
  return snap
}

const bert = (variant: string) => ({
  'config.json': join(TORCH_FIXTURES, variant, 'config.json'),
  'vocab.txt': join(TORCH_FIXTURES, variant, 'vocab.txt'),
  'pytorch_model.bin': join(TORCH_FIXTURES, variant, 'pytorch_model.bin'),
})

test('hub folders in huggingface_hub order of precedence', () => {
  expect(hubCacheDirs({ HF_HUB_CACHE: '/a/hub', HF_HOME: '/b' }, '/home/u')).toEqual(['/a/hub', '/b/hub', '/home/u/.cache/huggingface/hub'])
  expect(hubCacheDirs({}, '/home/u')).toEqual(['/home/u/.cache/huggingface/hub'])
})

test('lists BERT models with shape, head and size; skips other families and weightless folders; a repo id resolves to its snapshot', async () => {
  const home = join(root, 'home')
  const hfHome = join(root, 'hf-home')
  const hubCache = join(root, 'hub-cache')
  const snap = cachedRepo(join(home, '.cache', 'huggingface', 'hub'), 'dmis-lab/biobert-tiny', bert('fp32'))
  cachedRepo(join(hfHome, 'hub'), 'org/bf16-ner', bert('bf16'))
  const gpt2 = join(root, 'gpt2-config.json')
  writeFileSync(gpt2, JSON.stringify({ model_type: 'gpt2' }))
  cachedRepo(hubCache, 'openai/gpt2', { 'config.json': gpt2, 'pytorch_model.bin': join(TORCH_FIXTURES, 'fp32', 'pytorch_model.bin') })
  cachedRepo(hubCache, 'org/config-only', { 'config.json': join(TORCH_FIXTURES, 'fp32', 'config.json'), 'vocab.txt': join(TORCH_FIXTURES, 'fp32', 'vocab.txt') })
  const env = { HF_HUB_CACHE: hubCache, HF_HOME: hfHome }

  const models = listCachedModels(env, home)
  expect(models.map((m) => m.repoId)).toEqual(['dmis-lab/biobert-tiny', 'org/bf16-ner'])
  expect(models[0]).toMatchObject({ dir: snap, revision: 'a1b2c3d4e5f6', layers: 2, hidden: 8, tokenClassifier: true })
  expect(models[0].bytes).toBe(statSync(join(TORCH_FIXTURES, 'fp32', 'pytorch_model.bin')).size)

  expect(resolveModelRef('dmis-lab/biobert-tiny', env, home)).toBe(snap)
  expect(resolveModelRef('dmis-lab/not-downloaded', env, home)).toBe('dmis-lab/not-downloaded')
  const ck = await loadCheckpoint(resolveModelRef('dmis-lab/biobert-tiny', env, home))
  ck.model.dispose()

  // An existing path wins over a repo id of the same spelling.
  const cwd = process.cwd()
  const local = join(root, 'cwd')
  mkdirSync(join(local, 'dmis-lab', 'biobert-tiny'), { recursive: true })
  process.chdir(local)
  try {
    expect(resolveModelRef('dmis-lab/biobert-tiny', env, home)).toBe('dmis-lab/biobert-tiny')
  } finally {
    process.chdir(cwd)
  }
})
