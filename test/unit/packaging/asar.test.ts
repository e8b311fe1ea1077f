// preferUnpacked: packaged paths map to the asar-unpacked copy only when that copy exists.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { preferUnpacked } from '@core/fs/asar'

describe('preferUnpacked', () => {
  let root: string
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'fastbioner-asar-'))
    const unpackedDist = join(root, 'resources', 'app.asar.unpacked', 'node_modules', 'pkg', 'dist')
    mkdirSync(unpackedDist, { recursive: true })
    writeFileSync(join(unpackedDist, 'a.wasm'), '')
  })
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it('maps a path inside app.asar to app.asar.unpacked when the unpacked file exists', () => {
    const packed = join(root, 'resources', 'app.asar', 'node_modules', 'pkg', 'dist', 'a.wasm')
    expect(preferUnpacked(packed)).toBe(join(root, 'resources', 'app.asar.unpacked', 'node_modules', 'pkg', 'dist', 'a.wasm'))
  })

  it('maps a folder by probing a file in it', () => {
    const dist = join(root, 'resources', 'app.asar', 'node_modules', 'pkg', 'dist')
    expect(preferUnpacked(dist, join(dist, 'a.wasm'))).toBe(join(root, 'resources', 'app.asar.unpacked', 'node_modules', 'pkg', 'dist'))
    expect(preferUnpacked(dist, join(dist, 'missing.wasm'))).toBe(dist)
  })

  it('leaves paths outside an asar archive, and packed-only files, unchanged', () => {
    const dev = join(root, 'node_modules', 'pkg', 'dist', 'a.wasm')
    expect(preferUnpacked(dev)).toBe(dev)
    const packedOnly = join(root, 'resources', 'app.asar', 'node_modules', 'pkg', 'index.js')
    expect(preferUnpacked(packedOnly)).toBe(packedOnly)
  })
})
