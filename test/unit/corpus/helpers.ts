import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { CorpusDocument } from '@shared/domain'
import { CorpusError } from '@core/corpus'

export const FIXTURES = resolve(__dirname, '../../fixtures/corpus')

export function fixturePath(name: string): string {
  return join(FIXTURES, name)
}

export function fixture(name: string): string {
  return readFileSync(fixturePath(name), 'utf8')
}

/** Problems with a document list, as readable strings (empty when all invariants hold). */
export function inconsistencies(docs: CorpusDocument[]): string[] {
  const problems: string[] = []
  for (const d of docs) {
    if (typeof d.id !== 'string' || d.id === '') problems.push(`bad id ${JSON.stringify(d.id)}`)
    for (const m of d.mentions) {
      if (!(Number.isInteger(m.start) && Number.isInteger(m.end) && m.start >= 0 && m.start < m.end && m.end <= d.text.length)) {
        problems.push(`${d.id}: bad span ${m.start}-${m.end} (text length ${d.text.length})`)
      } else if (d.text.slice(m.start, m.end) !== m.text) {
        problems.push(`${d.id}: mention text ${JSON.stringify(m.text)} != ${JSON.stringify(d.text.slice(m.start, m.end))}`)
      }
      if (typeof m.type !== 'string' || m.type === '') problems.push(`${d.id}: empty type`)
    }
    for (const p of d.passages) {
      if (!(p.offset >= 0 && p.length >= 0 && p.offset + p.length <= d.text.length)) problems.push(`${d.id}: passage ${p.type} out of range`)
    }
    for (const [s, e] of d.tokens ?? []) {
      if (!(s >= 0 && s < e && e <= d.text.length)) problems.push(`${d.id}: token ${s}-${e} out of range`)
    }
  }
  return problems
}

export function expectConsistent(docs: CorpusDocument[]): void {
  expect(inconsistencies(docs)).toEqual([])
}

/** Runs `fn`, expects a CorpusError, and returns it. */
export function corpusError(fn: () => unknown): CorpusError {
  try {
    fn()
  } catch (error) {
    if (error instanceof CorpusError) return error
    throw new Error(`expected a CorpusError, got ${String(error)}`)
  }
  throw new Error('expected a CorpusError, but reading succeeded')
}

/** Mentions as comparable tuples, without offsets (for cross-format comparisons). */
export function mentionTexts(docs: CorpusDocument[]): Array<[string, string]> {
  return docs.flatMap((d) => d.mentions.map((m) => [m.text, m.type] as [string, string]))
}
