// The handler table driven the way Electron and the e2e harness drive it: through dispatch, with
// untyped payloads, and results that must survive structured cloning.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Channel, EventPayloads } from '@shared/ipc'
import type { CorpusDocument } from '@shared/domain'
import { createHandlers, dispatch, toIpcError, type HandlerContext, type Handlers } from '../../src/main/api'
import { callError, callOk } from './ipc-calls'
import { cancelJob, finishJob, startJob, throttle } from '../../src/main/jobs'
import { parseCorpusText, writeCorpus } from '../../src/core/corpus'
import { Workspace } from '../../src/core/store'
import { WorkspaceSession } from '../../src/main/workspace-session'

interface FixtureDoc {
  id: string
  title: string
  abstract: string
  mentions: Array<[string, string, string?]>
}

/** PubTator text for `docs`, offsets computed (the n-th occurrence of each phrase, left to right). */
function pubtator(docs: FixtureDoc[]): string {
  return docs
    .map((d) => {
      const text = `${d.title} ${d.abstract}`
      let from = 0
      const lines = [`${d.id}|t|${d.title}`, `${d.id}|a|${d.abstract}`]
      for (const [phrase, type, concept] of d.mentions) {
        const start = text.indexOf(phrase, from)
        if (start < 0) throw new Error(`fixture: ${phrase} not in ${d.id}`)
        from = start + phrase.length
        lines.push([d.id, start, start + phrase.length, phrase, type, ...(concept ? [concept] : [])].join('\t'))
      }
      return `${lines.join('\n')}\n\n`
    })
    .join('')
}

const FIXTURE: FixtureDoc[] = [
  {
    id: '9000001',
    title: 'Cystic fibrosis in siblings.',
    abstract: 'Cystic fibrosis and asthma were compared in siblings treated with aspirin.',
    mentions: [
      ['Cystic fibrosis', 'Disease', 'D003550'],
      ['Cystic fibrosis', 'Disease', 'D003550'],
      ['asthma', 'Disease', 'D001249'],
      ['aspirin', 'Chemical', 'D001241'],
    ],
  },
  {
    id: '9000002',
    title: 'Hereditary breast cancer.',
    abstract: 'Germline BRCA1 mutations predispose to breast and ovarian cancer.',
    mentions: [
      ['breast cancer', 'Disease', 'D001943'],
      ['BRCA1', 'Gene'],
      ['breast and ovarian cancer', 'Disease', 'D061325'],
    ],
  },
  { id: '9000003', title: 'An abstract without mentions.', abstract: 'Nothing to see here at all.', mentions: [] },
]

function synthetic(n: number, prefix: string): string {
  return pubtator(
    Array.from({ length: n }, (_, i) => ({
      id: `${prefix}${i}`,
      title: `Study ${i} of leukemia.`,
      abstract: `Leukemia patients ${i} received imatinib for a long time and did well overall.`,
      mentions: [
        ['leukemia', 'Disease'],
        ['imatinib', 'Chemical'],
      ] as Array<[string, string]>,
    })),
  )
}

let dir: string
let ws: Workspace
let session: WorkspaceSession
let events: Array<EventPayloads['job:progress']>
let onEvent: ((e: EventPayloads['job:progress']) => void) | null
let handlers: Handlers
let saveExportAnswer: string | null
let ctx: HandlerContext

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fastbioner-api-'))
  const defaultWorkspacePath = join(dir, 'default.sqlite')
  session = WorkspaceSession.start(defaultWorkspacePath, 'tester')
  ws = session.current()
  events = []
  onEvent = null
  saveExportAnswer = null
  ctx = {
    user: 'tester',
    defaultWorkspacePath,
    workspace: () => session.current(),
    openWorkspace(path, opts) {
      ws = session.open(path, opts)
      return ws
    },
    workspaceProblem: () => session.problem,
    emit(event, payload) {
      expect(event).toBe('job:progress')
      // Payloads cross IPC: they must be plain, cloneable data.
      events.push(structuredClone(payload) as EventPayloads['job:progress'])
      onEvent?.(payload as EventPayloads['job:progress'])
    },
    dialogs: {
      openCorpusFiles: async () => [join(dir, 'picked.pubtator')],
      saveExport: async () => saveExportAnswer,
      chooseWorkspace: async () => join(dir, 'chosen.sqlite'),
    },
  }
  handlers = createHandlers(ctx)
})

