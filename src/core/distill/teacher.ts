// What the teacher contributes to a training batch: logits of a head (for the soft labels),
// hidden states and attention maps of the mapped layers. Computed either
//  - online: one teacher forward per training step (dropout off), or
//  - from a cache built once before training: with dropout off the teacher is a deterministic
//    function of each example, and under key masking its outputs on real positions do not depend
//    on how a batch is padded, so per-example outputs can be computed once and reused in every
//    epoch and every batch composition. Logits are stored as float32, hidden states and
//    attentions as float16 and only for the layers the losses use.
// The teacher forward itself runs on onnxruntime (the model exported in memory with hidden-state
// outputs; attention maps are recomputed from the layer inputs with the teacher's Q/K weights,
// which costs about a sixth of a layer) or on tfjs.

import * as tf from '@tensorflow/tfjs-core'
import { createRequire } from 'node:module'
import { availableParallelism, cpus } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type * as Ort from 'onnxruntime-node'
import { activeBackend } from '../model/backend'
import { MASK_VALUE, type BertTokenClassifier } from '../model/bert'
import { dense } from '../model/ops'
import { exportModelOnnx } from '../onnx/tfjs'
import { collate, modelInputs, planBatches, toTensors as batchTensors, type BatchableExample, type HostBatch } from '../train/batching'
import { decodeHalfInto, encodeHalf } from '../model/f16'
import { batchFeeds } from '../train/ort'

/** What a loss needs from one teacher for one batch. */
export interface TeacherNeeds {
  /** Logits of the batch's head (soft labels). */
  logits: boolean
  /** Hidden-state indices (0 = embeddings, k = output of layer k). */
  hidden: readonly number[]
  /** Layers (1-based) whose attention maps are needed. */
  attentions: readonly number[]
}

/** Tensors for one batch, padded like the batch ([B, S, …]); the caller disposes them. */
export interface TeacherTargets {
  logits: tf.Tensor3D | null
  hidden: Map<number, tf.Tensor3D>
  attentions: Map<number, tf.Tensor4D>
}

export function disposeTargets(t: TeacherTargets): void {
  t.logits?.dispose()
  for (const x of t.hidden.values()) x.dispose()
  for (const x of t.attentions.values()) x.dispose()
}

/** Host-side outputs of one teacher forward over a padded batch, row-major. */
export interface HostTeacherOutputs {
  /** [B·S·C] per head asked for. */
  logits: Record<string, Float32Array>
  /** [B·S·H] per hidden index asked for. */
  hidden: Map<number, Float32Array>
  /** [B·h·S·S] per layer asked for. */
  attentions: Map<number, Float32Array>
}

/** Runs the teacher forward on host batches. */
export interface TeacherRunner {
  /** 'onnxruntime-cpu' or 'tfjs-<backend>'. */
  readonly engine: string
  readonly reason: string
  run(batch: HostBatch, heads: readonly string[], needs: TeacherNeeds): Promise<HostTeacherOutputs>
  dispose(): Promise<void>
}

// ---------------------------------------------------------------------------------------------
// Runners

/** tfjs forward of the loaded teacher (dropout off). */
export function tfjsRunner(teacher: BertTokenClassifier): TeacherRunner {
  const backend = activeBackend()?.name ?? tf.getBackend()
  return {
    engine: `tfjs-${backend}`,
    reason: `tfjs ${backend} backend`,
    async run(b, heads, needs) {
      const out = tf.tidy(() => {
        const r = teacher.forward(
          modelInputs(batchTensors(b)),
          { training: false, heads: [...heads], outputHiddenStates: needs.hidden.length > 0, outputAttentions: needs.attentions.length > 0 },
        )
        const logits = heads.map((h) => r.logits[h])
        const hidden = needs.hidden.map((i) => r.hiddenStates![i])
        const attn = needs.attentions.map((l) => r.attentions![l - 1])
        return [...logits, ...hidden, ...attn]
      })
      const res: HostTeacherOutputs = { logits: {}, hidden: new Map(), attentions: new Map() }
      let k = 0
      for (const h of heads) res.logits[h] = out[k++].dataSync() as Float32Array
      for (const i of needs.hidden) res.hidden.set(i, out[k++].dataSync() as Float32Array)
      for (const l of needs.attentions) res.attentions.set(l, out[k++].dataSync() as Float32Array)
      tf.dispose(out)
      return res
    },
    async dispose() {},
  }
}

