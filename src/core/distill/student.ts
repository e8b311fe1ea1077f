// Student construction: an n-layer BERT initialised from a teacher's embeddings (its character
// channel and chars.txt included) and its uniformly mapped layers (see mapping.ts for the
// indexing), plus the classifier heads.

import * as tf from '@tensorflow/tfjs-core'
import { crfParamNames } from '../model/crf'
import { BertTokenClassifier, encoderParamShapes, headParamNames, makeBertConfig, type BertConfig } from '../model/bert'
import { uniformLayerMap } from './mapping'
import { charCnnParamNames } from '../model/char-cnn'

export interface StudentOptions {
  /** Student depth n (1..teacher depth). */
  layers: number
  /** Teacher layer for each student layer (1-based); default uniformLayerMap(m, n). */
  layerMap?: number[]
  /**
   * Width overrides (hiddenSize, numAttentionHeads, intermediateSize). A student of another
   * width cannot inherit the teacher's matrices: it is randomly initialised (HF init) and learns
   * the teacher's features through the projections W_h / W_e.
   */
  width?: Partial<Pick<BertConfig, 'hiddenSize' | 'numAttentionHeads' | 'intermediateSize'>>
  /**
   * Heads (name → labels). Default: the teacher's heads. A head the teacher has with the same
   * labels is copied; any other is freshly initialised.
   */
  heads?: Record<string, string[]>
  /** Init seed for anything not copied. */
  seed?: number
}

export interface Student {
  model: BertTokenClassifier
  /** Teacher layer each student layer was copied from (1-based), as used for the loss too. */
  layerMap: number[]
  /** Student parameter name → teacher parameter it was copied from, or null (fresh init). */
  sources: Map<string, string | null>
  /** True when the student has the teacher's width (weights inherited). */
  inherited: boolean
}

/** Teacher parameter name that student parameter `name` copies, given the layer map. */
export function teacherParamFor(name: string, layerMap: readonly number[]): string {
  const m = /^bert\.encoder\.layer\.(\d+)\.(.*)$/.exec(name)
  if (!m) return name
  const j = Number(m[1]) + 1 // 1-based student layer
  const t = layerMap[j - 1]
  if (t === undefined) throw new RangeError(`no teacher layer mapped for student layer ${j}`)
  return `bert.encoder.layer.${t - 1}.${m[2]}`
}

export function createStudent(teacher: BertTokenClassifier, opts: StudentOptions): Student {
  const tc = teacher.config
  const n = opts.layers
  const layerMap = opts.layerMap ?? uniformLayerMap(tc.numHiddenLayers, n)
  if (layerMap.length !== n) throw new RangeError(`layer map has ${layerMap.length} entries for ${n} student layers`)
  for (const t of layerMap) {
    if (!Number.isInteger(t) || t < 1 || t > tc.numHiddenLayers) throw new RangeError(`layer map entry ${t} is not a teacher layer (1..${tc.numHiddenLayers})`)
  }
  const config = makeBertConfig({ ...tc, ...opts.width, numHiddenLayers: n })
  const teacherHeads = Object.fromEntries([...teacher.heads].map(([h, info]) => [h, info.labels]))
  const heads = opts.heads ?? teacherHeads
  const seed = opts.seed ?? 0
  const sameWidth = config.hiddenSize === tc.hiddenSize && config.intermediateSize === tc.intermediateSize && config.numAttentionHeads === tc.numAttentionHeads
  const sources = new Map<string, string | null>()

  if (!sameWidth) {
    const model = BertTokenClassifier.random(config, seed, heads, teacher.charVocab)
    for (const name of model.variables().keys()) sources.set(name, null)
    inheritCharCnn(teacher, model, sources)
    inheritCrfs(teacher, model, sources)
    return { model, layerMap, sources, inherited: false }
  }

  const tv = teacher.variables()
  const params = new Map<string, tf.Tensor>()
  for (const name of encoderParamShapes(config).keys()) {
    const src = teacherParamFor(name, layerMap)
    const v = tv.get(src)
    if (!v) throw new Error(`teacher parameter ${src} is missing`)
    params.set(name, tf.clone(v))
    sources.set(name, src)
  }
  const copied: Record<string, string[]> = {}
  const fresh: Array<[string, string[]]> = []
  for (const [h, labels] of Object.entries(heads)) {
    const have = teacher.heads.get(h)?.labels
    if (have && have.length === labels.length && have.every((l, i) => l === labels[i])) {
      const p = headParamNames(h)
      params.set(p.weight, tf.clone(tv.get(p.weight)!))
      params.set(p.bias, tf.clone(tv.get(p.bias)!))
      sources.set(p.weight, p.weight)
      sources.set(p.bias, p.bias)
      copied[h] = labels
    } else {
      fresh.push([h, labels])
    }
  }
  // The character channel's parameters are encoder parameters: copied above with the teacher's chars.txt.
  const model = new BertTokenClassifier(config, params, copied, { seed, charVocab: teacher.charVocab })
  fresh.forEach(([h, labels], i) => {
    model.setHead(h, labels, seed + 1 + i)
    const p = headParamNames(h)
    sources.set(p.weight, null)
    sources.set(p.bias, null)
  })
  inheritCrfs(teacher, model, sources)
  return { model, layerMap, sources, inherited: true }
}

/**
 * A student of another width keeps the teacher's character embeddings and convolution (their
 * sizes do not depend on the width); its projection to its own hidden size starts at zero.
 */
function inheritCharCnn(teacher: BertTokenClassifier, student: BertTokenClassifier, sources: Map<string, string | null>): void {
  if (!teacher.config.charCnn) return
  const n = charCnnParamNames()
  const tv = teacher.variables()
  const sv = student.variables()
  for (const name of [n.embeddings, `${n.conv}.weight`, `${n.conv}.bias`]) {
    sv.get(name)!.assign(tv.get(name)!)
    sources.set(name, name)
  }
}

/**
 * A teacher head's CRF goes to the student head with the same labels: the student learns the
 * teacher's emissions, so the teacher's transitions decode them. Distillation has no CRF loss,
 * so the student keeps them as they are (no gradient reaches them; AdamW leaves them untouched).
 */
function inheritCrfs(teacher: BertTokenClassifier, student: BertTokenClassifier, sources: Map<string, string | null>): void {
  for (const [h, info] of student.heads) {
    const have = teacher.heads.get(h)
    const scores = teacher.crfScores(h)
    if (!have || !scores || have.labels.join('\n') !== info.labels.join('\n')) continue
    student.addCrf(h)
    const n = crfParamNames(h)
    const vars = student.variables()
    const C = info.labels.length
    tf.tidy(() => {
      vars.get(n.transitions)!.assign(tf.tensor(scores.transitions, [C, C]))
      vars.get(n.start)!.assign(tf.tensor(scores.start, [C]))
      vars.get(n.end)!.assign(tf.tensor(scores.end, [C]))
    })
    for (const name of [n.transitions, n.start, n.end]) sources.set(name, name)
  }
}
