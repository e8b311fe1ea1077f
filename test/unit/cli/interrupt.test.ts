// Ctrl-C while a conversion is being written: the half-written temporary file goes with the
// process (before, a hidden .fastbioner-tmp-… of tens of MB stayed beside the output).
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { TEMP_PREFIX } from '@core/fs/atomic'

const BIN = resolve(__dirname, '../../../bin/fastbioner.js')
let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'interrupt-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const pubtator = (n: number): string =>
  Array.from({ length: n }, (_, i) => `${i + 1}|t|Zorblin binds kelp in case ${i}.\n${i + 1}|a|Grey fever follows in most of the ${i} patients seen.\n${i + 1}\t0\t7\tZorblin\tGene\n`).join('\n') + '\n'

/** Runs convert into `outDir`, interrupts it once its temporary output exists; how it ended and what is left. */
function interrupted(input: string, outDir: string, out: string): Promise<{ signal: NodeJS.Signals | null; code: number | null; left: string[] }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, 'convert', '--in', input, '--to', 'bioc-xml', '--out', join(outDir, out)], { stdio: 'ignore' })
    const poll = setInterval(() => {
      if (readdirSync(outDir).some((n) => n.startsWith(TEMP_PREFIX))) {
        clearInterval(poll)
        child.kill('SIGINT')
      }
    }, 20)
    child.on('error', fail)
    child.on('close', (code, signal) => {
      clearInterval(poll)
      done({ code, signal, left: readdirSync(outDir) })
    })
  })
}

it('convert interrupted by SIGINT mid-write: no temporary file and no output left, and it ends by the signal', async () => {
  const input = join(dir, 'big.pubtator')
  writeFileSync(input, pubtator(60000))
  const outDir = join(dir, 'out')
  mkdirSync(outDir)
  const r = await interrupted(input, outDir, 'big.xml')
  expect(r.signal).toBe('SIGINT')
  expect(r.left).toEqual([])
  expect(existsSync(join(outDir, 'big.xml'))).toBe(false)
}, 120_000)