function nodeRequire(): NodeRequire {
  if (typeof require === 'function') return require
  if (typeof __filename === 'string') return createRequire(__filename)
  return createRequire(pathToFileURL(join(process.cwd(), 'index.js')).href)
}

/**
 * Teacher attention probabilities of layer `layer` (1-based) recomputed from the layer's input
 * (hidden state layer−1) with the teacher's query/key weights: softmax(QKᵀ/√d + key mask), the
 * same ops as BertTokenClassifier.forward. [B·h·S·S].
 */
export function attentionFromLayerInput(teacher: BertTokenClassifier, layer: number, input: Float32Array, b: HostBatch): Float32Array {
  const c = teacher.config
  const H = c.hiddenSize
  const nH = c.numAttentionHeads
  const d = H / nH
  const B = b.batchSize
  const S = b.seqLen
  const v = teacher.variables()
  const p = `bert.encoder.layer.${layer - 1}.attention.self`
  const wq = v.get(`${p}.query.weight`)!
  const bq = v.get(`${p}.query.bias`)!
  const wk = v.get(`${p}.key.weight`)!
  const bk = v.get(`${p}.key.bias`)!
  const t = tf.tidy(() => {
    const x = tf.tensor2d(input, [B * S, H])
    const q = tf.transpose(tf.reshape(dense(x, [wq, bq]), [B, S, nH, d]), [0, 2, 1, 3])
    const kT = tf.transpose(tf.reshape(dense(x, [wk, bk]), [B, S, nH, d]), [0, 2, 3, 1])
    const mask = tf.tensor2d(b.attentionMask, [B, S], 'int32')
    const maskAdd = tf.reshape(tf.mul(tf.sub(1, tf.cast(mask, 'float32')), MASK_VALUE), [B, 1, 1, S])
    return tf.softmax(tf.add(tf.matMul(tf.mul(q, 1 / Math.sqrt(d)), kT), maskAdd))
  })
  const out = t.dataSync() as Float32Array
  t.dispose()
  return out
}

export interface OrtRunnerOptions {
  /** Intra-op threads; default all cores. */
  threads?: number
  loadOrt?: () => typeof Ort
}

/**
 * onnxruntime (CPU provider) on the teacher exported in memory with hidden-state outputs; the
 * checkpoint directory is not touched.
 */
export async function ortRunner(teacher: BertTokenClassifier, opts: OrtRunnerOptions = {}): Promise<TeacherRunner> {
  const ort = opts.loadOrt ? opts.loadOrt() : (nodeRequire()('onnxruntime-node') as typeof Ort)
  const bytes = exportModelOnnx(teacher, { hiddenStates: true })
  const threads = opts.threads ?? (typeof availableParallelism === 'function' ? availableParallelism() : cpus().length)
  const session = await ort.InferenceSession.create(bytes, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    logSeverityLevel: 3,
  })
  const version = (ort.env as { versions?: { common?: string } }).versions?.common ?? ''
  const outputFor = (head: string) => (head === 'default' ? 'logits' : `logits_${head}`)
  return {
    engine: 'onnxruntime-cpu',
    reason: `onnxruntime-node ${version}, CPU execution provider, ${threads} intra-op thread${threads === 1 ? '' : 's'}; attention maps recomputed in tfjs from the layer inputs`,
    async run(b, heads, needs) {
      const feeds = batchFeeds(ort, b, {})
      const wanted = new Set<number>(needs.hidden)
      for (const l of needs.attentions) wanted.add(l - 1)
      const fetches = [...heads.map(outputFor), ...[...wanted].map((i) => `hidden_state_${i}`)]
      const out = await session.run(feeds, fetches)
      const res: HostTeacherOutputs = { logits: {}, hidden: new Map(), attentions: new Map() }
      for (const h of heads) res.logits[h] = out[outputFor(h)].data as Float32Array
      for (const i of needs.hidden) res.hidden.set(i, out[`hidden_state_${i}`].data as Float32Array)
      for (const l of needs.attentions) res.attentions.set(l, attentionFromLayerInput(teacher, l, out[`hidden_state_${l - 1}`].data as Float32Array, b))
      return res
    },
    async dispose() {
      await session.release()
    },
  }
}

export type TeacherEngine = 'auto' | 'onnx' | 'tfjs'

