// IOB2 label scheme: label maps, mention -> piece label alignment, tag -> span decoding with
// conlleval's chunk rules (the same rules core/eval/metrics.ts scores with).
//
// Label order (ids) is fixed by buildLabelMap: "O" = 0, then for each entity type in sorted
// order (UTF-16 code-unit order) "B-<type>", "I-<type>". Types {Disease, Chemical} give
// O=0, B-Chemical=1, I-Chemical=2, B-Disease=3, I-Disease=4.
// Piece labels use -100 (IGNORE_INDEX) for special tokens and for every piece but a word's first.

export const IGNORE_INDEX = -100

/** A typed half-open character span. Mention (src/shared/model.ts) satisfies it. */
export interface Span {
  start: number
  end: number
  type: string
}

export interface LabelMap {
  /** labels[id] */
  labels: string[]
  label2id: Record<string, number>
  /** HF config.json style: {"0": "O", …} */
  id2label: Record<number, string>
  /** Entity types, sorted. */
  types: string[]
}

export function buildLabelMap(types: Iterable<string>): LabelMap {
  const sorted = [...new Set(types)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  for (const t of sorted) {
    if (t.length === 0 || /\s/.test(t)) throw new Error(`entity type ${JSON.stringify(t)} is empty or contains whitespace`)
  }
  const labels = ['O']
  for (const t of sorted) labels.push(`B-${t}`, `I-${t}`)
  return labelMapFromLabels(labels)
}

/** Label map from an existing label list (e.g. a checkpoint's config.id2label); order kept. */
/** The entity types a set of IOB labels names (sorted; 'O' and prefixes dropped). */
export function typesOfLabels(labels: readonly string[]): string[] {
  return [...new Set(labels.filter((l) => l !== 'O').map((l) => l.replace(/^[BIES]-/, '')))].sort()
}

export function labelMapFromLabels(labels: readonly string[]): LabelMap {
  const label2id: Record<string, number> = {}
  const id2label: Record<number, string> = {}
  const types = new Set<string>()
  labels.forEach((l, i) => {
    if (l in label2id) throw new Error(`label ${l} appears twice`)
    const { prefix, type } = parseTag(l)
    if (l !== 'O' && !((prefix === 'B' || prefix === 'I') && type.length > 0)) throw new Error(`label ${l} is not "O", "B-<type>" or "I-<type>"`)
    if (type) types.add(type)
    label2id[l] = i
    id2label[i] = l
  })
  if (!('O' in label2id)) throw new Error('label list has no "O"')
  for (const t of types) {
    if (!(`B-${t}` in label2id) || !(`I-${t}` in label2id)) throw new Error(`label list lacks B-${t} or I-${t}`)
  }
  return { labels: [...labels], label2id, id2label, types: [...types].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)) }
}

/** "B-Disease" -> {prefix: "B", type: "Disease"}; "O" -> {prefix: "O", type: ""}. Splits at the first "-". */
export function parseTag(tag: string): { prefix: string; type: string } {
  const k = tag.indexOf('-')
  return k < 0 ? { prefix: tag, type: '' } : { prefix: tag.slice(0, k), type: tag.slice(k + 1) }
}

// conlleval.pl's endOfChunk / startOfChunk, verbatim in meaning (IOB1, IOB2, IOE, bracket tags).
export function endOfChunk(prevTag: string, tag: string, prevType: string, type: string): boolean {
  let end = false
  if (prevTag === 'B' && tag === 'B') end = true
  if (prevTag === 'B' && tag === 'O') end = true
  if (prevTag === 'I' && tag === 'B') end = true
  if (prevTag === 'I' && tag === 'O') end = true
  if (prevTag === 'E' && tag === 'E') end = true
  if (prevTag === 'E' && tag === 'I') end = true
  if (prevTag === 'E' && tag === 'O') end = true
  if (prevTag !== 'O' && prevTag !== '.' && prevType !== type) end = true
  if (prevTag === ']') end = true
  if (prevTag === '[') end = true
  return end
}

export function startOfChunk(prevTag: string, tag: string, prevType: string, type: string): boolean {
  let start = false
  if (prevTag === 'B' && tag === 'B') start = true
  if (prevTag === 'I' && tag === 'B') start = true
  if (prevTag === 'O' && tag === 'B') start = true
  if (prevTag === 'O' && tag === 'I') start = true
  if (prevTag === 'E' && tag === 'E') start = true
  if (prevTag === 'E' && tag === 'I') start = true
  if (prevTag === 'O' && tag === 'E') start = true
  if (tag !== 'O' && tag !== '.' && prevType !== type) start = true
  if (tag === '[') start = true
  if (tag === ']') start = true
  return start
}

export interface Chunk {
  type: string
  /** first word */
  start: number
  /** one past the last word */
  end: number
}

/**
 * Chunks of one sentence's tags under conlleval's rules: B-X always starts a chunk, I-X after O
 * or after another type starts one, a type change ends one. Tags before the first and after
 * the last word count as "O" (sentence boundary).
 */
export function tagsToChunks(tags: readonly string[]): Chunk[] {
  const out: Chunk[] = []
  let prev = 'O'
  let prevType = ''
  let open: Chunk | null = null
  for (let i = 0; i <= tags.length; i++) {
    const { prefix, type } = i < tags.length ? parseTag(tags[i]) : { prefix: 'O', type: '' }
    if (open !== null && endOfChunk(prev, prefix, prevType, type)) {
      open.end = i
      out.push(open)
      open = null
    }
    if (i < tags.length && startOfChunk(prev, prefix, prevType, type)) {
      if (open !== null) {
        open.end = i
        out.push(open)
      }
      open = { type, start: i, end: -1 }
    }
    prev = prefix
    prevType = type
  }
  return out
}

