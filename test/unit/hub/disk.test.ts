// `get` checks free disk space (fs.statfs) before the first byte: too little is refused with the
// sizes, and nothing but the model info is fetched. statfsSync is mocked to report a near-full disk.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { getModel, HubError } from '@core/hub/download'
import { FakeHub } from './fake-hub'

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>()
  return { ...fs, statfsSync: () => ({ bavail: 1000, bsize: 1 }) }
})

const root = mkdtempSync(join(tmpdir(), 'fastbioner-hub-disk-'))
const hub = new FakeHub()
beforeAll(async () => {
  await hub.start()
  const dir = join(__dirname, '../../fixtures/torch/fp32')
  hub.repos.set('org/tiny-bert', {
    commit: 'c'.repeat(40),
    files: Object.fromEntries(readdirSync(dir).map((f) => [f, { bytes: readFileSync(join(dir, f)), lfs: f.endsWith('.bin') }])),
  })
})
afterAll(async () => {
  await hub.stop()
  rmSync(root, { recursive: true, force: true })
})

test('too little free space: refused before any download, saying how much is needed and where', async () => {
  const cache = join(root, 'cache')
  const err = await getModel({ repoId: 'org/tiny-bert', cacheDir: cache, env: { HF_ENDPOINT: hub.hubUrl } }).catch((e: unknown) => e)
  expect(err).toBeInstanceOf(HubError)
  expect((err as HubError).kind).toBe('disk')
  expect((err as HubError).message).toMatch(new RegExp(`org/tiny-bert needs 19\\.\\d kB more in ${cache.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, which has 1\\.0 kB free`))
  expect(hub.log.map((l) => l.path)).toEqual(['/api/models/org/tiny-bert/revision/main?blobs=true'])
  expect(existsSync(cache)).toBe(false)
})