/** ORT when asked for or on 'auto' (falls back to tfjs with the reason); tfjs otherwise. */
export async function openTeacherRunner(teacher: BertTokenClassifier, engine: TeacherEngine = 'auto', opts: OrtRunnerOptions = {}): Promise<TeacherRunner> {
  if (engine === 'tfjs') return tfjsRunner(teacher)
  try {
    return await ortRunner(teacher, opts)
  } catch (e) {
    if (engine === 'onnx') throw e
    const t = tfjsRunner(teacher)
    return { ...t, run: t.run, dispose: t.dispose, reason: `${t.reason} (onnxruntime unavailable: ${(e as Error).message.split('\n')[0]})` }
  }
}

// ---------------------------------------------------------------------------------------------
// Providers

/** An example the teacher sees, and the head whose logits it needs (null: none). */
export interface TeacherExample extends BatchableExample {
  head: string | null
}

export interface TeacherProvider {
  readonly engine: string
  readonly reason: string
  readonly cached: boolean
  /** Bytes held by the cache (0 online). */
  readonly cacheBytes: number
  /** Seconds spent building the cache (0 online). */
  readonly buildSeconds: number
  readonly hiddenSize: number
  readonly numHeads: number
  readonly numLayers: number
  /** Targets for a collated batch of examples `ids` (indices into the provider's example list). */
  targets(batch: HostBatch, ids: readonly number[], head: string | null, needs: TeacherNeeds): Promise<TeacherTargets>
  dispose(): Promise<void>
}

function toTensors(b: HostBatch, host: HostTeacherOutputs, head: string | null, needs: TeacherNeeds, numLabels: number, nH: number, H: number): TeacherTargets {
  const B = b.batchSize
  const S = b.seqLen
  return {
    logits: head !== null && needs.logits ? tf.tensor3d(host.logits[head], [B, S, numLabels]) : null,
    hidden: new Map(needs.hidden.map((i) => [i, tf.tensor3d(host.hidden.get(i)!, [B, S, H])])),
    attentions: new Map(needs.attentions.map((l) => [l, tf.tensor4d(host.attentions.get(l)!, [B, nH, S, S])])),
  }
}

/** One teacher forward per batch. */
export function onlineProvider(teacher: BertTokenClassifier, runner: TeacherRunner): TeacherProvider {
  const c = teacher.config
  return {
    engine: runner.engine,
    reason: runner.reason,
    cached: false,
    cacheBytes: 0,
    buildSeconds: 0,
    hiddenSize: c.hiddenSize,
    numHeads: c.numAttentionHeads,
    numLayers: c.numHiddenLayers,
    async targets(b, _ids, head, needs) {
      const heads = head !== null && needs.logits ? [head] : []
      const host = await runner.run(b, heads, needs)
      const numLabels = head !== null ? teacher.heads.get(head)!.labels.length : 0
      return toTensors(b, host, head, needs, numLabels, c.numAttentionHeads, c.hiddenSize)
    },
    dispose: () => runner.dispose(),
  }
}

/** Bytes a cache of these examples would hold. */
export function estimateCacheBytes(lengths: readonly number[], heads: ReadonlyArray<string | null>, teacher: BertTokenClassifier, needs: TeacherNeeds): number {
  const c = teacher.config
  let bytes = 0
  lengths.forEach((L, i) => {
    const h = heads[i]
    if (needs.logits && h !== null) bytes += L * teacher.heads.get(h)!.labels.length * 4
    bytes += needs.hidden.length * L * c.hiddenSize * 2
    bytes += needs.attentions.length * c.numAttentionHeads * L * L * 2
  })
  return bytes
}

interface CacheEntry {
  len: number
  logits: Float32Array | null
  hidden: Uint16Array[]
  attn: Uint16Array[]
}

export interface CacheBuildOptions {
  batchSize?: number
  padTokenId?: number
  onProgress?: (done: number, total: number) => void
}

/**
 * Runs the teacher once over every example and keeps what `needs` lists; targets() then only
 * copies. A batch may ask for any subset of the cached hidden indices / attention layers.
 */
