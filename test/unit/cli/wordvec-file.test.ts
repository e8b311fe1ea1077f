// `fastbioner wordvec --vec FILE`: the vectors of a small text, written into a folder that did not
// exist yet (it failed there after fastText's minutes, with a bare ENOENT).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { run as wordvec } from '../../../src/cli/commands/wordvec'
import { capture } from './capture'

const dir = mkdtempSync(join(tmpdir(), 'wordvec-cli-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('fastbioner wordvec --vec', () => {
  it('writes the vectors, most frequent word first, into a folder it makes', async () => {
    const text = join(dir, 'text.txt')
    writeFileSync(text, Array.from({ length: 200 }, (_, i) => `aspirin reduces fever ${i % 2 ? 'and pain' : 'in children'} .`).join('\n') + '\n')
    const vec = join(dir, 'new', 'sub', 'words.vec')
    const r = await capture(() => wordvec(['--text', text, '--vec', vec, '--dim', '8', '--epochs', '1', '--min-count', '1', '-q']))
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    expect(existsSync(vec)).toBe(true)
    const lines = readFileSync(vec, 'utf8').trim().split('\n')
    const [count, dim] = lines[0].split(' ').map(Number)
    expect(dim).toBe(8)
    expect(lines.length).toBe(count + 1)
    expect(lines[1].split(' ')).toHaveLength(9)
    expect(lines.slice(1).map((l) => l.split(' ')[0])).toContain('aspirin')
  })
})