afterEach(() => {
  session.close()
  rmSync(dir, { recursive: true, force: true })
})

const call = <C extends Channel>(channel: C, payload: unknown) => callOk(handlers, channel, payload)
const fail = (channel: Channel | string, payload: unknown) => callError(handlers, channel, payload)

function file(name: string, content: string): string {
  const p = join(dir, name)
  writeFileSync(p, content)
  return p
}

describe('dispatch', () => {
  it('rejects invalid payloads with invalid_request and a readable message', async () => {
    let e = await fail('documents:get', { id: 'seven' })
    expect(e.code).toBe('invalid_request')
    expect(e.message).toMatch(/documents:get.*id/)
    e = await fail('documents:get', { id: 1, extra: true })
    expect(e.code).toBe('invalid_request')
    expect(e.message).toContain('extra')
    e = await fail('documents:list', { limit: 0 })
    expect(e).toMatchObject({ code: 'invalid_request' })
    e = await fail('annotations:create', { documentId: 1, start: 5, end: 5, type: 'X' })
    expect(e.message).toContain('end must be after start')
    e = await fail('annotations:create', { documentId: 1, start: 0, end: 5, type: '   ' })
    expect(e.code).toBe('invalid_request')
    e = await fail('import:files', { jobId: 'j', paths: [] })
    expect(e.code).toBe('invalid_request')
    e = await fail('export:write', { path: '/tmp/x', format: 'docx' })
    expect(e.code).toBe('invalid_request')
    expect(await fail('documents:get', undefined)).toMatchObject({ code: 'invalid_request' })
    expect(await fail('no:such:channel', {})).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('no:such:channel') })
    expect(await fail('__proto__', {})).toMatchObject({ code: 'invalid_request' })
  })

  it('maps store errors to their codes', async () => {
    expect(await fail('documents:get', { id: 12345 })).toMatchObject({ code: 'not_found' })
    expect(await fail('annotations:delete', { id: 12345 })).toMatchObject({ code: 'not_found' })
    expect(await fail('documents:history', { id: 12345 })).toMatchObject({ code: 'not_found' })
  })

  it('reports workspace info, opens another workspace and answers dialogs', async () => {
    expect(await call('workspace:info', {})).toEqual({
      path: join(dir, 'default.sqlite'),
      documentCount: 0,
      entityTypes: [],
      user: 'tester',
    })
    const other = join(dir, 'sub', 'other.sqlite')
    expect(await call('workspace:open', { path: other })).toMatchObject({ path: other, documentCount: 0 })
    expect(existsSync(other)).toBe(true)
    expect((await call('workspace:open', {})).path).toBe(join(dir, 'default.sqlite'))
    expect(await call('dialog:openCorpusFiles', {})).toEqual({ paths: [join(dir, 'picked.pubtator')] })
    expect(await call('dialog:saveExport', { format: 'pubtator' })).toEqual({ path: null })
  })
})

