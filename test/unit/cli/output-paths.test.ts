// Output paths are checked before any work: never an input, never below a file, never a
// non-empty folder or an existing model unless asked (issue 11 items 2, 4, 5, 8).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { run as convertCmd } from '../../../src/cli/commands/convert'
import { run as tagCmd } from '../../../src/cli/commands/tag'
import { run as trainCmd } from '../../../src/cli/commands/train'
import { run as distillCmd } from '../../../src/cli/commands/distill'
import { run as pretrainCmd } from '../../../src/cli/commands/pretrain'
import { run as wordvecCmd } from '../../../src/cli/commands/wordvec'
import { run as compareCmd } from '../../../src/cli/commands/compare'
import { run as encodeCmd } from '../../../src/cli/commands/encode'
import { run as quantizeCmd } from '../../../src/cli/commands/quantize'
import { capture } from './capture'

const PUBTATOR = '501|t|Zorblin binds kelp.\n501|a|Grey fever follows.\n501\t0\t7\tZorblin\tGene\n\n502|t|Kelp-3 is quiet.\n\n'
const CONLL = '-DOCSTART-\tO\n\nZorblin\tB-Gene\nbinds\tO\n.\tO\n\n'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'out-paths-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

function file(name: string, content: string): string {
  const p = join(dir, name)
  writeFileSync(p, content)
  return p
}

describe('an output that is an input is refused (item 2)', () => {
  it('convert --out equal to --in, also by a relative path and through a symbolic link', async () => {
    const input = file('x.pubtator', PUBTATOR)
    const link = join(dir, 'link.pubtator')
    symlinkSync(input, link)
    for (const out of [input, relative(process.cwd(), input), link]) {
      const r = await capture(() => convertCmd(['--in', input, '--to', 'bioc-json', '--out', out]))
      expect(r.code).toBe(2)
      expect(r.err).toContain(`--out ${out}: is the input ${input}; writing there would destroy it`)
      expect(readFileSync(input, 'utf8')).toBe(PUBTATOR)
    }
  })

  it('tag --out equal to --in is refused before the model is even loaded', async () => {
    const gold = file('gold.tsv', CONLL)
    const r = await capture(() => tagCmd(['--model', join(dir, 'no-model'), '--in', gold, '--out', gold]))
    expect(r.code).toBe(2)
    expect(r.err).toContain('is the input')
    expect(readFileSync(gold, 'utf8')).toBe(CONLL)
  })
})

describe('compare and encode guard their --out as the other commands do (session 40, item 1a)', () => {
  it('compare and encode refuse an --out that is an input, before any model loads', async () => {
    const gold = file('g.pubtator', PUBTATOR)
    const c = await capture(() => compareCmd(['--models', join(dir, 'm'), '--gold', gold, '--out', gold]))
    expect(c.code).toBe(2)
    expect(c.err).toContain(`--out ${gold}: is the input ${gold}; writing there would destroy it`)
    expect(readFileSync(gold, 'utf8')).toBe(PUBTATOR)
    const ids = file('ids.json', '{"input_ids": [[1, 2]]}')
    const e = await capture(() => encodeCmd(['--model', join(dir, 'm'), '--input', ids, '--out', ids, '--force']))
    expect(e.code).toBe(2)
    expect(e.err).toContain(`--out ${ids}: is the input ${ids}`)
    expect(readFileSync(ids, 'utf8')).toBe('{"input_ids": [[1, 2]]}')
  })
})

describe("the other half of an input's brat pair is an input too (session 40, item 1b)", () => {
  it("convert and tag refuse the other half of the input's brat pair", async () => {
    const txt = file('d1.txt', 'Zorblin binds kelp.\n')
    const ann = file('d1.ann', 'T1\tGene 0 7\tZorblin\n')
    for (const run of [() => convertCmd(['--in', ann, '--to', 'pubtator', '--out', txt, '--force']), () => tagCmd(['--model', join(dir, 'm'), '--in', ann, '--format', 'pubtator', '--out', txt, '--force'])]) {
      const r = await capture(run)
      expect(r.code).toBe(2)
      expect(r.err).toContain(`--out ${txt}: is ${txt}, the other half of the input's brat pair ${ann}; writing there would destroy it`)
    }
    const back = await capture(() => convertCmd(['--in', txt, '--to', 'pubtator', '--out', ann, '--force']))
    expect(back.code).toBe(2)
    expect(back.err).toContain(`is ${ann}, the other half of the input's brat pair ${txt}`)
    expect(readFileSync(txt, 'utf8')).toBe('Zorblin binds kelp.\n')
    expect(readFileSync(ann, 'utf8')).toBe('T1\tGene 0 7\tZorblin\n')
  })
})

