// The README's `fastbioner …` commands (every line of its fenced code blocks) run here, in README
// order, on small fixtures, so that a README command cannot break silently (issue 27, "done
// means"). Paths in them are replaced through FIXTURES, a reviewed table: each entry says what
// stands in for the README's file. Test-only options that keep a run small (one thread, two
// steps) come from SMALL. A command this test cannot run goes in NOT_RUN with the reason; a README
// command that is neither run nor listed fails the test, and so does a stale NOT_RUN entry.
//
// No network: HF_HUB_OFFLINE is set and the Hugging Face cache is a temporary folder holding a
// tiny 4-layer BERT encoder under the README's repo id, so `get` finds it there as it does offline
// (the download itself is test/unit/hub/get.test.ts's, against a fake Hub) and `train --init
// REPO_ID` resolves it as it would a real download.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readCorpusFile, writeCorpus } from '@core/corpus'
import { useBackend } from '@core/model/backend'
import { BertTokenClassifier, makeBertConfig } from '@core/model/bert'
import { saveCheckpoint } from '@core/model/checkpoint'
import { repoFolderName } from '@core/model/hf-cache'
import { run as compare } from '../../src/cli/commands/compare'
import { run as distill } from '../../src/cli/commands/distill'
import { run as evalCmd } from '../../src/cli/commands/eval'
import { run as get } from '../../src/cli/commands/get'
import { run as tag } from '../../src/cli/commands/tag'
import { run as train } from '../../src/cli/commands/train'
import { capture } from './cli/capture'
import { syntheticVocab } from './train/synthetic'

const ROOT = resolve(__dirname, '../..')
const FIX = join(ROOT, 'test/fixtures')

/** The command modules the README's commands use (src/cli/index.ts loads them with require(), which vitest does not transform). */
const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = { compare, distill, eval: evalCmd, get, tag, train }

/** README commands not run here, exactly as written there, with the reason. */
const NOT_RUN: Record<string, string> = {}

/** Test-only options per command, appended: one onnxruntime thread, a step or two, one timing round. */
const SMALL: Record<string, string[]> = {
  tag: ['--threads', '1'],
  eval: ['--threads', '1'],
  train: ['--epochs', '1', '--max-steps', '2', '--max-length', '32', '--threads', '1'],
  distill: ['--epochs', '1', '--max-steps', '2', '--max-length', '32', '--threads', '1'],
  compare: ['--threads', '1', '--rounds', '1', '--round-pieces', '0', '--warmup', '0'],
  get: [],
}

/** Options whose values are paths: each must come from FIXTURES (or PASS_THROUGH), never the working directory. */
const PATH_OPTIONS = new Set(['--in', '--out', '--out-dir', '--gold', '--pred', '--train', '--dev', '--teacher', '--teachers', '--model', '--models', '--init', '--timing', '--calibrate', '--text'])

/** Model references kept as written, and why that is safe here. */
const PASS_THROUGH: Record<string, string> = {
  'dmis-lab/biobert-base-cased-v1.2': 'a repo id: resolved in the temporary Hugging Face cache (a tiny 4-layer encoder, no NER head, as BioBERT has none)',
}

const REPO_ID = 'dmis-lab/biobert-base-cased-v1.2'
let tmp: string
let FIXTURES: Record<string, string>
const savedEnv: Record<string, string | undefined> = {}

/** The reviewed table: the README's file or folder → what stands in for it here. */
function fixtureTable(t: string): Record<string, string> {
  return {
    // Quick start (the default model)
    'abstracts.xml': join(FIX, 'corpus/pubmed.xml'), // PubMed XML, 6 invented articles
    'tagged.pubtator': join(t, 'tagged.pubtator'),
    'pubmed-baseline/': join(t, 'pubmed-baseline/'), // a folder with that file gzipped, as the baseline's .xml.gz (beforeAll)
    'tagged/': join(t, 'tagged/'),
    'my-gold.pubtator': join(FIX, 'corpus/sample.pubtator'), // NCBI-disease's types (SpecificDisease, DiseaseClass, …)
    // BioBERT as teacher: the corpora as CoNLL (converted in beforeAll from the train fixtures)
    'train.conll': join(t, 'train.conll'),
    'dev.conll': join(t, 'dev.conll'),
    'test.conll': join(t, 'dev.conll'), // held-out stand-in: the dev fixture
    'abstracts.pubtator': join(FIX, 'e2e/abstracts.pubtator'),
    'biobert-ner': join(t, 'biobert-ner'),
    student: join(t, 'student'),
    'student-int8': join(t, 'student-int8'),
    'student-tagged.pubtator': join(t, 'student-tagged.pubtator'),
  }
}

