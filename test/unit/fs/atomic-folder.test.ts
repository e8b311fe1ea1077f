// A folder written document by document (convert --to brat/text): memory must not hold the
// corpus, and the folder must never be seen half written, nor an old one lost on failure.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { populateFolderAtomic, TEMP_PREFIX, writeFolderAtomicStream } from '@core/fs/atomic'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'atomic-folder-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const tempFolders = () => readdirSync(dir).filter((n) => n.startsWith(TEMP_PREFIX))

describe('writeFolderAtomicStream', () => {
  it('writes each file as it arrives into a hidden folder that becomes the output only at the end', async () => {
    const out = join(dir, 'brat')
    const seen: string[][] = []
    async function* files() {
      for (let i = 0; i < 3; i++) {
        // The files yielded before this one are on disk already (nothing kept in memory) …
        const tmp = tempFolders()
        expect(tmp).toHaveLength(1)
        seen.push(readdirSync(join(dir, tmp[0])).sort())
        // … and the output itself does not exist yet.
        expect(existsSync(out)).toBe(false)
        yield { name: `d${i}.txt`, content: `doc ${i}\n` }
      }
    }
    expect(await writeFolderAtomicStream(out, files())).toBe(3)
    expect(seen).toEqual([[], ['d0.txt'], ['d0.txt', 'd1.txt']])
    expect(readdirSync(out).sort()).toEqual(['d0.txt', 'd1.txt', 'd2.txt'])
    expect(readFileSync(join(out, 'd2.txt'), 'utf8')).toBe('doc 2\n')
    expect(tempFolders()).toEqual([])
  })

  it('a failure half way leaves the previous folder as it was and no temporary folder', async () => {
    const out = join(dir, 'brat')
    mkdirSync(out)
    writeFileSync(join(out, 'old.txt'), 'keep me\n')
    async function* files() {
      yield { name: 'new.txt', content: 'new\n' }
      throw new Error('bad record at line 7')
    }
    await expect(writeFolderAtomicStream(out, files())).rejects.toThrow('bad record at line 7')
    expect(readdirSync(out)).toEqual(['old.txt'])
    expect(readFileSync(join(out, 'old.txt'), 'utf8')).toBe('keep me\n')
    expect(tempFolders()).toEqual([])
  })

  it('replaces an existing folder whole once complete', async () => {
    const out = join(dir, 'text')
    mkdirSync(out)
    writeFileSync(join(out, 'stale.txt'), 'x')
    async function* files() {
      yield { name: 'a.txt', content: 'a\n' }
    }
    await writeFolderAtomicStream(out, files())
    expect(readdirSync(out)).toEqual(['a.txt'])
    expect(tempFolders()).toEqual([])
  })
})

describe('populateFolderAtomic', () => {
  it('the writer fills a hidden folder that becomes the output only when it has finished', async () => {
    const out = join(dir, 'model')
    await populateFolderAtomic(out, async (tmp) => {
      expect(tmp).not.toBe(out)
      expect(existsSync(out)).toBe(false)
      writeFileSync(join(tmp, 'config.json'), '{}\n')
    })
    expect(readdirSync(out)).toEqual(['config.json'])
    expect(tempFolders()).toEqual([])
  })

  it('a writer that fails leaves no output and no temporary folder', async () => {
    const out = join(dir, 'model')
    await expect(
      populateFolderAtomic(out, async (tmp) => {
        writeFileSync(join(tmp, 'model.safetensors'), 'half')
        throw new Error('disk full')
      }),
    ).rejects.toThrow('disk full')
    expect(existsSync(out)).toBe(false)
    expect(tempFolders()).toEqual([])
  })
})
