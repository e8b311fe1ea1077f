import { DOC_A, DOC_B, DOC_C, makeDoc, manyDocs, tempWorkspace } from './helpers'

describe('Workspace listing, search and navigation', () => {
  let t: ReturnType<typeof tempWorkspace>
  let ids: Record<string, number>
  beforeEach(async () => {
    t = tempWorkspace()
    await t.ws.importDocuments(
      [DOC_A, DOC_B, DOC_C, makeDoc('20001', 'Percent 50% _under_ score', 'Nothing else.'), makeDoc('PMC_2', 'Other id', 'x')],
      'fixture',
    )
    ids = Object.fromEntries(t.ws.listDocuments({}).documents.map((d) => [d.externalId, d.id]))
  })
  afterEach(() => t.done())

  const ext = (q: Parameters<typeof t.ws.listDocuments>[0]) => t.ws.listDocuments(q).documents.map((d) => d.externalId)

  it('lists in id order with paging and a total', () => {
    expect(ext({})).toEqual(['1001', '1002', '1003', '20001', 'PMC_2'])
    const page = t.ws.listDocuments({ offset: 1, limit: 2 })
    expect(page.documents.map((d) => d.externalId)).toEqual(['1002', '1003'])
    expect(page.total).toBe(5)
  })

  it('searches by PMID prefix and by words in title or text', () => {
    expect(ext({ query: '1001' })).toEqual(['1001'])
    expect(ext({ query: '100' })).toEqual(['1001', '1002', '1003'])
    expect(ext({ query: 'pilomatricoma' })).toEqual(['1002'])
    expect(ext({ query: 'PILOMATR' })).toEqual(['1002']) // last word is a prefix, case-insensitive
    expect(ext({ query: 'beta-catenin mutations' })).toEqual(['1002'])
    expect(ext({ query: 'cystic asthma' })).toEqual(['1001'])
    expect(ext({ query: 'cystic cisplatin' })).toEqual([])
    // FTS syntax and LIKE wildcards in user input are taken literally.
    expect(ext({ query: 'NEAR(" AND OR *' })).toEqual([])
    expect(ext({ query: '"unterminated' })).toEqual([])
    expect(ext({ query: '50%' })).toEqual(['20001'])
    expect(ext({ query: 'PMC_' })).toEqual(['PMC_2'])
    expect(ext({ query: '_' })).toEqual([])
    expect(ext({ query: '   ' })).toHaveLength(5)
  })

  it('filters by status and type, with facet counts that ignore their own filter', () => {
    const a = t.ws.getDocument(ids['1001']!)
    t.ws.setStatus(ids['1002']!, 'done')
    t.ws.deleteAnnotation(a.annotations.find((x) => x.type === 'Gene')!.id) // 1001 -> in_progress, no Gene left
    expect(ext({ status: 'done' })).toEqual(['1002'])
    expect(ext({ type: 'Disease' })).toEqual(['1001', '1002'])
    expect(ext({ type: 'Gene' })).toEqual([])
    const r = t.ws.listDocuments({ type: 'Disease', status: 'done' })
    expect(r.documents.map((d) => d.externalId)).toEqual(['1002'])
    expect(r.total).toBe(1)
    expect(r.counts.byStatus).toEqual({ unreviewed: 0, in_progress: 1, done: 1 }) // Disease docs by status
    expect(r.counts.byType).toEqual({ Chemical: 1, Disease: 1 }) // done docs by type
    const all = t.ws.listDocuments({})
    expect(all.counts.byStatus).toEqual({ unreviewed: 3, in_progress: 1, done: 1 })
    expect(all.counts.byType).toEqual({ Chemical: 1, Disease: 2 })
    expect(t.ws.listDocuments({ query: 'cisplatin' }).counts.byType).toEqual({ Chemical: 1, Disease: 1 })
  })

  it('summaries carry count and sorted types of live annotations', () => {
    const [a, b] = t.ws.listDocuments({ limit: 2 }).documents
    expect(a).toMatchObject({ annotationCount: 4, types: ['Disease', 'Gene'] })
    expect(b).toMatchObject({ annotationCount: 3, types: ['Chemical', 'Disease'] })
    expect(t.ws.setStatus(b!.id, 'in_progress')).toMatchObject({ id: b!.id, status: 'in_progress', annotationCount: 3 })
    expect(() => t.ws.setStatus(424242, 'done')).toThrow(expect.objectContaining({ code: 'not_found' }))
  })

  it('counts accepted annotations apart from model suggestions, as the legend does', () => {
    const c = ids['1003']!
    // "No entities here. A plain …": two suggestions, one of them accepted afterwards.
    t.ws.replaceSuggestions(
      [{ documentId: c, suggestions: [{ start: 3, end: 11, type: 'Gene', confidence: 0.9 }, { start: 20, end: 25, type: 'Disease', confidence: 0.6 }], uncertainty: 0.4 }],
      { modelId: null, by: 'model:m' },
    )
    const summary = () => t.ws.listDocuments({ query: '1003' }).documents[0]!
    expect(summary()).toMatchObject({ annotationCount: 0, suggestionCount: 2, types: [] })
    const gene = t.ws.getDocument(c).annotations.find((a) => a.type === 'Gene')!
    t.ws.acceptSuggestions([gene.id])
    expect(summary()).toMatchObject({ annotationCount: 1, suggestionCount: 1, types: ['Gene'] })
    const accepted = t.ws.getDocument(c).annotations.filter((a) => a.state === 'accepted').length
    expect(summary().annotationCount).toBe(accepted)
  })

  it('finds neighbours by id, optionally skipping reviewed documents', () => {
    const [d1, d2, d3, d4, d5] = ['1001', '1002', '1003', '20001', 'PMC_2'].map((k) => ids[k]!)
    expect(t.ws.neighbor(d1!, 'next', false)).toBe(d2)
    expect(t.ws.neighbor(d1!, 'previous', false)).toBeNull()
    expect(t.ws.neighbor(d5!, 'next', false)).toBeNull()
    t.ws.setStatus(d2!, 'done')
    t.ws.setStatus(d3!, 'in_progress')
    expect(t.ws.neighbor(d1!, 'next', true)).toBe(d4)
    expect(t.ws.neighbor(d5!, 'previous', true)).toBe(d4)
    expect(t.ws.neighbor(d4!, 'previous', true)).toBe(d1)
  })

  it('exports the whole workspace in id order', () => {
    const out = t.ws.exportDocuments()
    expect(out.map((d) => d.id)).toEqual(['1001', '1002', '1003', '20001', 'PMC_2'])
    expect(out[0]!.mentions).toEqual(DOC_A.mentions)
    expect(out[1]!.mentions).toEqual(DOC_B.mentions)
  })

  it('lists and searches 5 000 documents', async () => {
    await t.ws.importDocuments(manyDocs(5000), 'many')
    // Timings are reported by `npm run bench:import`; here: the right pages of a large workspace.
    const r = t.ws.listDocuments({ query: 'leukemia', limit: 50 })
    const f = t.ws.listDocuments({ type: 'Chemical', status: 'unreviewed', offset: 4000, limit: 50 })
    expect(r.total).toBe(5000)
    expect(f.documents).toHaveLength(50)
  })
})
