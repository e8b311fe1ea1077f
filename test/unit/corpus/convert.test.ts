import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { run } from '../../../src/cli/commands/convert'
import { readCorpusFile } from '@core/corpus'
import { fixture, fixturePath } from './helpers'

/** Runs the command, capturing what it writes to stdout and stderr. */
async function convert(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk)
    return true
  })
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk)
    return true
  })
  try {
    const code = await run(argv)
    return { code, stdout, stderr }
  } finally {
    out.mockRestore()
    err.mockRestore()
  }
}

describe('fastbioner convert', () => {
  let dir: string
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'convert-'))
  })

  it('converts PubTator to CoNLL, detecting the input format', async () => {
    const out = join(dir, 'nested', 'sample.conll')
    const result = await convert('--in', fixturePath('sample.pubtator'), '--to', 'conll', '--out', out)
    expect(result.code).toBe(0)
    expect(result.stderr).toMatch(/converted 3 documents, 9 mentions: .*sample\.pubtator \(pubtator\) → .*sample\.conll \(conll\)/)
    const back = await readCorpusFile(out)
    expect(back.format).toBe('conll')
    expect(back.documents.flatMap((d) => d.mentions.map((m) => m.type))).toHaveLength(9)
  })

  it('writes brat into a directory and reads brat back to standard output', async () => {
    const brat = join(dir, 'brat')
    expect((await convert('--in', fixturePath('bioc.json'), '--from', 'bioc-json', '--to', 'brat', '--out', brat)).code).toBe(0)
    expect(readdirSync(brat).sort()).toEqual(['3000001.ann', '3000001.txt', '3000002.ann', '3000002.txt'])
    const result = await convert('--in', join(brat, '3000002.ann'), '--to', 'pubtator', '--out', '-', '--quiet')
    expect(result.code).toBe(0)
    expect(result.stderr).toBe('')
    // brat keeps no passages, so the whole text is the title.
    expect(result.stdout).toBe('3000002|t|Second document.   Its abstract starts after a gap of three spaces.\n3000002\t23\t31\tabstract\tConcept\n\n')
  })

  it('renames entity types with --map-types, warning about a source type that never occurs', async () => {
    const result = await convert('--in', fixturePath('sample.pubtator'), '--to', 'pubtator', '--out', '-', '--map-types', 'SpecificDisease,DiseaseClass,Modifier,CompositeMention=Disease;GENE=Gene')
    expect(result.code).toBe(0)
    const types = result.stdout.split('\n').filter((l) => l.split('\t').length >= 5).map((l) => l.split('\t')[4])
    expect(types).toHaveLength(9)
    expect(new Set(types)).toEqual(new Set(['Disease']))
    expect(result.stderr).toMatch(/sample\.pubtator: --map-types source type\(s\) GENE do not occur in it/)
    const bad = await convert('--in', fixturePath('sample.pubtator'), '--to', 'pubtator', '--out', '-', '--map-types', 'Disease')
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--map-types: type mapping 'Disease' is not SOURCE/)
  })

  it('reports warnings on stderr and still converts', async () => {
    const input = join(dir, 'dup.pubtator')
    writeFileSync(input, '1|t|A.\n1|a|B.\n\n1|t|C.\n1|a|D.\n')
    const result = await convert('--in', input, '--to', 'bioc-json', '--out', join(dir, 'dup.json'))
    expect(result.code).toBe(0)
    expect(result.stderr).toContain(`warning: ${input}:4: duplicate document 1`)
    expect(JSON.parse(readFileSync(join(dir, 'dup.json'), 'utf8')).documents).toHaveLength(1)
  })

  it('exits 1 naming file and line when the input is bad, writing nothing', async () => {
    const input = join(dir, 'bad.pubtator')
    writeFileSync(input, fixture('sample.pubtator').replace('\t106\t112\t', '\t106\t999\t'))
    const out = join(dir, 'bad.conll')
    const result = await convert('--in', input, '--to', 'conll', '--out', out)
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(`error: ${input}:5: mention offsets 106-999 lie outside the document text (length 202)\n`)
    expect(() => readFileSync(out)).toThrow()
    const missing = await convert('--in', join(dir, 'none.tsv'), '--to', 'conll', '--out', out)
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/none\.tsv: cannot read the file: no such file or folder \(ENOENT\)/)
  })

  it('writes the format --out names when --to is left out', async () => {
    const out = join(dir, 'sample.conll')
    const result = await convert('--in', fixturePath('sample.pubtator'), '--out', out)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toMatch(/→ .*sample\.conll \(conll\)/)
    expect((await readCorpusFile(out)).format).toBe('conll')
    const json = join(dir, 'sample.json')
    expect((await convert('--in', out, '--out', json)).code).toBe(0)
    expect((await readCorpusFile(json)).format).toBe('bioc-json')
  })

  it.each([
    [['--to', 'conll', '--out', 'x'], /--in FILE is required/],
    [['--in', 'x', '--out', 'x.txt'], /--to FORMAT is required \(--out x\.txt does not say one/],
    [['--in', 'x', '--out', 'x'], /--to FORMAT is required/],
    [['--in', 'x', '--to', 'conll'], /--out PATH is required/],
    [['--in', 'x', '--to', 'word', '--out', 'y'], /unknown --to format 'word'/],
    [['--in', 'x', '--from', 'csv', '--to', 'conll', '--out', 'y'], /unknown --from format 'csv'/],
    [['--in', 'x', '--to', 'pubmed-xml', '--out', 'y'], /pubmed-xml can be read but not written/],
    [['--in', 'x', '--to', 'brat', '--out', '-'], /--out cannot be '-'/],
    [['--in', 'x', '--to', 'conll', '--out', 'y', '--bogus'], /Unknown option '--bogus'/],
    [['--in', 'x', '--to', 'conll', '--out', 'y', '--sentences-per-document', '0'], /positive integer/],
  ])('exits 2 on usage errors: %j', async (argv, message) => {
    const result = await convert(...argv)
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(message)
    expect(result.stderr).toContain('usage: fastbioner convert')
  })

  it('prints help', async () => {
    const result = await convert('--help')
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('usage: fastbioner convert --in FILE')
  })
})