export async function cachedProvider(teacher: BertTokenClassifier, runner: TeacherRunner, examples: readonly TeacherExample[], needs: TeacherNeeds, opts: CacheBuildOptions = {}): Promise<TeacherProvider> {
  const t0 = performance.now()
  const c = teacher.config
  const H = c.hiddenSize
  const nH = c.numAttentionHeads
  const entries: CacheEntry[] = new Array(examples.length)
  const lengths = examples.map((e) => e.inputIds.length)
  const byHead = new Map<string | null, number[]>()
  examples.forEach((e, i) => {
    const list = byHead.get(e.head) ?? []
    list.push(i)
    byHead.set(e.head, list)
  })
  let bytes = 0
  let done = 0
  for (const [head, ids] of byHead) {
    const numLabels = head !== null ? teacher.heads.get(head)?.labels.length : 0
    if (numLabels === undefined) throw new Error(`teacher has no head '${head}'`)
    const plan = planBatches(ids.map((i) => lengths[i]), { batchSize: opts.batchSize ?? 32, shuffle: false })
    for (const local of plan) {
      const idx = local.map((k) => ids[k])
      const b = collate(examples, idx, { padTokenId: opts.padTokenId ?? 0 })
      const heads = head !== null && needs.logits ? [head] : []
      const host = await runner.run(b, heads, needs)
      const S = b.seqLen
      idx.forEach((ex, r) => {
        const L = lengths[ex]
        let logits: Float32Array | null = null
        if (heads.length) {
          logits = host.logits[head!].slice(r * S * numLabels, (r * S + L) * numLabels)
          bytes += logits.byteLength
        }
        const hidden = needs.hidden.map((i) => encodeHalf(host.hidden.get(i)!, new Uint16Array(L * H), r * S * H, L * H))
        const attn = needs.attentions.map((l) => {
          const src = host.attentions.get(l)!
          const dst = new Uint16Array(nH * L * L)
          for (let q = 0; q < nH; q++) for (let i = 0; i < L; i++) encodeHalf(src, dst, ((r * nH + q) * S + i) * S, L, (q * L + i) * L)
          return dst
        })
        bytes += hidden.length * L * H * 2 + attn.length * nH * L * L * 2
        entries[ex] = { len: L, logits, hidden, attn }
      })
      done += idx.length
      opts.onProgress?.(done, examples.length)
    }
  }
  await runner.dispose()
  const hiddenPos = new Map(needs.hidden.map((i, k) => [i, k]))
  const attnPos = new Map(needs.attentions.map((l, k) => [l, k]))
  const buildSeconds = (performance.now() - t0) / 1000
  return {
    engine: runner.engine,
    reason: runner.reason,
    cached: true,
    cacheBytes: bytes,
    buildSeconds,
    hiddenSize: H,
    numHeads: nH,
    numLayers: c.numHiddenLayers,
    async targets(b, ids, head, want) {
      const B = b.batchSize
      const S = b.seqLen
      if (ids.length !== B) throw new Error(`teacher cache: ${ids.length} ids for a batch of ${B}`)
      const numLabels = head !== null ? teacher.heads.get(head)!.labels.length : 0
      let logits: tf.Tensor3D | null = null
      if (want.logits && head !== null) {
        const arr = new Float32Array(B * S * numLabels)
        ids.forEach((ex, r) => {
          const e = entries[ex]
          if (!e.logits) throw new Error(`teacher cache: example ${ex} has no logits for head '${head}'`)
          arr.set(e.logits, r * S * numLabels)
        })
        logits = tf.tensor3d(arr, [B, S, numLabels])
      }
      const hidden = new Map<number, tf.Tensor3D>()
      for (const i of want.hidden) {
        const k = hiddenPos.get(i)
        if (k === undefined) throw new Error(`teacher cache holds no hidden state ${i} (cached: ${needs.hidden.join(', ') || 'none'})`)
        const arr = new Float32Array(B * S * H)
        ids.forEach((ex, r) => {
          const e = entries[ex]
          decodeHalfInto(e.hidden[k], arr, 0, e.len * H, r * S * H)
        })
        hidden.set(i, tf.tensor3d(arr, [B, S, H]))
      }
      const attentions = new Map<number, tf.Tensor4D>()
      for (const l of want.attentions) {
        const k = attnPos.get(l)
        if (k === undefined) throw new Error(`teacher cache holds no attention map of layer ${l} (cached: ${needs.attentions.join(', ') || 'none'})`)
        const arr = new Float32Array(B * nH * S * S)
        ids.forEach((ex, r) => {
          const e = entries[ex]
          const L = e.len
          for (let q = 0; q < nH; q++) for (let i = 0; i < L; i++) decodeHalfInto(e.attn[k], arr, (q * L + i) * L, L, ((r * nH + q) * S + i) * S)
        })
        attentions.set(l, tf.tensor4d(arr, [B, nH, S, S]))
      }
      return { logits, hidden, attentions }
    },
    async dispose() {
      entries.length = 0
    },
  }
}
