// How a multi-task model's heads are best merged for `tag` with no options: each corpus's devel
// set tagged once per head, then merged as the product does (core/tag/merge: an overlap goes to
// the more confident mention) and by alternative rules, scored on the types that corpus annotates
// (as the model card's merged scores). Also each head alone, for what merging costs.
//
//   npm run bench:merge-heads -- --model DIR [--split devel] [--data ../shared/data] [--threads 2]
import { join, resolve } from 'node:path'
import { readCorpusFile, mapMentionTypes } from '../src/core/corpus'
import { scoreByPosition } from '../src/core/eval/evaluate'
import { mergeHeadMentions } from '../src/core/tag/merge'
import { openTagger } from '../src/core/tag/open'
import type { CorpusDocument } from '../src/shared/domain'

function arg(name: string, fallback?: string): string {
  const i = process.argv.indexOf(`--${name}`)
  if (i >= 0 && process.argv[i + 1]) return process.argv[i + 1]
  if (fallback === undefined) throw new Error(`--${name} is required`)
  return fallback
}

const CORPORA = [
  { name: 'NCBI-disease', dir: 'NCBI-disease-IOB' },
  { name: 'BC5CDR', dir: 'BC5CDR-IOB' },
  { name: 'BC2GM', dir: 'BC2GM-IOB' },
]

async function main(): Promise<void> {
  const model = resolve(arg('model'))
  const split = arg('split', 'devel')
  const data = resolve(arg('data', join(__dirname, '..', '..', 'shared', 'data')))
  const tagger = await openTagger(model, { engine: 'onnx', threads: Number(arg('threads', '2')) })
  const rows: string[] = []
  try {
    for (const c of CORPORA) {
      const path = join(data, 'mtl-bioner', c.dir, `${split}.tsv`)
      const gold: CorpusDocument[] = mapMentionTypes((await readCorpusFile(path)).documents, new Map([['GENE', 'Gene']]))
      const types = new Set(gold.flatMap((d) => d.mentions.map((m) => m.type)))
      const perHead = new Map<string, Awaited<ReturnType<typeof tagger.tag>>>()
      for (const head of tagger.headNames) perHead.set(head, await tagger.tag(gold, { head }))
      const score = (preds: ReadonlyArray<ReadonlyArray<{ start: number; end: number; type: string; text: string }>>) => {
        const r = scoreByPosition(gold, preds.map((ms) => ms.filter((m) => types.has(m.type))))
        return [...types].sort().map((t) => `${t} ${(100 * (r.types[t]?.f1 ?? 0)).toFixed(1)}`).join(', ')
      }
      for (const [head, res] of perHead) rows.push(`| ${c.name} | head ${head} alone | ${score(res.map((r) => r.mentions))} |`)
      const merged = gold.map((_, i) => mergeHeadMentions([...perHead].map(([head, res]) => ({ head, mentions: res[i].mentions }))))
      rows.push(`| ${c.name} | merged as tag does (overlaps: the more confident) | ${score(merged)} |`)
      // Alternative: a mention of a type several heads predict, found by one head only, kept when
      // that head is at least this confident.
      const shared = new Set<string>()
      const typesOf = new Map<string, Set<string>>()
      for (const [head, res] of perHead) typesOf.set(head, new Set(res.flatMap((r) => r.mentions.map((m) => m.type))))
      for (const t of new Set([...typesOf.values()].flatMap((s) => [...s]))) if ([...typesOf.values()].filter((s) => s.has(t)).length > 1) shared.add(t)
      for (const theta of [0.5, 0.7, 0.8, 0.9, 0.95]) {
        const merged = gold.map((_, i) => {
          const lists = [...perHead].map(([head, res]) => ({ head, mentions: res[i].mentions }))
          const kept = lists.map(({ head, mentions }) => ({
            head,
            mentions: mentions.filter((m) => !shared.has(m.type) || m.confidence >= theta || lists.some((o) => o.head !== head && o.mentions.some((x) => x.type === m.type && x.start < m.end && m.start < x.end))),
          }))
          return mergeHeadMentions(kept)
        })
        rows.push(`| ${c.name} | agreement or confidence ≥ ${theta} | ${score(merged)} |`)
      }
      // Alternative: the longer of two overlapping mentions wins (ties: the more confident).
      const longer = gold.map((_, i) => {
        const all = [...perHead.values()].flatMap((res) => res[i].mentions).sort((a, b) => b.end - b.start - (a.end - a.start) || b.confidence - a.confidence)
        const kept: typeof all = []
        for (const m of all) if (!kept.some((k) => k.start < m.end && m.start < k.end)) kept.push(m)
        return kept
      })
      rows.push(`| ${c.name} | overlaps: the longer mention | ${score(longer)} |`)
      // Upper bound of any rule: mentions of different types may overlap (only same-type overlaps merged).
      const byType = gold.map((_, i) => {
        const lists = [...perHead].map(([head, res]) => ({ head, mentions: res[i].mentions }))
        const types = new Set(lists.flatMap((l) => l.mentions.map((m) => m.type)))
        return [...types].flatMap((t) => mergeHeadMentions(lists.map((l) => ({ head: l.head, mentions: l.mentions.filter((m) => m.type === t) }))))
      })
      rows.push(`| ${c.name} | types may overlap (no rule needed) | ${score(byType)} |`)
      // Alternative: overlaps settled by a head order (the first listed wins), every order of the heads.
      const orders = (hs: string[]): string[][] => (hs.length <= 1 ? [hs] : hs.flatMap((h) => orders(hs.filter((x) => x !== h)).map((o) => [h, ...o])))
      for (const order of orders(tagger.headNames)) {
        const merged = gold.map((_, i) => {
          const kept: Array<{ start: number; end: number; type: string; text: string }> = []
          for (const h of order) for (const m of perHead.get(h)?.[i].mentions ?? []) if (!kept.some((k) => k.start < m.end && m.start < k.end)) kept.push(m)
          return kept
        })
        rows.push(`| ${c.name} | head order ${order.join(' > ')} | ${score(merged)} |`)
      }
      process.stderr.write(`${c.name} done\n`)
    }
  } finally {
    await tagger.dispose()
  }
  process.stdout.write(`model ${model}, ${split}\n\n| corpus | heads | F1 by type |\n|---|---|---|\n${rows.join('\n')}\n`)
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack}\n`)
  process.exitCode = 1
})
