// A reader that stops early closes the pipe: the CLI stops quietly with exit code 0, whatever the
// command (session 40, item 3; before, a stack trace and exit 1, or tfjs source and exit 7).
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { saveTinyModel } from './tiny-model'

const BIN = resolve(__dirname, '../../../bin/fastbioner.js')
let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'epipe-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Runs the CLI, closes its standard output after the first chunk; its exit code and standard error. */
function headOne(args: string[]): Promise<{ code: number | null; err: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let err = ''
    child.stderr.on('data', (c: Buffer) => (err += c.toString()))
    child.stdout.once('data', () => child.stdout.destroy())
    child.on('error', fail)
    child.on('close', (code) => done({ code, err }))
  })
}

const pubtator = (n: number): string => Array.from({ length: n }, (_, i) => `${i + 1}|t|Zorblin binds kelp in case ${i}.\n${i + 1}\t0\t7\tZorblin\tGene\n`).join('\n') + '\n'

it('convert --out - into a pipe closed early: exit 0, nothing on standard error', async () => {
  const input = join(dir, 'big.pubtator')
  writeFileSync(input, pubtator(20000))
  const r = await headOne(['convert', '--in', input, '--to', 'bioc-xml', '--out', '-'])
  expect(r.err).toBe('')
  expect(r.code).toBe(0)
}, 60_000)

it('tag --out - (one write of the whole output, after tfjs has loaded): the same', async () => {
  const model = await saveTinyModel(dir)
  const input = join(dir, 'mid.pubtator')
  writeFileSync(input, pubtator(3000))
  const r = await headOne(['tag', '--model', model, '--in', input, '--out', '-', '-q'])
  expect(r.err).toBe('')
  expect(r.code).toBe(0)
}, 120_000)
