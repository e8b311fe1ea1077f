// Side-by-side comparison of token-classification models (a teacher first, then students):
// size, accuracy and speed measured in one run on the same text.
//
// Per model: layers, parameters, weight precision (float32 or int8), bytes of the files the
// inference engine loads (our cached ONNX export for onnxruntime, the safetensors weights for tfjs), entity-
// level P/R/F1 (overall and per type), median end-to-end tagging latency per document (an
// abstract: tokenisation, windows, one engine call per document, decoding; warm-up excluded) and
// pieces per second, all on the fastest engine that loads (onnxruntime, else tfjs; the engine
// and its reason are recorded). Timing is interleaved: for each document every model runs in
// turn, the first model alternating per document and per round, so a load spike on a shared
// machine or a cache warmed by the previous model favours none. Speed is judged on rounds: a
// round is one or more passes over the timing documents, at least minRoundPieces word pieces,
// so that a round is real work and not timer noise; each model's round times give a median and
// an interquartile range, and a model is called faster or slower than the first only when those
// ranges do not overlap (one model against itself must not come out "23 % faster").
// Relative figures are against the first model:
//   f1Retention = F1 / F1₀, sizeReduction = 1 − bytes / bytes₀,
//   parameterReduction = 1 − params / params₀, timeReduction = 1 − round median / round median₀,
//   speedup = round median₀ / round median, time: the verdict.

import { WordTaggerEngine } from '../onnx/word-engine'
import { statSync } from 'node:fs'
import { availableParallelism, cpus } from 'node:os'
import { basename } from 'node:path'
import type { CorpusDocument } from '../../shared/domain'
import { initBackend } from '../model/backend'
import { findWeightFiles } from '../model/checkpoint-files'
import { countParameters } from '../model/config'
import type { InferenceEngine } from '../onnx/engine'
import type { OpenEngineOptions } from '../onnx/session'
import { openTagger, type CheckpointTagger } from '../tag/open'
import type { TaggedMention, TagResult } from '../tag/tagger'
import { scoreByPosition } from './evaluate'
import type { Prf } from './metrics'

export interface CompareOptions {
  /** Documents to time (default: the gold documents, whose predictions then also give the F1). */
  timingDocs?: readonly CorpusDocument[]
  /** Engine preference passed to openInferenceEngine (default 'onnx' = fastest that loads). */
  engine?: 'onnx' | 'tfjs'
  /** onnxruntime intra-op threads of every model (default: all cores). */
  threads?: number
  /** Untimed documents run first by every model (default 3). */
  warmupDocs?: number
  /** Timed rounds (default 7); the spread and the verdict need at least MIN_VERDICT_ROUNDS. */
  rounds?: number
  /** Word pieces a round must cover at least: the timing documents are repeated until it does (default 3000, about ten abstracts). */
  minRoundPieces?: number
  /** Windows per engine call (default 64; a document's windows are usually fewer). */
  batchSize?: number
  /** Default: each model's training metadata, else 128. */
  maxLength?: number
  /** Display names (default: the directory names). */
  names?: string[]
  /**
   * Tag with this head of every model, or one entry per model in order (undefined: that model's
   * heads merged), so a multi-task teacher's head compares with a single-task student's (default:
   * every head merged).
   */
  head?: string | ReadonlyArray<string | undefined>
  logger?: (line: string) => void
  /** Tests inject engines. */
  openEngine?: (dir: string, opts: OpenEngineOptions) => Promise<InferenceEngine>
  /** Milliseconds clock (default performance.now); tests give fixed timings. */
  now?: () => number
}

/** A model's time per round over the rounds: median and interquartile range. */
export interface RoundSpread {
  medianMs: number
  q1Ms: number
  q3Ms: number
  rounds: number
}

/** Speed against the first model; 'within spread': the rounds do not tell the two apart. */
export type TimeVerdict = 'faster' | 'slower' | 'within spread' | 'too few rounds'

export interface LatencyStats {
  medianMs: number
  meanMs: number
  p90Ms: number
  documents: number
}

export interface RelativeFigures {
  f1Retention: number
  sizeReduction: number
  parameterReduction: number
  timeReduction: number
  speedup: number
  time: TimeVerdict
}

