// Helper of stream-memory.test.ts, run in a child Node with a small heap:
//   node --max-old-space-size=N stream-count.cjs ROOT FILE [whole]
// Counts the documents of FILE through openCorpusStream (or, with 'whole', the whole-file
// PubMed reader) and prints {"documents": n, "heapMB": m}.
const path = require('node:path')
const root = process.argv[2]
process.env.TSX_TSCONFIG_PATH = path.join(root, 'tsconfig.json')
require(require.resolve('tsx/cjs/api', { paths: [root] })).register({ tsconfig: process.env.TSX_TSCONFIG_PATH })
const corpus = require(path.join(root, 'src/core/corpus'))
;(async () => {
  let documents = 0
  if (process.argv[4] === 'whole') {
    const text = require('node:zlib').gunzipSync(require('node:fs').readFileSync(process.argv[3])).toString('utf8')
    documents = corpus.readPubmedXml(text, 'whole.xml').documents.length
  } else {
    const stream = await corpus.openCorpusStream(process.argv[3])
    for await (const _ of stream.documents) documents++
  }
  console.log(JSON.stringify({ documents, heapMB: Math.round(process.memoryUsage().heapUsed / 1048576) }))
})().catch((e) => {
  console.error(e.message)
  process.exit(1)
})
