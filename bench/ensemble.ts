// What an ensemble of teachers gives as labels: each model tags a gold corpus alone, then their
// span majority vote (core/train/transfer's majorityMentions, what `train` does with several
// --teacher for one head) is scored the same way. Shows whether more teachers per head are worth
// their training time before the transfer set is tagged.
//
//   npm run bench:ensemble -- --gold FILE --model DIR --model DIR [--model DIR …] [--head NAME] [--map-types RULES] [--threads 2]
import { resolve } from 'node:path'
import { mapMentionTypes, readCorpusFile } from '../src/core/corpus'
import { parseTypeMap } from '../src/core/corpus/type-map'
import { scoreByPosition } from '../src/core/eval/evaluate'
import { openTagger } from '../src/core/tag/open'
import { majorityMentions } from '../src/core/train/transfer'

function args(name: string): string[] {
  return process.argv.flatMap((a, i) => (a === `--${name}` && process.argv[i + 1] ? [process.argv[i + 1]] : []))
}

async function main(): Promise<void> {
  const [goldPath] = args('gold')
  const models = args('model').map((m) => resolve(m))
  if (!goldPath || models.length < 2) throw new Error('usage: --gold FILE --model DIR --model DIR [--model DIR …] [--head NAME] [--map-types RULES]')
  const [head] = args('head')
  const threads = Number(args('threads')[0] ?? '2')
  const typeMap = args('map-types').length ? parseTypeMap(args('map-types')) : undefined
  const read = (await readCorpusFile(goldPath)).documents
  const gold = typeMap ? mapMentionTypes(read, typeMap) : read
  const types = new Set(gold.flatMap((d) => d.mentions.map((m) => m.type)))
  const perModel: Array<Array<Array<{ start: number; end: number; type: string; text: string }>>> = []
  const rows: string[] = []
  const row = (what: string, preds: ReadonlyArray<ReadonlyArray<{ start: number; end: number; type: string; text: string }>>) => {
    const r = scoreByPosition(gold, preds.map((ms) => ms.filter((m) => types.has(m.type))))
    const o = r.overall
    rows.push(`| ${what} | ${(100 * o.precision).toFixed(2)} | ${(100 * o.recall).toFixed(2)} | **${(100 * o.f1).toFixed(2)}** |`)
    return o.f1
  }
  for (const dir of models) {
    const tagger = await openTagger(dir, { engine: 'onnx', threads })
    try {
      const headName = head && tagger.headNames.includes(head) ? head : tagger.headNames.length === 1 ? tagger.headNames[0] : undefined
      if (!headName) throw new Error(`${dir}: several heads (${tagger.headNames.join(', ')}); pick one with --head`)
      const res = await tagger.tag(gold, { head: headName })
      perModel.push(res.map((r) => r.mentions.map(({ start, end, type, text }) => ({ start, end, type, text }))))
      row(`${dir} (head ${headName})`, perModel[perModel.length - 1])
    } finally {
      await tagger.dispose()
    }
    process.stderr.write(`${dir} done\n`)
  }
  const singles = perModel.map((p) => scoreByPosition(gold, p.map((ms) => ms.filter((m) => types.has(m.type)))).overall.f1)
  const mean = singles.reduce((a, b) => a + b, 0) / singles.length
  rows.push(`| mean of the ${models.length} alone | | | ${(100 * mean).toFixed(2)} |`)
  row(`span majority vote of ${models.length}`, gold.map((_, i) => majorityMentions(perModel.map((p) => p[i]))))
  process.stdout.write(`gold ${resolve(goldPath)} (types ${[...types].sort().join(', ')})\n\n| model | P | R | F1 |\n|---|---|---|---|\n${rows.join('\n')}\n`)
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).message}\n`)
  process.exit(1)
})