export interface ModelReport {
  name: string
  dir: string
  layers: number
  hiddenSize: number
  heads: string[]
  /** The head scored and timed; null when every head was merged. */
  head: string | null
  parameters: number
  /** Bytes of the model files the inference engine loaded (bytesFiles). */
  bytes: number
  bytesFiles: string[]
  /** 'int8' for a folder written by `fastbioner quantize`. */
  weights: 'float32' | 'int8'
  engine: string
  engineReason: string
  precision: number
  recall: number
  f1: number
  types: Record<string, Prf>
  latency: LatencyStats
  /** Milliseconds per round (the same documents for every model). */
  timing: RoundSpread
  /** Word pieces ([CLS]/[SEP] included) per second: a round's pieces over the median round. */
  tokensPerSecond: number
  /** All timed rounds together. */
  timedSeconds: number
  /** Against the first model; null for the first. */
  relative: RelativeFigures | null
}

export interface CompareReport {
  createdAt: string
  goldDocuments: number
  timingDocuments: number
  /** Word pieces of a round (the first model's tokenizer). */
  timingPieces: number
  rounds: number
  /** Passes over the timing documents in a round (enough work: minRoundPieces). */
  passesPerRound: number
  host: { platform: string; arch: string; cpus: number; node: string }
  models: ModelReport[]
}

interface Loaded {
  name: string
  dir: string
  parameters: number
  bytes: number
  bytesFiles: string[]
  weights: 'float32' | 'int8'
  tagger: CheckpointTagger
  /** The head this model is tagged with (undefined: every head merged). */
  head: string | undefined
}

/** Relative figures of `m` against `base` (pure; exported for tests). */
export function relativeFigures(base: Pick<ModelReport, 'f1' | 'bytes' | 'parameters' | 'timing'>, m: Pick<ModelReport, 'f1' | 'bytes' | 'parameters' | 'timing'>): RelativeFigures {
  return {
    f1Retention: base.f1 > 0 ? m.f1 / base.f1 : NaN,
    sizeReduction: 1 - m.bytes / base.bytes,
    parameterReduction: 1 - m.parameters / base.parameters,
    timeReduction: 1 - m.timing.medianMs / base.timing.medianMs,
    speedup: base.timing.medianMs / m.timing.medianMs,
    time: timeVerdict(base.timing, m.timing),
  }
}

/** Linear-interpolated quantile p of sorted values. */
function quantile(s: readonly number[], p: number): number {
  if (s.length === 0) return NaN
  const x = (s.length - 1) * p
  const lo = Math.floor(x)
  const hi = Math.ceil(x)
  return s[lo] + (s[hi] - s[lo]) * (x - lo)
}

export function latencyStats(ms: readonly number[]): LatencyStats {
  const s = [...ms].sort((a, b) => a - b)
  return { medianMs: quantile(s, 0.5), meanMs: s.reduce((a, b) => a + b, 0) / Math.max(1, s.length), p90Ms: quantile(s, 0.9), documents: s.length }
}

export function roundSpread(roundMs: readonly number[]): RoundSpread {
  const s = [...roundMs].sort((a, b) => a - b)
  return { medianMs: quantile(s, 0.5), q1Ms: quantile(s, 0.25), q3Ms: quantile(s, 0.75), rounds: s.length }
}

/**
 * Timing for a quantization check, which is about F1: one pass over its documents, no rounds of
 * extra work (its speed-up figure is a rough one and gets no verdict).
 */
export const CALIBRATION_TIMING = { rounds: 1, minRoundPieces: 0 } as const satisfies Pick<CompareOptions, 'rounds' | 'minRoundPieces'>

/** Below this, an interquartile range says nothing about the spread. */
export const MIN_VERDICT_ROUNDS = 5

/**
 * Faster only when even m's slower rounds (upper quartile) beat base's faster ones (lower
 * quartile); slower the other way round. Overlapping ranges: the difference of the medians is
 * no larger than what the same model varies by from round to round.
 */
export function timeVerdict(base: RoundSpread, m: RoundSpread): TimeVerdict {
  if (Math.min(base.rounds, m.rounds) < MIN_VERDICT_ROUNDS) return 'too few rounds'
  if (m.q3Ms < base.q1Ms) return 'faster'
  if (m.q1Ms > base.q3Ms) return 'slower'
  return 'within spread'
}

/**
 * The order in which n models tag the visit-th document of round `round`: rotated by both, so
 * that each model goes first equally often even with a single timing document.
 */
export function timingOrder(n: number, round: number, visit: number): number[] {
  return Array.from({ length: n }, (_, k) => (round + visit + k) % n)
}