describe('paths restricted to dialogs (the Electron shell)', () => {
  it('refuses import, export and workspace paths that no dialog returned, and accepts those that did', async () => {
    handlers = createHandlers({ ...ctx, restrictPathsToDialogs: true })
    const picked = join(dir, 'picked.pubtator')
    writeFileSync(picked, pubtator(FIXTURE.slice(0, 1)))
    const secret = join(dir, 'elsewhere.pubtator')
    writeFileSync(secret, pubtator(FIXTURE.slice(0, 1)))

    const refused = await fail('import:files', { jobId: 'r1', paths: [secret] })
    expect(refused).toMatchObject({ code: 'invalid_request' })
    expect(refused.message).toContain('not chosen in a file dialog')
    expect(await fail('export:write', { path: join(dir, 'out.pubtator'), format: 'pubtator' })).toMatchObject({
      code: 'invalid_request',
    })
    expect(await fail('workspace:open', { path: join(dir, 'x.sqlite') })).toMatchObject({ code: 'invalid_request' })
    expect((await call('workspace:info', {})).documentCount).toBe(0)

    // Switching workspaces from the UI: the path comes from the shell's dialog; create / open are checked.
    const chosen = join(dir, 'chosen.sqlite')
    expect(await call('dialog:chooseWorkspace', { purpose: 'create' })).toEqual({ path: chosen })
    expect(await fail('workspace:open', { path: chosen, create: false })).toMatchObject({ code: 'not_found' })
    expect(existsSync(chosen)).toBe(false)
    expect(await call('workspace:open', { path: chosen, create: true })).toMatchObject({ path: chosen, documentCount: 0 })
    // The dialog's answer opened one workspace: a second use needs the dialog again.
    expect((await fail('workspace:open', { path: chosen, create: true })).message).toMatch(/not chosen in the workspace dialog/)
    await call('dialog:chooseWorkspace', { purpose: 'create' })
    expect(await fail('workspace:open', { path: chosen, create: true })).toMatchObject({ code: 'conflict' })
    expect(await fail('dialog:chooseWorkspace', { purpose: 'elsewhere' })).toMatchObject({ code: 'invalid_request' })
    expect(await call('workspace:open', {})).toMatchObject({ path: join(dir, 'default.sqlite') })

    expect(await call('dialog:openCorpusFiles', {})).toEqual({ paths: [picked] })
    const imported = await call('import:files', { jobId: 'r2', paths: [picked] })
    expect(imported.files[0]).toMatchObject({ ok: true, imported: 1 })
    // The dialog's answer was read once: reading it again needs the dialog again.
    expect((await fail('import:files', { jobId: 'r2b', paths: [picked] })).message).toMatch(/not chosen in a file dialog \(each answer is good for one use/)
    await call('dialog:openCorpusFiles', {})
    expect((await call('import:files', { jobId: 'r2c', paths: [picked, picked] })).files).toHaveLength(1)

    saveExportAnswer = join(dir, 'chosen.pubtator')
    expect(await call('dialog:saveExport', { format: 'pubtator' })).toEqual({ path: saveExportAnswer })
    expect((await call('export:write', { path: saveExportAnswer, format: 'pubtator' })).documents).toBe(1)
    expect(existsSync(saveExportAnswer)).toBe(true)
  })
})

describe('grants by purpose (issue 31 F2)', () => {
  it('never writes with a path an open dialog returned; a save dialog answer is good for one export', async () => {
    handlers = createHandlers({ ...ctx, restrictPathsToDialogs: true })
    const picked = join(dir, 'picked.pubtator')
    const original = pubtator(FIXTURE.slice(0, 2))
    writeFileSync(picked, original)
    expect(await call('dialog:openCorpusFiles', {})).toEqual({ paths: [picked] })
    const refused = await fail('export:write', { path: picked, format: 'pubtator' })
    expect(refused).toMatchObject({ code: 'invalid_request' })
    expect(refused.message).toMatch(/not chosen in a save dialog/)
    expect(readFileSync(picked, 'utf8')).toBe(original)

    saveExportAnswer = join(dir, 'out.pubtator')
    await call('dialog:saveExport', { format: 'pubtator' })
    // A save dialog's answer is not a read grant either.
    expect((await fail('import:files', { jobId: 'g1', paths: [saveExportAnswer] })).message).toMatch(/not chosen in a file dialog/)
    await call('export:write', { path: saveExportAnswer, format: 'pubtator' })
    expect((await fail('export:write', { path: saveExportAnswer, format: 'pubtator' })).message).toMatch(/good for one export/)
    // The chooser's answer opens one workspace; it is not a save grant.
    expect(await call('dialog:chooseWorkspace', { purpose: 'create' })).toEqual({ path: join(dir, 'chosen.sqlite') })
    expect((await fail('export:write', { path: join(dir, 'chosen.sqlite'), format: 'pubtator' })).message).toMatch(/not chosen in a save dialog/)
  })

  it("never exports onto the workspace's database, its WAL, another workspace or an imported file, whatever the dialog returned", async () => {
    handlers = createHandlers({ ...ctx, restrictPathsToDialogs: true })
    const picked = join(dir, 'picked.pubtator')
    const original = pubtator(FIXTURE.slice(0, 2))
    writeFileSync(picked, original)
    await call('dialog:openCorpusFiles', {})
    expect((await call('import:files', { jobId: 'g2', paths: [picked] })).files[0]).toMatchObject({ ok: true, imported: 2 })
    const other = Workspace.open(join(dir, 'other.sqlite'))
    other.close()
    for (const [target, why] of [
      [ws.path, /open workspace's database/],
      [`${ws.path}-wal`, /open workspace's database/],
      [picked, /imported from/],
      [join(dir, 'other.sqlite'), /SQLite database/],
    ] as const) {
      saveExportAnswer = target
      await call('dialog:saveExport', { format: 'pubtator' })
      const e = await fail('export:write', { path: target, format: 'pubtator' })
      expect(e.code).toBe('invalid_request')
      expect(e.message).toMatch(why)
    }
    expect(readFileSync(picked, 'utf8')).toBe(original)
    expect((await call('workspace:info', {})).documentCount).toBe(2)
    ws.close()
    const reopened = Workspace.open(join(dir, 'default.sqlite'))
    expect(reopened.info().documentCount).toBe(2)
    reopened.close()
  })
})

describe('start-up that always shows a window (issue 31 F3)', () => {
  it('keeps the reason when the start-up workspace cannot be opened; the chooser then opens another one', async () => {
    const broken = join(dir, 'broken.sqlite')
    writeFileSync(broken, 'not a database at all, '.repeat(100))
    const start = WorkspaceSession.start(broken, 'tester')
    try {
      expect(start.problem).toMatchObject({ path: broken, reason: 'corrupt', canTakeOver: false })
      const h = createHandlers({ ...ctx, workspace: () => start.current(), openWorkspace: (p, o) => start.open(p, o), workspaceProblem: () => start.problem })
      const status = structuredClone(await dispatch(h, 'workspace:status', {}))
      expect(status).toMatchObject({ ok: true, value: { workspace: null, problem: { reason: 'corrupt', path: broken } } })
      const list = await dispatch(h, 'documents:list', {})
      expect(list).toMatchObject({ ok: false, error: { code: 'not_found' } })
      expect(!list.ok && list.error.message).toMatch(/No workspace is open: Cannot open workspace .*broken\.sqlite/)
      // The chooser: another workspace opens, and the status says so.
      const chosen = join(dir, 'chosen.sqlite')
      expect(await dispatch(h, 'dialog:chooseWorkspace', { purpose: 'create' })).toMatchObject({ ok: true, value: { path: chosen } })
      expect(await dispatch(h, 'workspace:open', { path: chosen, create: true })).toMatchObject({ ok: true, value: { path: chosen } })
      expect(await dispatch(h, 'workspace:status', {})).toMatchObject({ ok: true, value: { workspace: { path: chosen }, problem: null } })
      // Trying the start-up workspace again fails, and the open one stays open.
      expect(await dispatch(h, 'workspace:open', {})).toMatchObject({ ok: false, error: { code: 'invalid_request' } })
      expect(start.current().path).toBe(chosen)
    } finally {
      start.close()
    }
  })

  it("takes over a workspace locked from another computer only when asked (the chooser's Take over)", async () => {
    const shared = join(dir, 'shared.sqlite')
    writeFileSync(`${shared}.lock`, JSON.stringify({ pid: 4242, host: 'other-machine.example', started: null, user: 'colleague', since: '2024-01-01T00:00:00Z', token: 't' }))
    const start = WorkspaceSession.start(shared, 'tester')
    try {
      expect(start.problem).toMatchObject({ reason: 'locked', canTakeOver: true })
      const h = createHandlers({ ...ctx, workspace: () => start.current(), openWorkspace: (p, o) => start.open(p, o), workspaceProblem: () => start.problem })
      expect(await dispatch(h, 'workspace:open', {})).toMatchObject({ ok: false, error: { code: 'conflict', message: expect.stringMatching(/colleague on other-machine\.example/) } })
      expect(await dispatch(h, 'workspace:open', { takeOver: true })).toMatchObject({ ok: true, value: { path: shared } })
      expect(start.current().ownsLock).toBe(true)
    } finally {
      start.close()
    }
  })

  it('says that the workspace file is damaged when SQLite finds damage after it opened', () => {
    const e = Object.assign(new Error('database disk image is malformed'), { code: 'SQLITE_CORRUPT' })
    const err = toIpcError(e, 'documents:get')
    expect(err.message).toBe('The workspace file is damaged (database disk image is malformed): restore a backup of it or open another workspace')
  })

  it('reopens the open workspace (its own lock does not refuse it)', async () => {
    expect((await call('workspace:open', {})).path).toBe(join(dir, 'default.sqlite'))
    expect((await call('workspace:open', {})).path).toBe(join(dir, 'default.sqlite'))
    expect((await call('workspace:info', {})).documentCount).toBe(0)
  })
})

describe('import → list → get → edit → history → export', () => {
  it('runs the whole review loop', async () => {
    const good = file('good.pubtator', pubtator(FIXTURE))
    // Line 3 has a mention whose end lies past the text: the whole file is refused.
    const bad = file('bad.pubtator', `1|t|Title.\n1|a|Abstract.\n1\t0\t500\tTitle\tDisease\n\n`)
    const missing = join(dir, 'missing.pubtator')

    const imported = await call('import:files', { jobId: 'job-1', paths: [good, bad, missing] })
    expect(imported.cancelled).toBe(false)
    expect(imported.files.map((f) => [f.file, f.ok, f.imported])).toEqual([
      [good, true, 3],
      [bad, false, 0],
      [missing, false, 0],
    ])
    const badIssues = imported.files[1]!.issues
    expect(badIssues.length).toBeGreaterThan(0)
    expect(badIssues.find((i) => i.severity === 'error')).toMatchObject({ line: 3 })
    expect(imported.files[2]!.issues[0]).toMatchObject({ severity: 'error' })
    expect(events.length).toBeGreaterThan(0)
    expect(events.every((e) => e.jobId === 'job-1')).toBe(true)
    expect(events.at(-1)).toMatchObject({ message: 'Import finished' })

    // Re-importing reports duplicates and adds nothing.
    const again = await call('import:files', { jobId: 'job-2', paths: [good] })
    expect(again.files[0]).toMatchObject({ ok: true, imported: 0, duplicates: ['9000001', '9000002', '9000003'] })

    const info = await call('workspace:info', {})
    expect(info).toMatchObject({ documentCount: 3, entityTypes: ['Chemical', 'Disease', 'Gene'] })

    const list = await call('documents:list', { query: 'cystic' })
    expect(list.total).toBe(1)
    expect(list.documents[0]).toMatchObject({ externalId: '9000001', status: 'unreviewed', annotationCount: 4, types: ['Chemical', 'Disease'] })
    expect((await call('documents:list', { type: 'Gene' })).documents.map((d) => d.externalId)).toEqual(['9000002'])
    const all = await call('documents:list', {})
    expect(all.counts.byStatus).toEqual({ unreviewed: 3, in_progress: 0, done: 0 })

    const id = list.documents[0]!.id
    const doc = await call('documents:get', { id })
    expect(doc.text).toBe(`${FIXTURE[0]!.title} ${FIXTURE[0]!.abstract}`)
    expect(doc.annotations).toHaveLength(4)

    // Edit: a refused overlap, a new annotation, a retype, a re-bound, a delete.
    const siblings = doc.text.indexOf('siblings')
    const overlap = await fail('annotations:create', { documentId: id, start: 3, end: 20, type: 'Disease' })
    expect(overlap.code).toBe('conflict')
    expect(overlap.message).toContain('Cystic fibrosis')
    const created = await call('annotations:create', { documentId: id, start: siblings, end: siblings + 8, type: ' Population ' })
    expect(created).toMatchObject({ type: 'Population', origin: 'person', updatedBy: 'tester', conceptId: null })
    const aspirin = doc.annotations.find((a) => a.type === 'Chemical')!
    await call('annotations:update', { id: aspirin.id, type: 'Drug', conceptId: null })
    const first = doc.annotations[0]!
    await call('annotations:update', { id: first.id, start: 7 })
    const asthma = doc.annotations.find((a) => a.conceptId === 'D001249')!
    expect(await call('annotations:delete', { id: asthma.id })).toEqual({ id: asthma.id })
    expect((await fail('annotations:update', { id: asthma.id, type: 'X' })).code).toBe('not_found')
    expect((await fail('annotations:update', { id: first.id, end: doc.text.length + 5 })).code).toBe('invalid_request')

    const summary = await call('documents:setStatus', { id, status: 'done' })
    expect(summary).toMatchObject({ id, status: 'done', annotationCount: 4 })
    const next = await call('documents:neighbor', { id, direction: 'next', unreviewedOnly: true })
    expect(next.id).toBe(id + 1)
    expect(await call('documents:neighbor', { id, direction: 'previous', unreviewedOnly: false })).toEqual({ id: null })

    const history = await call('documents:history', { id })
    expect(history.map((h) => h.action)).toEqual(['create', 'create', 'create', 'create', 'create', 'update', 'update', 'delete'])
    expect(history.at(-3)).toMatchObject({ annotationId: aspirin.id, before: { type: 'Chemical', conceptId: 'D001241' }, after: { type: 'Drug', conceptId: null } })
    expect(history.at(-2)).toMatchObject({ annotationId: first.id, before: { start: 0 }, after: { start: 7 } })
    expect(history.at(-1)).toMatchObject({ annotationId: asthma.id, after: null, by: 'tester' })

    // Export PubTator and compare the file with what the edits imply.
    const out = join(dir, 'out', 'export.pubtator')
    const exported = await call('export:write', { path: out, format: 'pubtator' })
    expect(exported).toEqual({ path: out, documents: 3, mentions: 4 + 3, files: [out] })
    const expectedDoc: CorpusDocument = {
      id: '9000001',
      text: doc.text,
      passages: doc.passages,
      mentions: [
        { start: 7, end: 15, text: 'fibrosis', type: 'Disease', conceptId: 'D003550' },
        { start: siblings, end: siblings + 8, text: 'siblings', type: 'Population' },
        { start: doc.annotations[1]!.start, end: doc.annotations[1]!.end, text: 'Cystic fibrosis', type: 'Disease', conceptId: 'D003550' },
        { start: aspirin.start, end: aspirin.end, text: 'aspirin', type: 'Drug' },
      ],
    }
    const written = readFileSync(out, 'utf8')
    // The untouched documents come back byte for byte; the edited one as the writer renders the edits.
    const [firstBlock, ...rest] = written.split(/\n\n/)
    expect(rest.join('\n\n')).toBe(pubtator(FIXTURE.slice(1)))
    expect(`${firstBlock}\n\n`).toBe((await writeCorpus([expectedDoc], 'pubtator')).files[0]!.content)
    const reread = await parseCorpusText(written, 'export.pubtator', 'pubtator')
    expect(reread.documents[0]!.mentions).toEqual(expectedDoc.mentions)
    expect(readdirSync(join(dir, 'out'))).toEqual(['export.pubtator']) // no temp file left behind

    // A subset, exported to brat: a folder of .txt/.ann pairs.
    const bratDir = join(dir, 'brat')
    const brat = await call('export:write', { path: bratDir, format: 'brat', documentIds: [id + 1] })
    expect(brat).toMatchObject({ path: bratDir, documents: 1, mentions: 3 })
    expect(brat.files.map((f) => f.slice(bratDir.length + 1)).sort()).toEqual(readdirSync(bratDir).sort())
    expect(brat.files.some((f) => f.endsWith('.txt')) && brat.files.some((f) => f.endsWith('.ann'))).toBe(true)
    expect((await fail('export:write', { path: good, format: 'brat' })).code).toBe('invalid_request')
    expect((await fail('export:write', { path: out, format: 'pubtator', documentIds: [999] })).code).toBe('not_found')
  })

  it('reads a brat pair once when both of its files are chosen', async () => {
    writeFileSync(join(dir, 'pair.txt'), 'Aspirin helps.\n')
    writeFileSync(join(dir, 'pair.ann'), 'T1\tChemical 0 7\tAspirin\n')
    const r = await call('import:files', { jobId: 'b1', paths: [join(dir, 'pair.ann'), join(dir, 'pair.txt')] })
    expect(r.files).toHaveLength(1)
    expect(r.files[0]).toMatchObject({ file: join(dir, 'pair.txt'), ok: true, imported: 1, duplicates: [] })
  })

  it('imports pasted text, reports corpus errors per source, and refuses a job id already running', async () => {
    const r = await call('import:text', { jobId: 't1', name: 'pasted.pubtator', content: pubtator(FIXTURE.slice(0, 1)), format: 'pubtator' })
    expect(r).toMatchObject({ cancelled: false, files: [{ file: 'pasted.pubtator', ok: true, imported: 1 }] })
    expect((await call('documents:list', {})).documents[0]!.sourceFile).toBe('pasted.pubtator')

    const broken = await call('import:text', { jobId: 't2', name: 'broken.pubtator', content: '1|t|x\n1\t0\t99\tx\tDisease\n', format: 'pubtator' })
    expect(broken.files[0]).toMatchObject({ ok: false, imported: 0 })
    expect(broken.files[0]!.issues[0]).toMatchObject({ severity: 'error', file: 'broken.pubtator', line: 2 })

    const slow = call('import:text', { jobId: 'same', name: 'a', content: synthetic(20000, 'A'), format: 'pubtator' })
    await new Promise((res) => setTimeout(res, 0))
    const dup = await dispatch(handlers, 'import:text', { jobId: 'same', name: 'b', content: synthetic(1, 'B'), format: 'pubtator' })
    expect(dup).toMatchObject({ ok: false, error: { code: 'conflict' } })
    await slow
  })

  it('renames entity types on import by the workspace rules, checked when saved', async () => {
    expect(await call('import:getTypeMap', {})).toEqual({ rules: '', map: {} })
    const bad = await fail('import:setTypeMap', { rules: 'Disease' })
    expect(bad).toMatchObject({ code: 'invalid_request' })
    expect(bad.message).toMatch(/'Disease' is not SOURCE/)
    expect(await call('import:setTypeMap', { rules: ' Disease=Condition;Gene,Chemical=Thing ' })).toEqual({
      rules: 'Disease=Condition;Gene,Chemical=Thing',
      map: { Disease: 'Condition', Gene: 'Thing', Chemical: 'Thing' },
    })
    expect((await call('import:getTypeMap', {})).rules).toBe('Disease=Condition;Gene,Chemical=Thing')
    const r = await call('import:text', { jobId: 'tm', name: 'mapped.pubtator', content: pubtator(FIXTURE.slice(0, 2)), format: 'pubtator' })
    expect(r.files[0]).toMatchObject({ ok: true, imported: 2 })
    const types = (await call('documents:list', {})).documents.map((d) => d.id)
    const mentions = (await Promise.all(types.map((id) => call('documents:get', { id })))).flatMap((d) => d.annotations.map((a) => a.type))
    expect(new Set(mentions)).toEqual(new Set(['Condition', 'Thing']))
    await call('import:setTypeMap', { rules: '' })
    expect(await call('import:getTypeMap', {})).toEqual({ rules: '', map: {} })
  })

  it('cancels an import: the file in flight is rolled back entirely, later files are skipped', async () => {
    const big = file('big.pubtator', synthetic(30000, 'BIG'))
    const later = file('later.pubtator', pubtator(FIXTURE))
    let cancelAnswer: unknown
    onEvent = (e) => {
      if (cancelAnswer === undefined && e.message.startsWith('Importing big.pubtator') && e.done > 0) {
        cancelAnswer = null
        void dispatch(handlers, 'jobs:cancel', { jobId: 'cx' }).then((a) => (cancelAnswer = a))
      }
    }
    const t0 = performance.now()
    const r = await call('import:files', { jobId: 'cx', paths: [big, later] })
    const seconds = (performance.now() - t0) / 1000
    expect(cancelAnswer).toEqual({ ok: true, value: { cancelled: true } })
    expect(r.cancelled).toBe(true)
    expect(r.files).toHaveLength(1)
    expect(r.files[0]).toMatchObject({ file: big, ok: false, imported: 0 })
    expect(r.files[0]!.issues.at(-1)).toMatchObject({ severity: 'warning', message: expect.stringContaining('cancelled') })
    expect((await call('workspace:info', {})).documentCount).toBe(0)
    expect(events.at(-1)).toMatchObject({ jobId: 'cx', message: 'Import cancelled' })
    // Throttled: at most ~20 progress events per second (plus the final one).
    expect(events.length).toBeLessThanOrEqual(Math.ceil(seconds * 20) + 3)
    // The job is gone: cancelling again finds nothing.
    expect(await call('jobs:cancel', { jobId: 'cx' })).toEqual({ cancelled: false })
  })
})

describe('jobs', () => {
  it('registers, cancels and forgets jobs', () => {
    const c = startJob('j-unit')
    expect(() => startJob('j-unit')).toThrow(expect.objectContaining({ code: 'conflict' }))
    expect(cancelJob('j-unit')).toBe(true)
    expect(c.signal.aborted).toBe(true)
    finishJob('j-unit')
    expect(cancelJob('j-unit')).toBe(false)
    expect(cancelJob('never-started')).toBe(false)
  })

  it('throttles to one call per interval and flushes the newest suppressed call', () => {
    const seen: number[] = []
    const t = throttle((n: number) => seen.push(n), 10_000)
    for (let i = 1; i <= 1000; i++) t(i)
    expect(seen).toEqual([1])
    t.flush()
    expect(seen).toEqual([1, 1000])
    t.flush() // nothing pending
    expect(seen).toEqual([1, 1000])
  })
})
