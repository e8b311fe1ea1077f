import Database from '@core/store/sqlite'
import type { CorpusDocument } from '@shared/domain'
import { StoreError, Workspace } from '@core/store'
import { DOC_A, DOC_B, DOC_C, makeDoc, manyDocs, tempWorkspace } from './helpers'

function counts(path: string): { documents: number; annotations: number; revisions: number; fts: number } {
  const db = new Database(path, { readonly: true })
  try {
    const n = (t: string) => (db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n
    return { documents: n('documents'), annotations: n('annotations'), revisions: n('revisions'), fts: n('documents_fts') }
  } finally {
    db.close()
  }
}

async function rejection(p: Promise<unknown>): Promise<StoreError> {
  try {
    await p
  } catch (e) {
    expect(e).toBeInstanceOf(StoreError)
    return e as StoreError
  }
  throw new Error('expected a rejection')
}

describe('Workspace.importDocuments', () => {
  let t: ReturnType<typeof tempWorkspace>
  beforeEach(() => {
    t = tempWorkspace('importer')
  })
  afterEach(() => t.done())

  it('imports documents with gold mentions as accepted gold annotations', async () => {
    const r = await t.ws.importDocuments([DOC_A, DOC_B, DOC_C], '/data/x.pubtator')
    expect(r).toEqual({ imported: 3, duplicates: [], conflicts: [], reimported: [] })
    const list = t.ws.listDocuments({})
    expect(list.total).toBe(3)
    const a = list.documents.find((d) => d.externalId === '1001')!
    expect(a).toMatchObject({
      title: 'Cystic fibrosis and the CFTR gene.',
      status: 'unreviewed',
      annotationCount: 4,
      types: ['Disease', 'Gene'],
      sourceFile: '/data/x.pubtator',
    })
    const detail = t.ws.getDocument(a.id)
    expect(detail.text).toBe(DOC_A.text)
    expect(detail.passages).toEqual(DOC_A.passages)
    expect(detail.tokens).toBeNull()
    expect(detail.annotations.map((x) => [x.start, x.end, x.type, x.conceptId, x.origin, x.state, x.updatedBy])).toEqual(
      DOC_A.mentions.map((m) => [m.start, m.end, m.type, m.conceptId ?? null, 'gold', 'accepted', 'importer']),
    )
    expect(t.ws.entityTypes()).toEqual(['Chemical', 'Disease', 'Gene'])
  })

  it('keeps tokens of pre-tokenised documents', async () => {
    const doc: CorpusDocument = { ...DOC_C, id: 'tok', tokens: [[0, 2], [3, 11]] }
    await t.ws.importDocuments([doc], null)
    const id = t.ws.listDocuments({}).documents[0]!.id
    expect(t.ws.getDocument(id).tokens).toEqual([[0, 2], [3, 11]])
    expect(t.ws.exportDocuments([id])[0]!.tokens).toEqual([[0, 2], [3, 11]])
  })

  it('skips and reports duplicates from the workspace and from the batch itself, apart from ids taken by another text', async () => {
    await t.ws.importDocuments([DOC_A], 'first')
    const r = await t.ws.importDocuments(
      [DOC_B, DOC_A, DOC_C, { ...DOC_B, text: `${DOC_B.text} changed` }, { ...DOC_A, text: `${DOC_A.text} (v2)` }, DOC_C],
      'second',
    )
    expect(r).toEqual({ imported: 2, duplicates: ['1001', '1003'], conflicts: ['1002', '1001'], reimported: [] })
    expect(t.ws.info().documentCount).toBe(3)
    const b = t.ws.listDocuments({ query: '1002' }).documents[0]!
    expect(t.ws.getDocument(b.id).text).toBe(DOC_B.text) // the first occurrence wins
    // The duplicate's mentions were not added either.
    expect(counts(t.path).annotations).toBe(DOC_A.mentions.length + DOC_B.mentions.length)
  })

  it('is all-or-nothing: a bad document mid-way leaves nothing behind', async () => {
    await t.ws.importDocuments([DOC_A], 'first')
    const before = counts(t.path)
    const docs = manyDocs(600)
    const bad = docs[450]!
    docs[450] = { ...bad, mentions: [...bad.mentions, { start: 5, end: bad.text.length + 3, text: 'x', type: 'Disease' }] }
    const err = await rejection(t.ws.importDocuments(docs, 'bad.pubtator'))
    expect(err.code).toBe('invalid_request')
    expect(err.message).toMatch(/document 451 of bad\.pubtator \(S450\): mention 4/)
    expect(counts(t.path)).toEqual(before)
    expect(t.ws.listDocuments({ query: 'S1' }).total).toBe(0)
    // The workspace stays usable.
    expect(await t.ws.importDocuments(manyDocs(3), 'ok')).toEqual({ imported: 3, duplicates: [], conflicts: [], reimported: [] })
  })

  it('is all-or-nothing: an exception injected mid-import (progress callback) rolls everything back', async () => {
    const before = counts(t.path)
    const err = t.ws.importDocuments(manyDocs(2000), 'x', {
      onProgress: (done) => {
        if (done === 1500) throw new Error('injected failure')
      },
    })
    await expect(err).rejects.toThrow('injected failure')
    expect(counts(t.path)).toEqual(before)
  })

  it('rolls back when cancelled through the AbortSignal, and reports progress', async () => {
    const ac = new AbortController()
    const seen: number[] = []
    const err = await rejection(
      t.ws.importDocuments(manyDocs(3000), 'x', {
        signal: ac.signal,
        onProgress: (done, total) => {
          expect(total).toBe(3000)
          seen.push(done)
          if (done === 2000) ac.abort()
        },
      }),
    )
    expect(err.code).toBe('cancelled')
    expect(seen[0]).toBe(1)
    expect(counts(t.path).documents).toBe(0)
    const pre = new AbortController()
    pre.abort()
    expect((await rejection(t.ws.importDocuments([DOC_A], 'x', { signal: pre.signal }))).code).toBe('cancelled')
  })

  it('keeps reads on the last committed state and refuses edits while an import runs', async () => {
    await t.ws.importDocuments([DOC_A], 'first')
    const a = t.ws.listDocuments({}).documents[0]!
    let started!: () => void
    const midway = new Promise<void>((r) => (started = r))
    const p = t.ws.importDocuments(manyDocs(5000), 'big', { onProgress: (done) => done === 100 && started() })
    // Resumes at the import's first yield after 100 documents, its transaction still open.
    await midway
    expect(t.ws.importing).toBe(true)
    expect(t.ws.info().documentCount).toBe(1)
    expect(t.ws.listDocuments({ query: 'leukemia' }).total).toBe(0)
    expect(() => t.ws.createAnnotation({ documentId: a.id, start: 0, end: 3, type: 'X' })).toThrow(
      expect.objectContaining({ code: 'conflict' }),
    )
    expect(() => t.ws.setStatus(a.id, 'done')).toThrow(expect.objectContaining({ code: 'conflict' }))
    await p
    expect(t.ws.importing).toBe(false)
    expect(t.ws.info().documentCount).toBe(5001)
    // Edits work again once the import is done.
    expect(t.ws.setStatus(a.id, 'done').status).toBe('done')
  })

  it('queues concurrent imports instead of failing', async () => {
    const [r1, r2] = await Promise.all([
      t.ws.importDocuments(manyDocs(500, 'P'), 'p'),
      t.ws.importDocuments(manyDocs(500, 'Q'), 'q'),
    ])
    expect(r1.imported + r2.imported).toBe(1000)
    expect(t.ws.info().documentCount).toBe(1000)
  })

  it('rolls back an import in flight when the workspace closes', async () => {
    let started!: () => void
    const midway = new Promise<void>((r) => (started = r))
    const p = t.ws.importDocuments(manyDocs(5000), 'big', { onProgress: (done) => done === 100 && started() })
    await midway
    expect(t.ws.importing).toBe(true)
    t.ws.close()
    const err = await rejection(p)
    expect(err.code).toBe('cancelled')
    const again = Workspace.open(t.path)
    expect(again.info().documentCount).toBe(0)
    again.close()
  })

  it('indexes imported text for search', async () => {
    await t.ws.importDocuments([DOC_A, DOC_B, makeDoc('77', 'Café study', 'naïve résumé words')], 'x')
    expect(t.ws.listDocuments({ query: 'cisplatin' }).documents.map((d) => d.externalId)).toEqual(['1002'])
    expect(t.ws.listDocuments({ query: 'cafe naive' }).documents.map((d) => d.externalId)).toEqual(['77'])
    expect(counts(t.path).fts).toBe(3)
  })
})
