// Bounded fuzzing: every reader either returns consistent documents or throws CorpusError.
// The seed is printed; rerun a failure with CORPUS_FUZZ_SEED=<seed> (and CORPUS_FUZZ_CASES=<n>).
import { CorpusError, parseCorpusText, readBrat, readCorpusBuffer, writeCorpus, WRITABLE_FORMATS } from '@core/corpus'
import type { CorpusDocument, CorpusFormat } from '@shared/domain'
import { fixture, inconsistencies } from './helpers'
import { Rng } from '@core/rng'

const SEED = Number(process.env.CORPUS_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 32))
const CASES = Number(process.env.CORPUS_FUZZ_CASES ?? 300)

function prng(seed: number): () => number {
  const r = new Rng(seed)
  return () => r.next()
}

const SAMPLES: Array<{ format: CorpusFormat; name: string; content: string; companion?: string }> = [
  { format: 'pubtator', name: 'sample.pubtator', content: fixture('sample.pubtator') },
  { format: 'conll', name: 'sample.conll', content: fixture('sample.conll') },
  { format: 'conll', name: 'spaces.conll', content: fixture('spaces.conll') },
  { format: 'pubmed-xml', name: 'pubmed.xml', content: fixture('pubmed.xml') },
  { format: 'bioc-xml', name: 'bioc.xml', content: fixture('bioc.xml') },
  { format: 'bioc-json', name: 'bioc.json', content: fixture('bioc.json') },
  { format: 'brat', name: 'report.ann', content: fixture('brat/report.ann'), companion: fixture('brat/report.txt') },
  { format: 'text', name: 'note.txt', content: fixture('note.txt') },
]

const ALPHABET = ['\t', '\n', '\r', ' ', '|', '<', '>', '/', '"', '{', '}', '[', ']', ',', ':', ';', '-', '&', '0', '1', '9', 'B-', 'I-', 'O', 'T1', '|t|', '|a|', 'é', '\uD83E', '\uDDEC', '😀', '\u0000', '-DOCSTART-']

function mutate(content: string, rnd: () => number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)]!
  const at = (): number => Math.floor(rnd() * (content.length + 1))
  let s = content
  const rounds = 1 + Math.floor(rnd() * 3)
  for (let r = 0; r < rounds; r++) {
    const kind = Math.floor(rnd() * 7)
    if (kind === 0) {
      // delete a few characters
      const i = at()
      s = s.slice(0, i) + s.slice(i + 1 + Math.floor(rnd() * 8))
    } else if (kind === 1) {
      // insert format-significant characters
      const i = at()
      s = s.slice(0, i) + pick(ALPHABET) + s.slice(i)
    } else if (kind === 2) {
      // swap two lines
      const lines = s.split('\n')
      const a = Math.floor(rnd() * lines.length)
      const b = Math.floor(rnd() * lines.length)
      ;[lines[a], lines[b]] = [lines[b]!, lines[a]!]
      s = lines.join('\n')
    } else if (kind === 3) {
      // shift a number (offsets, lengths)
      const numbers = [...s.matchAll(/\d+/g)]
      if (numbers.length > 0) {
        const m = pick(numbers)
        const shifted = Math.max(0, Number(m[0]) + Math.floor(rnd() * 21) - 10)
        s = s.slice(0, m.index) + String(rnd() < 0.1 ? shifted * 1000 : shifted) + s.slice(m.index! + m[0].length)
      }
    } else if (kind === 4) {
      // truncate
      s = s.slice(0, at())
    } else if (kind === 5) {
      // duplicate a line
      const lines = s.split('\n')
      const a = Math.floor(rnd() * lines.length)
      lines.splice(a, 0, lines[a]!)
      s = lines.join('\n')
    } else {
      // replace a character with an arbitrary code unit (lone surrogates included)
      const i = Math.floor(rnd() * s.length)
      s = s.slice(0, i) + String.fromCharCode(Math.floor(rnd() * 0x10000)) + s.slice(i + 1)
    }
  }
  return s
}

type Outcome = { ok: true; docs: CorpusDocument[] } | { ok: false; error: unknown }

function attempt(fn: () => CorpusDocument[]): Outcome {
  try {
    return { ok: true, docs: fn() }
  } catch (error) {
    return { ok: false, error }
  }
}

