// Every command parses through runCommand (its table plus -q/--quiet and -h/--help), and the
// option groups shared by train, distill and pretrain are checked by one parser each.
import { describe, expect, it } from 'vitest'
import { run as compare } from '../../../src/cli/commands/compare'
import { run as convert } from '../../../src/cli/commands/convert'
import { run as distill } from '../../../src/cli/commands/distill'
import { run as encode } from '../../../src/cli/commands/encode'
import { run as evaluate } from '../../../src/cli/commands/eval'
import { run as pretrain } from '../../../src/cli/commands/pretrain'
import { run as quantize } from '../../../src/cli/commands/quantize'
import { run as tag } from '../../../src/cli/commands/tag'
import { run as train } from '../../../src/cli/commands/train'
import { run as wordvec } from '../../../src/cli/commands/wordvec'
import { run as charlm } from '../../../src/cli/commands/charlm'
import { capture } from './capture'

// (src/cli/index.ts loads commands with require(), which vitest does not transform)
const RUN: Record<string, (argv: string[]) => Promise<number>> = { charlm, compare, convert, distill, encode, eval: evaluate, pretrain, quantize, tag, train, wordvec }
const COMMANDS = Object.keys(RUN)
const main = ([cmd, ...argv]: string[]) => RUN[cmd](argv)

describe('every command', () => {
  it.each(COMMANDS)('%s: --help, -h and -q --help print its usage on standard output', async (cmd) => {
    for (const help of [['--help'], ['-h'], ['-q', '--help']]) {
      const r = await capture(() => main([cmd, ...help]))
      expect(r.code).toBe(0)
      expect(r.out).toMatch(new RegExp(`^usage: fastbioner ${cmd} `))
      expect(r.err).toBe('')
    }
  })

  it.each(COMMANDS)('%s: an unknown option is a usage error naming it, with the usage text', async (cmd) => {
    const r = await capture(() => main([cmd, '--no-such-option']))
    expect(r.code).toBe(2)
    expect(r.out).toBe('')
    expect(r.err).toMatch(new RegExp(`^fastbioner ${cmd}: .*'--no-such-option'`))
    expect(r.err).toContain(`\n\nusage: fastbioner ${cmd} `)
  })
})

describe('shared option groups', () => {
  const missing = '/nonexistent/corpus.txt'

  it.each([
    ['train', ['--train', missing, '--out', '/nonexistent/out']],
    ['pretrain', ['--text', missing, '--out', '/nonexistent/out']],
  ])('%s checks --lr, --epochs and --seed as a training run', async (cmd, args) => {
    for (const [flag, value, message] of [
      ['--lr', '2', "--lr must be a number in (0, 1), got '2'"],
      ['--epochs', '0', "--epochs must be an integer >= 1, got '0'"],
      ['--seed', '1.5', "--seed must be an integer >= 0, got '1.5'"],
    ]) {
      const r = await capture(() => main([cmd, ...args, flag, value]))
      expect(r.code).toBe(2)
      expect(r.err).toContain(`fastbioner ${cmd}: ${message}\n`)
    }
  })

  it('pretrain needs 8 pieces per sequence where train takes 3', async () => {
    const pre = await capture(() => main(['pretrain', '--text', missing, '--out', '/nonexistent/out', '--max-length', '4']))
    expect(pre.code).toBe(2)
    expect(pre.err).toContain("--max-length must be an integer >= 8, got '4'")
    const tr = await capture(() => main(['train', '--train', missing, '--out', '/nonexistent/out', '--max-length', '2']))
    expect(tr.code).toBe(2)
    expect(tr.err).toContain("--max-length must be an integer >= 3, got '2'")
  })

  it.each([
    ['train', []],
    ['distill', ['--teacher', '/nonexistent/teacher', '--layers', '2', '--out', '/nonexistent/out']],
  ])('%s refuses --train together with --task', async (cmd, args) => {
    const r = await capture(() => main([cmd, ...args, '--train', missing, '--task', `a=${missing}`, '--out', '/nonexistent/out']))
    expect(r.code).toBe(2)
    expect(r.err).toContain(`fastbioner ${cmd}: give either --train/--dev or --task, not both\n`)
  })
})
