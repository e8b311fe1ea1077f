// Child process for crash.test.ts (not a test file). Commits edits one at a time and reports each
// one on stdout only after its commit returned; the parent SIGKILLs it at an arbitrary moment.
//   mode "edits":  loop create / update / delete forever
//   mode "import": a few edits, then a large import, reporting progress while its transaction is open
import { writeSync } from 'node:fs'
import type { CorpusDocument } from '../../../src/shared/domain'
import { Workspace } from '../../../src/core/store'

const say = (line: string): void => {
  writeSync(1, `${line}\n`)
}

function plainDocs(n: number, prefix: string, words: number): CorpusDocument[] {
  return Array.from({ length: n }, (_, i) => {
    const text = 'word '.repeat(words).trimEnd()
    return { id: `${prefix}${i}`, text, passages: [{ type: 'abstract', offset: 0, length: text.length }], mentions: [] }
  })
}

async function main(): Promise<void> {
  const [path, mode] = process.argv.slice(2)
  if (!path || !mode) throw new Error('usage: crash-child.ts WORKSPACE edits|import')
  const ws = Workspace.open(path, { user: 'crash' })
  await ws.importDocuments(plainDocs(20, 'base', 2000), 'base')
  const docIds = ws.listDocuments({ limit: 100 }).documents.map((d) => d.id)
  say(`ready ${docIds.join(',')}`)

  const edits = mode === 'import' ? 60 : Number.POSITIVE_INFINITY
  for (let i = 0; i < edits; i++) {
    const documentId = docIds[i % docIds.length]!
    const slot = Math.floor(i / docIds.length)
    const a = ws.createAnnotation({ documentId, start: slot * 5, end: slot * 5 + 4, type: 'Disease' })
    say(`created ${a.id} ${documentId}`)
    if (i % 2 === 0) {
      const type = `T${i}`
      ws.updateAnnotation({ id: a.id, type })
      say(`updated ${a.id} ${type}`)
    }
    if (i % 3 === 0) {
      ws.deleteAnnotation(a.id)
      say(`deleted ${a.id}`)
    }
  }
  if (mode === 'import') {
    let last = 0
    await ws.importDocuments(plainDocs(100_000, 'big', 20), 'big', {
      onProgress: (done) => {
        if (done - last >= 1000) {
          last = done
          say(`import-progress ${done}`)
        }
      },
    })
    say('import-committed')
  }
  // Stay alive until killed.
  setInterval(() => undefined, 1000)
}

main().catch((e) => {
  say(`error ${(e as Error).stack ?? e}`)
  process.exit(1)
})
