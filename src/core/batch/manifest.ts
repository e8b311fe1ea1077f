// Completion records for batch tagging: one small JSON file beside each output.
//
// A task can be killed at any moment (preemption, time limit, SIGKILL). The output is written to
// a temporary file and renamed; only then is its record written (also atomically). So an output
// counts as done exactly when its record exists and still matches: same input bytes, same model,
// same output bytes. Anything else is redone on the next run. One record per output (rather than
// one shared manifest) means concurrent tasks never write the same file.

import { createHash } from 'node:crypto'
import { createReadStream, existsSync, readFileSync } from 'node:fs'
import { writeFileAtomic } from '../fs/atomic'

export const RECORD_SUFFIX = '.done.json'
export const RECORD_VERSION = 1

export interface CompletionRecord {
  version: typeof RECORD_VERSION
  input: string
  inputSha256: string
  inputBytes: number
  output: string
  outputSha256: string
  outputBytes: number
  /** Fingerprint of the model (weights + config + tagging options) that produced the output. */
  model: string
  format: string
  documents: number
  mentions: number
  /** Records of the input that could not be read (named in `problems`), still counted as done. */
  skipped: number
  problems: string[]
  /**
   * PMIDs the input deletes (PubMed update files' <DeleteCitation>): a coordinator drops them
   * from earlier outputs. A revised record is simply tagged again in the later file, whose
   * version supersedes the earlier one (PubMed's rule: the latest file wins).
   */
  deleted?: string[]
  /**
   * Records left out on purpose (file:line: why): a PMID found twice in the file keeps only its
   * highest <PMID Version>, else its last record; an article with neither title nor abstract.
   */
  warnings?: string[]
  startedAt: string
  finishedAt: string
  seconds: number
}

export function recordPathOf(output: string): string {
  return output + RECORD_SUFFIX
}

/** sha256 and size of a file (or of several, one after the other), streamed (inputs can be hundreds of MB). */
export async function fileDigest(...paths: string[]): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256')
  let bytes = 0
  for (const path of paths) {
    for await (const chunk of createReadStream(path)) {
      hash.update(chunk as Buffer)
      bytes += (chunk as Buffer).length
    }
  }
  return { sha256: hash.digest('hex'), bytes }
}

/** The files an input's output depends on: the input, and for a brat .txt its .ann (the pair is one input). */
export function inputFilesOf(input: string): string[] {
  const ann = /\.txt$/i.test(input) ? input.slice(0, -4) + '.ann' : null
  return ann !== null && existsSync(ann) ? [input, ann] : [input]
}

export function readRecord(output: string): CompletionRecord | null {
  const path = recordPathOf(output)
  if (!existsSync(path)) return null
  try {
    const r = JSON.parse(readFileSync(path, 'utf8')) as CompletionRecord
    return r.version === RECORD_VERSION ? r : null
  } catch {
    return null
  }
}

export function writeRecord(record: CompletionRecord): void {
  writeFileAtomic(recordPathOf(record.output), [JSON.stringify(record, null, 2) + '\n'])
}

export type Completeness = { done: true; record: CompletionRecord } | { done: false; reason: string }

/** Whether `output` is a finished result of `input` under `model`; the reason when not. */
export async function checkComplete(input: string, output: string, model: string): Promise<Completeness> {
  const record = readRecord(output)
  if (!record) return { done: false, reason: 'no completion record' }
  if (!existsSync(output)) return { done: false, reason: 'output missing' }
  if (record.model !== model) return { done: false, reason: 'made by another model' }
  const [inp, out] = await Promise.all([fileDigest(...inputFilesOf(input)), fileDigest(output)])
  if (inp.sha256 !== record.inputSha256) return { done: false, reason: 'input changed' }
  if (out.sha256 !== record.outputSha256) return { done: false, reason: 'output changed or damaged' }
  return { done: true, record }
}
