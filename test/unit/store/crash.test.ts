// "A crash loses no committed edit": a child process commits edits and is SIGKILLed mid-way;
// everything it reported as committed must be there after reopening, and nothing half-done.
import { spawn } from 'node:child_process'
import { join, resolve } from 'node:path'
import Database from '@core/store/sqlite'
import type { Revision } from '@shared/domain'
import { Workspace } from '@core/store'
import { tempDir } from './helpers'

const ROOT = resolve(__dirname, '../../..')
const CHILD = join(__dirname, 'crash-child.ts')

interface Outcome {
  lines: string[]
  signal: NodeJS.Signals | null
}

/** Runs the child and SIGKILLs it as soon as `killWhen` holds for the committed lines so far. */
function runAndKill(path: string, mode: string, killWhen: (lines: string[]) => boolean): Promise<Outcome> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, path, mode], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const lines: string[] = []
    let partial = ''
    let stderr = ''
    let killed = false
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`child did not reach the kill point in time; stderr: ${stderr}; last: ${lines.slice(-3).join(' | ')}`))
    }, 50_000)
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n')
      partial = parts.pop()! // an unterminated line was not fully reported: ignore it
      lines.push(...parts)
      if (!killed && killWhen(lines)) {
        killed = true
        child.kill('SIGKILL')
      }
    })
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c))
    child.on('exit', (_code, signal) => {
      clearTimeout(timer)
      if (lines.some((l) => l.startsWith('error '))) reject(new Error(lines.find((l) => l.startsWith('error '))))
      else resolvePromise({ lines, signal })
    })
  })
}

/** The state the child's committed, reported edits imply: annotation id → type, or null when deleted. */
function expectedState(lines: string[]): Map<number, { doc: number; type: string | null }> {
  const state = new Map<number, { doc: number; type: string | null }>()
  for (const l of lines) {
    const [what, a, b] = l.split(' ')
    const id = Number(a)
    if (what === 'created') state.set(id, { doc: Number(b), type: 'Disease' })
    else if (what === 'updated') state.get(id)!.type = b!
    else if (what === 'deleted') state.get(id)!.type = null
  }
  return state
}

function checkWorkspace(path: string, lines: string[]): { documents: number; checked: number } {
  const db = new Database(path)
  expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
  db.close()
  const ws = Workspace.open(path)
  try {
    const expected = expectedState(lines)
    const docIds = lines.find((l) => l.startsWith('ready '))!.slice(6).split(',').map(Number)
    const live = new Map<number, string>()
    for (const d of docIds) {
      const doc = ws.getDocument(d)
      for (const a of doc.annotations) live.set(a.id, a.type)
      // The revision trail replays to the live state (no half-written edit).
      const replay = new Map<number, string>()
      for (const r of ws.history(d) as Revision[]) {
        if (r.action === 'delete') replay.delete(r.annotationId)
        else replay.set(r.annotationId, r.after!.type)
      }
      expect(replay).toEqual(new Map(doc.annotations.map((a) => [a.id, a.type])))
    }
    // The edit in flight when the kill landed may be durable without having been reported (its
    // WAL frames were written, the kill came before the report): only the last created
    // annotation can be one step further on (updated to a T… type, or deleted).
    const lastCreated = Number([...lines].reverse().find((l) => l.startsWith('created '))?.split(' ')[1])
    for (const [id, want] of expected) {
      if (id === lastCreated && live.get(id) !== want.type) {
        const got = live.get(id)
        expect(got === undefined || (want.type !== null && /^T\d+$/.test(got))).toBe(true)
        continue
      }
      if (want.type === null) expect(live.has(id)).toBe(false)
      else expect(live.get(id)).toBe(want.type)
    }
    return { documents: ws.info().documentCount, checked: expected.size }
  } finally {
    ws.close()
  }
}

describe('crash safety', () => {
  it('keeps every committed edit when the process is SIGKILLed mid-way through edits', async () => {
    const { dir, cleanup } = tempDir()
    try {
      const path = join(dir, 'crash.sqlite')
      const out = await runAndKill(path, 'edits', (lines) => lines.filter((l) => l.startsWith('created')).length >= 300)
      expect(out.signal).toBe('SIGKILL')
      const { documents, checked } = checkWorkspace(path, out.lines)
      expect(documents).toBe(20)
      expect(checked).toBeGreaterThanOrEqual(300)
    } finally {
      cleanup()
    }
  })

  it('keeps committed edits and drops an import killed while its transaction was open', async () => {
    const { dir, cleanup } = tempDir()
    try {
      const path = join(dir, 'crash-import.sqlite')
      const out = await runAndKill(path, 'import', (lines) =>
        lines.some((l) => l.startsWith('import-progress') && Number(l.split(' ')[1]) >= 5000),
      )
      expect(out.signal).toBe('SIGKILL')
      expect(out.lines).not.toContain('import-committed')
      const { documents, checked } = checkWorkspace(path, out.lines)
      expect(checked).toBe(60)
      expect(documents).toBe(20) // none of the 100 000 half-imported documents
    } finally {
      cleanup()
    }
  })
})