/** Character spans of the chunks in `tags` (one tag per word); chunks without a type are dropped. */
export function decodeSpans(tags: readonly string[], wordOffsets: ReadonlyArray<readonly [number, number]>): Span[] {
  if (tags.length !== wordOffsets.length) throw new Error(`decodeSpans: ${tags.length} tags for ${wordOffsets.length} words`)
  return tagsToChunks(tags)
    .filter((c) => c.type !== '')
    .map((c) => ({ start: wordOffsets[c.start][0], end: wordOffsets[c.end - 1][1], type: c.type }))
}

export interface WordTagging {
  tags: string[]
  /** Mentions that could not be tagged: no word overlaps them, or they overlap an earlier mention. */
  skipped: Span[]
}

/**
 * Word-level IOB2 tags for spans. A word belongs to a mention when it overlaps it, so a mention
 * starting or ending inside a word takes the whole word. The first word of a mention gets B-,
 * the rest I-. Overlapping (nested) mentions: sorted by start, longer first, the first one
 * wins and the others are reported in `skipped`. `wordOffsets` must be sorted by start.
 */
export function spansToWordTags(spans: readonly Span[], wordOffsets: ReadonlyArray<readonly [number, number]>): WordTagging {
  const tags: string[] = new Array(wordOffsets.length).fill('O')
  const skipped: Span[] = []
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end || (a.type < b.type ? -1 : a.type > b.type ? 1 : 0))
  for (const m of sorted) {
    // first word ending after m.start
    let lo = 0
    let hi = wordOffsets.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (wordOffsets[mid][1] > m.start) hi = mid
      else lo = mid + 1
    }
    const hit: number[] = []
    for (let w = lo; w < wordOffsets.length && wordOffsets[w][0] < m.end; w++) {
      if (wordOffsets[w][1] > m.start && wordOffsets[w][1] > wordOffsets[w][0]) hit.push(w)
    }
    if (hit.length === 0 || hit.some((w) => tags[w] !== 'O')) {
      skipped.push(m)
      continue
    }
    hit.forEach((w, k) => (tags[w] = (k === 0 ? 'B-' : 'I-') + m.type))
  }
  return { tags, skipped }
}

export interface AlignOptions {
  /** Mentions whose type is not in the label map: 'ignore' (default, trained as O) or 'error'. */
  unknownType?: 'ignore' | 'error'
}

/**
 * Per-piece label ids: each word's label on its first piece, IGNORE_INDEX (-100) on its other
 * pieces and on pieces with wordIndex < 0 (special tokens). Word spans are taken from the
 * pieces (first piece start to last piece end).
 */
export function alignLabels(
  mentions: readonly Span[],
  offsets: ReadonlyArray<readonly [number, number]>,
  wordIndex: ArrayLike<number>,
  labelMap: LabelMap,
  opts: AlignOptions = {},
): Int32Array {
  if (offsets.length !== wordIndex.length) throw new Error(`alignLabels: ${offsets.length} offsets for ${wordIndex.length} pieces`)
  const known: Span[] = []
  for (const m of mentions) {
    if (`B-${m.type}` in labelMap.label2id) known.push(m)
    else if (opts.unknownType === 'error') throw new Error(`mention type ${m.type} is not in the label map (${labelMap.types.join(', ')})`)
  }
  // word id -> [start, end, first piece]
  const words = new Map<number, [number, number, number]>()
  for (let p = 0; p < wordIndex.length; p++) {
    const w = wordIndex[p]
    if (w < 0) continue
    const [s, e] = offsets[p]
    const cur = words.get(w)
    if (cur === undefined) words.set(w, [s, e, p])
    else {
      if (s < cur[0]) cur[0] = s
      if (e > cur[1]) cur[1] = e
    }
  }
  const order = [...words.values()].sort((a, b) => a[0] - b[0] || a[2] - b[2])
  const { tags } = spansToWordTags(
    known,
    order.map((w) => [w[0], w[1]] as [number, number]),
  )
  const labels = new Int32Array(wordIndex.length).fill(IGNORE_INDEX)
  order.forEach((w, k) => (labels[w[2]] = labelMap.label2id[tags[k]]))
  return labels
}

/**
 * Word-level values from piece-level ones: each word takes its first piece's value; a word
 * with no piece gets `fallback`. Pieces with wordIndex < 0 are ignored.
 */
export function firstPieceValues<T>(pieceValues: ArrayLike<T>, wordIndex: ArrayLike<number>, numWords: number, fallback: T): T[] {
  const out: T[] = new Array(numWords).fill(fallback)
  const seen = new Uint8Array(numWords)
  for (let p = 0; p < wordIndex.length; p++) {
    const w = wordIndex[p]
    if (w < 0 || w >= numWords || seen[w]) continue
    seen[w] = 1
    out[w] = pieceValues[p]
  }
  return out
}

/** Word tags from per-piece predicted label ids (first piece of each word; words without pieces are "O"). */
export function wordTagsFromPieces(pieceLabelIds: ArrayLike<number>, wordIndex: ArrayLike<number>, numWords: number, labelMap: LabelMap): string[] {
  return firstPieceValues(pieceLabelIds, wordIndex, numWords, labelMap.label2id.O).map((id) => {
    const l = labelMap.labels[id]
    if (l === undefined) throw new RangeError(`label id ${id} outside the label map (${labelMap.labels.length} labels)`)
    return l
  })
}
