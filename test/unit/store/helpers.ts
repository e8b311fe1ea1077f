// Shared fixtures for the store tests: temp workspaces and small hand-made documents.
import { mkdtempSync, rmSync } from 'node:fs'
import { expect } from 'vitest'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CorpusDocument, Mention } from '@shared/domain'
import Database from '@core/store/sqlite'
import { SCHEMA_VERSION, Workspace } from '@core/store'

export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'fastbioner-store-'))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/** Opens a fresh workspace in a temp dir; `done()` closes and removes it. */
export function tempWorkspace(user = 'tester'): { ws: Workspace; path: string; dir: string; done: () => void } {
  const { dir, cleanup } = tempDir()
  const path = join(dir, 'ws.sqlite')
  const ws = Workspace.open(path, { user })
  return {
    ws,
    path,
    dir,
    done: () => {
      ws.close()
      cleanup()
    },
  }
}

/**
 * A migration test: a workspace made now (DOC_A imported, then `prepare`), rolled back to
 * `version` by `sql` as an older app left it, reopened for `check`; the file must end at SCHEMA_VERSION.
 */
export async function upgradedFrom(version: number, sql: string, check: (ws: Workspace) => void, prepare?: (ws: Workspace) => void): Promise<void> {
  const { dir, cleanup } = tempDir()
  try {
    const path = join(dir, `v${version}.sqlite`)
    const ws = Workspace.open(path, { user: 'u' })
    await ws.importDocuments([DOC_A], 'a')
    prepare?.(ws)
    ws.close()
    const db = new Database(path)
    db.exec(`${sql}\nDELETE FROM schema_migrations WHERE version > ${version};`)
    db.pragma(`user_version = ${version}`)
    db.close()
    const again = Workspace.open(path, { user: 'u' })
    try {
      expect(again.info().documentCount).toBe(1)
      check(again)
    } finally {
      again.close()
    }
    const after = new Database(path, { readonly: true })
    expect(after.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION)
    after.close()
  } finally {
    cleanup()
  }
}

/** Takes a workspace back from schema step 9 (deleted documents), for the tests of earlier steps. */
export const UNDO_DOCUMENT_DELETION =
  'ALTER TABLE documents DROP COLUMN deleted; ALTER TABLE documents DROP COLUMN deleted_at; ALTER TABLE documents DROP COLUMN deleted_by;'

/** A PubTator-style document; `spans` are [word, type] pairs located in the text. */
export function makeDoc(id: string, title: string, abstract: string, spans: Array<[string, string, string?]> = []): CorpusDocument {
  const text = `${title} ${abstract}`
  const mentions: Mention[] = []
  let from = 0
  for (const [word, type, conceptId] of spans) {
    const start = text.indexOf(word, from)
    if (start < 0) throw new Error(`fixture: "${word}" not in ${id}`)
    const m: Mention = { start, end: start + word.length, text: word, type }
    if (conceptId) m.conceptId = conceptId
    mentions.push(m)
    from = start + word.length
  }
  return {
    id,
    text,
    passages: [
      { type: 'title', offset: 0, length: title.length },
      { type: 'abstract', offset: title.length + 1, length: abstract.length },
    ],
    mentions,
  }
}

export const DOC_A = makeDoc(
  '1001',
  'Cystic fibrosis and the CFTR gene.',
  'Cystic fibrosis is caused by mutations in CFTR. Patients with asthma were excluded.',
  [
    ['Cystic fibrosis', 'Disease', 'D003550'],
    ['Cystic fibrosis', 'Disease', 'D003550'],
    ['CFTR', 'Gene'],
    ['asthma', 'Disease', 'D001249'],
  ],
)
export const DOC_B = makeDoc(
  '1002',
  'Beta-catenin mutations in pilomatricoma.',
  'Activating beta-catenin mutations cause a common human skin tumour treated with cisplatin.',
  [
    ['pilomatricoma', 'Disease'],
    ['skin tumour', 'Disease'],
    ['cisplatin', 'Chemical', 'D002945'],
  ],
)
export const DOC_C = makeDoc('1003', 'No entities here.', 'A plain abstract without any annotated mention.')

/** `n` small synthetic documents with ids `${prefix}${i}`. */
export function manyDocs(n: number, prefix = 'S'): CorpusDocument[] {
  return Array.from({ length: n }, (_, i) =>
    makeDoc(`${prefix}${i}`, `Synthetic title ${i} about leukemia.`, `Abstract ${i} mentions leukemia and aspirin twice: aspirin.`, [
      ['leukemia', 'Disease'],
      ['leukemia', 'Disease'],
      ['aspirin', 'Chemical'],
    ]),
  )
}