describe('corpus fuzzing', () => {
  it(`never throws anything but CorpusError and never returns inconsistent documents (${CASES} cases)`, () => {
    // eslint-disable-next-line no-console
    console.log(`corpus fuzz seed: ${SEED} (rerun with CORPUS_FUZZ_SEED=${SEED})`)
    const rnd = prng(SEED)
    const failures: string[] = []
    const stats = { parsed: 0, rejected: 0, roundTripped: 0 }

    for (let c = 0; c < CASES && failures.length < 5; c++) {
      let label: string
      let outcome: Outcome
      let format: CorpusFormat | undefined
      let name: string
      if (rnd() < 0.15) {
        // Random bytes, with a random (or no) format.
        const bytes = Buffer.from(Array.from({ length: Math.floor(rnd() * 200) }, () => Math.floor(rnd() * 256)))
        format = rnd() < 0.3 ? undefined : WRITABLE_FORMATS.filter((f) => f !== 'brat')[Math.floor(rnd() * 5)]
        name = `random${[' .pubtator', '.tsv', '.xml', '.json', '.txt', ''][Math.floor(rnd() * 6)]!.trim()}`
        label = `case ${c}: random bytes ${bytes.toString('base64')} as ${format ?? 'detected'} (${name})`
        outcome = attempt(() => readCorpusBuffer(bytes, name, format).documents)
      } else {
        const sample = SAMPLES[Math.floor(rnd() * SAMPLES.length)]!
        format = sample.format
        name = sample.name
        const mutateCompanion = sample.companion !== undefined && rnd() < 0.3
        const content = mutateCompanion ? sample.content : mutate(sample.content, rnd)
        const companion = sample.companion !== undefined && mutateCompanion ? mutate(sample.companion, rnd) : sample.companion
        label = `case ${c}: mutated ${name}: ${JSON.stringify(content)}${companion !== undefined ? ` with .txt ${JSON.stringify(companion)}` : ''}`
        outcome = attempt(() => (format === 'brat' ? readBrat(companion!, content, name).documents : parseCorpusText(content, name, format).documents))
      }

      if (!outcome.ok) {
        if (!(outcome.error instanceof CorpusError)) failures.push(`${label}\n  threw ${String(outcome.error)}\n${(outcome.error as Error)?.stack ?? ''}`)
        else if (!/^.+: .+/.test(outcome.error.message) || outcome.error.issues.length === 0) failures.push(`${label}\n  CorpusError without file/message: ${outcome.error.message}`)
        stats.rejected++
        continue
      }
      stats.parsed++
      const problems = inconsistencies(outcome.docs)
      if (problems.length > 0) {
        failures.push(`${label}\n  inconsistent: ${problems.slice(0, 3).join('; ')}`)
        continue
      }
      // What was read can be written in the same format and read back.
      const writeFormat = format && WRITABLE_FORMATS.includes(format) && format !== 'text' ? format : 'bioc-json'
      const again = attempt(() => {
        const { files } = writeCorpus(outcome.docs, writeFormat)
        if (writeFormat !== 'brat') return files.length === 0 ? [] : parseCorpusText(files[0]!.content, `again.${writeFormat}`, writeFormat).documents
        return files.flatMap((f, i) => (i % 2 === 0 ? readBrat(f.content, files[i + 1]!.content, 'again.ann').documents : []))
      })
      if (!again.ok) {
        // An empty corpus cannot be written and read back (an empty file is an error): fine.
        const empty = outcome.docs.every((d) => d.text.trim() === '')
        if (!(again.error instanceof CorpusError) || !empty) failures.push(`${label}\n  re-reading its ${writeFormat} output threw ${String(again.error)}`)
        continue
      }
      const reproblems = inconsistencies(again.docs)
      if (reproblems.length > 0) failures.push(`${label}\n  re-read ${writeFormat} inconsistent: ${reproblems.slice(0, 3).join('; ')}`)
      else stats.roundTripped++
    }

    expect(failures, `seed ${SEED}:\n${failures.join('\n\n')}`).toEqual([])
    // The mutations must exercise both paths, or the test proves little.
    expect(stats.parsed).toBeGreaterThan(CASES / 20)
    expect(stats.rejected).toBeGreaterThan(CASES / 20)
  })
})