async function loadForCompare(dir: string, name: string, opts: CompareOptions, head: string | undefined): Promise<Loaded> {
  const tagger = await openTagger(dir, { engine: opts.engine, threads: opts.threads, maxLength: opts.maxLength, logger: opts.logger, openEngine: opts.openEngine })
  const { config, metadata } = tagger.checkpoint
  // What the engine reads from disk is the size that matters to a user (an int8 folder also
  // keeps its int8 safetensors for the tfjs fallback, which onnxruntime never opens).
  const bytesFiles = tagger.engine.files ?? findWeightFiles(dir)
  return {
    name,
    dir,
    // A word tagger's checkpoint config is a stand-in for its sizes: count its own parameters.
    parameters: tagger.engine instanceof WordTaggerEngine ? tagger.engine.parameterCount : countParameters(config, tagger.heads.map((h) => h.labelMap.labels.length)),
    bytes: bytesFiles.reduce((a, f) => a + statSync(f).size, 0),
    bytesFiles,
    weights: metadata && typeof metadata.quantization === 'object' && metadata.quantization !== null ? 'int8' : 'float32',
    tagger,
    head,
  }
}

/** One document through a model: its mentions and the pieces run. */
async function tagOne(m: Loaded, doc: CorpusDocument, batchSize: number): Promise<TagResult> {
  return (await m.tagger.tag([doc], { batchSize, head: m.head }))[0]
}

export async function compareModels(modelDirs: readonly string[], goldDocs: readonly CorpusDocument[], opts: CompareOptions = {}): Promise<CompareReport> {
  if (modelDirs.length === 0) throw new Error('compare: no models')
  if (goldDocs.length === 0) throw new Error('compare: no gold documents')
  await initBackend({ logger: opts.logger ?? (() => {}) })
  const names = opts.names ?? modelDirs.map((d) => basename(d.replace(/[\\/]+$/, '')))
  const models: Loaded[] = []
  try {
    const heads = typeof opts.head === 'string' || opts.head === undefined ? modelDirs.map(() => opts.head as string | undefined) : [...opts.head]
    if (heads.length !== modelDirs.length) throw new Error(`compare: ${heads.length} heads for ${modelDirs.length} models`)
    for (const [i, dir] of modelDirs.entries()) models.push(await loadForCompare(dir, names[i], opts, heads[i]))
    const timing = opts.timingDocs ?? goldDocs
    const batchSize = opts.batchSize ?? 64
    const rounds = Math.max(1, opts.rounds ?? 7)
    const now = opts.now ?? (() => performance.now())
    const warm = Math.min(timing.length, opts.warmupDocs ?? 3)
    for (const m of models) for (let d = 0; d < warm; d++) await tagOne(m, timing[d], batchSize)
    // Untimed: how many passes make a round of enough work (stops as soon as one pass is enough).
    const minPieces = Math.max(0, opts.minRoundPieces ?? 3000)
    let passPieces = 0
    for (let d = 0; d < timing.length && passPieces < minPieces; d++) passPieces += (await tagOne(models[0], timing[d], batchSize)).pieces
    const passes = passPieces >= minPieces ? 1 : Math.ceil(minPieces / Math.max(1, passPieces))

    const times = models.map(() => timing.map(() => [] as number[]))
    const roundMs = models.map(() => new Array<number>(rounds).fill(0))
    const pieces = models.map(() => 0)
    const predFromTiming = opts.timingDocs === undefined
    const preds: TaggedMention[][][] = models.map(() => new Array(goldDocs.length))
    for (let r = 0; r < rounds; r++) {
      for (let p = 0; p < passes; p++) {
        for (let d = 0; d < timing.length; d++) {
          for (const i of timingOrder(models.length, r, p * timing.length + d)) {
            const t0 = now()
            const out = await tagOne(models[i], timing[d], batchSize)
            const ms = now() - t0
            times[i][d].push(ms)
            roundMs[i][r] += ms
            if (r === 0) {
              pieces[i] += out.pieces
              if (predFromTiming && p === 0) preds[i][d] = out.mentions
            }
          }
        }
      }
    }
    if (!predFromTiming) {
      for (const [i, m] of models.entries()) for (const [d, doc] of goldDocs.entries()) preds[i][d] = (await tagOne(m, doc, batchSize)).mentions
    }
    const reports: ModelReport[] = models.map((m, i) => {
      const ev = scoreByPosition(goldDocs, preds[i])
      const perDoc = times[i].map((ts) => latencyStats(ts).medianMs)
      const timingSpread = roundSpread(roundMs[i])
      return {
        name: m.name,
        dir: m.dir,
        layers: m.tagger.checkpoint.config.numHiddenLayers,
        hiddenSize: m.tagger.checkpoint.config.hiddenSize,
        heads: m.tagger.headNames,
        head: m.head ?? null,
        parameters: m.parameters,
        bytes: m.bytes,
        bytesFiles: m.bytesFiles,
        weights: m.weights,
        engine: m.tagger.engine.engine,
        engineReason: m.tagger.engine.reason,
        precision: ev.overall.precision,
        recall: ev.overall.recall,
        f1: ev.overall.f1,
        types: ev.types,
        latency: latencyStats(perDoc),
        timing: timingSpread,
        tokensPerSecond: pieces[i] / (timingSpread.medianMs / 1000),
        timedSeconds: roundMs[i].reduce((a, b) => a + b, 0) / 1000,
        relative: null,
      }
    })
    for (let i = 1; i < reports.length; i++) reports[i].relative = relativeFigures(reports[0], reports[i])
    return {
      createdAt: new Date().toISOString(),
      goldDocuments: goldDocs.length,
      timingDocuments: timing.length,
      timingPieces: pieces[0],
      rounds,
      passesPerRound: passes,
      host: { platform: process.platform, arch: process.arch, cpus: typeof availableParallelism === 'function' ? availableParallelism() : cpus().length, node: process.version },
      models: reports,
    }
  } finally {
    for (const m of models) await m.tagger.dispose()
  }
}