describe('an existing output file is kept unless --force (session 40, item 1c)', () => {
  it('an existing --out file is refused unless --force, which replaces it', async () => {
    const input = file('x.pubtator', PUBTATOR)
    const out = file('y.json', 'keep me')
    const message = `--out ${out}: the file exists; choose a new file name, or pass --force to replace it`
    const runs = [
      () => convertCmd(['--in', input, '--to', 'bioc-json', '--out', out]),
      () => tagCmd(['--model', join(dir, 'm'), '--in', input, '--out', out]),
      () => compareCmd(['--models', join(dir, 'm'), '--gold', input, '--out', out]),
      () => encodeCmd(['--model', join(dir, 'm'), '--input', file('ids.json', '{}'), '--out', out]),
    ]
    for (const run of runs) {
      const r = await capture(run)
      expect(r.code).toBe(2)
      expect(r.err).toContain(message)
      expect(readFileSync(out, 'utf8')).toBe('keep me')
    }
    const forced = await capture(() => convertCmd(['--in', input, '--to', 'bioc-json', '--out', out, '--force', '-q']))
    expect(forced.code).toBe(0)
    expect(JSON.parse(readFileSync(out, 'utf8')).documents).toHaveLength(2)
    // --force replaces a file, never an input.
    expect((await capture(() => convertCmd(['--in', input, '--to', 'pubtator', '--out', input, '--force']))).code).toBe(2)
    expect(readFileSync(input, 'utf8')).toBe(PUBTATOR)
  })

  it('each command that writes a file documents --force', async () => {
    for (const run of [convertCmd, tagCmd, compareCmd, encodeCmd]) {
      const r = await capture(() => run(['--help']))
      expect(r.out).toMatch(/--force +replace an existing --out file/)
    }
  })
})

describe('quantize --out: never the model folder nor inside it (session 40, item 6)', () => {
  it('refuses --out M and --out M/sub with exit 2, writing nothing', async () => {
    const model = join(dir, 'M')
    mkdirSync(model)
    writeFileSync(join(model, 'config.json'), '{}')
    const same = await capture(() => quantizeCmd(['--model', model, '--out', model]))
    expect(same.code).toBe(2)
    expect(same.err).toContain(`--out ${model}: is the input ${model}; writing there would destroy it`)
    const sub = join(model, 'sub')
    const inside = await capture(() => quantizeCmd(['--out', sub, '--model', model]))
    expect(inside.code).toBe(2)
    expect(inside.err).toContain(`--out ${sub}: is inside the input ${model}; writing there would change it (choose another --out)`)
    expect(readdirSync(model)).toEqual(['config.json'])
  })
})

describe('folder outputs (item 4)', () => {
  it('refuses a non-empty folder for brat and text unless --force, which replaces it as a whole', async () => {
    const input = file('x.pubtator', PUBTATOR)
    const out = join(dir, 'brat')
    mkdirSync(out)
    writeFileSync(join(out, 'other-corpus.txt'), 'not ours')
    const refused = await capture(() => convertCmd(['--in', input, '--to', 'brat', '--out', out]))
    expect(refused.code).toBe(2)
    expect(refused.err).toContain(`--out ${out}: the folder is not empty (1 entry); choose a new or empty folder, or --force to replace its contents`)
    expect(readdirSync(out)).toEqual(['other-corpus.txt'])

    const forced = await capture(() => convertCmd(['--in', input, '--to', 'text', '--out', out, '--force', '-q']))
    expect(forced.code).toBe(0)
    expect(readdirSync(out).sort()).toEqual(['501.txt', '502.txt'])
    // No temporary folder is left beside it.
    expect(readdirSync(dir).sort()).toEqual(['brat', 'x.pubtator'])
  })

  it('pretrain and wordvec offer no --force they do not have (issue 27, item 17)', async () => {
    const text = file('t.txt', 'Zorblin binds kelp.\n')
    const out = join(dir, 'taken')
    mkdirSync(out)
    writeFileSync(join(out, 'x'), '')
    const p = await capture(() => pretrainCmd(['--text', text, '--out', out]))
    expect(p.code).toBe(2)
    expect(p.err).toContain(`--out ${out}: the folder is not empty (1 entry); choose a new or empty folder, or --resume to continue the run in it\n`)
    const w = await capture(() => wordvecCmd(['--text', text, '--out', out]))
    expect(w.code).toBe(2)
    expect(w.err).toContain(`--out ${out}: the folder is not empty (1 entry); choose a new or empty folder\n`)
    for (const r of [p, w]) expect(r.err).not.toContain('--force')
  })

  it('writes into an empty folder', async () => {
    const input = file('x.pubtator', PUBTATOR)
    const out = join(dir, 'empty')
    mkdirSync(out)
    expect((await capture(() => convertCmd(['--in', input, '--to', 'brat', '--out', out, '-q']))).code).toBe(0)
    expect(readdirSync(out).sort()).toEqual(['501.ann', '501.txt', '502.ann', '502.txt'])
  })
})

