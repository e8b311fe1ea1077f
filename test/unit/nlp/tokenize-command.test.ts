import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { run } from '../../../src/cli/commands/tokenize'

const VOCAB = join(__dirname, '../../fixtures/nlp/vocab.txt')

async function capture(argv: string[]) {
  let stdout = ''
  let stderr = ''
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => ((stdout += String(chunk)), true))
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => ((stderr += String(chunk)), true))
  try {
    const code = await run(argv)
    return { code, stdout, stderr }
  } finally {
    out.mockRestore()
    err.mockRestore()
  }
}

describe('fastbioner tokenize', () => {
  it('prints tokens, ids and offsets as JSON', async () => {
    const r = await capture(['--vocab', VOCAB, '--uncased', '--text', 'IL-2 Café'])
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
    expect(JSON.parse(r.stdout)).toEqual({
      tokens: ['il', '-', '2', 'cafe'],
      ids: [77, 17, 44, 88],
      offsets: [[0, 2], [2, 3], [3, 4], [5, 9]],
    })
  })

  it('is cased without --uncased', async () => {
    const r = await capture(['--vocab', VOCAB, '--text', 'IL-2'])
    expect(JSON.parse(r.stdout).tokens).toEqual(['IL', '-', '2'])
  })

  it('follows do_lower_case of the tokenizer_config.json beside the vocabulary (issue 11, item 10)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tok-'))
    try {
      copyFileSync(VOCAB, join(dir, 'vocab.txt'))
      writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ do_lower_case: true }))
      const r = await capture(['--vocab', join(dir, 'vocab.txt'), '--text', 'IL-2 Café'])
      expect(r.code).toBe(0)
      expect(JSON.parse(r.stdout).tokens).toEqual(['il', '-', '2', 'cafe'])
      // --cased still forces case to be kept.
      expect(JSON.parse((await capture(['--vocab', join(dir, 'vocab.txt'), '--cased', '--text', 'IL-2'])).stdout).tokens).toEqual(['IL', '-', '2'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('names a missing vocab file on stderr and exits 1', async () => {
    const r = await capture(['--vocab', 'no/such/vocab.txt', '--text', 'x'])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain('no/such/vocab.txt')
  })

  it('refuses a device, a FIFO or a folder as the vocabulary instead of aborting or hanging (session 40, item 5)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tok-'))
    try {
      const fifo = join(dir, 'fifo')
      execFileSync('mkfifo', [fifo])
      for (const [path, what] of [['/dev/zero', 'a device'], [fifo, 'a FIFO (named pipe)'], [dir, 'a folder']] as const) {
        const r = await capture(['--vocab', path, '--text', 'x'])
        expect(r.code).toBe(1)
        expect(r.stderr).toBe(`fastbioner tokenize: vocab file ${path}: is ${what}, not a regular file\n`)
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('exits 2 on usage errors', async () => {
    expect((await capture(['--text', 'x'])).code).toBe(2)
    expect((await capture(['--vocab', VOCAB])).stderr).toContain('--text')
    expect((await capture(['--vocab', VOCAB, '--text', 'x', '--bogus'])).code).toBe(2)
    expect((await capture(['--help'])).code).toBe(0)
  })
})
