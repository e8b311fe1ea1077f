// The teachers' tags of a transfer set, kept in the student's run folder. Tagging the recipe's
// 30 000 sentences with its nine teachers takes about 12 minutes on this machine (three of them
// read a character LM), and a stopped run paid it again at every resume. One entry per teacher,
// keyed by what decides its tags: the sentences, the head it labels for and the content
// fingerprint of its config and weights, so a retrained teacher or another sample is tagged
// afresh. The file is ours but sits in a user's folder: every entry is checked before use (one
// list per sentence, spans inside their sentence) and a file that fails is ignored with a note.

import { createHash } from 'node:crypto'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { CorpusDocument } from '../../shared/domain'
import { writeFileAtomic } from '../fs/atomic'
import { readRegularFile } from '../fs/read-regular'

export const TRANSFER_TAGS_FILE = 'transfer-tags.json'
const FORMAT = 'fastbioner-transfer-tags/1'
/** Far above the recipe's ≈ 2 MB (30 000 sentences, nine teachers); a cap, as for any file read whole. */
const MAX_BYTES = 256 * 1024 * 1024
const MAX_TYPE_CHARS = 100

type TransferMention = CorpusDocument['mentions'][number]
/** A mention as stored: [start, end, type]; its text is the sentence's slice. */
type StoredMention = [number, number, string]

/** Where labelTransferSet keeps each teacher's tags (TransferTeacher.fingerprint names the teacher). */
export interface TransferTagStore {
  /** The teacher's mentions per document, or undefined when none are stored (or they do not fit the documents). */
  get(key: string, documents: readonly CorpusDocument[]): TransferMention[][] | undefined
  put(key: string, head: string, mentions: ReadonlyArray<readonly TransferMention[]>): void
  /** Where the tags are kept, for messages. */
  readonly where: string
}

/** Digest of the documents' texts (what transferTagKey keys on besides the teacher); once per set. */
export function documentsDigest(documents: readonly CorpusDocument[]): string {
  const h = createHash('sha256')
  h.update(`${documents.length}\n`)
  for (const d of documents) h.update(`${d.text.length}:${d.text}`)
  return h.digest('hex')
}

/** What decides one teacher's tags of the documents (their documentsDigest). */
export function transferTagKey(digest: string, teacher: { head: string; teacherHead: string; fingerprint: string }): string {
  return createHash('sha256').update(`${FORMAT}\n${teacher.head}\n${teacher.teacherHead}\n${teacher.fingerprint}\n${digest}`).digest('hex')
}

interface StoredEntry {
  head: string
  mentions: StoredMention[][]
}

/** The tags in `dir`/transfer-tags.json; `warn` hears why a file present was not used. */
export function folderTransferTagStore(dir: string, warn: (line: string) => void): TransferTagStore {
  const path = join(dir, TRANSFER_TAGS_FILE)
  const entries = new Map<string, StoredEntry>()
  if (existsSync(path)) {
    try {
      const parsed = JSON.parse(readRegularFile(path, MAX_BYTES, (file, problem) => new Error(`${file}: ${problem}`)).toString('utf8')) as unknown
      if (!isRecord(parsed) || parsed.format !== FORMAT || !isRecord(parsed.entries)) throw new Error(`${path}: not a ${FORMAT} file`)
      for (const [key, e] of Object.entries(parsed.entries)) {
        if (isRecord(e) && typeof e.head === 'string' && Array.isArray(e.mentions)) entries.set(key, { head: e.head, mentions: e.mentions as StoredMention[][] })
      }
    } catch (e) {
      warn(`note: ${(e as Error).message.startsWith(path) ? '' : `${path}: `}${(e as Error).message}; the teachers tag the transfer set again`)
      entries.clear()
    }
  }
  return {
    where: path,
    get(key, documents) {
      const e = entries.get(key)
      if (!e) return undefined
      const out = mentionsOf(e.mentions, documents)
      if (!out) warn(`note: ${path}: the stored tags of head '${e.head}' do not fit its sentences; that teacher tags them again`)
      return out
    },
    put(key, head, mentions) {
      entries.set(key, { head, mentions: mentions.map((ms) => ms.map((m): StoredMention => [m.start, m.end, m.type])) })
      mkdirSync(dir, { recursive: true })
      // Rewritten whole after each teacher, so a stop between teachers keeps the ones done.
      writeFileAtomic(path, [JSON.stringify({ format: FORMAT, entries: Object.fromEntries(entries) }), '\n'])
    },
  }
}

/** The stored lists as mentions of `documents`, or undefined if any is malformed or outside its sentence. */
function mentionsOf(stored: unknown[], documents: readonly CorpusDocument[]): TransferMention[][] | undefined {
  if (stored.length !== documents.length) return undefined
  const out: TransferMention[][] = []
  for (let i = 0; i < documents.length; i++) {
    const list = stored[i]
    if (!Array.isArray(list)) return undefined
    const text = documents[i].text
    const ms: TransferMention[] = []
    for (const m of list as unknown[]) {
      if (!Array.isArray(m) || m.length !== 3) return undefined
      const [start, end, type] = m as unknown[]
      if (!Number.isInteger(start) || !Number.isInteger(end) || typeof type !== 'string') return undefined
      const s = start as number
      const e = end as number
      if (s < 0 || e <= s || e > text.length || type.length === 0 || type.length > MAX_TYPE_CHARS) return undefined
      ms.push({ start: s, end: e, type, text: text.slice(s, e) })
    }
    out.push(ms)
  }
  return out
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x)
}