/** `fastbioner …` lines of the README's fenced code blocks, without `npx` and trailing comments. */
function readmeCommands(markdown: string): string[] {
  const out: string[] = []
  let inBlock = false
  let pending = ''
  for (const raw of markdown.split('\n')) {
    if (/^\s*```/.test(raw)) {
      inBlock = !inBlock
      continue
    }
    if (!inBlock) continue
    const line = pending + raw.trim()
    if (line.endsWith('\\')) {
      pending = line.slice(0, -1) + ' '
      continue
    }
    pending = ''
    const m = /^(?:npx\s+)?fastbioner\s+(.*)$/.exec(line.replace(/\s+#.*$/, ''))
    if (m) out.push(`fastbioner ${m[1].trim()}`)
  }
  return out
}

/** Shell words: whitespace-separated, single and double quotes grouping (what the README uses). */
function shellWords(line: string): string[] {
  const words: string[] = []
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g
  let m: RegExpExecArray | null
  while ((m = re.exec(line))) words.push(m[1] ?? m[2] ?? m[3])
  return words
}

/** The README command's arguments with fixtures in place of its paths; throws naming any path left unmapped. */
function substitute(command: string, words: string[]): string[] {
  const args = words.map((w) => FIXTURES[w] ?? w)
  let pathOption: string | null = null
  for (const [i, a] of args.entries()) {
    if (a.startsWith('-')) {
      pathOption = PATH_OPTIONS.has(a) ? a : null
      continue
    }
    if (pathOption && !(words[i] in FIXTURES) && !(a in PASS_THROUGH)) throw new Error(`${command}: ${pathOption} ${words[i]} is not in the fixture table (FIXTURES in this test)`)
    if (pathOption !== '--models') pathOption = null
  }
  return args
}

/** Why each command cannot be run as this test runs them; [] when every one can. */
function unaccounted(list: string[]): string[] {
  const problems = Object.keys(NOT_RUN).filter((c) => !list.includes(c)).map((c) => `NOT_RUN lists a command the README no longer has: ${c}`)
  for (const c of list) {
    if (c in NOT_RUN) continue
    const [, name, ...words] = shellWords(c)
    if (!COMMANDS[name] || !SMALL[name]) {
      problems.push(`README command neither run nor listed in NOT_RUN: ${c}`)
      continue
    }
    try {
      substitute(c, words)
    } catch (e) {
      problems.push((e as Error).message)
    }
  }
  return problems
}

const README = readFileSync(join(ROOT, 'README.md'), 'utf8')
const commands = readmeCommands(README)

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'fastbioner-readme-'))
  FIXTURES = fixtureTable(tmp)
  mkdirSync(FIXTURES['pubmed-baseline/'])
  writeFileSync(join(FIXTURES['pubmed-baseline/'], 'pubmed26n0001.xml.gz'), gzipSync(readFileSync(FIXTURES['abstracts.xml'])))
  for (const [name, from] of [['train.conll', 'train/train.pubtator'], ['dev.conll', 'train/dev.pubtator']]) {
    writeFileSync(FIXTURES[name], writeCorpus((await readCorpusFile(join(FIX, from))).documents, 'conll').files[0].content)
  }
  // The Hugging Face cache: huggingface_hub's layout, refs/main → a snapshot with the model's files.
  const hub = join(tmp, 'hf', 'hub')
  const commit = '0123456789abcdef0123456789abcdef01234567'
  const repo = join(hub, repoFolderName(REPO_ID))
  mkdirSync(join(repo, 'refs'), { recursive: true })
  writeFileSync(join(repo, 'refs', 'main'), commit)
  await useBackend('wasm')
  const vocab = syntheticVocab()
  const encoder = BertTokenClassifier.random(makeBertConfig({ vocabSize: vocab.length, hiddenSize: 32, numHiddenLayers: 4, numAttentionHeads: 2, intermediateSize: 64, maxPositionEmbeddings: 64 }), 3, {})
  try {
    await saveCheckpoint(join(repo, 'snapshots', commit), encoder, vocab, { lowercase: true })
  } finally {
    encoder.dispose()
  }
  // As BioBERT's config says: a pretraining checkpoint, no token-classification head.
  const configPath = join(repo, 'snapshots', commit, 'config.json')
  writeFileSync(configPath, JSON.stringify({ ...JSON.parse(readFileSync(configPath, 'utf8')), architectures: ['BertForPreTraining'] }, null, 2))
  for (const k of ['HF_HUB_CACHE', 'HF_HOME', 'HF_HUB_OFFLINE', 'FASTBIONER_DEFAULT_MODEL']) savedEnv[k] = process.env[k]
  Object.assign(process.env, { HF_HUB_CACHE: hub, HF_HOME: join(tmp, 'hf'), HF_HUB_OFFLINE: '1' })
  delete process.env.FASTBIONER_DEFAULT_MODEL // the README's commands use the shipped default model
})

afterAll(() => {
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
  if (tmp) rmSync(tmp, { recursive: true, force: true })
})

describe('README commands', () => {
  it('are found in the README, each with a command this test can run or a reason it is not run', () => {
    expect(commands.length).toBeGreaterThanOrEqual(9)
    expect(unaccounted(commands)).toEqual([])
    // The guard itself: a command added to the README without a way to run it, or a path this
    // test has no fixture for, is reported.
    const added = readmeCommands(`${README}\n\`\`\`sh\nnpx fastbioner convert --in x.pubtator --to conll --out x.conll   # new\nnpx fastbioner tag --in other.xml --out tagged.pubtator\n\`\`\`\n`)
    expect(added).toHaveLength(commands.length + 2)
    expect(unaccounted(added)).toEqual([
      'README command neither run nor listed in NOT_RUN: fastbioner convert --in x.pubtator --to conll --out x.conll',
      'fastbioner tag --in other.xml --out tagged.pubtator: --in other.xml is not in the fixture table (FIXTURES in this test)',
    ])
  })

  it('run on the fixtures, in README order, and do what the README says', async () => {
    const results = new Map<string, { code: number; out: string; err: string; args: string[] }>()
    for (const c of commands) {
      if (c in NOT_RUN) continue
      const [, name, ...words] = shellWords(c)
      const args = [...substitute(c, words), ...SMALL[name]]
      const r = await capture(() => COMMANDS[name](args))
      expect(r.code, `${c}\n(run as: ${name} ${args.join(' ')})\n${r.err}`).toBe(0)
      results.set(c, { ...r, args })
    }
    const byName = (name: string) => [...results.entries()].filter(([c]) => shellWords(c)[1] === name).map(([, r]) => r)

    // tag: one output per run (a folder in batch mode), each input document tagged.
    const inputDocs = (await readCorpusFile(FIXTURES['abstracts.xml'])).documents.length
    for (const r of byName('tag')) {
      const out = r.args[r.args.indexOf('--out') + 1]
      if (r.args.includes('--out-dir')) {
        const dir = r.args[r.args.indexOf('--out-dir') + 1]
        const outputs = readdirSync(dir).filter((f) => !f.endsWith('.done.json'))
        expect(outputs).toHaveLength(1)
        expect((await readCorpusFile(join(dir, outputs[0]))).documents).toHaveLength(inputDocs)
      } else {
        expect(existsSync(out)).toBe(true)
        expect((await readCorpusFile(out)).documents.length).toBeGreaterThan(0)
      }
    }
    // eval with --map-types on Disease-only gold: the README says to read "shared_types".
    for (const r of byName('eval')) {
      const s = JSON.parse(r.out)
      expect(s.overall).toBeDefined()
      if (r.args.includes('--map-types')) expect(s.shared_types.types).toEqual(['Disease'])
    }
    // get finds the repo offline; --list shows it; train --init REPO_ID fine-tunes it.
    for (const r of byName('get')) expect(r.out).toContain(REPO_ID)
    const listed = byName('get').find((r) => r.args.includes('--list'))
    if (listed) expect(listed.out).toMatch(new RegExp(`^${REPO_ID}\\s+\\S+\\s+4×32\\s.*\\sno\\s`, 'm'))
    expect(existsSync(join(FIXTURES['biobert-ner'], 'model.safetensors'))).toBe(true)
    // distill --quantize writes the int8 student beside the student; compare reports all three.
    expect(existsSync(join(FIXTURES['student-int8'], 'fastbioner.json'))).toBe(true)
    for (const r of byName('compare')) for (const m of ['biobert-ner', 'student', 'student-int8']) expect(r.out).toMatch(new RegExp(`^${m}\\s`, 'm'))
  }, 120_000)
})
