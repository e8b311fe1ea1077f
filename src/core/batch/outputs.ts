// Where batch tagging writes the result of each input: one output per input file, same base
// name, the extension of the output format, `.gz` kept when the input was gzipped (PubMed
// baseline files are `pubmed25n0001.xml.gz` → `pubmed25n0001.pubtator.gz`).

import { realpathSync, statSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import type { CorpusFormat } from '@shared/domain'

const EXTENSION: Partial<Record<CorpusFormat, string>> = {
  pubtator: '.pubtator',
  conll: '.conll',
  'bioc-json': '.bioc.json',
  'bioc-xml': '.bioc.xml',
}

/** Formats that write a single file per input (brat and text write folders). */
export const BATCH_FORMATS = Object.keys(EXTENSION) as CorpusFormat[]

export function outputNameFor(input: string, format: CorpusFormat): string {
  const ext = EXTENSION[format]
  if (!ext) throw new RangeError(`batch tagging writes one file per input: ${format} is not one of ${BATCH_FORMATS.join(', ')}`)
  let name = basename(input)
  const gz = /\.gz$/i.test(name)
  if (gz) name = name.slice(0, -3)
  name = name.replace(/\.(bioc\.json|bioc\.xml|[^.]+)$/i, '') || 'corpus'
  return name + ext + (gz ? '.gz' : '')
}

/**
 * Output paths for all inputs (the whole input set, not one shard, so that every task detects
 * the same collision): two inputs that would write the same output, or an output that would
 * overwrite an input, are an error naming both. Paths are compared case-insensitively: on macOS
 * and Windows `A.xml` and `a.xml` are one file, and an output must not depend on where it runs.
 */
export function planOutputs(inputs: readonly string[], outDir: string, format: CorpusFormat): Map<string, string> {
  const key = (p: string): string => resolve(p).toLowerCase()
  const inputByKey = new Map(inputs.map((i) => [key(i), i]))
  const byOutput = new Map<string, string>()
  const plan = new Map<string, string>()
  for (const input of inputs) {
    const out = join(outDir, outputNameFor(input, format))
    const k = key(out)
    const overwritten = inputByKey.get(k)
    if (overwritten === input) throw new RangeError(`${input}: the output would overwrite the input; choose another --out-dir or --format`)
    if (overwritten !== undefined) throw new RangeError(`${input} would be written to ${out}, overwriting the input ${overwritten}; choose another --out-dir`)
    const other = byOutput.get(k)
    if (other !== undefined && other !== input) throw new RangeError(`${input} and ${other} would both be written to ${out}; rename one or tag them into different --out-dir folders`)
    byOutput.set(k, input)
    plan.set(input, out)
  }
  return plan
}

/**
 * --out-dir must not be one of the --in folders: its outputs and completion records would become
 * inputs of the next run, which then fails or tags its own output (resume defeated).
 */
export function checkOutDirNotInput(inputPaths: readonly string[], outDir: string): void {
  const real = (p: string): string | null => {
    try {
      return statSync(p).isDirectory() ? realpathSync(p) : null
    } catch {
      return null
    }
  }
  const out = real(outDir)
  if (out === null) return
  for (const p of inputPaths) {
    if (real(p) === out) throw new RangeError(`--out-dir ${outDir} is the --in folder ${p}: its outputs would be read as inputs on the next run; choose another --out-dir (a subfolder is fine)`)
  }
}