const pct = (x: number | undefined, digits = 1) => (x === undefined || !Number.isFinite(x) ? '-' : `${(100 * x).toFixed(digits)}`)
/** A reduction as a plain percentage (smaller/faster is positive); a growth gets a '+' and the word. */
export function reductionPct(x: number | undefined): string {
  if (x === undefined || !Number.isFinite(x)) return '-'
  const v = Math.round(1000 * x) / 10 // one decimal; also turns −0.04 into −0 …
  if (v === 0) return '0.0' // … which must not print as "−0.0"
  return v > 0 ? v.toFixed(1) : `+${(-v).toFixed(1)} more`
}

/** A plain-text table of the report (sizes and times as reductions against the first model). */
export function formatCompareTable(r: CompareReport): string {
  const head = ['model', 'layers', 'weights', 'params', 'MB', 'P', 'R', 'F1', 'ms/doc', 'ms/round (IQR)', 'pieces/s', 'F1 ret %', 'size cut %', 'time cut %', 'engine']
  const rows = r.models.map((m) => [
    m.name,
    String(m.layers),
    m.weights,
    `${(m.parameters / 1e6).toFixed(2)}M`,
    (m.bytes / 1e6).toFixed(1),
    pct(m.precision, 2),
    pct(m.recall, 2),
    pct(m.f1, 2),
    m.latency.medianMs.toFixed(1),
    `${m.timing.medianMs.toFixed(1)} (${m.timing.q1Ms.toFixed(1)}–${m.timing.q3Ms.toFixed(1)})`,
    Math.round(m.tokensPerSecond).toString(),
    m.relative ? pct(m.relative.f1Retention) : '100',
    m.relative ? reductionPct(m.relative.sizeReduction) : '0',
    m.relative ? timeCut(m.relative) : '0',
    m.engine,
  ])
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)))
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n') +
    `\n(${r.goldDocuments} gold documents; ms/doc: median over ${r.timingDocuments} documents; ms/round: median and interquartile range of ${r.rounds} round(s) of ${r.timingPieces} pieces (${r.passesPerRound} pass(es) over the documents, models interleaved, the first alternating), ${r.host.cpus} CPUs; size/time cut %: how much smaller/faster than ${r.models[0].name}, '+N more' where larger/slower; a time cut only where the rounds' ranges do not overlap, fewer than ${MIN_VERDICT_ROUNDS} rounds decide nothing)`
}

/** The time cut, or why there is none: a difference inside the rounds' spread is no difference. */
function timeCut(rel: RelativeFigures): string {
  if (rel.time === 'faster' || rel.time === 'slower') return reductionPct(rel.timeReduction)
  return rel.time
}