describe('output paths are validated before any work (item 5)', () => {
  it('convert: --out below a file, or a folder where a file is written', async () => {
    const input = file('x.pubtator', PUBTATOR)
    const below = await capture(() => convertCmd(['--in', input, '--to', 'conll', '--out', join(input, 'sub', 'y.tsv')]))
    expect(below.code).toBe(2)
    expect(below.err).toContain(`${input} is a file, not a folder`)
    const folder = await capture(() => convertCmd(['--in', input, '--to', 'conll', '--out', dir]))
    expect(folder.code).toBe(2)
    expect(folder.err).toContain(`--out ${dir}: is a folder; give a file name`)
  })

  it('train and distill: --out a file is refused at once, before the corpora are read or a model built', async () => {
    const train = resolve(__dirname, '../../fixtures/train/train.pubtator')
    const blocker = file('model', 'a file')
    const t0 = performance.now()
    const tr = await capture(() => trainCmd(['--train', train, '--out', blocker, '--preset', 'cpu-tiny', '--epochs', '1']))
    expect(tr.code).toBe(2)
    expect(tr.err).toContain(`fastbioner train: --out ${blocker}: is a file; give a folder`)
    const below = await capture(() => trainCmd(['--train', train, '--out', join(blocker, 'm'), '--preset', 'cpu-tiny']))
    expect(below.code).toBe(2)
    expect(below.err).toContain(`${blocker} is a file, not a folder`)
    const ds = await capture(() => distillCmd(['--teacher', join(dir, 'teacher'), '--layers', '1', '--train', train, '--out', blocker]))
    expect(ds.code).toBe(2)
    expect(ds.err).toContain(`fastbioner distill: --out ${blocker}: is a file; give a folder`)
    expect(performance.now() - t0).toBeLessThan(5000)
  })
})

describe('an existing model is not replaced unless --overwrite (item 8)', () => {
  it('train refuses a folder that holds a checkpoint', async () => {
    const train = resolve(__dirname, '../../fixtures/train/train.pubtator')
    const model = join(dir, 'best-model')
    mkdirSync(model)
    writeFileSync(join(model, 'config.json'), '{}')
    writeFileSync(join(model, 'model.safetensors'), 'weights')
    const r = await capture(() => trainCmd(['--train', train, '--out', model, '--preset', 'cpu-tiny', '--epochs', '1']))
    expect(r.code).toBe(2)
    expect(r.err).toContain(`--out ${model}: already holds a model (config.json, model.safetensors); choose a new folder, or --overwrite to replace it`)
    expect(readFileSync(join(model, 'model.safetensors'), 'utf8')).toBe('weights')
    const ds = await capture(() => distillCmd(['--teacher', join(dir, 'teacher'), '--layers', '1', '--train', train, '--out', model]))
    expect(ds.code).toBe(2)
    expect(ds.err).toContain('already holds a model')
    expect(existsSync(join(model, 'fastbioner.json'))).toBe(false)
  })
})

describe('distill --out and --quantize-out: never inside a teacher folder', () => {
  it('refuses a student folder inside the teacher with exit 2, writing nothing', async () => {
    const teacher = join(dir, 'T')
    mkdirSync(teacher)
    writeFileSync(join(teacher, 'config.json'), '{}')
    const data = join(dir, 'd.tsv')
    writeFileSync(data, 'Zorblin\tB-Gene\n')
    const sub = join(teacher, 'student')
    const r = await capture(() => distillCmd(['--teacher', teacher, '--layers', '1', '--train', data, '--dev', data, '--out', sub]))
    expect(r.code).toBe(2)
    expect(r.err).toContain(`--out ${sub}: is inside the input ${teacher}; writing there would change it (choose another --out)`)
    const int8 = await capture(() => distillCmd(['--teacher', teacher, '--layers', '1', '--train', data, '--dev', data, '--out', join(dir, 'S'), '--quantize', '--quantize-out', join(teacher, 'q')]))
    expect(int8.code).toBe(2)
    expect(int8.err).toContain('is inside the input')
    expect(readdirSync(teacher)).toEqual(['config.json'])
  })
})
